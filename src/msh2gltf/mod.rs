//! `msh2gltf`'s run (application layer): INPUT (a model, a unit file, a
//! map's Land.msh, an archive, `ARCHIVE:ENTRY` or a game folder) → the
//! jobs of each content kind (module `inputs`) → the write plan of the run →
//! the batch driver ([`crate::batch::run_discovered`]) → the report and the
//! summary. The binary parses [`Args`], calls [`run`] (or [`list`] for
//! `--list`) and prints the error.
//!
//! Exit codes (README "Exit codes"): 0 everything converted (skips are
//! fine), 1 a model failed (the others were still converted) or the
//! environment failed, 2 usage error.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

use crate::batch::{self, Discovery};
use crate::models;
use crate::output::{OutputError, WritePlan};
use crate::run::{BatchOptions, Report, ReportRow, Status};
use crate::source::{self, InputSpec};

pub mod args;
mod console;
mod inputs;
mod library;
mod list;
mod map;
mod mission;

pub use args::Args;
pub use console::{row_line, summary_line};
pub use list::{list, Listing};

/// Why a run stopped before converting (a failed model is a report row,
/// not a `RunError`). The message is the `Display` followed by the causes
/// (`{:#}` of `anyhow`: `cannot read X: no such file`).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The command line asks for something impossible (exit 2).
    #[error("{0}")]
    Usage(String),
    /// An I/O failure while `context` (exit 1, or 2 for a missing or
    /// non-regular input).
    #[error("{context}")]
    Io {
        /// What was being done (`cannot read FILE`, `cannot list DIR`).
        context: String,
        /// The failure.
        #[source]
        source: std::io::Error,
    },
    /// A refused or failed write (exit 1 for I/O and busy locks, else 2).
    #[error("{context}")]
    Output {
        /// What was being written (`--report FILE`).
        context: String,
        /// The failure.
        #[source]
        source: OutputError,
    },
    /// The worker pool (`--jobs`) could not start (exit 2).
    #[error("cannot start worker threads")]
    Threads(#[source] rayon::ThreadPoolBuildError),
}

impl RunError {
    /// An [`RunError::Io`] with its context.
    fn io(context: String, source: std::io::Error) -> Self {
        RunError::Io { context, source }
    }
}

/// Exit code of a run error and its causes: 1 for I/O failures and busy
/// locks (the environment failed), 2 for usage errors (README "Exit
/// codes"). The first [`OutputError`] or I/O error in the chain decides.
pub fn exit_code(e: &(dyn std::error::Error + 'static)) -> u8 {
    let mut cause = Some(e);
    while let Some(c) = cause {
        if let Some(o) = c.downcast_ref::<OutputError>() {
            return if o.is_runtime() { 1 } else { 2 };
        }
        if let Some(io) = c.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind::*;
            return match io.kind() {
                NotFound | InvalidInput => 2,
                _ => 1,
            };
        }
        cause = c.source();
    }
    2
}

