//! glTF export of a model built in code (no ../shared needed): exact node
//! TRS, accessor counts/min/max, animation times, GLB framing, extras, and
//! the world-matrix contract against the engine sampler.

mod export_eval;

use std::sync::Arc;

use mshgltf::anim::{QuatLayout, Sampler};
use mshgltf::convention::{self, ConventionChoices};
use mshgltf::gltf_export::{
    export, to_glb, to_gltf, BatchMaterial, CellChoice, ExportMaterial, ExportOptions, Exported,
    TextureImage, Up,
};
use mshgltf::msh::{AnimKey24, Batch20, Model, Node38, Nodes, Slot68, NONE16};

fn key(pos: [f32; 3], time: f32, q: [i16; 4]) -> AnimKey24 {
    AnimKey24 { pos, time, q }
}

/// Node 0: root, static, slot 0 in cell 0 and slot 1 in cell 6 (L1G1).
/// Node 1: child of 0, animated (keys at frames 0, 1, 3; frame_count 4),
/// slot 1 in cell 0. Slot 0 = batch 0 (base 0), slot 1 = batch 1 (base 3);
/// both batches index the shared vertex buffer.
fn model() -> Model {
    let mut n0 = Node38 {
        flags: 0x10,
        parent: NONE16,
        map_start: NONE16,
        fallback_key: 0,
        slots: [NONE16; 15],
    };
    n0.slots[0] = 0;
    n0.slots[6] = 1;
    let mut n1 = Node38 {
        flags: 0x1,
        parent: 0,
        map_start: 0,
        fallback_key: 3,
        slots: [NONE16; 15],
    };
    n1.slots[0] = 1;
    let s = 23170; // round(32767 * cos 45°)
    Model {
        nodes: Nodes::Node38(vec![n0, n1]),
        slots: vec![
            Slot68 {
                batch_start: 0,
                batch_count: 1,
                tri_start: 0,
                tri_count: 1,
                ..Default::default()
            },
            Slot68 {
                batch_start: 1,
                batch_count: 1,
                tri_start: 1,
                tri_count: 1,
                ..Default::default()
            },
        ],
        positions: vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, 0.0, 0.5],
            [2.0, 0.0, 0.5],
            [0.0, 0.0, 1.5],
        ],
        normals: Some(vec![
            [0, 0, 127, 0],
            [0, 0, 127, 0],
            [0, 0, 0, 0],
            [0, -128, 0, 7],
            [0, -127, 0, 0],
            [0, -127, 0, 0],
        ]),
        uvs: Some(vec![
            [0, 0],
            [1024, 0],
            [0, 1024],
            [-512, 4096],
            [1, 2],
            [3, 4],
        ]),
        indices: vec![0, 1, 2, 0, 1, 2],
        batches: vec![
            Batch20 {
                material_index: 0,
                index_count: 3,
                index_start: 0,
                base_vertex: 0,
                ..Default::default()
            },
            Batch20 {
                material_index: 1,
                index_count: 3,
                index_start: 3,
                base_vertex: 3,
                ..Default::default()
            },
        ],
        names: Some(vec![
            Some(b"hull".to_vec()),
            Some(vec![0xE3, 0xEE, 0xEB, 0xEE, 0xE2, 0xE0]),
        ]),
        res15: Some(vec![[1, 2, 3, 4, 5, 6, 7, 8]; 6]),
        keys: Some(vec![
            key([1.0, 2.0, 3.0], 0.0, [0, 0, 0, 32767]),
            key([0.0, 0.0, 1.0], 0.0, [0, 0, 0, 32767]),
            key([0.0, 1.0, 1.0], 1.0, [0, 0, s, s]),
            key([0.0, 3.0, 1.0], 3.0, [0, 0, 32767, 0]),
        ]),
        frame_map: Some(vec![1, 2, 2, 3]),
        frame_count: 4,
        ..Default::default()
    }
}

fn opts() -> ExportOptions {
    ExportOptions {
        source: "test:synthetic.msh".into(),
        sha256: "00".repeat(32),
        name: "synthetic".into(),
        ..Default::default()
    }
}

