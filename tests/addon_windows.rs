//! The Blender add-on's converter plumbing as on Windows (issue 27), without
//! Blender: `tests/addon/windows_tools.py` loads the add-on's `tools.py`
//! with `sys.platform` faked to `win32` and checks that the bundled
//! binaries are found in `bin/` as `.exe` and that every process is started
//! with `CREATE_NO_WINDOW` (no console window flashing up), paths with
//! spaces and Cyrillic passed as given. Skips (with a note) without python3.

use std::path::Path;
use std::process::Command;

#[cfg(unix)]
#[test]
fn addon_finds_exe_binaries_and_starts_them_without_a_console() {
    // Unix only: the script fakes Windows inside a host Python, which the
    // Windows test run (under Wine) does not have.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let o = match Command::new("python3")
        .arg(root.join("tests/addon/windows_tools.py"))
        .arg(root.join("blender/io_scene_parkan"))
        .arg(tmp.path())
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            eprintln!("SKIP: no python3 ({e})");
            return;
        }
    };
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && out.contains("WINDOWS_TOOLS_OK 3"),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
