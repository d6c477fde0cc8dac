//! Issue 26 on maps, without `../shared`: `gltf2msh --base Land.msh` of a
//! hostile base or glTF never panics. A base that breaks a strict rule is
//! refused before anything is derived from it (a face vertex past Res3, a
//! cell run past Res21), naming stream, record and rule; a LOD node whose
//! mesh has no primitives or does not exist, and an attribute shorter than
//! POSITION, are typed errors; the CLI exits 1 and writes nothing.

mod common;
mod hostile;
mod land;

use std::path::Path;

use land::{tiny_land, write_map};
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
