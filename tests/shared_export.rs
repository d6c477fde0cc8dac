//! glTF export of every valid corpus model (bare `models/*.msh` and `.msh`
//! entries of the `*.rlb` archives; `bad/` and `MAPS/` are not models):
//! the export succeeds, parses back with the `gltf` crate, and its world
//! matrices match the manifest's engine world matrices through the Up::Y
//! axis change (`A · W_engine · A⁻¹`, gltf-mapping.md "Engine pose") at every
//! manifest sample time. Optionally runs the Khronos validator on a few
//! outputs when it is already installed.
//! Skips (prints a line) when ../shared/corpus is missing.

mod export_eval;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mshgltf::gltf_export::{export, to_glb, ExportOptions, Exported};
use mshgltf::msh::{self, Mode};
use sha2::Digest;

/// Tolerance of the world-matrix check (the brief's 1e-3; the manifest
/// suggests 2e-4 and the observed maximum is reported).
mod common;
use common::{corpus, manifest};

/// (manifest `file`, entry name or "", model bytes).
fn corpus_models(root: &Path) -> Vec<(String, String, Vec<u8>)> {
    common::corpus_models(root)
        .into_iter()
        .map(|m| (m.file, m.entry.unwrap_or_default(), m.bytes))
        .collect()
}

const TOL: f64 = 1e-3;

fn validator() -> Option<PathBuf> {
    let tool = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/tools/gltf-validate"
    ));
    let cache = std::env::var_os("MSH_TOOLS_CACHE")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
                .map(|c| c.join("msh-tools"))
        })?;
    // Only when already installed: a test must not hit the network.
    let installed = std::fs::read_dir(&cache)
        .ok()?
        .filter_map(|e| e.ok())
        .any(|e| {
            e.path()
                .join("node_modules/gltf-validator/package.json")
                .is_file()
        });
    (tool.is_file() && installed).then_some(tool)
}

/// The manifest's models by (file, entry; "" for bare `models/*.msh`).
fn expected_models(man: &serde_json::Value) -> HashMap<(String, String), &serde_json::Value> {
    let mut expected: HashMap<(String, String), &serde_json::Value> = HashMap::new();
    for m in man["models"].as_array().expect("models") {
        let file = m["file"].as_str().unwrap().to_string();
        let entry = if file.starts_with("models/") {
            String::new()
        } else {
            m["entry"].as_str().unwrap().to_string()
        };
        expected.insert((file, entry), m);
    }
    expected
}

/// Exports `model` three times (the machine is shared); returns the last
/// export, its GLB and the best time of export + GLB serialisation.
fn export_best_of_3(
    label: &str,
    model: &msh::Model,
    opts: &ExportOptions,
) -> (Exported, Vec<u8>, Duration) {
    // Best of 3 (the machine is shared): export + GLB serialisation.
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..3 {
        let t0 = Instant::now();
        let e = export(model, &[], opts).unwrap_or_else(|err| panic!("{label}: export: {err}"));
        let glb = to_glb(&e).expect("glb");
        best = best.min(t0.elapsed());
        last = Some((e, glb));
    }
    let (e, glb) = last.expect("exported");
    (e, glb, best)
}

/// The largest world-matrix error seen, where, and over how many sample
/// times.
#[derive(Default)]
struct WorldErrors {
    max_err: f64,
    worst: String,
    checked_times: usize,
}

/// Checks node counts against the manifest record `m` and the exported
/// world matrices against its engine ones at every sample time (within
/// [`TOL`]).
fn check_against_manifest(
    label: &str,
    e: &Exported,
    m: &serde_json::Value,
    ev: &export_eval::Eval,
    fps: f32,
    errs: &mut WorldErrors,
) {
    assert_eq!(
        e.report.nodes,
        m["counts"]["nodes"].as_u64().unwrap() as usize,
        "{label}"
    );
    assert_eq!(
        e.report.animated_nodes,
        m["counts"]["animated_nodes"].as_u64().unwrap() as usize,
        "{label}"
    );
    for tr in m["transforms"].as_array().expect("transforms") {
        let t = tr["t"].as_f64().unwrap() as f32;
        let engine: Vec<[f32; 16]> = tr["world"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| {
                let v: Vec<f32> = w
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_f64().unwrap() as f32)
                    .collect();
                v.try_into().unwrap()
            })
            .collect();
        let err = export_eval::max_error(&engine, &ev.worlds(t / fps));
        errs.checked_times += 1;
        if err > errs.max_err {
            errs.max_err = err;
            errs.worst = format!("{label} t={t}");
        }
        assert!(err <= TOL, "{label} t={t}: world matrix error {err}");
    }
}

