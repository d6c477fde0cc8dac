//! `gltf2msh`'s run (application layer): a glTF written back into the
//! game's formats, losslessly against a base (gltf-mapping.md "Reverse
//! rules"): a model or a map, decided by the base's content (module `edit`);
//! or, without `--base`, a new model and its WEAR table authored from any
//! scene, with its materials and textures added to the libraries
//! (modules `author`, `libraries`). Every file of a run goes through one write
//! transaction, planned before any work ([`crate::output`]); the JSON
//! report is written after it, whether the run succeeded or not. The
//! binary parses [`Args`], calls [`run`] and prints the error.
//!
//! Exit codes: 0 ok, 1 conversion error (mismatch, invalid result,
//! unreadable glTF), 2 usage or environment error (missing files, refused
//! output).

use std::path::{Path, PathBuf};

use crate::gltf_import;
use crate::output::{self, Transaction, TxnOptions};
use crate::source::{self, file_any_case, InputSpec};

pub mod args;
mod author;
mod console;
mod edit;
mod libraries;
mod materials;
mod mission;
mod new_map;
pub mod new_mission;
mod points;
pub mod store;
mod unit;

pub use args::{Args, RecoverArgs, StoreArgs};
pub use new_mission::NewMissionArgs;

/// A failed run: its message, and through the variant its exit code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// The command line asks for something impossible or the environment
    /// refuses it: missing files, refused outputs (exit 2).
    #[error("{0}")]
    Usage(String),
    /// The conversion failed: a mismatch with the base, an invalid result,
    /// an unreadable glTF, content MSH cannot hold (exit 1).
    #[error("{0}")]
    Conversion(String),
}

impl RunError {
    /// The process exit code: 2 for [`RunError::Usage`], 1 for
    /// [`RunError::Conversion`].
    pub fn exit_code(&self) -> u8 {
        match self {
            RunError::Usage(_) => 2,
            RunError::Conversion(_) => 1,
        }
    }
}

/// Runs `gltf2msh`: plans the transaction (inputs, then `--report`),
/// validates the options, edits against `--base` or authors a new model,
/// commits, prints the summary on stderr (unless `-q`) and writes
/// `--report` (also after a failure; a report that cannot be written is
/// said on stderr).
///
/// # Errors
/// [`RunError`]: the first failure, with its exit code.
pub fn run(args: &Args) -> Result<(), RunError> {
    if let Some(dir) = &args.recover {
        return recover(dir);
    }
    let mut txn = plan_run(args)?;
    let res = run_planned(args, &mut txn);
    if let (Ok(_), Some(s), false) = (&res, txn.installed(), args.quiet) {
        eprintln!("gltf2msh: {s}");
    }
    if let Some(p) = &args.report {
        write_report(p, args, &mut txn, &res);
    }
    res.map(|_| ())
}

/// `--recover FOLDER`: completes the commits a kill, crash or power loss
/// interrupted in FOLDER ([`output::recover_folder`]; docs/safety.md) and
/// says what each did, or `gltf2msh: no interrupted commit in FOLDER`.
///
/// # Errors
/// Exit 2 when FOLDER is not a folder; exit 1 for a journal that cannot be
/// read or completed (`output.journal`: nothing is changed on its word),
/// or one a live run holds (`output.busy`).
pub fn recover(dir: &Path) -> Result<(), RunError> {
    if !dir.is_dir() {
        return Err(usage(format!("--recover {}: not a folder", dir.display())));
    }
    let wait = TxnOptions::from_env(false).lock_wait;
    let done = output::recover_folder(dir, wait).map_err(output_fail)?;
    for r in &done {
        eprintln!("gltf2msh: {r}");
    }
    if done.is_empty() {
        eprintln!("gltf2msh: no interrupted commit in {}", dir.display());
    }
    Ok(())
}

/// One mode: an edit against `--base` (a model or a map) or authoring.
/// Returns the `import` or `author` object of the report.
fn run_planned(args: &Args, txn: &mut Transaction) -> Result<serde_json::Value, RunError> {
    args.validate()?;
    if let Some(dir) = &args.new_map {
        return new_map::run(args, txn, dir);
    }
    match args.base.as_deref() {
        Some(base) => edit::run(args, txn, base),
        None => author::run(args, txn),
    }
}

