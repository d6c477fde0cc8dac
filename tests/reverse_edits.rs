//! gltf2msh with a base, on the committed samples: glTF edits made in code
//! (vertices, UVs, keys, timeline, triangles, names) come back quantized by
//! the seed rules, with regenerated bounds/Res7/Res19, strictly valid, and
//! everything not edited identical to the base; mismatched glTF is refused.

mod common;

use mshgltf::convention::NameSource;
use std::process::Command;

use mshgltf::anim::{self, decode_quat, QuatLayout};
use mshgltf::gltf_export::{axes, CellChoice, Up};
use mshgltf::gltf_import::{self, animation::quantize_gltf_rotation, GltfFile, ImportOptions};
use mshgltf::msh::{self, build, derive, Model};
use mshgltf::nres;
use serde_json::{json, Value};

use common::sample;

/// The base model and msh2gltf's glTF of it (JSON value + buffer).
fn exported(name: &str) -> (Model, Vec<u8>, GltfFile) {
    common::export_sample(name, CellChoice::default())
}

fn import(doc: &GltfFile, base: &Model) -> gltf_import::Imported {
    gltf_import::import_with_base(doc, base, &ImportOptions::default()).unwrap()
}

/// Encodes, then decodes strictly: the output is a valid model.
fn round(m: &Model) -> Model {
    let bytes = msh::encode(m).unwrap();
    msh::decode(&bytes, msh::Mode::Strict).unwrap().model
}

/// Byte offset in buffer 0 of element `i` of accessor `a`.
fn elem_offset(doc: &GltfFile, a: usize, i: usize) -> usize {
    let acc = doc.accessor_def(a).unwrap().to_value();
    let view = doc
        .buffer_view_def(acc["bufferView"].as_u64().unwrap() as usize)
        .unwrap()
        .to_value();
    let comps = match acc["type"].as_str().unwrap() {
        "SCALAR" => 1,
        "VEC2" => 2,
        "VEC3" => 3,
        _ => 4,
    };
    let csize = match acc["componentType"].as_u64().unwrap() {
        5121 | 5120 => 1,
        5123 | 5122 => 2,
        _ => 4,
    };
    let stride = view["byteStride"]
        .as_u64()
        .map_or(comps * csize, |s| s as usize);
    view["byteOffset"].as_u64().unwrap_or(0) as usize
        + acc["byteOffset"].as_u64().unwrap_or(0) as usize
        + i * stride
}

fn put_f32s(doc: &mut GltfFile, off: usize, v: &[f32]) {
    for (k, x) in v.iter().enumerate() {
        doc.buffers[0][off + 4 * k..off + 4 * k + 4].copy_from_slice(&x.to_le_bytes());
    }
}

