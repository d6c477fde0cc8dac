//! Issue 24 item 5 on a synthetic unit built from the committed samples (no
//! ../shared): a game folder with `objects.rlb`, an archive `parts.rlb`
//! holding a chassis (`samples/demo/demo.rlb`'s TOWER) and a gun
//! (`samples/anim_rotor.msh`, mounted on the chassis's node 3) and the unit
//! file `UNITS/u.dat`. `msh2gltf u.dat` assembles it; `gltf2msh u.glb
//! --base u.dat`:
//!
//! - unedited: exit 0, every part "unchanged", nothing written;
//! - a chassis node moved: the copy of `parts.rlb` in `-o` has the chassis
//!   entry with the node moved (1e-3) and every other entry byte-identical;
//! - a gun node moved without a key: the gun entry's pose at every frame
//!   moved (1e-3), the chassis entry byte-identical;
//! - `--in-place`: the game's `parts.rlb` itself, `objects.rlb` untouched;
//! - a part that cannot be written: exit 1 naming the part and its entry,
//!   nothing written.

mod common;

use common::unit_file::{dat, write_objects_rlb};
use std::path::{Path, PathBuf};

use common::{gltf2msh, msh2gltf, sample, stderr};
use mshgltf::anim::Sampler;
use mshgltf::msh::{self, Model};
use mshgltf::{convention, nres, source};
use serde_json::Value;

/// A game folder: objects.rlb, parts.rlb (chassis.msh, gun.msh), UNITS/u.dat.
fn game(dir: &Path) -> PathBuf {
    let demo = std::fs::read(sample("demo/demo.rlb")).unwrap();
    let a = nres::read(&demo, nres::Mode::Strict).unwrap();
    let tower = source::find_entry(&a, "TOWER.msh").unwrap();
    let rotor = std::fs::read(sample("anim_rotor.msh")).unwrap();
    let mut entries = vec![a.entries[tower].clone(), a.entries[tower].clone()];
    entries[0].name = b"chassis.msh";
    entries[1].name = b"gun.msh";
    entries[1].data = &rotor;
    let readme = b"not a model";
    let mut other = a.entries[tower].clone();
    other.name = b"readme.txt";
    other.data = readme;
    entries.push(other);
    std::fs::write(dir.join("parts.rlb"), nres::write(&entries).unwrap()).unwrap();
    write_objects_rlb(dir, "parts.rlb", &["chassis", "gun"]);
    std::fs::create_dir(dir.join("UNITS")).unwrap();
    let u = dir.join("UNITS/u.dat");
    std::fs::write(&u, dat(&[("chassis", -1, 0, 1), ("gun", 3, 4, 0)])).unwrap();
    u
}

fn glb_parts(path: &Path) -> (Value, Vec<u8>) {
    let d = std::fs::read(path).unwrap();
    let n = u32::from_le_bytes(d[12..16].try_into().unwrap()) as usize;
    let j = serde_json::from_slice(&d[20..20 + n]).unwrap();
    let at = 20 + n;
    let len = u32::from_le_bytes(d[at..at + 4].try_into().unwrap()) as usize;
    (j, d[at + 8..at + 8 + len].to_vec())
}

/// A copy of `glb` with node `name`'s translation x moved by `dx`.
fn moved(glb: &Path, name: &str, dx: f64, out: &Path) {
    let (mut j, bin) = glb_parts(glb);
    let n = j["nodes"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|n| n["name"] == name)
        .unwrap_or_else(|| panic!("no node {name}"));
    let mut t = n["translation"].clone();
    if t.is_null() {
        t = serde_json::json!([0.0, 0.0, 0.0]);
    }
    t[0] = Value::from(t[0].as_f64().unwrap() + dx);
    n["translation"] = t;
    std::fs::write(out, common::glb(&j, &bin)).unwrap();
}

