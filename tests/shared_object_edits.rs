//! Issue 24 on the corpus: `gltf2msh --base` never says "unchanged" for a
//! glTF that differs from its base. Every corpus model is exported, given
//! random object-level edits (seeded: an Object-mode scale, a move or a turn
//! of a node, animated or not) and imported against its base; each import
//! must succeed and not report "unchanged". A uniform ×1.5 scale of every
//! root is also checked written: every vertex shown by the export is 1.5
//! times the base's and nothing is warned.

mod common;

use std::collections::BTreeSet;

use mshgltf::gltf_export::CellChoice;
use mshgltf::gltf_import::{self, GltfFile, ImportOptions};
use mshgltf::msh::{self, Model, Nodes};
use serde_json::json;

/// xorshift64*: a seeded, reproducible stream of numbers.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `[lo, hi)`.
    fn f(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32)
    }
    /// A value in `±[lo, hi)`.
    fn signed(&mut self, lo: f32, hi: f32) -> f32 {
        let v = self.f(lo, hi);
        if self.next() & 1 == 0 {
            v
        } else {
            -v
        }
    }
}

/// Applies one random edit to a Res1 glTF node (`0..n`); returns what.
fn random_edit(doc: &mut GltfFile, n: usize, rng: &mut Rng) -> String {
    let g = (rng.next() % n as u64) as usize;
    let mut tree = doc.tree_mut();
    let nd = &mut tree["nodes"][g];
    match rng.next() % 3 {
        0 => {
            let s = [rng.f(1.05, 2.0), rng.f(1.05, 2.0), rng.f(1.05, 2.0)];
            nd["scale"] = json!(s);
            format!("node {g} scale {s:?}")
        }
        1 => {
            let t: Vec<f32> =
                serde_json::from_value(nd["translation"].clone()).unwrap_or(vec![0.0; 3]);
            let d = [
                rng.signed(0.01, 0.5),
                rng.signed(0.01, 0.5),
                rng.signed(0.01, 0.5),
            ];
            nd["translation"] = json!([t[0] + d[0], t[1] + d[1], t[2] + d[2]]);
            format!("node {g} moved {d:?}")
        }
        _ => {
            let r: Vec<f32> =
                serde_json::from_value(nd["rotation"].clone()).unwrap_or(vec![0.0, 0.0, 0.0, 1.0]);
            let a = rng.signed(0.05, 1.0);
            let q = glam::Quat::from_rotation_x(a) * glam::Quat::from_slice(&r);
            nd["rotation"] = json!(q.normalize().to_array());
            format!("node {g} turned {a} rad about x")
        }
    }
}