/// Appends `data` to buffer 0 and returns a new accessor over it.
fn push_accessor(
    doc: &mut GltfFile,
    data: &[u8],
    count: usize,
    ctype: u32,
    ty: &str,
    minmax: Option<(f32, f32)>,
) -> usize {
    let b = &mut doc.buffers[0];
    while !b.len().is_multiple_of(4) {
        b.push(0);
    }
    let off = b.len();
    b.extend_from_slice(data);
    let len = b.len();
    doc.tree_mut()["buffers"][0]["byteLength"] = json!(len);
    let v = doc.push_buffer_view(json!({"buffer": 0, "byteOffset": off, "byteLength": data.len()}));
    let mut a = json!({"bufferView": v, "count": count, "componentType": ctype, "type": ty});
    if let Some((lo, hi)) = minmax {
        a["min"] = json!([lo]);
        a["max"] = json!([hi]);
    }
    doc.push_accessor(a)
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn prim(doc: &GltfFile, mesh: usize, p: usize) -> Value {
    doc.to_json()["meshes"][mesh]["primitives"][p].clone()
}

fn index_list(doc: &GltfFile, a: usize) -> Vec<u32> {
    doc.indices(a).unwrap()
}

/// Everything but the listed fields must equal the base.
fn same_except(a: &Model, b: &Model, fields: &[&str]) {
    let has = |f: &str| fields.contains(&f);
    if !has("positions") {
        assert_eq!(a.positions, b.positions, "positions");
    }
    if !has("uvs") {
        assert_eq!(a.uvs, b.uvs, "uvs");
    }
    assert_eq!(
        a.normals.as_ref().map(|n| n.len()),
        b.normals.as_ref().map(|n| n.len())
    );
    if !has("topology") {
        assert_eq!(a.indices, b.indices, "indices");
        assert_eq!(a.batches, b.batches, "batches");
    }
    if !has("tris") && !has("topology") {
        assert_eq!(a.tris, b.tris, "tris");
    }
    if !has("slots") {
        assert_eq!(a.slots, b.slots, "slots");
        assert_eq!(a.header, b.header, "header");
    }
    if !has("anim") {
        assert_eq!(a.keys, b.keys, "keys");
        assert_eq!(a.frame_map, b.frame_map, "frame map");
        assert_eq!(a.frame_count, b.frame_count);
        assert_eq!(a.nodes, b.nodes, "nodes");
    }
    if !has("names") {
        assert_eq!(a.names, b.names, "names");
    }
    assert_eq!(a.res15, b.res15, "res15");
    assert_eq!(a.res18, b.res18, "res18");
    assert_eq!(a.entries.len(), b.entries.len());
}

#[test]
fn unedited_samples_are_byte_identical() {
    for s in ["anim_rotor.msh", "lod_tower.msh", "static_box.msh"] {
        let (base, bytes, doc) = exported(s);
        let imp = import(&doc, &base);
        assert!(imp.report.unchanged, "{s}");
        assert_eq!(msh::encode(&imp.model).unwrap(), bytes, "{s}");
    }
}

#[test]
fn moved_vertex_is_stored_and_bounds_follow() {
    let (base, _, mut doc) = exported("lod_tower.msh");
    let p = prim(&doc, 0, 0);
    let pa = p["attributes"]["POSITION"].as_u64().unwrap() as usize;
    let idx = index_list(&doc, p["indices"].as_u64().unwrap() as usize);
    let i = idx[0] as usize;
    let v = base.batches[0].base_vertex as usize + i;
    let g = axes::vec3(Up::Y, base.positions[v]);
    let moved = [g[0] + 5.0, g[1] + 0.25, g[2] - 0.125];
    let off = elem_offset(&doc, pa, i);
    put_f32s(&mut doc, off, &moved);
    let imp = import(&doc, &base);
    let m = round(&imp.model);
    assert_eq!(m.positions[v], axes::vec3_inv(Up::Y, moved));
    for (k, (a, b)) in m.positions.iter().zip(&base.positions).enumerate() {
        if k != v {
            assert_eq!(a, b, "vertex {k}");
        }
    }
    // Slot 0 bounds recomputed, other slots keep their stored bounds.
    let (lo, hi, c, r) = derive::slot_bounds(&m, &m.slots[0]).unwrap();
    assert_eq!(
        (
            m.slots[0].aabb_min,
            m.slots[0].aabb_max,
            m.slots[0].sphere_center,
            m.slots[0].sphere_radius
        ),
        (lo, hi, c, r)
    );
    assert_ne!(m.slots[0].aabb_max, base.slots[0].aabb_max);
    assert_eq!(m.slots[0].tail, base.slots[0].tail);
    assert_eq!(&m.slots[1..], &base.slots[1..]);
    assert_ne!(m.header, base.header);
    // Res7: the face normals of the triangles using the vertex follow.
    let mut m2 = m.clone();
    derive::recompute_tri_descs(&mut m2);
    assert_eq!(m.tris, m2.tris);
    assert_eq!(imp.report.moved_vertices, 1);
    same_except(&m, &base, &["positions", "slots", "tris"]);
}

#[test]
fn moved_vertex_leaves_densified_tracks_alone() {
    // anim_rotor's export carries extra keys on the engine's curve
    // (rotations over 10 degrees per segment are densified,
    // gltf_export::anim); a geometry-only edit must not count them as an
    // animation edit: Res8, Res19 and the Res1 map fields stay the base's.
    let (base, _, mut doc) = exported("anim_rotor.msh");
    let stored = base.keys.as_ref().unwrap().len();
    let exported_keys: u64 = doc.to_json()["animations"][0]["samplers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            doc.accessor_def(s["input"].as_u64().unwrap() as usize)
                .unwrap()["count"]
                .as_u64()
                .unwrap()
        })
        .sum::<u64>()
        / 2;
    assert!(
        exported_keys as usize > stored,
        "the sample should have densified keys ({exported_keys} exported, {stored} stored)"
    );
    let p = prim(&doc, 0, 0);
    let pa = p["attributes"]["POSITION"].as_u64().unwrap() as usize;
    let i = index_list(&doc, p["indices"].as_u64().unwrap() as usize)[0] as usize;
    let v = base.batches[0].base_vertex as usize + i;
    let g = axes::vec3(Up::Y, base.positions[v]);
    let off = elem_offset(&doc, pa, i);
    put_f32s(&mut doc, off, &[g[0], g[1] + 0.25, g[2]]);
    let imp = import(&doc, &base);
    assert_eq!(imp.report.moved_vertices, 1);
    assert_eq!(imp.report.changed_tracks, Vec::<usize>::new());
    same_except(&round(&imp.model), &base, &["positions", "slots", "tris"]);
}

