//! Maps stay consistent (issue 37 item 3): Land.map's areal vertices on
//! the LOD 0 ground of Land.msh (terrain-notes §2, `terrain::areals`) and
//! the two-material patch borders stored twice (terrain-notes §1.7, §5.1;
//! rule `terrain.patch_vertices`, `terrain::patches`); through the API on
//! the generated map of `tests/land`, and through `gltf2msh --base` on the
//! corpus maps (a raised hill, a repaint with an A+B material).

mod common;
mod land;

use std::collections::BTreeSet;
use std::path::Path;

use mshgltf::terrain::ir::*;
use mshgltf::terrain::{self, areals, ground::Ground, map, patches, validate, Mode};

/// Repaints LOD0 face `f` of the tiny map to the pair `(tex1, tex2)`.
fn repaint(l: &mut Land, f: usize, tex1: u8, tex2: u8) {
    l.faces[f].tex1 = tex1;
    l.faces[f].tex2 = tex2;
    l.faces[f].flags = if tex2 == NO_TEX2 { 0x600 } else { 0x604 };
}

/// A face of square 1 repainted to (1, 2) next to one-material ground of
/// row 1 (the pair's first): its three vertices, shared with the square's
/// other face and its LOD1 faces, are split; each copy carries Res14 0.0
/// (next to first-material ground); positions, normals and UVs are copied;
/// the strict validator refuses the shared vertices and accepts the split.
#[test]
fn a_repaint_next_to_first_material_ground_splits_with_alpha_0() {
    let mut l = land::tiny_land(2);
    let nv = l.positions.len();
    assert_eq!(nv, 16);
    assert!(patches::shared_vertices(&l).is_empty());
    validate::validate(&l, Mode::Strict).unwrap();
    repaint(&mut l, 2, 1, 2);
    let shared: Vec<usize> = patches::shared_vertices(&l)
        .iter()
        .map(|s| s.vertex)
        .collect();
    assert_eq!(shared, vec![4, 5, 6]);
    let e = validate::validate(&l, Mode::Strict).unwrap_err();
    assert_eq!(
        (e.rule, e.stream, e.record),
        ("terrain.patch_vertices", Some(3), Some(4))
    );
    let before = l.clone();
    let rep = patches::split_borders(&mut l, &BTreeSet::from([2]), &BTreeSet::new()).unwrap();
    assert_eq!(
        (rep.split_vertices, rep.new_vertices, rep.alpha_set),
        (3, 3, 3)
    );
    assert_eq!(l.faces[2].v, [16, 17, 18]);
    // The other faces keep the base vertices.
    assert_eq!(l.faces[3].v, before.faces[3].v);
    assert_eq!(l.faces[10].v, before.faces[10].v);
    for (k, &v) in [4usize, 5, 6].iter().enumerate() {
        let n = nv + k;
        assert_eq!(l.positions[n], l.positions[v]);
        assert_eq!(l.normals[n], l.normals[v]);
        assert_eq!((l.uv0[n], l.uv1[n]), (l.uv0[v], l.uv1[v]));
        assert_eq!(l.alpha_of(n), 0.0);
        assert_eq!(l.alpha_of(v), 1.0);
    }
    assert!(patches::shared_vertices(&l).is_empty());
    validate::validate(&l, Mode::Strict).unwrap();
    // Written and read back: the same map.
    let back = terrain::read::decode(&terrain::write::encode(&l).unwrap()).unwrap();
    assert_eq!(back.positions.len(), 19);
    assert_eq!(back.faces, l.faces);
}

