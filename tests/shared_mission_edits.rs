//! Mission write-back under edits and hostile extras (issue 36 items 4, 6,
//! 7 and 8): a scene at the game's scale comes back byte for byte and
//! passes the Khronos validator; every edit of a mission scene is written
//! or a warning naming it (never "unchanged"); extras of the wrong type, a
//! broken hierarchy, a forged convention and paths the game cannot load
//! are refused before anything is written; no mission GLB holds `null`
//! where a number belongs.

mod common;

use std::path::{Path, PathBuf};

use mshgltf::mission::ir::{Mission, PlacedObject};
use mshgltf::mission::{tma, Mode};
use serde_json::{json, Value};

/// The JSON and BIN chunks of a GLB.
fn glb_chunks(b: &[u8]) -> (Value, Vec<u8>) {
    assert_eq!(&b[..4], b"glTF");
    let jl = u32::from_le_bytes(b[12..16].try_into().unwrap()) as usize;
    let json = serde_json::from_slice(&b[20..20 + jl]).unwrap();
    let at = 20 + jl;
    let bin = if b.len() > at + 8 {
        let bl = u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize;
        b[at + 8..at + 8 + bl].to_vec()
    } else {
        Vec::new()
    };
    (json, bin)
}

/// The corpus path of the manifest's first mission's `data.tma`.
fn first_mission(root: &Path) -> PathBuf {
    root.join(
        common::manifest(root)["missions"][0]["files"]["data.tma"]["path"]
            .as_str()
            .unwrap(),
    )
}

/// msh2gltf `tma` → `out` with `args`; the run's output.
fn export_with(tma: &Path, out: &Path, args: &[&str]) -> std::process::Output {
    common::msh2gltf()
        .arg(tma)
        .arg(out)
        .arg("--force")
        .args(args)
        .output()
        .unwrap()
}

/// msh2gltf `tma` → `out` (panics when it fails); the GLB's chunks.
fn export(tma: &Path, out: &Path, args: &[&str]) -> (Value, Vec<u8>) {
    let o = export_with(tma, out, args);
    assert!(o.status.success(), "{}", common::stderr(&o));
    glb_chunks(&std::fs::read(out).unwrap())
}

/// gltf2msh `glb` --base `tma` -o `out` `args`: the run's output.
fn write_back(glb: &Path, tma: &Path, out: &Path, args: &[&str]) -> std::process::Output {
    common::gltf2msh()
        .arg(glb)
        .arg("--base")
        .arg(tma)
        .arg("-o")
        .arg(out)
        .args(args)
        .output()
        .unwrap()
}

/// A mission written into `dir/MISSIONS/T/data.tma` (read with
/// `--game-dir` the corpus).
fn mission_file(dir: &Path, m: &Mission) -> PathBuf {
    let d = dir.join("MISSIONS").join("T");
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join("data.tma");
    std::fs::write(&p, tma::write(m)).unwrap();
    p
}

fn corpus_mission(root: &Path) -> Mission {
    tma::read(&std::fs::read(first_mission(root)).unwrap(), Mode::Strict)
        .unwrap()
        .0
}

