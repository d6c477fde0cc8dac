//! The Blender matrix's round trip (issue 39 item 2, README "Tested"): in
//! each Blender of [`common::MATRIX_BPYS`] (PyPI `bpy` 4.2 LTS, 4.5 LTS,
//! 5.0), a sample of corpus models that covers every convention and
//! feature of the manifest ([`sample`]) is imported through the add-on and
//! exported straight back, unedited, in mode "Edit of the imported model":
//! an archive entry as an archive copy (the whole archive must come back
//! byte for byte), a bare model as a model file. Every model comes back
//! identical, none is refused. The full round trip of every archive model
//! runs in Blender 3.4.1 and the newest `bpy` (`tests/shared_blender_roundtrip.rs`);
//! the other matrix tests are the `*_in_bpy_matrix` tests beside each
//! Blender test (an edit of each kind, a unit, a map, a mission).
//!
//! Skips (passing) without `../shared`, Blender or a matrix `bpy`; with
//! `MSHGLTF_REQUIRE_BLENDERS=1` (`.ci/run`) a missing Blender fails.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

/// The fewest models the sample holds (the rest of the manifest is
/// covered by the full round trip in 3.4.1 and the newest `bpy`).
const MIN_SAMPLE: usize = 30;

/// What one manifest model stands for: its convention and every option of
/// its writer (`options`: name scheme, Res15, normal w, opaque mode, Res9,
/// Res17, WEAR line ends and ids, Res1 attribute 2, UV offset), its
/// quaternion storage and base mode, and whether it is animated,
/// lightmapped, carries clips or control points, and its archive.
fn features(m: &serde_json::Value) -> BTreeSet<String> {
    let mut f = BTreeSet::new();
    for k in ["convention", "quat_storage", "base_mode", "archive"] {
        f.insert(format!("{k}={}", m[k]));
    }
    if let Some(o) = m["options"].as_object() {
        for (k, v) in o {
            f.insert(format!("options.{k}={v}"));
        }
    }
    let flag = |what: &str, on: bool| on.then(|| what.to_string());
    let nonempty = |k: &str| m[k].as_array().is_some_and(|a| !a.is_empty());
    f.extend(flag("animated", m["counts"]["animated"] == true));
    f.extend(flag("lightmap", m["lightmap_model"] == true));
    f.extend(flag("clips", nonempty("clips")));
    f.extend(flag("control_points", nonempty("control_points")));
    f
}

/// The sample: greedily the model that covers the most features not yet
/// covered (ties: the smaller model, then manifest order) until every
/// feature of the manifest is covered, then the smallest models left, one
/// archive after another, up to [`MIN_SAMPLE`]. Each as the script takes
/// it: `ARCHIVE:ENTRY` or `models/NAME.msh`; with the features covered.
fn sample(man: &serde_json::Value) -> (Vec<String>, BTreeSet<String>) {
    let models: Vec<&serde_json::Value> =
        man["models"].as_array().expect("models[]").iter().collect();
    let feats: Vec<BTreeSet<String>> = models.iter().map(|m| features(m)).collect();
    let all: BTreeSet<String> = feats.iter().flatten().cloned().collect();
    let bytes = |i: usize| models[i]["bytes"].as_u64().unwrap_or(u64::MAX);
    let mut covered = BTreeSet::new();
    let mut picked: Vec<usize> = Vec::new();
    while covered.len() < all.len() {
        let best = (0..models.len())
            .filter(|i| !picked.contains(i))
            .max_by_key(|&i| {
                let gain = feats[i].difference(&covered).count();
                (gain, std::cmp::Reverse(bytes(i)), std::cmp::Reverse(i))
            })
            .expect("a model left");
        covered.extend(feats[best].iter().cloned());
        picked.push(best);
    }
    // A bare model's archive is "" (the manifest's null).
    let archive = |i: usize| models[i]["archive"].as_str().unwrap_or("");
    let archives: BTreeSet<&str> = (0..models.len()).map(archive).collect();
    let mut by_size: Vec<usize> = (0..models.len()).collect();
    by_size.sort_by_key(|&i| (bytes(i), i));
    'pad: while picked.len() < MIN_SAMPLE {
        let before = picked.len();
        for a in &archives {
            if let Some(&i) = by_size
                .iter()
                .find(|&&i| !picked.contains(&i) && archive(i) == *a)
            {
                picked.push(i);
                if picked.len() >= MIN_SAMPLE {
                    break 'pad;
                }
            }
        }
        if picked.len() == before {
            break;
        }
    }
    let keys = picked
        .iter()
        .map(|&i| {
            let m = models[i];
            match m["archive"].as_str() {
                Some(a) => format!("{a}:{}", m["entry"].as_str().expect("entry")),
                None => m["file"].as_str().expect("file").to_string(),
            }
        })
        .collect();
    (keys, all)
}

