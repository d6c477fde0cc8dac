//! Filesystem safety (issue 11, class 1): no run writes over one of its
//! inputs or writes one path twice (report, `.bin`/`.wea` sidecars,
//! textures), existing files need --force and only regular files are ever
//! replaced, concurrent runs never both create one output, outputs follow
//! the umask, and SIGTERM leaves no temporary file.

mod common;
mod hostile;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{gltf2msh, msh2gltf, sample, stderr};

fn run(c: &mut Command) -> Output {
    c.output().unwrap()
}

/// A folder with `m.msh` (a copy of a sample) and `m.glb` exported from it.
fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m.msh");
    std::fs::copy(sample("anim_rotor.msh"), &m).unwrap();
    let g = dir.path().join("m.glb");
    let o = run(msh2gltf().arg(&m).arg(&g));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    (dir, m, g)
}

/// Makes a FIFO at `p` (`mkfifo`).
#[cfg(unix)]
fn mkfifo(p: &Path) {
    assert!(Command::new("mkfifo").arg(p).status().unwrap().success());
}

fn temp_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(temp_files(&p));
        } else if e.file_name().to_string_lossy().starts_with(".mshgltf-") {
            out.push(p);
        }
    }
    out
}

#[test]
fn report_never_replaces_an_input() {
    let (dir, m, g) = setup();
    let before = std::fs::read(&m).unwrap();
    let glb = std::fs::read(&g).unwrap();
    let out = dir.path().join("x.glb");
    for force in [false, true] {
        let mut c = msh2gltf();
        c.arg(&m).arg(&out).arg("--report").arg(&m);
        if force {
            c.arg("--force");
        }
        let o = run(&mut c);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("refusing to overwrite the input"));
    }
    // gltf2msh: the report may not be the base or the glTF.
    for r in [&m, &g] {
        let o = run(gltf2msh()
            .arg(&g)
            .arg("--base")
            .arg(&m)
            .arg("-o")
            .arg(dir.path().join("n.msh"))
            .arg("--report")
            .arg(r)
            .arg("--force"));
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    }
    assert_eq!(std::fs::read(&m).unwrap(), before);
    assert_eq!(std::fs::read(&g).unwrap(), glb);
    assert!(!out.exists());
    // The report may not be the output either.
    let o = run(msh2gltf().arg(&m).arg(&out).arg("--report").arg(&out));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("written twice"), "{}", stderr(&o));
}

#[test]
fn sidecars_are_checked_like_outputs() {
    let (dir, m, g) = setup();
    let d = dir.path();
    // An existing .bin beside the .gltf needs --force.
    std::fs::write(d.join("a.bin"), b"keep").unwrap();
    let o = run(msh2gltf().arg(&m).arg(d.join("a.gltf")));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read(d.join("a.bin")).unwrap(), b"keep");
    assert!(!d.join("a.gltf").exists());
    // The input as the .bin sidecar: refused even with --force.
    let input = d.join("b.bin");
    std::fs::copy(&m, &input).unwrap();
    let o = run(msh2gltf().arg(&input).arg(d.join("b.gltf")).arg("--force"));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read(&input).unwrap(), std::fs::read(&m).unwrap());
    // gltf2msh: model and WEAR table on one path.
    let o = run(gltf2msh().arg(&g).arg("-o").arg(d.join("s.wea")));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("written twice"), "{}", stderr(&o));
    assert!(!d.join("s.wea").exists());
}

#[test]
fn batch_gltf_into_the_game_folder_keeps_every_input() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(sample("static_box.msh"), d.join("box.msh")).unwrap();
    std::fs::write(d.join("box.bin"), b"game data").unwrap();
    let o = run(msh2gltf()
        .arg(d)
        .arg(d)
        .args(["--format", "gltf", "--force", "-q", "--report"])
        .arg(d.join("r.json")));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(std::fs::read(d.join("box.bin")).unwrap(), b"game data");
    assert!(!d.join("box.gltf").exists());
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("r.json")).unwrap()).unwrap();
    let row = r["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["source"].as_str().unwrap().ends_with("box.msh"))
        .unwrap();
    assert_eq!(row["rule"], "output.is_input");
}

