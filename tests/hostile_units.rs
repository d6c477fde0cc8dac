//! Issue 26 on units, without `../shared`: a synthetic game folder built
//! from the committed samples (`objects.rlb`, `parts.rlb` holding
//! `samples/demo/demo.rlb`'s TOWER as chassis and turret and
//! `samples/anim_rotor.msh` as gun, `UNITS/u.dat`) with hostile unit files
//! and registries: no panic, a typed error or a warning naming the
//! component, record and rule.

mod common;
mod hostile;

use std::path::{Path, PathBuf};

use common::{msh2gltf, sample, stderr};
use hostile::{make_hostile, run_bounded};
use mshgltf::{nres, source};
use serde_json::Value;

fn name32(s: &str) -> [u8; 32] {
    let mut b = [0u8; 32];
    b[..s.len()].copy_from_slice(s.as_bytes());
    b
}

/// A unit file (unit-files-notes §3.3): (record, attach, class, children).
fn dat(components: &[(&str, i32, u32, i32)]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&0xF0F1u32.to_le_bytes());
    out.extend_from_slice(&0x0100_8000u32.to_le_bytes());
    for &(record, attach, class, children) in components {
        out.extend_from_slice(&name32("objects.rlb"));
        out.extend_from_slice(&name32(record));
        out.extend_from_slice(&1u32.to_le_bytes());
        out.extend_from_slice(&attach.to_le_bytes());
        out.extend_from_slice(&name32(record));
        out.extend_from_slice(&class.to_le_bytes());
        out.extend_from_slice(&children.to_le_bytes());
    }
    out
}

/// A game folder: objects.rlb (records chassis, turret, gun), parts.rlb,
/// and `UNITS/u.dat` holding `components`.
fn game(dir: &Path, components: &[(&str, i32, u32, i32)]) -> PathBuf {
    let demo = std::fs::read(sample("demo/demo.rlb")).unwrap();
    let a = nres::read(&demo, nres::Mode::Strict).unwrap();
    let tower = source::find_entry(&a, "TOWER.msh").unwrap();
    let rotor = std::fs::read(sample("anim_rotor.msh")).unwrap();
    let mut entries = vec![a.entries[tower].clone(); 3];
    entries[0].name = b"chassis.msh";
    entries[1].name = b"turret.msh";
    entries[2].name = b"gun.msh";
    entries[2].data = &rotor;
    std::fs::write(dir.join("parts.rlb"), nres::write(&entries).unwrap()).unwrap();
    let slots: Vec<(Vec<u8>, &[u8])> = ["chassis", "turret", "gun"]
        .iter()
        .map(|r| {
            let mut s = name32("parts.rlb").to_vec();
            s.extend_from_slice(&name32(&format!("{r}.msh")));
            (s, r.as_bytes())
        })
        .collect();
    let recs: Vec<nres::Entry> = slots
        .iter()
        .map(|(s, r)| nres::Entry {
            type_id: 0,
            attr1: 0,
            attr2: 0,
            attr3: 0,
            name: r,
            data: s,
        })
        .collect();
    std::fs::write(dir.join("objects.rlb"), nres::write(&recs).unwrap()).unwrap();
    std::fs::create_dir_all(dir.join("UNITS")).unwrap();
    let u = dir.join("UNITS/u.dat");
    std::fs::write(&u, dat(components)).unwrap();
    u
}

fn scene_parts(glb: &Path) -> Vec<Value> {
    let d = std::fs::read(glb).unwrap();
    let n = u32::from_le_bytes(d[12..16].try_into().unwrap()) as usize;
    let j: Value = serde_json::from_slice(&d[20..20 + n]).unwrap();
    j["scenes"][0]["extras"]["msh"]["unit"]["parts"]
        .as_array()
        .unwrap()
        .clone()
}

