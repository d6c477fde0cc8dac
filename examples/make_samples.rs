//! Writes the committed samples under `samples/` (run `scripts/make_samples.sh`).
//!
//! - `static_box.msh`: one node, one slot, one batch (a box).
//! - `lod_tower.msh`: a three-level hierarchy with LOD and group cells.
//! - `anim_rotor.msh`: an animated rotor (rotation track) and a bobbing tip (translation track).
//! - `demo/demo.rlb`: an archive with `TOWER.msh` + `TOWER.wea`, beside
//!   `demo/Material.lib` and `demo/Textures.lib` (one 8888 and one 565 texture).

use std::path::Path;

use mshgltf::msh::build::{key, ModelBuilder, NodeSpec, Part, Vertex};
use mshgltf::msh::encode;
use mshgltf::nres;

/// A box centred at `c` with half extents `h`: 24 vertices, 12 triangles,
/// counter-clockwise seen from outside.
fn cuboid(c: [f32; 3], h: [f32; 3], material: u16) -> Part {
    let mut vertices = Vec::new();
    let mut indices = Vec::new();
    // (normal axis, sign)
    for axis in 0..3 {
        for sign in [1.0f32, -1.0] {
            let u = (axis + 1) % 3;
            let v = (axis + 2) % 3;
            let base = vertices.len() as u16;
            let mut n = [0.0; 3];
            n[axis] = sign;
            for (a, b) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                let mut p = c;
                p[axis] += sign * h[axis];
                p[u] += a * h[u];
                p[v] += b * h[v] * sign;
                vertices.push(Vertex {
                    pos: p,
                    normal: n,
                    uv: [(a + 1.0) * 0.5, (1.0 - b) * 0.5],
                    ..Vertex::default()
                });
            }
            indices.extend_from_slice(&[base, base + 1, base + 2, base, base + 2, base + 3]);
        }
    }
    Part {
        material,
        vertices,
        indices,
        ..Part::default()
    }
}

const ID: [f32; 4] = [0.0, 0.0, 0.0, 1.0];

fn z_rot(deg: f32) -> [f32; 4] {
    let h = deg.to_radians() * 0.5;
    [0.0, 0.0, h.sin(), h.cos()]
}

fn name(s: &str) -> Option<Vec<u8>> {
    Some(s.as_bytes().to_vec())
}

fn static_box() -> mshgltf::msh::Model {
    let mut b = ModelBuilder::new();
    let s = b
        .add_slot(&[cuboid([0.0, 0.0, 0.5], [0.5, 0.5, 0.5], 0)])
        .unwrap();
    b.add_node(NodeSpec {
        name: name("box"),
        cells: vec![(0, s)],
        keys: vec![key(0.0, [0.0; 3], ID)],
        ..Default::default()
    });
    b.finish().unwrap()
}

fn lod_tower() -> mshgltf::msh::Model {
    let mut b = ModelBuilder::new();
    let base0 = b
        .add_slot(&[
            cuboid([0.0, 0.0, 0.5], [1.0, 1.0, 0.5], 0),
            cuboid([0.0, 0.0, 1.2], [0.4, 0.4, 0.2], 1),
        ])
        .unwrap();
    let base1 = b
        .add_slot(&[cuboid([0.0, 0.0, 0.6], [1.0, 1.0, 0.6], 0)])
        .unwrap();
    let head0 = b
        .add_slot(&[cuboid([0.0, 0.0, 0.3], [0.5, 0.5, 0.3], 1)])
        .unwrap();
    let head1 = b
        .add_slot(&[cuboid([0.0, 0.0, 0.3], [0.45, 0.45, 0.3], 1)])
        .unwrap();
    let head_broken = b
        .add_slot(&[cuboid([0.1, 0.0, 0.2], [0.5, 0.4, 0.2], 0)])
        .unwrap();
    let gun = b
        .add_slot(&[cuboid([0.8, 0.0, 0.0], [0.8, 0.08, 0.08], 1)])
        .unwrap();
    let base = b.add_node(NodeSpec {
        name: name("base"),
        cells: vec![(0, base0), (5, base1)],
        keys: vec![key(0.0, [0.0; 3], ID)],
        ..Default::default()
    });
    let head = b.add_node(NodeSpec {
        name: name("turret"),
        parent: Some(base),
        flags: 1,
        cells: vec![(0, head0), (5, head1), (1, head_broken)],
        keys: vec![key(0.0, [0.0, 0.0, 1.4], z_rot(30.0))],
        ..Default::default()
    });
    b.add_node(NodeSpec {
        name: name("gun"),
        parent: Some(head),
        cells: vec![(0, gun), (5, gun)],
        keys: vec![key(0.0, [0.3, 0.0, 0.3], ID)],
        ..Default::default()
    });
    b.add_node(NodeSpec {
        // "дуло" (muzzle) in Windows-1251: a non-ASCII node name.
        name: Some(vec![0xE4, 0xF3, 0xEB, 0xEE]),
        parent: Some(2),
        flags: 0x100,
        keys: vec![key(0.0, [1.6, 0.0, 0.0], ID)],
        ..Default::default()
    });
    b.finish().unwrap()
}

