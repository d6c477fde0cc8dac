//! Issue 26 on maps, without `../shared`: `gltf2msh --base Land.msh` of a
//! hostile base or glTF never panics. A base that breaks a strict rule is
//! refused before anything is derived from it (a face vertex past Res3, a
//! cell run past Res21), naming stream, record and rule; a LOD node whose
//! mesh has no primitives or does not exist, and an attribute shorter than
//! POSITION, are typed errors; the CLI exits 1 and writes nothing.

mod common;
mod hostile;

use std::path::Path;

use hostile::land::{self, tiny_land, write_map};
use mshgltf::gltf_import::{parse, GltfFile};
use mshgltf::terrain::export::{self, TerrainGltf};
use mshgltf::terrain::ir::*;
use mshgltf::terrain::{import, source::TerrainSource, write, Mode, TerrainError};
use serde_json::Value;

/// The tiny map written into `dir` and its export (every LOD).
fn exported(dir: &Path, land: &Land) -> TerrainGltf {
    let msh = write_map(dir, land);
    let src = TerrainSource::load(&msh, Mode::Strict, None).unwrap();
    let opts = export::TerrainExportOptions {
        all_lods: true,
        ..Default::default()
    };
    export::export(&src, None, &opts)
}

fn doc(g: &TerrainGltf) -> GltfFile {
    parse(&export::to_glb(g).unwrap(), None).unwrap()
}

fn with_json(g: &TerrainGltf, edit: impl FnOnce(&mut Value)) -> TerrainGltf {
    let mut j = g.json.clone();
    edit(&mut j);
    TerrainGltf {
        json: j,
        ..g.clone()
    }
}

/// `g` with glTF vertex `v` of the first primitive raised by 3 (glTF +Y).
fn moved(g: &TerrainGltf, v: usize) -> TerrainGltf {
    let j = &g.json;
    let pos = j["meshes"][0]["primitives"][0]["attributes"]["POSITION"]
        .as_u64()
        .unwrap() as usize;
    let view = j["accessors"][pos]["bufferView"].as_u64().unwrap() as usize;
    let off = j["bufferViews"][view]["byteOffset"].as_u64().unwrap() as usize + 12 * v + 4;
    let mut bin = g.bin.clone();
    let y = f32::from_le_bytes(bin[off..off + 4].try_into().unwrap()) + 3.0;
    bin[off..off + 4].copy_from_slice(&y.to_le_bytes());
    let mut json = j.clone();
    let max = json["accessors"][pos]["max"][1].as_f64().unwrap();
    json["accessors"][pos]["max"][1] = f64::from(y).max(max).into();
    TerrainGltf {
        json,
        bin,
        ..g.clone()
    }
}

fn where_(e: &TerrainError) -> (&'static str, Option<u32>, Option<usize>) {
    (e.rule, e.stream, e.record)
}

/// Broken bases: (what, corruption, expected rule, stream, record).
type Corruption = (&'static str, fn(&mut Land), &'static str, u32, usize);

fn corruptions() -> Vec<Corruption> {
    vec![
        (
            "a face vertex past Res3",
            |l| l.faces[3].v[1] = 999,
            "terrain.face_vertex_range",
            21,
            3,
        ),
        (
            "a cell run past the faces",
            |l| l.slots[7].count += 5,
            "terrain.slot_range",
            2,
            7,
        ),
        (
            "a neighbour past Res21",
            |l| l.faces[2].nb[0] = 4000,
            "terrain.neighbour_range",
            21,
            2,
        ),
    ]
}

#[test]
fn a_base_breaking_a_strict_rule_is_refused_before_deriving() {
    let tmp = tempfile::tempdir().unwrap();
    let good = tiny_land(2);
    let g = exported(tmp.path(), &good);
    // The glTF side is fine: unedited it comes back unchanged, edited it moves.
    let (_, rep) = import::import_with_base(&doc(&g), &good).unwrap();
    assert!(rep.unchanged);
    let (_, rep) = import::import_with_base(&doc(&moved(&g, 10)), &good).unwrap();
    assert_eq!(rep.moved_vertices, 1);
    for (what, corrupt, rule, stream, record) in corruptions() {
        let mut bad = good.clone();
        corrupt(&mut bad);
        for (edit, d) in [("unedited", doc(&g)), ("moved", doc(&moved(&g, 10)))] {
            let e = import::import_with_base(&d, &bad).unwrap_err();
            assert_eq!(
                where_(&e),
                (rule, Some(stream), Some(record)),
                "{what}, {edit}: {e}"
            );
            assert!(e.detail.contains("base map breaks"), "{what}: {e}");
        }
    }
}