/// A real 2x2 RGBA PNG (one texel half transparent).
fn png() -> Vec<u8> {
    let img = image::RgbaImage::from_raw(
        2,
        2,
        vec![255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 9, 9, 9, 128],
    )
    .unwrap();
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

fn materials() -> Vec<ExportMaterial> {
    vec![ExportMaterial {
        key: BatchMaterial { key: 1, lit: false },
        name: Some("STEEL.3".into()),
        base_color: Some([0.5, 0.25, 1.0, 1.0]),
        texture: Some(Arc::new(TextureImage {
            name: "TX".into(),
            png: png().into(),
            has_alpha: true,
        })),
        ..Default::default()
    }]
}

/// Writes `glb` into `$MSHGLTF_EXPORT_DUMP/<name>.glb` when that variable is
/// set (for a manual `gltf-validate` run).
fn dump(name: &str, glb: &[u8]) {
    if let Some(d) = std::env::var_os("MSHGLTF_EXPORT_DUMP") {
        let d = std::path::PathBuf::from(d);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(format!("{name}.glb")), glb).unwrap();
    }
}

fn extras(v: &Option<Box<serde_json::value::RawValue>>) -> serde_json::Value {
    serde_json::from_str(v.as_ref().expect("extras present").get()).unwrap()
}

