//! The game's asset library through the Blender add-on (issue 37 item 1):
//! `tests/blender/assets_test.py` builds the library of a copy of the
//! corpus game folder (`parkan.build_asset_library`; a second run reuses
//! the cache), imports Single.01 (File › Import › Parkan mission), appends
//! a building, a unit and a scenery record from the library at chosen
//! places and turns, changes a rock's model through `parkan.change_model`,
//! exports (File › Export › Parkan mission) into a new mission folder and
//! imports that again; then a model path typed by hand is refused. Here:
//! the library's blend holds every asset of its index, each with a
//! rendered 128 px preview, catalogs are written, the library is
//! registered; the written `data.tma` read
//! strictly ([`mshgltf::mission::tma::read`] and `msh2gltf`) holds the base
//! objects (the rock's path changed) and the three new ones after them
//! with fresh ids, the owner's clan and Blender's places exactly (game
//! x, y, z = Blender x, y, z, f32), turned within 1e-5 rad; the re-import
//! shows them at the same places; the refusal names `mission.resolve` and
//! the path, and writes nothing.
//!
//! Runs in Blender 3.4.1 and the newest PyPI bpy; skips (passing) when
//! `../shared/corpus` or Blender is absent.

mod common;

use std::path::Path;

use mshgltf::mission::{tma, Mission, Mode};
use serde_json::Value;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        let q = to.join(e.file_name());
        if p.is_dir() {
            if e.file_name() != "bad" && e.file_name() != "models" {
                copy_dir(&p, &q);
            }
        } else {
            std::fs::copy(&p, &q).unwrap();
        }
    }
}

#[test]
#[ignore = "needs ../shared and Blender: cargo test -- --include-ignored"]
fn asset_library_objects_are_placed_in_blender() {
    let Some((corpus, blender)) = common::corpus_and_blender() else {
        return;
    };
    assets_in(&corpus, &blender, None);
}

#[test]
#[ignore = "needs ../shared and PyPI bpy (../shared/tools/blender-inspect --bpy): cargo test -- --include-ignored"]
fn asset_library_objects_are_placed_in_bpy_5() {
    let (Some((corpus, blender)), Some(py)) = (
        common::corpus_and_blender(),
        common::bpy_python(common::NEWEST_BPY),
    ) else {
        println!("SKIP: no ../shared, Blender or PyPI bpy");
        return;
    };
    assets_in(&corpus, &blender, Some(&py));
}

fn f32s(v: &Value) -> [f32; 3] {
    [0, 1, 2].map(|k| v[k].as_f64().unwrap() as f32)
}

