//! The engine sampler against the shared corpus manifest (msh-animation §3,
//! §4.4, §11): for every model of `models[]` and every `transforms[]` record,
//! `Sampler::world_matrices(t)` equals `world` within the manifest's
//! `suggested_tolerance.matrix_abs`, and the selected key and branch equal
//! `key` / `branch`. Also: the quaternion layout heuristic, the track
//! decomposition and the canonical Res8/Res19 regeneration (§5.4, §8) on
//! every model. Skips (prints a line) when ../shared/corpus is missing.

use std::collections::HashMap;
use std::path::Path;

use mshgltf::anim::{
    canonical_anim, frame_index, is_canonical, node_tracks, pick_quat_layout, tracks, Branch,
    QuatLayout, Sampler,
};
use mshgltf::msh::{self, Mode, Model, NONE16};
use mshgltf::nres;
use serde_json::Value;

mod common;
use common::{corpus, manifest};

/// Decodes every model of `models[]` (strict), keyed by its label.
fn models(root: &Path, man: &Value) -> Vec<(String, Value, Model)> {
    let mut files: HashMap<String, Vec<u8>> = HashMap::new();
    let mut out = Vec::new();
    for m in man["models"].as_array().expect("models[]") {
        let file = m["file"].as_str().expect("file");
        let bytes = files
            .entry(file.to_string())
            .or_insert_with(|| std::fs::read(root.join(file)).expect("read corpus file"));
        let (label, data): (String, &[u8]) = match m["entry"].as_str() {
            Some(entry) => {
                let a = nres::read(bytes, Mode::Strict).expect("archive parses");
                let i = a
                    .find(entry.as_bytes())
                    .unwrap_or_else(|| panic!("{file}: entry {entry} not found"));
                (format!("{file}:{entry}"), a.entries[i].data)
            }
            None => (file.to_string(), bytes.as_slice()),
        };
        let model = msh::decode(data, Mode::Strict)
            .unwrap_or_else(|e| panic!("{label}: strict decode failed: {e}"))
            .model;
        out.push((label, m.clone(), model));
    }
    out
}

