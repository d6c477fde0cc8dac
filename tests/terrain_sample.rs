//! Terrain maps without `../shared`: a small map built here by the
//! generator rules of terrain-notes §5.1 (grid cut, chained runs, x-major
//! Res1, derived normals/boxes/Res11), then read, validated, encoded,
//! exported and brought back.

use std::collections::BTreeSet;

use mshgltf::material::{Wear, WearRow};
use mshgltf::terrain::ir::*;
use mshgltf::terrain::{
    derive, export, import, map, read, source::TerrainSource, validate, write, Mode,
};

const SIDE: f32 = 10.0;

fn height(x: f32, y: f32) -> f32 {
    0.1 * x + 0.05 * y + if x > 5.0 && y > 5.0 { 1.0 } else { 0.0 }
}

/// A g×g map: per square 4 own vertices and 2 triangles per LOD; square 0
/// carries a second material (tex2 = 2) with Res14 0.5.
fn tiny_land(g: usize) -> Land {
    let s = g * g;
    let mut land = Land {
        entries: mshgltf::terrain::STREAM_ORDER
            .iter()
            .map(|&t| StreamEntry {
                type_id: t,
                name: b"Land".to_vec(),
                attr1: 0,
                attr2: if t == 1 { g as u32 } else { 0 },
                attr3: 0,
                raw: None,
            })
            .collect(),
        squares: (0..s)
            .map(|i| {
                let mut slots = [NONE; 15];
                slots[0] = i as u16;
                slots[1] = (s + i) as u16;
                Square {
                    hdr: [0, NONE, 0, 0],
                    slots,
                }
            })
            .collect(),
        corners: [[0.0; 3]; 8],
        header_tail: [0; 44],
        slots: Vec::new(),
        positions: Vec::new(),
        normals: Vec::new(),
        uv0: Vec::new(),
        uv1: Vec::new(),
        alpha: Some(Vec::new()),
        order: Vec::new(),
        faces: Vec::new(),
    };
    for lod in 0..2 {
        for i in 0..s {
            let (ix, iy) = ((i / g) as f32, (i % g) as f32);
            let first = land.faces.len() as u16;
            if lod == 0 {
                for (dx, dy) in [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)] {
                    let (x, y) = ((ix + dx) * SIDE, (iy + dy) * SIDE);
                    land.positions.push([x, y, height(x, y)]);
                    land.normals.push([0, 0, 127, 0]);
                    let maxy = g as f32 * SIDE;
                    land.uv0.push([
                        (x * 1024.0 / 200.0).round() as u16,
                        ((maxy - y) * 1024.0 / 200.0).round() as u16,
                    ]);
                    land.uv1.push([
                        (x * 51.2).round() as u16,
                        ((maxy - y) * 51.2).round() as u16,
                    ]);
                    land.alpha
                        .as_mut()
                        .unwrap()
                        .push(if i == 0 { 0.5 } else { 1.0 });
                }
            }
            let b = (4 * i) as u16;
            let (tex2, flags) = if i == 0 { (2, 0x604) } else { (NO_TEX2, 0x600) };
            let f = |v: [u16; 3], nb: [u16; 3], edges: u8| Face {
                flags,
                surface: 0x10,
                tex1: 1,
                tex2,
                word3: NONE,
                v,
                nb,
                normal: [0; 3],
                edges,
                byte27: 0,
            };
            land.faces
                .push(f([b, b + 1, b + 2], [NONE, NONE, first + 1], 0x0F));
            land.faces
                .push(f([b, b + 2, b + 3], [first, NONE, NONE], 0x3E));
            land.slots.push(Slot {
                first,
                count: 2,
                reserved: [0; 4],
                min: [ix * SIDE, iy * SIDE, 0.0],
                max: [(ix + 1.0) * SIDE, (iy + 1.0) * SIDE, 0.0],
                centre: [0.0; 3],
                radius: 0.0,
                tail: [0; 20],
            });
        }
    }
    land.order = (0..land.faces.len())
        .map(|k| DrawEntry {
            face: k as u16,
            flags: 0x48,
            byte3: 0,
        })
        .collect();
    let all = |n: usize| (0..n).collect::<BTreeSet<_>>();
    let (nf, nv) = (land.faces.len(), land.positions.len());
    derive::face_normals(&mut land, &all(nf));
    derive::vertex_normals(&mut land, &all(nv));
    derive::cell_boxes(&mut land, &all(s));
    land.corners = derive::header_corners(&land);
    for k in 0..land.slots.len() {
        derive::draw_order(&mut land, k);
    }
    // Stored attributes as the writer sets them.
    read::decode(&write::encode(&land).unwrap()).unwrap()
}