#[test]
fn lod_nodes_without_primitives_or_mesh_are_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let land = tiny_land(2);
    let g = exported(tmp.path(), &land);
    let lod_nodes: Vec<usize> = (0..g.json["nodes"].as_array().unwrap().len())
        .filter(|&i| g.json["nodes"][i]["extras"].get("lod").is_some())
        .collect();
    assert_eq!(lod_nodes.len(), 2, "{}", g.json["nodes"]);
    for &n in &lod_nodes {
        let mesh = g.json["nodes"][n]["mesh"].as_u64().unwrap() as usize;
        let empty = with_json(&g, |j| {
            j["meshes"][mesh]["primitives"] = Value::from(Vec::<Value>::new())
        });
        let missing = with_json(&g, |j| j["nodes"][n]["mesh"] = Value::from(99));
        for (what, edited) in [("no primitives", empty), ("no such mesh", missing)] {
            let r = parse(&export::to_glb(&edited).unwrap(), None)
                .map_err(|e| e.rule.to_string())
                .and_then(|d| import::import_with_base(&d, &land).map_err(|e| e.rule.to_string()));
            let rule = r.unwrap_err();
            assert!(
                rule == "terrain.topology" || rule.starts_with("gltf."),
                "node {n}, {what}: {rule}"
            );
        }
    }
}

#[test]
fn an_attribute_shorter_than_position_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let land = tiny_land(2);
    let g = exported(tmp.path(), &land);
    for uv in ["TEXCOORD_0", "TEXCOORD_1"] {
        let a = g.json["meshes"][0]["primitives"][0]["attributes"][uv]
            .as_u64()
            .unwrap_or_else(|| panic!("{uv} exported")) as usize;
        let short = with_json(&g, |j| j["accessors"][a]["count"] = Value::from(1));
        let e = import::import_with_base(&doc(&short), &land).unwrap_err();
        assert_eq!(e.rule, "terrain.import", "{uv}: {e}");
        assert!(e.detail.contains(uv), "{e}");
    }
}

#[test]
fn cli_refuses_a_broken_base_with_exit_1_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let good = tiny_land(2);
    let g = exported(tmp.path(), &good);
    let glb = tmp.path().join("map.glb");
    std::fs::write(&glb, export::to_glb(&moved(&g, 10)).unwrap()).unwrap();
    for (what, corrupt, rule, stream, record) in corruptions() {
        let mut bad = good.clone();
        corrupt(&mut bad);
        let base = tmp.path().join("Land.msh");
        std::fs::write(&base, write::encode(&bad).unwrap()).unwrap();
        let out = tmp.path().join("out.msh");
        let o = common::gltf2msh()
            .arg(&glb)
            .arg("--base")
            .arg(&base)
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        let err = common::stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{what}: {err}");
        let at = format!("Res{stream} record {record}");
        for want in [rule, at.as_str(), "Land.msh"] {
            assert!(err.contains(want), "{what}: {want:?} missing from {err}");
        }
        assert!(!err.contains("panicked"), "{err}");
        assert!(!out.exists(), "{what}: nothing is written");
    }
}

/// A map's Land.map / Land1.wea / Land2.wea that is a FIFO or a symlink to
/// `/dev/zero` (issue 26 item 4): refused before it is read, naming it
/// (`terrain.io`, exit 1), no hang.
#[test]
fn map_siblings_that_are_not_regular_files_are_refused() {
    for name in ["Land.map", "Land1.wea", "Land2.wea"] {
        for fifo in [true, false] {
            let tmp = tempfile::tempdir().unwrap();
            let msh = write_map(tmp.path(), &tiny_land(2));
            if !hostile::make_hostile(&tmp.path().join(name), fifo) {
                return;
            }
            let out = tmp.path().join("m.glb");
            let o = hostile::run_bounded(common::msh2gltf().arg(&msh).arg(&out));
            let err = common::stderr(&o);
            assert_eq!(o.status.code(), Some(1), "{name} fifo={fifo}: {err}");
            for want in [name, "not a regular file"] {
                assert!(
                    err.contains(want),
                    "{name} fifo={fifo}: {want:?} missing: {err}"
                );
            }
            assert!(!out.exists());
        }
    }
}

/// `gltf2msh /dev/zero` (and a FIFO) says what it is, never "not found"
/// (exit 2), and never reads it.
#[test]
// Windows has neither /dev/zero nor FIFOs made by mkfifo (under Wine the path
// reaches the Unix device and opening it fails with os error 87).
#[cfg_attr(windows, ignore = "Unix devices: /dev/zero and mkfifo")]
fn gltf2msh_says_what_a_non_regular_input_is() {
    let tmp = tempfile::tempdir().unwrap();
    let msh = write_map(tmp.path(), &tiny_land(2));
    let fifo = tmp.path().join("in.glb");
    let have_fifo = hostile::make_hostile(&fifo, true);
    for input in [
        Some(Path::new("/dev/zero")),
        have_fifo.then_some(fifo.as_path()),
    ]
    .into_iter()
    .flatten()
    {
        for base in [true, false] {
            let mut cmd = common::gltf2msh();
            cmd.arg(input).arg("-o").arg(tmp.path().join("o.msh"));
            if base {
                cmd.arg("--base").arg(&msh);
            }
            let o = hostile::run_bounded(&mut cmd);
            let err = common::stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{input:?} base={base}: {err}");
            assert!(err.contains("not a regular file"), "{err}");
            assert!(!err.contains("not found"), "{err}");
        }
    }
}