#[test]
fn changed_uv_and_normal_are_quantized() {
    let (base, _, mut doc) = exported("static_box.msh");
    let p = prim(&doc, 0, 0);
    let ua = p["attributes"]["TEXCOORD_0"].as_u64().unwrap() as usize;
    let na = p["attributes"]["NORMAL"].as_u64().unwrap() as usize;
    let v = base.batches[0].base_vertex as usize + 2;
    let off = elem_offset(&doc, ua, 2);
    put_f32s(&mut doc, off, &[0.3337, -1.7]);
    let n = [0.6f32, 0.0, 0.8];
    let off = elem_offset(&doc, na, 2);
    put_f32s(&mut doc, off, &n);
    let m = round(&import(&doc, &base).model);
    // Retail UVs are unsigned (format-notes §6 R6): the batch holding the
    // negative v moves by two whole turns (quant::uv_turns), so the edited
    // vertex stores round(0.3337*1024), round((-1.7+2)*1024) and every other
    // vertex of the batch the same texels two turns up; no triangle
    // straddles the u16 wrap.
    let uvs = m.uvs.as_ref().unwrap();
    assert_eq!(uvs[v], [342, 307]);
    let b = &base.batches[0];
    let in_batch: std::collections::BTreeSet<usize> = base.indices
        [b.index_start as usize..(b.index_start + u32::from(b.index_count)) as usize]
        .iter()
        .map(|&i| b.base_vertex as usize + i as usize)
        .collect();
    let base_uvs = base.uvs.as_ref().unwrap();
    for (k, (got, was)) in uvs.iter().zip(base_uvs).enumerate() {
        if k == v {
            continue;
        }
        let want = if in_batch.contains(&k) {
            [was[0], (was[1] as u16).wrapping_add(2048) as i16]
        } else {
            *was
        };
        assert_eq!(*got, want, "vertex {k}");
    }
    let gn = axes::vec3_inv(Up::Y, n);
    let q = build::quantize_normal(gn);
    assert_eq!(&m.normals.as_ref().unwrap()[v][..3], &q[..3]);
    assert_eq!(
        m.normals.as_ref().unwrap()[v][3],
        base.normals.as_ref().unwrap()[v][3]
    );
    let mut nb = base.normals.clone().unwrap();
    nb[v] = m.normals.as_ref().unwrap()[v];
    assert_eq!(m.normals.as_ref().unwrap(), &nb);
    same_except(&m, &base, &["uvs"]);
}

/// The rotor's animation: (sampler input accessor, translation output, rotation output).
fn rotor_channels(doc: &GltfFile) -> (usize, usize, usize, usize) {
    let a = &doc.to_json()["animations"][0];
    let ch = a["channels"].as_array().unwrap();
    let c = ch
        .iter()
        .find(|c| c["target"]["path"] == "rotation")
        .unwrap();
    let node = c["target"]["node"].as_u64().unwrap() as usize;
    let rs = &a["samplers"][c["sampler"].as_u64().unwrap() as usize];
    let tc = ch
        .iter()
        .find(|c| c["target"]["path"] == "translation" && c["target"]["node"] == node)
        .unwrap();
    let ts = &a["samplers"][tc["sampler"].as_u64().unwrap() as usize];
    (
        node,
        rs["input"].as_u64().unwrap() as usize,
        ts["output"].as_u64().unwrap() as usize,
        rs["output"].as_u64().unwrap() as usize,
    )
}

fn node_track(m: &Model, node: usize) -> Vec<msh::AnimKey24> {
    let t = anim::tracks(m).unwrap();
    t[node].keys(m).to_vec()
}

#[test]
fn rotated_key_is_quantized_and_res19_regenerated() {
    let (base, _, mut doc) = exported("anim_rotor.msh");
    let (node, input, _, ro) = rotor_channels(&doc);
    let r = [0.0f32, (0.3f32).sin(), 0.0, (0.3f32).cos()];
    // The glTF key of base key 1 (msh2gltf may have inserted densifying keys before it).
    let t1 = node_track(&base, node)[1].time / 24.0;
    let times = doc.floats(input, 1, "t").unwrap();
    let k1 = times.iter().position(|&t| (t - t1).abs() < 1e-6).unwrap();
    let off = elem_offset(&doc, ro, k1);
    put_f32s(&mut doc, off, &r);
    // Drop the densifying keys, which lie on the old curve.
    add_keys(&mut doc, &base, node, &[]);
    let imp = import(&doc, &base);
    let m = round(&imp.model);
    let (bt, nt) = (node_track(&base, node), node_track(&m, node));
    assert_eq!(bt.len(), nt.len());
    assert_eq!(nt[1].q, quantize_gltf_rotation(Up::Y, QuatLayout::Wxyz, r));
    assert_ne!(nt[1].q, bt[1].q);
    for k in 0..bt.len() {
        assert_eq!(nt[k].pos, bt[k].pos);
        assert_eq!(nt[k].time, bt[k].time);
        if k != 1 {
            assert_eq!(nt[k].q, bt[k].q);
        }
    }
    // Res19 regenerated canonically (same times: same map), strictly valid.
    let c = anim::canonical_anim(&anim::node_tracks(&m).unwrap()).unwrap();
    assert_eq!(m.frame_map.as_deref().unwrap(), c.frame_map.as_slice());
    assert_eq!(m.frame_count, c.frame_count);
    assert!(imp.report.animation_regenerated);
    assert_eq!(imp.report.changed_tracks, vec![node]);
    // The engine now shows the new rotation at that key's frame.
    let s = anim::Sampler::new(&m, QuatLayout::Wxyz).unwrap();
    let g = axes::engine_quat_to_gltf(Up::Y, s.node_pose(node, nt[1].time).q);
    let d = (0..4)
        .map(|k| (g[k] - r[k]).abs().min((g[k] + r[k]).abs()))
        .fold(0.0f32, f32::max);
    assert!(d < 1e-4, "{g:?} vs {r:?}");
    same_except(&m, &base, &["anim"]);
}