/// Runs ../shared/tools/gltf-validate on `files` (skipped when absent).
fn validate(files: &[PathBuf]) {
    let tool = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/tools/gltf-validate");
    if !tool.is_file() {
        println!("SKIP validator");
        return;
    }
    let o = std::process::Command::new(&tool)
        .args(files)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "gltf-validate:\n{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Every node of `doc` with `children` has some, and no top-level array
/// is empty (the validator's EMPTY_ENTITY).
fn no_empty_arrays(doc: &Value) {
    for (k, v) in doc.as_object().unwrap() {
        if let Some(a) = v.as_array() {
            assert!(!a.is_empty(), "top-level {k} is empty");
        }
    }
    for n in doc["nodes"].as_array().unwrap() {
        if let Some(c) = n.get("children") {
            assert!(
                !c.as_array().unwrap().is_empty(),
                "{}: children []",
                n["name"]
            );
        }
    }
}

/// No node transform and no accessor bound of `doc` holds anything but
/// numbers.
fn only_numbers(doc: &Value) {
    no_null(doc, "");
    for n in doc["nodes"].as_array().unwrap() {
        for k in ["translation", "rotation", "scale", "matrix"] {
            if let Some(v) = n.get(k) {
                assert!(
                    v.as_array().unwrap().iter().all(Value::is_number),
                    "{}: {k} {v}",
                    n["name"]
                );
            }
        }
    }
    for a in doc["accessors"].as_array().into_iter().flatten() {
        for k in ["min", "max"] {
            if let Some(v) = a.get(k) {
                assert!(
                    v.as_array().unwrap().iter().all(Value::is_number),
                    "{k} {v}"
                );
            }
        }
    }
}

/// No `null` where a number stands anywhere in the document, extras
/// included: no array element is `null` (positions, bounds, display
/// numbers) nor a display radius or amount (a number that is not finite
/// is a text there, its raw bits beside it). A `null` that means "none"
/// (a terrain material's `overlay`) is no number.
fn no_null(v: &Value, at: &str) {
    match v {
        Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| {
            assert!(!x.is_null(), "null at {at}/{i}");
            no_null(x, &format!("{at}/{i}"));
        }),
        Value::Object(o) => o.iter().for_each(|(k, x)| {
            let numeric = [
                "inner",
                "outer",
                "amount",
                "translation",
                "rotation",
                "scale",
            ];
            assert!(
                !(x.is_null() && numeric.contains(&k.as_str())),
                "null at {at}/{k}"
            );
            no_null(x, &format!("{at}/{k}"));
        }),
        _ => {}
    }
}

// ---------------------------------------------------------------- item 4

/// A grid glTF of `w`×`h` quads (2·w·h triangles), one mesh, one node.
fn grid_gltf(w: u32, h: u32) -> Vec<u8> {
    let mut bin = Vec::new();
    let (mut lo, mut hi) = ([f32::MAX; 3], [f32::MIN; 3]);
    for j in 0..=h {
        for i in 0..=w {
            let p = [
                i as f32 * 0.05,
                ((i * 7 + j * 13) % 5) as f32 * 0.01,
                j as f32 * 0.05,
            ];
            for k in 0..3 {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
                bin.extend_from_slice(&p[k].to_le_bytes());
            }
        }
    }
    let vbytes = bin.len();
    let n = (w + 1) * (h + 1);
    let mut count = 0;
    for j in 0..h {
        for i in 0..w {
            let a = j * (w + 1) + i;
            for v in [a, a + 1, a + w + 1, a + 1, a + w + 2, a + w + 1] {
                bin.extend_from_slice(&v.to_le_bytes());
                count += 1;
            }
        }
    }
    let doc = json!({
        "asset": {"version": "2.0"},
        "scene": 0, "scenes": [{"nodes": [0]}],
        "nodes": [{"name": "heavy", "mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 1}]}],
        "buffers": [{"byteLength": bin.len()}],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": vbytes, "target": 34962},
            {"buffer": 0, "byteOffset": vbytes, "byteLength": bin.len() - vbytes, "target": 34963}],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": n, "type": "VEC3", "min": lo, "max": hi},
            {"bufferView": 1, "componentType": 5125, "count": count, "type": "SCALAR"}],
    });
    common::glb(&doc, &bin)
}

