//! Authoring (no `--base`): a new model and its WEAR table from any glTF
//! scene ([`crate::gltf_import::author`]), written as NAME.msh + NAME.wea
//! or as entries of an archive (`--into`), with `--game-dir` also into the
//! material and texture libraries ([`super::libraries`]).

use std::path::{Path, PathBuf};

use super::{claim, conversion, load_doc, output_fail, read_input, usage, Args, RunError};
use crate::gltf_import::{self, AuthorOptions};
use crate::material::write::{add_entries, LibraryEdit, NewEntry};
use crate::msh;
use crate::nres;
use crate::output::{self, Transaction};
use crate::source::{self, FileKind};

/// Most bytes of an NRes entry name (format-notes §1: 36 with the NUL).
const MAX_ENTRY_NAME: usize = 35;

/// Where an authored model goes.
enum AuthorTarget {
    /// NEW.msh and NEW.wea.
    Files { out: PathBuf, wea: PathBuf },
    /// Entries of the archive `out`, made from `old` (the --into archive's
    /// bytes: read under its lock when `out` is that archive).
    Archive { out: PathBuf, old: Vec<u8> },
}

/// The entry stem of an authored model (--name, else the input's stem),
/// checked to fit an NRes name.
fn entry_stem(cli: &Args) -> Result<String, RunError> {
    let stem = match &cli.name {
        Some(n) => source::stem_of(n)
            .strip_suffix(".msh")
            .unwrap_or(source::stem_of(n))
            .to_string(),
        None => cli
            .input
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "MODEL".into()),
    };
    let (stem_bytes, _, bad) = encoding_rs::WINDOWS_1251.encode(&stem);
    if bad
        || stem.is_empty()
        || stem_bytes.len() + 4 > MAX_ENTRY_NAME
        || stem.contains(['/', '\\', '\0'])
    {
        return Err(usage(format!(
            "entry name {stem:?}: must be 1..={} Windows-1251 bytes before .msh (give one with --name)",
            MAX_ENTRY_NAME - 4
        )));
    }
    Ok(stem)
}

/// Claims the authored model's outputs before any work: NEW.msh + NEW.wea,
/// an archive copy (-o), or the --into archive itself (--force; opened for
/// update, so it stays locked until the commit).
fn author_target(cli: &Args, txn: &mut Transaction) -> Result<AuthorTarget, RunError> {
    let Some(a) = &cli.into else {
        let out = cli
            .output
            .clone()
            .unwrap_or_else(|| cli.input.with_extension("msh"));
        let wea = out.with_extension("wea");
        for p in [&out, &wea] {
            claim(txn, p, " (choose another output with -o)")?;
        }
        return Ok(AuthorTarget::Files { out, wea });
    };
    let out = cli.output.clone().unwrap_or_else(|| a.clone());
    let in_place = output::same_file(&out, a);
    let old = if in_place {
        if !cli.force {
            return Err(usage(format!(
                "--into {} without -o replaces the archive in place: add --force, or give the new archive with -o",
                a.display()
            )));
        }
        txn.open_for_update(a)
            .map_err(|e| match e {
                output::OutputError::IsInput(_) => {
                    usage("the archive is the input glTF or one of its buffers")
                }
                e => output_fail(e),
            })?
            .ok_or_else(|| usage(format!("archive {}: no such file", a.display())))?
    } else {
        txn.add_input(a);
        claim(txn, &out, " (choose another output with -o)")?;
        read_input(a, "archive")?
    };
    check_into_archive(a, &old)?;
    Ok(AuthorTarget::Archive { out, old })
}

/// `--into` needs an archive of models (or an empty one): a material,
/// texture or lightmap library, a bare model or terrain is refused.
fn check_into_archive(path: &Path, bytes: &[u8]) -> Result<(), RunError> {
    let a = nres::read(bytes, nres::Mode::Strict)
        .map_err(|e| conversion(format!("archive {}: {e}", path.display())))?;
    match source::classify(bytes) {
        FileKind::ModelArchive => Ok(()),
        FileKind::OtherNres if a.entries.is_empty() => Ok(()),
        k => Err(usage(format!(
            "--into {}: not an archive of models ({}); --into adds NAME.msh and NAME.wea to an archive such as units.rlb (materials and textures go to the libraries with --game-dir)",
            path.display(),
            match k {
                FileKind::OtherNres => "an NRes without .msh entries, e.g. Material.lib or Textures.lib",
                FileKind::Model => "a bare model",
                FileKind::Terrain => "terrain",
                _ => "not an NRes archive",
            }
        ))),
    }
}