fn entry(archive: &Path, name: &str) -> Vec<u8> {
    let d = std::fs::read(archive).unwrap();
    let a = nres::read(&d, nres::Mode::Strict).unwrap();
    a.entries[source::find_entry(&a, name).unwrap()]
        .data
        .to_vec()
}

fn model(bytes: &[u8]) -> Model {
    msh::decode(bytes, msh::Mode::Strict).unwrap().model
}

/// Node `r`'s position at every frame of `b` minus `a`'s.
fn shifts(a: &Model, b: &Model, r: usize) -> Vec<[f32; 3]> {
    let q = convention::detect(a, None, &Default::default())
        .conventions
        .quat;
    let (sa, sb) = (Sampler::new(a, q).unwrap(), Sampler::new(b, q).unwrap());
    (0..a.frame_count.max(1))
        .map(|f| {
            let (pa, pb) = (sa.node_pose(r, f as f32).pos, sb.node_pose(r, f as f32).pos);
            [pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]]
        })
        .collect()
}

fn near(a: [f32; 3], b: [f32; 3]) -> bool {
    (0..3).all(|k| (a[k] - b[k]).abs() <= 1e-3)
}

#[test]
fn unit_part_edits_reach_their_archive_entries() {
    let tmp = tempfile::tempdir().unwrap();
    let g = tmp.path().join("game");
    std::fs::create_dir(&g).unwrap();
    let u = game(&g);
    let parts = g.join("parts.rlb");
    let (orig, registry) = (
        std::fs::read(&parts).unwrap(),
        std::fs::read(g.join("objects.rlb")).unwrap(),
    );
    let glb = tmp.path().join("u.glb");
    let o = msh2gltf().arg(&u).arg(&glb).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));

    // Unedited: nothing written, every part unchanged.
    let out = tmp.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let o = gltf2msh()
        .arg(&glb)
        .arg("--base")
        .arg(&u)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert_eq!(err.matches("): unchanged").count(), 2, "{err}");
    assert!(err.contains("unchanged, nothing written"), "{err}");
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);

    // A chassis node moved: the chassis entry only.
    let e1 = tmp.path().join("e1.glb");
    moved(&glb, "turret", 0.25, &e1);
    let o = gltf2msh()
        .arg(&e1)
        .arg("--base")
        .arg(&u)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let copy = out.join("parts.rlb");
    let (a, b) = (
        model(&entry(&parts, "chassis.msh")),
        model(&entry(&copy, "chassis.msh")),
    );
    assert!(shifts(&a, &b, 1).iter().all(|d| near(*d, [0.25, 0.0, 0.0])));
    assert!(shifts(&a, &b, 0).iter().all(|d| near(*d, [0.0; 3])));
    for e in ["gun.msh", "readme.txt"] {
        assert_eq!(entry(&parts, e), entry(&copy, e), "{e}");
    }

    // A gun node moved without a key: applied to every key of the gun.
    let e2 = tmp.path().join("e2.glb");
    moved(&glb, "rotor", 0.25, &e2);
    let out2 = tmp.path().join("out2");
    std::fs::create_dir(&out2).unwrap();
    let o = gltf2msh()
        .arg(&e2)
        .arg("--base")
        .arg(&u)
        .arg("-o")
        .arg(&out2)
        .arg("--report")
        .arg(tmp.path().join("r2.json"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let copy2 = out2.join("parts.rlb");
    let (a, b) = (
        model(&entry(&parts, "gun.msh")),
        model(&entry(&copy2, "gun.msh")),
    );
    let d = shifts(&a, &b, 1);
    assert!(
        d.len() > 1 && d.iter().all(|d| near(*d, [0.25, 0.0, 0.0])),
        "{d:?}"
    );
    assert_eq!(entry(&parts, "chassis.msh"), entry(&copy2, "chassis.msh"));
    let r: Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("r2.json")).unwrap()).unwrap();
    let rows = r["import"]["parts"].as_array().unwrap();
    assert_eq!(
        (rows[0]["written"].clone(), rows[1]["written"].clone()),
        (Value::from(false), Value::from(true))
    );

    // In place: the game's archive, nothing else.
    let o = gltf2msh()
        .arg(&e2)
        .arg("--base")
        .arg(&u)
        .arg("--in-place")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(&parts).unwrap(),
        std::fs::read(&copy2).unwrap()
    );
    assert_ne!(std::fs::read(&parts).unwrap(), orig);
    assert_eq!(std::fs::read(g.join("objects.rlb")).unwrap(), registry);
}