/// Replaces the rotor's channels by keys at `extra` frames added to the base keys.
fn add_keys(doc: &mut GltfFile, base: &Model, node: usize, extra: &[(f32, [f32; 3], [f32; 4])]) {
    let a = doc.to_json()["animations"][0].clone();
    let (_, input, to, ro) = rotor_channels(doc);
    let times = doc.floats(input, 1, "t").unwrap();
    let pos = doc.floats(to, 3, "p").unwrap();
    let rot = doc.floats(ro, 4, "r").unwrap();
    // Keep the authored keys (the base track's frames) and drop the keys
    // msh2gltf inserted to densify large rotations: this edit re-keys the
    // channel as a user would after deleting the helper keys.
    let base_times: Vec<f32> = node_track(base, node)
        .iter()
        .map(|k| k.time / 24.0)
        .collect();
    let mut keys: Vec<(f32, [f32; 3], [f32; 4])> = (0..times.len())
        .filter(|&i| base_times.iter().any(|&b| (b - times[i]).abs() < 1e-6))
        .map(|i| {
            (
                times[i],
                [pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]],
                [rot[4 * i], rot[4 * i + 1], rot[4 * i + 2], rot[4 * i + 3]],
            )
        })
        .collect();
    keys.extend_from_slice(extra);
    keys.sort_by(|a, b| a.0.total_cmp(&b.0));
    let n = keys.len();
    let t: Vec<f32> = keys.iter().map(|k| k.0).collect();
    let p: Vec<f32> = keys.iter().flat_map(|k| k.1).collect();
    let r: Vec<f32> = keys.iter().flat_map(|k| k.2).collect();
    let ti = push_accessor(
        doc,
        &f32_bytes(&t),
        n,
        5126,
        "SCALAR",
        Some((t[0], t[n - 1])),
    );
    let pi = push_accessor(doc, &f32_bytes(&p), n, 5126, "VEC3", None);
    let ri = push_accessor(doc, &f32_bytes(&r), n, 5126, "VEC4", None);
    let mut a2 = a.clone();
    for c in a2["channels"].as_array().unwrap().clone() {
        if c["target"]["node"].as_u64().unwrap() as usize != node {
            continue;
        }
        let s = c["sampler"].as_u64().unwrap() as usize;
        a2["samplers"][s]["input"] = json!(ti);
        a2["samplers"][s]["output"] = json!(if c["target"]["path"] == "rotation" {
            ri
        } else {
            pi
        });
    }
    doc.tree_mut()["animations"][0] = a2;
    let _ = base;
}

#[test]
fn added_key_and_extended_timeline() {
    let (base, _, mut doc) = exported("anim_rotor.msh");
    let (node, ..) = rotor_channels(&doc);
    let bt = node_track(&base, node);
    // A new key between the first two base keys, and one 10 frames past the end.
    let mid = (bt[0].time + bt[1].time) / 2.0;
    assert!(
        mid.fract() == 0.0 && mid != bt[0].time,
        "sample keys too close: {bt:?}"
    );
    let last = bt[bt.len() - 1].time + 10.0;
    let rot_a = [0.0, 0.0, (0.2f32).sin(), (0.2f32).cos()];
    let rot_b = [(0.4f32).sin(), 0.0, 0.0, (0.4f32).cos()];
    add_keys(
        &mut doc,
        &base,
        node,
        &[
            (mid / 24.0, [1.0, 2.0, 3.0], rot_a),
            (last / 24.0, [0.5, 0.5, 0.5], rot_b),
        ],
    );
    let imp = import(&doc, &base);
    let m = round(&imp.model);
    let nt = node_track(&m, node);
    assert_eq!(nt.len(), bt.len() + 2);
    let k = nt.iter().find(|k| k.time == mid).unwrap();
    assert_eq!(k.pos, axes::vec3_inv(Up::Y, [1.0, 2.0, 3.0]));
    assert_eq!(k.q, quantize_gltf_rotation(Up::Y, QuatLayout::Wxyz, rot_a));
    let kl = nt.last().unwrap();
    assert_eq!(kl.time, last);
    assert_eq!(kl.q, quantize_gltf_rotation(Up::Y, QuatLayout::Wxyz, rot_b));
    // Base keys keep their raw values.
    for b in &bt {
        let k = nt.iter().find(|k| k.time == b.time).unwrap();
        assert_eq!((k.pos, k.q), (b.pos, b.q));
    }
    // Timeline: frame_count = last + 1, every map block that long.
    assert_eq!(m.frame_count, last as u32 + 1);
    let animated = m
        .nodes38()
        .iter()
        .filter(|n| n.map_start != msh::NONE16)
        .count();
    assert_eq!(
        m.frame_map.as_ref().unwrap().len(),
        animated * m.frame_count as usize
    );
    let c = anim::canonical_anim(&anim::node_tracks(&m).unwrap()).unwrap();
    assert_eq!(m.frame_map.as_deref().unwrap(), c.frame_map.as_slice());
    // Other nodes' keys are unchanged.
    for (i, t) in anim::tracks(&base).unwrap().iter().enumerate() {
        if i != node {
            assert_eq!(node_track(&m, i), t.keys(&base).to_vec(), "node {i}");
        }
    }
    // Decoded engine pose at the new key.
    let s = anim::Sampler::new(&m, QuatLayout::Wxyz).unwrap();
    let q = s.node_pose(node, mid).q;
    assert_eq!(q, decode_quat(k.q, QuatLayout::Wxyz));
}