/// The pair (2, 1) next to one-material ground of row 1 (its second
/// material): the copies carry Res14 1.0; a user-set alpha (on the
/// vertex that moves to the copy) is kept instead.
#[test]
fn a_repaint_next_to_second_material_ground_splits_with_alpha_1() {
    let mut l = land::tiny_land(2);
    repaint(&mut l, 2, 2, 1);
    let alpha = l.alpha.as_mut().unwrap();
    (alpha[4], alpha[5], alpha[6]) = (0.25, 0.25, 0.25);
    let rep = patches::split_borders(&mut l, &BTreeSet::from([2]), &BTreeSet::from([5])).unwrap();
    assert_eq!((rep.split_vertices, rep.new_vertices), (3, 3));
    assert_eq!(l.faces[2].v, [16, 17, 18]);
    // Copies: the rule (1.0) for 4 and 6, the user's 0.25 for 5.
    assert_eq!([16, 17, 18].map(|v| l.alpha_of(v)), [1.0, 0.25, 1.0]);
    // The one-material side keeps the base vertex, its alpha as stored.
    assert_eq!([4, 5, 6].map(|v| l.alpha_of(v)), [0.25; 3]);
    validate::validate(&l, Mode::Strict).unwrap();
}

/// A base patch (square 0, pair (1, 2)) sharing nothing: no split, and a
/// one-material repaint far from any patch needs none either.
#[test]
fn no_patch_border_no_split() {
    let mut l = land::tiny_land(2);
    repaint(&mut l, 6, 2, NO_TEX2);
    repaint(&mut l, 7, 2, NO_TEX2);
    repaint(&mut l, 14, 2, NO_TEX2);
    repaint(&mut l, 15, 2, NO_TEX2);
    let before = l.clone();
    let rep = patches::split_borders(&mut l, &BTreeSet::from([6, 7]), &BTreeSet::new()).unwrap();
    assert_eq!(rep, patches::SplitReport::default());
    assert_eq!(l, before);
}

/// An areal map over square 0 (one areal, 4 vertices inside it) and
/// square 3 (another), on the tiny map's ground.
fn two_areals(l: &Land) -> map::ArealMap {
    let g = Ground::new(l);
    let mut m = land::tiny_map();
    let quad = |x0: f32, y0: f32| -> Vec<[f32; 3]> {
        [(2.5, 2.5), (7.5, 2.5), (7.5, 7.5), (2.5, 7.5)]
            .iter()
            .map(|&(x, y)| [x0 + x, y0 + y, g.height_at(x0 + x, y0 + y).unwrap()])
            .collect()
    };
    let a = m.areals[0].clone();
    m.areals = vec![
        map::Areal {
            vertices: quad(0.0, 0.0),
            ..a.clone()
        },
        map::Areal {
            vertices: quad(10.0, 10.0),
            ..a
        },
    ];
    m
}

/// The ground under an areal vertex is the LOD 0 plane: at (7.5, 7.5) on
/// square 0's diagonal, 0.75 × z(10, 10) + 0.25 × z(0, 0). A hill raised
/// at (10, 10) of square 0 (+4) moves the 4 vertices of the areal over it
/// onto the new ground, exactly `Ground::height_at` of the edited map;
/// the other areal keeps its bytes.
#[test]
fn areal_vertices_follow_a_height_edit_exactly() {
    let base = land::tiny_land(2);
    let m0 = two_areals(&base);
    // z(0,0) = 0, z(10,10) = 1 + 0.5 + 1 = 2.5 (tests/land height()).
    assert_eq!(m0.areals[0].vertices[2][2], 0.75 * 2.5);
    assert!(areals::off_ground(&m0, &base).is_empty());
    let mut edited = base.clone();
    edited.positions[2][2] += 4.0;
    // Every areal vertex of square 0 is now off the ground.
    assert_eq!(areals::off_ground(&m0, &edited).len(), 4);
    let mut m = m0.clone();
    let rep = areals::follow_ground(&mut m, &base, &edited);
    assert_eq!((rep.moved_vertices, rep.changed_areals), (4, 1));
    assert!(rep.left_off.is_empty());
    let g = Ground::new(&edited);
    for p in &m.areals[0].vertices {
        assert_eq!(p[2].to_bits(), g.height_at(p[0], p[1]).unwrap().to_bits());
    }
    assert!((m.areals[0].vertices[2][2] - 0.75 * 6.5).abs() < 1e-6);
    assert!((rep.max_change - 3.0).abs() < 1e-6, "{rep:?}");
    assert_eq!(m.areals[1], m0.areals[1]);
    assert!(areals::off_ground(&m, &edited).is_empty());
    // XY untouched.
    for (a, b) in m.areals[0].vertices.iter().zip(&m0.areals[0].vertices) {
        assert_eq!((a[0], a[1]), (b[0], b[1]));
    }
    // A new map's areals put on the ground the same way.
    let mut placed = m0.clone();
    placed
        .areals
        .iter_mut()
        .flat_map(|a| a.vertices.iter_mut())
        .for_each(|p| p[2] = -9.0);
    assert!(areals::place_on_ground(&mut placed, &base).is_empty());
    assert_eq!(placed, m0);
    // No edit: nothing moves, the bytes stay.
    let bytes = map::encode(&m0).unwrap();
    let (out, _, rep) = areals::follow_bytes(&bytes, &base, &base).unwrap();
    assert!(out.is_none() && rep.unchanged());
}