#[test]
fn a_part_that_cannot_be_written_is_named_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let g = tmp.path().join("game");
    std::fs::create_dir(&g).unwrap();
    let u = game(&g);
    let glb = tmp.path().join("u.glb");
    assert!(msh2gltf()
        .arg(&u)
        .arg(&glb)
        .output()
        .unwrap()
        .status
        .success());
    let (mut j, bin) = glb_parts(&glb);
    // The gun's tip claims a Res1 node the gun does not have.
    for n in j["nodes"].as_array_mut().unwrap() {
        if n["name"] == "tip" {
            n["extras"]["msh"]["node"] = Value::from(99);
        }
        if n["name"] == "turret" {
            n["translation"] = serde_json::json!([9.0, 0.0, 0.0]);
        }
    }
    let bad = tmp.path().join("bad.glb");
    std::fs::write(&bad, common::glb(&j, &bin)).unwrap();
    let out = tmp.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let o = gltf2msh()
        .arg(&bad)
        .arg("--base")
        .arg(&u)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("part 1 gun (parts.rlb:gun.msh): gltf.match.node"),
        "{err}"
    );
    assert!(err.contains("nothing written"), "{err}");
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
    // A model base is refused naming the unit route.
    let o = gltf2msh()
        .arg(&bad)
        .arg("--base")
        .arg(format!("{}:chassis.msh", g.join("parts.rlb").display()))
        .arg("-o")
        .arg(out.join("x.rlb"))
        .output()
        .unwrap();
    assert!(stderr(&o).contains("gltf.unit"), "{}", stderr(&o));
    assert!(stderr(&o).contains("--base UNITS/"), "{}", stderr(&o));
}

/// A mesh node added at the scene root of a unit's glTF belongs to no part:
/// it is a warning naming it, nothing is written, and the run is never
/// called "unchanged" (neither printed nor in `--report`).
#[test]
fn an_object_of_no_part_is_a_warning_never_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let g = tmp.path().join("game");
    std::fs::create_dir(&g).unwrap();
    let u = game(&g);
    let glb = tmp.path().join("u.glb");
    let o = msh2gltf().arg(&u).arg(&glb).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let (mut j, bin) = glb_parts(&glb);
    let nodes = j["nodes"].as_array_mut().unwrap();
    nodes.push(serde_json::json!({"name": "Added", "mesh": 0}));
    let added = nodes.len() - 1;
    let scene = j["scene"].as_u64().unwrap_or(0) as usize;
    j["scenes"][scene]["nodes"]
        .as_array_mut()
        .unwrap()
        .push(added.into());
    let edited = tmp.path().join("added.glb");
    std::fs::write(&edited, common::glb(&j, &bin)).unwrap();
    let (out, report) = (tmp.path().join("out"), tmp.path().join("r.json"));
    std::fs::create_dir(&out).unwrap();
    let o = gltf2msh()
        .arg(&edited)
        .arg("--base")
        .arg(&u)
        .arg("-o")
        .arg(&out)
        .arg("--report")
        .arg(&report)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.lines()
            .any(|l| l.contains("warning") && l.contains("\"Added\"") && l.contains("not written")),
        "{err}"
    );
    assert!(!err.contains("unchanged, nothing written"), "{err}");
    assert!(err.contains("nothing written; 1 warning(s)"), "{err}");
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
    let r: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let unit = if r["import"].is_object() {
        &r["import"]
    } else {
        &r
    };
    assert_eq!(unit["unchanged"], false, "{r:#}");
}