#[test]
fn deleted_triangle_rebuilds_the_slot() {
    let (base, _, mut doc) = exported("lod_tower.msh");
    let p = prim(&doc, 0, 0);
    let idx = index_list(&doc, p["indices"].as_u64().unwrap() as usize);
    let kept: Vec<u8> = idx[3..]
        .iter()
        .flat_map(|&i| (i as u16).to_le_bytes())
        .collect();
    let a = push_accessor(&mut doc, &kept, idx.len() - 3, 5123, "SCALAR", None);
    doc.tree_mut()["meshes"][0]["primitives"][0]["indices"] = json!(a);
    let imp = import(&doc, &base);
    let m = round(&imp.model);
    assert_eq!(imp.report.rebuilt_slots, vec![0]);
    assert_eq!(m.slots[0].tri_count, base.slots[0].tri_count - 1);
    assert_eq!(m.batches[0].index_count, base.batches[0].index_count - 3);
    assert_eq!(m.indices.len(), base.indices.len() - 3);
    let b0 = base.batches[0].index_start as usize;
    assert_eq!(&m.indices[b0..], &base.indices[b0 + 3..]);
    // Later batches keep their records, shifted by 3 indices; later slots keep everything but tri_start.
    for b in 1..base.batches.len() {
        let mut x = base.batches[b];
        x.index_start -= 3;
        assert_eq!(m.batches[b], x, "batch {b}");
    }
    for s in 1..base.slots.len() {
        let mut x = base.slots[s];
        x.tri_start -= 1;
        assert_eq!(m.slots[s], x, "slot {s}");
    }
    // Res7: the slot's links and normals are what the rules give; flags carried.
    let mut m2 = m.clone();
    derive::recompute_tri_descs(&mut m2);
    assert_eq!(m.tris, m2.tris);
    let (bt, mt) = (base.tris.as_ref().unwrap(), m.tris.as_ref().unwrap());
    assert_eq!(mt.len(), bt.len() - 1);
    for k in 0..mt.len() {
        assert_eq!((mt[k].flags, mt[k].sel), (bt[k + 1].flags, bt[k + 1].sel));
    }
    assert_eq!(m.positions, base.positions, "no vertex changes");
    same_except(&m, &base, &["topology", "slots"]);
}

#[test]
fn renamed_node_changes_its_res9_name_only() {
    let (base, _, mut doc) = exported("lod_tower.msh");
    doc.tree_mut()["nodes"][1]["name"] = json!("башня");
    let m = round(&import(&doc, &base).model);
    let (enc, _, _) = encoding_rs::WINDOWS_1251.encode("башня");
    // The samples are retail: names in Res9 (format-notes §6 R1).
    assert_eq!(NameSource::Res9.node_name(&m, 1), Some(&enc[..]));
    assert_eq!(
        m.raw_stream(9).unwrap().len(),
        base.raw_stream(9).unwrap().len()
    );
    same_except(&m, &base, &["names"]);
    // Blender's ".001" suffix is not a rename.
    let (_, _, mut doc) = exported("lod_tower.msh");
    let n = doc.to_json()["nodes"][1]["name"]
        .as_str()
        .unwrap()
        .to_string();
    doc.tree_mut()["nodes"][1]["name"] = json!(format!("{n}.001"));
    assert!(import(&doc, &base).report.unchanged);
}

#[test]
fn blender_like_reordering_is_not_an_edit() {
    // Drop the extras, rename with suffixes, reverse the node order of names...
    let (base, bytes, mut doc) = exported("lod_tower.msh");
    for n in doc.tree_mut()["nodes"].as_array_mut().unwrap() {
        n.as_object_mut().unwrap().remove("extras");
        let nm = n["name"].as_str().unwrap().to_string();
        n["name"] = json!(format!("{nm}.001"));
    }
    // ... and rotate each triangle's corners, reversing the triangle order.
    for mi in 0..doc.to_json()["meshes"].as_array().unwrap().len() {
        for pi in 0..doc.to_json()["meshes"][mi]["primitives"]
            .as_array()
            .unwrap()
            .len()
        {
            let p = prim(&doc, mi, pi);
            let idx = index_list(&doc, p["indices"].as_u64().unwrap() as usize);
            let mut tris: Vec<[u32; 3]> = idx.chunks(3).map(|t| [t[1], t[2], t[0]]).collect();
            tris.reverse();
            let data: Vec<u8> = tris
                .iter()
                .flatten()
                .flat_map(|&i| i.to_le_bytes())
                .collect();
            let a = push_accessor(&mut doc, &data, idx.len(), 5125, "SCALAR", None);
            doc.tree_mut()["meshes"][mi]["primitives"][pi]["indices"] = json!(a);
        }
    }
    let imp = import(&doc, &base);
    assert!(imp.report.unchanged, "{:?}", imp.report);
    assert_eq!(msh::encode(&imp.model).unwrap(), bytes);
}

