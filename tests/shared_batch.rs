//! Batch conversion of the whole shared corpus (`msh2gltf ../shared/corpus OUT`):
//! every valid model converts, every skip has a reason, every broken model is
//! a failure entry naming the manifest's rule, and the rest still convert.
//! Skips when `../shared/corpus` is absent.

use std::collections::BTreeMap;
use std::process::Command;

mod common;
use common::corpus;

/// A report source path relative to the corpus folder.
fn rel(s: &str) -> String {
    s.split("/shared/corpus/").nth(1).unwrap_or(s).to_string()
}

/// The report rows of one status, by corpus-relative source.
fn rows_by_status<'a>(
    rows: &'a [serde_json::Value],
    status: &str,
) -> BTreeMap<String, &'a serde_json::Value> {
    rows.iter()
        .filter(|m| m["status"] == status)
        .map(|m| (rel(m["source"].as_str().unwrap()), m))
        .collect()
}

/// Checks every valid manifest model (models + legacy_models, as many as
/// summary.models) converted to a file inside `out`.
fn check_all_models_converted(
    manifest: &serde_json::Value,
    converted: &BTreeMap<String, &serde_json::Value>,
    out: &std::path::Path,
) {
    // Every valid manifest model converted, to a file that exists.
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
}

/// Checks skips carry a kind and a reason, maps' Land.msh are never model
/// failures, and the RsLi font and the registry are skipped as such.
fn check_skips(manifest: &serde_json::Value, rows: &[serde_json::Value]) {
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
}

/// Checks each broken model of the manifest fails with its rule (naming the
/// file) or, when tolerable, converts with warnings.
fn check_bad_models(
    manifest: &serde_json::Value,
    converted: &BTreeMap<String, &serde_json::Value>,
    failed: &BTreeMap<String, &serde_json::Value>,
) {
    // Broken models fail with the manifest's rule; the warn files convert.
    // Terrain and mission files (a `kind`) are checked by their own tests.
    for b in common::bad_records(manifest, None) {
        let file = b["file"].as_str().unwrap();
        if !file.ends_with(".msh") {
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
}

/// Checks a broken archive entry costs only that entry, and nested or
/// WEAR damage fails with its rule.
fn check_broken_archives(
    converted: &BTreeMap<String, &serde_json::Value>,
    failed: &BTreeMap<String, &serde_json::Value>,
) {
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
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn whole_corpus_batch_report() {
    let Some(root) = corpus() else { return };
    let manifest = common::manifest(&root);
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
    let converted = rows_by_status(rows, "converted");
    check_all_models_converted(&manifest, &converted, &out);
    check_skips(&manifest, rows);
    let failed = rows_by_status(rows, "failed");
    check_bad_models(&manifest, &converted, &failed);
    check_broken_archives(&converted, &failed);
    assert_eq!(r["converted"].as_u64().unwrap() as usize, converted.len());
}

/// `--tolerant` converts every bad model the manifest marks
/// `tolerant_may_convert`, and the warning names the broken rule.
#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn tolerant_mode_converts_the_tolerable_bad_models() {
    let Some(root) = corpus() else { return };
    let manifest = common::manifest(&root);
    let dir = tempfile::tempdir().unwrap();
    let mut n = 0;
    for b in common::bad_records(&manifest, None) {
        let file = b["file"].as_str().unwrap();
        if !file.ends_with(".msh") {
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
