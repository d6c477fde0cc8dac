//! gltf2msh without a base (authoring): procedural glTF scenes built in code
//! (hierarchies, matrices, an animated turret, multi-material meshes, more
//! than 65536 vertices, strips and fans, STEP/CUBICSPLINE channels,
//! non-integer key times, scaled and mirrored nodes) are authored, encoded,
//! read back strictly, and the engine pose of the result (anim::Sampler, the
//! runtime msh2gltf exports) reproduces the source scene in world space at
//! every integer frame: every triangle corner of every mesh node (matched by
//! node name) within 1e-3, whatever scale was baked into the geometry.
//!
//! The reference is an independent glTF evaluator written here with glam
//! (TRS hierarchy, STEP / LINEAR + slerp / CUBICSPLINE Hermite sampling).

mod common;

use std::collections::HashMap;
use std::process::Command;

use glam::{Mat4, Quat, Vec3};
use mshgltf::anim::{pick_quat_layout, QuatLayout, Sampler};
use mshgltf::convention;
use mshgltf::convert::{self, ConvertOptions, ModelRef};
use mshgltf::gltf_export::{axes, CellChoice, Up};
use mshgltf::gltf_import::{self, AuthorOptions, Authored, GltfFile};
use mshgltf::msh::{self, derive, Model, NONE16};
use serde_json::{json, Value};

/// World-space tolerance of the comparison (glTF units).
const TOL: f32 = 1e-3;

// ---------------------------------------------------------------------------
// A small glTF writer.

#[derive(Default)]
struct G {
    bin: Vec<u8>,
    accessors: Vec<Value>,
    views: Vec<Value>,
    meshes: Vec<Value>,
    nodes: Vec<Value>,
    materials: Vec<Value>,
    channels: Vec<Value>,
    samplers: Vec<Value>,
    extra: Vec<(String, Value)>,
}

impl G {
    fn view(&mut self, bytes: &[u8]) -> usize {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        let off = self.bin.len();
        self.bin.extend_from_slice(bytes);
        self.views
            .push(json!({"buffer": 0, "byteOffset": off, "byteLength": bytes.len()}));
        self.views.len() - 1
    }

    fn floats(&mut self, v: &[f32], ty: &str) -> usize {
        let n = match ty {
            "SCALAR" => 1,
            "VEC2" => 2,
            "VEC3" => 3,
            _ => 4,
        };
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        let view = self.view(&bytes);
        self.accessors.push(
            json!({"bufferView": view, "componentType": 5126, "count": v.len() / n, "type": ty}),
        );
        self.accessors.len() - 1
    }

    fn indices(&mut self, v: &[u32], comp: u32) -> usize {
        let bytes: Vec<u8> = match comp {
            5121 => v.iter().map(|&x| x as u8).collect(),
            5123 => v.iter().flat_map(|&x| (x as u16).to_le_bytes()).collect(),
            _ => v.iter().flat_map(|&x| x.to_le_bytes()).collect(),
        };
        let view = self.view(&bytes);
        self.accessors.push(
            json!({"bufferView": view, "componentType": comp, "count": v.len(), "type": "SCALAR"}),
        );
        self.accessors.len() - 1
    }

    /// A primitive over `pos` (flattened xyz) with optional normals, indices.
    fn prim(
        &mut self,
        pos: &[f32],
        nrm: Option<&[f32]>,
        idx: Option<(&[u32], u32)>,
        mode: u32,
        material: Option<usize>,
    ) -> Value {
        let mut attrs = json!({"POSITION": self.floats(pos, "VEC3")});
        if let Some(n) = nrm {
            attrs["NORMAL"] = json!(self.floats(n, "VEC3"));
        }
        let uv: Vec<f32> = pos
            .chunks(3)
            .flat_map(|p| [p[0] * 0.5, p[1] * 0.25])
            .collect();
        attrs["TEXCOORD_0"] = json!(self.floats(&uv, "VEC2"));
        let mut p = json!({"attributes": attrs, "mode": mode});
        if let Some((i, c)) = idx {
            p["indices"] = json!(self.indices(i, c));
        }
        if let Some(m) = material {
            p["material"] = json!(m);
        }
        p
    }

    fn mesh(&mut self, prims: Vec<Value>) -> usize {
        self.meshes.push(json!({"primitives": prims}));
        self.meshes.len() - 1
    }

    fn node(&mut self, v: Value) -> usize {
        self.nodes.push(v);
        self.nodes.len() - 1
    }

    fn material(&mut self, name: &str) -> usize {
        self.materials.push(json!({"name": name}));
        self.materials.len() - 1
    }

    /// A channel on `node`'s `path` with key times (seconds) and values.
    fn channel(&mut self, node: usize, path: &str, interp: &str, times: &[f32], values: &[f32]) {
        let ty = match path {
            "rotation" => "VEC4",
            _ => "VEC3",
        };
        let input = self.floats(times, "SCALAR");
        let output = self.floats(values, ty);
        self.samplers
            .push(json!({"input": input, "output": output, "interpolation": interp}));
        self.channels.push(
            json!({"sampler": self.samplers.len() - 1, "target": {"node": node, "path": path}}),
        );
    }

    fn finish(mut self, roots: &[usize]) -> GltfFile {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        let mut j = json!({
            "asset": {"version": "2.0"},
            "scene": 0,
            "scenes": [{"nodes": roots}],
            "nodes": self.nodes,
            "meshes": self.meshes,
            "accessors": self.accessors,
            "bufferViews": self.views,
            "buffers": [{"byteLength": self.bin.len()}],
        });
        if !self.materials.is_empty() {
            j["materials"] = json!(self.materials);
        }
        if !self.channels.is_empty() {
            j["animations"] = json!([{"channels": self.channels, "samplers": self.samplers}]);
        }
        for (k, v) in self.extra {
            j[k] = v;
        }
        GltfFile::new(j, vec![self.bin])
    }
}

/// A unit-ish box: 24 vertices with normals, 12 triangles (u16 indices).
fn box_prim(g: &mut G, size: [f32; 3], material: Option<usize>) -> Value {
    let mut pos = Vec::new();
    let mut nrm = Vec::new();
    let mut idx = Vec::new();
    for axis in 0..3 {
        for sign in [-1.0f32, 1.0] {
            let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
            let base = pos.len() as u32 / 3;
            for (a, b) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                let mut p = [0.0f32; 3];
                p[axis] = sign * size[axis];
                p[u] = a * size[u];
                p[v] = b * size[v];
                pos.extend_from_slice(&p);
                let mut n = [0.0f32; 3];
                n[axis] = sign;
                nrm.extend_from_slice(&n);
            }
            let q = if sign > 0.0 {
                [0, 1, 2, 0, 2, 3]
            } else {
                [0, 2, 1, 0, 3, 2]
            };
            idx.extend(q.iter().map(|&k| base + k));
        }
    }
    g.prim(&pos, Some(&nrm), Some((&idx, 5123)), 4, material)
}

fn quat_axis(axis: [f32; 3], angle: f32) -> [f32; 4] {
    let q = Quat::from_axis_angle(Vec3::from(axis).normalize(), angle);
    [q.x, q.y, q.z, q.w]
}

// ---------------------------------------------------------------------------
// Reference evaluator.