fn assets_in(corpus: &Path, blender: &Path, bpy: Option<&Path>) {
    let tmp = tempfile::tempdir().unwrap();
    let game = tmp.path().join("game");
    copy_dir(corpus, &game);
    let zip = tmp.path().join("addon.zip");
    common::package_addon(&zip);
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let mission = game.join("MISSIONS/Single.01");
    let t = std::time::Instant::now();
    let (r, stdout) = common::blender_output(
        common::blender_script(blender, bpy, "assets_test.py", tmp.path())
            .arg("--")
            .arg(&zip)
            .arg(&work)
            .arg(&game)
            .arg(&mission),
        "ASSETS_TEST",
    );
    println!("Blender run: {:.1} s", t.elapsed().as_secs_f64());
    assert_eq!(r["errors"], serde_json::json!([]), "{r}\n{stdout}");
    for step in ["build", "rebuild", "import", "export", "reimport"] {
        assert_eq!(
            r[step],
            serde_json::json!(["FINISHED"]),
            "{step}: {r}\n{stdout}"
        );
    }
    assert_eq!(r["cache_reused"], true, "{r}");
    let n = r["index_assets"].as_u64().unwrap();
    assert_eq!(r["blend_assets"].as_array().unwrap().len() as u64, n, "{r}");
    assert!(r["catalog_lines"].as_array().unwrap().len() > 4, "{r}");
    assert_eq!(
        r["previews"].as_u64(),
        Some(n),
        "a rendered preview per asset: {r}"
    );
    for a in r["added"].as_array().unwrap() {
        assert_eq!(a["preview"], serde_json::json!([128, 128]), "{a}");
    }
    assert!(r["libraries"].to_string().contains("Parkan game"), "{r}");
    assert_eq!(
        r["changed"]["result"],
        serde_json::json!(["FINISHED"]),
        "{r}"
    );
    // The written mission, strictly.
    let base_bytes = std::fs::read(mission.join("data.tma")).unwrap();
    let (base, _) = tma::read(&base_bytes, Mode::Strict).unwrap();
    let written = std::fs::read(r["written"].as_str().unwrap()).unwrap();
    let (m, _) = tma::read(&written, Mode::Strict).unwrap();
    let nb = base.objects.len();
    assert_eq!(m.objects.len(), nb + 3, "{r}");
    let changed = r["changed"]["index"].as_u64().unwrap() as usize;
    for (i, (a, b)) in base.objects.iter().zip(&m.objects).enumerate() {
        if i == changed {
            assert_eq!(a.path_text(), r["changed"]["old"].as_str().unwrap());
            assert_eq!(b.path_text(), r["changed"]["new"].as_str().unwrap());
        } else {
            assert_eq!(a, b, "object {i}");
        }
    }
    check_new_objects(&r, &base, &m);
    // The game object left outside the mission's collection is named.
    let stray = r["stray"].as_str().unwrap();
    let said = r["export_warnings"].as_array().unwrap();
    assert!(
        said.iter()
            .any(|w| w.as_str().is_some_and(|w| w.starts_with(&format!(
                "{stray}: a game object outside the mission's collection"
            )) && w.contains("not written"))),
        "{r}"
    );
    let added = r["added"].as_array().unwrap();
    // msh2gltf reads it strictly.
    let back = common::msh2gltf()
        .arg(r["written"].as_str().unwrap())
        .arg(work.join("back.glb"))
        .arg("--no-textures")
        .output()
        .unwrap();
    assert!(back.status.success(), "{}", common::stderr(&back));
    // Re-imported at their places.
    let again = r["reimported"].as_array().unwrap();
    assert_eq!(again.len(), 3, "{r}");
    for a in again {
        assert!(a["index"].as_u64().unwrap() as usize >= nb);
        let want = added.iter().find(|w| w["path"] == a["path"]).unwrap();
        assert_eq!(f32s(&a["location"]), f32s(&want["location"]), "{a}");
    }
    // The hand-typed model path is refused, naming the rule and the path.
    let refused = r["refused"].to_string();
    assert!(
        refused.contains("ERROR")
            && refused.contains("mission.resolve")
            && refused.contains("s_crate_23"),
        "{refused}"
    );
    assert_eq!(r["refused_written"], false);
}

/// The three new objects of `m` (after `base`'s): kind, path, Blender's
/// place exactly, the turn, marker, property word, host; owned ones with
/// the owner's clan and fresh unique ids (`LogicalID` locked), scenery
/// with its scale.
fn check_new_objects(r: &Value, base: &Mission, m: &Mission) {
    let nb = base.objects.len();
    let owner = r["owner"]["index"].as_i64().unwrap() as i32;
    let max_id = base.objects.iter().map(|o| o.logical_id).max().unwrap();
    let added = r["added"].as_array().unwrap();
    let mut ids = Vec::new();
    // New objects follow the base's in the glTF's node order (Blender's
    // exporter's): matched by path.
    for a in added {
        let path = a["path"].as_str().unwrap();
        let o = m.objects[nb..]
            .iter()
            .find(|o| o.path_text() == path)
            .unwrap_or_else(|| panic!("no new object {path}"));
        assert_eq!(o.kind, a["kind"].as_u64().unwrap() as u32, "{a}");
        assert_eq!(o.path_text(), a["path"].as_str().unwrap());
        assert_eq!(o.position, f32s(&a["location"]), "{a}: the place, exactly");
        let turn = a["turn"].as_f64().unwrap();
        assert!(
            (f64::from(o.rotation[2]) - turn).abs() < 1e-5,
            "{a}: {:?}",
            o.rotation
        );
        assert_eq!(
            (o.marker, o.property_word, o.host, o.vertex),
            (0x8000_0002, 1, -1, -1)
        );
        if o.kind <= 1 {
            assert_eq!(o.clan, owner);
            assert!(o.logical_id > max_id && !ids.contains(&o.logical_id), "{a}");
            ids.push(o.logical_id);
            let id = o
                .properties
                .iter()
                .find(|p| p.name == b"LogicalID")
                .unwrap();
            assert_eq!([id.value, id.minimum, id.maximum], [o.logical_id as u32; 3]);
        } else {
            let s = a["scale"].as_f64().unwrap() as f32;
            assert!(
                o.scale.iter().all(|x| (x - s).abs() < 1e-6),
                "{:?}",
                o.scale
            );
        }
    }
}
