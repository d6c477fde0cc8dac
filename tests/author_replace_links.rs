//! Authoring over an existing archive entry (`--into A --name N
//! --replace-entries`) keeps what the game links to it (issue 23 item 6):
//! a `.cpt` beside the model places points on nodes by index, unit files
//! mount parts on `Base_*` socket nodes by index. A new model whose nodes
//! at those indices differ is refused (`gltf.replace_links`, exit 2,
//! nothing written) naming each point; one that keeps them is written.

mod common;

use common::{gltf2msh, msh2gltf, sample, stderr};
use mshgltf::nres;
use mshgltf::unit::cpt;

/// A copy of demo.rlb with a TOWER.cpt whose point sits on node 1
/// ("turret").
fn archive_with_points(dir: &std::path::Path) -> std::path::PathBuf {
    let data = std::fs::read(sample("demo/demo.rlb")).unwrap();
    let a = nres::read(&data, nres::Mode::Strict).unwrap();
    let points = cpt::write(&cpt::ControlPoints {
        points: vec![cpt::ControlPoint {
            word0: 0,
            node: 1,
            carrier: 1,
            position: [0.0, 0.0, 1.0],
            direction: [1.0, 0.0, 0.0],
            name_field: cpt::name_field(b"Dir_1"),
        }],
    });
    let mut entries = a.entries.clone();
    let mut e = entries[0].clone();
    e.name = b"TOWER.cpt";
    e.data = &points;
    entries.push(e);
    let out = dir.join("demo.rlb");
    std::fs::write(&out, nres::write(&entries).unwrap()).unwrap();
    out
}

#[test]
fn replacing_an_entry_keeps_its_linked_nodes_or_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let arch = archive_with_points(dir.path());
    let before = std::fs::read(&arch).unwrap();
    // Another model (nodes body, rotor, tip) over TOWER (base, turret, ...).
    let rotor = dir.path().join("rotor.glb");
    assert!(msh2gltf()
        .arg(sample("anim_rotor.msh"))
        .arg(&rotor)
        .output()
        .unwrap()
        .status
        .success());
    let o = gltf2msh()
        .arg(&rotor)
        .args([
            "--into",
            arch.to_str().unwrap(),
            "--name",
            "TOWER",
            "--replace-entries",
            "--force",
        ])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("gltf.replace_links")
            && err.contains("control point \"Dir_1\" on node 1 \"turret\""),
        "{err}"
    );
    assert!(std::fs::read(&arch).unwrap() == before, "nothing written");

    // TOWER's own export authored anew keeps node 1 "turret": written.
    let tower = dir.path().join("tower.glb");
    let spec = format!("{}:TOWER.msh", arch.display());
    assert!(msh2gltf()
        .arg(&spec)
        .arg(&tower)
        .output()
        .unwrap()
        .status
        .success());
    let out = dir.path().join("new.rlb");
    let o = gltf2msh()
        .arg(&tower)
        .args([
            "--into",
            arch.to_str().unwrap(),
            "--name",
            "TOWER",
            "--replace-entries",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.is_file());
}