fn fl(v: &Value, k: &str) -> Option<Vec<f32>> {
    v.get(k)?
        .as_array()?
        .iter()
        .map(|x| x.as_f64().map(|f| f as f32))
        .collect()
}

fn read_f32(doc: &GltfFile, a: usize) -> Vec<f32> {
    doc.floats(a, doc.accessor(a).unwrap().ncomp, "test")
        .unwrap()
}

/// Value of sampler `s` at time `t` (seconds), `n` components.
fn sample(doc: &GltfFile, s: &Value, t: f32, n: usize, rot: bool) -> Vec<f32> {
    let times = read_f32(doc, s["input"].as_u64().unwrap() as usize);
    let vals = read_f32(doc, s["output"].as_u64().unwrap() as usize);
    let interp = s["interpolation"].as_str().unwrap_or("LINEAR");
    let cubic = interp == "CUBICSPLINE";
    let v = |k: usize, e: usize| -> Vec<f32> {
        let i = if cubic { 3 * k + e } else { k };
        vals[i * n..(i + 1) * n].to_vec()
    };
    let last = times.len() - 1;
    if t <= times[0] {
        return v(0, 1);
    }
    if t >= times[last] {
        return v(last, 1);
    }
    let k = times.iter().rposition(|&x| x <= t).unwrap();
    let dt = times[k + 1] - times[k];
    let u = (t - times[k]) / dt;
    let out: Vec<f32> = match interp {
        "STEP" => v(k, 1),
        "CUBICSPLINE" => {
            let (u2, u3) = (u * u, u * u * u);
            let (p0, m0, p1, m1) = (v(k, 1), v(k, 2), v(k + 1, 1), v(k + 1, 0));
            (0..n)
                .map(|c| {
                    (2.0 * u3 - 3.0 * u2 + 1.0) * p0[c]
                        + (u3 - 2.0 * u2 + u) * dt * m0[c]
                        + (-2.0 * u3 + 3.0 * u2) * p1[c]
                        + (u3 - u2) * dt * m1[c]
                })
                .collect()
        }
        _ if rot => {
            let (a, b) = (v(k, 1), v(k + 1, 1));
            let q = Quat::from_xyzw(a[0], a[1], a[2], a[3])
                .slerp(Quat::from_xyzw(b[0], b[1], b[2], b[3]), u);
            vec![q.x, q.y, q.z, q.w]
        }
        _ => {
            let (a, b) = (v(k, 1), v(k + 1, 1));
            (0..n).map(|c| a[c] + u * (b[c] - a[c])).collect()
        }
    };
    out
}

fn local(doc: &GltfFile, g: usize, t: f32) -> Mat4 {
    let nd = &doc.to_json()["nodes"][g];
    if let Some(m) = fl(nd, "matrix") {
        return Mat4::from_cols_slice(&m);
    }
    let mut tr = fl(nd, "translation").map_or(Vec3::ZERO, |v| Vec3::from_slice(&v));
    let mut r = fl(nd, "rotation").map_or(Quat::IDENTITY, |v| Quat::from_slice(&v));
    let mut s = fl(nd, "scale").map_or(Vec3::ONE, |v| Vec3::from_slice(&v));
    if let Some(anims) = doc.to_json()["animations"].as_array() {
        for a in anims {
            for c in a["channels"].as_array().unwrap() {
                if c["target"]["node"].as_u64() != Some(g as u64) {
                    continue;
                }
                let smp = &a["samplers"][c["sampler"].as_u64().unwrap() as usize];
                match c["target"]["path"].as_str().unwrap() {
                    "translation" => tr = Vec3::from_slice(&sample(doc, smp, t, 3, false)),
                    "rotation" => r = Quat::from_slice(&sample(doc, smp, t, 4, true)).normalize(),
                    "scale" => s = Vec3::from_slice(&sample(doc, smp, t, 3, false)),
                    _ => {}
                }
            }
        }
    }
    Mat4::from_scale_rotation_translation(s, r, tr)
}

/// Triangles (world-space corners) of every named mesh node at time `t`.
fn reference(doc: &GltfFile, t: f32) -> HashMap<String, Vec<[Vec3; 3]>> {
    let tree = doc.to_json();
    let nodes = tree["nodes"].as_array().unwrap();
    let mut parent = vec![None; nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        for c in n["children"].as_array().into_iter().flatten() {
            parent[c.as_u64().unwrap() as usize] = Some(i);
        }
    }
    let world = |g: usize| {
        let mut m = local(doc, g, t);
        let mut p = parent[g];
        while let Some(q) = p {
            m = local(doc, q, t) * m;
            p = parent[q];
        }
        m
    };
    let mut out = HashMap::new();
    for (g, n) in nodes.iter().enumerate() {
        let Some(mesh) = n["mesh"].as_u64() else {
            continue;
        };
        let w = world(g);
        let mut tris = Vec::new();
        for p in doc.to_json()["meshes"][mesh as usize]["primitives"]
            .as_array()
            .unwrap()
        {
            let pos = read_f32(doc, p["attributes"]["POSITION"].as_u64().unwrap() as usize);
            let count = pos.len() as u32 / 3;
            let idx: Vec<u32> = match p["indices"].as_u64() {
                Some(a) => doc.indices(a as usize).unwrap(),
                None => (0..count).collect(),
            };
            let mode = p["mode"].as_u64().unwrap_or(4);
            let list: Vec<[u32; 3]> = match mode {
                4 => idx.chunks(3).map(|c| [c[0], c[1], c[2]]).collect(),
                5 => (0..idx.len() - 2)
                    .map(|i| {
                        if i % 2 == 0 {
                            [idx[i], idx[i + 1], idx[i + 2]]
                        } else {
                            [idx[i + 1], idx[i], idx[i + 2]]
                        }
                    })
                    .collect(),
                6 => (1..idx.len() - 1)
                    .map(|i| [idx[0], idx[i], idx[i + 1]])
                    .collect(),
                _ => panic!("mode {mode}"),
            };
            for tri in list {
                if tri[0] == tri[1] || tri[1] == tri[2] || tri[0] == tri[2] {
                    continue;
                }
                tris.push(tri.map(|v| {
                    let v = v as usize;
                    w.transform_point3(Vec3::new(pos[3 * v], pos[3 * v + 1], pos[3 * v + 2]))
                }));
            }
        }
        out.insert(n["name"].as_str().unwrap().to_string(), tris);
    }
    out
}

// ---------------------------------------------------------------------------
// The authored model's engine pose.

/// Triangles (glTF world-space corners) of every named node's cell-0 slot.
fn authored(model: &Model, t: f32) -> HashMap<String, Vec<[Vec3; 3]>> {
    // Authored models are retail: w first (format-notes §6 R3).
    let s = Sampler::new(model, QuatLayout::Wxyz).unwrap();
    let world = s.world_matrices(t);
    let mut out = HashMap::new();
    for (i, n) in model.nodes38().iter().enumerate() {
        if n.slots[0] == NONE16 {
            continue;
        }
        let name = encoding_rs::WINDOWS_1251
            .decode(
                convention::NameSource::Res9
                    .node_name(model, i)
                    .unwrap_or(b""),
            )
            .0
            .into_owned();
        let m = &world[i];
        let slot = &model.slots[n.slots[0] as usize];
        let tris = derive::slot_triangles(model, slot)
            .into_iter()
            .map(|tri| {
                tri.map(|v| {
                    let p = model.positions[v as usize];
                    let row = |r: usize| {
                        m[4 * r] * p[0] + m[4 * r + 1] * p[1] + m[4 * r + 2] * p[2] + m[4 * r + 3]
                    };
                    Vec3::from(axes::vec3(Up::Y, [row(0), row(1), row(2)]))
                })
            })
            .collect();
        out.insert(name, tris);
    }
    out
}

