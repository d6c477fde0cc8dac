//! msh2gltf → gltf2msh with `--base` over the whole corpus: an unedited trip
//! gives the model back byte for byte, through `.glb` and through `.gltf` +
//! `.bin` (gltf-mapping.md, "Reverse rules"). Skips when ../shared is absent.

use std::path::Path;

use mshgltf::gltf_export::{self, CellChoice};
use mshgltf::gltf_import::read::idx;
use mshgltf::gltf_import::{self, ImportOptions};
use mshgltf::{msh, nres};

mod common;
use common::corpus as corpus_dir;

/// Every valid corpus model: (display name, stem, bytes).
fn corpus_models(dir: &Path) -> Vec<(String, String, Vec<u8>)> {
    common::corpus_models(dir)
        .into_iter()
        .map(|m| (m.display, m.stem, m.bytes))
        .collect()
}

/// msh2gltf's export of a corpus model (no textures, showing `cells`).
fn export(bytes: &[u8], stem: &str, cells: CellChoice) -> gltf_export::Exported {
    common::export_untextured(bytes, stem, stem, cells)
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn unedited_trip_is_byte_identical_through_glb_and_gltf() {
    let Some(dir) = corpus_dir() else { return };
    let models = corpus_models(&dir);
    assert!(models.len() >= 400, "{} models", models.len());
    let tmp = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut n = 0;
    for (name, stem, bytes) in &models {
        let base = msh::decode(bytes, msh::Mode::Strict).unwrap().model;
        let e = export(bytes, stem, CellChoice::default());
        let glb = gltf_export::to_glb(&e).unwrap();
        let (json, bin) = gltf_export::to_gltf(&e, "m.bin").unwrap();
        std::fs::write(tmp.path().join("m.bin"), &bin).unwrap();
        for (what, doc) in [
            ("glb", gltf_import::parse(&glb, None)),
            ("gltf", gltf_import::parse(&json, Some(tmp.path()))),
        ] {
            let r = doc
                .and_then(|d| gltf_import::import_with_base(&d, &base, &ImportOptions::default()));
            match r {
                Ok(imp) => {
                    let out = msh::encode(&imp.model).unwrap();
                    if out != *bytes {
                        failures.push(format!(
                            "{name} ({what}): bytes differ; report {:?}",
                            imp.report
                        ));
                    } else {
                        assert!(imp.report.unchanged, "{name}");
                    }
                }
                Err(e) => failures.push(format!("{name} ({what}): {e}")),
            }
        }
        n += 1;
    }
    assert!(
        failures.is_empty(),
        "{} of {n} models failed:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n")
    );
    println!("{n} models byte-identical through .glb and .gltf");
}

