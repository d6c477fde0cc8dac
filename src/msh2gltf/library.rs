//! `msh2gltf GAME --asset-library OUT_DIR`: the game's objects as an asset
//! library ([`crate::mission::library`]): one GLB per placeable object
//! with its placement template, and `OUT_DIR/index.json`, in one
//! transaction; a row per asset in `--report`.

use std::path::Path;
use std::time::Instant;

use super::{Args, RunError};
use crate::mission::library;
use crate::output::{Transaction, TxnOptions};
use crate::run::{Report, ReportRow, Status};

/// Writes the library of game folder `args.input` into `out` (module
/// docs); progress on stderr (one line per asset unless `-q`), a summary.
/// Returns 0, or 1 when an asset failed (the others are written).
///
/// # Errors
/// [`RunError::Usage`]: INPUT is not a game folder (no `objects.rlb`), an
/// output is refused (exists without `--force`, is an input);
/// [`RunError::Output`]: the commit or `--report` failed.
pub(super) fn run(args: &Args, out: &Path) -> Result<u8, RunError> {
    let t0 = Instant::now();
    let game = Path::new(&args.input);
    let opts = args.batch_options();
    let (offer, registry) = library::discover(game, args.max_work)
        .map_err(|e| RunError::Usage(format!("--asset-library: {e}")))?;
    let lookup = args.game_dir.clone().unwrap_or_else(|| game.to_path_buf());
    let (libs, lib_warnings) = crate::terrain::convert::libraries_shared(
        &lookup.join(crate::unit::assemble::REGISTRY),
        args.game_dir.as_deref(),
        opts.texm_order,
        &opts.files,
    );
    let mut txn = Transaction::new(TxnOptions::from_env(args.force));
    for p in offer
        .inputs
        .iter()
        .chain(libs.as_ref().map(|l| l.files()).unwrap_or_default().iter())
    {
        txn.add_input(p);
    }
    let (mut rows, mut written, mut failed) = (Vec::new(), Vec::new(), Vec::new());
    let n = offer.assets.len();
    for (k, a) in offer.assets.iter().enumerate() {
        let t = Instant::now();
        let dest = out.join(&a.file);
        let mut r = ReportRow {
            kind: Some(format!(
                "asset {}",
                crate::mission::assets::KIND_NAMES[a.kind as usize]
            )),
            ..ReportRow::new(a.path.clone(), Status::Converted)
        };
        let built = library::build(
            game,
            a,
            &offer.missions,
            &registry,
            libs.as_deref(),
            &opts.convert,
            &opts.files,
        );
        match built {
            Ok(b) => {
                for p in &b.inputs {
                    txn.add_input(p);
                }
                txn.stage(&dest, b.glb)
                    .map_err(|e| RunError::Usage(format!("--asset-library: {e}")))?;
                r.output = Some(dest.display().to_string());
                r.warnings = b.warnings;
                r.notes = vec![format!("catalog {}", a.catalog)];
                written.push((k, library::template(a, &offer.missions)));
            }
            Err(e) => {
                r.status = Status::Failed;
                r.rule = Some(e.rule.to_string());
                r.errors = vec![e.to_string()];
                failed.push((k, e));
            }
        }
        r.time_ms = t.elapsed().as_secs_f64() * 1000.0;
        if !args.quiet || r.status == Status::Failed {
            let what = match (&r.status, r.errors.first()) {
                (Status::Failed, Some(e)) => format!("failed: {e}"),
                _ => format!(
                    "{} ({}{})",
                    a.file,
                    a.catalog,
                    match r.warnings.len() {
                        0 => String::new(),
                        w => format!("; {w} warning(s) of its model, -v lists them"),
                    }
                ),
            };
            eprintln!("msh2gltf: [{}/{n}] {}: {what}", k + 1, a.path);
            if args.verbose > 0 {
                for w in &r.warnings {
                    eprintln!("  warning: {w}");
                }
            }
        }
        rows.push(r);
    }
    let mut index = library::index(game, &offer, &written, &failed);
    if let Some(w) = index["warnings"].as_array_mut() {
        w.extend(lib_warnings.into_iter().map(serde_json::Value::from));
    }
    let bytes = serde_json::to_vec_pretty(&index).unwrap_or_default();
    let index_path = out.join(library::INDEX);
    txn.stage(&index_path, bytes)
        .map_err(|e| RunError::Usage(format!("--asset-library: {e}")))?;
    txn.commit().map_err(|source| RunError::Output {
        context: format!("--asset-library {}", out.display()),
        source,
    })?;
    if !args.quiet {
        for w in &offer.warnings {
            eprintln!("msh2gltf: warning: {w}");
        }
        eprintln!(
            "msh2gltf: asset library {}: {} assets written ({} failed), {} catalogs, index {}",
            out.display(),
            written.len(),
            failed.len(),
            index["catalogs"].as_array().map_or(0, Vec::len),
            index_path.display()
        );
    }
    let report = Report::from_rows(rows, t0.elapsed().as_secs_f64());
    if let Some(path) = &args.report {
        report
            .write(path, args.force)
            .map_err(|source| RunError::Output {
                context: format!("--report {}", path.display()),
                source,
            })?;
    }
    Ok(if failed.is_empty() { 0 } else { 1 })
}