/// Authors `doc`, writes and re-reads the model strictly, and compares the
/// world-space triangles at every integer frame `0..frames + 2`.
fn check(doc: &GltfFile, fps: f32, opts: AuthorOptions) -> Authored {
    let a = gltf_import::author(
        doc,
        &AuthorOptions {
            fps: Some(fps),
            ..opts
        },
    )
    .unwrap_or_else(|e| panic!("author: {e}"));
    msh::validate(&a.model).unwrap();
    let bytes = msh::encode(&a.model).unwrap();
    let back = msh::decode(&bytes, msh::Mode::Strict).unwrap().model;
    assert!(
        msh::encode(&back).unwrap() == bytes,
        "re-encoding changes the bytes"
    );
    a.wear.to_bytes().unwrap();
    let frames = back.frame_count + 2;
    let mut worst = 0.0f32;
    for f in 0..frames {
        let want = reference(doc, f as f32 / fps);
        let got = authored(&back, f as f32);
        assert_eq!(
            {
                let mut k: Vec<_> = want.keys().collect();
                k.sort();
                k
            },
            {
                let mut k: Vec<_> = got.keys().collect();
                k.sort();
                k
            },
            "mesh node names"
        );
        for (name, wt) in &want {
            let gt = &got[name];
            assert_eq!(wt.len(), gt.len(), "{name}: triangle count");
            for (k, (w, g)) in wt.iter().zip(gt).enumerate() {
                // Same corners; a mirrored node has its winding reversed.
                for c in w {
                    let d = g.iter().map(|x| x.distance(*c)).fold(f32::MAX, f32::min);
                    worst = worst.max(d);
                    assert!(
                        d <= TOL,
                        "frame {f} node {name} triangle {k}: corner {c} not within {TOL} of {g:?} (off by {d})"
                    );
                }
            }
        }
    }
    // msh2gltf exports the authored model.
    let opts = ConvertOptions {
        textures: false,
        fps,
        ..Default::default()
    };
    let r = ModelRef {
        source: "authored".into(),
        stem: "authored".into(),
        bytes: &bytes,
        wear: Some(&a.wear.to_bytes().unwrap()),
    };
    convert::convert(&r, None, &opts).unwrap_or_else(|e| panic!("msh2gltf: {e}"));
    eprintln!("worst world-space deviation {worst:e} over {frames} frames");
    a
}

// ---------------------------------------------------------------------------
// Scenes.

#[test]
fn hierarchy_matrices_and_materials() {
    let mut g = G::default();
    let steel = g.material("Steel plate #1");
    let glass = g.material("HULL_1.2");
    let b1 = box_prim(&mut g, [1.0, 0.5, 0.25], Some(steel));
    let b2 = box_prim(&mut g, [0.2, 0.2, 0.6], Some(glass));
    let b3 = box_prim(&mut g, [0.1, 0.3, 0.1], None);
    let multi = g.mesh(vec![b1, b2, b3]);
    let b4 = box_prim(&mut g, [0.3, 0.3, 0.3], Some(glass));
    let single = g.mesh(vec![b4]);
    let leaf = g.node(
        json!({"name": "Башня", "mesh": single, "translation": [0.0, 0.5, 0.2],
        "rotation": quat_axis([1.0, 1.0, 0.0], 0.7)}),
    );
    let m = Mat4::from_rotation_translation(
        Quat::from_axis_angle(Vec3::Y, 1.1),
        Vec3::new(0.5, 1.0, -0.5),
    );
    let mid = g.node(
        json!({"name": "mid", "mesh": multi, "matrix": m.to_cols_array(), "children": [leaf]}),
    );
    let empty = g.node(json!({"name": "empty", "translation": [0.0, 0.0, 1.0], "children": [mid]}));
    let other = g.node(json!({"name": "other", "mesh": single, "translation": [-1.0, 0.0, 0.0]}));
    let doc = g.finish(&[empty, other]);
    let a = check(&doc, 24.0, AuthorOptions::default());
    assert_eq!(a.model.nodes.len(), 4);
    // One slot per mesh (the single-box mesh shared by two nodes).
    assert_eq!(a.model.slots.len(), 2);
    assert_eq!(a.model.batches.len(), 4);
    let names: Vec<&str> = a.wear.materials.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["STEEL_PLATE__1.0", "HULL_1.2", "DEFAULT.0"]);
    assert_eq!(a.report.renamed_materials.len(), 1);
    // Retail Batch20 (format-notes §6 R2): key in +4's low byte, 0xFF =
    // unlit, +2 = 0, +6 = 0xFFFF.
    let mats: Vec<u16> = a.model.batches.iter().map(|b| b.opaque4).collect();
    assert_eq!(mats, [0xFF00, 0xFF01, 0xFF02, 0xFF01]);
    assert!(a
        .model
        .batches
        .iter()
        .all(|b| b.material_index == 0 && b.opaque6 == 0xFFFF));
    let d = convention::detect(&a.model, Some(&a.wear), &Default::default());
    assert_eq!(d.conventions, convention::Conventions::RETAIL);
    // Parents first, names in cp1251 in Res9 (retail), empty Res10 labels.
    let parents: Vec<u16> = a.model.nodes38().iter().map(|n| n.parent).collect();
    assert_eq!(parents, [NONE16, 0, 1, NONE16]);
    assert_eq!(
        convention::NameSource::Res9.node_name(&a.model, 2).unwrap(),
        &[0xC1, 0xE0, 0xF8, 0xED, 0xFF]
    );
    assert_eq!(a.model.node_name(2), None);
    assert_eq!(a.model.frame_count, 1);
}