fn wear(names: &[&str]) -> Vec<u8> {
    let materials = names
        .iter()
        .enumerate()
        .map(|(i, n)| WearRow {
            legacy_id: i as i32,
            name: n.to_string(),
        })
        .collect();
    Wear {
        materials,
        lightmaps: Vec::new(),
        crlf: true,
    }
    .to_bytes()
    .unwrap()
}

fn tiny_map() -> map::ArealMap {
    let side = 2.0 * SIDE;
    map::ArealMap {
        name: b"ArealMap".to_vec(),
        attr23: [0, 0],
        areals: vec![map::Areal {
            anchor: [side / 2.0, side / 2.0, 0.0, 0.0],
            area: side * side,
            normal: [0.0, 0.0, 1.0],
            words: [1, 0, 4, 0],
            vertices: vec![
                [0.0, 0.0, 0.0],
                [side, 0.0, 0.0],
                [side, side, 0.0],
                [0.0, side, 0.0],
            ],
            links: vec![[-1, -1]; 4],
        }],
        cells_xy: [128, 128],
        cells: vec![vec![0]; 128 * 128],
    }
}

/// Writes the map's four files into `dir`; returns the Land.msh path.
fn write_map(dir: &std::path::Path, land: &Land) -> std::path::PathBuf {
    let msh = dir.join("Land.msh");
    std::fs::write(&msh, write::encode(land).unwrap()).unwrap();
    std::fs::write(dir.join("Land.map"), map::encode(&tiny_map()).unwrap()).unwrap();
    std::fs::write(dir.join("Land1.wea"), wear(&["B_S0", "GRASS", "ROCK"])).unwrap();
    std::fs::write(dir.join("Land2.wea"), wear(&["DEFAULT", "GRASSM", "ROCKM"])).unwrap();
    msh
}

#[test]
fn generated_map_is_valid_without_warnings_and_round_trips() {
    let land = tiny_land(2);
    let bytes = write::encode(&land).unwrap();
    let back = read::decode(&bytes).unwrap();
    assert_eq!(back, land);
    assert_eq!(write::encode(&back).unwrap(), bytes);
    let f = validate::validate(&back, Mode::Strict).unwrap();
    assert!(
        f.errors.is_empty() && f.warnings.is_empty(),
        "{:?} {:?}",
        f.errors,
        f.warnings
    );
    let m = tiny_map();
    let mb = map::encode(&m).unwrap();
    assert_eq!(map::decode(&mb).unwrap(), m);
    assert!(map::check(&m).is_empty());
}

/// A non-zero Res11 byte 3 and an alpha below 1 on a vertex without a
/// second material need no action: notes (`-v`), never warnings; an alpha
/// outside 0..1 is a warning (issue 24 item 7).
#[test]
fn facts_that_need_no_action_are_notes() {
    let mut land = tiny_land(2);
    land.order[2].byte3 = 7;
    // Vertex 4 is cell 1's (one material): alpha 0 blends nothing.
    land.alpha.as_mut().unwrap()[4] = 0.0;
    let f = validate::validate(&land, Mode::Strict).unwrap();
    assert!(f.warnings.is_empty(), "{:?}", f.warnings);
    let rules: Vec<(&str, Option<usize>)> = f.notes.iter().map(|n| (n.rule, n.record)).collect();
    assert_eq!(
        rules,
        [
            ("terrain.res11_byte3", Some(2)),
            ("terrain.res14_unused", Some(4))
        ]
    );
    land.alpha.as_mut().unwrap()[0] = 1.5;
    let f = validate::validate(&land, Mode::Strict).unwrap();
    let w: Vec<(&str, Option<usize>)> = f.warnings.iter().map(|n| (n.rule, n.record)).collect();
    assert_eq!(w, [("terrain.res14_range", Some(0))]);
}