/// The game folder of [`game`] in `tmp/game` and its assembled export
/// `tmp/u.glb`: (unit file, glb).
fn exported_unit(tmp: &Path) -> (PathBuf, PathBuf) {
    let g = tmp.join("game");
    std::fs::create_dir(&g).unwrap();
    let u = game(&g);
    let glb = tmp.join("u.glb");
    let o = msh2gltf().arg(&u).arg(&glb).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    (u, glb)
}

/// `gltf2msh EDITED --base U -o tmp/out` (the folder created): the output.
fn split_back(tmp: &Path, edited: &Path, u: &Path) -> std::process::Output {
    let out = tmp.join("out");
    let _ = std::fs::create_dir(&out);
    gltf2msh()
        .arg(edited)
        .arg("--base")
        .arg(u)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap()
}

/// Issue 36 item 9: an object added with an `extras.msh.part` the unit
/// does not have (99, 2^64 − 1) would reach no part: refused naming the
/// node and the parts there are (exit 1, nothing written), never
/// "unchanged".
#[test]
fn an_added_node_naming_no_part_is_refused_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (u, glb) = exported_unit(tmp.path());
    for part in [Value::from(99), Value::from(u64::MAX)] {
        let (mut j, bin) = glb_parts(&glb);
        let nodes = j["nodes"].as_array_mut().unwrap();
        nodes.push(serde_json::json!({"name": "Added", "mesh": 0,
            "extras": {"msh": {"part": part.clone()}}}));
        let added = nodes.len() - 1;
        let scene = j["scene"].as_u64().unwrap_or(0) as usize;
        j["scenes"][scene]["nodes"]
            .as_array_mut()
            .unwrap()
            .push(added.into());
        let edited = tmp.path().join("added.glb");
        std::fs::write(&edited, common::glb(&j, &bin)).unwrap();
        let o = split_back(tmp.path(), &edited, &u);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{part}: {err}");
        for want in [
            "gltf.unit".to_string(),
            format!("node {added} \"Added\""),
            format!("extras.msh.part {part}"),
            "0..=1".to_string(),
        ] {
            assert!(err.contains(&want), "{want:?} missing: {err}");
        }
        assert!(!err.contains("unchanged"), "{err}");
        assert_eq!(
            std::fs::read_dir(tmp.path().join("out")).unwrap().count(),
            0
        );
    }
}