/// The GLB of `doc`: its buffer `uri` dropped, its one buffer padded with
/// zeros to 4 bytes as the binary chunk.
fn glb(doc: &GltfFile) -> Vec<u8> {
    let mut j = doc.to_json();
    j["buffers"][0].as_object_mut().unwrap().remove("uri");
    let mut bin = doc.buffers[0].clone();
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
    common::glb(&j, &bin)
}

fn gltf2msh(args: &[&std::ffi::OsStr]) -> (i32, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_gltf2msh"))
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// An in-place edit of a document.
type Edit = Box<dyn Fn(&mut GltfFile)>;

#[test]
fn mismatched_gltf_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let base_path = sample("lod_tower.msh");
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            "lines",
            Box::new(|d: &mut GltfFile| {
                d.tree_mut()["meshes"][0]["primitives"][0]["mode"] = json!(1)
            }),
            "gltf.mode",
        ),
        (
            "skin",
            Box::new(|d: &mut GltfFile| {
                d.tree_mut()["skins"] = json!([{"joints": [0]}]);
                d.tree_mut()["nodes"][0]["skin"] = json!(0);
            }),
            "gltf.skin",
        ),
        (
            "extra node",
            Box::new(|d: &mut GltfFile| {
                d.tree_mut()["nodes"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"name": "intruder"}));
                d.tree_mut()["scenes"][0]["nodes"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!(4));
            }),
            "gltf.match.node",
        ),
        (
            "removed node",
            Box::new(|d: &mut GltfFile| {
                let mut tree = d.tree_mut();
                let nodes = tree["nodes"].as_array_mut().unwrap();
                nodes.pop();
                for n in nodes.iter_mut() {
                    if let Some(c) = n.get_mut("children").and_then(Value::as_array_mut) {
                        c.retain(|x| x != 3);
                    }
                }
                tree["scenes"][0]["nodes"]
                    .as_array_mut()
                    .unwrap()
                    .retain(|x| x != 3);
            }),
            "gltf.match.node",
        ),
        (
            "reparented",
            Box::new(|d: &mut GltfFile| {
                let mut tree = d.tree_mut();
                let nodes = tree["nodes"].as_array_mut().unwrap();
                for n in nodes.iter_mut() {
                    n.as_object_mut().unwrap().remove("children");
                }
                tree["scenes"][0]["nodes"] = json!([0, 1, 2, 3]);
            }),
            "gltf.hierarchy",
        ),
    ];
    for (what, edit, rule) in cases {
        let (base, _, mut doc) = exported("lod_tower.msh");
        edit(&mut doc);
        let e = gltf_import::import_with_base(&doc, &base, &ImportOptions::default()).unwrap_err();
        assert_eq!(e.rule, rule, "{what}: {e}");
        let input = dir.path().join("in.glb");
        std::fs::write(&input, glb(&doc)).unwrap();
        let out = dir.path().join("out.msh");
        let (code, err) = gltf2msh(&[
            input.as_os_str(),
            "--base".as_ref(),
            base_path.as_os_str(),
            "-o".as_ref(),
            out.as_os_str(),
        ]);
        assert_eq!(code, 1, "{what}: {err}");
        assert!(err.contains(rule), "{what}: {err}");
        assert!(!out.exists(), "{what}: output written");
    }
    // A foreign scene: the rotor's glTF onto the tower.
    let (_, _, doc) = exported("anim_rotor.msh");
    let input = dir.path().join("rotor.glb");
    std::fs::write(&input, glb(&doc)).unwrap();
    let out = dir.path().join("out.msh");
    let (code, err) = gltf2msh(&[
        input.as_os_str(),
        "--base".as_ref(),
        base_path.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("gltf.match"), "{err}");
    assert!(!out.exists());
}

