//! `gltf2msh terrain.glb --new-map MAPS/<name>` (issue 38 item 1): a grid
//! glTF sculpted (hill, valley, plateau) and painted (three materials, one
//! two-material patch) becomes a map folder whose every stream follows
//! terrain-notes §5.1 exactly, readable by the strict reader and by the
//! peer's (fparkan) decoder rules; meshes that are not such a grid are
//! refused naming the offending vertex, face or quad.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use mshgltf::terrain::author::{self, GridSpec, HeightGrid, Paint, Palette};
use mshgltf::terrain::ground::Ground;
use mshgltf::terrain::ir::*;
use mshgltf::terrain::{areals, map, read, validate};

mod common;

const LAND1: &str = "5\r\n0 B_S0\r\n1 L02\r\n2 L04\r\n3 L33\r\n4 WATER\r\n";
const LAND2: &str = "5\r\n0 DEFAULT\r\n1 L03\r\n2 L05\r\n3 L05\r\n4 WATER_M\r\n";

fn palette() -> Palette {
    Palette {
        rows: ["B_S0", "L02", "L04", "L33", "WATER"]
            .map(String::from)
            .to_vec(),
    }
}

fn paint(tex1: u8, tex2: u8) -> Paint {
    Paint {
        tex1,
        tex2,
        water: false,
        bed: false,
    }
}

/// The acceptance map: 8×8 squares of 2×2 quads (16×16 quads), side 1600;
/// a hill, a valley and a plateau; L02 ground, L04 on the hill, L33 in the
/// valley, an L02+L04 patch on the hill's foot.
fn sculpted() -> HeightGrid {
    let spec = GridSpec {
        squares: 8,
        quads: 2,
        side: 1600.0,
    };
    let mut g = HeightGrid::flat(spec, 10.0, paint(1, NO_TEX2));
    let n = spec.n();
    for i in 0..=n {
        for j in 0..=n {
            let (x, y) = (spec.coord(i), spec.coord(j));
            let d = |cx: f32, cy: f32| ((x - cx).powi(2) + (y - cy).powi(2)).sqrt();
            let mut z = 10.0;
            z += 60.0 * (1.0 - d(400.0, 400.0) / 400.0).max(0.0); // hill
            z -= 30.0 * (1.0 - d(1200.0, 400.0) / 300.0).max(0.0); // valley
            if (900.0..=1400.0).contains(&x) && (900.0..=1400.0).contains(&y) {
                z = 45.0; // plateau
            }
            g.z[i * (n + 1) + j] = z;
        }
    }
    for (q, faces) in g.quads.iter_mut().enumerate() {
        let (i, j) = (q / n, q % n);
        let p = match (i, j) {
            (2..=5, 2..=5) => paint(2, NO_TEX2),
            (6, 2..=5) => paint(1, 2),
            (10..=13, 2..=5) => paint(3, NO_TEX2),
            _ => paint(1, NO_TEX2),
        };
        faces.iter_mut().for_each(|f| f.1 = p);
    }
    g
}

fn write_palette(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("Land1.wea"), LAND1).unwrap();
    std::fs::write(dir.join("Land2.wea"), LAND2).unwrap();
}

fn write_glb(path: &Path, json: &serde_json::Value, bin: &[u8]) {
    std::fs::write(path, common::glb(json, bin)).unwrap();
}

fn run_new_map(glb: &Path, out: &Path, pal: &Path) -> std::process::Output {
    common::gltf2msh()
        .arg(glb)
        .arg("--new-map")
        .arg(out)
        .arg("--palette")
        .arg(pal)
        .output()
        .unwrap()
}

