//! INPUT is one map: its Land.msh (recognised by its streams) and siblings
//! → glTF through the map pipeline ([`crate::terrain::batch::run`]), with
//! a report row like the batch's.

use std::path::Path;
use std::time::Instant;

use super::{inputs, Args, RunError};
use crate::output::WritePlan;
use crate::run::BatchOptions;
use crate::terrain::batch::{self as tbatch, TerrainJob};

/// Converts the map `msh` into OUTPUT (default: `<map folder name>.glb`
/// beside it); the folder's files are inputs. Prints the row (failures
/// always; others unless `-q`) with every warning's text, and
/// writes `--report`. Returns 1 when the map failed, else 0.
///
/// # Errors
/// `--report` refused before the run ([`RunError::Usage`]) or failed
/// after it ([`RunError::Output`]).
pub(super) fn run_single(args: &Args, msh: &Path, opts: &BatchOptions) -> Result<u8, RunError> {
    let t0 = Instant::now();
    let stem = msh
        .parent()
        .and_then(|p| p.file_name())
        .map_or_else(|| "Land".to_string(), |n| n.to_string_lossy().into_owned());
    let job = TerrainJob {
        output: inputs::single_output(args, Some(msh.parent().unwrap_or(Path::new("."))), &stem),
        msh: msh.to_path_buf(),
    };
    let mut plan = WritePlan::new(args.force);
    plan.add_input(msh);
    if let Some(dir) = msh.parent() {
        for f in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            plan.add_input(&f.path());
        }
    }
    // The libraries the map reads are inputs too (issue 26).
    if let Some(d) = crate::material::Libraries::find_for(msh, opts.game_dir.as_deref()) {
        for f in crate::run::library_files(&d) {
            plan.add_input(&f);
        }
    }
    super::claim_report(args, &mut plan)?;
    let outputs = tbatch::outputs(&job);
    super::finish_single(args, t0, plan, outputs, |plan, row| {
        tbatch::run(&[job], opts, plan, row)
    })
}