/// An areal vertex past the map's edge has no ground: it is never moved,
/// and named when the base had ground there.
#[test]
fn an_areal_vertex_off_the_map_is_named_not_moved() {
    let base = land::tiny_land(2);
    let mut m = two_areals(&base);
    m.areals[1].vertices[0] = [25.0, 25.0, 7.0];
    let off = areals::off_ground(&m, &base);
    assert_eq!(off.len(), 1);
    assert_eq!((off[0].areal, off[0].vertex, off[0].ground), (1, 0, None));
    assert!(areals::describe_off(&off, 20)
        .contains("areal 1 vertex 0 at (25, 25) z 7 (no ground under it)"));
    let mut edited = base.clone();
    edited.positions.iter_mut().for_each(|p| p[2] += 1.0);
    let rep = areals::follow_ground(&mut m, &base, &edited);
    assert_eq!(rep.moved_vertices, 7);
    assert_eq!(m.areals[1].vertices[0], [25.0, 25.0, 7.0]);
}

/// The corpus maps' areal vertices are on the ground as
/// `Ground::height_at` finds it: measured (m01: 3741 of 4798 exactly,
/// the rest within 7.6e-6; m02: 3416 of 4786, within 3.8e-6), none
/// without ground, all within `AREAL_Z_TOLERANCE`.
#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn corpus_areal_vertices_are_on_the_lod0_ground() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    for m in ["m01", "m02"] {
        let dir = corpus.join("MAPS").join(m);
        let land = terrain::read::decode(&std::fs::read(dir.join("Land.msh")).unwrap()).unwrap();
        let amap = map::decode(&std::fs::read(dir.join("Land.map")).unwrap()).unwrap();
        let all = areals::vertices_over(&amap, &land);
        let worst = all
            .iter()
            .filter_map(|v| v.ground.map(|g| (v.at[2] - g).abs()))
            .fold(0.0f32, f32::max);
        let exact = all
            .iter()
            .filter(|v| v.ground.map(f32::to_bits) == Some(v.at[2].to_bits()))
            .count();
        let none = all.iter().filter(|v| v.ground.is_none()).count();
        println!(
            "{m}: {} areal vertices, {exact} exactly at Ground::height_at, max |z - ground| {worst:e}, {none} without ground",
            all.len()
        );
        assert_eq!(none, 0, "{m}");
        assert!(worst <= 1e-5, "{m}: {worst}");
        assert!(areals::off_ground(&amap, &land).is_empty());
        // The corpus keeps patch borders apart (the rule holds on both LODs).
        assert!(patches::shared_vertices(&land).is_empty(), "{m}");
    }
}

fn split_glb(b: &[u8]) -> (serde_json::Value, Vec<u8>) {
    let u = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap()) as usize;
    let jl = u(12);
    let json = serde_json::from_slice(&b[20..20 + jl]).unwrap();
    let bl = u(20 + jl);
    (json, b[28 + jl..28 + jl + bl].to_vec())
}

/// The (byte offset, count) of a VEC3 float accessor, tightly packed.
fn vec3_at(j: &serde_json::Value, a: usize) -> (usize, usize) {
    let acc = &j["accessors"][a];
    let view = &j["bufferViews"][acc["bufferView"].as_u64().unwrap() as usize];
    assert!(view["byteStride"].as_u64().is_none_or(|s| s == 12));
    let off = view["byteOffset"].as_u64().unwrap_or(0) + acc["byteOffset"].as_u64().unwrap_or(0);
    (off as usize, acc["count"].as_u64().unwrap() as usize)
}