#[test]
fn a_sculpted_painted_grid_becomes_a_map_folder_every_stream_as_the_notes_say() {
    let tmp = tempfile::tempdir().unwrap();
    let maps = tmp.path().join("MAPS");
    write_palette(&maps.join("m01"));
    let grid = sculpted();
    let (json, bin) = author::to_gltf(&grid, &palette());
    let glb = tmp.path().join("terrain.glb");
    write_glb(&glb, &json, &bin);
    let out = maps.join("mine");
    let o = run_new_map(&glb, &out, &maps.join("m01"));
    assert!(o.status.success(), "{}", common::stderr(&o));
    for f in ["Land.msh", "Land.map", "Land1.wea", "Land2.wea"] {
        assert!(out.join(f).is_file(), "{f}");
    }
    assert_eq!(
        std::fs::read(out.join("Land1.wea")).unwrap(),
        LAND1.as_bytes()
    );
    assert_eq!(
        std::fs::read(out.join("Land2.wea")).unwrap(),
        LAND2.as_bytes()
    );
    let msh = std::fs::read(out.join("Land.msh")).unwrap();
    let land = read::decode(&msh).unwrap();
    let f = validate::validate(&land, mshgltf::terrain::Mode::Strict).unwrap();
    let other: Vec<_> = f
        .warnings
        .iter()
        .filter(|w| w.rule != "terrain.uv_span")
        .collect();
    assert!(other.is_empty(), "{other:?}");
    assert!(f.errors.is_empty());
    check_streams(&land, &grid);
    let m = map::decode(&std::fs::read(out.join("Land.map")).unwrap()).unwrap();
    assert!(areals::check(&m).is_empty(), "{:?}", areals::check(&m));
    check_areals(&m, &land, &grid);
    fparkan_msh_rules(&msh);
    fparkan_map_rules(&std::fs::read(out.join("Land.map")).unwrap());
    // msh2gltf's strict reader takes it (its Land1.wea beside it).
    let o = common::msh2gltf()
        .arg(out.join("Land.msh"))
        .arg(tmp.path().join("back.glb"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    // A second run does not replace the map; --force does.
    let o = run_new_map(&glb, &out, &maps.join("m01"));
    assert_eq!(o.status.code(), Some(2));
    assert!(
        common::stderr(&o).contains("a map is already there"),
        "{}",
        common::stderr(&o)
    );
    let o = common::gltf2msh()
        .arg(&glb)
        .args(["--force", "--new-map"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert_eq!(
        std::fs::read(out.join("Land.msh")).unwrap(),
        msh,
        "the same glTF makes the same map"
    );
}

/// Exact stream invariants of terrain-notes §5.1.
fn check_streams(land: &Land, grid: &HeightGrid) {
    let spec = grid.spec;
    let (g, n) = (spec.squares, spec.n());
    assert_eq!(land.grid(), Some((g, g)));
    let order: Vec<u32> = land.entries.iter().map(|e| e.type_id).collect();
    assert_eq!(order, [1, 2, 3, 4, 5, 18, 14, 11, 21]);
    assert!(land.entries.iter().all(|e| e.name == b"Land"));
    for (i, s) in land.squares.iter().enumerate() {
        assert_eq!(s.hdr, [0, 0xFFFF, 0, 0]);
        assert_eq!((s.slots[0], s.slots[1]), (i as u16, (g * g + i) as u16));
        assert!(s.slots[2..].iter().all(|&w| w == 0xFFFF));
    }
    // Faces: 2 per quad per LOD, LOD1 a copy of LOD0, chained runs.
    assert_eq!(land.faces.len(), 4 * n * n);
    let half = 2 * n * n;
    assert_eq!(
        land.faces[..half],
        land.faces[half..]
            .iter()
            .map(|f| {
                let mut f = *f;
                f.nb = f.nb.map(|b| if b == NONE { b } else { b - half as u16 });
                f
            })
            .collect::<Vec<_>>()[..]
    );
    let mut next = 0u16;
    for (k, s) in land.slots.iter().enumerate() {
        assert_eq!(s.first, next, "slot {k}");
        assert_eq!(s.count as usize, 2 * spec.quads * spec.quads);
        next += s.count;
        let sq = k % (g * g);
        let (sx, sy) = (sq / g, sq % g);
        assert_eq!(s.min[0], spec.coord(sx * spec.quads));
        assert_eq!(s.max[1], spec.coord((sy + 1) * spec.quads));
        assert_eq!(s.tail, [0; 20]);
    }
    // Every grid node once at its height (plus patch border copies).
    let nodes = (n + 1) * (n + 1);
    let pos: HashMap<[u32; 2], Vec<f32>> =
        land.positions.iter().fold(HashMap::new(), |mut m, p| {
            m.entry([p[0].to_bits(), p[1].to_bits()])
                .or_default()
                .push(p[2]);
            m
        });
    assert_eq!(pos.len(), nodes);
    for i in 0..=n {
        for j in 0..=n {
            let zs = &pos[&[spec.coord(i).to_bits(), spec.coord(j).to_bits()]];
            assert!(zs.iter().all(|&z| z == grid.z[i * (n + 1) + j]));
        }
    }
    let alpha = land.alpha.as_ref().unwrap();
    let patch: BTreeSet<u16> = land
        .faces
        .iter()
        .filter(|f| f.tex2 != NO_TEX2)
        .flat_map(|f| f.v)
        .collect();
    let plain: BTreeSet<u16> = land
        .faces
        .iter()
        .filter(|f| f.tex2 == NO_TEX2)
        .flat_map(|f| f.v)
        .collect();
    assert!(
        patch.is_disjoint(&plain),
        "patch border vertices are stored twice"
    );
    assert!(!patch.is_empty());
    assert_eq!(
        land.positions.len(),
        nodes + border_copies(land, &patch, &plain)
    );
    for (v, &a) in alpha.iter().enumerate() {
        if !patch.contains(&(v as u16)) {
            assert_eq!(a, 1.0, "vertex {v}");
        } else {
            assert!([0.0, 0.5, 1.0].contains(&a));
        }
    }
    // Faces: CCW, flags/surface, both classes, neighbours mutual.
    for (i, f) in land.faces.iter().enumerate() {
        let p = f.v.map(|v| land.positions[usize::from(v)]);
        let c = validate::cross_of(p[0], p[1], p[2]);
        assert!(c[2] > 0.0, "face {i} CCW from +Z");
        let second = if f.tex2 != NO_TEX2 { FLAG_SECOND } else { 0 };
        assert_eq!(
            (f.flags, f.surface, f.word3),
            (0x600 | second, 0x10, 0xFFFF)
        );
        let lod = i / half;
        for e in 0..3 {
            let code = (f.edges >> (2 * e)) & 3;
            if f.nb[e] == NONE {
                assert_eq!(code, 3);
            } else {
                let j = usize::from(f.nb[e]);
                assert_eq!(j / half, lod, "links stay in their LOD");
                assert_eq!(usize::from(land.faces[j].nb[usize::from(code)]), i);
            }
        }
    }
    let free = land.faces[..half]
        .iter()
        .flat_map(|f| f.nb)
        .filter(|&b| b == NONE)
        .count();
    assert_eq!(free, 4 * n, "only the map's border edges are free");
    check_uv_and_order(land);
}

/// Res5 T=200, Res18 x51.2, Res11 grouped by pair.
fn check_uv_and_order(land: &Land) {
    // Res5 T=200 and Res18 x51.2.
    for (v, p) in land.positions.iter().enumerate() {
        let u = (f64::from(p[0]) / 200.0 * 1024.0).round() as i64;
        assert_eq!(i64::from(land.uv0[v][0]), u.rem_euclid(65536));
        let w = ((1600.0 - f64::from(p[1])) * 51.2).round() as i64;
        assert_eq!(i64::from(land.uv1[v][1]), w.rem_euclid(65536));
    }
    // Res11: per cell, grouped by pair, 0x58 on group starts.
    let pairs = |s: &Slot| {
        let r = usize::from(s.first)..usize::from(s.first + s.count);
        land.order[r]
            .iter()
            .map(|e| {
                let f = land.faces[usize::from(e.face)];
                (f.tex1, f.tex2, e.flags)
            })
            .collect::<Vec<_>>()
    };
    for s in &land.slots {
        let list = pairs(s);
        let starts = list.iter().filter(|x| x.2 == 0x58).count();
        let distinct: BTreeSet<(u8, u8)> = list.iter().map(|x| (x.0, x.1)).collect();
        assert_eq!(starts, distinct.len());
    }
}

fn border_copies(land: &Land, patch: &BTreeSet<u16>, plain: &BTreeSet<u16>) -> usize {
    let key = |v: &u16| {
        let p = land.positions[usize::from(*v)];
        [p[0].to_bits(), p[1].to_bits()]
    };
    let plain_xy: BTreeSet<[u32; 2]> = plain.iter().map(key).collect();
    patch.iter().filter(|v| plain_xy.contains(&key(v))).count()
}

fn check_areals(m: &map::ArealMap, land: &Land, grid: &HeightGrid) {
    let n = grid.spec.n();
    assert_eq!(m.areals.len(), n * n);
    assert_eq!(m.cells_xy, [128, 128]);
    assert!(m.cells.iter().all(|c| !c.is_empty() && c.len() <= 20));
    let ground = Ground::new(land);
    let total: f64 = m.areals.iter().map(|a| f64::from(a.area)).sum();
    assert!(
        (total - 1600.0f64 * 1600.0).abs() < 1.0,
        "areals tile the map: {total}"
    );
    for (i, a) in m.areals.iter().enumerate() {
        let v = &a.vertices;
        let shoelace: f32 = (0..v.len())
            .map(|k| {
                let (p, q) = (v[k], v[(k + 1) % v.len()]);
                p[0] * q[1] - q[0] * p[1]
            })
            .sum::<f32>()
            / 2.0;
        assert!(
            (shoelace - a.area).abs() <= a.area * 1e-4,
            "areal {i} CCW, area {shoelace} vs {}",
            a.area
        );
        for p in v.iter().chain([&[a.anchor[0], a.anchor[1], a.anchor[2]]]) {
            let z = ground.height_at(p[0], p[1]).unwrap();
            assert!(
                (z - p[2]).abs() < 1e-3,
                "areal {i}: z {} on the ground {z}",
                p[2]
            );
        }
        assert_eq!(a.words, [1, 0, 1, 0], "areal {i}: walkable land");
    }
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap())
}

/// fparkan's `decode_land_msh` rules (crates/fparkan-terrain-format,
/// valentineus/fparkan @ 162de8cc), as read there: each of the nine types
/// 1, 2, 3, 4, 5, 18, 14, 11, 21 exactly once (14 required, unlike the
/// engine); attr3 = the stride (38, 12, 4, 28) and attr1 = payload / stride
/// for 1, 3, 4, 5, 11, 14, 18, 21; Res2 at least 0x8C bytes, the rest a
/// multiple of 68, attr1 = slots; every face vertex < positions and every
/// neighbour 0xFFFF or < faces.
fn fparkan_msh_rules(bytes: &[u8]) {
    let a = mshgltf::nres::read(bytes, mshgltf::nres::Mode::Strict).unwrap();
    for t in [1, 2, 3, 4, 5, 18, 14, 11, 21] {
        let es: Vec<_> = a.entries.iter().filter(|e| e.type_id == t).collect();
        assert_eq!(es.len(), 1, "type {t} once");
        let e = es[0];
        if t == 2 {
            assert!(e.data.len() >= 0x8C && (e.data.len() - 0x8C) % 68 == 0);
            assert_eq!(e.attr1 as usize, (e.data.len() - 0x8C) / 68);
            continue;
        }
        let stride = match t {
            1 => 38,
            3 => 12,
            21 => 28,
            _ => 4,
        };
        assert_eq!(e.attr3, stride, "type {t} stride");
        assert_eq!(
            e.attr1 as usize,
            e.data.len() / stride as usize,
            "type {t} count"
        );
        assert_eq!(e.data.len() % stride as usize, 0);
    }
    let get = |t: u32| a.entries.iter().find(|e| e.type_id == t).unwrap().data;
    let (nv, faces) = (get(3).len() / 12, get(21));
    let nf = faces.len() / 28;
    for f in faces.chunks_exact(28) {
        for k in 0..3 {
            let v = u16::from_le_bytes([f[8 + 2 * k], f[9 + 2 * k]]);
            assert!(usize::from(v) < nv);
            let nb = u16::from_le_bytes([f[14 + 2 * k], f[15 + 2 * k]]);
            assert!(nb == 0xFFFF || usize::from(nb) < nf);
        }
    }
}

/// fparkan's `decode_land_map` rules (same crate): exactly one entry, type
/// 12; attr1 areals, each a 56-byte prefix with V at +48 and B at +52,
/// V×12 vertex bytes and (V+3B) links of 8 bytes; a link is (−1, −1) or
/// (area < count, edge < the target's link count); the grid's cellsX ×
/// cellsY > 0, each cell's hit count < 1024 with area ids < count; the
/// pool offset within 22 bits; the payload ends exactly.
fn fparkan_map_rules(bytes: &[u8]) {
    let a = mshgltf::nres::read(bytes, mshgltf::nres::Mode::Strict).unwrap();
    assert_eq!(a.entries.len(), 1);
    let e = &a.entries[0];
    assert_eq!(e.type_id, 12);
    let d = e.data;
    let count = e.attr1 as usize;
    let (mut at, mut links) = (0usize, Vec::new());
    for _ in 0..count {
        let (v, b) = (u32_at(d, at + 48) as usize, u32_at(d, at + 52) as usize);
        assert_eq!(b, 0);
        at += 56 + 12 * v;
        let l: Vec<(i32, i32)> = (0..v + 3 * b)
            .map(|k| {
                (
                    u32_at(d, at + 8 * k) as i32,
                    u32_at(d, at + 8 * k + 4) as i32,
                )
            })
            .collect();
        at += 8 * l.len();
        links.push(l);
    }
    for l in &links {
        for &(ar, er) in l {
            assert!(
                (ar, er) == (-1, -1)
                    || (ar >= 0
                        && er >= 0
                        && (ar as usize) < count
                        && (er as usize) < links[ar as usize].len())
            );
        }
    }
    let (cx, cy) = (u32_at(d, at), u32_at(d, at + 4));
    at += 8;
    assert!(cx * cy > 0);
    let mut pool = 0u32;
    for _ in 0..cx * cy {
        let hits = u16::from_le_bytes([d[at], d[at + 1]]);
        assert!(hits < 1024 && pool < (1 << 22));
        for k in 0..usize::from(hits) {
            let id = u16::from_le_bytes([d[at + 2 + 2 * k], d[at + 3 + 2 * k]]);
            assert!(usize::from(id) < count);
        }
        pool += u32::from(hits);
        at += 2 + 2 * usize::from(hits);
    }
    assert_eq!(at, d.len(), "payload consumed exactly");
}

/// Runs `--new-map` on `grid`'s glTF after `edit` changed it; returns the
/// exit code and stderr.
fn refused(edit: impl Fn(&mut serde_json::Value, &mut Vec<u8>)) -> (Option<i32>, String, bool) {
    let tmp = tempfile::tempdir().unwrap();
    let maps = tmp.path().join("MAPS");
    write_palette(&maps.join("m01"));
    let (mut json, mut bin) = author::to_gltf(&sculpted(), &palette());
    edit(&mut json, &mut bin);
    json["buffers"][0]["byteLength"] = bin.len().into();
    let glb = tmp.path().join("t.glb");
    write_glb(&glb, &json, &bin);
    let out = maps.join("mine");
    let o = run_new_map(&glb, &out, &maps.join("m01"));
    (o.status.code(), common::stderr(&o), out.exists())
}

#[test]
fn a_hole_is_refused_naming_the_quad_and_how_to_fill_it() {
    // Drop the first triangle of primitive 0 (the L02+L04 patch, quad 6,2): its
    // accessor count shrinks by 3 vertices at the front.
    let (code, err, made) = refused(|j, _| {
        let a = &mut j["accessors"][0];
        let c = a["count"].as_u64().unwrap();
        a["count"] = (c - 3).into();
        let v = &mut j["bufferViews"][0];
        v["byteOffset"] = (v["byteOffset"].as_u64().unwrap() + 36).into();
        v["byteLength"] = (v["byteLength"].as_u64().unwrap() - 36).into();
    });
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("terrain.new_map.hole")
            && err.contains("grid quad 6,2")
            && err.contains("Fill"),
        "{err}"
    );
    assert!(!made, "nothing is written");
}

#[test]
fn a_face_pointing_down_is_refused_naming_the_face() {
    let (code, err, _) = refused(|_, bin| {
        // Swap the 2nd and 3rd vertex of the first triangle: CW from above.
        let (a, b) = (12..24, 24..36);
        let t: Vec<u8> = bin[a.clone()].to_vec();
        bin.copy_within(b.clone(), a.start);
        bin[b].copy_from_slice(&t);
    });
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("terrain.new_map.overhang") && err.contains("face 0 of mesh 0 primitive 0"),
        "{err}"
    );
}

#[test]
fn a_vertex_off_the_grid_is_refused_naming_the_vertex() {
    let (code, err, _) = refused(|_, bin| {
        // Vertex 4 of primitive 0: x moved by 30 units (a quad is 100).
        let x = f32::from_le_bytes(bin[48..52].try_into().unwrap()) + 30.0;
        bin[48..52].copy_from_slice(&x.to_le_bytes());
    });
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("terrain.new_map.off_grid") && err.contains("vertex 4 of mesh 0 primitive 0"),
        "{err}"
    );
}

