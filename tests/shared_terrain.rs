//! Terrain maps of the shared corpus (issue 17): codec, validation, export
//! and the way back, against `manifest.json` → `terrains` and the `bad`
//! records with `kind: "terrain"`.

mod common;

use mshgltf::terrain::{self, map, read, validate, write, Mode};

fn terrains(root: &std::path::Path) -> Vec<serde_json::Value> {
    common::manifest(root)["terrains"]
        .as_array()
        .expect("terrains")
        .clone()
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn maps_decode_validate_and_encode_byte_identical() {
    let Some(root) = common::corpus() else { return };
    for t in terrains(&root) {
        let dir = root.join(t["dir"].as_str().unwrap());
        let bytes = std::fs::read(dir.join("Land.msh")).unwrap();
        let land = read::decode(&bytes).unwrap();
        let f = validate::validate(&land, Mode::Strict).unwrap();
        assert!(f.warnings.is_empty(), "{}: {:?}", t["map"], f.warnings);
        let c = &t["counts"];
        assert_eq!(land.positions.len() as u64, c["vertices"].as_u64().unwrap());
        assert_eq!(land.faces.len() as u64, c["faces"].as_u64().unwrap());
        assert_eq!(
            land.lod_range(0).len() as u64,
            c["faces_lod0"].as_u64().unwrap()
        );
        assert_eq!(
            write::encode(&land).unwrap(),
            bytes,
            "{}: Land.msh round trip",
            t["map"]
        );
        let mbytes = std::fs::read(dir.join("Land.map")).unwrap();
        let m = map::decode(&mbytes).unwrap();
        assert_eq!(
            m.areals.len() as u64,
            t["land_map"]["areals"].as_u64().unwrap()
        );
        assert!(map::check(&m).is_empty(), "{:?}", map::check(&m));
        assert_eq!(
            map::encode(&m).unwrap(),
            mbytes,
            "{}: Land.map round trip",
            t["map"]
        );
        let _ = terrain::STREAM_ORDER;
    }
}

fn bad_terrain(root: &std::path::Path) -> Vec<serde_json::Value> {
    common::manifest(root)["bad"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["kind"] == "terrain")
        .cloned()
        .collect()
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn bad_terrain_files_fail_strict_with_the_manifest_rule() {
    let Some(root) = common::corpus() else { return };
    let bad = bad_terrain(&root);
    assert!(!bad.is_empty());
    for b in bad {
        let bytes = std::fs::read(root.join(b["file"].as_str().unwrap())).unwrap();
        let want = b["check"].as_str().unwrap();
        let got =
            read::decode(&bytes).and_then(|l| validate::validate(&l, Mode::Strict).map(|_| ()));
        let e = got.expect_err(b["file"].as_str().unwrap());
        assert_eq!(e.rule, want, "{}: {e}", b["file"]);
        assert!(e.stream.is_some(), "{}: names no stream: {e}", b["file"]);
        let tolerant =
            read::decode(&bytes).and_then(|l| validate::validate(&l, Mode::Tolerant).map(|_| ()));
        assert_eq!(
            tolerant.is_ok(),
            b["tolerant_may_convert"].as_bool().unwrap(),
            "{}: {tolerant:?}",
            b["file"]
        );
    }
}
