//! `gltf2msh --base ARCHIVE:ENTRY --in-place` (issue 23 item 5): an edit
//! goes into the game's archive itself, through the one transaction under
//! the archive's lock, so a mod needs no copying by hand. Unedited: the
//! archive keeps its bytes; edited: only the model's entry changes; a
//! failure injected at the commit's rename leaves the archive as it was;
//! `--in-place` with neither `--game-dir` nor an archive base is refused.

mod common;

use std::path::Path;

use common::{gltf2msh, msh2gltf, sample, stderr};
use mshgltf::nres;
use serde_json::json;

fn entries(path: &Path) -> Vec<(Vec<u8>, Vec<u8>)> {
    let data = std::fs::read(path).unwrap();
    let a = nres::read(&data, nres::Mode::Strict).unwrap();
    a.entries
        .iter()
        .map(|e| (e.name.to_vec(), e.data.to_vec()))
        .collect()
}

#[test]
fn an_edit_goes_into_the_archive_itself() {
    let dir = tempfile::tempdir().unwrap();
    for f in ["demo.rlb", "Material.lib", "Textures.lib"] {
        std::fs::copy(sample("demo").join(f), dir.path().join(f)).unwrap();
    }
    let arch = dir.path().join("demo.rlb");
    let base = format!("{}:TOWER.msh", arch.display());
    let gltf = dir.path().join("t.gltf");
    let o = msh2gltf().arg(&base).arg(&gltf).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let before = std::fs::read(&arch).unwrap();

    // Unedited: the archive keeps its bytes.
    let o = gltf2msh()
        .arg(&gltf)
        .args(["--base", &base, "--in-place"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("unchanged"), "{}", stderr(&o));
    assert!(std::fs::read(&arch).unwrap() == before);

    // A part moved: only TOWER.msh changes, in place.
    let mut j: serde_json::Value = serde_json::from_slice(&std::fs::read(&gltf).unwrap()).unwrap();
    let g = j["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .position(|n| n.get("mesh").is_some())
        .unwrap();
    let t = j["nodes"][g]
        .get("translation")
        .cloned()
        .unwrap_or(json!([0.0, 0.0, 0.0]));
    j["nodes"][g]["translation"] = json!([t[0].as_f64().unwrap() + 0.5, t[1], t[2]]);
    let edited = dir.path().join("e.gltf");
    std::fs::write(&edited, serde_json::to_vec(&j).unwrap()).unwrap();

    // A failure injected at the commit's rename: the archive as it was.
    let o = gltf2msh()
        .arg(&edited)
        .args(["--base", &base, "--in-place"])
        .env("MSHGLTF_TEST_FAIL_RENAME_AT", "0")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(std::fs::read(&arch).unwrap() == before, "{}", stderr(&o));

    let o = gltf2msh()
        .arg(&edited)
        .args(["--base", &base, "--in-place"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let (old, new) = (entries_of(&before), entries(&arch));
    assert_eq!(old.len(), new.len());
    for ((na, a), (nb, b)) in old.iter().zip(&new) {
        assert_eq!(na, nb);
        assert_eq!(
            a == b,
            na != b"TOWER.msh",
            "{}",
            String::from_utf8_lossy(na)
        );
    }
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        // The archive's lock file (.NAME.mshgltf-lock, empty) stays.
        .filter(|n| !n.to_string_lossy().ends_with(".mshgltf-lock"))
        .collect();
    assert_eq!(left.len(), 6, "no kept or temporary file left: {left:?}");
}

fn entries_of(bytes: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let a = nres::read(bytes, nres::Mode::Strict).unwrap();
    a.entries
        .iter()
        .map(|e| (e.name.to_vec(), e.data.to_vec()))
        .collect()
}

#[test]
fn in_place_needs_a_game_dir_or_an_archive_base() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("rotor.msh");
    std::fs::copy(sample("anim_rotor.msh"), &m).unwrap();
    let gltf = dir.path().join("r.glb");
    assert!(msh2gltf()
        .arg(&m)
        .arg(&gltf)
        .output()
        .unwrap()
        .status
        .success());
    let o = gltf2msh()
        .arg(&gltf)
        .args(["--base", m.to_str().unwrap(), "--in-place"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--in-place"), "{}", stderr(&o));
}
