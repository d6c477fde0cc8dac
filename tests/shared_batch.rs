//! Batch conversion of the whole shared corpus (`msh2gltf ../shared/corpus OUT`):
//! every valid model converts, every skip has a reason, every broken model is
//! a failure entry naming the manifest's rule, and the rest still convert.
//! Skips when `../shared/corpus` is absent.

use std::collections::BTreeMap;
use std::process::Command;

mod common;
use common::corpus;

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn whole_corpus_batch_report() {
    let Some(root) = corpus() else { return };
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("manifest.json")).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let out = dir.path().join("out");
    let st = Command::new(env!("CARGO_BIN_EXE_msh2gltf"))
        .arg(&root)
        .arg(&out)
        .args(["-q", "--jobs", "2", "--report"])
        .arg(&report)
        .output()
        .unwrap();
    // bad/ holds broken models: 1 = some failed, all others converted.
    assert_eq!(st.status.code(), Some(1));
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let rows = r["models"].as_array().unwrap();
    let rel = |s: &str| s.split("/shared/corpus/").nth(1).unwrap_or(s).to_string();

    // Every valid manifest model converted, to a file that exists.
    let converted: BTreeMap<String, &serde_json::Value> = rows
        .iter()
        .filter(|m| m["status"] == "converted")
        .map(|m| (rel(m["source"].as_str().unwrap()), m))
        .collect();
    let mut expected = Vec::new();
    for m in manifest["models"]
        .as_array()
        .unwrap()
        .iter()
        .chain(manifest["legacy_models"].as_array().unwrap())
    {
        let file = m["file"].as_str().unwrap();
        let key = match m["entry"].as_str() {
            Some(e) if file.ends_with(".rlb") || file.ends_with(".lib") => format!("{file}:{e}"),
            _ => file.to_string(),
        };
        expected.push(key);
    }
    let want = manifest["summary"]["models"]
        .as_u64()
        .expect("summary.models") as usize;
    assert_eq!(expected.len(), want, "manifest models + legacy_models");
    for k in &expected {
        let row = converted
            .get(k)
            .unwrap_or_else(|| panic!("{k} not converted"));
        let o = row["output"].as_str().unwrap();
        assert!(std::path::Path::new(o).is_file(), "{o}");
        assert!(o.starts_with(out.to_str().unwrap()), "{o} outside OUT");
    }

    // Skips carry a kind and a reason; terrain, RsLi and the registry among them.
    let skipped: Vec<&serde_json::Value> =
        rows.iter().filter(|m| m["status"] == "skipped").collect();
    for s in &skipped {
        assert!(s["reason"].as_str().is_some_and(|r| !r.is_empty()), "{s}");
    }
    let kinds: BTreeMap<String, String> = skipped
        .iter()
        .map(|s| {
            (
                rel(s["source"].as_str().unwrap()),
                s["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // Maps are never treated as models: a map's Land.msh is skipped as
    // terrain or converted by the terrain pipeline, never a model failure.
    for t in manifest["terrains"].as_array().expect("terrains[]") {
        let dir = t["dir"].as_str().expect("terrains[].dir");
        let land = format!("{dir}/Land.msh");
        let row = rows
            .iter()
            .find(|m| rel(m["source"].as_str().unwrap()) == land)
            .unwrap_or_else(|| panic!("{land} not in the report"));
        let skipped_as_terrain = row["status"] == "skipped" && row["kind"] == "terrain";
        assert!(
            skipped_as_terrain || row["status"] == "converted",
            "{land}: {row}"
        );
    }
    assert_eq!(kinds["gamefont.rlb"], "rsli");
    assert_eq!(kinds["objects.rlb"], "registry");

    // Broken models fail with the manifest's rule; the warn files convert.
    let failed: BTreeMap<String, &serde_json::Value> = rows
        .iter()
        .filter(|m| m["status"] == "failed")
        .map(|m| (rel(m["source"].as_str().unwrap()), m))
        .collect();
    for b in manifest["bad"].as_array().unwrap() {
        let file = b["file"].as_str().unwrap();
        // Terrain files (`kind: "terrain"`) are checked by the terrain tests.
        if !file.ends_with(".msh") || b["kind"] == "terrain" {
            continue;
        }
        match b["strict"].as_str().unwrap() {
            "reject" => {
                let row = failed
                    .get(file)
                    .unwrap_or_else(|| panic!("{file} did not fail"));
                assert_eq!(row["rule"], b["check"], "{file}");
                assert!(
                    row["errors"][0].as_str().unwrap().contains(file),
                    "{file}: error does not name the file"
                );
            }
            _ => {
                let row = converted
                    .get(file)
                    .unwrap_or_else(|| panic!("{file} not converted"));
                assert!(!row["warnings"].as_array().unwrap().is_empty(), "{file}");
            }
        }
    }
    // One broken model in an archive costs only that model.
    for e in ["bad_127.msh", "bad_897.msh", "bad_398.msh"] {
        assert!(
            converted.contains_key(&format!("bad/archive_one_broken.rlb:{e}")),
            "{e}"
        );
    }
    assert_eq!(
        failed["bad/archive_one_broken.rlb:broken_01.msh"]["rule"],
        "msh.index_range"
    );
    for f in [
        "bad/archive_nested_not_nres.rlb:junk_01.msh",
        "bad/archive_nested_truncated.rlb:bad_127.msh",
        "bad/archive_nested_count_huge.rlb:bad_897.msh",
    ] {
        assert_eq!(failed[f]["rule"], "msh.nested_container", "{f}");
    }
    assert_eq!(
        failed["bad/archive_bad_wear.rlb:bad_127.msh"]["rule"],
        "wear.lightmap_separator"
    );
    assert_eq!(r["converted"].as_u64().unwrap() as usize, converted.len());
}

/// `--tolerant` converts every bad model the manifest marks
/// `tolerant_may_convert`, and the warning names the broken rule.
#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn tolerant_mode_converts_the_tolerable_bad_models() {
    let Some(root) = corpus() else { return };
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("manifest.json")).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut n = 0;
    for b in manifest["bad"].as_array().unwrap() {
        let file = b["file"].as_str().unwrap();
        if !file.ends_with(".msh") || b["kind"] == "terrain" {
            continue;
        }
        if b["tolerant_may_convert"] != true {
            continue;
        }
        let out = dir.path().join(format!("{n}.glb"));
        let o = Command::new(env!("CARGO_BIN_EXE_msh2gltf"))
            .arg(root.join(file))
            .arg(&out)
            .arg("--tolerant")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{file}: {err}");
        assert!(out.is_file(), "{file}");
        let rule = b["check"].as_str().unwrap();
        assert!(
            err.contains(rule),
            "{file}: no warning naming {rule}: {err}"
        );
        n += 1;
    }
    assert!(n > 0, "no tolerable bad model in the manifest");
}