/// The transaction of the run: the inputs (glTF, base or --into archive),
/// then the report (refused when it is an input, exists without --force, or
/// is not a regular file).
fn plan_run(cli: &Args) -> Result<Transaction, RunError> {
    let mut txn = Transaction::new(TxnOptions::from_env(cli.force));
    txn.add_input(&cli.input);
    if let Some(b) = cli.base.as_deref() {
        let (InputSpec::File(p) | InputSpec::Entry { archive: p, .. }) = source::parse_input(b);
        // The base archive: an input, or reserved for its in-place edit.
        if cli.base_in_place().is_some() || cli.file_in_place().is_some() {
            txn.plan().reserve_update(&p);
        } else {
            txn.add_input(&p);
        }
    }
    if let Some(a) = &cli.into {
        // The archive: an input, or reserved for its in-place edit.
        let out = cli.output.clone().unwrap_or_else(|| a.clone());
        if output::same_file(&out, a) {
            txn.plan().reserve_update(a);
        } else {
            txn.add_input(a);
        }
    }
    if let Some(g) = &cli.game_dir {
        // The game's libraries: inputs, or reserved for the in-place edit.
        use crate::material::library::{LIGHTMAP_LIB, MATERIAL_LIB, TEXTURES_LIB};
        for f in [MATERIAL_LIB, TEXTURES_LIB, LIGHTMAP_LIB] {
            let p = file_any_case(g, f).unwrap_or_else(|| g.join(f));
            if cli.in_place {
                txn.plan().reserve_update(&p);
            } else {
                txn.add_input(&p);
            }
        }
    }
    if let Some(r) = &cli.report {
        txn.claim(r).map_err(|e| usage(format!("--report: {e}")))?;
    }
    // An in-place run is an install: the originals it replaces are kept
    // (output::install, docs/safety.md).
    let into_in_place = cli
        .into
        .as_ref()
        .filter(|a| output::same_file(cli.output.as_deref().unwrap_or(a.as_path()), a));
    if cli.in_place || into_in_place.is_some() {
        let base = cli.base.as_deref().map(|b| {
            let (InputSpec::File(p) | InputSpec::Entry { archive: p, .. }) = source::parse_input(b);
            p
        });
        let from = base.as_deref().or(into_in_place.map(PathBuf::as_path));
        if let Some(g) = store::install_game(from, cli.game_dir.as_deref()) {
            txn.install_into(&g);
        }
    }
    Ok(txn)
}

/// Loads the glTF (buffer and image URIs confined unless --allow-outside)
/// and records the external files it reads or may read as inputs.
fn load_doc(
    cli: &Args,
    txn: &mut Transaction,
) -> Result<(gltf_import::GltfFile, Vec<PathBuf>), RunError> {
    let (doc, files) = read_doc(cli, txn)?;
    gltf_import::budget::check_scene(&doc, cli.max_work, cli.simplify)
        .map_err(|e| conversion(format!("{}: {e}", cli.input.display())))?;
    Ok((doc, files))
}

/// [`load_doc`] without the model's scene budget (a mission is not a
/// model: it has its own, issue 36 item 4).
fn read_doc(
    cli: &Args,
    txn: &mut Transaction,
) -> Result<(gltf_import::GltfFile, Vec<PathBuf>), RunError> {
    let read = gltf_import::ReadOptions {
        allow_outside: cli.allow_outside,
        max_work: cli.max_work,
    };
    let (doc, files) = gltf_import::load_path_with(&cli.input, &read)
        .map_err(|e| conversion(format!("{}: {e}", cli.input.display())))?;
    for f in &files {
        txn.add_input(f);
    }
    if let Some(dir) = cli.input.parent() {
        for f in gltf_import::materials::image_files(&doc, dir) {
            txn.add_input(&f);
        }
    }
    if let Some(r) = &cli.report {
        // Claimed before the glTF named its buffers and images.
        if txn.plan().is_input(r) {
            return Err(usage(format!(
                "--report {}: refusing to overwrite an input of the glTF",
                r.display()
            )));
        }
    }
    Ok((doc, files))
}

