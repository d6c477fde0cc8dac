//! A map and a mission installed into a copy of the corpus game and
//! restored, through the command line (issue 37 item 5): `gltf2msh
//! map.glb --base MAPS/m01/Land.msh --in-place` and `gltf2msh m.glb
//! --base MISSIONS/.../data.tma --in-place` write over the game's own
//! files, keeping each original in `GAME/.mshgltf-originals`;
//! `--installed` lists both; `--restore` puts both back byte for byte;
//! twice in a row; afterwards every game file is the corpus's. A packed
//! mod of both applies to a second copy and is refused on a third whose
//! mission differs. Needs `../shared`.

mod common;

use std::path::{Path, PathBuf};

use common::stderr;
use serde_json::{json, Value};

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        let q = to.join(e.file_name());
        if p.is_dir() {
            if e.file_name() != "bad" {
                copy_dir(&p, &q);
            }
        } else {
            std::fs::copy(&p, &q).unwrap();
        }
    }
}

/// Every file under `dir` but the tools' own, relative, with its bytes.
fn game_files(dir: &Path, root: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if mshgltf::output::own_file(&p).is_some() {
            continue;
        }
        if p.is_dir() {
            game_files(&p, root, out);
        } else {
            out.push((
                p.strip_prefix(root).unwrap().to_path_buf(),
                std::fs::read(&p).unwrap(),
            ));
        }
    }
}

fn glb_chunks(b: &[u8]) -> (Value, Vec<u8>) {
    let jl = u32::from_le_bytes(b[12..16].try_into().unwrap()) as usize;
    let json = serde_json::from_slice(&b[20..20 + jl]).unwrap();
    let at = 20 + jl;
    let bl = u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize;
    (json, b[at + 8..at + 8 + bl].to_vec())
}

/// The game's paths: (game, Land.msh, data.tma).
fn paths(corpus: &Path, game: &Path) -> (PathBuf, PathBuf) {
    let m = common::manifest(corpus);
    let land = game
        .join(m["terrains"][0]["dir"].as_str().unwrap())
        .join("Land.msh");
    let tma = game.join(
        m["missions"][0]["files"]["data.tma"]["path"]
            .as_str()
            .unwrap(),
    );
    (land, tma)
}

/// The map exported and lifted by `dy` (every vertex, glTF +Y): its GLB.
fn map_edit(land: &Path, work: &Path, dy: f32) -> PathBuf {
    let glb = work.join("map.glb");
    let o = common::msh2gltf()
        .arg(land)
        .arg(&glb)
        .arg("--force")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let (mut j, mut bin) = glb_chunks(&std::fs::read(&glb).unwrap());
    let acc = j["meshes"][0]["primitives"][0]["attributes"]["POSITION"]
        .as_u64()
        .unwrap() as usize;
    let view = j["accessors"][acc]["bufferView"].as_u64().unwrap() as usize;
    let off = j["bufferViews"][view]["byteOffset"].as_u64().unwrap_or(0) as usize
        + j["accessors"][acc]["byteOffset"].as_u64().unwrap_or(0) as usize;
    for i in 0..j["accessors"][acc]["count"].as_u64().unwrap() as usize {
        let at = off + 12 * i + 4;
        let y = f32::from_le_bytes(bin[at..at + 4].try_into().unwrap()) + dy;
        bin[at..at + 4].copy_from_slice(&y.to_le_bytes());
    }
    for k in ["min", "max"] {
        let v = j["accessors"][acc][k][1].as_f64().unwrap() + f64::from(dy);
        j["accessors"][acc][k][1] = json!(v);
    }
    let out = work.join(format!("map{dy}.glb"));
    std::fs::write(&out, common::glb(&j, &bin)).unwrap();
    out
}