fn f32s(v: &Option<serde_json::Value>) -> Vec<f32> {
    v.as_ref()
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

/// Checks the report: decided conventions, counts and the one zero-normal
/// warning.
fn check_report(e: &Exported) {
    let d = e.report.conventions.as_ref().unwrap();
    // Seed-style model: Res10 names, key at +2, x,y,z,w; no WEAR (key by id,
    // unused).
    let c = d.conventions;
    assert_eq!(
        (c.names, c.batch, c.quat, c.wear_key),
        (
            convention::NameSource::Res10,
            convention::BatchLayout::Seed,
            QuatLayout::Xyzw,
            convention::WearKey::Id
        )
    );
    assert_eq!(d.quat.by, "file");
    assert_eq!(
        (
            e.report.nodes,
            e.report.meshes,
            e.report.primitives,
            e.report.animated_nodes
        ),
        (2, 2, 2, 1)
    );
    assert!(e.report.baked_nodes.is_empty());
    // Vertex 2 has a zero normal: one warning.
    assert_eq!(e.report.warnings.len(), 1, "{:?}", e.report.warnings);
    assert!(e.report.warnings[0].contains("zero normal"));
}

/// Checks node names, hierarchy, TRS in glTF axes, node and scene extras and
/// the generator.
fn check_nodes(r: &gltf_json::Root) {
    // Nodes: names (Windows-1251 "голова"), hierarchy, TRS in glTF axes.
    assert_eq!(r.nodes[0].name.as_deref(), Some("hull"));
    assert_eq!(r.nodes[1].name.as_deref(), Some("голова"));
    assert_eq!(
        r.nodes[0]
            .children
            .as_ref()
            .unwrap()
            .iter()
            .map(|i| i.value())
            .collect::<Vec<_>>(),
        vec![1]
    );
    assert_eq!(r.nodes[0].translation, Some([1.0, 3.0, -2.0]));
    assert_eq!(r.nodes[0].rotation.unwrap().0, [0.0, 0.0, 0.0, 1.0]);
    assert_eq!(r.nodes[1].translation, Some([0.0, 1.0, 0.0]));
    assert_eq!(r.nodes[1].rotation.unwrap().0, [0.0, 0.0, 0.0, 1.0]);
    assert!(r
        .nodes
        .iter()
        .all(|n| n.scale.is_none() && n.matrix.is_none()));
    assert_eq!(
        extras(&r.nodes[0].extras),
        serde_json::json!({"msh": {"node": 0, "flags": 16}})
    );
    assert_eq!(
        extras(&r.nodes[1].extras),
        serde_json::json!({"msh": {"node": 1, "flags": 1}})
    );
    assert_eq!(
        r.scenes[0]
            .nodes
            .iter()
            .map(|i| i.value())
            .collect::<Vec<_>>(),
        vec![0]
    );
    let se = extras(&r.scenes[0].extras);
    assert_eq!(
        se,
        serde_json::json!({"msh": {"fps": 24.0, "up": "y", "quat_layout": "xyzw",
            "source": "test:synthetic.msh", "sha256": "00".repeat(32),
            "lightmaps": false, "conventions": se["conventions"],
            "conventions_decided": se["msh"]["conventions_decided"]},
            "conventions": {"names": "res10", "material": "seed", "quat": "xyzw",
                "wear_key": "id", "uv": "signed"}})
    );
    assert!(r
        .asset
        .generator
        .as_deref()
        .unwrap()
        .starts_with("mshgltf "));
}

/// Checks mesh ↔ node links, mesh extras and each primitive's attributes and
/// POSITION/index accessors.
fn check_meshes(r: &gltf_json::Root) {
    // Meshes: slot 0 → node 0, slot 1 → node 1.
    assert_eq!(r.nodes[0].mesh.unwrap().value(), 0);
    assert_eq!(r.nodes[1].mesh.unwrap().value(), 1);
    assert_eq!(
        extras(&r.meshes[0].extras),
        serde_json::json!({"msh": {"slot": 0, "batches": [0, 1]}})
    );
    assert_eq!(
        extras(&r.meshes[1].extras),
        serde_json::json!({"msh": {"slot": 1, "batches": [1, 1]}})
    );
    for (mi, base, min, max) in [
        (0usize, 0u64, [0.0f32, 0.0, -1.0], [1.0f32, 0.0, 0.0]),
        (1, 3, [0.0, 0.5, 0.0], [2.0, 1.5, 0.0]),
    ] {
        let p = &r.meshes[mi].primitives[0];
        let mut names: Vec<String> = p
            .attributes
            .keys()
            .map(|k| k.as_ref().unwrap().to_string())
            .collect();
        names.sort();
        assert_eq!(names, vec!["NORMAL", "POSITION", "TEXCOORD_0", "_RES15"]);
        let pos = &r.accessors[p.attributes
            [&gltf_json::validation::Checked::Valid(gltf_json::mesh::Semantic::Positions)]
            .value()];
        assert_eq!(pos.count.0, 3);
        assert_eq!(pos.byte_offset.map_or(0, |o| o.0), base * 12);
        assert_eq!(f32s(&pos.min), min.to_vec(), "mesh {mi}");
        assert_eq!(f32s(&pos.max), max.to_vec(), "mesh {mi}");
        let idx = &r.accessors[p.indices.unwrap().value()];
        assert_eq!(idx.count.0, 3);
        assert_eq!(idx.byte_offset.map_or(0, |o| o.0), mi as u64 * 6);
    }
}

/// Checks the two materials (default and textured STEEL.3), their extras and
/// the image/texture/sampler counts.
fn check_materials(r: &gltf_json::Root) {
    // Materials: index 0 default, index 1 named, textured, OPAQUE (blend mode 0).
    assert_eq!(r.materials.len(), 2);
    assert_eq!(r.materials[0].name.as_deref(), Some("material0"));
    assert_eq!(r.materials[1].name.as_deref(), Some("STEEL.3"));
    assert!(r.materials.iter().all(|m| m.double_sided));
    assert_eq!(
        r.materials[1].pbr_metallic_roughness.base_color_factor.0,
        [0.5, 0.25, 1.0, 1.0]
    );
    assert_eq!(r.materials[1].pbr_metallic_roughness.metallic_factor.0, 0.0);
    assert_eq!(
        r.materials[1].pbr_metallic_roughness.roughness_factor.0,
        1.0
    );
    assert_eq!(
        extras(&r.materials[1].extras),
        serde_json::json!({"msh": {"material_index": 1, "name": "STEEL.3",
            "exported": {"color": [0.5, 0.25, 1.0, 1.0], "texture": "TX", "alpha_mode": "OPAQUE"}}})
    );
    assert_eq!(
        extras(&r.materials[0].extras),
        serde_json::json!({"msh": {"material_index": 0, "name": null,
            "exported": {"color": [1.0, 1.0, 1.0, 1.0], "texture": null, "alpha_mode": "OPAQUE"}}})
    );
    assert_eq!(r.images.len(), 1);
    assert_eq!(r.textures.len(), 1);
    assert_eq!(r.samplers.len(), 1);
}

/// Checks the one animation: channels, densified key count and times, and
/// rotation steps of at most 10 degrees.
fn check_animation(e: &Exported) {
    let r = &e.root;
    // Animation: node 1, keys at frames 0, 1, 3. Both segments rotate by 90
    // degrees, more than MAX_SEGMENT_ANGLE (10), so each is split into 9
    // pieces sampled from the engine: 1 + 9 + 9 = 19 keys (densified rotations).
    assert_eq!(r.animations.len(), 1);
    let a = &r.animations[0];
    assert_eq!(a.name.as_deref(), Some("synthetic"));
    assert_eq!(a.channels.len(), 2);
    let input = &r.accessors[a.samplers[0].input.value()];
    assert_eq!(input.count.0, 19);
    assert_eq!(f32s(&input.min), vec![0.0]);
    assert_eq!(f32s(&input.max), vec![3.0f32 / 24.0]);
    let glb = to_glb(e).unwrap();
    let ev = export_eval::Eval::new(&glb);
    let anim = ev.doc.animations().next().unwrap();
    for ch in anim.channels() {
        let rd = ch.reader(|_| Some(&ev.blob[..]));
        let times: Vec<f32> = rd.read_inputs().unwrap().collect();
        for f in [0.0f32, 1.0, 3.0] {
            assert!(times.contains(&(f / 24.0)), "key at frame {f} kept");
        }
        if let Some(gltf::animation::util::ReadOutputs::Rotations(r)) = rd.read_outputs() {
            let q: Vec<[f32; 4]> = r.into_f32().collect();
            for w in q.windows(2) {
                let d: f32 = (0..4).map(|k| w[0][k] * w[1][k]).sum();
                let angle = 2.0 * d.abs().min(1.0).acos();
                assert!(angle <= 10.0f32.to_radians() + 1e-4, "step of {angle} rad");
            }
        }
    }
}

/// Checks the vertex buffers of the GLB: normals, UVs, indices, positions
/// and the face normal standing in for a zero normal.
fn check_vertex_buffers(e: &Exported) {
    // Vertex buffer contents: normal of vertex 3 is (0, -128, 0)/127 → clamped,
    // A maps game -y to glTF +z; UV of vertex 3 = (-0.5, 4.0).
    let glb = to_glb(e).unwrap();
    dump("synthetic", &glb);
    let ev = export_eval::Eval::new(&glb);
    let prim = ev.doc.meshes().nth(1).unwrap().primitives().next().unwrap();
    let rd = prim.reader(|_| Some(&ev.blob[..]));
    let n: Vec<[f32; 3]> = rd.read_normals().unwrap().collect();
    assert_eq!(n[0], [0.0, 0.0, 1.0]);
    let uv: Vec<[f32; 2]> = rd.read_tex_coords(0).unwrap().into_f32().collect();
    assert_eq!(uv[0], [-0.5, 4.0]);
    assert_eq!(uv[1], [1.0 / 1024.0, 2.0 / 1024.0]);
    let idx: Vec<u32> = rd.read_indices().unwrap().into_u32().collect();
    assert_eq!(idx, vec![0, 1, 2]);
    let p: Vec<[f32; 3]> = rd.read_positions().unwrap().collect();
    assert_eq!(p, vec![[0.0, 0.5, 0.0], [2.0, 0.5, 0.0], [0.0, 1.5, 0.0]]);
    // Zero normal of vertex 2 (mesh 0) = face normal of triangle 0 in glTF
    // axes: game +z → glTF +y.
    let prim0 = ev.doc.meshes().next().unwrap().primitives().next().unwrap();
    let n0: Vec<[f32; 3]> = prim0
        .reader(|_| Some(&ev.blob[..]))
        .read_normals()
        .unwrap()
        .collect();
    assert_eq!(n0[2], [0.0, 1.0, 0.0]);
}

#[test]
fn nodes_meshes_accessors_animation() {
    let m = model();
    let e = export(&m, &materials(), &opts()).expect("export");
    let r = &e.root;
    check_report(&e);
    check_nodes(r);
    check_meshes(r);
    check_materials(r);
    check_animation(&e);
    check_vertex_buffers(&e);
}

#[test]
fn world_matrices_match_engine() {
    let m = model();
    let e = export(&m, &materials(), &opts()).unwrap();
    let ev = export_eval::Eval::new(&to_glb(&e).unwrap());
    let s = Sampler::new(&m, QuatLayout::Xyzw).unwrap();
    for t in [0.0f32, 0.5, 1.0, 1.25, 2.0, 2.7, 3.0, 3.9, 10.0] {
        let engine = s.world_matrices(t);
        let err = export_eval::max_error(&engine, &ev.worlds(t / 24.0));
        assert!(err < 1e-4, "t = {t}: max error {err}");
    }
}

#[test]
fn glb_and_gltf_framing() {
    let e = export(&model(), &materials(), &opts()).unwrap();
    let glb = to_glb(&e).unwrap();
    let u32at = |o: usize| u32::from_le_bytes(glb[o..o + 4].try_into().unwrap());
    assert_eq!(&glb[0..4], b"glTF");
    assert_eq!(u32at(4), 2);
    assert_eq!(u32at(8) as usize, glb.len());
    let jlen = u32at(12) as usize;
    assert_eq!(jlen % 4, 0);
    assert_eq!(&glb[16..20], b"JSON");
    let blen = u32at(20 + jlen) as usize;
    assert_eq!(&glb[24 + jlen..28 + jlen], b"BIN\0");
    assert_eq!(blen, e.bin.len());
    assert_eq!(e.bin.len() % 4, 0);
    assert_eq!(28 + jlen + blen, glb.len());
    assert_eq!(e.root.buffers[0].byte_length.0 as usize, e.bin.len());
    assert!(e.root.buffers[0].uri.is_none());
    for v in &e.root.buffer_views {
        assert_eq!(v.byte_offset.map_or(0, |o| o.0) % 4, 0);
    }

    let (json, bin) = to_gltf(&e, "synthetic.bin").unwrap();
    assert_eq!(bin, e.bin);
    let root: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(root["buffers"][0]["uri"], "synthetic.bin");
}

#[test]
fn all_cells_up_z_and_forced_layout() {
    let m = model();
    let o = ExportOptions {
        up: Up::Z,
        conventions: Some(convention::detect(
            &m,
            None,
            &ConventionChoices {
                quat: Some(QuatLayout::Wxyz),
                ..Default::default()
            },
        )),
        cells: CellChoice {
            state: 0,
            lod: 0,
            all_cells: true,
        },
        ..opts()
    };
    let e = export(&m, &[], &o).unwrap();
    dump("synthetic_all_cells", &to_glb(&e).unwrap());
    let r = &e.root;
    let d = e.report.conventions.as_ref().unwrap();
    assert_eq!(
        (d.conventions.quat, d.quat.by),
        (QuatLayout::Wxyz, "option")
    );
    // 2 nodes + cells: node 0 S0L0 and S1L1, node 1 S0L0.
    assert_eq!(r.nodes.len(), 5);
    let names: Vec<_> = r.nodes.iter().map(|n| n.name.clone().unwrap()).collect();
    assert_eq!(
        names,
        vec!["hull", "голова", "hull.S0L0", "hull.S1L1", "голова.S0L0"]
    );
    assert!(r.nodes[0].mesh.is_none() && r.nodes[1].mesh.is_none());
    assert_eq!(r.nodes[3].mesh.unwrap().value(), 1);
    assert_eq!(r.nodes[4].mesh.unwrap().value(), 1);
    assert_eq!(
        extras(&r.nodes[3].extras),
        serde_json::json!({"msh": {"node": 0, "cell": 6}})
    );
    assert_eq!(r.nodes[0].translation, Some([1.0, 2.0, 3.0]));
    assert_eq!(extras(&r.scenes[0].extras)["msh"]["up"], "z");
    assert_eq!(extras(&r.scenes[0].extras)["msh"]["quat_layout"], "wxyz");
    // No material passed: both default.
    assert_eq!(r.materials[1].name.as_deref(), Some("material1"));
    assert!(r.images.is_empty());

    // Another cell: state 1 lod 1 shows slot 1 on node 0 only.
    let o = ExportOptions {
        cells: CellChoice {
            state: 1,
            lod: 1,
            all_cells: false,
        },
        ..opts()
    };
    let e = export(&m, &[], &o).unwrap();
    assert_eq!(e.root.nodes[0].mesh.unwrap().value(), 0);
    assert_eq!(e.root.meshes.len(), 1);
    assert!(e.root.nodes[1].mesh.is_none());
    let bad = ExportOptions {
        cells: CellChoice {
            state: 3,
            lod: 0,
            all_cells: false,
        },
        ..opts()
    };
    assert_eq!(export(&m, &[], &bad).unwrap_err().rule(), "gltf.options");
}

#[test]
fn errors_are_typed() {
    let mut m = model();
    m.batches[1].base_vertex = 4;
    assert_eq!(
        export(&m, &[], &opts()).unwrap_err().rule(),
        "msh.index_range"
    );
    let mut m = model();
    if let Nodes::Node38(n) = &mut m.nodes {
        n[1].slots[0] = 9;
    }
    assert_eq!(
        export(&m, &[], &opts()).unwrap_err().rule(),
        "msh.slot_index"
    );
    let mut m = model();
    m.slots[1].batch_count = 5;
    assert_eq!(
        export(&m, &[], &opts()).unwrap_err().rule(),
        "msh.batch_range"
    );
}

#[test]
fn legacy_node_table() {
    let mut m = model();
    m.nodes = Nodes::Legacy24 { raw: vec![0; 24] };
    m.keys = Some(vec![key([0.0; 3], 0.0, [0, 0, 0, 32767])]);
    m.frame_map = None;
    m.frame_count = 1;
    let e = export(&m, &[], &opts()).unwrap();
    assert_eq!(e.root.nodes.len(), 1);
    assert_eq!(e.root.meshes.len(), 1);
    assert_eq!(e.root.meshes[0].primitives.len(), 2);
    assert!(e.root.animations.is_empty());
    assert!(e.report.warnings.iter().any(|w| w.contains("legacy")));
    dump("synthetic_legacy", &to_glb(&e).unwrap());
    export_eval::Eval::new(&to_glb(&e).unwrap());
}

#[test]
fn non_canonical_track_is_baked() {
    let mut m = model();
    // Frame map pointing frame 2 at key 1: not what §5.4 regenerates.
    m.frame_map = Some(vec![1, 2, 1, 3]);
    let e = export(&m, &[], &opts()).unwrap();
    assert_eq!(e.report.baked_nodes, vec![1]);
    let input = &e.root.accessors[e.root.animations[0].samplers[0].input.value()];
    assert_eq!(input.count.0, 4);
    dump("synthetic_baked", &to_glb(&e).unwrap());
    let ev = export_eval::Eval::new(&to_glb(&e).unwrap());
    let s = Sampler::new(&m, QuatLayout::Xyzw).unwrap();
    for f in 0..4 {
        let err = export_eval::max_error(&s.world_matrices(f as f32), &ev.worlds(f as f32 / 24.0));
        assert!(err < 1e-4, "frame {f}: {err}");
    }
}

#[test]
fn index_0xffff_gets_unsigned_int_indices() {
    // 65536 vertices; batch 1 uses Res6 value 0xFFFF (the UNSIGNED_SHORT
    // primitive-restart value), so it is written as UNSIGNED_INT.
    let mut m = model();
    m.positions = (0..65536u32)
        .map(|i| [i as f32, 0.0, (i % 7) as f32])
        .collect();
    m.normals = None;
    m.uvs = None;
    m.res15 = None;
    m.indices = vec![0, 1, 2, 0, 1, 0xFFFF];
    m.batches[1].base_vertex = 0;
    let e = export(&m, &[], &opts()).unwrap();
    let r = &e.root;
    let acc = |mi: usize| &r.accessors[r.meshes[mi].primitives[0].indices.unwrap().value()];
    use gltf_json::accessor::{ComponentType, GenericComponentType};
    use gltf_json::validation::Checked;
    assert!(matches!(
        acc(0).component_type,
        Checked::Valid(GenericComponentType(ComponentType::U16))
    ));
    assert!(matches!(
        acc(1).component_type,
        Checked::Valid(GenericComponentType(ComponentType::U32))
    ));
    let glb = to_glb(&e).unwrap();
    dump("synthetic_u32", &glb);
    let ev = export_eval::Eval::new(&glb);
    let prim = ev.doc.meshes().nth(1).unwrap().primitives().next().unwrap();
    let rd = prim.reader(|_| Some(&ev.blob[..]));
    assert_eq!(
        rd.read_indices().unwrap().into_u32().collect::<Vec<_>>(),
        vec![0, 1, 65535]
    );
    assert_eq!(rd.read_positions().unwrap().count(), 65536);
}
