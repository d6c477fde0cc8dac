//! INPUT is one mission: its `data.tma` (or the folder holding it) → one
//! scene through the mission pipeline ([`crate::mission::pipeline::run`]),
//! with a report row like the batch's.

use std::path::Path;
use std::time::Instant;

use super::{inputs, Args, RunError};
use crate::batch::{BatchOptions, Report, ReportRow, Status};
use crate::mission::pipeline::{self, MissionJob};
use crate::output::WritePlan;

/// Converts the mission `tma` into OUTPUT (default: `<mission folder
/// name>.glb` beside the folder). Prints the row (failures always; others
/// unless `-q`) with every warning's text (`-v`), and writes `--report`.
/// Returns 1 when the mission failed, else 0.
///
/// # Errors
/// An output that is an input, or `--report` refused before the run
/// ([`RunError::Usage`]); `--report` failed after it ([`RunError::Output`]).
pub(super) fn run_single(args: &Args, tma: &Path, opts: &BatchOptions) -> Result<u8, RunError> {
    let t0 = Instant::now();
    let folder = std::fs::canonicalize(tma)
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf));
    let stem = folder.as_deref().and_then(Path::file_name).map_or_else(
        || "mission".to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let beside = folder.as_deref().and_then(Path::parent);
    let job = MissionJob {
        output: inputs::single_output(args, beside, &stem),
        tma: tma.to_path_buf(),
    };
    let mut plan = WritePlan::new(args.force);
    plan.add_input(tma);
    // What the mission reads are inputs too (issue 26): the game's
    // archives and libraries, and the libraries found for it elsewhere.
    if let Some(g) = pipeline::game_of(tma, opts.game_dir.as_deref()) {
        for f in crate::batch::game_files(&g) {
            plan.add_input(&f);
        }
    }
    if let Some(d) = crate::material::Libraries::find_for(tma, opts.game_dir.as_deref()) {
        for f in crate::batch::library_files(&d) {
            plan.add_input(&f);
        }
    }
    super::claim_report(args, &mut plan)?;
    for o in pipeline::outputs(&job) {
        if plan.is_input(&o) {
            return Err(RunError::Usage(
                crate::output::OutputError::IsInput(o).to_string(),
            ));
        }
    }
    let (quiet, verbose) = (args.quiet, args.verbose > 0);
    let rows = pipeline::run(&[job], opts, &mut plan, &|r: &ReportRow| {
        if r.status == Status::Failed || !quiet {
            let notes = if verbose {
                super::console::note_lines(r)
            } else {
                String::new()
            };
            eprintln!("{}{notes}", super::row_line(r, true));
        }
    });
    let report = Report::from_rows(rows, t0.elapsed().as_secs_f64());
    if let Some(path) = &args.report {
        report
            .write(path, args.force)
            .map_err(|source| RunError::Output {
                context: format!("--report {}", path.display()),
                source,
            })?;
    }
    Ok(if report.failed > 0 { 1 } else { 0 })
}
