//! File › Import › Parkan unit (.dat) in a real, headless Blender
//! (`tests/blender/unit_test.py`): every corpus unit imports through the
//! add-on with one NLA-track action set per clip of the assembled glTF
//! (the timeline actions active) and every control point as an arrow
//! empty; the first unit is rendered. Skips without Blender or ../shared.

use std::path::{Path, PathBuf};
use std::process::Command;

use mshgltf::convert::ConvertOptions;
use mshgltf::unit::assemble;
use serde_json::Value;

mod common;

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn blender_imports_units_with_clip_actions_and_control_points() {
    let Some((root, blender)) = common::corpus_and_blender() else {
        return;
    };
    let m = common::manifest(&root);
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
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
        let mut cmd = Command::new(&blender);
        cmd.env_remove("PYTHONPATH")
            .env_remove("PYTHONHOME")
            .env("BLENDER_USER_SCRIPTS", tmp.path().join("scripts"))
            .env("BLENDER_USER_CONFIG", tmp.path().join("config"))
            .args(["-b", "--factory-startup", "-noaudio", "--python"])
            .arg(repo.join("tests/blender/unit_test.py"))
            .arg("--")
            .arg(&zip)
            .arg(&dat);
        if k == 0 {
            cmd.arg("--render").arg(&png);
        }
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let line = stdout
            .lines()
            .find_map(|l| {
                l.find("UNIT_TEST {")
                    .map(|i| l[i + "UNIT_TEST ".len()..].to_string())
            })
            .unwrap_or_else(|| {
                panic!(
                    "no report:\n{stdout}\n{}",
                    String::from_utf8_lossy(&out.stderr)
                )
            });
        let r: Value = serde_json::from_str(&line).unwrap();
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