/// Runs `gltf-validate --strict` on `to_validate` when it is installed
/// (else prints a skip line).
fn validate(to_validate: &[PathBuf]) {
    match validator() {
        Some(tool) => {
            let out = std::process::Command::new(&tool)
                .arg("--strict")
                .args(to_validate)
                .output()
                .expect("run gltf-validate");
            let text = String::from_utf8_lossy(&out.stdout);
            println!("{text}{}", String::from_utf8_lossy(&out.stderr));
            assert!(
                out.status.success(),
                "gltf-validate --strict failed on {to_validate:?}"
            );
        }
        None => println!(
            "SKIP validator: gltf-validate not installed (run ../shared/tools/gltf-validate once)"
        ),
    }
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn every_corpus_model_exports_and_matches_engine_world_matrices() {
    let Some(root) = corpus() else { return };
    let man = manifest(&root);
    let expected = expected_models(&man);
    let models = corpus_models(&root);
    let n_legacy = man["legacy_models"].as_array().map_or(0, Vec::len);
    assert_eq!(
        models.len(),
        expected.len() + n_legacy,
        "model count vs manifest"
    );

    let dump = std::env::var_os("MSHGLTF_EXPORT_DUMP").map(PathBuf::from);
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut to_validate = Vec::new();
    let mut errs = WorldErrors::default();
    let mut total_export = Duration::ZERO;
    let (mut baked, mut warned) = (0usize, 0usize);
    for (file, entry, bytes) in &models {
        let label = if entry.is_empty() {
            file.clone()
        } else {
            format!("{file}:{entry}")
        };
        let model = msh::read::decode(bytes, Mode::Strict)
            .unwrap_or_else(|e| panic!("{label}: decode: {e}"))
            .model;
        let stem = Path::new(if entry.is_empty() { file } else { entry })
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("model")
            .to_string();
        let opts = ExportOptions {
            source: label.clone(),
            sha256: format!("{:x}", sha2::Sha256::digest(bytes)),
            name: stem.clone(),
            ..Default::default()
        };
        let (e, glb, best) = export_best_of_3(&label, &model, &opts);
        total_export += best;
        baked += e.report.baked_nodes.len();
        warned += usize::from(!e.report.warnings.is_empty());
        if let Some(d) = &dump {
            std::fs::create_dir_all(d).unwrap();
            std::fs::write(
                d.join(format!("{}_{stem}.glb", file.replace(['/', '.'], "_"))),
                &glb,
            )
            .unwrap();
        }
        if to_validate.len() < 6
            && (e.report.animated_nodes > 0 || to_validate.is_empty() || model.res18.is_some())
        {
            let p = tmp.path().join(format!("{stem}.glb"));
            std::fs::write(&p, &glb).unwrap();
            to_validate.push(p);
        }
        let ev = export_eval::Eval::new(&glb);
        let Some(m) = expected.get(&(file.clone(), entry.clone())) else {
            // The legacy model: one untransformed root node.
            assert!(
                e.report.warnings.iter().any(|w| w.contains("legacy")),
                "{label}"
            );
            continue;
        };
        check_against_manifest(&label, &e, m, &ev, opts.fps, &mut errs);
    }
    let WorldErrors {
        max_err,
        worst,
        checked_times,
    } = errs;
    println!(
        "exported {} models in {:?} (export + GLB, best of 3 per model, this build profile); {checked_times} sample times; max world error {max_err:.3e} ({worst}); {baked} baked nodes; {warned} models with warnings",
        models.len(),
        total_export
    );
    validate(&to_validate);
}
