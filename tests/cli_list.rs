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