/// Issue 26 item 11: map outputs that clash — by case (`M01`, `m01`), by
/// sanitising (`a:b`, `a_b`) or with a bare model of the same folder
/// (`a_b.msh`) — are named by the models' rule (discovery order, `~2`,
/// `~3`, ignoring case) instead of failing "would be written twice"; the
/// batch exits 0 and the report maps each source to its name.
#[test]
// The fixture cannot exist on Windows: `M01` and `m01` are one folder there
// and `a:b` is no valid file name.
#[cfg_attr(windows, ignore = "folders M01/m01 and a:b cannot coexist on Windows")]
fn clashing_map_outputs_get_unique_names() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("game");
    let land = tiny_land(2);
    for d in ["M01", "m01", "a:b", "a_b"] {
        let dir = root.join("MAPS").join(d);
        std::fs::create_dir_all(&dir).unwrap();
        write_map(&dir, &land);
    }
    std::fs::copy(common::sample("static_box.msh"), root.join("MAPS/a_b.msh")).unwrap();
    let out = tmp.path().join("out");
    let report = tmp.path().join("report.json");
    let o = common::msh2gltf()
        .arg(&root)
        .arg(&out)
        .arg("--report")
        .arg(&report)
        .output()
        .unwrap();
    let err = common::stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let mut names: Vec<String> = std::fs::read_dir(out.join("MAPS"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["M01.glb", "a_b.glb", "a_b~2.glb", "a_b~3.glb", "m01~2.glb"]
    );
    let r: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let output_of = |src: &str| -> String {
        let row = r["models"]
            .as_array()
            .unwrap()
            .iter()
            .find(|row| row["source"].as_str().unwrap().ends_with(src))
            .unwrap_or_else(|| panic!("no row for {src}"));
        let o = row["output"].as_str().unwrap();
        Path::new(o)
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    };
    assert_eq!(output_of("M01/Land.msh"), "M01.glb");
    assert_eq!(output_of("a:b/Land.msh"), "a_b.glb");
    assert_eq!(output_of("a_b/Land.msh"), "a_b~2.glb");
    assert_eq!(output_of("a_b.msh"), "a_b~3.glb");
    assert_eq!(output_of("m01/Land.msh"), "m01~2.glb");
}

// ---- Issue 26 items 7 and 8: invalid rows, conflicting edits ----

/// Byte offset of element `e` component `c` (4-byte components) of
/// accessor `a`, or of index `e` for an index accessor of `size` bytes.
fn elem_off(j: &Value, a: usize, e: usize, size: usize) -> usize {
    let acc = &j["accessors"][a];
    let view = acc["bufferView"].as_u64().unwrap() as usize;
    j["bufferViews"][view]["byteOffset"].as_u64().unwrap_or(0) as usize
        + acc["byteOffset"].as_u64().unwrap_or(0) as usize
        + size * e
}

/// `g` with float `k` (element × width + component) of accessor `a` set by `f`.
fn patch_float(g: &TerrainGltf, a: usize, k: usize, f: impl Fn(f32) -> f32) -> TerrainGltf {
    let off = elem_off(&g.json, a, k, 4);
    let mut bin = g.bin.clone();
    let x = f(f32::from_le_bytes(bin[off..off + 4].try_into().unwrap()));
    bin[off..off + 4].copy_from_slice(&x.to_le_bytes());
    let mut json = g.json.clone();
    json["accessors"][a].as_object_mut().unwrap().remove("max");
    json["accessors"][a].as_object_mut().unwrap().remove("min");
    TerrainGltf {
        json,
        bin,
        ..g.clone()
    }
}

fn prim(g: &TerrainGltf, m: usize, p: usize) -> &Value {
    &g.json["meshes"][m]["primitives"][p]
}

/// The index accessor of (mesh, primitive) and its component size.
fn index_accessor(g: &TerrainGltf, m: usize, p: usize) -> (usize, usize) {
    let a = prim(g, m, p)["indices"].as_u64().unwrap() as usize;
    let size = match g.json["accessors"][a]["componentType"].as_u64().unwrap() {
        5121 => 1,
        5123 => 2,
        _ => 4,
    };
    (a, size)
}

fn read_index(g: &TerrainGltf, m: usize, p: usize, k: usize) -> u32 {
    let (a, size) = index_accessor(g, m, p);
    let off = elem_off(&g.json, a, k, size);
    let mut b = [0u8; 4];
    b[..size].copy_from_slice(&g.bin[off..off + size]);
    u32::from_le_bytes(b)
}

fn write_index(g: &TerrainGltf, m: usize, p: usize, k: usize, v: u32) -> TerrainGltf {
    let (a, size) = index_accessor(g, m, p);
    let off = elem_off(&g.json, a, k, size);
    let mut bin = g.bin.clone();
    bin[off..off + size].copy_from_slice(&v.to_le_bytes()[..size]);
    TerrainGltf { bin, ..g.clone() }
}