/// The archive `old` with NAME.msh and NAME.wea added (or, with
/// --replace-entries, replacing same-named entries); each new entry takes
/// the type and attributes most of the archive's entries of its kind use.
fn archive_with_model(
    cli: &Args,
    path: &Path,
    old: &[u8],
    stem: &str,
    model: &[u8],
    wear: &[u8],
) -> Result<(Vec<u8>, LibraryEdit), RunError> {
    let ar = nres::read(old, nres::Mode::Strict).map_err(|e| conversion(e.to_string()))?;
    let like = |pred: &dyn Fn(&nres::Entry<'_>) -> bool, default: (u32, u32, u32, u32)| {
        let mut counts: Vec<((u32, u32, u32, u32), usize)> = Vec::new();
        for e in ar.entries.iter().filter(|e| pred(e)) {
            let k = (e.type_id, e.attr1, e.attr2, e.attr3);
            match counts.iter_mut().find(|c| c.0 == k) {
                Some(c) => c.1 += 1,
                None => counts.push((k, 1)),
            }
        }
        counts.iter().max_by_key(|c| c.1).map_or(default, |c| c.0)
    };
    let mt = like(&|e| source::is_msh_name(e.name), (0, 0, 0, 0));
    let wt = like(
        &|e| e.type_id == source::WEAR_TYPE,
        (source::WEAR_TYPE, 0, 0, 1),
    );
    let entry = |ext: &str, t: (u32, u32, u32, u32), data: &[u8]| NewEntry {
        name: encoding_rs::WINDOWS_1251
            .encode(&format!("{stem}.{ext}"))
            .0
            .into_owned(),
        type_id: t.0,
        attr1: t.1,
        attr2: t.2,
        attr3: t.3,
        data: data.to_vec(),
    };
    if cli.replace_entries {
        check_links(&ar, stem, model)?;
    }
    let new = [entry("msh", mt, model), entry("wea", wt, wear)];
    add_entries(
        &path.display().to_string(),
        Some(old),
        &new,
        cli.replace_entries,
    )
    .map_err(|e| usage(e.to_string()))
}

/// Replacing `stem.msh` of archive `ar` keeps what the game links to it
/// (issue 23 item 6): unit files mount parts on socket nodes by index
/// (unit-files-notes §3.3, the `Base_*` nodes) and the `.cpt` beside the
/// model places its points on nodes by index (§5.1). Every such node of the
/// old model must be in the new one at the same index with the same name.
///
/// # Errors
/// `gltf.replace_links` ([`RunError::Usage`]) naming each socket and
/// control point that would hang on another node or none.
fn check_links(ar: &nres::Archive<'_>, stem: &str, new_model: &[u8]) -> Result<(), RunError> {
    let find = |ext: &str| {
        let want = format!("{stem}.{ext}");
        ar.entries
            .iter()
            .find(|e| source::decode_name(e.name).eq_ignore_ascii_case(&want))
    };
    let Some(old) = find("msh").and_then(|e| msh::decode(e.data, msh::Mode::Tolerant).ok()) else {
        return Ok(());
    };
    let new = msh::decode(new_model, msh::Mode::Tolerant)
        .map_err(|e| conversion(format!("the new model: {e}")))?;
    // Node names as the game and msh2gltf read them (Res10 or Res9, R1).
    let names_of = |m: &msh::Model| {
        let d = crate::convention::detect(m, None, &Default::default());
        gltf_import::matching::exported_names(m, d.conventions.names)
    };
    let (old_names, new_names) = (names_of(&old.model), names_of(&new.model));
    let name = |v: &[String], i: usize| v.get(i).cloned();
    let mut linked: Vec<(usize, String)> = (0..old_names.len())
        .filter_map(|i| {
            name(&old_names, i)
                .filter(|n| n.starts_with("Base_"))
                .map(|n| (i, format!("socket {n:?}")))
        })
        .collect();
    if let Some(c) = find("cpt").and_then(|e| crate::unit::cpt::read(e.data).ok()) {
        for p in &c.points {
            if let Ok(i) = usize::try_from(p.node) {
                linked.push((i, format!("control point {:?}", p.name())));
            }
        }
    }
    let broken: Vec<String> = linked
        .iter()
        .filter(|(i, _)| {
            name(&new_names, *i).is_none() || name(&new_names, *i) != name(&old_names, *i)
        })
        .map(|(i, what)| {
            format!(
                "{what} on node {i} {:?} (the new model has {:?} there)",
                name(&old_names, *i).unwrap_or_default(),
                name(&new_names, *i).unwrap_or_default()
            )
        })
        .collect();
    if broken.is_empty() {
        return Ok(());
    }
    Err(usage(format!(
        "gltf.replace_links: replacing {stem}.msh would break what the game links to it by node index: {}; keep those nodes (same names, same order) in the new model, or edit the original with --base",
        broken.join("; ")
    )))
}