/// Claims an output, with `hint` after a refusal for an input or a
/// second use of one path.
fn claim(txn: &mut Transaction, p: &Path, hint: &str) -> Result<(), RunError> {
    txn.claim(p).map_err(|e| {
        let h = match e {
            output::OutputError::IsInput(_) | output::OutputError::Collision(..) => hint,
            _ => "",
        };
        usage(format!("{e}{h}"))
    })
}

fn usage(msg: impl Into<String>) -> RunError {
    RunError::Usage(msg.into())
}

fn conversion(msg: impl Into<String>) -> RunError {
    RunError::Conversion(msg.into())
}

/// An output failure: exit 1 for I/O and busy locks (README exit codes),
/// 2 for refusals of the command line.
fn output_fail(e: output::OutputError) -> RunError {
    if e.is_runtime() {
        conversion(e.to_string())
    } else {
        usage(e.to_string())
    }
}

/// Reads an input file (a regular file of at most
/// [`output::MAX_UPDATE_BYTES`]): exit 2 when it is missing or not a
/// regular file, 1 for other I/O failures.
fn read_input(path: &Path, what: &str) -> Result<Vec<u8>, RunError> {
    source::read_regular(path, output::MAX_UPDATE_BYTES).map_err(|e| {
        let msg = format!("{what} {}: {e}", path.display());
        match e.kind() {
            std::io::ErrorKind::NotFound | std::io::ErrorKind::InvalidInput => usage(msg),
            _ => conversion(msg),
        }
    })
}

/// Checks the glTF input before anything else: missing → "not found", a
/// folder, device, FIFO or socket (`/dev/zero`) → "not a regular file"
/// (exit 2 both).
fn check_input(path: &Path) -> Result<(), RunError> {
    if cfg!(windows) && crate::output::is_windows_device_name(path) {
        return Err(usage(format!(
            "input {}: not a regular file (a Windows device name)",
            path.display()
        )));
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(()),
        Ok(m) => Err(usage(format!(
            "input {}: not a regular file ({})",
            path.display(),
            if m.is_dir() {
                "a folder"
            } else {
                "a device, FIFO or socket"
            }
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(usage(format!("input {} not found", path.display())))
        }
        Err(e) => Err(usage(format!("input {}: {e}", path.display()))),
    }
}

/// Writes the JSON report (its own transaction, after the run's commit:
/// it is written whether the run succeeded or not).
fn write_report(
    path: &Path,
    cli: &Args,
    txn: &mut Transaction,
    res: &Result<serde_json::Value, RunError>,
) {
    // The glTF's buffers and images became inputs after the report was claimed.
    if txn.plan().is_protected(path) || txn.plan().is_update(path) {
        eprintln!(
            "gltf2msh: report {}: refusing to overwrite an input",
            path.display()
        );
        return;
    }
    let mut v = match res {
        Ok(r) => {
            if cli.new_map.is_some() {
                serde_json::json!({"ok": true, "input": cli.input, "new_map": r})
            } else if cli.base.is_some() {
                serde_json::json!({"ok": true, "input": cli.input, "base": cli.base, "output": cli.output, "import": r})
            } else {
                serde_json::json!({"ok": true, "input": cli.input, "into": cli.into, "output": cli.output, "author": r})
            }
        }
        Err(f) => {
            serde_json::json!({"ok": false, "input": cli.input, "base": cli.base, "exit_code": f.exit_code(), "error": f.to_string()})
        }
    };
    if let (Ok(_), Some(s)) = (res, txn.installed()) {
        v["install"] = serde_json::to_value(s).unwrap_or_default();
    }
    let text = serde_json::to_vec_pretty(&v).unwrap_or_default();
    let mut t = Transaction::new(txn.options().clone());
    if let Err(e) = t.stage(path, text).and_then(|()| t.commit().map(|_| ())) {
        eprintln!("gltf2msh: report {}: {e}", path.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_failures_exit_1_for_the_environment_2_for_refusals() {
        let refused = output_fail(output::OutputError::Exists("a.msh".into()));
        assert_eq!(refused.exit_code(), 2);
        let failed = output_fail(output::OutputError::Io {
            path: "a.msh".into(),
            source: std::io::Error::other("disk full"),
        });
        assert_eq!(failed.exit_code(), 1);
        assert_eq!(
            failed.to_string(),
            output::OutputError::Io {
                path: "a.msh".into(),
                source: std::io::Error::other("disk full"),
            }
            .to_string()
        );
    }
}
