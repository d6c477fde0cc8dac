//! A map through the Blender add-on (issue 17): File > Import of Land.msh
//! and of the map folder, and the node tree of every terrain material
//! (microtexture × 2, second material mixed by the COLOR_0 alpha, water
//! marked). Needs `../shared` and Blender.

mod common;

use std::path::Path;
use std::process::Command;

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn addon_imports_a_map_with_the_game_node_tree() {
    let Some((corpus, blender)) = common::corpus_and_blender() else {
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let zip = tmp.path().join("io_scene_parkan.zip");
    common::package_addon(&zip);
    let m = common::manifest(&corpus);
    let t = &m["terrains"][0];
    let map = corpus
        .join(t["dir"].as_str().unwrap())
        .canonicalize()
        .unwrap();
    let png = tmp.path().join("map.png");
    let out = Command::new(&blender)
        .env_remove("PYTHONPATH")
        .env_remove("PYTHONHOME")
        .env("BLENDER_USER_SCRIPTS", tmp.path().join("scripts"))
        .env("BLENDER_USER_CONFIG", tmp.path().join("config"))
        .args(["-b", "--factory-startup", "-noaudio", "--python"])
        .arg(root.join("tests/blender/terrain_test.py"))
        .arg("--")
        .arg(&zip)
        .arg(&map)
        .arg("--render")
        .arg(&png)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find_map(|l| l.find("TERRAIN_TEST {").map(|i| l[i + 13..].to_string()))
        .unwrap_or_else(|| {
            panic!(
                "no report:\n{stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    let r: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(r["errors"], serde_json::json!([]), "{r:#}");
    let mats = r["materials"].as_object().unwrap();
    for name in t["expected_gltf"]["material_names"].as_array().unwrap() {
        let name = name.as_str().unwrap();
        let mat = mats
            .get(name)
            .unwrap_or_else(|| panic!("material {name} not imported: {r:#}"));
        let row = t["land1"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == name.split('+').next().unwrap())
            .unwrap();
        assert_eq!(
            mat["micro_image"].as_str(),
            row["micro"].as_str(),
            "{name}: {mat}"
        );
        if row["micro"] != row["texture"] {
            assert_eq!(mat["x2"], true, "{name}: {mat}");
        }
        let two = name.contains('+');
        assert_eq!(mat["blend_by_alpha"], two, "{name}: {mat}");
        assert_eq!(mat["over_micro"], two, "{name}: {mat}");
        assert_eq!(
            mat["water"],
            name == t["liquid"]["surface_material"].as_str().unwrap(),
            "{name}: {mat}"
        );
    }
    assert!(r["folder_objects"].as_u64().unwrap() > 0, "{r:#}");
    assert!(png.is_file());
    if let Ok(dest) = std::env::var("TERRAIN_PNG") {
        std::fs::copy(&png, dest).unwrap();
    }
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn blender_round_trip_of_an_unedited_map_is_byte_identical() {
    let Some((corpus, blender)) = common::corpus_and_blender() else {
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let m = common::manifest(&corpus);
    for t in m["terrains"].as_array().unwrap() {
        let msh = corpus.join(t["dir"].as_str().unwrap()).join("Land.msh");
        let (a, b, back) = (
            tmp.path().join("a.glb"),
            tmp.path().join("b.glb"),
            tmp.path().join("back.msh"),
        );
        let st = Command::new(env!("CARGO_BIN_EXE_msh2gltf"))
            .arg(&msh)
            .arg(&a)
            .arg("--force")
            .status()
            .unwrap();
        assert!(st.success());
        let out = Command::new(&blender)
            .env_remove("PYTHONPATH")
            .env_remove("PYTHONHOME")
            .args(["-b", "--factory-startup", "-noaudio", "--python"])
            .arg(root.join("tests/blender/terrain_roundtrip.py"))
            .arg("--")
            .arg(&a)
            .arg(&b)
            .output()
            .unwrap();
        assert!(b.is_file(), "{}", String::from_utf8_lossy(&out.stdout));
        let o = Command::new(env!("CARGO_BIN_EXE_gltf2msh"))
            .arg(&b)
            .arg("--base")
            .arg(&msh)
            .arg("-o")
            .arg(&back)
            .arg("--force")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(
            std::fs::read(&back).unwrap() == std::fs::read(&msh).unwrap(),
            "{}: Blender round trip differs",
            t["map"]
        );
    }
}