/// Raises a round hill (cosine, `h` high, radius `r`) at game `(cx, cy)`
/// on every terrain primitive of an msh2gltf export (glTF Y-up: game z is
/// glTF y, game y is −glTF z); returns the glTF vertices moved.
fn raise_hill(
    j: &mut serde_json::Value,
    bin: &mut [u8],
    (cx, cy, r, h): (f32, f32, f32, f32),
) -> usize {
    let mut moved = 0;
    let mut done = BTreeSet::new();
    let meshes = j["meshes"].as_array().unwrap().len();
    for m in 0..meshes {
        let prims = j["meshes"][m]["primitives"].as_array().unwrap().len();
        for p in 0..prims {
            let Some(a) = j["meshes"][m]["primitives"][p]["attributes"]["POSITION"].as_u64() else {
                continue;
            };
            if j["meshes"][m]["primitives"][p]["mode"]
                .as_u64()
                .unwrap_or(4)
                != 4
                || !done.insert(a)
            {
                continue;
            }
            let (off, n) = vec3_at(j, a as usize);
            let mut max_y = f32::MIN;
            for i in 0..n {
                let f = |k: usize| {
                    let o = off + 12 * i + 4 * k;
                    f32::from_le_bytes(bin[o..o + 4].try_into().unwrap())
                };
                let (x, y) = (f(0), -f(2));
                let d = ((x - cx).powi(2) + (y - cy).powi(2)).sqrt();
                let mut z = f(1);
                if d < r {
                    z += h * 0.5 * (1.0 + (std::f32::consts::PI * d / r).cos());
                    let o = off + 12 * i + 4;
                    bin[o..o + 4].copy_from_slice(&z.to_le_bytes());
                    moved += 1;
                }
                max_y = max_y.max(z);
            }
            let acc = &mut j["accessors"][a as usize];
            if acc["max"].is_array() {
                acc["max"][1] =
                    serde_json::json!(max_y.max(acc["max"][1].as_f64().unwrap() as f32));
            }
        }
    }
    moved
}

/// The corpus map `m` exported by msh2gltf into `dir`: (json, bin).
fn export_map(m: &Path, dir: &Path) -> (serde_json::Value, Vec<u8>) {
    let glb = dir.join("map.glb");
    let o = common::msh2gltf().arg(m).arg(&glb).output().unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    split_glb(&std::fs::read(&glb).unwrap())
}

fn gltf2msh(
    dir: &Path,
    json: &serde_json::Value,
    bin: &[u8],
    args: &[&std::ffi::OsStr],
) -> std::process::Output {
    let glb = dir.join("edit.glb");
    std::fs::write(&glb, common::glb(json, bin)).unwrap();
    common::gltf2msh().arg(&glb).args(args).output().unwrap()
}

/// Both files as the strict reader reads them (`TerrainSource::load`,
/// strict), and every areal vertex on the map's ground.
fn strict_and_on_ground(msh: &Path) -> terrain::source::TerrainSource {
    let src = terrain::source::TerrainSource::load(msh, Mode::Strict, None)
        .unwrap_or_else(|e| panic!("{}: {e}", msh.display()));
    let m = src.map.as_ref().expect("Land.map read");
    let off = areals::off_ground(m, &src.land);
    assert!(
        off.is_empty(),
        "{}: {}",
        msh.display(),
        areals::describe_off(&off, 20)
    );
    src
}