/// `g` where mesh 0 primitive 0 gets its own copy of POSITION, glTF
/// vertex `v` of the copy raised by `dy` (the other primitives keep theirs).
fn own_positions(g: &TerrainGltf, v: usize, dy: f32) -> TerrainGltf {
    let mut j = g.json.clone();
    let pos = prim(g, 0, 0)["attributes"]["POSITION"].as_u64().unwrap() as usize;
    let n = j["accessors"][pos]["count"].as_u64().unwrap() as usize;
    let off = elem_off(&j, pos, 0, 12);
    let mut bin = g.bin.clone();
    let mut copy = g.bin[off..off + 12 * n].to_vec();
    let y = 12 * v + 4;
    let raised = f32::from_le_bytes(copy[y..y + 4].try_into().unwrap()) + dy;
    copy[y..y + 4].copy_from_slice(&raised.to_le_bytes());
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
    let start = bin.len();
    bin.extend_from_slice(&copy);
    j["buffers"][0]["byteLength"] = Value::from(bin.len());
    let views = j["bufferViews"].as_array_mut().unwrap();
    views.push(serde_json::json!({"buffer": 0, "byteOffset": start, "byteLength": copy.len()}));
    let view = views.len() - 1;
    let accs = j["accessors"].as_array_mut().unwrap();
    accs.push(
        serde_json::json!({"bufferView": view, "componentType": 5126, "count": n, "type": "VEC3"}),
    );
    j["meshes"][0]["primitives"][0]["attributes"]["POSITION"] = Value::from(accs.len() - 1);
    TerrainGltf {
        json: j,
        bin,
        ..g.clone()
    }
}

/// Runs `gltf2msh G --base DIR/Land.msh -o DIR/out.msh`: (exit, stderr, written).
fn cli_base(dir: &Path, g: &TerrainGltf) -> (Option<i32>, String, bool) {
    let glb = dir.join("edit.glb");
    std::fs::write(&glb, export::to_glb(g).unwrap()).unwrap();
    let out = dir.join("out.msh");
    let _ = std::fs::remove_file(&out);
    let o = common::gltf2msh()
        .arg(&glb)
        .arg("--base")
        .arg(dir.join("Land.msh"))
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let err = common::stderr(&o);
    assert!(!err.contains("panicked"), "{err}");
    (o.status.code(), err, out.exists())
}

/// Item 7: a repaint to a material row Land1.wea does not have (tex1 200)
/// is refused before writing, naming the face, the primitive and the row;
/// rows Land1.wea has are written.
#[test]
fn a_repaint_to_a_row_land1_does_not_have_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let land = tiny_land(2);
    let g = exported(tmp.path(), &land);
    let m = prim(&g, 0, 0)["material"].as_u64().unwrap() as usize;
    let to = |t: u64| {
        with_json(&g, |j| {
            j["materials"][m]["extras"]["parkan_terrain"]["tex1"] = t.into()
        })
    };
    let (code, err, written) = cli_base(tmp.path(), &to(200));
    assert_eq!(code, Some(1), "{err}");
    for want in [
        "terrain.material_row",
        "Res21 record",
        "mesh 0 primitive 0",
        "tex1 200",
        "Land1.wea has 3 rows",
    ] {
        assert!(err.contains(want), "{want:?} missing: {err}");
    }
    assert!(!written, "nothing is written");
    // Row 2 exists (ROCK): written, and msh2gltf reads the result strictly.
    let (code, err, written) = cli_base(tmp.path(), &to(2));
    assert_eq!((code, written), (Some(0), true), "{err}");
    let out = tmp.path().join("out.msh");
    std::fs::rename(&out, tmp.path().join("Land.msh")).unwrap();
    let o = common::msh2gltf()
        .arg(tmp.path().join("Land.msh"))
        .arg(tmp.path().join("re.glb"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    // Without Land1.wea the rows cannot be checked: written, with a warning naming where it looked.
    let tmp2 = tempfile::tempdir().unwrap();
    let g2 = exported(tmp2.path(), &land);
    std::fs::remove_file(tmp2.path().join("Land1.wea")).unwrap();
    let m2 = prim(&g2, 0, 0)["material"].as_u64().unwrap() as usize;
    let bad = with_json(&g2, |j| {
        j["materials"][m2]["extras"]["parkan_terrain"]["tex1"] = 200.into()
    });
    let (code, err, _) = cli_base(tmp2.path(), &bad);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("Land1.wea not found in") && err.contains("not checked"),
        "{err}"
    );
}