/// A copy of the corpus's game files in `g` (symbolic links, except
/// `objects.rlb`, which gains record `heavy_rock` naming `heavy.rlb`'s
/// `heavy.msh`: a model of `tris` triangles authored by gltf2msh).
fn heavy_game(root: &Path, g: &Path, w: u32, h: u32) {
    use mshgltf::nres;
    std::fs::create_dir_all(g).unwrap();
    for e in std::fs::read_dir(root).unwrap().flatten() {
        let name = e.file_name();
        let n = name.to_string_lossy().to_lowercase();
        if n == "missions" || n == "objects.rlb" || n == "bad" || n == "models" {
            continue;
        }
        std::os::unix::fs::symlink(e.path(), g.join(&name)).unwrap();
    }
    let tmp = g.join("authoring");
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::write(tmp.join("grid.glb"), grid_gltf(w, h)).unwrap();
    let o = common::gltf2msh()
        .arg(tmp.join("grid.glb"))
        .arg("-o")
        .arg(tmp.join("heavy.msh"))
        .arg("-q")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    let model = std::fs::read(tmp.join("heavy.msh")).unwrap();
    let stat = std::fs::read(root.join("static.rlb")).unwrap();
    let sa = nres::read(&stat, nres::Mode::Strict).unwrap();
    let proto = &sa.entries[0];
    let arch = nres::write(&[nres::Entry {
        type_id: proto.type_id,
        attr1: proto.attr1,
        attr2: proto.attr2,
        attr3: proto.attr3,
        name: b"heavy.msh",
        data: &model,
    }])
    .unwrap();
    std::fs::write(g.join("heavy.rlb"), arch).unwrap();
    let reg = std::fs::read(root.join("objects.rlb")).unwrap();
    let ra = nres::read(&reg, nres::Mode::Strict).unwrap();
    let mut slot = vec![0u8; 64];
    slot[..9].copy_from_slice(b"heavy.rlb");
    slot[32..41].copy_from_slice(b"heavy.msh");
    let mut entries: Vec<nres::Entry<'_>> = ra
        .entries
        .iter()
        .map(|e| nres::Entry {
            type_id: e.type_id,
            attr1: e.attr1,
            attr2: e.attr2,
            attr3: e.attr3,
            name: e.name,
            data: e.data,
        })
        .collect();
    let p = &ra.entries[0];
    entries.push(nres::Entry {
        type_id: p.type_id,
        attr1: p.attr1,
        attr2: p.attr2,
        attr3: p.attr3,
        name: b"heavy_rock",
        data: &slot,
    });
    std::fs::write(g.join("objects.rlb"), nres::write(&entries).unwrap()).unwrap();
}

/// Issue 36 item 4: a mission at the real game's scale — 326 placed
/// objects (the corpus mission's 37 placed eight times over, and 30 rocks
/// of a 40 000-triangle model) — exports, passes the Khronos validator and
/// comes back byte for byte, "unchanged". Before: `gltf.limits` (the
/// model's 65 535-triangle cap applied to the whole scene).
#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn a_mission_at_the_game_s_scale_writes_back_byte_for_byte() {
    let Some(root) = common::corpus() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let g = tmp.path().join("game");
    heavy_game(&root, &g, 200, 100);
    let mut m = corpus_mission(&root);
    let objects = m.objects.clone();
    for copy in 1..8 {
        for o in &objects {
            let mut o = o.clone();
            o.position[0] += 3.0 * copy as f32;
            o.position[1] += 2.0 * copy as f32;
            m.objects.push(o);
        }
    }
    let rock = objects.iter().find(|o| o.kind == 3).unwrap();
    for k in 0..30 {
        m.objects.push(PlacedObject {
            path: b"heavy_rock".to_vec(),
            instance_name: b"heavy_rock".to_vec(),
            position: [
                rock.position[0] + k as f32,
                rock.position[1] - k as f32,
                rock.position[2],
            ],
            ..rock.clone()
        });
    }
    let tma = g.join("MISSIONS").join("Big").join("data.tma");
    std::fs::create_dir_all(tma.parent().unwrap()).unwrap();
    std::fs::write(&tma, tma::write(&m)).unwrap();
    let glb = tmp.path().join("big.glb");
    let t0 = std::time::Instant::now();
    let (doc, _) = export(&tma, &glb, &[]);
    let t_export = t0.elapsed();
    let placed = doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["extras"].get("parkan_object").is_some())
        .count();
    assert_eq!(placed, m.objects.len());
    no_empty_arrays(&doc);
    validate(std::slice::from_ref(&glb));
    let out = tmp.path().join("big.tma");
    let t0 = std::time::Instant::now();
    let o = write_back(&glb, &tma, &out, &[]);
    let t_back = t0.elapsed();
    let err = common::stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("unchanged"), "{err}");
    assert!(std::fs::read(&out).unwrap() == std::fs::read(&tma).unwrap());
    println!(
        "{} objects, GLB {} bytes: export {t_export:?}, write-back {t_back:?}",
        m.objects.len(),
        std::fs::metadata(&glb).unwrap().len()
    );
}

