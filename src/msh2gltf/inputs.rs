//! What INPUT names, resolved into jobs: `ARCHIVE:ENTRY` (one model), a
//! file whose content kind is decided once ([`source::content_kind`]: a
//! model or unit file is one job, an archive is discovered, a map goes to
//! the map pipeline), or a folder (discovered, [`batch::discover`]).

use std::path::{Path, PathBuf};

use super::{Args, Resolved, RunError};
use crate::batch::{self, Discovery};
use crate::models::{JobKind, ModelJob};
use crate::nres;
use crate::output::MAX_UPDATE_BYTES;
use crate::source::{self, Content, InputSpec};

/// Resolves INPUT into the run's jobs.
///
/// # Errors
/// [`RunError::Io`] when INPUT cannot be read or listed; [`RunError::Usage`]
/// for a missing file or entry, an unreadable archive of `ARCHIVE:ENTRY`,
/// or a folder INPUT without OUTPUT.
pub(super) fn resolve(args: &Args) -> Result<Resolved, RunError> {
    let path = match source::parse_input(&args.input) {
        InputSpec::Entry { archive, entry } => return entry_job(args, &archive, &entry),
        InputSpec::File(path) => path,
    };
    if !path.exists() {
        return Err(RunError::Usage(format!(
            "{}: no such file or folder",
            path.display()
        )));
    }
    if path.is_dir() {
        // A mission folder is its data.tma (mission-notes §1.1).
        if let Some(tma) = source::tma_in(&path) {
            return Ok(Resolved::Mission(tma));
        }
        return discover(args, &path);
    }
    let head = source::read_regular(&path, MAX_UPDATE_BYTES)
        .map_err(|e| RunError::io(format!("cannot read {}", path.display()), e))?;
    let pipeline = match source::content_kind(&head, path.as_os_str().as_encoded_bytes()) {
        // A bare model; also a .msh that is not a readable model, so that
        // the reader names the broken rule.
        Content::Model | Content::BrokenModel => JobKind::Model,
        Content::Unit => JobKind::Unit,
        Content::ModelArchive => {
            // Its directory is counted before it is listed (issue 26 item 5).
            if let Some(detail) = directory_over_budget(&head, args.max_work) {
                let mut found = crate::batch::Discovery::default();
                found.failed.push(crate::run::ReportRow::fail(
                    path.display().to_string(),
                    "limits.work",
                    detail,
                    0.0,
                ));
                return Ok(Resolved::Jobs {
                    found,
                    single: false,
                });
            }
            return discover(args, &path);
        }
        Content::Map => return Ok(Resolved::Map(path)),
        Content::Mission => return Ok(Resolved::Mission(path)),
        Content::Rsli => return not_a_model(path, "an RsLi archive (fonts/sprites)"),
        Content::OtherNres => return not_a_model(path, "an NRes library without models"),
        Content::NotNres => return not_a_model(path, "not an NRes container"),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut job = ModelJob::whole_file(&path, &name, pipeline, PathBuf::new());
    job.output = single_output(
        args,
        Some(path.parent().unwrap_or(Path::new("."))),
        &job.stem,
    );
    Ok(single(job))
}

/// INPUT is not convertible.
fn not_a_model(path: PathBuf, why: &'static str) -> Result<Resolved, RunError> {
    Ok(Resolved::NotAModel(path, why))
}

/// One job, named by INPUT.
fn single(job: ModelJob) -> Resolved {
    Resolved::Jobs {
        found: Discovery {
            jobs: vec![job],
            ..Discovery::default()
        },
        single: true,
    }
}

/// `ARCHIVE:ENTRY`: the entry's job (its output: OUTPUT, or `<stem>.glb`
/// in the current folder).
///
/// # Errors
/// `cannot read ARCHIVE` ([`RunError::Io`]); an unreadable archive or no
/// such entry ([`RunError::Usage`]).
fn entry_job(args: &Args, archive: &Path, entry: &str) -> Result<Resolved, RunError> {
    let bytes = source::read_regular(archive, MAX_UPDATE_BYTES)
        .map_err(|e| RunError::io(format!("cannot read {}", archive.display()), e))?;
    let usage = |e: &dyn std::fmt::Display| RunError::Usage(format!("{}: {e}", archive.display()));
    let a = nres::read(&bytes, nres::Mode::Tolerant).map_err(|e| usage(&e))?;
    let i = source::find_entry(&a, entry).map_err(|e| usage(&e))?;
    let mut job = ModelJob::entry(archive, i, source::decode_name(a.entries[i].name));
    job.output = single_output(args, None, &job.stem);
    Ok(single(job))
}

/// The output file of a single model: OUTPUT (a folder gets `<stem>.glb`
/// inside), or `<stem>.glb` in `dir` (the input's folder; `None`: the
/// current folder, as a relative name).
pub(super) fn single_output(args: &Args, dir: Option<&Path>, stem: &str) -> PathBuf {
    let name = format!("{}.glb", crate::run::sanitize_component(stem));
    match &args.output {
        Some(o) if o.is_dir() => o.join(name),
        Some(o) => o.clone(),
        None => dir.map_or_else(|| PathBuf::from(&name), |d| d.join(&name)),
    }
}

/// An archive or a folder: every model, unit and map in it
/// ([`batch::discover`]) into the OUTPUT folder (default for an archive:
/// its path without the extension).
///
/// # Errors
/// [`RunError::Usage`] for a folder without OUTPUT or an OUTPUT that is a
/// file; `cannot list` ([`RunError::Io`]).
fn discover(args: &Args, path: &Path) -> Result<Resolved, RunError> {
    let out = match &args.output {
        Some(o) => o.clone(),
        None if path.is_dir() => {
            return Err(RunError::Usage(format!(
                "a folder INPUT needs an OUTPUT folder: msh2gltf {} OUT_DIR",
                path.display()
            )))
        }
        None => path.with_extension(""),
    };
    if out.exists() && !out.is_dir() {
        return Err(RunError::Usage(format!(
            "{} exists and is not a folder",
            out.display()
        )));
    }
    let found = batch::discover(path, &out, args.format(), args.max_work)
        .map_err(|e| RunError::io(format!("cannot list {}", path.display()), e))?;
    Ok(Resolved::Jobs {
        found,
        single: false,
    })
}

/// The `limits.work` message when listing the archive `head` for
/// conversion costs more than `max_work` units: its header's entry count
/// ([`crate::nres::declared_entries`]) x
/// [`crate::limits::UNITS_PER_ARCHIVE_ENTRY`] (issue 26 item 5).
fn directory_over_budget(head: &[u8], max_work: u64) -> Option<String> {
    let count = crate::nres::declared_entries(head)?;
    let units = count.saturating_mul(crate::limits::UNITS_PER_ARCHIVE_ENTRY);
    (units > max_work).then(|| {
        format!(
            "limits.work: {count} directory entries make {units} work units, over the budget of {max_work} (docs/safety.md \"Bounded work\"; raise it with --max-work)"
        )
    })
}
