//! INPUT is one mission: its `data.tma` (or the folder holding it) → one
//! scene through the mission pipeline ([`crate::mission::pipeline::run`]),
//! with a report row like the batch's.

use std::path::Path;
use std::time::Instant;

use super::{inputs, Args, RunError};
use crate::mission::pipeline::{self, MissionJob};
use crate::output::WritePlan;
use crate::run::BatchOptions;

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
    let folder = dunce::canonicalize(tma)
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
    // What the mission reads are inputs too (issues 26, 36): the text files
    // beside it, its .dat files and map, the game's archives, libraries
    // and maps, and the libraries found for it elsewhere.
    for f in pipeline::input_files(tma, opts) {
        plan.add_input(&f);
    }
    if let Some(g) = pipeline::game_of(tma, opts.game_dir.as_deref()) {
        // Its map: every file of the game's MAPS folder (any case).
        let maps = std::fs::read_dir(&g)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.is_dir()
                    && p.file_name()
                        .is_some_and(|n| n.eq_ignore_ascii_case("maps"))
            });
        for d in maps {
            let files = crate::batch::all_files(&d, args.max_work)
                .map_err(|e| RunError::io(format!("cannot list {}", d.display()), e))?;
            for f in files {
                plan.add_input(&f);
            }
        }
    }
    if let Some(d) = crate::material::Libraries::find_for(tma, opts.game_dir.as_deref()) {
        for f in crate::run::library_files(&d) {
            plan.add_input(&f);
        }
    }
    super::claim_report(args, &mut plan)?;
    let outputs = pipeline::outputs(&job);
    super::finish_single(args, t0, plan, outputs, |plan, row| {
        pipeline::run(&[job], opts, plan, row)
    })
}
