//! gltf2msh --base, issue 24: object-level edits a modder makes in Blender
//! (Object-mode scale, an unkeyed move of an animated object, control-point
//! empties moved, turned, renamed, re-parented or deleted) are written or
//! named in a warning, never "unchanged"; warnings are printed one line
//! each by default and carried in the --report JSON. Edits are made in
//! code on msh2gltf's export of the committed samples.

mod common;

use mshgltf::anim::{QuatLayout, Sampler};
use mshgltf::gltf_export::{axes, CellChoice, Up};
use mshgltf::gltf_import::{self, GltfFile, ImportOptions, Imported};
use mshgltf::msh::{self, Model};
use mshgltf::unit::{cpt, cpt_back};
use proptest::prelude::*;
use serde_json::json;

fn exported(name: &str) -> (Model, Vec<u8>, GltfFile) {
    common::export_sample(name, CellChoice::default())
}

fn import(doc: &GltfFile, base: &Model) -> Imported {
    gltf_import::import_with_base(doc, base, &ImportOptions::default()).unwrap()
}

/// The model's quaternion layout, as the import decides it.
fn layout(doc: &GltfFile, base: &Model) -> QuatLayout {
    gltf_import::context(doc, &ImportOptions::default(), Some(base))
        .model
        .quat
}

/// Engine pose (translation in game axes) of `node` at every frame.
fn poses(m: &Model, q: QuatLayout, node: usize) -> Vec<[f32; 3]> {
    let s = Sampler::new(m, q).unwrap();
    (0..m.frame_count.max(1))
        .map(|f| s.node_pose(node, f as f32).pos)
        .collect()
}

fn close(a: [f32; 3], b: [f32; 3], tol: f32) -> bool {
    (0..3).all(|k| (a[k] - b[k]).abs() <= tol)
}

#[test]
fn object_scale_of_a_static_model_is_baked_into_its_vertices() {
    let (base, _, mut doc) = exported("static_box.msh");
    doc.tree_mut()["nodes"][0]["scale"] = json!([1.5, 1.5, 1.5]);
    let imp = import(&doc, &base);
    assert!(!imp.report.unchanged);
    assert!(imp.report.warnings.is_empty(), "{:?}", imp.report.warnings);
    assert_eq!(imp.report.baked_nodes, vec![0]);
    assert_eq!(imp.model.positions.len(), base.positions.len());
    for (a, b) in imp.model.positions.iter().zip(&base.positions) {
        assert!(close(*a, b.map(|x| 1.5 * x), 1e-6), "{a:?} vs 1.5 x {b:?}");
    }
    let back = msh::decode(&msh::encode(&imp.model).unwrap(), msh::Mode::Strict)
        .unwrap()
        .model;
    assert_eq!(back.positions, imp.model.positions);
}

#[test]
fn object_scale_of_an_animated_root_scales_vertices_and_every_child_key() {
    let (base, _, mut doc) = exported("anim_rotor.msh");
    let q = layout(&doc, &base);
    doc.tree_mut()["nodes"][0]["scale"] = json!([1.5, 1.5, 1.5]);
    let imp = import(&doc, &base);
    assert!(!imp.report.unchanged);
    assert!(imp.report.warnings.is_empty(), "{:?}", imp.report.warnings);
    assert_eq!(imp.report.baked_nodes, vec![0, 1, 2]);
    for (a, b) in imp.model.positions.iter().zip(&base.positions) {
        assert!(close(*a, b.map(|x| 1.5 * x), 1e-5), "{a:?} vs 1.5 x {b:?}");
    }
    // Every frame: each node's translation is 1.5 times the base's, so the
    // world shape is the base's scaled by 1.5.
    for node in 0..3 {
        let (got, want) = (poses(&imp.model, q, node), poses(&base, q, node));
        for (f, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(
                close(*g, w.map(|x| 1.5 * x), 1e-4),
                "node {node} frame {f}: {g:?} vs {w:?}"
            );
        }
    }
}

#[test]
fn non_uniform_scale_above_rotation_keys_is_named_in_a_warning() {
    let (base, _, mut doc) = exported("anim_rotor.msh");
    doc.tree_mut()["nodes"][1]["scale"] = json!([1.0, 2.0, 1.0]);
    let imp = import(&doc, &base);
    assert!(!imp.report.unchanged);
    let w = imp.report.warnings.join("\n");
    assert!(
        w.contains("\"tip\"") && w.contains("non-uniform scale"),
        "{w}"
    );
}

