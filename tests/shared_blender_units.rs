//! File › Import › Parkan unit (.dat) in a real, headless Blender
//! (`tests/blender/unit_test.py`): every corpus unit imports through the
//! add-on with one NLA-track action set per clip of the assembled glTF
//! (the timeline actions active) and every control point as an arrow
//! empty; the first unit is rendered. Skips without Blender or ../shared.

use std::path::{Path, PathBuf};

use mshgltf::convert::ConvertOptions;
use mshgltf::unit::assemble;
use serde_json::Value;

mod common;

#[test]
#[ignore = "needs ../shared and Blender: cargo test -- --include-ignored"]
fn blender_imports_units_with_clip_actions_and_control_points() {
    let Some((corpus, blender)) = common::corpus_and_blender() else {
        return;
    };
    import_units(&corpus, &blender, None);
}

/// The same in Blender 5.x (PyPI `bpy`, [`common::bpy_python`]); skips
/// (passing) without it.
#[test]
#[ignore = "needs ../shared and PyPI bpy (../shared/tools/blender-inspect --bpy): cargo test -- --include-ignored"]
fn bpy_5_imports_units_with_clip_actions_and_control_points() {
    let (Some((corpus, blender)), Some(py)) = (
        common::corpus_and_blender(),
        common::bpy_python(common::NEWEST_BPY),
    ) else {
        println!("SKIP: no ../shared, Blender or PyPI bpy");
        return;
    };
    import_units(&corpus, &blender, Some(&py));
}

/// The same in each Blender of the matrix (PyPI `bpy` 4.2 LTS, 4.5 LTS and
/// 5.0: [`common::matrix_bpys`]; README "Tested").
#[test]
#[ignore = "needs ../shared, Blender and the matrix's PyPI bpy (../shared/tools/blender-inspect --bpy=VERSION): cargo test -- --include-ignored"]
fn each_matrix_bpy_imports_units_with_clip_actions_and_control_points() {
    let Some((corpus, blender)) = common::corpus_and_blender() else {
        return;
    };
    common::for_each_matrix_bpy(|version, py| {
        println!("bpy {version}");
        import_units(&corpus, &blender, Some(py));
    });
}

fn import_units(root: &Path, blender: &Path, bpy: Option<&Path>) {
    let m = common::manifest(root);
    let tmp = tempfile::tempdir().unwrap();
    let zip = tmp.path().join("io_scene_parkan.zip");
    common::package_addon(&zip);
    for (k, mu) in m["units"].as_array().unwrap().iter().enumerate() {
        let dat: PathBuf = root
            .join(mu["path"].as_str().unwrap())
            .canonicalize()
            .unwrap();
        let c = assemble::convert_unit(
            &dat,
            &std::fs::read(&dat).unwrap(),
            None,
            &ConvertOptions::default(),
        )
        .unwrap();
        let j = serde_json::to_value(&c.exported.root).unwrap();
        let mut clips: Vec<String> = j["animations"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| !a["extras"]["msh"]["clip"].is_null())
            .map(|a| a["name"].as_str().unwrap().to_string())
            .collect();
        clips.sort();
        let points = j["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| !n["extras"]["msh"]["control_point"].is_null())
            .count();
        let png = tmp.path().join(format!("unit{k}.png"));
        let mut cmd = common::blender_script(blender, bpy, "unit_test.py", tmp.path());
        cmd.arg("--").arg(&zip).arg(&dat);
        if k == 0 {
            cmd.arg("--render").arg(&png);
        }
        let r = common::blender_report(&mut cmd, "UNIT_TEST");
        let rel = mu["path"].as_str().unwrap();
        assert_eq!(r["errors"], serde_json::json!([]), "{rel}: {r}");
        assert_eq!(r["result"], serde_json::json!(["FINISHED"]), "{rel}");
        let tracks: Vec<String> = r["clip_tracks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_string())
            .collect();
        assert_eq!(tracks, clips, "{rel}: one NLA track per clip");
        assert_eq!(
            r["control_points"].as_array().unwrap().len(),
            points,
            "{rel}: control-point empties"
        );
        assert_eq!(
            r["parts"].as_array().unwrap().len(),
            mu["parts"].as_array().unwrap().len(),
            "{rel}: part collections"
        );
        if k == 0 {
            assert_eq!(r["render"], Value::Bool(true), "{rel}: render");
            println!("rendered {}", png.display());
        }
        println!(
            "{rel}: {} clips, {points} control points in Blender",
            clips.len()
        );
    }
}