#[test]
fn broken_records_name_stream_record_and_rule() {
    let mut land = tiny_land(2);
    land.faces[3].v[1] = 999;
    let e = validate::validate(&land, Mode::Strict).unwrap_err();
    assert_eq!(
        (e.rule, e.stream, e.record),
        ("terrain.face_vertex_range", Some(21), Some(3))
    );
    let f = validate::validate(&land, Mode::Tolerant).unwrap();
    assert_eq!(f.drop_faces, BTreeSet::from([3]));
    let mut land = tiny_land(2);
    land.slots[1].first += 1;
    assert_eq!(
        validate::validate(&land, Mode::Tolerant).unwrap_err().rule,
        "terrain.slot_chain"
    );
    let mut e = tiny_land(2);
    e.positions[0][2] = f32::NAN;
    let err = validate::validate(&e, Mode::Strict).unwrap_err();
    assert_eq!(
        (err.rule, err.stream, err.record),
        ("terrain.float.non_finite", Some(3), Some(0))
    );
    // A Res21 payload that is not whole records is rejected by the reader.
    let mut e = tiny_land(2);
    e.faces.pop();
    let mut bytes = write::encode(&e).unwrap();
    let a = mshgltf::nres::read(&bytes, mshgltf::nres::Mode::Strict).unwrap();
    let mut entries = a.entries.clone();
    let short = &entries[8].data[..entries[8].data.len() - 10].to_vec();
    entries[8].data = short;
    bytes = mshgltf::nres::write(&entries).unwrap();
    assert_eq!(read::decode(&bytes).unwrap_err().rule, "terrain.stride");
}

#[test]
fn generated_map_exports_and_comes_back_identical_then_edited() {
    let tmp = tempfile::tempdir().unwrap();
    let land = tiny_land(2);
    let msh = write_map(tmp.path(), &land);
    let src = TerrainSource::load(&msh, Mode::Strict, None).unwrap();
    let opts = export::TerrainExportOptions {
        areals: true,
        all_lods: true,
        ..Default::default()
    };
    let g = export::export(&src, None, &opts);
    assert_eq!(g.triangles, 16);
    let names: Vec<&str> = g.json["materials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["GRASS+ROCK", "GRASS"]);
    let glb = export::to_glb(&g).unwrap();
    let doc = mshgltf::gltf_import::parse(&glb, None).unwrap();
    let (back, rep) = import::import_with_base(&doc, &land).unwrap();
    assert!(rep.unchanged, "{rep:?}");
    assert_eq!(write::encode(&back).unwrap(), std::fs::read(&msh).unwrap());
    // Edit: raise vertex 10 (square 2) by 3 units (glTF +Y), repaint face 0 as GRASS.
    let mut j = g.json.clone();
    let mut bin = g.bin.clone();
    let pos = j["meshes"][0]["primitives"][0]["attributes"]["POSITION"]
        .as_u64()
        .unwrap() as usize;
    let off = j["bufferViews"][j["accessors"][pos]["bufferView"].as_u64().unwrap() as usize]
        ["byteOffset"]
        .as_u64()
        .unwrap() as usize;
    let y = f32::from_le_bytes(
        bin[off + 12 * 10 + 4..off + 12 * 10 + 8]
            .try_into()
            .unwrap(),
    );
    bin[off + 12 * 10 + 4..off + 12 * 10 + 8].copy_from_slice(&(y + 3.0).to_le_bytes());
    j["accessors"][pos]["max"][1] = (f64::from(y) + 3.0)
        .max(j["accessors"][pos]["max"][1].as_f64().unwrap())
        .into();
    let two = j["meshes"][0]["primitives"]
        .as_array()
        .unwrap()
        .iter()
        .position(|p| p["material"] == 0)
        .unwrap();
    let one = 1 - two;
    let m_one = j["meshes"][0]["primitives"][one]["material"].clone();
    j["meshes"][0]["primitives"][two]["material"] = m_one;
    let edited = export::TerrainGltf {
        json: j,
        bin,
        ..g.clone()
    };
    let doc = mshgltf::gltf_import::parse(&export::to_glb(&edited).unwrap(), None).unwrap();
    let (new, rep) = import::import_with_base(&doc, &land).unwrap();
    assert_eq!((rep.moved_vertices, rep.repainted_faces), (1, 2), "{rep:?}");
    assert_eq!(new.positions[10][2], land.positions[10][2] + 3.0);
    assert_eq!((new.faces[0].tex2, new.faces[0].flags), (NO_TEX2, 0x600));
    assert_ne!(new.faces[4].normal, land.faces[4].normal);
    assert!(new.slots[2].max[2] > land.slots[2].max[2]);
    assert_eq!(new.slots[2].max[2], new.slots[6].max[2]);
    assert_eq!(new.order[0].flags, 0x58);
    validate::validate(&new, Mode::Strict).unwrap();
    // Removing a face is refused.
    let mut j = g.json.clone();
    j["meshes"][0]["primitives"][0]["indices"] = j["meshes"][0]["primitives"][1]["indices"].clone();
    let doc = mshgltf::gltf_import::parse(
        &export::to_glb(&export::TerrainGltf {
            json: j,
            ..g.clone()
        })
        .unwrap(),
        None,
    )
    .unwrap();
    assert_eq!(
        import::import_with_base(&doc, &land).unwrap_err().rule,
        "terrain.topology"
    );
}