#[test]
fn animated_turret_linear_step_cubic() {
    let mut g = G::default();
    let hull_p = box_prim(&mut g, [1.5, 0.4, 1.0], None);
    let hull_m = g.mesh(vec![hull_p]);
    let tur_p = box_prim(&mut g, [0.6, 0.3, 0.6], None);
    let tur_m = g.mesh(vec![tur_p]);
    let gun_p = box_prim(&mut g, [0.8, 0.08, 0.08], None);
    let gun_m = g.mesh(vec![gun_p]);
    let gun = g.node(json!({"name": "gun", "mesh": gun_m, "translation": [0.9, 0.1, 0.0]}));
    let turret = g.node(
        json!({"name": "turret", "mesh": tur_m, "translation": [0.0, 0.7, 0.0], "children": [gun]}),
    );
    let hull = g.node(json!({"name": "hull", "mesh": hull_m, "children": [turret]}));
    // Turret yaw: LINEAR at integer frames (fps 24), a full turn in 4 keys.
    let times: Vec<f32> = [0.0f32, 24.0, 48.0, 72.0]
        .iter()
        .map(|f| f / 24.0)
        .collect();
    let rots: Vec<f32> = [0.0f32, 2.0, 4.0, 6.0]
        .iter()
        .flat_map(|a| quat_axis([0.0, 1.0, 0.0], *a))
        .collect();
    g.channel(turret, "rotation", "LINEAR", &times, &rots);
    // Gun recoil: STEP at non-integer times.
    g.channel(
        gun,
        "translation",
        "STEP",
        &[0.3, 0.55, 1.01],
        &[0.9, 0.1, 0.0, 0.7, 0.1, 0.0, 0.9, 0.1, 0.0],
    );
    // Gun elevation: CUBICSPLINE at non-integer times (in-tangent, value, out-tangent).
    let q0 = quat_axis([0.0, 0.0, 1.0], 0.0);
    let q1 = quat_axis([0.0, 0.0, 1.0], 0.4);
    let q2 = quat_axis([0.0, 0.0, 1.0], 0.1);
    let z = [0.0f32; 4];
    let cub: Vec<f32> = [
        z,
        q0,
        [0.0, 0.0, 0.1, 0.0],
        [0.0; 4],
        q1,
        [0.0; 4],
        [0.0, 0.0, -0.1, 0.0],
        q2,
        z,
    ]
    .iter()
    .flatten()
    .copied()
    .collect();
    g.channel(gun, "rotation", "CUBICSPLINE", &[0.1, 1.37, 2.9], &cub);
    // Hull drives forward: CUBICSPLINE translation.
    let tr: Vec<f32> = [
        [0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.5, 0.0, 0.0],
        [1.0, 0.0, 0.5],
        [0.5, 0.0, 0.0],
        [0.0, 0.0, 0.0],
        [2.0, 0.0, 0.0],
        [0.0, 0.0, 0.0],
    ]
    .iter()
    .flatten()
    .copied()
    .collect();
    g.channel(hull, "translation", "CUBICSPLINE", &[0.0, 1.3, 2.45], &tr);
    let doc = g.finish(&[hull]);
    let a = check(&doc, 24.0, AuthorOptions::default());
    assert_eq!(a.report.animated_nodes, ["hull", "turret", "gun"]);
    // Last key: gun rotation at 2.9 s = frame 69.6 -> 70; turret at 72.
    assert_eq!(a.model.frame_count, 73);
    // Keys were reduced (the LINEAR turret is not one key per frame).
    let keys = a.model.keys.as_ref().unwrap().len();
    assert!(keys < 3 * 73, "{keys} keys");
    // Without reduction: one key per frame of every animated node.
    let b = check(
        &doc,
        24.0,
        AuthorOptions {
            reduce_keys: false,
            ..Default::default()
        },
    );
    assert_eq!(b.model.keys.as_ref().unwrap().len(), 60 + 73 + 71);
    // Another fps, same scene.
    let c = check(&doc, 30.0, AuthorOptions::default());
    assert_eq!(c.model.frame_count, 91);
}

#[test]
fn many_vertices_strips_fans_index_types() {
    let mut g = G::default();
    // A triangle soup of 70002 vertices (> 65536), u32 indices, no normals.
    let n = 70002usize;
    let mut pos = Vec::with_capacity(3 * n);
    for i in 0..n {
        let a = i as f32 * 0.001;
        let r = 1.0 + (i % 3) as f32 * 0.01;
        pos.extend_from_slice(&[r * a.cos(), (i % 7) as f32 * 0.01, r * a.sin()]);
    }
    let idx: Vec<u32> = (0..n as u32).collect();
    let soup = g.prim(&pos, None, Some((&idx, 5125)), 4, None);
    // A strip (u8 indices) and a fan (no indices).
    let strip_pos: Vec<f32> = (0..8)
        .flat_map(|i| [i as f32 * 0.2, (i % 2) as f32 * 0.3, 0.0])
        .collect();
    let strip_idx: Vec<u32> = vec![0, 1, 2, 3, 3, 4, 4, 5, 6, 7];
    let strip = g.prim(&strip_pos, None, Some((&strip_idx, 5121)), 5, None);
    let fan_pos: Vec<f32> = std::iter::once([0.0f32, 0.0, 0.0])
        .chain((0..6).map(|i| {
            let a = i as f32 * 0.5;
            [a.cos(), a.sin(), 0.2]
        }))
        .flatten()
        .collect();
    let fan = g.prim(&fan_pos, None, None, 6, None);
    let big = g.mesh(vec![soup, strip, fan]);
    let node =
        g.node(json!({"name": "big", "mesh": big, "rotation": quat_axis([0.0, 1.0, 0.0], 0.3)}));
    let doc = g.finish(&[node]);
    let a = check(&doc, 24.0, AuthorOptions::default());
    assert!(a.model.positions.len() > 65536);
    // 23334 triangles: at most 21845 per batch (u16 index count) -> 2 batches,
    // then the strip (4 non-degenerate triangles) and the fan (5).
    assert_eq!(a.model.batches.len(), 4);
    assert_eq!(a.model.batches[1].base_vertex, 3 * 21845);
    let tris: usize = a
        .model
        .batches
        .iter()
        .map(|b| b.index_count as usize / 3)
        .sum();
    assert_eq!(tris, 23334 + 4 + 5);
    assert_eq!(a.report.generated_normals, 3);
    // Generated normals are unit (flat): quantized length ~127.
    for nrm in a.model.normals.as_ref().unwrap().iter().take(1000) {
        let l =
            ((nrm[0] as f32).powi(2) + (nrm[1] as f32).powi(2) + (nrm[2] as f32).powi(2)).sqrt();
        assert!((l - 127.0).abs() < 2.0, "{nrm:?}");
    }
}

#[test]
fn vertex_split_keeps_shared_vertices_per_batch() {
    // Indexed grid with 66049 shared vertices but few triangles.
    let mut g = G::default();
    let side = 257usize;
    let pos: Vec<f32> = (0..side * side)
        .flat_map(|i| [(i % side) as f32 * 0.01, 0.0, (i / side) as f32 * 0.01])
        .collect();
    // Triangles only along the first and the last rows, so the batch splits on
    // vertices far apart in the index space.
    let mut idx = Vec::new();
    for row in [0usize, side - 2] {
        for c in 0..side - 1 {
            let a = (row * side + c) as u32;
            let s = side as u32;
            idx.extend_from_slice(&[a, a + s, a + 1, a + 1, a + s, a + s + 1]);
        }
    }
    let nrm: Vec<f32> = (0..side * side).flat_map(|_| [0.0f32, 1.0, 0.0]).collect();
    let p = g.prim(&pos, Some(&nrm), Some((&idx, 5125)), 4, None);
    let m = g.mesh(vec![p]);
    let node = g.node(json!({"name": "grid", "mesh": m}));
    let doc = g.finish(&[node]);
    let a = check(&doc, 24.0, AuthorOptions::default());
    // Only used vertices are stored, shared within the batch.
    assert_eq!(a.model.positions.len(), 4 * side);
    assert_eq!(a.model.batches.len(), 1);
}