/// Item 8: two glTF copies of one map vertex moved differently are refused
/// naming the vertex; one copy moved and another left is written with a
/// warning naming the split vertex.
#[test]
fn copies_of_one_map_vertex_moved_differently_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let land = tiny_land(2);
    let g = exported(tmp.path(), &land);
    assert!(prim(&g, 0, 1).is_object(), "two primitives in LOD0");
    let e =
        import::import_with_base(&doc(&own_positions(&moved(&g, 10), 10, 2.0)), &land).unwrap_err();
    assert_eq!(
        where_(&e),
        ("terrain.edit_conflict", Some(3), Some(10)),
        "{e}"
    );
    assert!(
        e.detail.contains("map vertex 10") && e.detail.contains("mesh 0 primitive"),
        "{e}"
    );
    // Moved the same way in both copies: written.
    let (_, rep) =
        import::import_with_base(&doc(&own_positions(&moved(&g, 10), 10, 0.0)), &land).unwrap();
    assert_eq!(rep.moved_vertices, 1);
    assert!(
        rep.warnings.iter().all(|w| !w.contains("split")),
        "{:?}",
        rep.warnings
    );
    // One copy moved, the others left: written, warned.
    let (out, rep) = import::import_with_base(&doc(&own_positions(&g, 10, 2.0)), &land).unwrap();
    assert_eq!(rep.moved_vertices, 1);
    assert_ne!(out.positions[10], land.positions[10]);
    assert!(
        rep.warnings
            .iter()
            .any(|w| w.contains("split vertex") && w.contains("[10]")),
        "{:?}",
        rep.warnings
    );
    let (code, err, written) = cli_base(tmp.path(), &own_positions(&moved(&g, 10), 10, 2.0));
    assert_eq!((code, written), (Some(1), false), "{err}");
    assert!(
        err.contains("terrain.edit_conflict") && err.contains("Res3 record 10"),
        "{err}"
    );
}

/// Item 8: one face in two primitives (two materials) is refused naming it.
#[test]
fn one_face_in_two_primitives_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let land = tiny_land(2);
    let g = exported(tmp.path(), &land);
    let twice = with_json(&g, |j| {
        let mut p = j["meshes"][0]["primitives"][0].clone();
        p["material"] = j["meshes"][0]["primitives"][1]["material"].clone();
        j["meshes"][0]["primitives"].as_array_mut().unwrap().push(p);
    });
    let e = import::import_with_base(&doc(&twice), &land).unwrap_err();
    assert_eq!(
        (e.rule, e.stream),
        ("terrain.edit_conflict", Some(21)),
        "{e}"
    );
    assert!(
        e.detail
            .contains("mesh 0 primitive 0 and again in mesh 0 primitive 2"),
        "{e}"
    );
    let (code, err, written) = cli_base(tmp.path(), &twice);
    assert_eq!((code, written), (Some(1), false), "{err}");
}

/// Item 8: a flipped winding is not written; a warning names the face.
#[test]
fn a_flipped_winding_is_warned_naming_the_face() {
    let tmp = tempfile::tempdir().unwrap();
    let land = tiny_land(2);
    let g = exported(tmp.path(), &land);
    let (a, b) = (read_index(&g, 0, 0, 1), read_index(&g, 0, 0, 2));
    let flipped = write_index(&write_index(&g, 0, 0, 1, b), 0, 0, 2, a);
    let first = [0, 1, 2].map(|k| read_index(&g, 0, 0, k) as u16);
    let face = land.faces.iter().position(|f| f.v == first).unwrap();
    let (out, rep) = import::import_with_base(&doc(&flipped), &land).unwrap();
    assert_eq!(out, land, "the base's winding is kept");
    assert!(!rep.unchanged || !rep.warnings.is_empty());
    let want = format!("Res21 faces [{face}]");
    assert!(
        rep.warnings
            .iter()
            .any(|w| w.contains("flipped winding") && w.contains(&want)),
        "{:?}",
        rep.warnings
    );
    let (code, err, _) = cli_base(tmp.path(), &flipped);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("warning") && err.contains("flipped winding"),
        "{err}"
    );
}

/// Item 8: a stray index (past the primitive's vertices) and a partial
/// triangle are refused naming mesh, primitive and index.
#[test]
fn a_stray_index_or_a_partial_triangle_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let land = tiny_land(2);
    let g = exported(tmp.path(), &land);
    let stray = write_index(&g, 0, 0, 4, 999);
    let e = import::import_with_base(&doc(&stray), &land).unwrap_err();
    assert_eq!(e.rule, "terrain.import", "{e}");
    assert!(
        e.detail.contains("mesh 0 primitive 0: index 4 is 999"),
        "{e}"
    );
    let (a, _) = index_accessor(&g, 0, 0);
    let n = g.json["accessors"][a]["count"].as_u64().unwrap();
    let partial = with_json(&g, |j| j["accessors"][a]["count"] = (n - 1).into());
    let e = import::import_with_base(&doc(&partial), &land).unwrap_err();
    assert_eq!(e.rule, "terrain.import", "{e}");
    assert!(e.detail.contains("not whole triangles"), "{e}");
    let (code, err, written) = cli_base(tmp.path(), &stray);
    assert_eq!((code, written), (Some(1), false), "{err}");
}