#[test]
fn a_mirroring_or_zero_scale_is_refused_with_a_warning_naming_the_node() {
    let (base, _, mut doc) = exported("static_box.msh");
    doc.tree_mut()["nodes"][0]["scale"] = json!([-1.0, 1.0, 1.0]);
    let imp = import(&doc, &base);
    assert!(!imp.report.unchanged);
    assert_eq!(imp.model, base);
    let w = imp.report.warnings.join("\n");
    assert!(w.contains("\"box\"") && w.contains("mirrored"), "{w}");
    // A zero scale (an object hidden by scaling it to nothing) is not
    // written either: the mesh keeps its shape.
    doc.tree_mut()["nodes"][0]["scale"] = json!([0.0, 0.0, 0.0]);
    let imp = import(&doc, &base);
    assert!(!imp.report.unchanged);
    assert_eq!(imp.model, base);
    let w = imp.report.warnings.join("\n");
    assert!(w.contains("\"box\"") && w.contains("zero scale"), "{w}");
}

#[test]
fn unkeyed_move_of_an_animated_node_is_applied_to_every_key() {
    let (base, _, mut doc) = exported("anim_rotor.msh");
    let q = layout(&doc, &base);
    let t0: Vec<f32> =
        serde_json::from_value(doc.to_json()["nodes"][1]["translation"].clone()).unwrap();
    let d = [0.3f32, 0.0, -0.2];
    doc.tree_mut()["nodes"][1]["translation"] = json!([t0[0] + d[0], t0[1] + d[1], t0[2] + d[2]]);
    let imp = import(&doc, &base);
    assert!(!imp.report.unchanged);
    assert!(imp.report.warnings.is_empty(), "{:?}", imp.report.warnings);
    assert_eq!(imp.report.baked_nodes, vec![1]);
    let dg = axes::vec3_inv(Up::Y, d);
    let (got, want) = (poses(&imp.model, q, 1), poses(&base, q, 1));
    assert_eq!(got.len(), 25);
    for (f, (g, w)) in got.iter().zip(&want).enumerate() {
        let moved = [w[0] + dg[0], w[1] + dg[1], w[2] + dg[2]];
        assert!(close(*g, moved, 1e-4), "frame {f}: {g:?} vs {moved:?}");
    }
}

#[test]
fn the_pose_at_another_frame_is_not_an_edit() {
    // Blender exports an animated object's static TRS at the current frame.
    let (base, bytes, mut doc) = exported("anim_rotor.msh");
    let q = layout(&doc, &base);
    let s = Sampler::new(&base, q).unwrap();
    let p = s.node_pose(1, 7.0);
    doc.tree_mut()["nodes"][1]["translation"] = json!(axes::vec3(Up::Y, p.pos));
    doc.tree_mut()["nodes"][1]["rotation"] = json!(axes::engine_quat_to_gltf(Up::Y, p.q));
    let imp = import(&doc, &base);
    assert!(imp.report.unchanged, "{:?}", imp.report);
    assert_eq!(msh::encode(&imp.model).unwrap(), bytes);
}

#[test]
fn unkeyed_turn_at_the_current_frame_is_applied_to_every_key() {
    let (base, _, mut doc) = exported("anim_rotor.msh");
    let q = layout(&doc, &base);
    let s = Sampler::new(&base, q).unwrap();
    // The scene was at frame 4; the object turned 30 degrees about glTF +X
    // (across its spin, so that no frame of the channel has this pose).
    let p = s.node_pose(1, 4.0);
    let r = axes::engine_quat_to_gltf(Up::Y, p.q);
    let turn = glam::Quat::from_rotation_x(std::f32::consts::FRAC_PI_6);
    let rq = (turn * glam::Quat::from_xyzw(r[0], r[1], r[2], r[3])).normalize();
    doc.tree_mut()["nodes"][1]["translation"] = json!(axes::vec3(Up::Y, p.pos));
    doc.tree_mut()["nodes"][1]["rotation"] = json!(rq.to_array());
    doc.tree_mut()["scenes"][0]["extras"]["msh"]["frame_current"] = json!(4);
    let imp = import(&doc, &base);
    assert!(!imp.report.unchanged);
    assert!(imp.report.warnings.is_empty(), "{:?}", imp.report.warnings);
    let s2 = Sampler::new(&imp.model, q).unwrap();
    for f in [0.0f32, 4.0, 12.0, 24.0] {
        let (a, b) = (s.node_pose(1, f), s2.node_pose(1, f));
        let (ga, gb) = (
            axes::engine_quat_to_gltf(Up::Y, a.q),
            axes::engine_quat_to_gltf(Up::Y, b.q),
        );
        let want = turn * glam::Quat::from_array(ga);
        let got = glam::Quat::from_array(gb);
        assert!(
            want.dot(got).abs() > 1.0 - 1e-6,
            "frame {f}: {got:?} vs {want:?}"
        );
        assert!(close(a.pos, b.pos, 1e-5), "frame {f}");
    }
}