#[test]
fn scaled_and_mirrored_nodes() {
    let mut g = G::default();
    let bp = box_prim(&mut g, [0.5, 0.4, 0.3], None);
    let bx = g.mesh(vec![bp]);
    // Uniform 2 at the root, non-uniform child rotated by 90° about Y
    // (axis-aligned: exact), mirrored grandchild, matrix with scale, and a
    // constant scale channel.
    let gg = g.node(
        json!({"name": "mirrored", "mesh": bx, "translation": [0.3, 0.2, 0.1],
        "scale": [-1.0, 1.0, 1.0]}),
    );
    let child = g.node(
        json!({"name": "stretched", "mesh": bx, "translation": [1.0, 0.0, 0.0],
        "rotation": quat_axis([0.0, 1.0, 0.0], std::f32::consts::FRAC_PI_2),
        "scale": [1.0, 0.5, 1.5], "children": [gg]}),
    );
    let m = Mat4::from_scale_rotation_translation(
        Vec3::new(0.5, 0.7, 1.2),
        Quat::from_axis_angle(Vec3::X, 0.4),
        Vec3::new(0.0, 1.0, 0.0),
    );
    let mat = g.node(json!({"name": "matrix", "mesh": bx, "matrix": m.to_cols_array()}));
    let spun = g.node(json!({"name": "spun", "mesh": bx, "translation": [0.0, 0.0, 1.0]}));
    let root = g.node(json!({"name": "root", "mesh": bx, "scale": [2.0, 2.0, 2.0],
        "children": [child, mat, spun]}));
    g.channel(
        root,
        "scale",
        "LINEAR",
        &[0.0, 1.0],
        &[2.0, 2.0, 2.0, 2.0, 2.0, 2.0],
    );
    let spin: Vec<f32> = [0.0f32, 1.5, 3.0]
        .iter()
        .flat_map(|a| quat_axis([0.3, 1.0, 0.0], *a))
        .collect();
    g.channel(spun, "rotation", "LINEAR", &[0.0, 0.5, 1.0], &spin);
    g.channel(
        spun,
        "translation",
        "LINEAR",
        &[0.0, 1.0],
        &[0.0, 0.0, 1.0, 0.5, 0.0, 1.0],
    );
    let doc = g.finish(&[root]);
    let a = check(&doc, 24.0, AuthorOptions::default());
    // One slot per (mesh, baked scale): root and spun share scale 2.
    assert_eq!(a.model.slots.len(), 4);
    assert_eq!(a.report.scaled_nodes.len(), 5);
    assert!(
        a.report
            .warnings
            .iter()
            .all(|w| !w.contains("approximated")),
        "{:?}",
        a.report.warnings
    );
}

#[test]
fn static_rotation_under_non_uniform_scale_is_baked_exactly() {
    // The child's shape is sheared in the glTF (a rotated box under a 1x3x1
    // scale): the residual of the polar decomposition holds the shear, so
    // the authored triangles match (check) and nothing is reported.
    let mut g = G::default();
    let bp = box_prim(&mut g, [0.5, 0.5, 0.5], None);
    let bx = g.mesh(vec![bp]);
    let child = g.node(
        json!({"name": "c", "mesh": bx, "translation": [0.4, 0.2, 0.0],
        "rotation": quat_axis([0.0, 0.0, 1.0], 0.5)}),
    );
    let root = g.node(json!({"name": "r", "scale": [1.0, 3.0, 1.0], "children": [child]}));
    let doc = g.finish(&[root]);
    let a = check(&doc, 24.0, AuthorOptions::default());
    assert!(a.report.sheared_nodes.is_empty(), "{:?}", a.report);
    assert!(a.report.warnings.is_empty(), "{:?}", a.report.warnings);
    assert_eq!(a.report.scaled_nodes, [0, 1]);
}

// ---------------------------------------------------------------------------
// Rigid baking under scaled, animated parents (issue 9).

/// glTF world matrix of node `g` at time `t` (reference evaluator).
fn ref_world(doc: &GltfFile, g: usize, t: f32) -> Mat4 {
    let tree = doc.to_json();
    let nodes = tree["nodes"].as_array().unwrap();
    let parent = |c: usize| {
        nodes.iter().position(|n| {
            n["children"]
                .as_array()
                .is_some_and(|ch| ch.iter().any(|x| x.as_u64() == Some(c as u64)))
        })
    };
    let mut m = local(doc, g, t);
    let mut p = parent(g);
    while let Some(q) = p {
        m = local(doc, q, t) * m;
        p = parent(q);
    }
    m
}

/// World origin (glTF axes) of every named Res1 node at frame `f`.
fn authored_origins(model: &Model, f: f32) -> HashMap<String, Vec3> {
    // Authored models are retail: w first (format-notes §6 R3).
    let s = Sampler::new(model, QuatLayout::Wxyz).unwrap();
    let world = s.world_matrices(f);
    (0..model.nodes38().len())
        .map(|i| {
            let name = encoding_rs::WINDOWS_1251
                .decode(
                    convention::NameSource::Res9
                        .node_name(model, i)
                        .unwrap_or(b""),
                )
                .0
                .into_owned();
            let m = &world[i];
            (name, Vec3::from(axes::vec3(Up::Y, [m[3], m[7], m[11]])))
        })
        .collect()
}

/// A Blender-style tank: hull scaled (2, 1, 0.5) and driving, a turret
/// yawing under it, a barrel pitching under the turret, a static antenna
/// on the turret, and a wheel spinning about the hull's stretched X axis.
fn scaled_tank() -> GltfFile {
    let mut g = G::default();
    let hp = box_prim(&mut g, [1.0, 0.4, 1.0], None);
    let hm = g.mesh(vec![hp]);
    let tp = box_prim(&mut g, [0.4, 0.2, 0.4], None);
    let tm = g.mesh(vec![tp]);
    let bp = box_prim(&mut g, [0.6, 0.05, 0.05], None);
    let bm = g.mesh(vec![bp]);
    let barrel = g.node(json!({"name": "barrel", "mesh": bm, "translation": [0.5, 0.1, 0.0]}));
    let antenna = g.node(
        json!({"name": "antenna", "mesh": bm, "translation": [-0.2, 0.3, 0.2],
        "rotation": quat_axis([0.0, 0.0, 1.0], 1.2), "scale": [0.5, 1.0, 1.0]}),
    );
    let turret = g.node(
        json!({"name": "turret", "mesh": tm, "translation": [0.3, 0.5, 0.0],
        "children": [barrel, antenna]}),
    );
    let wheel = g.node(json!({"name": "wheel", "mesh": tm, "translation": [-0.8, -0.4, 0.9]}));
    let hull = g.node(json!({"name": "hull", "mesh": hm, "scale": [2.0, 1.0, 0.5],
        "children": [turret, wheel]}));
    let yaw: Vec<f32> = [0.0f32, 1.5, 3.0, 4.5]
        .iter()
        .flat_map(|a| quat_axis([0.0, 1.0, 0.0], *a))
        .collect();
    g.channel(turret, "rotation", "LINEAR", &[0.0, 0.5, 1.0, 1.5], &yaw);
    let pitch: Vec<f32> = [0.0f32, 0.5, -0.2]
        .iter()
        .flat_map(|a| quat_axis([0.0, 0.0, 1.0], *a))
        .collect();
    g.channel(barrel, "rotation", "LINEAR", &[0.0, 0.6, 1.2], &pitch);
    let spin: Vec<f32> = [0.0f32, 2.0, 4.0]
        .iter()
        .flat_map(|a| quat_axis([1.0, 0.0, 0.0], *a))
        .collect();
    g.channel(wheel, "rotation", "LINEAR", &[0.0, 0.5, 1.0], &spin);
    g.channel(
        hull,
        "translation",
        "LINEAR",
        &[0.0, 1.5],
        &[0.0, 0.0, 0.0, 3.0, 0.0, 1.0],
    );
    g.finish(&[hull])
}