#[test]
fn cli_default_output_and_guards() {
    let dir = tempfile::tempdir().unwrap();
    let (_, bytes, doc) = exported("anim_rotor.msh");
    let input = dir.path().join("rotor.glb");
    std::fs::write(&input, glb(&doc)).unwrap();
    let base = dir.path().join("orig.msh");
    std::fs::write(&base, &bytes).unwrap();
    let (code, err) = gltf2msh(&[input.as_os_str(), "--base".as_ref(), base.as_os_str()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(dir.path().join("rotor.msh")).unwrap(), bytes);
    // Existing output without --force: exit 2; with --force: ok.
    let (code, _) = gltf2msh(&[input.as_os_str(), "--base".as_ref(), base.as_os_str()]);
    assert_eq!(code, 2);
    let (code, _) = gltf2msh(&[
        input.as_os_str(),
        "--base".as_ref(),
        base.as_os_str(),
        "--force".as_ref(),
    ]);
    assert_eq!(code, 0);
    // The default output IS the base: refused even with --force.
    let base2 = dir.path().join("rotor.msh");
    let (code, err) = gltf2msh(&[
        input.as_os_str(),
        "--base".as_ref(),
        base2.as_os_str(),
        "--force".as_ref(),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("-o"), "{err}");
    assert_eq!(std::fs::read(&base2).unwrap(), bytes);
    // No base: a new model is authored (tests/author_scenes.rs); the default
    // output rotor.msh exists, so exit 2 without --force.
    let (code, err) = gltf2msh(&[input.as_os_str()]);
    assert_eq!(code, 2, "{err}");
    let new = dir.path().join("new.msh");
    let (code, err) = gltf2msh(&[input.as_os_str(), "-o".as_ref(), new.as_os_str()]);
    assert_eq!(code, 0, "{err}");
    assert!(dir.path().join("new.wea").exists());
    // Report file.
    let rep = dir.path().join("r.json");
    let out = dir.path().join("x.msh");
    let (code, _) = gltf2msh(&[
        input.as_os_str(),
        "--base".as_ref(),
        base.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
        "--report".as_ref(),
        rep.as_os_str(),
        "-q".as_ref(),
    ]);
    assert_eq!(code, 0);
    let r: Value = serde_json::from_slice(&std::fs::read(&rep).unwrap()).unwrap();
    assert_eq!(r["ok"], json!(true));
    assert_eq!(r["import"]["unchanged"], json!(true));
}

#[test]
fn archive_entry_is_replaced_alone() {
    let dir = tempfile::tempdir().unwrap();
    let tower = std::fs::read(sample("lod_tower.msh")).unwrap();
    let rotor = std::fs::read(sample("anim_rotor.msh")).unwrap();
    let entries = [
        nres::Entry {
            type_id: 0,
            attr1: 1,
            attr2: 2,
            attr3: 3,
            name: b"TOWER.MSH",
            data: &tower,
        },
        nres::Entry {
            type_id: 0x5241_4557,
            attr1: 0,
            attr2: 0,
            attr3: 0,
            name: b"tower.wea",
            data: b"1\r\n0 DEFAULT\r\n",
        },
        nres::Entry {
            type_id: 0,
            attr1: 4,
            attr2: 5,
            attr3: 6,
            name: b"rotor.msh",
            data: &rotor,
        },
    ];
    let arch = dir.path().join("units.rlb");
    std::fs::write(&arch, nres::write(&entries).unwrap()).unwrap();
    let (base, _, mut doc) = exported("lod_tower.msh");
    doc.tree_mut()["nodes"][0]["name"] = json!("renamed");
    let input = dir.path().join("t.glb");
    std::fs::write(&input, glb(&doc)).unwrap();
    let out = dir.path().join("new.rlb");
    let spec = format!("{}:tower.msh", arch.display());
    let (code, err) = gltf2msh(&[
        input.as_os_str(),
        "--base".as_ref(),
        spec.as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    assert_eq!(code, 0, "{err}");
    let data = std::fs::read(&out).unwrap();
    let a = nres::read(&data, nres::Mode::Strict).unwrap();
    assert_eq!(a.entries.len(), 3);
    assert_eq!(a.entries[1], entries[1]);
    assert_eq!(a.entries[2], entries[2]);
    assert_eq!(
        (a.entries[0].name, a.entries[0].attr1, a.entries[0].attr3),
        (&b"TOWER.MSH"[..], 1, 3)
    );
    let m = msh::decode(a.entries[0].data, msh::Mode::Strict)
        .unwrap()
        .model;
    assert_eq!(NameSource::Res9.node_name(&m, 0), Some(&b"renamed"[..]));
    same_except(&m, &base, &["names"]);
    // -o model.msh writes the bare model.
    let bare = dir.path().join("bare.msh");
    let (code, _) = gltf2msh(&[
        input.as_os_str(),
        "--base".as_ref(),
        spec.as_ref(),
        "-o".as_ref(),
        bare.as_os_str(),
    ]);
    assert_eq!(code, 0);
    assert_eq!(std::fs::read(&bare).unwrap(), a.entries[0].data);
    // The base archive is untouched.
    assert_eq!(
        std::fs::read(&arch).unwrap(),
        nres::write(&entries).unwrap()
    );
}

#[test]
fn step_and_cubic_channels_are_resampled() {
    let (base, _, mut doc) = exported("anim_rotor.msh");
    let (node, ..) = rotor_channels(&doc);
    // STEP everywhere: the engine must hold each value until the next key.
    for s in doc.tree_mut()["animations"][0]["samplers"]
        .as_array_mut()
        .unwrap()
    {
        s["interpolation"] = json!("STEP");
    }
    let m = round(&import(&doc, &base).model);
    let bt = node_track(&base, node);
    let s = anim::Sampler::new(&m, QuatLayout::Wxyz).unwrap();
    for w in bt.windows(2) {
        for f in w[0].time as u32..w[1].time as u32 {
            let p = s.node_pose(node, f as f32);
            for c in 0..3 {
                assert!(
                    (p.pos[c] - w[0].pos[c]).abs() <= 1e-4,
                    "frame {f}: {:?} vs {:?}",
                    p.pos,
                    w[0].pos
                );
            }
        }
    }
    assert_eq!(m.frame_count, base.frame_count);
}

/// Warnings of `imp` that name an unplayed key of `path` on Res1 `node`.
fn unplayed(imp: &gltf_import::Imported, node: usize, path: &str) -> Vec<String> {
    imp.report
        .warnings
        .iter()
        .filter(|w| w.starts_with(&format!("Res1 node {node} ")) && w.contains(path))
        .filter(|w| w.contains("not played"))
        .cloned()
        .collect()
}

#[test]
fn unedited_export_reports_no_unplayed_key() {
    let (base, _, doc) = exported("anim_rotor.msh");
    let imp = import(&doc, &base);
    assert!(imp.report.unchanged);
    let w: Vec<&String> = imp
        .report
        .warnings
        .iter()
        .filter(|w| w.contains("not played"))
        .collect();
    assert!(w.is_empty(), "{w:?}");
}

#[test]
fn half_frame_keys_are_reported_with_node_channel_and_time() {
    let (base, _, doc0) = exported("anim_rotor.msh");
    let (node, ..) = rotor_channels(&doc0);
    let bt = node_track(&base, node);
    let s = anim::Sampler::new(&base, QuatLayout::Wxyz).unwrap();
    let mid = bt[0].time + 1.5;
    assert!(mid < bt[1].time, "{bt:?}");
    let p = s.node_pose(node, mid);
    let on_curve_t = axes::vec3(Up::Y, p.pos);
    let on_curve_r = axes::engine_quat_to_gltf(Up::Y, p.q);
    // A key added at a half frame on the engine's curve: nothing is lost.
    let mut doc = doc0.clone();
    add_keys(
        &mut doc,
        &base,
        node,
        &[(mid / 24.0, on_curve_t, on_curve_r)],
    );
    let imp = import(&doc, &base);
    assert!(
        unplayed(&imp, node, "rotation").is_empty(),
        "{:?}",
        imp.report.warnings
    );
    assert!(unplayed(&imp, node, "translation").is_empty());
    // The same key edited (rotation and translation off the curve): the
    // whole frames are unchanged, the edit cannot be stored, and it is
    // reported naming the node, the channel and the time.
    let mut doc = doc0.clone();
    let moved = [on_curve_t[0] + 2.0, on_curve_t[1], on_curve_t[2]];
    let turned = [(0.7f32).sin(), 0.0, 0.0, (0.7f32).cos()];
    add_keys(&mut doc, &base, node, &[(mid / 24.0, moved, turned)]);
    let imp = import(&doc, &base);
    for path in ["rotation", "translation"] {
        let w = unplayed(&imp, node, path);
        assert_eq!(w.len(), 1, "{path}: {:?}", imp.report.warnings);
        assert!(
            w[0].contains(&format!("frame {mid} ")) && w[0].contains("between frames"),
            "{}",
            w[0]
        );
    }
    // A key before frame 0 is reported too.
    let mut doc = doc0.clone();
    add_keys(&mut doc, &base, node, &[(-2.0 / 24.0, moved, turned)]);
    let imp = import(&doc, &base);
    let w = unplayed(&imp, node, "rotation");
    assert!(w.len() == 1 && w[0].contains("before frame 0"), "{w:?}");
}

#[test]
fn legacy_rest_transform_edit_is_reported() {
    let bytes = std::fs::read(sample("static_box.msh")).unwrap();
    let mut base = msh::decode(&bytes, msh::Mode::Strict).unwrap().model;
    base.nodes = msh::Nodes::Legacy24 {
        raw: vec![0; 24 * base.nodes.len()],
    };
    base.keys = Some(vec![msh::AnimKey24 {
        pos: [0.0; 3],
        time: 0.0,
        q: [32767, 0, 0, 0],
    }]);
    base.frame_map = None;
    base.frame_count = 1;
    base.entries.retain(|e| e.type_id != msh::res::FRAME_MAP);
    let e = mshgltf::gltf_export::export(&base, &[], &Default::default()).unwrap();
    let mut doc = GltfFile::new(serde_json::to_value(&e.root).unwrap(), vec![e.bin]);
    let unedited = import(&doc, &base);
    assert!(unedited.report.unchanged, "{:?}", unedited.report);
    assert!(!unedited
        .report
        .warnings
        .iter()
        .any(|w| w.contains("not stored")));
    doc.tree_mut()["nodes"][0]["rotation"] = json!([0.0, (0.25f32).sin(), 0.0, (0.25f32).cos()]);
    let imp = import(&doc, &base);
    let w: Vec<&String> = imp
        .report
        .warnings
        .iter()
        .filter(|w| w.contains("glTF node 0") && w.contains("rotation") && w.contains("not stored"))
        .collect();
    assert_eq!(w.len(), 1, "{:?}", imp.report.warnings);
}