/// Issue 36 item 4: a mission with no routes and no lodes exports no
/// empty `Routes` or `Lodes` group (`"children": []` is the validator's
/// EMPTY_ENTITY) and no empty array, passes the validator and comes back
/// byte for byte.
#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn a_mission_without_routes_or_lodes_has_no_empty_group() {
    let Some(root) = common::corpus() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let mut m = corpus_mission(&root);
    m.routes.clear();
    m.lodes.clear();
    let tma = mission_file(tmp.path(), &m);
    let game = root.display().to_string();
    let glb = tmp.path().join("m.glb");
    let (doc, _) = export(&tma, &glb, &["--game-dir", &game]);
    no_empty_arrays(&doc);
    let names: Vec<&str> = doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n["name"].as_str())
        .collect();
    assert!(
        !names.contains(&"Lodes") && !names.contains(&"Routes"),
        "{names:?}"
    );
    validate(std::slice::from_ref(&glb));
    let out = tmp.path().join("m.tma");
    let o = write_back(&glb, &tma, &out, &["--game-dir", &game]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(std::fs::read(&out).unwrap() == std::fs::read(&tma).unwrap());
}

// ---------------------------------------------------------------- item 6

/// The corpus's first mission exported, edited by `edit` (JSON and BIN)
/// and written back: (the bytes written, the base's, gltf2msh's stderr).
fn edited(edit: impl FnOnce(&mut Value, &mut Vec<u8>)) -> Option<(Mission, Mission, String)> {
    let root = common::corpus()?;
    let tma = first_mission(&root);
    let tmp = tempfile::tempdir().unwrap();
    let glb = tmp.path().join("m.glb");
    let (mut doc, mut bin) = export(&tma, &glb, &[]);
    edit(&mut doc, &mut bin);
    std::fs::write(&glb, common::glb(&doc, &bin)).unwrap();
    let out = tmp.path().join("m.tma");
    let o = write_back(&glb, &tma, &out, &[]);
    let err = common::stderr(&o);
    assert!(o.status.success(), "{err}");
    let read = |p: &Path| {
        tma::read(&std::fs::read(p).unwrap(), Mode::Strict)
            .unwrap()
            .0
    };
    Some((read(&out), read(&tma), err))
}

/// The index of the first node whose extras hold `key` and satisfy `f`.
fn node_where(doc: &Value, key: &str, f: impl Fn(&Value) -> bool) -> usize {
    doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .position(|n| n["extras"].get(key).is_some_and(&f))
        .unwrap_or_else(|| panic!("no node with {key}"))
}

fn add(v: &mut Value, k: usize, d: f64) {
    let t = v.as_array_mut().unwrap();
    t[k] = json!(t[k].as_f64().unwrap() + d);
}

/// Adds `d` to component `c` of element `e` of float accessor `a`.
fn bump(doc: &Value, bin: &mut [u8], a: usize, e: usize, c: usize, d: f32) {
    let acc = &doc["accessors"][a];
    let view = &doc["bufferViews"][acc["bufferView"].as_u64().unwrap() as usize];
    let stride = view["byteStride"].as_u64().unwrap_or(12) as usize;
    let at = view["byteOffset"].as_u64().unwrap_or(0) as usize
        + acc["byteOffset"].as_u64().unwrap_or(0) as usize
        + e * stride
        + 4 * c;
    let v = f32::from_le_bytes(bin[at..at + 4].try_into().unwrap()) + d;
    bin[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// The warning lines of `err` naming `what` and saying "not written".
fn warned(err: &str, what: &str) -> bool {
    err.lines()
        .any(|l| l.contains("warning") && l.contains(what) && l.contains("not written"))
}

/// Issue 36 item 6: a zone empty moved 5 along glTF x moves its zone's
/// centre 5 along game x; nothing else changes.
#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn a_moved_zone_is_written() {
    let mut zone = (0, 0);
    let Some((new, base, err)) = edited(|doc, _| {
        let i = node_where(doc, "parkan_zone", |_| true);
        let x = &doc["nodes"][i]["extras"]["parkan_zone"];
        zone = (
            x["clan"].as_u64().unwrap() as usize,
            x["index"].as_u64().unwrap() as usize,
        );
        add(&mut doc["nodes"][i]["translation"], 0, 5.0);
    }) else {
        return;
    };
    let (c, k) = zone;
    let (a, b) = (&new.clans[c].zones[k], &base.clans[c].zones[k]);
    assert!((a.centre[0] - b.centre[0] - 5.0).abs() < 1e-3, "{err}");
    assert_eq!((a.centre[1], a.centre[2]), (b.centre[1], b.centre[2]));
    let mut undone = new.clone();
    undone.clans[c].zones[k].centre = b.centre;
    assert_eq!(undone, base);
    assert!(!err.contains("unchanged"), "{err}");
}

/// Issue 36 item 6: a route point moved in the route's mesh (and, second
/// case, the whole route node moved) is written: the route's points follow
/// the mesh in the node's world space.
#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn edited_route_points_are_written() {
    let mut route = 0;
    let Some((new, base, err)) = edited(|doc, bin| {
        let i = node_where(doc, "parkan_route", |_| true);
        route = doc["nodes"][i]["extras"]["parkan_route"]["index"]
            .as_u64()
            .unwrap() as usize;
        let m = doc["nodes"][i]["mesh"].as_u64().unwrap() as usize;
        let a = doc["meshes"][m]["primitives"][0]["attributes"]["POSITION"]
            .as_u64()
            .unwrap() as usize;
        bump(doc, bin, a, 1, 0, 3.0);
    }) else {
        return;
    };
    let (p, q) = (&new.routes[route].points, &base.routes[route].points);
    assert!((p[1][0] - q[1][0] - 3.0).abs() < 1e-3, "{err}");
    assert_eq!(p[0], q[0]);
    assert!(!err.contains("unchanged"), "{err}");
    let Some((new, base, err)) = edited(|doc, _| {
        let i = node_where(doc, "parkan_route", |_| true);
        doc["nodes"][i]["translation"] = json!([5.0, 0.0, 0.0]);
    }) else {
        return;
    };
    for (p, q) in new.routes[route]
        .points
        .iter()
        .zip(&base.routes[route].points)
    {
        assert!(
            (p[0] - q[0] - 5.0).abs() < 1e-3 && p[1] == q[1] && p[2] == q[2],
            "{err}"
        );
    }
}