/// Item 8: every face deleted while the glTF's `skipped_faces` lists them
/// is refused (with Land1.wea the base's faces are known good); without
/// Land1.wea the faces are kept from the base with a warning naming them.
#[test]
fn deleted_faces_listed_in_skipped_faces_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let land = tiny_land(2);
    let g = exported(tmp.path(), &land);
    let nf = land.faces.len();
    let gone = with_json(&g, |j| {
        j["scenes"][0]["extras"]["parkan_terrain"]["skipped_faces"] =
            (0..nf).collect::<Vec<_>>().into();
        for m in j["meshes"].as_array_mut().unwrap() {
            if m["extras"].get("lod").is_some() {
                let p = m["primitives"][0].clone();
                m["primitives"] = Value::from(vec![p]);
            }
        }
    });
    let d = doc(&gone);
    let e = import::import_with_land1(&d, &land, Some(3)).unwrap_err();
    assert_eq!((e.rule, e.stream), ("terrain.topology", Some(21)), "{e}");
    assert!(e.detail.contains("skipped_faces"), "{e}");
    let (out, rep) = import::import_with_land1(&d, &land, None).unwrap();
    assert_eq!(out, land);
    assert!(
        rep.warnings
            .iter()
            .any(|w| w.contains("skipped_faces lists them")),
        "{:?}",
        rep.warnings
    );
    let (code, err, written) = cli_base(tmp.path(), &gone);
    assert_eq!((code, written), (Some(1), false), "{err}");
    assert!(
        err.contains("terrain.topology") && err.contains("skipped_faces"),
        "{err}"
    );
}

/// Item 8: a NaN COLOR_0 alpha is refused naming the vertex, never dropped.
#[test]
fn a_nan_colour_alpha_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let land = tiny_land(2);
    let g = exported(tmp.path(), &land);
    let c = prim(&g, 0, 0)["attributes"]["COLOR_0"].as_u64().unwrap() as usize;
    for x in [f32::NAN, f32::INFINITY] {
        let bad = patch_float(&g, c, 4 * 5 + 3, |_| x);
        let e = import::import_with_base(&doc(&bad), &land).unwrap_err();
        assert_eq!(e.rule, "gltf.non_finite", "{e}");
        assert!(e.detail.contains("glTF vertex 5"), "{e}");
        let (code, err, written) = cli_base(tmp.path(), &bad);
        assert_eq!((code, written), (Some(1), false), "{err}");
    }
    // A finite alpha edit is written.
    let (out, rep) =
        import::import_with_base(&doc(&patch_float(&g, c, 4 * 5 + 3, |_| 0.25)), &land).unwrap();
    assert_eq!((rep.alpha_changed, out.alpha.unwrap()[5]), (1, 0.25));
}

/// Item 5: a map over the work budget (`--max-work`) is refused before it
/// is exported (`limits.work` naming what was counted, exit 1, nothing
/// written); at the default budget the same map converts. The tiny map
/// costs 16 faces + 2 x 16 vertices + 2 x 16 x 2 classes + 4 squares + 8
/// cells + 16 x 6 WEAR rows = 220 units. (Land.map is removed: its parse
/// alone costs more, see the next test.)
#[test]
fn a_map_over_the_work_budget_is_refused_before_the_work() {
    let tmp = tempfile::tempdir().unwrap();
    let msh = write_map(tmp.path(), &tiny_land(2));
    std::fs::remove_file(tmp.path().join("Land.map")).unwrap();
    let out = tmp.path().join("m.glb");
    for (budget, code) in [("219", 1), ("220", 0)] {
        let o = common::msh2gltf()
            .arg(&msh)
            .arg(&out)
            .args(["--max-work", budget, "--force"])
            .output()
            .unwrap();
        let err = common::stderr(&o);
        assert_eq!(o.status.code(), Some(code), "--max-work {budget}: {err}");
        if code == 1 {
            for want in [
                "limits.work",
                "16 faces",
                "2 face classes",
                "6 WEAR rows",
                "220 work units",
            ] {
                assert!(err.contains(want), "{want:?} missing: {err}");
            }
            assert!(!out.exists(), "nothing written");
        } else {
            assert!(out.exists());
        }
    }
}

/// Runs `cmd` with `--max-work budget`; returns the exit code and stderr.
fn with_budget(mut cmd: std::process::Command, budget: u64) -> (Option<i32>, String) {
    let o = cmd
        .args(["--max-work", &budget.to_string()])
        .output()
        .unwrap();
    (o.status.code(), common::stderr(&o))
}