/// Issue 36 item 9: the gun's objects hung on another node of the chassis
/// than its socket (node 3, the unit file's attach): the game mounts the
/// gun where the `.dat` says, so the move is not written, and a warning
/// names the gun, the object, its new parent and the socket (never
/// "unchanged").
#[test]
fn a_gun_hung_on_another_socket_is_a_warning_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (u, glb) = exported_unit(tmp.path());
    let (mut j, bin) = glb_parts(&glb);
    let nodes = j["nodes"].as_array().unwrap();
    let chassis = |r: u64| {
        nodes
            .iter()
            .position(|n| {
                n["extras"]["msh"]["part"] == 0
                    && n["extras"]["msh"]["node"] == r
                    && n["extras"]["msh"].get("cell").is_none()
            })
            .unwrap()
    };
    let (socket, other) = (chassis(3), chassis(0));
    let hung: Vec<Value> = nodes[socket]["children"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| nodes[c.as_u64().unwrap() as usize]["extras"]["msh"]["part"] == 1)
        .cloned()
        .collect();
    assert!(!hung.is_empty());
    let names: Vec<String> = hung
        .iter()
        .map(|c| {
            nodes[c.as_u64().unwrap() as usize]["name"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let other_name = nodes[other]["name"].as_str().unwrap().to_string();
    let kids = j["nodes"][socket]["children"].as_array_mut().unwrap();
    kids.retain(|c| !hung.contains(c));
    if kids.is_empty() {
        j["nodes"][socket]
            .as_object_mut()
            .unwrap()
            .remove("children");
    }
    match j["nodes"][other]["children"].as_array_mut() {
        Some(c) => c.extend(hung),
        None => j["nodes"][other]["children"] = Value::from(hung),
    }
    let edited = tmp.path().join("moved_gun.glb");
    std::fs::write(&edited, common::glb(&j, &bin)).unwrap();
    let o = split_back(tmp.path(), &edited, &u);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(!err.contains("unchanged, nothing written"), "{err}");
    let line = err
        .lines()
        .find(|l| l.contains("warning") && l.contains(&format!("{:?}", names[0])))
        .unwrap_or_else(|| panic!("no warning naming {:?}: {err}", names[0]));
    for want in [
        "part 1 gun".to_string(),
        format!("{other_name:?} (part 0 chassis)"),
        "node 3 of part 0 chassis".to_string(),
        "not written".to_string(),
    ] {
        assert!(line.contains(&want), "{want:?} missing: {line}");
    }
}

/// Issue 36 item 9: `--in-place` with `-o` and a unit base is refused
/// (exit 2): the game's archive is not replaced, no copy is written.
#[test]
fn in_place_with_an_output_folder_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (u, glb) = exported_unit(tmp.path());
    let e = tmp.path().join("e.glb");
    moved(&glb, "rotor", 0.25, &e);
    let parts = tmp.path().join("game/parts.rlb");
    let before = std::fs::read(&parts).unwrap();
    let out = tmp.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let o = gltf2msh()
        .arg(&e)
        .arg("--base")
        .arg(&u)
        .arg("--in-place")
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--in-place") && err.contains("-o"), "{err}");
    assert_eq!(std::fs::read(&parts).unwrap(), before);
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
}

/// Issue 39: a recolour of one part's material is refused once, naming
/// that part (not every part) and the way that writes it: the part's own
/// `ARCHIVE:ENTRY` with `--game-dir` (not `--game-dir` on the unit, which
/// the unit path refuses).
#[test]
fn a_unit_recolour_names_the_one_part_and_the_way_that_works() {
    let tmp = tempfile::tempdir().unwrap();
    let (u, glb) = exported_unit(tmp.path());
    let (mut j, bin) = glb_parts(&glb);
    let nodes = j["nodes"].as_array().unwrap().clone();
    let gun_mat = nodes
        .iter()
        .filter(|n| n["extras"]["msh"]["part"] == 1)
        .filter_map(|n| n["mesh"].as_u64())
        .flat_map(|m| {
            j["meshes"][m as usize]["primitives"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|p| p["material"].as_u64())
                .collect::<Vec<_>>()
        })
        .find(|&m| j["materials"][m as usize]["extras"]["msh"]["exported"].is_object())
        .expect("a gun material") as usize;
    j["materials"][gun_mat]["pbrMetallicRoughness"]["baseColorFactor"] =
        serde_json::json!([1.0, 0.0, 0.0, 1.0]);
    let edited = tmp.path().join("red.glb");
    std::fs::write(&edited, common::glb(&j, &bin)).unwrap();
    let o = split_back(tmp.path(), &edited, &u);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    for want in [
        "gltf.material_edit",
        &format!("material {gun_mat} "),
        "part 1 gun (parts.rlb:gun.msh)",
        "parts.rlb:gun.msh\" part.glb",
        "--base",
        "--game-dir",
    ] {
        assert!(err.contains(want), "{want:?} missing: {err}");
    }
    assert!(!err.contains("part 0"), "only the gun is named: {err}");
    assert_eq!(err.matches("part 1 gun").count(), 1, "{err}");
    assert_eq!(
        std::fs::read_dir(tmp.path().join("out")).unwrap().count(),
        0
    );
}