/// The mission exported, its first unhosted rock moved +`dx` along glTF x.
fn mission_edit(tma: &Path, work: &Path, dx: f64) -> PathBuf {
    let glb = work.join("m.glb");
    let o = common::msh2gltf()
        .arg(tma)
        .arg(&glb)
        .arg("--force")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let (mut j, bin) = glb_chunks(&std::fs::read(&glb).unwrap());
    let i = j["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .position(|n| n["extras"]["parkan_object"]["kind"] == 3)
        .unwrap();
    let t = j["nodes"][i]
        .get("translation")
        .cloned()
        .unwrap_or(json!([0.0, 0.0, 0.0]));
    j["nodes"][i]["translation"] = json!([t[0].as_f64().unwrap() + dx, t[1], t[2]]);
    let out = work.join(format!("m{dx}.glb"));
    std::fs::write(&out, common::glb(&j, &bin)).unwrap();
    out
}

fn install(glb: &Path, base: &Path) -> std::process::Output {
    common::gltf2msh()
        .arg(glb)
        .arg("--base")
        .arg(base)
        .arg("--in-place")
        .output()
        .unwrap()
}

fn store(args: &[&std::ffi::OsStr]) -> std::process::Output {
    common::gltf2msh().args(args).output().unwrap()
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn a_map_and_a_mission_installed_and_restored_twice_then_packed() {
    let Some(corpus) = common::corpus() else {
        println!("SKIP: no ../shared");
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let game = t.path().join("game");
    copy_dir(&corpus, &game);
    let (land, tma) = paths(&corpus, &game);
    let mut before = Vec::new();
    game_files(&game, &game, &mut before);
    let (land0, tma0) = (std::fs::read(&land).unwrap(), std::fs::read(&tma).unwrap());
    for round in 0..2 {
        let o = install(&map_edit(&land, t.path(), 1.0), &land);
        assert!(o.status.success(), "round {round}: {}", stderr(&o));
        assert!(stderr(&o).contains("installed into"), "{}", stderr(&o));
        assert!(std::fs::read(&land).unwrap() != land0);
        let o = install(&mission_edit(&tma, t.path(), 5.0), &tma);
        assert!(o.status.success(), "round {round}: {}", stderr(&o));
        assert!(stderr(&o).contains("installed into"), "{}", stderr(&o));
        assert!(std::fs::read(&tma).unwrap() != tma0);
        let rep = t.path().join("installed.json");
        let o = store(&[
            "--installed".as_ref(),
            game.as_os_str(),
            "--report".as_ref(),
            rep.as_os_str(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let r: Value = serde_json::from_slice(&std::fs::read(&rep).unwrap()).unwrap();
        let listed: Vec<&str> = r["files"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["kind"] == "replaced")
            .map(|f| f["path"].as_str().unwrap())
            .collect();
        for f in [&land, &tma] {
            let rel = f
                .strip_prefix(&game)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            assert!(listed.contains(&rel.as_str()), "{rel} not listed: {r:#}");
        }
        let o = store(&["--restore".as_ref(), game.as_os_str()]);
        assert!(o.status.success(), "round {round}: {}", stderr(&o));
        assert!(std::fs::read(&land).unwrap() == land0, "round {round}");
        assert!(std::fs::read(&tma).unwrap() == tma0, "round {round}");
    }
    let mut after = Vec::new();
    game_files(&game, &game, &mut after);
    before.sort();
    after.sort();
    assert_eq!(after.len(), before.len());
    for ((p, a), (q, b)) in after.iter().zip(&before) {
        assert_eq!(p, q);
        assert!(a == b, "{} differs after the restores", p.display());
    }
    assert!(!game.join(".mshgltf-originals").exists());

    // A mod of both: applied to a second copy, refused on a third whose
    // mission differs.
    assert!(install(&map_edit(&land, t.path(), 1.0), &land)
        .status
        .success());
    assert!(install(&mission_edit(&tma, t.path(), 5.0), &tma)
        .status
        .success());
    let (land1, tma1) = (std::fs::read(&land).unwrap(), std::fs::read(&tma).unwrap());
    let zip = t.path().join("level.zip");
    let o = store(&["--pack".as_ref(), zip.as_os_str(), game.as_os_str()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let second = t.path().join("second");
    copy_dir(&corpus, &second);
    let (l2, t2) = paths(&corpus, &second);
    let o = store(&["--apply".as_ref(), zip.as_os_str(), second.as_os_str()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(&l2).unwrap() == land1 && std::fs::read(&t2).unwrap() == tma1);
    let o = store(&["--restore".as_ref(), second.as_os_str()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(&l2).unwrap() == land0 && std::fs::read(&t2).unwrap() == tma0);
    let third = t.path().join("third");
    copy_dir(&corpus, &third);
    let (l3, t3) = paths(&corpus, &third);
    let mut other = tma0.clone();
    other.push(0);
    std::fs::write(&t3, &other).unwrap();
    let o = store(&["--apply".as_ref(), zip.as_os_str(), third.as_os_str()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let rel = t3
        .strip_prefix(&third)
        .unwrap()
        .to_string_lossy()
        .replace('\\', "/");
    assert!(
        stderr(&o).contains(&format!("{rel}: the original here is sha256")),
        "{}",
        stderr(&o)
    );
    assert!(
        std::fs::read(&l3).unwrap() == land0,
        "the map was written though the mission refused"
    );
    assert!(std::fs::read(&t3).unwrap() == other);
}