/// The node of the first placed building and its first child piece that
/// draws.
fn building_piece(doc: &Value) -> (usize, usize) {
    let nodes = doc["nodes"].as_array().unwrap();
    for (i, n) in nodes.iter().enumerate() {
        if n["extras"]["parkan_object"]["kind"] != 0 {
            continue;
        }
        let mut stack: Vec<usize> = n["children"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap() as usize)
            .collect();
        while let Some(c) = stack.pop() {
            if nodes[c].get("mesh").is_some() {
                return (i, c);
            }
            for k in nodes[c]["children"].as_array().into_iter().flatten() {
                stack.push(k.as_u64().unwrap() as usize);
            }
        }
    }
    panic!("no building with a mesh piece");
}

/// Issue 36 item 6: a piece moved inside a placed building is a warning
/// naming it (data.tma places whole models); the bytes are the base's.
#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn a_piece_moved_inside_a_building_is_a_warning() {
    let mut name = String::new();
    let Some((new, base, err)) = edited(|doc, _| {
        let (_, p) = building_piece(doc);
        name = doc["nodes"][p]["name"].as_str().unwrap().to_string();
        let t = doc["nodes"][p]
            .get("translation")
            .cloned()
            .unwrap_or(json!([0.0, 0.0, 0.0]));
        doc["nodes"][p]["translation"] = t;
        add(&mut doc["nodes"][p]["translation"], 1, 2.0);
    }) else {
        return;
    };
    assert_eq!(new, base);
    assert!(warned(&err, &name) && err.contains("inside"), "{err}");
    assert!(!err.contains("unchanged"), "{err}");
}

/// Issue 36 item 6: a building's mesh reshaped (a vertex moved) is a
/// warning naming the piece; the bytes are the base's.
#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn a_reshaped_building_mesh_is_a_warning() {
    let mut name = String::new();
    let Some((new, base, err)) = edited(|doc, bin| {
        let (_, p) = building_piece(doc);
        name = doc["nodes"][p]["name"].as_str().unwrap().to_string();
        let m = doc["nodes"][p]["mesh"].as_u64().unwrap() as usize;
        let a = doc["meshes"][m]["primitives"][0]["attributes"]["POSITION"]
            .as_u64()
            .unwrap() as usize;
        bump(doc, bin, a, 0, 1, 1.5);
    }) else {
        return;
    };
    assert_eq!(new, base);
    assert!(warned(&err, &name) && err.contains("reshaped"), "{err}");
    assert!(!err.contains("unchanged"), "{err}");
}