/// Item 5: each map sibling's parse is counted from its bytes before it
/// is parsed (Land.map 1 unit per 2 bytes; Land1/Land2.wea 32 per line),
/// by msh2gltf and by `gltf2msh --base` (Land1.wea): one unit over is
/// `limits.work` naming the file and the count (exit 1, nothing written).
#[test]
fn map_siblings_over_the_work_budget_are_refused_before_parsing() {
    let root = tempfile::tempdir().unwrap();
    let map_dir = root.path().join("map");
    std::fs::create_dir(&map_dir).unwrap();
    let tmp = tempfile::tempdir_in(&map_dir).unwrap();
    let msh = write_map(tmp.path(), &tiny_land(2));
    let out = root.path().join("m.glb");
    let map_bytes = std::fs::metadata(tmp.path().join("Land.map"))
        .unwrap()
        .len();
    let map_units = map_bytes.div_ceil(2);
    let run = |budget| {
        let mut c = common::msh2gltf();
        c.arg(&msh).arg(&out).arg("--force");
        with_budget(c, budget)
    };
    let (code, err) = run(map_units - 1);
    assert_eq!(code, Some(1), "{err}");
    for want in [
        "limits.work",
        "Land.map",
        &format!("{map_bytes} bytes of Land.map make {map_units} work units"),
    ] {
        assert!(err.contains(want), "{want:?} missing: {err}");
    }
    assert!(!out.exists());
    let (code, err) = run(map_units);
    assert_eq!(code, Some(0), "{err}");
    // A Land1.wea of 2000 rows: 2002 lines (count line, last newline).
    std::fs::write(tmp.path().join("Land1.wea"), hostile::work::long_wear(2000)).unwrap();
    let (code, err) = run(2002 * 32 - 1);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("2002 WEAR lines (rows) make 64064 work units"),
        "{err}"
    );
    // The same Land1.wea beside a base of gltf2msh: refused before parsing.
    std::fs::write(
        tmp.path().join("Land1.wea"),
        land::wear(&["B_S0", "GRASS", "ROCK"]),
    )
    .unwrap();
    std::fs::remove_file(&out).unwrap();
    let (code, err) = run(map_units);
    assert_eq!(code, Some(0), "{err}");
    std::fs::write(tmp.path().join("Land1.wea"), hostile::work::long_wear(2000)).unwrap();
    let back = root.path().join("back.msh");
    let mut c = common::gltf2msh();
    c.arg(&out).arg("--base").arg(&msh).arg("-o").arg(&back);
    let (code, err) = with_budget(c, 2002 * 32 - 1);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("limits.work") && err.contains("Land1.wea"),
        "{err}"
    );
    assert!(!back.exists());
}

/// Issue 36 item 12: a base face whose tex1 is no Land1.wea row (200 of
/// 3), exported `--tolerant` (which leaves the face out) and written back,
/// is refused naming its Res21 record (exit 1, nothing written), as the
/// strict reader would refuse the written map; through the library too,
/// and for an export whose face carries a valid class the base does not.
#[test]
fn a_base_face_past_land1_rows_is_refused_naming_its_record() {
    let tmp = tempfile::tempdir().unwrap();
    let mut bad = tiny_land(2);
    bad.faces[3].tex1 = 200;
    let msh = write_map(tmp.path(), &bad);
    let src = TerrainSource::load(&msh, Mode::Tolerant, None).unwrap();
    assert!(
        src.skip_faces.contains(&3),
        "the tolerant export leaves it out"
    );
    let opts = export::TerrainExportOptions {
        all_lods: true,
        ..Default::default()
    };
    let g = export::export(&src, None, &opts);
    let (code, err, written) = cli_base(tmp.path(), &g);
    assert_eq!(code, Some(1), "{err}");
    for want in [
        "terrain.material_row",
        "Res21 record 3",
        "tex1 200",
        "Land1.wea has 3 rows",
    ] {
        assert!(err.contains(want), "{want:?} missing: {err}");
    }
    assert!(!written, "nothing is written");
    // A valid export (face 3 of class tex1 1) against the fuzzed base.
    let good = exported(tempfile::tempdir().unwrap().path(), &tiny_land(2));
    let e = import::import_with_land1(&doc(&good), &bad, Some(3)).unwrap_err();
    assert_eq!(
        where_(&e),
        ("terrain.material_row", Some(21), Some(3)),
        "{e}"
    );
    // Unknown rows (no Land1.wea): nothing to check against.
    assert!(import::import_with_land1(&doc(&good), &tiny_land(2), Some(3)).is_ok());
}

/// Issue 36 item 12: a map over the work budget is refused by
/// `limits.work` from its decoded streams, before the validation walks
/// them (here a face vertex past Res3, which the validation would name
/// first); the draw-order check of a cell with 64 800 distinct pairs is
/// linear (`scripts/bench_hostile.sh`: `map_64800_distinct_pairs`).
#[test]
fn a_map_over_the_budget_is_refused_before_it_is_validated() {
    let tmp = tempfile::tempdir().unwrap();
    let mut land = land::one_cell_pairs(2000);
    land.faces[5].v[1] = 9999;
    let msh = write_map(tmp.path(), &land);
    let out = tmp.path().join("m.glb");
    let mut c = common::msh2gltf();
    c.arg(&msh).arg(&out);
    let (code, err) = with_budget(c, 10_000);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("limits.work"), "{err}");
    assert!(err.contains("2002 faces"), "{err}");
    assert!(!err.contains("face_vertex_range"), "{err}");
    // Within the budget the validation names the broken face.
    let mut c = common::msh2gltf();
    c.arg(&msh).arg(&out);
    let (code, err) = with_budget(c, 1_000_000);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("terrain.face_vertex_range"), "{err}");
}

