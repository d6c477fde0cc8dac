//! `msh2gltf --list`: the model entries of an archive as JSON (used by the
//! Blender add-on's entry picker).

mod common;

use std::path::Path;
use std::process::Command;

use mshgltf::nres;

use common::sample;

fn list(input: &Path) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_msh2gltf"))
        .arg("--list")
        .arg(input)
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8(out.stdout).unwrap())
}

#[test]
fn lists_the_model_entries_of_an_archive() {
    let path = sample("demo/demo.rlb");
    let (code, stdout) = list(&path);
    assert_eq!(code, Some(0));
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["kind"], "archive");
    let bytes = std::fs::read(&path).unwrap();
    let a = nres::read(&bytes, nres::Mode::Strict).unwrap();
    let want: Vec<serde_json::Value> = a
        .entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.name.to_ascii_lowercase().ends_with(b".msh"))
        .map(|(i, e)| {
            serde_json::json!({
                "name": String::from_utf8(e.name.to_vec()).unwrap(),
                "index": i,
                "bytes": e.data.len(),
            })
        })
        .collect();
    assert!(!want.is_empty());
    assert_eq!(v["models"], serde_json::Value::Array(want));
}

#[test]
fn lists_a_bare_model_as_itself_and_refuses_other_files() {
    let path = sample("anim_rotor.msh");
    let (code, stdout) = list(&path);
    assert_eq!(code, Some(0));
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["kind"], "model");
    let n = std::fs::metadata(&path).unwrap().len();
    assert_eq!(
        v["models"],
        serde_json::json!([{"name": "anim_rotor.msh", "index": null, "bytes": n}])
    );
    // A texture library holds no models: exit 1, nothing on stdout.
    let (code, stdout) = list(&sample("demo/Textures.lib"));
    assert_eq!(code, Some(1));
    assert!(stdout.is_empty());
}

/// A mission's placed objects (issue 25 item 7): index, kind, path, clan
/// (with its name for owned objects), logical id and game-axes position.
#[test]
fn lists_the_placed_objects_of_a_mission() {
    use mshgltf::mission::ir::{Clan, Mission, PlacedObject};
    use mshgltf::mission::tma;
    let obj = |kind: u32, path: &str, clan: i32, x: f32| PlacedObject {
        kind,
        marker: tma::MARKER,
        path: path.as_bytes().to_vec(),
        clan,
        logical_id: if kind <= 1 { 5 } else { -1 },
        position: [x, 2.0, 3.0],
        scale: [1.0; 3],
        host: -1,
        vertex: -1,
        property_word: 1,
        ..Default::default()
    };
    let m = Mission {
        format: 1,
        clan_version: 6,
        object_version: 10,
        lode_word: 1,
        clans: vec![Clan {
            name: b"Player".to_vec(),
            raw_id: -1,
            kind: 1,
            ..Default::default()
        }],
        objects: vec![
            obj(0, "UNITS\\BUILDS\\x.dat", 0, 10.0),
            obj(3, "s_rock_01", -1, 20.5),
        ],
        map_path: b"DATA\\MAPS\\m01\\land".to_vec(),
        ..Default::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("data.tma");
    std::fs::write(&p, tma::write(&m)).unwrap();
    let (code, stdout) = list(&p);
    assert_eq!(code, Some(0));
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["kind"], "mission");
    assert_eq!(v["map_path"], "DATA\\MAPS\\m01\\land");
    assert_eq!(
        v["objects"],
        serde_json::json!([
            {"index": 0, "kind": 0, "kind_name": "building", "path": "UNITS\\BUILDS\\x.dat", "clan": 0,
             "clan_name": "Player", "logical_id": 5, "position": [10.0, 2.0, 3.0]},
            {"index": 1, "kind": 3, "kind_name": "rock", "path": "s_rock_01", "clan": -1,
             "clan_name": null, "logical_id": -1, "position": [20.5, 2.0, 3.0]}
        ])
    );
}
