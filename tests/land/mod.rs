//! A small map built by the generator rules of terrain-notes §5.1 (grid
//! cut, chained runs, x-major Res1, derived normals/boxes/Res11), shared by
//! the terrain tests that run without `../shared`.
#![allow(dead_code)]

use std::collections::BTreeSet;

use mshgltf::material::{Wear, WearRow};
use mshgltf::terrain::ir::*;
use mshgltf::terrain::{derive, map, read, write};

pub const SIDE: f32 = 10.0;

fn height(x: f32, y: f32) -> f32 {
    0.1 * x + 0.05 * y + if x > 5.0 && y > 5.0 { 1.0 } else { 0.0 }
}

/// A g×g map: per square 4 own vertices and 2 triangles per LOD; square 0
/// carries a second material (tex2 = 2) with Res14 0.5.
pub fn tiny_land(g: usize) -> Land {
    let s = g * g;
    // The streams and Res1 of the new-map writer; the slots pushed below.
    let mut land = mshgltf::terrain::author::empty_land(g);
    land.slots.clear();
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

pub fn wear(names: &[&str]) -> Vec<u8> {
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

pub fn tiny_map() -> map::ArealMap {
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
pub fn write_map(dir: &std::path::Path, land: &Land) -> std::path::PathBuf {
    let msh = dir.join("Land.msh");
    std::fs::write(&msh, write::encode(land).unwrap()).unwrap();
    std::fs::write(dir.join("Land.map"), map::encode(&tiny_map()).unwrap()).unwrap();
    std::fs::write(dir.join("Land1.wea"), wear(&["B_S0", "GRASS", "ROCK"])).unwrap();
    std::fs::write(dir.join("Land2.wea"), wear(&["DEFAULT", "GRASSM", "ROCKM"])).unwrap();
    msh
}

/// A 1 x 1 map (from [`tiny_land`]) whose one LOD0 cell holds `n` copies
/// of its first face, copy `i` with the texture pair `(i >> 8, i & 0xFF)`
/// (all distinct up to 65 536), Res11 in face order: what the draw-order
/// check walks per cell (issue 36 item 12). `n` is at most 65 533.
pub fn one_cell_pairs(n: usize) -> Land {
    let mut land = tiny_land(1);
    let lod1: Vec<Face> = land.faces[2..].to_vec();
    let f0 = land.faces[0];
    land.faces = (0..n)
        .map(|i| Face {
            tex1: (i >> 8) as u8,
            tex2: (i & 0xFF) as u8,
            nb: [NONE; 3],
            edges: 0x3F,
            ..f0
        })
        .chain(lod1.into_iter().map(|f| Face {
            nb: [NONE; 3],
            edges: 0x3F,
            ..f
        }))
        .collect();
    land.slots[0].count = n as u16;
    land.slots[1].first = n as u16;
    land.order = (0..land.faces.len())
        .map(|k| DrawEntry {
            face: k as u16,
            flags: 0x48 | if k <= n { 0x10 } else { 0 },
            byte3: 0,
        })
        .collect();
    land
}
