//! New placed objects from the game's asset library (issue 37 item 1,
//! mission-notes §8.7): `msh2gltf GAME --asset-library DIR` offers every
//! placeable object of the corpus game folder with its placement template;
//! three of them (a building, a unit, a tree or rock) added to a corpus
//! mission as nodes carrying `extras.parkan_asset` are written by
//! `gltf2msh --base data.tma` as new objects (fresh unique logical ids,
//! `LogicalID` locked to them, the owner's clan in the clan word and
//! `ClanID`, marker 0x80000002, property word 1, host/vertex −1, the
//! node's place exactly), read back strictly; a building without an owner
//! is refused (`mission.clan`), and a model path the game does not have,
//! new or edited, is refused before anything is written (exit 2,
//! `mission.resolve` naming the node, the path and the kind).
//!
//! Skips (passing) without `../shared/corpus`.

mod common;

use std::path::{Path, PathBuf};

use mshgltf::mission::{tma, Mode};
use serde_json::{json, Value};

/// The JSON chunk of a GLB.
fn glb_json(b: &[u8]) -> Value {
    assert_eq!(&b[..4], b"glTF");
    let jl = u32::from_le_bytes(b[12..16].try_into().unwrap()) as usize;
    serde_json::from_slice(&b[20..20 + jl]).unwrap()
}

fn corpus() -> Option<PathBuf> {
    let c = common::corpus();
    if c.is_none() {
        println!("SKIP: no ../shared/corpus");
    }
    c
}

