//! A map material recoloured or retextured in the glTF is never written by
//! `gltf2msh --base Land.msh` (a map's materials are Land1.wea rows naming
//! shared library entries): the run warns, naming the material and what
//! changed, and does not call the result "unchanged" (README "Nothing is
//! ever lost, nothing unsaid"). Runs without `../shared` on a map built by
//! `tests/land`.

use std::path::Path;
use std::process::Command;

use land::{tiny_land, write_map};

mod common;
mod land;

/// Exports the map with msh2gltf; returns the GLB's JSON and BIN chunks.
fn export(msh: &Path, glb: &Path) -> (serde_json::Value, Vec<u8>) {
    let o = Command::new(env!("CARGO_BIN_EXE_msh2gltf"))
        .arg(msh)
        .arg(glb)
        .arg("-q")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let b = std::fs::read(glb).unwrap();
    let jl = u32::from_le_bytes(b[12..16].try_into().unwrap()) as usize;
    let json = serde_json::from_slice(&b[20..20 + jl]).unwrap();
    (json, b[20 + jl + 8..].to_vec())
}

/// `gltf2msh GLB --base MSH -o OUT`: (exit code, stderr).
fn back(glb: &Path, msh: &Path, out: &Path) -> (i32, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_gltf2msh"))
        .arg(glb)
        .arg("--base")
        .arg(msh)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap();
    (
        o.status.code().unwrap(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A two-class map written by `tests/land` under `root/MAPS/m01`, its
/// bytes, and two GLB paths beside it (`a.glb` for the export, `b.glb`
/// for the edit).
struct Map {
    msh: std::path::PathBuf,
    base: Vec<u8>,
    a: std::path::PathBuf,
    b: std::path::PathBuf,
}

fn map(root: &Path) -> Map {
    let dir = root.join("MAPS/m01");
    std::fs::create_dir_all(&dir).unwrap();
    let msh = write_map(&dir, &tiny_land(2));
    Map {
        base: std::fs::read(&msh).unwrap(),
        msh,
        a: root.join("a.glb"),
        b: root.join("b.glb"),
    }
}

#[test]
fn a_recoloured_map_material_is_a_warning_never_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let Map { msh, base, a, b } = map(tmp.path());
    let (mut json, bin) = export(&msh, &a);
    let m0 = &json["materials"][0];
    assert_eq!(
        m0["extras"]["msh"]["exported"]["alpha_mode"], "OPAQUE",
        "{m0}"
    );
    let name = m0["name"].as_str().unwrap().to_string();

    // Unedited: unchanged, no warning.
    let (code, err) = back(&a, &msh, &tmp.path().join("same.msh"));
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("unchanged") && !err.contains("warning"),
        "{err}"
    );

    // Recoloured: the same bytes, a warning naming the material and change.
    json["materials"][0]["pbrMetallicRoughness"]["baseColorFactor"] =
        serde_json::json!([1.0, 0.0, 0.0, 1.0]);
    std::fs::write(&b, common::glb(&json, &bin)).unwrap();
    let out = tmp.path().join("red.msh");
    let (code, err) = back(&b, &msh, &out);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(&out).unwrap(), base);
    let w = err
        .lines()
        .find(|l| l.starts_with("gltf2msh: warning: material 0"))
        .unwrap_or_else(|| panic!("no material warning: {err}"));
    assert!(
        w.contains(&format!("{name:?}")) && w.contains("colour") && w.contains("not written"),
        "{w}"
    );
    assert!(!err.contains("unchanged"), "{err}");
    assert!(
        err.contains("1 material or scene edits not written"),
        "{err}"
    );
}

/// Scene edits a Land.msh cannot hold (issue 26 "nothing unsaid"): a mesh
/// node that is not a terrain node, and the terrain node moved as a whole
/// (its vertices are read as stored), are each a warning naming the node;
/// the bytes are the base's and the run is never called "unchanged".
#[test]
fn an_added_mesh_or_a_moved_terrain_node_is_a_warning_never_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let Map { msh, base, a, b } = map(tmp.path());
    let (json, bin) = export(&msh, &a);
    let terrain = json["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .position(|n| n["extras"]["lod"].is_u64() && n.get("mesh").is_some())
        .expect("a terrain node");
    let tname = json["nodes"][terrain]["name"].as_str().unwrap().to_owned();
    for (case, want) in [
        ("added", "\"Added\": a mesh that is not a terrain node"),
        ("moved", "(LOD0): moved, turned or scaled as a whole"),
    ] {
        let mut j = json.clone();
        if case == "added" {
            let nodes = j["nodes"].as_array_mut().unwrap();
            nodes.push(serde_json::json!({"name": "Added", "mesh": 0}));
            let i = nodes.len() - 1;
            j["scenes"][0]["nodes"]
                .as_array_mut()
                .unwrap()
                .push(i.into());
        } else {
            j["nodes"][terrain]["translation"] = serde_json::json!([0.0, 5.0, 0.0]);
        }
        std::fs::write(&b, common::glb(&j, &bin)).unwrap();
        let out = tmp.path().join(format!("{case}.msh"));
        let (code, err) = back(&b, &msh, &out);
        assert_eq!(code, 0, "{case}: {err}");
        assert_eq!(std::fs::read(&out).unwrap(), base, "{case}");
        let w: Vec<&str> = err
            .lines()
            .filter(|l| l.contains("warning") && l.contains(want))
            .collect();
        assert_eq!(w.len(), 1, "{case}: {err}");
        if case == "moved" {
            assert!(w[0].contains(&tname), "{}", w[0]);
        }
        assert!(!err.contains("unchanged"), "{case}: {err}");
        assert!(
            err.contains("1 material or scene edits not written"),
            "{case}: {err}"
        );
    }
}
