//! Safe output files: atomic writes (temporary file in the target folder,
//! then rename), no overwriting of existing files without `force`, and never
//! overwriting an input.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Why an output could not be written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The target exists and `force` was not given.
    #[error("{0} exists (use --force to replace it)")]
    Exists(PathBuf),
    /// The target is one of the inputs.
    #[error("refusing to overwrite the input {0}")]
    IsInput(PathBuf),
    /// I/O failure.
    #[error("{path}: {source}")]
    Io {
        /// The file being written.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// True when `a` and `b` name the same existing file (after resolving links).
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// Checks that `path` may be written: it is not one of `inputs`, and it does
/// not exist unless `force`.
///
/// # Errors
/// [`OutputError::IsInput`] or [`OutputError::Exists`].
pub fn check_target(path: &Path, inputs: &[&Path], force: bool) -> Result<(), OutputError> {
    if inputs.iter().any(|i| same_file(i, path)) {
        return Err(OutputError::IsInput(path.to_path_buf()));
    }
    if !force && path.exists() {
        return Err(OutputError::Exists(path.to_path_buf()));
    }
    Ok(())
}

/// Writes `bytes` to `path` atomically: a temporary file in the same folder
/// is written, flushed and renamed over the target, so a reader never sees a
/// half-written file and a failure leaves no output. Creates missing parent
/// folders. Call [`check_target`] first.
///
/// # Errors
/// [`OutputError::Io`].
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    write_atomic_all(&[(path, bytes)])
}

/// Writes several files that belong together (`.gltf` + `.bin`, `.msh` +
/// `.wea`): every temporary file is written and flushed first, and only
/// then are they renamed into place, so a failed write leaves none of them.
///
/// # Errors
/// [`OutputError::Io`].
pub fn write_atomic_all(files: &[(&Path, &[u8])]) -> Result<(), OutputError> {
    let mut temps = Vec::with_capacity(files.len());
    for (path, bytes) in files {
        temps.push((*path, write_temp(path, bytes)?));
    }
    for (path, tmp) in temps {
        tmp.persist(path).map_err(|e| OutputError::Io {
            path: path.to_path_buf(),
            source: e.error,
        })?;
    }
    Ok(())
}

/// A flushed temporary file beside `path` holding `bytes`.
fn write_temp(path: &Path, bytes: &[u8]) -> Result<tempfile::NamedTempFile, OutputError> {
    let io = |source| OutputError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(io)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".mshgltf-")
        .suffix(".tmp")
        .tempfile_in(&dir)
        .map_err(io)?;
    tmp.write_all(bytes).map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    Ok(tmp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_and_guards() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/out.bin");
        check_target(&p, &[], false).unwrap();
        write_atomic(&p, b"abc").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"abc");
        assert!(matches!(
            check_target(&p, &[], false),
            Err(OutputError::Exists(_))
        ));
        check_target(&p, &[], true).unwrap();
        assert!(matches!(
            check_target(&p, &[&p], true),
            Err(OutputError::IsInput(_))
        ));
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path().join("sub"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1);
    }
}