/// The draw-order check (terrain-notes §5.2 warning 5): a pair met again
/// after another pair in one cell is `terrain.res11_pair_repeat`, once per
/// return; pairs in runs, or in other cells, are not.
#[test]
fn a_pair_repeated_in_a_cell_is_warned_once_per_return() {
    use mshgltf::terrain::validate;
    let mut land = land::one_cell_pairs(6);
    for (i, t) in [1u8, 1, 2, 1, 2, 3].into_iter().enumerate() {
        land.faces[i].tex1 = t;
        land.faces[i].tex2 = NO_TEX2;
    }
    let f = validate::check(&land);
    let repeats: Vec<_> = f
        .warnings
        .iter()
        .filter(|w| w.rule == "terrain.res11_pair_repeat")
        .map(|w| w.record)
        .collect();
    assert_eq!(repeats, vec![Some(3), Some(4)], "{:?}", f.warnings);
}

/// The scene's `extras.parkan_terrain.up` of the wrong type is refused
/// naming its pointer (`gltf.json`), never read as Y; `"y"` and `"z"` are
/// read (terrain::import::scene_up, shared with the new-map writer).
#[test]
fn a_scene_up_of_the_wrong_type_is_refused_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let land = tiny_land(2);
    let g = exported(tmp.path(), &land);
    assert_eq!(
        g.json["scenes"][0]["extras"]["parkan_terrain"]["up"],
        Value::from("y")
    );
    for bad in [
        Value::from(7),
        Value::from("x"),
        Value::from(vec![Value::from("z")]),
    ] {
        let edited = with_json(&g, |j| {
            j["scenes"][0]["extras"]["parkan_terrain"]["up"] = bad.clone()
        });
        let e = import::scene_up(&doc(&edited)).unwrap_err();
        assert!(
            e.rule == "gltf.json" && e.detail.starts_with("/scenes/0/extras/parkan_terrain/up: "),
            "{bad}: {e}"
        );
    }
    let z = with_json(&g, |j| {
        j["scenes"][0]["extras"]["parkan_terrain"]["up"] = "z".into()
    });
    assert_eq!(
        import::scene_up(&doc(&z)).unwrap(),
        mshgltf::convention::Up::Z
    );
    assert_eq!(
        import::scene_up(&doc(&g)).unwrap(),
        mshgltf::convention::Up::Y
    );
}

/// A terrain node's `extras.lod`, a mesh reference, an attribute or the
/// scene's `skipped_faces` of the wrong type is refused naming its
/// pointer (`gltf.json`), never read as absent (a node's edits dropped,
/// a `_VERTEX_ID` ignored, no faces listed).
#[test]
fn terrain_references_of_the_wrong_type_are_refused_naming_them() {
    let tmp = tempfile::tempdir().unwrap();
    let land = tiny_land(2);
    let g = exported(tmp.path(), &land);
    let (node, mesh) = {
        let n = g.json["nodes"].as_array().unwrap();
        let i = n.iter().position(|n| n["extras"]["lod"] == 0).unwrap();
        (i, n[i]["mesh"].as_u64().unwrap() as usize)
    };
    type Edit = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(Edit, String)> = vec![
        (
            Box::new(move |j| j["nodes"][node]["extras"]["lod"] = "0".into()),
            format!("/nodes/{node}/extras/lod"),
        ),
        (
            Box::new(move |j| j["nodes"][node]["mesh"] = format!("{mesh}").into()),
            format!("/nodes/{node}/mesh"),
        ),
        (
            Box::new(move |j| {
                j["meshes"][mesh]["primitives"][0]["attributes"]["POSITION"] = "0".into()
            }),
            format!("/meshes/{mesh}/primitives/0/attributes/POSITION"),
        ),
        (
            Box::new(move |j| j["meshes"][mesh]["primitives"][0]["indices"] = "0".into()),
            format!("/meshes/{mesh}/primitives/0/indices"),
        ),
        (
            Box::new(|j| {
                j["scenes"][0]["extras"]["parkan_terrain"]["skipped_faces"] =
                    serde_json::json!([0, "1"])
            }),
            "/scenes/0/extras/parkan_terrain/skipped_faces/1".into(),
        ),
    ];
    // Built without the schema check of `parse` (which refuses the
    // references already): the importer's own reads are what is tested.
    let read = doc(&g);
    assert!(import::import_with_land1(&read, &land, None).is_ok());
    for (edit, at) in cases {
        let mut j = read.to_json();
        edit(&mut j);
        let d = GltfFile::new(j, read.buffers.clone());
        let e = import::import_with_land1(&d, &land, None).unwrap_err();
        assert!(
            e.rule == "gltf.json" && e.detail.starts_with(&format!("{at}: ")),
            "{at}: {e}"
        );
    }
}