/// Adds control-point empties as msh2gltf writes them
/// (crate::unit::gltf): `points` = (name, Res1 node, position, direction),
/// game axes.
fn add_points(doc: &mut GltfFile, points: &[(&str, usize, [f32; 3], [f32; 3])]) {
    for (i, (name, node, pos, dir)) in points.iter().enumerate() {
        let d = axes::vec3(Up::Y, *dir);
        let r = glam::Quat::from_rotation_arc(glam::Vec3::Y, glam::Vec3::from_array(d).normalize());
        let mut tree = doc.tree_mut();
        let nodes = tree["nodes"].as_array_mut().unwrap();
        nodes.push(json!({
            "name": name,
            "translation": axes::vec3(Up::Y, *pos),
            "rotation": r.to_array(),
            "extras": {"msh": {"control_point": {
                "index": i, "name": name, "node": node, "carrier": node, "word0": "0x0",
                "position": pos, "direction": dir, "magnitude": 1.0}}}
        }));
        let g = nodes.len() - 1;
        let parent = &mut tree["nodes"][*node];
        if parent.get("children").is_none() {
            parent["children"] = json!([]);
        }
        parent["children"].as_array_mut().unwrap().push(json!(g));
    }
    doc.tree_mut()["scenes"][0]["extras"]["msh"]["control_points"] = json!(points.len());
}

fn with_points() -> (Model, Vec<u8>, GltfFile) {
    let (base, bytes, mut doc) = exported("anim_rotor.msh");
    add_points(
        &mut doc,
        &[
            ("Dir_1", 2, [0.5, 0.0, 0.1], [1.0, 0.0, 0.0]),
            ("Wheel", 0, [0.0, 0.3, -0.2], [0.0, 0.0, 2.0]),
        ],
    );
    (base, bytes, doc)
}

fn warnings_of(doc: &GltfFile, base: &Model) -> String {
    let imp = import(doc, base);
    assert!(!imp.report.unchanged, "{:?}", imp.report);
    imp.report.warnings.join("\n")
}

#[test]
fn control_points_as_exported_are_unchanged() {
    let (base, bytes, doc) = with_points();
    let imp = import(&doc, &base);
    assert!(imp.report.unchanged, "{:?}", imp.report.warnings);
    assert_eq!(msh::encode(&imp.model).unwrap(), bytes);
}

/// The base `.cpt` of [`with_points`].
fn base_points() -> cpt::ControlPoints {
    let p = |name: &str, node: i32, position: [f32; 3], direction: [f32; 3]| cpt::ControlPoint {
        word0: 0,
        node,
        carrier: node,
        position,
        direction,
        name_field: cpt::name_field(name.as_bytes()),
    };
    cpt::ControlPoints {
        points: vec![
            p("Dir_1", 2, [0.5, 0.0, 0.1], [1.0, 0.0, 0.0]),
            p("Wheel", 0, [0.0, 0.3, -0.2], [0.0, 0.0, 2.0]),
        ],
    }
}

/// What `gltf2msh --base` writes for `doc`'s control points
/// (unit::cpt_back on the import's baked document), and whether the whole
/// edit is "unchanged" (the model, the points and no warning).
fn points_of(doc: &GltfFile, base: &Model) -> (cpt_back::CptEdit, bool) {
    let imp = import(doc, base);
    let d = imp.points_doc.as_ref().unwrap_or(doc);
    let parent = gltf_import::matching::parents(d).unwrap();
    let e = cpt_back::read_points(d, &parent, &imp.res1_of, &base_points(), imp.up).unwrap();
    let unchanged = imp.report.unchanged && e.changes.is_empty() && e.warnings.is_empty();
    (e, unchanged)
}

