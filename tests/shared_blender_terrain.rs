//! A map through the Blender add-on (issue 17): File > Import of Land.msh
//! and of the map folder, and the node tree of every terrain material
//! (microtexture × 2, second material mixed by the COLOR_0 alpha, water
//! marked); and a map's edit as docs/modding.md "Edit a map" tells it:
//! File > Export > Parkan model (Edit of the imported model) gives the map
//! back byte for byte, a vertex moved in Blender is written, and a ground
//! retextured in Blender is a warning naming the material (a map material
//! is a Land1.wea row naming shared library entries), as are a terrain
//! object moved as a whole and a mesh added to the map, in Blender 3.4.1
//! and in bpy 5.x. Needs `../shared` and Blender.

mod common;

use mshgltf::terrain;

use std::path::Path;

#[test]
#[ignore = "needs ../shared and Blender: cargo test -- --include-ignored"]
fn addon_imports_a_map_with_the_game_node_tree() {
    let Some((corpus, blender)) = common::corpus_and_blender() else {
        return;
    };
    node_tree(&corpus, &blender, None);
}

/// The same in Blender 5.x (PyPI `bpy`, [`common::bpy_python`]); skips
/// (passing) without it.
#[test]
#[ignore = "needs ../shared and PyPI bpy (../shared/tools/blender-inspect --bpy): cargo test -- --include-ignored"]
fn bpy_5_imports_a_map_with_the_game_node_tree() {
    let (Some((corpus, blender)), Some(py)) = (
        common::corpus_and_blender(),
        common::bpy_python(common::NEWEST_BPY),
    ) else {
        println!("SKIP: no ../shared, Blender or PyPI bpy");
        return;
    };
    node_tree(&corpus, &blender, Some(&py));
}