fn anim_rotor() -> mshgltf::msh::Model {
    let mut b = ModelBuilder::new();
    let body = b
        .add_slot(&[cuboid([0.0, 0.0, 0.25], [0.6, 0.6, 0.25], 0)])
        .unwrap();
    let rotor = b
        .add_slot(&[cuboid([0.0, 0.0, 0.0], [1.5, 0.1, 0.02], 0)])
        .unwrap();
    let tip = b
        .add_slot(&[cuboid([0.0, 0.0, 0.0], [0.1, 0.1, 0.1], 0)])
        .unwrap();
    b.add_node(NodeSpec {
        name: name("body"),
        cells: vec![(0, body)],
        keys: vec![key(0.0, [0.0; 3], ID)],
        ..Default::default()
    });
    b.add_node(NodeSpec {
        name: name("rotor"),
        parent: Some(0),
        cells: vec![(0, rotor)],
        keys: (0..5)
            .map(|i| key(6.0 * i as f32, [0.0, 0.0, 0.6], z_rot(90.0 * i as f32)))
            .collect(),
        ..Default::default()
    });
    b.add_node(NodeSpec {
        name: name("tip"),
        parent: Some(1),
        cells: vec![(0, tip)],
        keys: vec![
            key(0.0, [1.5, 0.0, 0.0], ID),
            key(12.0, [1.5, 0.0, 0.4], ID),
            key(20.0, [1.5, 0.0, 0.0], ID),
        ],
        ..Default::default()
    });
    b.finish().unwrap()
}

fn entry<'a>(type_id: u32, attr2: u32, name: &'a [u8], data: &'a [u8]) -> nres::Entry<'a> {
    nres::Entry {
        type_id,
        attr1: 0,
        attr2,
        attr3: 0,
        name,
        data,
    }
}

/// A MAT0 payload (version 6) with one phase: diffuse RGBA and a texture name.
fn mat0(diffuse: [u8; 4], texture: &str) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&1u16.to_le_bytes()); // phase_count
    v.extend_from_slice(&0u16.to_le_bytes()); // anim_block_count
    v.extend_from_slice(&[0, 0]); // a, b (v >= 2)
    v.extend_from_slice(&0u32.to_le_bytes()); // c (v >= 3)
    v.extend_from_slice(&0u32.to_le_bytes()); // d (v >= 4)
    let mut p = [0u8; 18];
    p[0..3].copy_from_slice(&[64, 64, 64]); // ambient
    p[4..8].copy_from_slice(&diffuse);
    v.extend_from_slice(&p);
    let mut t = [0u8; 16];
    t[..texture.len()].copy_from_slice(texture.as_bytes());
    v.extend_from_slice(&t);
    v
}

/// A Texm payload with one mip level.
fn texm(format: u32, w: u32, h: u32, pixels: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(b"Texm");
    for x in [w, h, 1, 0, 0, 0, format] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.extend_from_slice(pixels);
    v
}

fn main() {
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    std::fs::create_dir_all(out.join("demo")).unwrap();
    let write = |p: &str, b: &[u8]| {
        std::fs::write(out.join(p), b).unwrap();
        println!("wrote samples/{p} ({} bytes)", b.len());
    };
    let tower = encode(&lod_tower()).unwrap();
    write("static_box.msh", &encode(&static_box()).unwrap());
    write("lod_tower.msh", &tower);
    write("anim_rotor.msh", &encode(&anim_rotor()).unwrap());

    let wear = b"2\r\n0 STEEL.0\r\n7 GLASS.1\r\n";
    let archive = nres::write(&[
        entry(0, 0, b"TOWER.msh", &tower),
        entry(0x5241_4557, 0, b"TOWER.wea", wear),
    ])
    .unwrap();
    write("demo/demo.rlb", &archive);
    let steel = mat0([200, 200, 210, 255], "STEEL_TX.0");
    let glass = mat0([120, 180, 255, 255], "GLASS_TX.0");
    let default = mat0([255, 255, 255, 255], "");
    let mat = nres::write(&[
        entry(0x3054_414D, 6, b"DEFAULT", &default),
        entry(0x3054_414D, 6, b"GLASS.1", &glass),
        entry(0x3054_414D, 6, b"STEEL.0", &steel),
    ])
    .unwrap();
    write("demo/Material.lib", &mat);
    // 8888 is stored A,R,G,B; a 4x4 checker with one half-transparent texel.
    let mut argb = Vec::new();
    for y in 0..4 {
        for x in 0..4 {
            let on = (x + y) % 2 == 0;
            let a = if x == 3 && y == 3 { 128 } else { 255 };
            argb.extend_from_slice(&[a, if on { 230 } else { 40 }, 40, if on { 40 } else { 230 }]);
        }
    }
    // 565: pure red, green, blue, white.
    let px565: Vec<u8> = [0xF800u16, 0x07E0, 0x001F, 0xFFFF]
        .iter()
        .flat_map(|p| p.to_le_bytes())
        .collect();
    let steel_tx = texm(8888, 4, 4, &argb);
    let glass_tx = texm(565, 2, 2, &px565);
    let tex = nres::write(&[
        entry(0x6D78_6554, 0, b"GLASS_TX.0", &glass_tx),
        entry(0x6D78_6554, 0, b"STEEL_TX.0", &steel_tx),
    ])
    .unwrap();
    write("demo/Textures.lib", &tex);
}
