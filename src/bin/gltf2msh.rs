//! `gltf2msh`: write a glTF 2.0 scene back into a Parkan: Iron Strategy MSH
//! model, losslessly against a base model (gltf-mapping.md, "Reverse rules").
//!
//! Exit codes: 0 ok, 1 conversion error (mismatch, invalid result, unreadable
//! glTF), 2 usage or environment error (missing files, refused output).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use mshgltf::gltf_import::{self, ImportOptions, ImportReport};
use mshgltf::msh;
use mshgltf::source::{self, FileKind, InputSpec};
use mshgltf::{nres, output};

/// Write a glTF (.glb/.gltf) back into an MSH model.
///
/// With --base, every value the glTF leaves as msh2gltf exported it keeps the
/// base's bytes, so an unedited trip is byte-identical; edits are quantized
/// by the seed rules and derived data (bounds, Res7, Res8/Res19) is rebuilt.
#[derive(Debug, Parser)]
#[command(name = "gltf2msh", version, about, long_about = None,
    after_help = "Examples:\n  gltf2msh tank.glb --base tank.msh            (writes tank.msh beside tank.glb unless that is the base)\n  gltf2msh tank.glb --base tank.msh -o tank2.msh\n  gltf2msh tank.glb --base units.rlb:R_L_89.msh -o units_new.rlb   (archive copy, one entry replaced)\n\nExit codes: 0 ok, 1 conversion error, 2 usage error.")]
struct Cli {
    /// The edited glTF: .glb, or .gltf with its buffers.
    input: PathBuf,
    /// The model the glTF was exported from: a .msh file or ARCHIVE:ENTRY.
    #[arg(long)]
    base: Option<String>,
    /// Output: a .msh (bare model) or, with an ARCHIVE:ENTRY base, an archive
    /// (a copy of the base archive with that entry replaced). Default: the
    /// input's name with .msh, beside it.
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    /// Frames per second of the glTF timeline (default: the scene extras' fps, else 24).
    #[arg(long)]
    fps: Option<f32>,
    /// Replace an existing output file (never the base or the input).
    #[arg(long)]
    force: bool,
    /// Keep every integer-frame key (reduce only resampled channels).
    #[arg(long)]
    keep_keys: bool,
    /// Print nothing but errors.
    #[arg(short, long, conflicts_with = "verbose")]
    quiet: bool,
    /// Print every warning and the change summary.
    #[arg(short, long)]
    verbose: bool,
    /// Write a JSON report of the import to this file.
    #[arg(long, value_name = "FILE.json")]
    report: Option<PathBuf>,
}

/// A failure with its exit code.
struct Fail {
    code: u8,
    msg: String,
}

fn usage(msg: impl Into<String>) -> Fail {
    Fail {
        code: 2,
        msg: msg.into(),
    }
}

fn conversion(msg: impl Into<String>) -> Fail {
    Fail {
        code: 1,
        msg: msg.into(),
    }
}

/// Where the base model lives.
enum Base {
    /// A bare model file.
    File(PathBuf, Vec<u8>),
    /// An archive entry: archive path, archive bytes, entry index, model bytes.
    Entry(PathBuf, Vec<u8>, usize, Vec<u8>),
}

impl Base {
    fn path(&self) -> &Path {
        match self {
            Base::File(p, _) | Base::Entry(p, _, _, _) => p,
        }
    }
}

fn load_base(spec: &str) -> Result<Base, Fail> {
    match source::parse_input(spec) {
        InputSpec::File(p) => {
            let bytes =
                std::fs::read(&p).map_err(|e| usage(format!("base {}: {e}", p.display())))?;
            match source::classify(&bytes) {
                FileKind::Model => Ok(Base::File(p, bytes)),
                FileKind::ModelArchive => Err(usage(format!(
                    "base {} is an archive: name the model as ARCHIVE:ENTRY (e.g. {}:MODEL.msh)",
                    p.display(),
                    p.display()
                ))),
                k => Err(usage(format!(
                    "base {} is not an MSH model ({k:?})",
                    p.display()
                ))),
            }
        }
        InputSpec::Entry { archive, entry } => {
            let bytes = std::fs::read(&archive)
                .map_err(|e| usage(format!("base archive {}: {e}", archive.display())))?;
            let a = nres::read(&bytes, nres::Mode::Strict)
                .map_err(|e| conversion(format!("base archive {}: {e}", archive.display())))?;
            let i = a.find(entry.as_bytes()).ok_or_else(|| {
                let names: Vec<String> = source::model_entries(&a)
                    .iter()
                    .map(|&i| source::decode_name(a.entries[i].name))
                    .collect();
                usage(format!(
                    "base archive {} has no entry {entry:?} (models: {})",
                    archive.display(),
                    names.join(", ")
                ))
            })?;
            let model = a.entries[i].data.to_vec();
            Ok(Base::Entry(archive, bytes, i, model))
        }
    }
}