fn node_tree(corpus: &Path, blender: &Path, bpy: Option<&Path>) {
    let tmp = tempfile::tempdir().unwrap();
    let zip = tmp.path().join("io_scene_parkan.zip");
    common::package_addon(&zip);
    let m = common::manifest(corpus);
    let t = &m["terrains"][0];
    let map = corpus
        .join(t["dir"].as_str().unwrap())
        .canonicalize()
        .unwrap();
    let png = tmp.path().join("map.png");
    let r: serde_json::Value = common::blender_report(
        common::blender_script(blender, bpy, "terrain_test.py", tmp.path())
            .arg("--")
            .arg(&zip)
            .arg(&map)
            .arg("--render")
            .arg(&png),
        "TERRAIN_TEST",
    );
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
#[ignore = "needs ../shared and Blender: cargo test -- --include-ignored"]
fn a_map_round_trip_and_a_vertex_move_through_the_addon() {
    let Some((corpus, blender)) = common::corpus_and_blender() else {
        return;
    };
    round_trip(&corpus, &blender, None);
}

/// The same in Blender 5.x (PyPI `bpy`, [`common::bpy_python`]); skips
/// (passing) without it.
#[test]
#[ignore = "needs ../shared and PyPI bpy (../shared/tools/blender-inspect --bpy): cargo test -- --include-ignored"]
fn a_map_round_trip_and_a_vertex_move_through_the_addon_in_bpy_5() {
    let (Some((corpus, blender)), Some(py)) = (
        common::corpus_and_blender(),
        common::bpy_python(common::NEWEST_BPY),
    ) else {
        println!("SKIP: no ../shared, Blender or PyPI bpy");
        return;
    };
    round_trip(&corpus, &blender, Some(&py));
}

/// The same in each Blender of the matrix (PyPI `bpy` 4.2 LTS, 4.5 LTS and
/// 5.0: [`common::matrix_bpys`]; README "Tested").
#[test]
#[ignore = "needs ../shared, Blender and the matrix's PyPI bpy (../shared/tools/blender-inspect --bpy=VERSION): cargo test -- --include-ignored"]
fn a_map_round_trip_and_a_vertex_move_through_the_addon_in_each_matrix_bpy() {
    let Some((corpus, blender)) = common::corpus_and_blender() else {
        return;
    };
    common::for_each_matrix_bpy(|version, py| {
        println!("bpy {version}");
        round_trip(&corpus, &blender, Some(py));
    });
}

fn round_trip(corpus: &Path, blender: &Path, bpy: Option<&Path>) {
    let tmp = tempfile::tempdir().unwrap();
    let zip = tmp.path().join("io_scene_parkan.zip");
    common::package_addon(&zip);
    let m = common::manifest(corpus);
    for (k, t) in m["terrains"].as_array().unwrap().iter().enumerate() {
        let msh = corpus.join(t["dir"].as_str().unwrap()).join("Land.msh");
        let work = tmp.path().join(format!("work{k}"));
        let (r, stdout) = common::blender_output(
            common::blender_script(blender, bpy, "terrain_roundtrip.py", tmp.path())
                .arg("--")
                .arg(&zip)
                .arg(&msh)
                .arg(&work),
            "TERRAIN_ROUNDTRIP",
        );
        assert_eq!(r["errors"], serde_json::json!([]), "{r:#}");
        let base = std::fs::read(&msh).unwrap();
        assert_eq!(
            r["exports"]["unedited.msh"],
            serde_json::json!(["FINISHED"]),
            "{r:#}"
        );
        assert!(
            std::fs::read(work.join("unedited.msh")).unwrap() == base,
            "{}: the add-on's unedited round trip differs",
            t["map"]
        );
        // Blender gives the materials back as exported: no edit to warn of
        // (before the retexture).
        let before = &stdout[..stdout.find("retextured.msh").unwrap_or(stdout.len())];
        assert!(
            !before.contains("not written"),
            "{}: a dropped edit reported for an unedited map:\n{stdout}",
            t["map"]
        );
        check_moved(&base, &work.join("moved.msh"), &r["moved"]);
        check_retextured(&work, &r, &stdout);
        check_scene_edits(&work, &r, &stdout);
    }
}

/// A terrain object moved as a whole, and a mesh added to the map's
/// collection, are not written (each file is the retextured one, byte for
/// byte) and each is a warning naming the object and why.
fn check_scene_edits(work: &Path, r: &serde_json::Value, stdout: &str) {
    let retextured = std::fs::read(work.join("retextured.msh")).unwrap();
    for (file, key, why) in [
        (
            "moved_whole.msh",
            "moved",
            "moved, turned or scaled as a whole",
        ),
        ("added.msh", "added", "not a terrain node"),
    ] {
        assert_eq!(r["exports"][file], serde_json::json!(["FINISHED"]), "{r:#}");
        assert!(
            std::fs::read(work.join(file)).unwrap() == retextured,
            "{file}: a scene edit reached Land.msh"
        );
        let name = r["scene_edits"][key].as_str().unwrap();
        let line = stdout
            .lines()
            .find(|l| l.starts_with("Warning: ") && l.contains(name) && l.contains(why))
            .unwrap_or_else(|| panic!("{file}: no warning naming {name} ({why}):\n{stdout}"));
        println!("{file}: {line}");
    }
}

/// A ground retextured in Blender is not written (the file is the earlier
/// move's, byte for byte) and the operator reports a warning naming the
/// material and why.
fn check_retextured(work: &Path, r: &serde_json::Value, stdout: &str) {
    assert_eq!(
        r["exports"]["retextured.msh"],
        serde_json::json!(["FINISHED"]),
        "{r:#}"
    );
    assert!(
        std::fs::read(work.join("retextured.msh")).unwrap()
            == std::fs::read(work.join("moved.msh")).unwrap(),
        "a map retexture reached Land.msh"
    );
    let mat = r["retextured"]["material"].as_str().unwrap();
    let line = stdout
        .lines()
        .find(|l| l.starts_with("Warning: ") && l.contains(mat) && l.contains("not written"))
        .unwrap_or_else(|| panic!("no warning naming {mat}:\n{stdout}"));
    println!("retextured: {line}");
}

/// The vertex moved +0.5 along Blender z in `moved` (every copy at its
/// position) is +0.5 on the game's height axis in the written map, within
/// the map's f32 precision (1e-4); every other vertex is unchanged.
fn check_moved(base: &[u8], moved: &Path, r: &serde_json::Value) {
    let (a, b) = (
        terrain::read::decode(base).unwrap(),
        terrain::read::decode(&std::fs::read(moved).unwrap()).unwrap(),
    );
    assert_eq!(a.positions.len(), b.positions.len());
    let changed: Vec<usize> = (0..a.positions.len())
        .filter(|&i| a.positions[i] != b.positions[i])
        .collect();
    assert!(!changed.is_empty(), "moved vertex not written: {r}");
    for &i in &changed {
        let (p, q) = (a.positions[i], b.positions[i]);
        let d: Vec<f32> = (0..3).map(|c| q[c] - p[c]).collect();
        let up = d.iter().position(|x| x.abs() > 1e-4).unwrap();
        assert!((d[up] - 0.5).abs() < 1e-4, "vertex {i}: {p:?} -> {q:?}");
        assert!(
            d.iter().enumerate().all(|(c, x)| c == up || x.abs() < 1e-4),
            "vertex {i} moved off the height axis: {p:?} -> {q:?}"
        );
    }
    println!(
        "moved: {} map vertices (+0.5 height) from {} Blender vertex copies",
        changed.len(),
        r["copies"]
    );
}