/// The library of `game` in `dir` (exit 0) and its index.
fn library(game: &Path, dir: &Path) -> Value {
    let o = common::msh2gltf()
        .arg(game)
        .arg("--asset-library")
        .arg(dir)
        .arg("--no-textures")
        .arg("-q")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    serde_json::from_slice(&std::fs::read(dir.join("index.json")).unwrap()).unwrap()
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn the_library_offers_every_placeable_object_with_its_template() {
    let Some(game) = corpus() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let index = library(&game, &tmp.path().join("lib"));
    let assets = index["assets"].as_array().unwrap();
    assert_eq!(index["failed"], json!([]), "{index}");
    for kind in 0..3 {
        assert!(assets.iter().any(|a| a["kind"] == kind), "no kind {kind}");
    }
    // Every .dat under UNITS, kind by the class bit of its Type word.
    let dats: Vec<&Value> = assets
        .iter()
        .filter(|a| a["kind"].as_u64() < Some(2))
        .collect();
    assert_eq!(dats.len(), 8, "{dats:?}");
    for a in &dats {
        let t = a["type"].as_u64().unwrap();
        assert_eq!(a["kind"], u64::from(t & 0x8000_0000 == 0), "{a}");
        assert!(a["catalog"]
            .as_str()
            .unwrap()
            .starts_with(["Buildings/", "Units/"][a["kind"].as_u64().unwrap() as usize]));
    }
    // A placed path's template is that placement's properties.
    let fact = assets.iter().find(|a| a["name"] == "fact_m01").unwrap();
    assert_eq!(fact["template"]["from"], "placement", "{fact}");
    let glb = glb_json(
        &std::fs::read(tmp.path().join("lib").join(fact["file"].as_str().unwrap())).unwrap(),
    );
    let root = glb["scenes"][0]["nodes"][0].as_u64().unwrap() as usize;
    let x = &glb["nodes"][root]["extras"]["parkan_asset"];
    assert_eq!(x["kind"], 0);
    assert_eq!(x["path"], "UNITS\\BUILDS\\FACTORY\\fact_m01.dat");
    let names: Vec<&str> = x["properties"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        &names[..5],
        [
            "Invulnerability",
            "Life state",
            "LogicalID",
            "ClanID",
            "Type"
        ]
    );
    assert!(glb.get("animations").is_none());
    // The records a model can be changed to.
    assert!(index["records"]["scenery"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r == "st_s_rock_75"));
}

/// The corpus mission Single.01 exported to glTF JSON, and its path.
fn mission_doc(game: &Path, tmp: &Path) -> (Value, PathBuf) {
    let tma = game.join("MISSIONS/Single.01/data.tma");
    let out = tmp.join("m.gltf");
    let o = common::msh2gltf()
        .arg(&tma)
        .arg(&out)
        .arg("--no-textures")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    (
        serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap(),
        tma,
    )
}

/// Adds a node named `name` at glTF translation `t` with `asset` extras
/// (and `owner`) under the scene root.
fn add_node(doc: &mut Value, name: &str, t: [f32; 3], asset: &Value, owner: Option<&str>) {
    let mut extras = json!({"parkan_asset": asset});
    if let Some(o) = owner {
        extras["parkan_owner"] = json!(o);
    }
    let nodes = doc["nodes"].as_array_mut().unwrap();
    nodes.push(json!({"name": name, "translation": t, "extras": extras}));
    let i = nodes.len() - 1;
    doc["nodes"][0]["children"]
        .as_array_mut()
        .unwrap()
        .push(json!(i));
}

fn write_back(tmp: &Path, doc: &Value, tma: &Path, out: &str) -> std::process::Output {
    let p = tmp.join(format!("{out}.gltf"));
    // The buffer stays beside m.gltf (same folder).
    std::fs::write(&p, serde_json::to_vec(doc).unwrap()).unwrap();
    common::gltf2msh()
        .arg(&p)
        .arg("--base")
        .arg(tma)
        .arg("-o")
        .arg(tmp.join(out))
        .output()
        .unwrap()
}

/// The template of the library asset named `name`.
fn template(lib: &Path, index: &Value, name: &str) -> Value {
    let a = index["assets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == name)
        .unwrap();
    let glb = glb_json(&std::fs::read(lib.join(a["file"].as_str().unwrap())).unwrap());
    let root = glb["scenes"][0]["nodes"][0].as_u64().unwrap() as usize;
    glb["nodes"][root]["extras"]["parkan_asset"].clone()
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn new_objects_are_written_with_fresh_ids_and_their_owner() {
    let Some(game) = corpus() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let lib = tmp.path().join("lib");
    let index = library(&game, &lib);
    let (mut doc, tma) = mission_doc(&game, tmp.path());
    let (base, _) = tma::read(&std::fs::read(&tma).unwrap(), Mode::Strict).unwrap();
    let clan = mshgltf::source::decode_name(&base.clans[1].name);
    let places = [
        [40.0f32, 1.5, -30.0],
        [-25.5, 3.0, -12.25],
        [10.0, 0.5, 35.75],
    ];
    add_node(
        &mut doc,
        "new bunker",
        places[0],
        &template(&lib, &index, "mbunk01"),
        Some(&clan),
    );
    add_node(
        &mut doc,
        "new walker",
        places[1],
        &template(&lib, &index, "w_b_wlk1"),
        Some(&clan),
    );
    add_node(
        &mut doc,
        "new rock",
        places[2],
        &template(&lib, &index, "st_s_rock_75"),
        None,
    );
    let o = write_back(tmp.path(), &doc, &tma, "added.tma");
    assert!(o.status.success(), "{}", common::stderr(&o));
    let written = std::fs::read(tmp.path().join("added.tma")).unwrap();
    let (m, _) = tma::read(&written, Mode::Strict).unwrap();
    assert_eq!(m.objects.len(), base.objects.len() + 3);
    assert_eq!(&m.objects[..base.objects.len()], &base.objects[..]);
    let max_id = base.objects.iter().map(|o| o.logical_id).max().unwrap();
    for (k, o) in m.objects[base.objects.len()..].iter().enumerate() {
        assert_eq!(o.marker, 0x8000_0002);
        assert_eq!(o.property_word, 1);
        assert_eq!((o.host, o.vertex), (-1, -1));
        let p = places[k];
        assert_eq!(o.position, [p[0], -p[2], p[1]], "object {k}");
        assert_eq!(o.rotation, [0.0; 3]);
        let prop = |n: &[u8]| o.properties.iter().find(|p| p.name == n).cloned();
        if k < 2 {
            assert_eq!(o.kind, k as u32);
            assert_eq!(o.logical_id, max_id + 1 + k as i32, "fresh ids");
            assert_eq!(o.clan, 1);
            let id = prop(b"LogicalID").unwrap();
            assert_eq!([id.value, id.minimum, id.maximum], [o.logical_id as u32; 3]);
            assert_eq!(prop(b"ClanID").unwrap().value, 1);
        } else {
            assert_eq!(o.kind, 3);
            assert_eq!((o.clan, o.logical_id), (-1, -1));
            assert_eq!(o.path, b"st_s_rock_75");
        }
    }
    let said = common::stderr(&o);
    assert!(said.contains("fresh logical id"), "{said}");
    // Read back strictly by msh2gltf (every model resolves and converts).
    let r = common::msh2gltf()
        .arg(tmp.path().join("added.tma"))
        .arg(tmp.path().join("back.glb"))
        .arg("--game-dir")
        .arg(&game)
        .arg("--no-textures")
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", common::stderr(&r));
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn a_new_building_without_owner_and_an_unresolvable_model_are_refused() {
    let Some(game) = corpus() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let lib = tmp.path().join("lib");
    let index = library(&game, &lib);
    let (doc0, tma) = mission_doc(&game, tmp.path());
    let mut doc = doc0.clone();
    add_node(
        &mut doc,
        "ownerless",
        [0.0, 0.0, 0.0],
        &template(&lib, &index, "mbunk01"),
        None,
    );
    let o = write_back(tmp.path(), &doc, &tma, "ownerless.tma");
    assert_eq!(o.status.code(), Some(1));
    let e = common::stderr(&o);
    assert!(
        e.contains("mission.clan") && e.contains("ownerless") && e.contains("clan's collection"),
        "{e}"
    );
    assert!(!tmp.path().join("ownerless.tma").exists());
    // A new rock whose record the game does not have.
    let mut doc = doc0.clone();
    let mut t = template(&lib, &index, "st_s_rock_75");
    t["path"] = json!("s_crate_23");
    add_node(&mut doc, "crate", [0.0, 0.0, 0.0], &t, None);
    let o = write_back(tmp.path(), &doc, &tma, "crate.tma");
    assert_eq!(o.status.code(), Some(2), "{}", common::stderr(&o));
    let e = common::stderr(&o);
    assert!(
        e.contains("mission.resolve")
            && e.contains("node crate")
            && e.contains("s_crate_23")
            && e.contains("kind 3"),
        "{e}"
    );
    assert!(!tmp.path().join("crate.tma").exists());
    // An existing object's path edited to it: the same refusal.
    let mut doc = doc0.clone();
    let n = doc["nodes"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|n| n["extras"]["parkan_object"]["kind"] == 3)
        .unwrap();
    n["extras"]["parkan_object"]["path"] = json!("s_crate_23");
    let name = n["name"].as_str().unwrap().to_string();
    let o = write_back(tmp.path(), &doc, &tma, "edited.tma");
    assert_eq!(o.status.code(), Some(2), "{}", common::stderr(&o));
    let e = common::stderr(&o);
    assert!(
        e.contains("mission.resolve") && e.contains(&name) && e.contains("s_crate_23"),
        "{e}"
    );
    // A new unit whose .dat is not there.
    let (base, _) = tma::read(&std::fs::read(&tma).unwrap(), Mode::Strict).unwrap();
    let clan = mshgltf::source::decode_name(&base.clans[0].name);
    let mut doc = doc0;
    let mut t = template(&lib, &index, "w_b_wlk1");
    t["path"] = json!("UNITS\\BATTLE\\nosuch.dat");
    add_node(&mut doc, "ghost", [0.0, 0.0, 0.0], &t, Some(&clan));
    let o = write_back(tmp.path(), &doc, &tma, "dat.tma");
    assert_eq!(o.status.code(), Some(2), "{}", common::stderr(&o));
    let e = common::stderr(&o);
    assert!(
        e.contains("node ghost") && e.contains("kind 1: unit"),
        "{e}"
    );
}