/// What INPUT resolved to ([`inputs::resolve`]).
enum Resolved {
    /// Model and unit jobs (and maps of a folder), with the rows of what
    /// discovery skipped or could not open; `single`: one model named by
    /// INPUT (messages show its warnings, no summary).
    Jobs { found: Discovery, single: bool },
    /// One map: its Land.msh ([`map::run_single`]).
    Map(PathBuf),
    /// One mission: its data.tma ([`mission::run_single`]).
    Mission(PathBuf),
    /// Not convertible: the reason for the message.
    NotAModel(PathBuf, &'static str),
}

/// Runs `msh2gltf` (not `--list`): validates the options, resolves INPUT,
/// plans every write, converts, writes `--report` and prints progress and
/// the summary on stderr. Returns the exit code (0, or 1 when a model
/// failed or the report could not be written for a runtime reason, 2 when
/// the report was refused).
///
/// # Errors
/// [`RunError`] for what stops the run before converting.
pub fn run(args: &Args) -> Result<u8, RunError> {
    args.validate()?;
    if let Some(out) = &args.asset_library {
        return library::run(args, out);
    }
    let t0 = Instant::now();
    let opts = args.batch_options();
    let (found, single) = match inputs::resolve(args)? {
        Resolved::Jobs { found, single } => (found, single),
        Resolved::Map(msh) => return map::run_single(args, &msh, &opts),
        Resolved::Mission(tma) => return mission::run_single(args, &tma, &opts),
        Resolved::NotAModel(path, why) => {
            eprintln!("msh2gltf: {}: not a model: {why}", path.display());
            return Ok(1);
        }
    };
    let mut plan = plan_run(args, &found, &opts)?;
    if single {
        // A refused single output is a usage error (exit 2).
        let mut probe = plan.clone();
        if let Err(e) = models::claim_job(&mut probe, &found.jobs[0], opts.format) {
            return Err(RunError::Usage(e.to_string()));
        }
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.jobs.unwrap_or(0))
        .build()
        .map_err(RunError::Threads)?;
    // The bar counts every row the run prints: discovery's skipped and
    // failed files, the models and units, and the maps.
    let rows = found.jobs.len()
        + found.terrains.len()
        + found.missions.len()
        + found.skipped.len()
        + found.failed.len();
    let interactive = std::io::stderr().is_terminal() && !args.quiet && found.jobs.len() > 1;
    let console = console::Console::new(args, single, interactive.then_some(rows));
    let mut all: Vec<ReportRow> = found.skipped.iter().chain(&found.failed).cloned().collect();
    console.pre_rows(&all);
    let progress = |r: &ReportRow| console.progress(r);
    let rows = pool.install(|| batch::run_discovered(&found, &opts, &mut plan, &progress));
    console.finish();
    all.extend(rows);
    let report = Report::from_rows(all, t0.elapsed().as_secs_f64());
    Ok(finish(args, &report, single))
}

/// Writes `--report` and prints the summary (not for a single model, not
/// with `--quiet`); returns the exit code of the run.
fn finish(args: &Args, report: &Report, single: bool) -> u8 {
    let mut code = if report.failed > 0 { 1 } else { 0 };
    if let Some(path) = &args.report {
        if let Err(e) = report.write(path, args.force) {
            eprintln!("msh2gltf: error: --report {}: {e}", path.display());
            code = code.max(if e.is_runtime() { 1 } else { 2 });
        }
    }
    if !args.quiet && !single {
        eprintln!("{}", summary_line(report));
    }
    code
}

/// The write plan of the run: every input (the files under INPUT, the
/// models' files and libraries, every file each mission reads:
/// [`crate::mission::pipeline::input_files`]), then the report (refused
/// when it is an input, exists without --force, or is not a regular file).
///
/// # Errors
/// `cannot list DIR` ([`RunError::Io`]); `--report: ...` ([`RunError::Usage`]).
fn plan_run(args: &Args, found: &Discovery, opts: &BatchOptions) -> Result<WritePlan, RunError> {
    let jobs = &found.jobs;
    let mut plan = WritePlan::new(args.force);
    let (InputSpec::File(p) | InputSpec::Entry { archive: p, .. }) =
        source::parse_input(&args.input);
    if p.is_dir() {
        let files = batch::all_files(&p, args.max_work)
            .map_err(|e| RunError::io(format!("cannot list {}", p.display()), e))?;
        for f in files {
            plan.add_input(&f);
        }
    } else if p.is_file() {
        plan.add_input(&p);
    }
    for p in models::input_files(jobs, opts) {
        plan.add_input(&p);
    }
    for m in &found.missions {
        for p in crate::mission::pipeline::input_files(&m.tma, opts) {
            plan.add_input(&p);
        }
    }
    claim_report(args, &mut plan)?;
    Ok(plan)
}

/// Claims `--report` in `plan`.
///
/// # Errors
/// `--report: ...` ([`RunError::Usage`]) when the plan refuses it.
fn claim_report(args: &Args, plan: &mut WritePlan) -> Result<(), RunError> {
    if let Some(r) = &args.report {
        plan.claim(r)
            .map_err(|e| RunError::Usage(format!("--report: {e}")))?;
    }
    Ok(())
}

/// What every single map or mission run does after its write plan is
/// made: an output that is an input, exists without `--force` or is not a
/// regular file refused (exit 2, as for a model), the
/// run (`run`: the pipeline with its plan and row printer) with its row
/// printed (failures always; others unless `-q`; each note's text with
/// `-v`), `--report` written. Returns 1 when the row failed, else 0.
///
/// # Errors
/// [`RunError::Usage`] for an output refused by the plan; [`RunError::Output`]
/// when `--report` cannot be written.
pub(super) fn finish_single(
    args: &Args,
    t0: Instant,
    mut plan: WritePlan,
    outputs: Vec<PathBuf>,
    run: impl FnOnce(&mut WritePlan, &(dyn Fn(&ReportRow) + Sync)) -> Vec<ReportRow>,
) -> Result<u8, RunError> {
    // As for a single model: an output that is an input, exists without
    // --force or is not a regular file is a usage error before any work.
    let mut probe = plan.clone();
    for o in outputs {
        if plan.is_input(&o) {
            return Err(RunError::Usage(OutputError::IsInput(o).to_string()));
        }
        probe
            .claim(&o)
            .map_err(|e| RunError::Usage(e.to_string()))?;
    }
    let (quiet, verbose) = (args.quiet, args.verbose > 0);
    let rows = run(&mut plan, &|r: &ReportRow| {
        if r.status == Status::Failed || !quiet {
            let notes = if verbose {
                console::note_lines(r)
            } else {
                String::new()
            };
            eprintln!("{}{notes}", row_line(r, true));
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Error, ErrorKind};

    #[test]
    fn exit_codes_follow_the_first_io_or_output_cause() {
        let code = |e: RunError| exit_code(&e);
        assert_eq!(code(RunError::Usage("--fps: 0".into())), 2);
        let io = |kind| RunError::io("cannot read X".into(), Error::new(kind, "why"));
        assert_eq!(code(io(ErrorKind::NotFound)), 2);
        assert_eq!(code(io(ErrorKind::InvalidInput)), 2);
        assert_eq!(code(io(ErrorKind::PermissionDenied)), 1);
        let out = |source| RunError::Output {
            context: "--report r.json".into(),
            source,
        };
        assert_eq!(code(out(OutputError::Exists("r.json".into()))), 2);
        let failed = OutputError::Io {
            path: "r.json".into(),
            source: Error::other("disk full"),
        };
        assert_eq!(code(out(failed)), 1);
        // The message is the context; the cause follows in the chain.
        let e = io(ErrorKind::NotFound);
        assert_eq!(e.to_string(), "cannot read X");
        assert_eq!(
            std::error::Error::source(&e).map(|c| c.to_string()),
            Some("why".into())
        );
    }
}
