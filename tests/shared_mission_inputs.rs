//! A mission run never writes a file it read (issue 36 item 1): the text
//! files beside `data.tma` (`descr`, `mission.cfg`, `messages.cfg`,
//! `Mistips.mis`, also through a hard link), every `.dat` the mission
//! places and its map's files are inputs, so naming one as the output or
//! as `--report` is refused with exit 2, `--force` or not, and the file
//! is left as it was: single missions, batches, and `gltf2msh` with a
//! mission base. Run on a copy of `../shared/corpus`.

mod common;

use std::path::{Path, PathBuf};

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        let q = to.join(e.file_name());
        if p.is_dir() {
            copy_dir(&p, &q);
        } else {
            std::fs::copy(&p, &q).unwrap();
        }
    }
}

/// Runs `cmd` (with `--force`) and checks that it is refused (exit 2,
/// "refusing to overwrite the input") and `target` kept its bytes.
fn refused(mut cmd: std::process::Command, target: &Path, what: &str) {
    let before = std::fs::read(target).unwrap();
    let o = cmd.arg("--force").output().unwrap();
    let err = common::stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{what}: {err}");
    assert!(err.contains("overwrite"), "{what}: {err}");
    assert!(std::fs::read(target).unwrap() == before, "{what}: changed");
}

/// The game copy, the first mission's `data.tma`, the text files beside
/// it, and a `.dat` it places (from the manifest).
fn game(tmp: &Path) -> (PathBuf, PathBuf, Vec<PathBuf>, PathBuf) {
    let root = common::corpus().expect("corpus");
    let m = common::manifest(&root);
    let g = tmp.join("game");
    copy_dir(&root, &g);
    let mission = &m["missions"][0];
    let dir = g.join(mission["dir"].as_str().unwrap());
    let texts: Vec<PathBuf> = ["descr", "mission.cfg", "messages.cfg", "Mistips.mis"]
        .iter()
        .map(|n| dir.join(n))
        .filter(|p| p.is_file())
        .collect();
    assert!(!texts.is_empty(), "no text files beside the mission");
    let dat = mission["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"].as_u64().is_some_and(|k| k <= 1))
        .map(|o| o["path"].as_str().unwrap().replace('\\', "/"))
        .expect("an owned object");
    (g.clone(), dir.join("data.tma"), texts, g.join(dat))
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn a_single_mission_run_refuses_to_write_what_it_read() {
    if common::corpus().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (_g, tma, texts, dat) = game(tmp.path());
    let out = tmp.path().join("x.glb");
    let link = tmp.path().join("link.glb");
    std::fs::hard_link(&texts[0], &link).unwrap();
    let mut targets: Vec<(PathBuf, PathBuf)> =
        texts.iter().map(|t| (t.clone(), t.clone())).collect();
    targets.push((link.clone(), texts[0].clone()));
    targets.push((dat.clone(), dat.clone()));
    for (target, real) in &targets {
        let mut cmd = common::msh2gltf();
        cmd.arg(&tma).arg(target);
        refused(cmd, real, &format!("output {}", target.display()));
        let mut cmd = common::msh2gltf();
        cmd.arg(&tma).arg(&out).arg("--report").arg(target);
        refused(cmd, real, &format!("--report {}", target.display()));
    }
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn a_batch_of_missions_refuses_to_report_over_what_they_read() {
    if common::corpus().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (g, _tma, texts, dat) = game(tmp.path());
    let link = tmp.path().join("link.json");
    std::fs::hard_link(&dat, &link).unwrap();
    for target in [&dat, &link, &texts[0]] {
        let mut cmd = common::msh2gltf();
        cmd.arg(g.join("MISSIONS"))
            .arg(tmp.path().join("out"))
            .arg("--report")
            .arg(target);
        let real = if target == &link { &dat } else { target };
        refused(cmd, real, &format!("batch --report {}", target.display()));
    }
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn a_mission_edit_refuses_to_write_what_it_read() {
    if common::corpus().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (_g, tma, texts, _dat) = game(tmp.path());
    let glb = tmp.path().join("m.glb");
    let o = common::msh2gltf().arg(&tma).arg(&glb).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let link = tmp.path().join("link.tma");
    std::fs::hard_link(&tma, &link).unwrap();
    for target in [&tma, &link, &texts[0], &glb] {
        let real = if target == &link { &tma } else { target };
        let mut cmd = common::gltf2msh();
        cmd.arg(&glb).arg("--base").arg(&tma).arg("-o").arg(target);
        refused(cmd, real, &format!("-o {}", target.display()));
        let mut cmd = common::gltf2msh();
        cmd.arg(&glb)
            .arg("--base")
            .arg(&tma)
            .arg("-o")
            .arg(tmp.path().join("new.tma"))
            .arg("--report")
            .arg(target);
        refused(cmd, real, &format!("--report {}", target.display()));
    }
}