/// Issue 36 item 6: the Terrain node moved is a warning (the map stands
/// where the game puts it); the bytes are the base's.
#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn a_moved_terrain_is_a_warning() {
    let Some((new, base, err)) = edited(|doc, _| {
        let i = node_where(doc, "parkan_terrain_scene", |_| true);
        doc["nodes"][i]["translation"] = json!([0.0, 4.0, 0.0]);
    }) else {
        return;
    };
    assert_eq!(new, base);
    assert!(warned(&err, "Terrain") && err.contains("Land.msh"), "{err}");
    assert!(!err.contains("unchanged"), "{err}");
}

/// Issue 36 item 6: a terrain vertex raised is a warning naming the
/// terrain and where to edit the map; the bytes are the base's.
#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn a_raised_terrain_vertex_is_a_warning() {
    let Some((new, base, err)) = edited(|doc, bin| {
        let t = node_where(doc, "parkan_terrain_scene", |_| true);
        let mut stack = vec![t];
        let mut mesh = None;
        while let Some(i) = stack.pop() {
            if let Some(m) = doc["nodes"][i]["mesh"].as_u64() {
                mesh = Some(m as usize);
                break;
            }
            for c in doc["nodes"][i]["children"].as_array().into_iter().flatten() {
                stack.push(c.as_u64().unwrap() as usize);
            }
        }
        let m = mesh.expect("a terrain mesh");
        let a = doc["meshes"][m]["primitives"][0]["attributes"]["POSITION"]
            .as_u64()
            .unwrap() as usize;
        bump(doc, bin, a, 0, 1, 10.0);
    }) else {
        return;
    };
    assert_eq!(new, base);
    assert!(
        warned(&err, "the terrain") && err.contains("reshaped") && err.contains("Land.msh"),
        "{err}"
    );
    assert!(!err.contains("unchanged"), "{err}");
}

/// Issue 36 item 6: a clan empty moved vertically is a warning (a clan
/// base has no height); moved across, its base is written.
#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn a_clan_moved_vertically_is_a_warning() {
    let mut name = String::new();
    let Some((new, base, err)) = edited(|doc, _| {
        let i = node_where(doc, "parkan_clan", |_| true);
        name = doc["nodes"][i]["name"].as_str().unwrap().to_string();
        add(&mut doc["nodes"][i]["translation"], 1, 10.0);
    }) else {
        return;
    };
    assert_eq!(
        new.clans.iter().map(|c| c.base).collect::<Vec<_>>(),
        base.clans.iter().map(|c| c.base).collect::<Vec<_>>()
    );
    assert!(warned(&err, &name) && err.contains("vertically"), "{err}");
    assert!(!err.contains("unchanged"), "{err}");
}

// ---------------------------------------------------------------- item 7

/// The corpus's first mission exported, edited by `edit`, written back:
/// the run must fail with exit 1, naming every string of `want`, and
/// write nothing.
fn refused(what: &str, want: &[&str], edit: impl FnOnce(&mut Value, &mut Vec<u8>)) {
    refused_with(1, what, want, edit);
}

/// [`refused`] with exit code `code` (2: a model path that does not
/// resolve is refused before the write, issue 37 item 1).
fn refused_with(code: i32, what: &str, want: &[&str], edit: impl FnOnce(&mut Value, &mut Vec<u8>)) {
    let Some(root) = common::corpus() else { return };
    let tma = first_mission(&root);
    let tmp = tempfile::tempdir().unwrap();
    let glb = tmp.path().join("m.glb");
    let (mut doc, mut bin) = export(&tma, &glb, &[]);
    edit(&mut doc, &mut bin);
    std::fs::write(&glb, common::glb(&doc, &bin)).unwrap();
    let out = tmp.path().join("m.tma");
    let o = write_back(&glb, &tma, &out, &[]);
    let err = common::stderr(&o);
    assert_eq!(o.status.code(), Some(code), "{what}: {err}");
    for w in want {
        assert!(err.contains(w), "{what}: {w:?} not in {err}");
    }
    assert!(!out.exists(), "{what}: written");
}

/// The node and extras of the first placed object of `kind` (with a host
/// when `hosted`).
fn placed(doc: &Value, kind: u64, hosted: bool) -> usize {
    node_where(doc, "parkan_object", |x| {
        x["kind"] == kind && (x["host"] != -1) == hosted
    })
}

