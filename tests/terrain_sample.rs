//! Terrain maps without `../shared`: a small map built here by the
//! generator rules of terrain-notes §5.1 (grid cut, chained runs, x-major
//! Res1, derived normals/boxes/Res11), then read, validated, encoded,
//! exported and brought back.

use std::collections::BTreeSet;

use land::{tiny_land, tiny_map, write_map};
use mshgltf::terrain::ir::*;
use mshgltf::terrain::{
    areals, export, import, map, read, source::TerrainSource, validate, write, Mode,
};

mod land;

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
    assert!(areals::check(&m).is_empty());
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

/// A single map's output that exists is refused without `--force` (exit
/// 2, the file untouched), as a single model's is; `--force` replaces it.
#[test]
fn an_existing_single_map_output_needs_force() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("MAPS/m01");
    std::fs::create_dir_all(&dir).unwrap();
    let msh = write_map(&dir, &tiny_land(2));
    let glb = tmp.path().join("m01.glb");
    std::fs::write(&glb, b"keep").unwrap();
    let run = |force: bool| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_msh2gltf"));
        c.arg(&msh).arg(&glb).arg("-q");
        if force {
            c.arg("--force");
        }
        c.output().unwrap()
    };
    let o = run(false);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("exists (use --force"), "{err}");
    assert_eq!(std::fs::read(&glb).unwrap(), b"keep");
    let o = run(true);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(&std::fs::read(&glb).unwrap()[..4], b"glTF");
}