#[test]
fn texture_outputs_are_claimed_too() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for f in ["Material.lib", "Textures.lib", "demo.rlb"] {
        std::fs::copy(sample("demo").join(f), d.join(f)).unwrap();
    }
    let lib = std::fs::read(d.join("Textures.lib")).unwrap();
    std::fs::create_dir(d.join("tex")).unwrap();
    // A texture file that is a link to an input, and one that is the report.
    #[cfg(unix)]
    std::os::unix::fs::symlink(d.join("Textures.lib"), d.join("tex/GLASS_TX.0.png")).unwrap();
    let o = run(msh2gltf()
        .arg(d.join("demo.rlb"))
        .arg(d.join("out"))
        .arg("--textures-out")
        .arg(d.join("tex"))
        .arg("--report")
        .arg(d.join("tex/STEEL_TX.0.png"))
        .args(["--force", "-q"]));
    // Texture files that cannot be written fail the run (exit 1, issue 15)
    // and are named on stderr and as failed report rows.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("--textures-out"), "{}", stderr(&o));
    assert_eq!(std::fs::read(d.join("Textures.lib")).unwrap(), lib);
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("tex/STEEL_TX.0.png")).unwrap()).unwrap();
    let failed: Vec<&serde_json::Value> = r["models"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["source"].as_str().unwrap().starts_with("--textures-out"))
        .collect();
    let errors = serde_json::to_string(&failed).unwrap();
    assert!(errors.contains("written twice"), "{errors}");
    #[cfg(unix)]
    assert!(
        errors.contains("refusing to overwrite the input") || errors.contains("not a regular file"),
        "{errors}"
    );
}

#[cfg(unix)]
#[test]
fn only_regular_files_are_replaced() {
    let (dir, m, g) = setup();
    let d = dir.path();
    let o = run(msh2gltf().arg(&m).arg("/dev/null").arg("--force"));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
    // A FIFO as output (and as the report) is refused, never opened.
    let fifo = d.join("f.glb");
    mkfifo(&fifo);
    let o = run(msh2gltf().arg(&m).arg(&fifo).arg("--force"));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = run(gltf2msh()
        .arg(&g)
        .arg("-o")
        .arg(d.join("n.msh"))
        .arg("--report")
        .arg(&fifo)
        .arg("--force"));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    // A FIFO as a glTF buffer is refused (reading it would block).
    let fifo_bin = d.join("pipe.bin");
    mkfifo(&fifo_bin);
    std::fs::write(
        d.join("p.gltf"),
        hostile::triangle_gltf("pipe.bin", 44, serde_json::json!({})),
    )
    .unwrap();
    let o = run(gltf2msh()
        .arg(d.join("p.gltf"))
        .arg("-o")
        .arg(d.join("p.msh")));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("gltf.uri"), "{}", stderr(&o));
}

/// A `--base` that is a FIFO, a device or a folder is refused (exit 2,
/// "not a regular file") without being opened: reading a FIFO would block.
#[cfg(unix)]
#[test]
fn a_base_that_is_not_a_regular_file_is_refused_unopened() {
    let (dir, _, g) = setup();
    let d = dir.path();
    let fifo = d.join("base.msh");
    mkfifo(&fifo);
    for base in [fifo.as_path(), Path::new("/dev/zero"), d] {
        let mut child = gltf2msh()
            .arg(&g)
            .arg("--base")
            .arg(base)
            .arg("-o")
            .arg(d.join("out.msh"))
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let t0 = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if t0.elapsed() > std::time::Duration::from_secs(20) {
                child.kill().unwrap();
                panic!("gltf2msh --base {} still runs after 20 s", base.display());
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
    }
    assert!(!d.join("out.msh").exists());
}

#[cfg(unix)]
#[test]
fn outputs_follow_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, m, _) = setup();
    for (umask, mode) in [("022", 0o644), ("077", 0o600), ("002", 0o664)] {
        let out = dir.path().join(format!("u{umask}.glb"));
        let st = Command::new("sh")
            .arg("-c")
            .arg(format!("umask {umask}; exec \"$0\" \"$1\" \"$2\"",))
            .arg(env!("CARGO_BIN_EXE_msh2gltf"))
            .arg(&m)
            .arg(&out)
            .status()
            .unwrap();
        assert!(st.success());
        let got = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
        assert_eq!(got, mode, "umask {umask}");
    }
}

/// A game folder of `n` copies of a sample model.
fn many_models(d: &Path, n: usize) {
    let bytes = std::fs::read(sample("anim_rotor.msh")).unwrap();
    for i in 0..n {
        std::fs::write(d.join(format!("m{i:04}.msh")), &bytes).unwrap();
    }
}