/// A turret whose attach is −1 (only the root's may be) carrying a gun
/// panicked in assembly (issue 26 item 3): now the turret and the gun it
/// carries are left out with a warning naming the component, its record
/// and its attach, and the chassis converts.
#[test]
fn a_turret_without_socket_carrying_a_gun_is_left_out_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let ok = game(
        tmp.path(),
        &[("chassis", -1, 0, 1), ("turret", 3, 1, 1), ("gun", 1, 4, 0)],
    );
    let out = tmp.path().join("ok.glb");
    let o = msh2gltf().arg(&ok).arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(scene_parts(&out).len(), 3);
    let u = game(
        tmp.path(),
        &[
            ("chassis", -1, 0, 1),
            ("turret", -1, 1, 1),
            ("gun", 1, 4, 0),
        ],
    );
    let out = tmp.path().join("u.glb");
    let o = msh2gltf().arg(&u).arg(&out).output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(!err.contains("panic"), "{err}");
    for want in ["component 1 \"turret\"", "attach -1", "component 2 \"gun\""] {
        assert!(err.contains(want), "{want:?} missing from {err}");
    }
    let parts = scene_parts(&out);
    assert_eq!(parts.len(), 1, "{parts:?}");
    assert_eq!(parts[0]["record"], "chassis");
}

/// The same in a batch of the game folder: the unit's row is converted with
/// the warning, never `internal.panic`.
#[test]
fn the_batch_converts_the_unit_without_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let g = tmp.path().join("game");
    std::fs::create_dir(&g).unwrap();
    game(
        &g,
        &[
            ("chassis", -1, 0, 1),
            ("turret", -1, 1, 1),
            ("gun", 1, 4, 0),
        ],
    );
    let out = tmp.path().join("out");
    let report = tmp.path().join("report.json");
    let o = msh2gltf()
        .arg(&g)
        .arg(&out)
        .arg("--report")
        .arg(&report)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(!err.contains("panic"), "{err}");
    let r: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let rows = r["models"].as_array().or(r["rows"].as_array()).unwrap();
    let row = rows
        .iter()
        .find(|m| m["source"].as_str().is_some_and(|s| s.ends_with("u.dat")))
        .unwrap_or_else(|| panic!("no u.dat row in {r}"));
    assert_eq!(row["status"], "converted", "{row}");
}

/// `objects.rlb` or the part archive it names that is a FIFO or a symlink
/// to `/dev/zero` (issue 26 item 4): refused before it is read (no hang,
/// no unbounded read), naming the file, exit 1; nothing written.
#[test]
fn registry_and_part_archives_that_are_not_regular_files_are_refused() {
    let dat = &[("chassis", -1, 0, 1), ("gun", 3, 4, 0)];
    for file in ["objects.rlb", "parts.rlb"] {
        for fifo in [true, false] {
            let tmp = tempfile::tempdir().unwrap();
            let u = game(tmp.path(), dat);
            if !make_hostile(&tmp.path().join(file), fifo) {
                eprintln!("skipped: no mkfifo/symlink here");
                return;
            }
            let out = tmp.path().join("u.glb");
            let o = run_bounded(msh2gltf().arg(&u).arg(&out));
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(1), "{file} fifo={fifo}: {err}");
            for want in [file, "not a regular file"] {
                assert!(
                    err.contains(want),
                    "{file} fifo={fifo}: {want:?} missing: {err}"
                );
            }
            assert!(!out.exists());
        }
    }
}

/// A model's `.cpt`/`.ctl` sibling that is a FIFO is not opened: the model
/// converts without it.
#[test]
fn a_fifo_sibling_does_not_hang_a_model() {
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("anim_rotor.msh");
    std::fs::copy(sample("anim_rotor.msh"), &m).unwrap();
    for ext in ["cpt", "ctl"] {
        if !make_hostile(&tmp.path().join(format!("anim_rotor.{ext}")), true) {
            return;
        }
    }
    let out = tmp.path().join("a.glb");
    let o = run_bounded(msh2gltf().arg(&m).arg(&out));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(out.exists());
}