/// A geometry-only edit (one vertex of the first mesh moved 0.25 up) changes
/// the geometry streams only: no track is reported changed and Res8, Res19
/// and the Res1 map fields stay the base's, for every model, including the
/// tracks msh2gltf densifies or bakes (gltf_export::anim).
#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn vertex_edit_leaves_the_animation_alone() {
    let Some(dir) = corpus_dir() else { return };
    let models = corpus_models(&dir);
    let mut failures = Vec::new();
    let mut n = 0;
    for (name, stem, bytes) in &models {
        let base = msh::decode(bytes, msh::Mode::Strict).unwrap().model;
        let e = export(bytes, stem, CellChoice::default());
        let glb = gltf_export::to_glb(&e).unwrap();
        let mut doc = gltf_import::parse(&glb, None).unwrap();
        let Some(mesh) = doc.to_json()["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find_map(|n| n["mesh"].as_u64())
        else {
            continue;
        };
        let a = doc
            .accessor_def(
                doc.to_json()["meshes"][mesh as usize]["primitives"][0]["attributes"]["POSITION"]
                    .as_u64()
                    .unwrap() as usize,
            )
            .unwrap();
        let view = doc.buffer_view_def(idx(a, "bufferView").unwrap()).unwrap();
        let off = idx(view, "byteOffset").unwrap_or(0) + idx(a, "byteOffset").unwrap_or(0) + 4;
        let y = f32::from_le_bytes(doc.buffers[0][off..off + 4].try_into().unwrap());
        doc.buffers[0][off..off + 4].copy_from_slice(&(y + 0.25).to_le_bytes());
        let imp = match gltf_import::import_with_base(&doc, &base, &ImportOptions::default()) {
            Ok(i) => i,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let m = msh::decode(&msh::encode(&imp.model).unwrap(), msh::Mode::Strict)
            .unwrap()
            .model;
        let r = &imp.report;
        if r.moved_vertices != 1
            || !r.changed_tracks.is_empty()
            || r.animation_regenerated
            || m.keys != base.keys
            || m.frame_map != base.frame_map
            || m.frame_count != base.frame_count
            || m.nodes != base.nodes
        {
            failures.push(format!(
                "{name}: moved {}, tracks changed {:?}, animation regenerated {}",
                r.moved_vertices, r.changed_tracks, r.animation_regenerated
            ));
        }
        n += 1;
    }
    assert!(
        failures.is_empty(),
        "{} of {n} models:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n")
    );
    assert!(n >= 400, "{n} models");
    println!("{n} models: a vertex edit leaves Res8, Res19 and Res1 as they were");
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn all_cells_trip_is_byte_identical() {
    let Some(dir) = corpus_dir() else { return };
    let models = corpus_models(&dir);
    let mut n = 0;
    for (name, stem, bytes) in models
        .iter()
        .filter(|m| m.0.contains("units.rlb") || m.0.contains("bases.rlb"))
    {
        let base = msh::decode(bytes, msh::Mode::Strict).unwrap().model;
        let e = export(
            bytes,
            stem,
            CellChoice {
                state: 0,
                lod: 0,
                all_cells: true,
            },
        );
        let glb = gltf_export::to_glb(&e).unwrap();
        let doc = gltf_import::parse(&glb, None).unwrap();
        let imp = gltf_import::import_with_base(&doc, &base, &ImportOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(msh::encode(&imp.model).unwrap(), *bytes, "{name}");
        n += 1;
    }
    println!("{n} models byte-identical with --all-cells");
}

// ---------------------------------------------------------------------------
// Blender round trip: msh2gltf → Blender import + glTF re-export → gltf2msh.

type Corner = ([f32; 3], [i8; 4], [i16; 2], [u8; 8], [u8; 4]);

/// A slot's triangles as corner records, each rotated to start at its
/// smallest position, sorted.
fn slot_corners(m: &msh::Model, s: usize) -> Vec<[Corner; 3]> {
    let slot = m.slots[s];
    let mut out: Vec<[Corner; 3]> = msh::derive::slot_triangles(m, &slot)
        .iter()
        .map(|t| {
            let c = t.map(|v| {
                let v = v as usize;
                (
                    m.positions[v],
                    m.normals.as_ref().map_or([0; 4], |n| n[v]),
                    m.uvs.as_ref().map_or([0; 2], |n| n[v]),
                    m.res15.as_ref().map_or([0; 8], |n| n[v]),
                    m.res18.as_ref().map_or([0; 4], |n| n[v]),
                )
            });
            let key = |c: &Corner| c.0.map(f32::to_bits);
            let r = (0..3).min_by_key(|&r| key(&c[r])).unwrap();
            [c[r], c[(r + 1) % 3], c[(r + 2) % 3]]
        })
        .collect();
    out.sort_by(|a, b| {
        let k = |t: &[Corner; 3]| t.map(|c| c.0.map(|x| x as f64));
        k(a).partial_cmp(&k(b)).unwrap()
    });
    out
}

fn blender_check(dir: &Path, archive: &str, entry: &str, cells: CellChoice) {
    let tool = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/tools/blender-inspect"
    );
    let data = std::fs::read(dir.join(archive)).unwrap();
    let a = nres::read(&data, nres::Mode::Strict).unwrap();
    let bytes = a.entries[a.find(entry.as_bytes()).unwrap()].data.to_vec();
    let base = msh::decode(&bytes, msh::Mode::Strict).unwrap().model;
    let tmp = tempfile::tempdir().unwrap();
    let (src, rt) = (tmp.path().join("in.glb"), tmp.path().join("rt.glb"));
    std::fs::write(
        &src,
        gltf_export::to_glb(&export(&bytes, entry, cells)).unwrap(),
    )
    .unwrap();
    let o = std::process::Command::new(tool)
        .arg("--export")
        .arg(&rt)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{entry}: blender-inspect failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc = gltf_import::load_path(&rt).unwrap();
    let imp = gltf_import::import_with_base(&doc, &base, &ImportOptions::default())
        .unwrap_or_else(|e| panic!("{entry}: {e}"));
    let m = msh::decode(&msh::encode(&imp.model).unwrap(), msh::Mode::Strict)
        .unwrap()
        .model;
    // Same triangles per slot (positions within 1e-6), normals within one
    // quantization step, UVs and per-vertex unknown streams preserved.
    for s in 0..base.slots.len() {
        let (x, y) = (slot_corners(&base, s), slot_corners(&m, s));
        assert_eq!(x.len(), y.len(), "{entry} slot {s}: triangle count");
        for (t, (a, b)) in x.iter().zip(&y).enumerate() {
            for k in 0..3 {
                for c in 0..3 {
                    assert!(
                        (a[k].0[c] - b[k].0[c]).abs() <= 1e-6,
                        "{entry} slot {s} tri {t}: {:?} vs {:?}",
                        a[k].0,
                        b[k].0
                    );
                    assert!(
                        (i16::from(a[k].1[c]) - i16::from(b[k].1[c])).abs() <= 1,
                        "{entry} slot {s} tri {t}: normal"
                    );
                }
                assert_eq!(
                    (a[k].2, a[k].3, a[k].4),
                    (b[k].2, b[k].3, b[k].4),
                    "{entry} slot {s} tri {t}: uv/Res15/Res18"
                );
            }
        }
        assert_eq!(
            m.slots[s].tail, base.slots[s].tail,
            "{entry} slot {s}: tail"
        );
    }
    // Unknown fields of batches, triangles, nodes and raw streams.
    let opaque = |m: &msh::Model| -> Vec<(u16, u16, u16, u16, u16)> {
        m.batches
            .iter()
            .map(|b| (b.flags, b.material_index, b.opaque4, b.opaque6, b.opaque14))
            .collect()
    };
    assert_eq!(opaque(&m), opaque(&base), "{entry}: batches");
    let fl = |m: &msh::Model| -> Vec<u16> { m.nodes38().iter().map(|n| n.flags).collect() };
    assert_eq!(fl(&m), fl(&base), "{entry}: node flags");
    let raw = |m: &msh::Model| -> Vec<msh::StreamEntry> {
        m.entries
            .iter()
            .filter(|e| e.raw.is_some())
            .cloned()
            .collect()
    };
    assert_eq!(raw(&m), raw(&base), "{entry}: raw streams");
    assert_eq!(m.names, base.names, "{entry}: names");
    // World matrices at every frame.
    let layout = mshgltf::anim::pick_quat_layout(&base).0;
    let (sa, sb) = (
        mshgltf::anim::Sampler::new(&base, layout).unwrap(),
        mshgltf::anim::Sampler::new(&m, layout).unwrap(),
    );
    for f in 0..base.frame_count.max(m.frame_count) {
        let (wa, wb) = (sa.world_matrices(f as f32), sb.world_matrices(f as f32));
        for (i, (x, y)) in wa.iter().zip(&wb).enumerate() {
            let d = x
                .iter()
                .zip(y)
                .map(|(p, q)| (p - q).abs())
                .fold(0.0f32, f32::max);
            assert!(
                d <= 1e-3,
                "{entry}: node {i} frame {f}: world matrices differ by {d}"
            );
        }
    }
    println!(
        "{entry}: Blender round trip ok (byte-identical: {})",
        msh::encode(&m).unwrap() == bytes
    );
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn blender_round_trip() {
    let Some(dir) = corpus_dir() else { return };
    if !Path::new("/usr/bin/blender").exists() {
        println!("skipped: /usr/bin/blender not installed");
        return;
    }
    // The largest animated model, an animated one with LOD cells (all cells
    // exported) and a lightmapped one (Res18).
    blender_check(&dir, "units.rlb", "R_S_83.msh", CellChoice::default());
    blender_check(
        &dir,
        "guns.rlb",
        "g_mortar_24.msh",
        CellChoice {
            state: 0,
            lod: 0,
            all_cells: true,
        },
    );
    blender_check(&dir, "fortif.rlb", "fr_wall_91.msh", CellChoice::default());
}