#[test]
fn concurrent_runs_never_both_create_an_output() {
    let dir = tempfile::tempdir().unwrap();
    let game = dir.path().join("game");
    std::fs::create_dir(&game).unwrap();
    many_models(&game, 300);
    let out = dir.path().join("out");
    let spawn = |r: &str| {
        msh2gltf()
            .arg(&game)
            .arg(&out)
            .args(["-q", "--jobs", "1", "--report"])
            .arg(dir.path().join(r))
            .spawn()
            .unwrap()
    };
    let (mut a, mut b) = (spawn("a.json"), spawn("b.json"));
    assert_eq!(a.wait().unwrap().code(), Some(0));
    assert_eq!(b.wait().unwrap().code(), Some(0));
    let rows = |r: &str| -> Vec<serde_json::Value> {
        let v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.path().join(r)).unwrap()).unwrap();
        v["models"].as_array().unwrap().clone()
    };
    let (ra, rb) = (rows("a.json"), rows("b.json"));
    assert_eq!(ra.len(), 300);
    for (x, y) in ra.iter().zip(&rb) {
        let conv = |r: &serde_json::Value| r["status"] == "converted";
        assert!(
            conv(x) != conv(y),
            "exactly one run creates {}: {x} / {y}",
            x["source"]
        );
    }
    for e in std::fs::read_dir(&out).unwrap().flatten() {
        let b = std::fs::read(e.path()).unwrap();
        assert_eq!(&b[..4], b"glTF", "{}", e.path().display());
        assert_eq!(
            u32::from_le_bytes(b[8..12].try_into().unwrap()) as usize,
            b.len()
        );
    }
    assert!(temp_files(&out).is_empty());
}

#[cfg(unix)]
#[test]
fn sigterm_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let game = dir.path().join("game");
    std::fs::create_dir(&game).unwrap();
    many_models(&game, 2000);
    let out = dir.path().join("out");
    for (sig, delay_ms) in [(libc::SIGTERM, 500u64), (libc::SIGINT, 900)] {
        let _ = std::fs::remove_dir_all(&out);
        let mut child = msh2gltf()
            .arg(&game)
            .arg(&out)
            .args(["-q", "--jobs", "2"])
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        // SAFETY: signalling our own child process.
        assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, sig) }, 0);
        let code = child.wait().unwrap().code();
        // Killed mid-run (128 + signal) or already finished (0).
        assert!(
            matches!(code, Some(0) | Some(143) | Some(130)),
            "{sig}: {code:?}"
        );
        if out.exists() {
            assert_eq!(temp_files(&out), Vec::<PathBuf>::new(), "{sig}");
            // Every output present is complete.
            for e in std::fs::read_dir(&out).unwrap().flatten() {
                let b = std::fs::read(e.path()).unwrap();
                assert_eq!(
                    u32::from_le_bytes(b[8..12].try_into().unwrap()) as usize,
                    b.len()
                );
            }
        }
    }
}

#[cfg(unix)]
#[test]
fn symlinks_in_a_game_folder_are_converted_or_reported() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let game = d.join("game");
    std::fs::create_dir_all(game.join("sub")).unwrap();
    std::fs::copy(sample("demo").join("demo.rlb"), d.join("real.rlb")).unwrap();
    std::os::unix::fs::symlink(d.join("real.rlb"), game.join("linked.rlb")).unwrap();
    std::os::unix::fs::symlink(&game, game.join("sub/loop")).unwrap();
    std::os::unix::fs::symlink(d.join("nowhere"), game.join("dangling.rlb")).unwrap();
    let o = run(msh2gltf()
        .arg(&game)
        .arg(d.join("out"))
        .args(["-q", "--report"])
        .arg(d.join("r.json")));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("r.json")).unwrap()).unwrap();
    assert_eq!(r["converted"], 1, "{r}");
    let reasons: Vec<String> = r["models"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["status"] == "skipped")
        .map(|m| m["reason"].as_str().unwrap().to_string())
        .collect();
    assert!(
        reasons.iter().any(|x| x.contains("symlink to a folder")),
        "{reasons:?}"
    );
    assert!(
        reasons.iter().any(|x| x.contains("dangling")),
        "{reasons:?}"
    );
}