#[test]
fn a_material_outside_the_palette_is_refused_listing_the_rows() {
    let (code, err, _) = refused(|j, _| j["materials"][0]["name"] = "Material.001".into());
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("terrain.new_map.material") && err.contains("L02, L04, L33, WATER"),
        "{err}"
    );
}

#[test]
fn sizes_the_game_does_not_have_are_refused() {
    for (squares, quads, side) in [(4, 2, 800.0), (8, 2, 100.0), (16, 8, 2400.0)] {
        let e = GridSpec {
            squares,
            quads,
            side,
        }
        .check()
        .unwrap_err();
        assert_eq!(e.rule, "terrain.new_map.size", "{squares} {quads} {side}");
    }
    GridSpec {
        squares: 16,
        quads: 7,
        side: 2490.0,
    }
    .check()
    .unwrap();
}

#[test]
fn water_faces_make_lake_areals_and_liquid_flags() {
    let spec = GridSpec {
        squares: 8,
        quads: 1,
        side: 800.0,
    };
    let water = Paint {
        tex1: 4,
        tex2: NO_TEX2,
        water: true,
        bed: false,
    };
    let mut g = HeightGrid::flat(spec, 5.0, paint(1, NO_TEX2));
    g.quads[0] = g.quads[0].map(|(t, _)| (t, water));
    let made = author::make(g).unwrap();
    let land = read::decode(&made.msh).unwrap();
    let m = map::decode(&made.map).unwrap();
    assert_eq!(m.areals[0].words, [0, 0, 0xF0, 0]);
    assert_eq!(m.areals[1].words, [1, 0, 1, 0]);
    let w: Vec<_> = land.faces.iter().filter(|f| f.tex1 == 4).collect();
    assert_eq!(w.len(), 4);
    assert!(w.iter().all(|f| f.flags == 0x608 && f.surface == 0x12));
    assert_eq!(palette().paint("WATER").unwrap(), water);
    assert_eq!(palette().paint("L02+L04.001").unwrap(), paint(1, 2));
}