/// `gltf2msh map.glb --base MAPS/m01/Land.msh -o OUT/Land.msh` with a hill
/// raised (30 units high, radius 120 at the map's middle): OUT/Land.map is
/// written beside it with every areal vertex on the new ground; both read
/// strictly. With `--in-place` both replace the map folder's own files in
/// one commit. An unedited export writes no Land.map.
#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn a_raised_hill_takes_land_map_along() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    for name in ["m01", "m02"] {
        let tmp = tempfile::tempdir().unwrap();
        let src = corpus.join("MAPS").join(name);
        let base = src.join("Land.msh");
        let (mut j, mut bin) = export_map(&base, tmp.path());
        // Unedited: Land.msh only.
        let out = tmp.path().join("same");
        std::fs::create_dir(&out).unwrap();
        let o = gltf2msh(
            tmp.path(),
            &j,
            &bin,
            &[
                "--base".as_ref(),
                base.as_os_str(),
                "-o".as_ref(),
                out.join("Land.msh").as_os_str(),
            ],
        );
        assert!(o.status.success(), "{}", common::stderr(&o));
        assert!(!out.join("Land.map").exists(), "{}", common::stderr(&o));
        let land = terrain::read::decode(&std::fs::read(&base).unwrap()).unwrap();
        let (lo, hi) = validate::corner_box(&land.corners);
        let (cx, cy) = ((lo[0] + hi[0]) / 2.0, (lo[1] + hi[1]) / 2.0);
        let moved = raise_hill(&mut j, &mut bin, (cx, cy, 120.0, 30.0));
        assert!(moved > 20, "{moved}");
        let out = tmp.path().join("OUT");
        std::fs::create_dir(&out).unwrap();
        let rep = tmp.path().join("r.json");
        let o = gltf2msh(
            tmp.path(),
            &j,
            &bin,
            &[
                "--base".as_ref(),
                base.as_os_str(),
                "-o".as_ref(),
                out.join("Land.msh").as_os_str(),
                "--report".as_ref(),
                rep.as_os_str(),
            ],
        );
        let err = common::stderr(&o);
        assert!(o.status.success(), "{err}");
        assert!(err.contains("Land.map ("), "{err}");
        let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&rep).unwrap()).unwrap();
        let lm = &r["import"]["land_map"];
        let n = lm["moved_vertices"].as_u64().unwrap();
        assert!(n > 0, "{r:#}");
        assert_eq!(lm["off_ground"], 0, "{r:#}");
        assert_eq!(lm["written"], out.join("Land.map").display().to_string());
        println!("{name}: {moved} glTF vertices raised, {n} areal vertices follow ({} areals, by up to {})", lm["changed_areals"], lm["max_change"]);
        // The strict reader on the written pair (the WEAR tables beside).
        for w in ["Land1.wea", "Land2.wea"] {
            std::fs::copy(src.join(w), out.join(w)).unwrap();
        }
        let s = strict_and_on_ground(&out.join("Land.msh"));
        let before = map::decode(&std::fs::read(src.join("Land.map")).unwrap()).unwrap();
        let after = s.map.unwrap();
        let changed = before
            .areals
            .iter()
            .zip(&after.areals)
            .flat_map(|(a, b)| a.vertices.iter().zip(&b.vertices))
            .filter(|(a, b)| a != b)
            .count();
        assert_eq!(changed as u64, n);
        // Only z changes.
        assert_eq!(after.cells, before.cells);
        in_place(tmp.path(), &src, (&j, &bin), &out);
        // OUT2/Land.map exists: an output like any, refused without
        // --force before anything is written (Land.msh neither).
        let out2 = tmp.path().join("OUT2");
        std::fs::create_dir(&out2).unwrap();
        std::fs::write(out2.join("Land.map"), b"keep").unwrap();
        let o = gltf2msh(
            tmp.path(),
            &j,
            &bin,
            &[
                "--base".as_ref(),
                base.as_os_str(),
                "-o".as_ref(),
                out2.join("Land.msh").as_os_str(),
            ],
        );
        assert_eq!(o.status.code(), Some(2), "{}", common::stderr(&o));
        assert!(
            common::stderr(&o).contains("Land.map"),
            "{}",
            common::stderr(&o)
        );
        assert!(!out2.join("Land.msh").exists());
        assert_eq!(std::fs::read(out2.join("Land.map")).unwrap(), b"keep");
    }
}