/// Issue 36 item 7: what msh2gltf would refuse is refused before it is
/// written — a building's `.dat` that is not there, a path out of the game
/// folder, `kind 0` on a rock (its record is no `.dat`), a hosted unit's
/// hall-way vertex past its building's (`mission.host_vertex`).
#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn a_mission_msh2gltf_would_refuse_is_not_written() {
    refused_with(
        2,
        "missing .dat",
        &["mission.resolve", "none.dat"],
        |doc, _| {
            let i = placed(doc, 0, false);
            doc["nodes"][i]["extras"]["parkan_object"]["path"] =
                json!("UNITS\\BUILDS\\NONE\\none.dat");
        },
    );
    refused_with(
        2,
        "path out of the game",
        &["mission.resolve", "passwd"],
        |doc, _| {
            let i = placed(doc, 0, false);
            doc["nodes"][i]["extras"]["parkan_object"]["path"] =
                json!("..\\..\\..\\..\\..\\..\\etc\\passwd");
        },
    );
    refused_with(2, "kind 0 on a rock", &["mission.resolve"], |doc, _| {
        let i = placed(doc, 3, false);
        doc["nodes"][i]["extras"]["parkan_object"]["kind"] = json!(0);
        doc["nodes"][i]["extras"]["parkan_object"]["clan"] = json!(0);
    });
    refused("vertex 9999", &["mission.host_vertex", "9999"], |doc, _| {
        let i = placed(doc, 1, true);
        doc["nodes"][i]["extras"]["parkan_object"]["vertex"] = json!(9999);
    });
}

/// Issue 36 item 7: an extras value of the wrong type is refused naming
/// the node and its JSON pointer, never read as absent (before: all
/// properties deleted, words wrapped past 2^32, the object deleted).
#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn extras_of_the_wrong_type_are_refused_by_pointer() {
    type Edit = fn(&mut Value);
    let cases: [(&str, &str, Edit); 9] = [
        ("properties as a string", "/properties", |x| {
            x["properties"] = json!("none")
        }),
        ("properties missing", "/properties", |x| {
            x.as_object_mut().unwrap().remove("properties");
        }),
        ("kind 2^32", "/kind", |x| {
            x["kind"] = json!(4_294_967_296u64)
        }),
        ("clan 2^32", "/clan", |x| {
            x["clan"] = json!(4_294_967_296u64)
        }),
        ("property word 2^32", "/properties/0/words/0", |x| {
            x["properties"][0]["words"][0] = json!(4_294_967_296u64)
        }),
        ("f32_bits 2^32", "/f32_bits/position/0", |x| {
            x["f32_bits"]["position"][0] = json!(4_294_967_296u64)
        }),
        ("parkan_object a number", "/extras/parkan_object", |x| {
            *x = json!(7)
        }),
        ("parkan_object null", "/extras/parkan_object", |x| {
            *x = Value::Null
        }),
        // Deeper than the glTF reader reads an extras (127 levels): refused
        // by it (`gltf.json`, line and column) before the mission reads it.
        ("nested 200 deep", "gltf.json", |x| {
            let mut v = json!(1);
            for _ in 0..200 {
                v = json!([v]);
            }
            x["resolved"] = v;
        }),
    ];
    for (what, ptr, edit) in cases {
        let mut name = String::new();
        refused(what, &[ptr], |doc, _| {
            let i = placed(doc, 3, false);
            name = doc["nodes"][i]["name"].as_str().unwrap().to_string();
            edit(&mut doc["nodes"][i]["extras"]["parkan_object"]);
        });
    }
}

/// Issue 36 item 7: a node hierarchy that is not a forest is refused
/// (`gltf.hierarchy`): children as strings, a cycle, a node with two
/// parents (before: objects deleted or placed twice).
#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn a_hierarchy_that_is_not_a_forest_is_refused() {
    let group = |doc: &Value, name: &str| {
        doc["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .position(|n| n["name"] == name)
            .unwrap()
    };
    refused(
        "children as strings",
        &["gltf.json", "children/0"],
        |doc, _| {
            let g = group(doc, "Rocks");
            let c: Vec<Value> = doc["nodes"][g]["children"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| json!(c.to_string()))
                .collect();
            doc["nodes"][g]["children"] = json!(c);
        },
    );
    refused("a cycle", &["gltf.hierarchy"], |doc, _| {
        let (g, r) = (group(doc, "Rocks"), placed(doc, 3, false));
        doc["nodes"][r]["children"]
            .as_array_mut()
            .unwrap()
            .push(json!(g));
    });
    refused("two parents", &["gltf.hierarchy"], |doc, _| {
        let (g, r) = (group(doc, "Vegetation"), placed(doc, 3, false));
        doc["nodes"][g]["children"]
            .as_array_mut()
            .unwrap()
            .push(json!(r));
    });
}