/// The sample covers every feature of the manifest, holds at least
/// [`MIN_SAMPLE`] models and every archive (no Blender needed).
#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn the_sample_covers_every_convention_of_the_manifest() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let man = common::manifest(&corpus);
    let (keys, all) = sample(&man);
    let models = man["models"].as_array().unwrap();
    let covered: BTreeSet<String> = keys
        .iter()
        .flat_map(|k| {
            let m = models
                .iter()
                .find(|m| match m["archive"].as_str() {
                    Some(a) => format!("{a}:{}", m["entry"].as_str().unwrap()) == *k,
                    None => m["file"] == k.as_str(),
                })
                .unwrap();
            features(m)
        })
        .collect();
    assert_eq!(covered, all);
    assert!(keys.len() >= MIN_SAMPLE, "{keys:?}");
    assert!(all.iter().any(|f| f == "convention=\"seed\""), "{all:?}");
    println!(
        "sample of {} models covering {} features: {keys:?}",
        keys.len(),
        all.len()
    );
}

/// The sample's unedited round trip in every matrix Blender (module docs).
#[test]
#[ignore = "needs ../shared, Blender and PyPI bpy 4.2/4.5/5.0 (../shared/tools/blender-inspect --bpy=VERSION): cargo test -- --include-ignored"]
fn unedited_sample_comes_back_byte_identical_in_every_matrix_bpy() {
    let Some((corpus, blender)) = common::corpus_and_blender() else {
        return;
    };
    let (keys, _) = sample(&common::manifest(&corpus));
    let tmp = tempfile::tempdir().unwrap();
    let zip = tmp.path().join("io_scene_parkan.zip");
    common::package_addon(&zip);
    let list = tmp.path().join("sample.json");
    std::fs::write(&list, serde_json::to_vec(&keys).unwrap()).unwrap();
    common::for_each_matrix_bpy(|version, py| {
        round_trip(&corpus, &blender, py, version, &zip, &list, keys.len());
    });
}

fn round_trip(
    corpus: &Path,
    blender: &Path,
    py: &Path,
    version: &str,
    zip: &Path,
    list: &Path,
    n: usize,
) {
    let tmp = tempfile::tempdir().unwrap();
    let r = common::blender_report(
        common::blender_script(blender, Some(py), "roundtrip_all.py", tmp.path())
            .arg("--")
            .arg(zip)
            .arg(corpus.canonicalize().unwrap())
            .arg(tmp.path().join("work"))
            .arg("--models")
            .arg(list),
        "ROUNDTRIP_ALL",
    );
    assert_eq!(r["errors"], serde_json::json!([]), "bpy {version}: {r:#}");
    let models = r["models"].as_object().unwrap();
    assert_eq!(models.len(), n, "bpy {version}: {r:#}");
    let not: Vec<String> = models
        .iter()
        .filter(|(_, v)| *v != "identical")
        .map(|(k, v)| format!("{k}: {v}"))
        .collect();
    println!(
        "Blender {} (bpy {version}): {} of {} sampled models byte-identical, {} refused, in {} s",
        r["blender"],
        models.len() - not.len(),
        models.len(),
        not.iter().filter(|v| v.contains("error")).count(),
        r["seconds"]
    );
    assert!(
        not.is_empty(),
        "bpy {version}: {} not identical:\n{}",
        not.len(),
        not.join("\n")
    );
}