#[test]
fn control_point_edits_are_written_into_the_cpt() {
    let g = 3; // the first point's glTF node
    let near = |a: [f32; 3], b: [f32; 3]| close(a, b, 1e-5);
    let (base, _, mut doc) = with_points();
    doc.tree_mut()["nodes"][g]["translation"][0] = json!(0.7);
    let (e, unchanged) = points_of(&doc, &base);
    assert!(
        !unchanged && near(e.cpt.points[0].position, [0.7, 0.0, 0.1]),
        "{e:?}"
    );
    assert_eq!(e.cpt.points[1], base_points().points[1]);

    let (_, _, mut doc) = with_points();
    doc.tree_mut()["nodes"][g]["rotation"] = json!([0.0, 0.0, 0.0, 1.0]);
    let (e, _) = points_of(&doc, &base);
    // glTF +Y is game +Z; the length (1) is kept.
    assert!(near(e.cpt.points[0].direction, [0.0, 0.0, 1.0]), "{e:?}");

    let (_, _, mut doc) = with_points();
    doc.tree_mut()["nodes"][g]["name"] = json!("Dir_2");
    assert_eq!(points_of(&doc, &base).0.cpt.points[0].name(), "Dir_2");

    // Re-parented: from node 2 ("tip") to node 0 ("body").
    let (_, _, mut doc) = with_points();
    doc.tree_mut()["nodes"][2]["children"] = json!([]);
    doc.tree_mut()["nodes"][0]["children"]
        .as_array_mut()
        .unwrap()
        .push(json!(g));
    assert_eq!(points_of(&doc, &base).0.cpt.points[0].node, 0);

    // Deleted: the list loses it, with a warning on the renumbering.
    let (_, _, mut doc) = with_points();
    remove_node(&mut doc, g);
    let (e, _) = points_of(&doc, &base);
    assert_eq!(e.cpt.points, vec![base_points().points[1].clone()]);
    assert!(e.warnings[0].contains("from index 0"), "{:?}", e.warnings);

    // A scale of its node baked into the mesh: the points follow it.
    let (_, _, mut doc) = with_points();
    doc.tree_mut()["nodes"][0]["scale"] = json!([1.5, 1.5, 1.5]);
    let (e, _) = points_of(&doc, &base);
    assert!(near(e.cpt.points[0].position, [0.75, 0.0, 0.15]), "{e:?}");
    assert!(near(e.cpt.points[0].direction, [1.5, 0.0, 0.0]), "{e:?}");
    assert!(near(e.cpt.points[1].position, [0.0, 0.45, -0.3]), "{e:?}");
    assert!(near(e.cpt.points[1].direction, [0.0, 0.0, 3.0]), "{e:?}");
}

/// A roll about a point's own direction cannot be stored: a warning.
#[test]
fn a_control_point_roll_is_named_in_a_warning() {
    let (base, _, mut doc) = with_points();
    let r: Vec<f32> =
        serde_json::from_value(doc.to_json()["nodes"][3]["rotation"].clone()).unwrap();
    let q = glam::Quat::from_slice(&r) * glam::Quat::from_rotation_y(0.5);
    doc.tree_mut()["nodes"][3]["rotation"] = json!(q.to_array());
    let w = warnings_of(&doc, &base);
    assert!(
        w.contains("\"Dir_1\": turned about its own direction"),
        "{w}"
    );
}

#[test]
fn a_rotation_below_quantisation_is_not_an_edit() {
    // A static node's TRS is written as its one key; a change that does
    // not survive quantisation (msh-animation §2) is not an edit.
    let (base, bytes, mut doc) = exported("lod_tower.msh");
    let r: Vec<f32> =
        serde_json::from_value(doc.to_json()["nodes"][0]["rotation"].clone()).unwrap();
    doc.tree_mut()["nodes"][0]["rotation"] = json!([r[0] + 1e-6, r[1], r[2], r[3]]);
    let imp = import(&doc, &base);
    assert!(imp.report.unchanged, "{:?}", imp.report);
    assert_eq!(msh::encode(&imp.model).unwrap(), bytes);
}

#[test]
fn cli_prints_each_warning_and_the_report_carries_its_text() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, _, mut doc) = exported("anim_rotor.msh");
    doc.tree_mut()["nodes"][1]["scale"] = json!([1.0, 2.0, 1.0]);
    let glb = tmp.path().join("e.glb");
    std::fs::write(&glb, common::glb(&doc.to_json(), &doc.buffers[0])).unwrap();
    let base = common::sample("anim_rotor.msh");
    let run = |extra: &[&str], out: &str| {
        common::gltf2msh()
            .arg(&glb)
            .arg("--base")
            .arg(&base)
            .arg("-o")
            .arg(tmp.path().join(out))
            .args(extra)
            .output()
            .unwrap()
    };
    let rep = tmp.path().join("r.json");
    let o = run(&["--report", rep.to_str().unwrap()], "a.msh");
    assert!(o.status.success(), "{}", common::stderr(&o));
    let err = common::stderr(&o);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("gltf2msh: warning: "))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("Res1 node 2 \"tip\""), "{err}");
    assert!(
        !err.contains("unchanged") && !err.contains("-v to list"),
        "{err}"
    );
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&rep).unwrap()).unwrap();
    let w = r["import"]["warnings"].as_array().unwrap();
    assert_eq!(w.len(), 1);
    assert_eq!(
        format!("gltf2msh: warning: {}", w[0].as_str().unwrap()),
        lines[0]
    );
    let o = run(&["-q"], "b.msh");
    assert!(o.status.success());
    assert_eq!(common::stderr(&o), "");
}