fn run(cli: &Cli) -> Result<ImportReport, Fail> {
    let Some(base_spec) = cli.base.as_deref() else {
        return Err(conversion(
            "authoring without --base is not implemented yet: give the model the glTF was exported from with --base MODEL.msh (or ARCHIVE:ENTRY)",
        ));
    };
    if !cli.input.is_file() {
        return Err(usage(format!("input {} not found", cli.input.display())));
    }
    let base = load_base(base_spec)?;
    let base_bytes: &[u8] = match &base {
        Base::File(_, b) | Base::Entry(_, _, _, b) => b,
    };
    let out = cli
        .output
        .clone()
        .unwrap_or_else(|| cli.input.with_extension("msh"));
    if let Err(e) = output::check_target(&out, &[&cli.input, base.path()], cli.force) {
        let hint = match e {
            output::OutputError::IsInput(_) if cli.output.is_none() => {
                " (the default output is the input's name with .msh; give another one with -o)"
            }
            output::OutputError::IsInput(_) => " (choose another output with -o)",
            _ => "",
        };
        return Err(usage(format!("{e}{hint}")));
    }
    let decoded = msh::decode(base_bytes, msh::Mode::Strict)
        .map_err(|e| conversion(format!("base {base_spec}: {e}")))?;
    let doc = gltf_import::load_path(&cli.input)
        .map_err(|e| conversion(format!("{}: {e}", cli.input.display())))?;
    let opts = ImportOptions {
        fps: cli.fps,
        reduce_keys: !cli.keep_keys,
    };
    let imp = gltf_import::import_with_base(&doc, &decoded.model, &opts)
        .map_err(|e| conversion(format!("{}: {e}", cli.input.display())))?;
    let model_bytes = msh::encode(&imp.model)
        .map_err(|e| conversion(format!("the edited model is invalid: {e}")))?;
    let bare = out
        .extension()
        .is_some_and(|x| x.eq_ignore_ascii_case("msh"));
    let bytes = match &base {
        Base::Entry(_, archive, i, _) if !bare => {
            let a =
                nres::read(archive, nres::Mode::Strict).map_err(|e| conversion(e.to_string()))?;
            let mut entries = a.entries.clone();
            entries[*i].data = &model_bytes;
            nres::write(&entries).map_err(|e| conversion(format!("archive: {e}")))?
        }
        _ => model_bytes,
    };
    output::write_atomic(&out, &bytes).map_err(|e| usage(e.to_string()))?;
    if !cli.quiet {
        let r = &imp.report;
        let what = if r.unchanged {
            "unchanged".to_string()
        } else {
            format!(
                "{} moved vertices, {} new vertices, slots changed {:?}, rebuilt {:?}, tracks changed {:?}",
                r.moved_vertices, r.new_vertices, r.changed_slots, r.rebuilt_slots, r.changed_tracks
            )
        };
        eprintln!(
            "gltf2msh: wrote {} ({} bytes; {what})",
            out.display(),
            bytes.len()
        );
        if cli.verbose {
            eprintln!("{}", serde_json::to_string_pretty(r).unwrap_or_default());
        } else if !r.warnings.is_empty() {
            eprintln!("gltf2msh: {} warning(s) (-v to list)", r.warnings.len());
        }
    }
    Ok(imp.report)
}

fn write_report(path: &Path, cli: &Cli, res: &Result<ImportReport, Fail>) {
    let v = match res {
        Ok(r) => {
            serde_json::json!({"ok": true, "input": cli.input, "base": cli.base, "output": cli.output, "import": r})
        }
        Err(f) => {
            serde_json::json!({"ok": false, "input": cli.input, "base": cli.base, "exit_code": f.code, "error": f.msg})
        }
    };
    let text = serde_json::to_vec_pretty(&v).unwrap_or_default();
    if let Err(e) = output::write_atomic(path, &text) {
        eprintln!("gltf2msh: report {}: {e}", path.display());
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let res = run(&cli);
    if let Some(p) = &cli.report {
        write_report(p, &cli, &res);
    }
    match res {
        Ok(_) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("gltf2msh: error: {}", f.msg);
            ExitCode::from(f.code)
        }
    }
}