/// Vertices shown by the export: the base vertices of every batch of the
/// slots its meshes stand for (extras `slot`).
fn shown_vertices(doc: &GltfFile, base: &Model) -> BTreeSet<usize> {
    let mut out = BTreeSet::new();
    for mesh in doc.to_json()["meshes"].as_array().unwrap() {
        let Some(s) = mesh["extras"]["msh"]["slot"].as_u64() else {
            continue;
        };
        let slot = &base.slots[s as usize];
        let (b0, bn) = (slot.batch_start as usize, slot.batch_count as usize);
        for b in &base.batches[b0..(b0 + bn).min(base.batches.len())] {
            let i0 = b.index_start as usize;
            for &i in &base.indices[i0..i0 + b.index_count as usize] {
                out.insert(b.base_vertex as usize + i as usize);
            }
        }
    }
    out
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn edited_corpus_exports_are_never_unchanged() {
    let Some(dir) = common::corpus() else { return };
    let models = common::corpus_models(&dir);
    assert!(models.len() >= 400, "{} models", models.len());
    let mut rng = Rng(0x5eed_0024);
    let (mut n, mut edits, mut warned, mut scaled_ok) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for m in &models {
        let base = msh::decode(&m.bytes, msh::Mode::Strict).unwrap().model;
        if !matches!(base.nodes, Nodes::Node38(_)) {
            continue; // legacy layout: its node transforms are warned (trs.rs)
        }
        n += 1;
        let e = common::export_untextured(&m.bytes, &m.display, &m.stem, CellChoice::default());
        let doc0 = GltfFile::new(serde_json::to_value(&e.root).unwrap(), vec![e.bin]);
        let res1 = base.nodes.len();
        for k in 0..2 {
            let mut doc = doc0.clone();
            let mut what = Vec::new();
            for _ in 0..=k {
                what.push(random_edit(&mut doc, res1, &mut rng));
            }
            edits += 1;
            match gltf_import::import_with_base(&doc, &base, &ImportOptions::default()) {
                Ok(imp) if imp.report.unchanged => {
                    failures.push(format!("{}: {what:?}: unchanged", m.display))
                }
                Ok(imp) => warned += usize::from(!imp.report.warnings.is_empty()),
                Err(e) => failures.push(format!("{}: {what:?}: {e}", m.display)),
            }
        }
        // A uniform scale of every root: written, nothing warned.
        let mut doc = doc0.clone();
        let roots: Vec<u64> = doc.to_json()["scenes"][0]["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|v| v.as_u64())
            .collect();
        for r in roots {
            doc.tree_mut()["nodes"][r as usize]["scale"] = json!([1.5, 1.5, 1.5]);
        }
        match gltf_import::import_with_base(&doc, &base, &ImportOptions::default()) {
            Ok(imp) => {
                let bad: Vec<usize> = shown_vertices(&doc0, &base)
                    .into_iter()
                    .filter(|&v| {
                        let (a, b) = (imp.model.positions[v], base.positions[v]);
                        (0..3).any(|c| (a[c] - 1.5 * b[c]).abs() > 1e-3 * b[c].abs().max(1.0))
                    })
                    .collect();
                // The scale is baked into the shown cells' slots; a cell
                // with its own vertices (damaged, destroyed, other LODs) is
                // named by a warning, issue 39: any other warning fails.
                let other: Vec<&String> = imp
                    .report
                    .warnings
                    .iter()
                    .filter(|w| !w.contains("does not reach"))
                    .collect();
                if !other.is_empty() || !bad.is_empty() {
                    failures.push(format!(
                        "{}: x1.5: {} vertices not scaled; warnings {:?}",
                        m.display,
                        bad.len(),
                        imp.report.warnings
                    ));
                } else {
                    scaled_ok += 1;
                }
            }
            Err(e) => failures.push(format!("{}: x1.5: {e}", m.display)),
        }
    }
    println!(
        "{n} models, {edits} random edits ({warned} with a warning), {scaled_ok} scaled x1.5 exactly"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures[..failures.len().min(12)].join("\n")
    );
}

/// msh2gltf's export of archive model `m` with its `.cpt`/`.ctl` siblings
/// (control-point empties and clips), or `None` without a `.cpt`.
fn export_with_points(
    root: &std::path::Path,
    m: &common::CorpusModel,
) -> Option<(GltfFile, mshgltf::unit::cpt::ControlPoints)> {
    use mshgltf::convert::{self, ConvertOptions, ModelRef};
    use mshgltf::unit::{pipeline, siblings};
    use mshgltf::{gltf_export::Up, nres, source};
    let entry = m.entry.as_deref()?;
    let data = std::fs::read(root.join(&m.file)).ok()?;
    let a = nres::read(&data, nres::Mode::Strict).ok()?;
    let i = source::find_entry(&a, entry).ok()?;
    let mr = ModelRef {
        source: m.display.clone(),
        stem: m.stem.clone(),
        bytes: &m.bytes,
        wear: source::find_wear(&a, a.entries[i].name),
    };
    let opts = ConvertOptions {
        textures: false,
        ..Default::default()
    };
    let mut c = convert::convert(&mr, None, &opts).ok()?;
    let sib = siblings::in_archive(&a, &m.file, a.entries[i].name);
    let added =
        pipeline::decorate(&mut c, &sib, 24.0, Up::Y, mshgltf::limits::DEFAULT_MAX_WORK).ok()?;
    let points = mshgltf::unit::cpt::read(&sib.cpt.as_ref()?.data).ok()?;
    (added.control_points > 0).then(|| {
        (
            GltfFile::new(
                serde_json::to_value(&c.exported.root).unwrap(),
                vec![c.exported.bin],
            ),
            points,
        )
    })
}

/// The `.cpt` changes and warnings `gltf2msh --base` gives for `doc`
/// (unit::cpt_back on the import's baked document).
fn cpt_edit(
    doc: &GltfFile,
    imp: &gltf_import::Imported,
    points: &mshgltf::unit::cpt::ControlPoints,
) -> (Vec<String>, Vec<String>) {
    let d = imp.points_doc.as_ref().unwrap_or(doc);
    let parent = gltf_import::matching::parents(d).unwrap();
    mshgltf::unit::cpt_back::read_points(d, &parent, &imp.res1_of, points, imp.up).map_or_else(
        |e| (vec![e.to_string()], Vec::new()),
        |e| (e.changes, e.warnings),
    )
}

/// One random edit of a control-point empty (glTF node `g`): moved,
/// turned, renamed or re-parented to the scene root; returns what.
fn random_point_edit(doc: &mut GltfFile, g: usize, rng: &mut Rng) -> &'static str {
    let mut tree = doc.tree_mut();
    let nd = &mut tree["nodes"][g];
    match rng.next() % 4 {
        0 => {
            let t: Vec<f32> = serde_json::from_value(nd["translation"].clone()).unwrap();
            let d = rng.signed(0.01, 0.5);
            nd["translation"] = json!([t[0] + d, t[1], t[2]]);
            "moved"
        }
        1 => {
            let r: Vec<f32> = serde_json::from_value(nd["rotation"].clone()).unwrap();
            let q = glam::Quat::from_rotation_x(rng.signed(0.05, 1.0)) * glam::Quat::from_slice(&r);
            nd["rotation"] = json!(q.normalize().to_array());
            "turned"
        }
        2 => {
            let n = nd["name"].as_str().unwrap_or("").to_string();
            nd["name"] = json!(format!("{n}_x"));
            "renamed"
        }
        _ => {
            let gi = json!(g);
            for n in tree["nodes"].as_array_mut().unwrap() {
                if let Some(c) = n.get_mut("children").and_then(|c| c.as_array_mut()) {
                    c.retain(|k| *k != gi);
                }
            }
            let roots = tree["scenes"][0]["nodes"].as_array_mut().unwrap();
            if !roots.contains(&gi) {
                roots.push(gi);
                "re-parented"
            } else {
                // Already at the root (its node is not in the model): move it.
                let t: Vec<f32> =
                    serde_json::from_value(tree["nodes"][g]["translation"].clone()).unwrap();
                tree["nodes"][g]["translation"] = json!([t[0], t[1] + 0.25, t[2]]);
                "moved"
            }
        }
    }
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn control_point_edits_of_corpus_models_are_written() {
    let Some(dir) = common::corpus() else { return };
    let mut rng = Rng(0x5eed_c947);
    let (mut models, mut edits) = (0, 0);
    let mut failures = Vec::new();
    for m in common::corpus_models(&dir) {
        let Some((doc0, base_cpt)) = export_with_points(&dir, &m) else {
            continue;
        };
        let base = msh::decode(&m.bytes, msh::Mode::Strict).unwrap().model;
        models += 1;
        match gltf_import::import_with_base(&doc0, &base, &ImportOptions::default()) {
            Ok(imp)
                if imp.report.unchanged
                    && msh::encode(&imp.model).unwrap() == m.bytes
                    && cpt_edit(&doc0, &imp, &base_cpt).0.is_empty() => {}
            Ok(imp) => failures.push(format!(
                "{}: unedited: {:?}",
                m.display, imp.report.warnings
            )),
            Err(e) => failures.push(format!("{}: unedited: {e}", m.display)),
        }
        let points: Vec<usize> = (0..doc0.to_json()["nodes"].as_array().unwrap().len())
            .filter(|&g| !doc0.to_json()["nodes"][g]["extras"]["msh"]["control_point"].is_null())
            .collect();
        for _ in 0..2 {
            let g = points[(rng.next() % points.len() as u64) as usize];
            let name = doc0.to_json()["nodes"][g]["extras"]["msh"]["control_point"]["name"]
                .as_str()
                .unwrap()
                .to_string();
            let mut doc = doc0.clone();
            let what = random_point_edit(&mut doc, g, &mut rng);
            edits += 1;
            match gltf_import::import_with_base(&doc, &base, &ImportOptions::default()) {
                Ok(imp) => {
                    // Written into the .cpt, the change naming the point.
                    let (changes, warnings) = cpt_edit(&doc, &imp, &base_cpt);
                    let word = match what {
                        "turned" => "direction",
                        "re-parented" => "now on node",
                        w => w,
                    };
                    // Moved to the scene root: a point sits on a node, so
                    // it stays on its own, and a warning names it.
                    // Turned about glTF x while pointing along x: a roll,
                    // which a .cpt cannot hold (a warning, nothing written).
                    let q0: Vec<f32> =
                        serde_json::from_value(doc0.to_json()["nodes"][g]["rotation"].clone())
                            .unwrap();
                    let d0 = mshgltf::unit::gltf::direction_of([q0[0], q0[1], q0[2], q0[3]]);
                    let roll = what == "turned" && d0[0].abs() > 1.0 - 1e-4;
                    let named = (!roll
                        && changes.iter().any(|c| {
                            c.starts_with(&format!("control point {name}")) && c.contains(word)
                        }))
                        || (roll
                            && changes.is_empty()
                            && imp.report.warnings.iter().any(|w| {
                                w.starts_with(&format!("control point {name:?}"))
                                    && w.contains("no roll")
                            }))
                        || (what == "re-parented"
                            && warnings.iter().any(|w| {
                                w.starts_with(&format!("control point {name}:"))
                                    && w.contains("scene root")
                            }));
                    if !named {
                        failures.push(format!(
                            "{}: point {name:?} {what}: changes {changes:?}, warnings {:?}",
                            m.display, imp.report.warnings
                        ));
                    }
                }
                Err(e) => failures.push(format!("{}: point {name:?} {what}: {e}", m.display)),
            }
        }
    }
    println!("{models} models with control points, {edits} point edits, each written");
    assert!(models >= 50, "{models} models with control points");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures[..failures.len().min(12)].join("\n")
    );
}