/// One random object-level edit of `doc` (see [`edit`]): which, and its size.
#[derive(Debug, Clone)]
enum Edit {
    Scale(usize, [f32; 3]),
    Move(usize, [f32; 3]),
    Turn(usize, f32),
    PointMove(usize, [f32; 3]),
    PointTurn(usize, f32),
    PointRename(usize),
    PointDelete(usize),
}

/// Applies `e` to `doc` (Res1 glTF nodes are 0..3, points 3..5).
fn edit(doc: &mut GltfFile, e: &Edit) {
    if let Edit::PointDelete(g) = *e {
        return remove_node(doc, g);
    }
    let mut tree = doc.tree_mut();
    let n = &mut tree["nodes"];
    match *e {
        Edit::Scale(g, s) => n[g]["scale"] = json!(s),
        Edit::Move(g, d) | Edit::PointMove(g, d) => {
            let t: Vec<f32> = serde_json::from_value(n[g]["translation"].clone()).unwrap();
            n[g]["translation"] = json!([t[0] + d[0], t[1] + d[1], t[2] + d[2]]);
        }
        Edit::Turn(g, a) | Edit::PointTurn(g, a) => {
            let r: Vec<f32> = serde_json::from_value(n[g]["rotation"].clone()).unwrap();
            let q = glam::Quat::from_rotation_z(a) * glam::Quat::from_slice(&r);
            n[g]["rotation"] = json!(q.normalize().to_array());
        }
        Edit::PointRename(g) => n[g]["name"] = json!("renamed"),
        Edit::PointDelete(_) => unreachable!("handled above"),
    }
}

/// Deletes glTF node `g` (a leaf): out of its parent's children, later
/// indices shifted down, as an exporter writes a document without it.
fn remove_node(doc: &mut GltfFile, g: usize) {
    doc.tree_mut()["nodes"].as_array_mut().unwrap().remove(g);
    let fix = |list: &mut serde_json::Value| {
        let v: Vec<u64> = list
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|k| k.as_u64())
            .filter(|&k| k != g as u64)
            .map(|k| if k > g as u64 { k - 1 } else { k })
            .collect();
        *list = json!(v);
    };
    for n in doc.tree_mut()["nodes"].as_array_mut().unwrap() {
        if n.get("children").is_some() {
            fix(&mut n["children"]);
        }
    }
    fix(&mut doc.tree_mut()["scenes"][0]["nodes"]);
}

fn big(lo: f32) -> impl Strategy<Value = f32> {
    prop_oneof![lo..1.0f32, -1.0f32..-lo]
}

fn an_edit() -> impl Strategy<Value = Edit> {
    let v3 = || (big(1e-3), big(1e-3), big(1e-3)).prop_map(|(a, b, c)| [a, b, c]);
    prop_oneof![
        (0..3usize, (1.01f32..2.0, 1.01f32..2.0, 1.01f32..2.0))
            .prop_map(|(g, (a, b, c))| Edit::Scale(g, [a, b, c])),
        (0..3usize, v3()).prop_map(|(g, d)| Edit::Move(g, d)),
        (0..3usize, big(0.01)).prop_map(|(g, a)| Edit::Turn(g, a)),
        (3..5usize, v3()).prop_map(|(g, d)| Edit::PointMove(g, d)),
        (3..5usize, big(0.01)).prop_map(|(g, a)| Edit::PointTurn(g, a)),
        (3..5usize).prop_map(Edit::PointRename),
        (3..5usize).prop_map(Edit::PointDelete),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// gltf2msh never says "unchanged" for a glTF that differs from its base:
    /// one to three random object-level edits of the animated sample with
    /// control points are each written (the model differs) or warned.
    #[test]
    fn an_edited_document_is_never_unchanged(edits in proptest::collection::vec(an_edit(), 1..4)) {
        let (base, _, mut doc) = with_points();
        // Deletions last, at most one (indices of later nodes shift).
        let mut edits = edits;
        edits.sort_by_key(|e| matches!(e, Edit::PointDelete(_)));
        let first_delete = edits.iter().position(|e| matches!(e, Edit::PointDelete(_)));
        if let Some(i) = first_delete {
            edits.truncate(i + 1);
        }
        for e in &edits {
            edit(&mut doc, e);
        }
        let (_, unchanged) = points_of(&doc, &base);
        prop_assert!(!unchanged, "{edits:?}");
    }
}