/// Authors the model and stages every output in `txn`: the target is
/// claimed before any work, the new model is re-read strictly before it
/// is written, then the libraries (`--game-dir`); commits and prints the
/// summary. Returns the report's `author` object.
///
/// # Errors
/// [`RunError`]: a refused name or target, a scene MSH cannot hold, an
/// invalid result, a library edit or write failure.
pub(super) fn run(cli: &Args, txn: &mut Transaction) -> Result<serde_json::Value, RunError> {
    super::check_input(&cli.input)?;
    let (doc, _) = load_doc(cli, txn)?;
    // Where to write, checked before any work.
    let stem = entry_stem(cli)?;
    if let Some(g) = &cli.game_dir {
        check_game_dir(g)?;
    }
    let target = author_target(cli, txn)?;
    let opts = AuthorOptions {
        fps: cli.fps,
        reduce_keys: !cli.keep_keys,
        ignore_skins: cli.ignore_skins,
        simplify: cli.simplify,
        max_work: cli.max_work,
    };
    let a = gltf_import::author(&doc, &opts)
        .map_err(|e| conversion(format!("{}: {e}", cli.input.display())))?;
    let model_bytes =
        msh::encode(&a.model).map_err(|e| conversion(format!("the new model is invalid: {e}")))?;
    // Strict re-read of what will be written.
    msh::decode(&model_bytes, msh::Mode::Strict)
        .map_err(|e| conversion(format!("the new model does not read back: {e}")))?;
    let wear_bytes = a
        .wear
        .to_bytes()
        .map_err(|e| conversion(format!("WEAR table: {e}")))?;
    let mut lib_warnings: Vec<String> = Vec::new();
    let mut written = Vec::new();
    let out = match target {
        AuthorTarget::Archive { out, old } => {
            let src = cli.into.as_deref().unwrap_or(&out);
            let (bytes, edit) =
                archive_with_model(cli, src, &old, &stem, &model_bytes, &wear_bytes)?;
            written.push(format!(
                "{} (entries {stem}.msh, {stem}.wea{})",
                out.display(),
                if edit.replaced.is_empty() {
                    String::new()
                } else {
                    format!(", replacing {}", edit.replaced.join(", "))
                }
            ));
            txn.stage(&out, bytes).map_err(output_fail)?;
            out
        }
        AuthorTarget::Files { out, wea } => {
            txn.stage(&out, model_bytes).map_err(output_fail)?;
            txn.stage(&wea, wear_bytes).map_err(output_fail)?;
            written.push(out.display().to_string());
            written.push(wea.display().to_string());
            out
        }
    };
    let mut lib_report = Vec::new();
    if let Some(g) = &cli.game_dir {
        for (path, edit) in
            super::libraries::author_libraries(cli, g, &doc, &a, &out, txn, &mut lib_warnings)?
        {
            written.push(format!(
                "{} (+{} entries{})",
                path.display(),
                edit.added.len(),
                if edit.replaced.is_empty() {
                    String::new()
                } else {
                    format!(", replaced {}", edit.replaced.join(", "))
                }
            ));
            lib_report.push(serde_json::json!({"path": path, "added": edit.added, "replaced": edit.replaced, "kept": edit.kept}));
        }
    }
    let done = txn.commit().map_err(output_fail)?;
    if !cli.quiet {
        print_authored(cli, &a.report, &written, &done.unchanged, &lib_warnings);
    }
    let mut v = serde_json::to_value(&a.report).unwrap_or_default();
    if cli.game_dir.is_some() {
        v["libraries"] = serde_json::json!(lib_report);
        v["library_warnings"] = serde_json::json!(lib_warnings);
    }
    v["unchanged_files"] = serde_json::json!(done.unchanged);
    Ok(v)
}

/// The summary lines of an authored model on stderr.
fn print_authored(
    cli: &Args,
    r: &gltf_import::AuthorReport,
    written: &[String],
    unchanged: &[PathBuf],
    lib_warnings: &[String],
) {
    eprintln!(
        "gltf2msh: wrote {} ({} nodes, {} slots, {} batches, {} vertices, {} triangles, {} keys over {} frames, {} materials)",
        written.join(" and "),
        r.nodes,
        r.slots,
        r.batches,
        r.vertices,
        r.triangles,
        r.keys,
        r.frame_count,
        r.materials.len()
    );
    if !unchanged.is_empty() {
        let u: Vec<String> = unchanged.iter().map(|p| p.display().to_string()).collect();
        eprintln!(
            "gltf2msh: already up to date, not rewritten: {}",
            u.join(", ")
        );
    }
    for s in &r.sheared_nodes {
        eprintln!(
            "gltf2msh: warning: Res1 node {} {:?} shears over time (a rotation under a non-uniform parent scale); MSH nodes are rigid: largest vertex error {:.4} at frame {}",
            s.node, s.name, s.max_vertex_error, s.frame
        );
    }
    if let Some(s) = &r.simplified {
        eprintln!(
            "gltf2msh: simplified {} -> {} triangles (largest error {:.6} units)",
            s.from, s.to, s.max_error
        );
    }
    for rn in &r.renamed_materials {
        eprintln!(
            "gltf2msh: material {} {:?} renamed {:?}",
            rn.row, rn.from, rn.to
        );
    }
    super::console::print_warnings(cli, r.warnings.iter().chain(lib_warnings));
    if cli.verbose {
        eprintln!("{}", serde_json::to_string_pretty(r).unwrap_or_default());
    }
}

/// `--game-dir` must be an existing folder (exit 2 naming it).
fn check_game_dir(game: &Path) -> Result<(), RunError> {
    match std::fs::metadata(game) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(usage(format!(
            "--game-dir {}: not a folder (it is a file)",
            game.display()
        ))),
        Err(e) => Err(usage(format!("--game-dir {}: {e}", game.display()))),
    }
}