fn branch_name(b: Branch) -> &'static str {
    match b {
        Branch::Fallback => "fallback",
        Branch::ExactK0 => "exact_k0",
        Branch::ExactK1 => "exact_k1",
        Branch::Interp => "interp",
    }
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn manifest_world_matrices_keys_and_branches() {
    let Some(root) = corpus() else { return };
    let man = manifest(&root);
    let conv = man["conventions"]["animation_sampler"]
        .as_str()
        .unwrap_or("");
    assert!(
        conv.contains("read in the model's quat_storage order"),
        "manifest sampler convention changed: {conv}"
    );
    let tol = man["conventions"]["suggested_tolerance"]["matrix_abs"]
        .as_f64()
        .expect("matrix_abs") as f32;
    let mut max_err = 0.0f32;
    let mut worst = String::new();
    let (mut records, mut matrices, mut keys_checked, mut branches_checked) = (0, 0, 0, 0);
    for (label, m, model) in models(&root, &man) {
        let layout = match m["quat_storage"].as_str() {
            Some("wxyz") => QuatLayout::Wxyz,
            _ => QuatLayout::Xyzw,
        };
        let s = Sampler::new(&model, layout)
            .unwrap_or_else(|e| panic!("{label}: sampler rejects a valid model: {e}"));
        for tr in m["transforms"].as_array().expect("transforms[]") {
            let t = tr["t"].as_f64().expect("t") as f32;
            records += 1;
            if let Some(f) = tr["frame"].as_i64() {
                assert_eq!(i64::from(frame_index(t)), f, "{label} t={t}: frame");
            }
            let world = s.world_matrices(t);
            let want = tr["world"].as_array().expect("world");
            assert_eq!(world.len(), want.len(), "{label} t={t}: node count");
            for (n, (got, w)) in world.iter().zip(want).enumerate() {
                let w = w.as_array().expect("16 floats");
                assert_eq!(w.len(), 16);
                for (c, (g, e)) in got.iter().zip(w).enumerate() {
                    let e = e.as_f64().expect("float") as f32;
                    let d = (g - e).abs();
                    assert!(
                        d <= tol,
                        "{label} t={t} node {n} cell {c}: got {g}, manifest {e} (|d| = {d})"
                    );
                    if d > max_err {
                        max_err = d;
                        worst = format!("{label} t={t} node {n} cell {c}");
                    }
                }
                matrices += 1;
            }
            for n in 0..world.len() {
                let p = s.node_pose(n, t);
                if let Some(k) = tr["key"].get(n).and_then(Value::as_u64) {
                    assert_eq!(u64::from(p.key), k, "{label} t={t} node {n}: key");
                    keys_checked += 1;
                }
                if let Some(b) = tr["branch"].get(n).and_then(Value::as_str) {
                    assert_eq!(branch_name(p.branch), b, "{label} t={t} node {n}: branch");
                    branches_checked += 1;
                }
            }
        }
    }
    println!(
        "{records} transform records, {matrices} matrices, {keys_checked} keys, \
         {branches_checked} branches; max |error| = {max_err:e} at {worst}"
    );
    assert!(records > 0);
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn corpus_tracks_are_canonical_and_regenerate_exactly() {
    let Some(root) = corpus() else { return };
    let man = manifest(&root);
    let (mut n_models, mut n_tracks, mut non_canonical) = (0, 0, 0);
    let mut layouts = HashMap::new();
    for (label, m, model) in models(&root, &man) {
        n_models += 1;
        // Layout detection (format-notes §6 R3) against the manifest's
        // quat_storage: every corpus model has a decisive static-key vote.
        let pick = pick_quat_layout(&model);
        *layouts.entry(pick).or_insert(0usize) += 1;
        let want = match m["quat_storage"].as_str() {
            Some("wxyz") => QuatLayout::Wxyz,
            _ => QuatLayout::Xyzw,
        };
        assert_eq!(pick, (want, true), "{label}: quaternion layout detection");

        let ts = tracks(&model).unwrap_or_else(|e| panic!("{label}: tracks: {e}"));
        assert_eq!(ts.len(), model.nodes.len(), "{label}");
        if let Some(nodes) = m["nodes"].as_array() {
            for (t, n) in ts.iter().zip(nodes) {
                if let Some(k) = n["keys"].as_u64() {
                    assert_eq!(t.len() as u64, k, "{label} node {}: key count", t.node);
                }
                if let Some(a) = n["animated"].as_bool() {
                    assert_eq!(t.has_map, a, "{label} node {}: animated", t.node);
                }
            }
        }
        for t in &ts {
            n_tracks += 1;
            if !is_canonical(&model, t) {
                non_canonical += 1;
                println!("{label}: node {} track not canonical", t.node);
            }
        }

        let nt = node_tracks(&model).unwrap_or_else(|e| panic!("{label}: node_tracks: {e}"));
        let c = canonical_anim(&nt).unwrap_or_else(|e| panic!("{label}: canonical_anim: {e}"));
        let keys = model.keys.as_deref().unwrap_or(&[]);
        assert!(c.keys.as_slice() == keys, "{label}: Res8 differs");
        assert_eq!(
            c.frame_map.as_slice(),
            model.frame_map.as_deref().unwrap_or(&[]),
            "{label}: Res19 differs"
        );
        assert_eq!(c.frame_count, model.frame_count, "{label}: frame count");
        let stored_ms: Vec<u16> = model.nodes38().iter().map(|n| n.map_start).collect();
        let stored_fb: Vec<u16> = model.nodes38().iter().map(|n| n.fallback_key).collect();
        assert_eq!(c.map_start, stored_ms, "{label}: hdr2");
        assert_eq!(c.fallback_key, stored_fb, "{label}: hdr3");
        if let Some(fc) = m["counts"]["frame_count"].as_u64() {
            assert_eq!(
                u64::from(c.frame_count),
                fc,
                "{label}: manifest frame_count"
            );
        }
        if c.map_start.iter().all(|&s| s == NONE16) {
            assert_eq!(c.frame_count, 1, "{label}: static model frame count");
        }
    }
    println!(
        "{n_models} models, {n_tracks} tracks, {non_canonical} not canonical; layouts {layouts:?}"
    );
    assert_eq!(non_canonical, 0);
}
