//! Issue 25: a hosted unit's hall-way vertex is checked against its
//! building's Res17 vertex count (mission-notes §9 error 5, §5.5). The
//! corpus mission with the hosted unit, its vertex set past the graph:
//! strict `msh2gltf` refuses it with `mission.host_vertex` naming the
//! object and the index (exit 1, nothing written); `--tolerant` warns with
//! the same rule and places the unit at its building's origin.

mod common;

use mshgltf::mission::{tma, Mode};
use serde_json::Value;

fn glb_json(b: &[u8]) -> Value {
    let n = u32::from_le_bytes(b[12..16].try_into().unwrap()) as usize;
    serde_json::from_slice(&b[20..20 + n]).unwrap()
}

/// The translation of the node whose `extras.parkan_object.index` is `i`.
fn placed_at(doc: &Value, i: usize) -> Vec<f64> {
    let n = doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["extras"]["parkan_object"]["index"].as_u64() == Some(i as u64))
        .unwrap_or_else(|| panic!("no node of object {i}"));
    (0..3)
        .map(|k| n["translation"][k].as_f64().unwrap_or(0.0))
        .collect()
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn a_hall_way_vertex_past_the_building_is_refused_or_warned() {
    let Some(root) = common::corpus() else { return };
    let man = common::manifest(&root);
    let mut hosted = 0;
    for want in man["missions"].as_array().unwrap() {
        let rel = want["files"]["data.tma"]["path"].as_str().unwrap();
        let (mut m, _) = tma::read(&std::fs::read(root.join(rel)).unwrap(), Mode::Strict).unwrap();
        let Some(u) = m.objects.iter().position(|o| o.kind == 1 && o.host != -1) else {
            continue;
        };
        hosted += 1;
        let host = m.objects[u].host;
        let b = m
            .objects
            .iter()
            .position(|o| o.kind == 0 && o.logical_id == host)
            .unwrap();
        m.objects[u].vertex = 100_000;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("Hosted.01");
        std::fs::create_dir_all(&dir).unwrap();
        let tma_path = dir.join("data.tma");
        std::fs::write(&tma_path, tma::write(&m)).unwrap();
        let out = tmp.path().join("strict.glb");
        let o = common::msh2gltf()
            .arg(&tma_path)
            .arg(&out)
            .arg("--game-dir")
            .arg(&root)
            .output()
            .unwrap();
        let err = common::stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{rel}: {err}");
        for want in [
            "mission.host_vertex",
            &format!("object {u} ("),
            "vertex 100000",
        ] {
            assert!(err.contains(want), "{rel}: {want:?} missing from {err}");
        }
        assert!(!out.exists(), "{rel}: nothing is written");
        let out = tmp.path().join("tolerant.glb");
        let o = common::msh2gltf()
            .arg(&tma_path)
            .arg(&out)
            .arg("--game-dir")
            .arg(&root)
            .arg("--tolerant")
            .output()
            .unwrap();
        let err = common::stderr(&o);
        assert_eq!(o.status.code(), Some(0), "{rel}: {err}");
        assert!(
            err.contains("mission.host_vertex") && err.contains("building's origin"),
            "{rel}: {err}"
        );
        let doc = glb_json(&std::fs::read(&out).unwrap());
        let (got, at) = (placed_at(&doc, u), placed_at(&doc, b));
        for k in 0..3 {
            assert!(
                (got[k] - at[k]).abs() <= 1e-5,
                "{rel}: {got:?} vs building {at:?}"
            );
        }
    }
    let want = man["summary"]["mission_hosted_units"].as_u64().unwrap();
    assert!(
        hosted > 0 || want == 0,
        "the corpus has {want} hosted units"
    );
}