/// `--in-place`: both files into a copy of the map's folder, the same bytes
/// as the `-o` run wrote into `out`, nothing else left behind.
fn in_place(tmp: &Path, src: &Path, (j, bin): (&serde_json::Value, &[u8]), out: &Path) {
    // In place: both files into the map's folder.
    let game = tmp.join("game");
    std::fs::create_dir(&game).unwrap();
    for f in ["Land.msh", "Land.map", "Land1.wea", "Land2.wea"] {
        std::fs::copy(src.join(f), game.join(f)).unwrap();
    }
    let o = gltf2msh(
        tmp,
        j,
        bin,
        &[
            "--base".as_ref(),
            game.join("Land.msh").as_os_str(),
            "--in-place".as_ref(),
        ],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert_eq!(
        std::fs::read(game.join("Land.msh")).unwrap(),
        std::fs::read(out.join("Land.msh")).unwrap()
    );
    assert_eq!(
        std::fs::read(game.join("Land.map")).unwrap(),
        std::fs::read(out.join("Land.map")).unwrap()
    );
    strict_and_on_ground(&game.join("Land.msh"));
    // Nothing else left behind (no journal, no temporary; the lock
    // files stay, as every in-place run leaves them).
    let left: Vec<_> = std::fs::read_dir(&game)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !mshgltf::output::is_lock_file(p))
        .collect();
    assert_eq!(left.len(), 4, "{left:?}");
}

/// A whole one-material primitive of the export given an A+B material (a
/// repaint of every face of that class): "N faces repainted" with N its
/// triangles, the shared border vertices split, the strict reader accepts
/// the map (the patch rule holds) and Land.map is not written (no height
/// changed).
#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn a_two_material_repaint_is_split_and_read_strictly() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    for name in ["m01", "m02"] {
        let tmp = tempfile::tempdir().unwrap();
        let src = corpus.join("MAPS").join(name);
        let base = src.join("Land.msh");
        let (mut j, bin) = export_map(&base, tmp.path());
        let mats = j["materials"].as_array().unwrap().clone();
        let t = |m: &serde_json::Value, k: &str| m["extras"]["parkan_terrain"][k].as_u64();
        // A one-material land class and an A+B class whose first is another row.
        let prims = j["meshes"][0]["primitives"].as_array().unwrap().clone();
        let (pi, tri, ab) = prims
            .iter()
            .enumerate()
            .find_map(|(pi, p)| {
                let m = &mats[p["material"].as_u64()? as usize];
                if t(m, "tex2")? != 255 || t(m, "flags")? != 0x600 {
                    return None;
                }
                let ab = mats.iter().position(|x| {
                    t(x, "tex2").is_some_and(|v| v != 255)
                        && t(x, "flags") == Some(0x604)
                        && t(x, "tex1") == t(m, "tex1")
                })?;
                let n = j["accessors"][p["indices"].as_u64()? as usize]["count"].as_u64()? / 3;
                Some((pi, n, ab))
            })
            .expect("a one-material class with an A+B class of the same first material");
        j["meshes"][0]["primitives"][pi]["material"] = serde_json::json!(ab);
        let out = tmp.path().join("OUT");
        std::fs::create_dir(&out).unwrap();
        let rep = tmp.path().join("r.json");
        let o = gltf2msh(
            tmp.path(),
            &j,
            &bin,
            &[
                "--base".as_ref(),
                base.as_os_str(),
                "-o".as_ref(),
                out.join("Land.msh").as_os_str(),
                "--report".as_ref(),
                rep.as_os_str(),
            ],
        );
        let err = common::stderr(&o);
        assert!(o.status.success(), "{err}");
        assert!(err.contains(&format!("{tri} faces repainted")), "{err}");
        let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&rep).unwrap()).unwrap();
        let split = r["import"]["split_vertices"].as_u64().unwrap();
        assert!(split > 0, "{r:#}");
        assert!(!out.join("Land.map").exists());
        println!(
            "{name}: {tri} faces repainted to {}, {split} vertices split ({} copies)",
            mats[ab]["name"], r["import"]["patch_copies"]
        );
        for w in ["Land.map", "Land1.wea", "Land2.wea"] {
            std::fs::copy(src.join(w), out.join(w)).unwrap();
        }
        let s = strict_and_on_ground(&out.join("Land.msh"));
        assert!(patches::shared_vertices(&s.land).is_empty());
    }
}