#[test]
fn rigid_baking_keeps_node_origins_under_scaled_parents() {
    let doc = scaled_tank();
    let fps = 24.0;
    let a = gltf_import::author(
        &doc,
        &AuthorOptions {
            fps: Some(fps),
            ..Default::default()
        },
    )
    .unwrap();
    let bytes = msh::encode(&a.model).unwrap();
    let back = msh::decode(&bytes, msh::Mode::Strict).unwrap().model;
    let names: HashMap<String, usize> = doc.to_json()["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, n)| (n["name"].as_str().unwrap().to_string(), i))
        .collect();
    let mut worst = 0.0f32;
    let mut shear = HashMap::<String, f32>::new();
    for f in 0..back.frame_count + 2 {
        let t = f as f32 / fps;
        let got = authored_origins(&back, f as f32);
        for (name, &g) in &names {
            let want = ref_world(&doc, g, t).w_axis.truncate();
            let d = got[name].distance(want);
            worst = worst.max(d);
            assert!(
                d <= 1e-3,
                "frame {f} node {name}: origin {} vs {want} (off by {d})",
                got[name]
            );
        }
        // Vertex error per node, to compare with the report.
        let want = reference(&doc, t);
        let have = authored(&back, f as f32);
        for (name, wt) in &want {
            for (w, h) in wt.iter().zip(&have[name]) {
                for (c, x) in w.iter().zip(h) {
                    let e = shear.entry(name.clone()).or_default();
                    *e = e.max(c.distance(*x));
                }
            }
        }
    }
    eprintln!("worst origin deviation {worst:e}; vertex errors {shear:?}");
    // Shear: the turret, barrel and antenna yaw under the (2, 1, 0.5) hull
    // (a yaw about Y mixes the X and Z scales), the wheel spins about X
    // (mixing the Y and Z scales): each is reported with the largest vertex
    // error, which matches the one measured here.
    let reported: HashMap<String, f64> = a
        .report
        .sheared_nodes
        .iter()
        .map(|s| {
            let name = encoding_rs::WINDOWS_1251
                .decode(
                    convention::NameSource::Res9
                        .node_name(&back, s.node)
                        .unwrap(),
                )
                .0
                .into_owned();
            (name, s.max_vertex_error)
        })
        .collect();
    for name in ["turret", "barrel", "antenna", "wheel"] {
        let r = reported
            .get(name)
            .copied()
            .unwrap_or_else(|| panic!("{name} not reported as sheared: {:?}", a.report.warnings));
        let m = f64::from(shear[name]);
        assert!(
            (r - m).abs() <= 2e-3,
            "{name}: reported vertex error {r}, measured {m}"
        );
        assert!(a
            .report
            .warnings
            .iter()
            .any(|w| w.contains(&format!("{name:?}")) && w.contains("largest vertex error")));
    }
    assert!(!reported.contains_key("hull"));
    assert!(shear["hull"] <= 1e-3);
    // The static scene at frame 0 is exact for every node.
    let want = reference(&doc, 0.0);
    let have = authored(&back, 0.0);
    for (name, wt) in &want {
        for (w, h) in wt.iter().zip(&have[name]) {
            for (c, x) in w.iter().zip(h) {
                assert!(c.distance(*x) <= 1e-3, "{name} at frame 0");
            }
        }
    }
}

#[test]
fn uniformly_scaled_animated_parents_are_exact() {
    // The same tank with a uniform hull scale: no shear, every triangle
    // corner matches at every frame (check), nothing reported.
    let mut doc = scaled_tank();
    for n in doc.tree_mut()["nodes"].as_array_mut().unwrap() {
        if n["name"] == "hull" {
            n["scale"] = json!([1.5, 1.5, 1.5]);
        }
    }
    let a = check(&doc, 24.0, AuthorOptions::default());
    assert!(a.report.sheared_nodes.is_empty(), "{:?}", a.report.warnings);
}

// ---------------------------------------------------------------------------
// Refusals.

fn refused(doc: &GltfFile, opts: &AuthorOptions) -> &'static str {
    gltf_import::author(doc, opts).unwrap_err().rule
}

fn simple() -> (G, usize, usize) {
    let mut g = G::default();
    let bp = box_prim(&mut g, [0.5, 0.5, 0.5], None);
    let bx = g.mesh(vec![bp]);
    let n = g.node(json!({"name": "n", "mesh": bx}));
    (g, bx, n)
}