/// Issue 36 item 7: a forged `conventions.up` (z on a y-up export) is
/// refused naming the pointer (before: every lode "moved").
#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn a_forged_up_convention_is_refused() {
    refused("up z", &["gltf.json", "conventions/up"], |doc, _| {
        doc["scenes"][0]["extras"]["parkan_mission"]["conventions"]["up"] = json!("z");
    });
    refused("up 7", &["gltf.json", "conventions/up"], |doc, _| {
        doc["scenes"][0]["extras"]["parkan_mission"]["conventions"]["up"] = json!(7);
    });
}

// ---------------------------------------------------------------- item 8

/// Issue 36 item 8: read `--tolerant`, an object whose position, rotation
/// or scale is NaN or infinite, a clan base and a lode that are not
/// finite are left out of the scene with a warning each: no `null` in a
/// node or accessor, and the validator passes.
#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn non_finite_values_are_left_out_never_null() {
    let Some(root) = common::corpus() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let mut m = corpus_mission(&root);
    m.objects[0].position[0] = f32::NAN;
    m.objects[1].rotation[2] = f32::INFINITY;
    let rock = m.objects.iter().position(|o| o.kind == 3).unwrap();
    m.objects[rock].scale = [f32::NAN; 3];
    m.clans[0].base[1] = f32::NEG_INFINITY;
    m.lodes[0].position[2] = f32::NAN;
    // A route point and a zone radius that are not finite: no null in the
    // route's accessor bounds nor in the display numbers of the extras.
    if let Some(p) = m.routes.iter_mut().find_map(|r| r.points.first_mut()) {
        p[0] = f32::INFINITY;
    }
    if let Some(z) = m.clans.iter_mut().find_map(|k| k.zones.first_mut()) {
        z.outer = f32::NAN;
    }
    let tma = mission_file(tmp.path(), &m);
    let game = root.display().to_string();
    let glb = tmp.path().join("m.glb");
    let o = export_with(&tma, &glb, &["--game-dir", &game, "--tolerant"]);
    let err = common::stderr(&o);
    assert!(o.status.success(), "{err}");
    let (doc, _) = glb_chunks(&std::fs::read(&glb).unwrap());
    only_numbers(&doc);
    for what in [
        "object 0 ",
        "object 1 ",
        &format!("object {rock} "),
        "clan 0",
        "lode 0",
    ] {
        assert!(
            err.lines()
                .any(|l| l.contains(what) && l.contains("left out")),
            "{what}: {err}"
        );
    }
    validate(std::slice::from_ref(&glb));
}

/// Issue 36 item 8: strict, with finite inputs, a clan base at x 3e38 and
/// its zone at x −3e38 overflow f32 in the zone's position relative to
/// the base: the zone is left out with a warning, never `null`.
#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn an_overflow_in_a_derived_value_is_left_out_never_null() {
    let Some(root) = common::corpus() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let mut m = corpus_mission(&root);
    let c = m
        .clans
        .iter()
        .position(|c| !c.zones.is_empty())
        .expect("a clan with zones");
    m.clans[c].base[0] = 3e38;
    m.clans[c].zones[0].centre[0] = -3e38;
    let tma = mission_file(tmp.path(), &m);
    let game = root.display().to_string();
    let glb = tmp.path().join("m.glb");
    let o = export_with(&tma, &glb, &["--game-dir", &game]);
    let err = common::stderr(&o);
    assert!(o.status.success(), "{err}");
    let (doc, _) = glb_chunks(&std::fs::read(&glb).unwrap());
    only_numbers(&doc);
    assert!(
        err.lines()
            .any(|l| l.contains(&format!("clan {c} zone 0")) && l.contains("left out")),
        "{err}"
    );
    validate(std::slice::from_ref(&glb));
}