#[test]
fn unsupported_inputs_are_refused_with_a_rule() {
    // Points.
    let (mut g, _, n) = simple();
    let pts = g.prim(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0], None, None, 0, None);
    let pm = g.mesh(vec![pts]);
    let p = g.node(json!({"name": "pts", "mesh": pm}));
    assert_eq!(
        refused(&g.finish(&[n, p]), &AuthorOptions::default()),
        "gltf.mode"
    );
    // Lines.
    let (mut g, _, n) = simple();
    let l = g.prim(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0], None, None, 1, None);
    let lm = g.mesh(vec![l]);
    let ln = g.node(json!({"name": "l", "mesh": lm}));
    assert_eq!(
        refused(&g.finish(&[n, ln]), &AuthorOptions::default()),
        "gltf.mode"
    );
    // Skin: refused, or the bind pose with ignore_skins.
    let (mut g, _, n) = simple();
    g.nodes[n]["skin"] = json!(0);
    let j = g.node(json!({"name": "joint"}));
    g.extra.push(("skins".into(), json!([{"joints": [j]}])));
    let doc = g.finish(&[n, j]);
    assert_eq!(refused(&doc, &AuthorOptions::default()), "gltf.skin");
    let ok = gltf_import::author(
        &doc,
        &AuthorOptions {
            ignore_skins: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(ok.report.warnings.iter().any(|w| w.contains("skins")));
    // Morph targets, and a morph-only animation.
    let (mut g, bx, n) = simple();
    let t = g.floats(&[0.0; 72], "VEC3");
    g.meshes[bx]["primitives"][0]["targets"] = json!([{"POSITION": t}]);
    let doc = g.finish(&[n]);
    assert_eq!(refused(&doc, &AuthorOptions::default()), "gltf.morph");
    let (mut g, _, n) = simple();
    let input = g.floats(&[0.0, 1.0], "SCALAR");
    let output = g.floats(&[0.0, 1.0], "SCALAR");
    g.samplers.push(json!({"input": input, "output": output}));
    g.channels
        .push(json!({"sampler": 0, "target": {"node": n, "path": "weights"}}));
    assert_eq!(
        refused(&g.finish(&[n]), &AuthorOptions::default()),
        "gltf.morph"
    );
    // Animated scale.
    let (mut g, _, n) = simple();
    g.channel(
        n,
        "scale",
        "LINEAR",
        &[0.0, 1.0],
        &[1.0, 1.0, 1.0, 2.0, 2.0, 2.0],
    );
    assert_eq!(
        refused(&g.finish(&[n]), &AuthorOptions::default()),
        "gltf.scale"
    );
    // A cycle.
    let (mut g, _, n) = simple();
    let a = g.node(json!({"name": "a", "children": [n]}));
    g.nodes[n]["children"] = json!([a]);
    assert_eq!(
        refused(&g.finish(&[a]), &AuthorOptions::default()),
        "gltf.hierarchy"
    );
    // A child that is not a node: the rule of `--base` matching too.
    let (mut g, _, n) = simple();
    g.nodes[n]["children"] = json!([99]);
    assert_eq!(
        refused(&g.finish(&[n]), &AuthorOptions::default()),
        "gltf.hierarchy"
    );
    // Nothing to convert.
    let mut g = G::default();
    let e = g.node(json!({"name": "e"}));
    assert_eq!(
        refused(&g.finish(&[e]), &AuthorOptions::default()),
        "gltf.empty"
    );
}

// ---------------------------------------------------------------------------
// msh2gltf → author: an exported sample comes back with the same engine pose.

#[test]
fn msh2gltf_export_authors_back_to_the_same_pose() {
    for (name, all_cells) in [
        ("anim_rotor.msh", false),
        ("lod_tower.msh", true),
        ("static_box.msh", false),
    ] {
        let cells = CellChoice {
            state: 0,
            lod: 0,
            all_cells,
        };
        let (base, _, doc) = common::export_sample(name, cells);
        let a = gltf_import::author(&doc, &AuthorOptions::default()).unwrap();
        let m = &a.model;
        assert_eq!(m.nodes.len(), base.nodes.len(), "{name}");
        let (sb, sa) = (
            Sampler::new(&base, pick_quat_layout(&base).0).unwrap(),
            Sampler::new(m, QuatLayout::Wxyz).unwrap(),
        );
        for f in 0..base.frame_count + 1 {
            let (wb, wa) = (sb.world_matrices(f as f32), sa.world_matrices(f as f32));
            for (i, (nb, na)) in base.nodes38().iter().zip(m.nodes38()).enumerate() {
                assert_eq!(nb.flags, na.flags);
                for c in 0..15 {
                    assert_eq!(
                        nb.slots[c] == NONE16,
                        na.slots[c] == NONE16,
                        "{name} node {i} cell {c}"
                    );
                    if nb.slots[c] == NONE16 || !(all_cells || c == 0) {
                        continue;
                    }
                    let tb = derive::slot_triangles(&base, &base.slots[nb.slots[c] as usize]);
                    let ta = derive::slot_triangles(m, &m.slots[na.slots[c] as usize]);
                    assert_eq!(tb.len(), ta.len());
                    let xf = |w: &[f32; 16], model: &Model, v: u32| {
                        let p = model.positions[v as usize];
                        Vec3::from_array(std::array::from_fn(|r| {
                            w[4 * r] * p[0]
                                + w[4 * r + 1] * p[1]
                                + w[4 * r + 2] * p[2]
                                + w[4 * r + 3]
                        }))
                    };
                    for (x, y) in tb.iter().zip(&ta) {
                        for k in 0..3 {
                            let d = xf(&wb[i], &base, x[k]).distance(xf(&wa[i], m, y[k]));
                            assert!(d <= TOL, "{name} frame {f} node {i} cell {c}: {d}");
                        }
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The command line.

/// The GLB of `doc` (its one buffer as the binary chunk).
fn glb(doc: &GltfFile) -> Vec<u8> {
    common::glb(&doc.to_json(), &doc.buffers[0])
}

fn gltf2msh(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_gltf2msh"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn cli_writes_model_and_wear_or_archive_entries() {
    let dir = tempfile::tempdir().unwrap();
    let (g, _, n) = simple();
    let doc = g.finish(&[n]);
    let input = dir.path().join("scene.glb");
    std::fs::write(&input, glb(&doc)).unwrap();
    let out = dir.path().join("NEW.msh");
    let o = gltf2msh(&[input.to_str().unwrap(), "-o", out.to_str().unwrap(), "-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let m = std::fs::read(&out).unwrap();
    msh::decode(&m, msh::Mode::Strict).unwrap();
    let wea = std::fs::read(dir.path().join("NEW.wea")).unwrap();
    assert_eq!(wea, b"1\r\n0 DEFAULT.0\r\n");
    // Existing outputs need --force.
    let o = gltf2msh(&[input.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));

    // --into: an archive copy with NEW.msh (type of the other .msh entries) and NEW.wea.
    let model0 = m.clone();
    let entries = [
        mshgltf::nres::Entry {
            type_id: 0x4853_454D,
            attr1: 0,
            attr2: 0,
            attr3: 0,
            name: b"OLD.msh",
            data: &model0,
        },
        mshgltf::nres::Entry {
            type_id: 0x5241_4557,
            attr1: 0,
            attr2: 0,
            attr3: 1,
            name: b"new.wea",
            data: b"1\r\n1 X.0\r\n",
        },
    ];
    let arch = dir.path().join("units.rlb");
    std::fs::write(&arch, mshgltf::nres::write(&entries).unwrap()).unwrap();
    let before = std::fs::read(&arch).unwrap();
    let copy = dir.path().join("units_new.rlb");
    let args = [
        input.to_str().unwrap(),
        "--into",
        arch.to_str().unwrap(),
        "--name",
        "NEW",
    ];
    // In place needs --force.
    let o = gltf2msh(&args);
    assert_eq!(o.status.code(), Some(2));
    let mut with_o = args.to_vec();
    with_o.extend(["-o", copy.to_str().unwrap()]);
    // The archive already has new.wea: refused without --replace-entries,
    // naming it; nothing written.
    let o = gltf2msh(&with_o);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("\"new.wea\"") && err.contains("--replace-entries"),
        "{err}"
    );
    assert!(!copy.exists());
    with_o.push("--replace-entries");
    let o = gltf2msh(&with_o);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(&arch).unwrap(), before);
    let bytes = std::fs::read(&copy).unwrap();
    let a = mshgltf::nres::read(&bytes, mshgltf::nres::Mode::Strict).unwrap();
    let names: Vec<&[u8]> = a.entries.iter().map(|e| e.name).collect();
    // new.wea replaced at its position, NEW.msh appended.
    assert_eq!(names, [&b"OLD.msh"[..], b"NEW.wea", b"NEW.msh"]);
    assert_eq!(a.entries[2].type_id, 0x4853_454D);
    assert_eq!((a.entries[1].type_id, a.entries[1].attr3), (0x5241_4557, 1));
    msh::decode(a.entries[2].data, msh::Mode::Strict).unwrap();
    let mut forced = args.to_vec();
    forced.extend(["--force", "--replace-entries"]);
    assert!(gltf2msh(&forced).status.success());
    assert_ne!(std::fs::read(&arch).unwrap(), before);
}

#[test]
fn cli_refusals_exit_1_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (mut g, _, n) = simple();
    let pts = g.prim(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0], None, None, 0, None);
    let pm = g.mesh(vec![pts]);
    let p = g.node(json!({"name": "pts", "mesh": pm}));
    let (mut s, _, sn) = simple();
    s.nodes[sn]["skin"] = json!(0);
    s.extra.push(("skins".into(), json!([{"joints": [sn]}])));
    let (mut w, _, wn) = simple();
    let input = w.floats(&[0.0, 1.0], "SCALAR");
    let output = w.floats(&[0.0, 1.0], "SCALAR");
    w.samplers.push(json!({"input": input, "output": output}));
    w.channels
        .push(json!({"sampler": 0, "target": {"node": wn, "path": "weights"}}));
    for (label, doc, rule) in [
        ("points", g.finish(&[n, p]), "gltf.mode"),
        ("skin", s.finish(&[sn]), "gltf.skin"),
        ("morph", w.finish(&[wn]), "gltf.morph"),
    ] {
        let input = dir.path().join(format!("{label}.glb"));
        std::fs::write(&input, glb(&doc)).unwrap();
        let out = dir.path().join(format!("{label}.msh"));
        let o = gltf2msh(&[input.to_str().unwrap(), "-o", out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{label}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(rule), "{label}: {err}");
        assert!(
            !out.exists() && !out.with_extension("wea").exists(),
            "{label}"
        );
    }
}

// ---------------------------------------------------------------------------
// Cells from names and MSFT_lod (issue 9).

#[test]
fn cells_from_names_and_msft_lod() {
    let mut g = G::default();
    let sizes = [0.5f32, 0.4, 0.3, 0.2];
    let meshes: Vec<usize> = sizes
        .iter()
        .map(|&s| {
            let p = box_prim(&mut g, [s, s, s], None);
            g.mesh(vec![p])
        })
        .collect();
    // hull: own mesh (cell 0), `.S1L0` (damaged, cell 5) and `.L0G2` (cell 2) children.
    let damaged = g.node(json!({"name": "hull.S1L0", "mesh": meshes[1]}));
    let old_style = g.node(json!({"name": "hull.L0G2", "mesh": meshes[2]}));
    let moved =
        g.node(json!({"name": "hull.S0L3", "mesh": meshes[3], "translation": [1.0, 0.0, 0.0]}));
    let hull =
        g.node(json!({"name": "hull", "mesh": meshes[0], "children": [damaged, old_style, moved]}));
    // tower: MSFT_lod levels 1 and 2 outside the scene.
    let l1 = g.node(json!({"name": "tower_lod1", "mesh": meshes[1]}));
    let l2 = g.node(json!({"name": "tower_lod2", "mesh": meshes[2]}));
    let tower = g.node(
        json!({"name": "tower", "mesh": meshes[0], "translation": [0.0, 2.0, 0.0],
        "extensions": {"MSFT_lod": {"ids": [l1, l2]}}}),
    );
    let doc = g.finish(&[hull, tower]);
    let a = gltf_import::author(&doc, &AuthorOptions::default()).unwrap();
    let m = &a.model;
    let names: Vec<String> = (0..m.nodes38().len())
        .map(|i| {
            String::from_utf8_lossy(convention::NameSource::Res9.node_name(m, i).unwrap())
                .into_owned()
        })
        .collect();
    // The moved child is not a carrier (it has a transform): it stays a node.
    assert_eq!(names, ["hull", "hull.S0L3", "tower"]);
    let tris = |node: usize, cell: usize| {
        let s = m.nodes38()[node].slots[cell];
        (s != NONE16).then(|| m.slots[s as usize].tri_count)
    };
    let filled =
        |node: usize| -> Vec<usize> { (0..15).filter(|&c| tris(node, c).is_some()).collect() };
    assert_eq!(filled(0), [0, 2, 5]);
    assert_eq!(filled(2), [0, 1, 2]);
    assert_eq!(tris(2, 1), Some(12));
    // The carriers' boxes: the slots hold their meshes (the sizes differ).
    let extent = |node: usize, cell: usize| {
        let s = &m.slots[m.nodes38()[node].slots[cell] as usize];
        derive::slot_triangles(m, s)
            .into_iter()
            .flatten()
            .map(|v| m.positions[v as usize][0])
            .fold(0.0f32, f32::max)
    };
    assert!((extent(0, 5) - 0.4).abs() < 1e-6);
    assert!((extent(0, 2) - 0.3).abs() < 1e-6);
    assert!((extent(2, 2) - 0.3).abs() < 1e-6);
    assert!(
        a.report
            .warnings
            .iter()
            .any(|w| w.contains("cell name 3 ignored")),
        "{:?}",
        a.report.warnings
    );
}

// ---------------------------------------------------------------------------
// Over the triangle limit (issue 9).

/// A `n` x `n` heightfield mesh (2 n² triangles, u32 indices).
fn big_grid(g: &mut G, n: usize) -> usize {
    let mut pos = Vec::with_capacity((n + 1) * (n + 1) * 3);
    for y in 0..=n {
        for x in 0..=n {
            let (u, v) = (x as f32 / n as f32, y as f32 / n as f32);
            pos.extend_from_slice(&[u * 20.0, 0.5 * (u * 7.0).sin() * (v * 5.0).cos(), v * 20.0]);
        }
    }
    let w = n as u32 + 1;
    let mut idx = Vec::with_capacity(n * n * 6);
    for y in 0..n as u32 {
        for x in 0..n as u32 {
            let a = y * w + x;
            idx.extend_from_slice(&[a, a + w, a + 1, a + 1, a + w, a + w + 1]);
        }
    }
    let nrm: Vec<f32> = (0..pos.len() / 3).flat_map(|_| [0.0, 1.0, 0.0]).collect();
    let p = g.prim(&pos, Some(&nrm), Some((&idx, 5125)), 4, None);
    g.mesh(vec![p])
}

#[test]
fn over_the_triangle_limit_refused_or_simplified() {
    let mut g = G::default();
    let m = big_grid(&mut g, 317); // 200 978 triangles
    let a = g.node(json!({"name": "terrain", "mesh": m}));
    let doc = g.finish(&[a]);
    let e = gltf_import::author(&doc, &AuthorOptions::default()).unwrap_err();
    assert_eq!(e.rule, "gltf.limits");
    assert!(
        e.detail.contains("200978 triangles") && e.detail.contains("--simplify"),
        "{e}"
    );
    let a = gltf_import::author(
        &doc,
        &AuthorOptions {
            simplify: true,
            ..Default::default()
        },
    )
    .unwrap();
    let s = a.report.simplified.clone().unwrap();
    assert_eq!(s.from, 200_978);
    assert!(s.to <= 65_535 && s.to > 40_000, "{s:?}");
    assert!(s.max_error > 0.0 && s.max_error < 0.05, "{s:?}");
    assert_eq!(a.report.triangles, s.to);
    msh::validate(&a.model).unwrap();
    let bytes = msh::encode(&a.model).unwrap();
    msh::decode(&bytes, msh::Mode::Strict).unwrap();
}

#[test]
fn cli_simplify_passes_the_triangle_limit() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = G::default();
    let m = big_grid(&mut g, 317); // 200 978 triangles
    let a = g.node(json!({"name": "terrain", "mesh": m}));
    let input = dir.path().join("grid.glb");
    std::fs::write(&input, glb(&g.finish(&[a]))).unwrap();
    let out = dir.path().join("grid.msh");
    let (i, o) = (input.to_str().unwrap(), out.to_str().unwrap());
    // Without --simplify: refused, the message suggests it, nothing written.
    let r = gltf2msh(&[i, "-o", o]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{err}");
    assert!(
        err.contains("200978 triangles") && err.contains("--simplify"),
        "{err}"
    );
    assert!(!out.exists());
    // With it: the simplifier runs and a strictly valid model is written.
    let r = gltf2msh(&[i, "-o", o, "--simplify"]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(0), "{err}");
    let m = msh::decode(&std::fs::read(&out).unwrap(), msh::Mode::Strict)
        .unwrap()
        .model;
    let tris = m.tris.as_ref().map_or(0, Vec::len);
    assert!(tris > 40_000 && tris <= 65_535, "{tris}");
}
