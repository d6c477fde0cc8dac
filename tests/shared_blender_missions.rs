//! Missions through the Blender add-on (issue 25 step 6, mission-notes
//! §8.6–8.7): `tests/blender/mission_test.py` imports every corpus mission
//! (File › Import › Parkan mission) into one Blender scene, on a copy of
//! `../shared/corpus`, and exports each unedited (File › Export › Parkan
//! mission); then in the first mission moves a rock, deletes a tree and
//! duplicates a unit (Shift+D), exports again and renders the mission;
//! File › Export › Parkan model on a mission is refused naming the mission
//! export; in the second mission (its names `.001` after the first's) a
//! Shift+D copy named `.002` still comes back as the copy; back in the
//! first mission a building scaled ×2, a route moved, a new mesh added, a
//! unit's piece moved inside it and a tree's mesh edited are exported.
//! Here: every placed object of the manifest is there (per kind, every
//! index, one collection per group), copies share mesh datablocks (fewer
//! datablocks than placed mesh objects), each placed object carries its
//! clan's colour, the unedited exports are the base `data.tma` byte for
//! byte, and the edited one, read with the project's own reader
//! ([`mshgltf::mission::tma::read`], strict), holds exactly the move, the
//! delete and the copy; the route move is written; the scale, the new
//! mesh, the piece and the mesh edit, which data.tma cannot take, leave
//! the file as it was and are each a warning naming the object in the
//! operator's report.
//!
//! Skips (passing) when `../shared/corpus` or Blender is absent.

mod common;

use std::path::Path;

use mshgltf::mission::{ir::PlacedObject, tma, Mission, Mode};
use serde_json::Value;

/// Blender's move of the rock, in game axes (Blender x, y = game x, y).
const ROCK_MOVE: [f64; 2] = [5.0, 2.5];
/// Blender's move of the copy along Blender y (game y).
const COPY_MOVE: f64 = 10.0;
/// Float32 round trips through Blender's location (f32) and glTF.
const TOL: f64 = 1e-3;

/// Copies `from` into `to`, leaving out `bad/` (the refusal cases).
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

/// Runs the script in Blender (`blender -b`) or, with `bpy`, in that
/// Python with PyPI's `bpy`; returns its `MISSION_TEST` report and
/// Blender's stdout (the add-on's reports).
fn run_blender(
    blender: &Path,
    bpy: Option<&Path>,
    zip: &Path,
    work: &Path,
    dirs: &[String],
) -> (Value, String) {
    let tmp = work.parent().unwrap();
    common::blender_output(
        common::blender_script(blender, bpy, "mission_test.py", tmp)
            .arg("--")
            .arg(zip)
            .arg(work)
            .args(dirs),
        "MISSION_TEST",
    )
}

#[test]
#[ignore = "needs ../shared and Blender: cargo test -- --include-ignored"]
fn missions_import_export_and_edit_in_blender() {
    let Some((corpus, blender)) = common::corpus_and_blender() else {
        return;
    };
    missions_in(&corpus, &blender, None);
}

/// The same in Blender 5.x (PyPI `bpy`, [`common::bpy_python`]); skips
/// (passing) without it.
#[test]
#[ignore = "needs ../shared and PyPI bpy (../shared/tools/blender-inspect --bpy): cargo test -- --include-ignored"]
fn missions_import_export_and_edit_in_bpy_5() {
    let (Some((corpus, blender)), Some(py)) = (
        common::corpus_and_blender(),
        common::bpy_python(common::NEWEST_BPY),
    ) else {
        println!("SKIP: no ../shared, Blender or PyPI bpy");
        return;
    };
    missions_in(&corpus, &blender, Some(&py));
}

/// The same in each Blender of the matrix (PyPI `bpy` 4.2 LTS, 4.5 LTS and
/// 5.0: [`common::matrix_bpys`]; README "Tested").
#[test]
#[ignore = "needs ../shared, Blender and the matrix's PyPI bpy (../shared/tools/blender-inspect --bpy=VERSION): cargo test -- --include-ignored"]
fn missions_import_export_and_edit_in_each_matrix_bpy() {
    let Some((corpus, blender)) = common::corpus_and_blender() else {
        return;
    };
    common::for_each_matrix_bpy(|version, py| {
        println!("bpy {version}");
        missions_in(&corpus, &blender, Some(py));
    });
}

/// One mission's import as the manifest says: every placed object per
/// kind, every index, the groups, shared meshes, clan colours.
fn check_import(want: &Value, got: &Value) {
    let dir = want["dir"].as_str().unwrap();
    assert_eq!(
        got["import_result"],
        serde_json::json!(["FINISHED"]),
        "{dir}"
    );
    let objects = want["objects"].as_array().unwrap();
    assert_eq!(got["placed"], objects.len(), "{dir}: placed objects");
    let indices: Vec<u64> = objects
        .iter()
        .map(|o| o["index"].as_u64().unwrap())
        .collect();
    let mut got_idx: Vec<u64> = got["indices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    got_idx.sort_unstable();
    assert_eq!(got_idx, indices, "{dir}: object indices");
    for kind in 0..4 {
        let n = objects.iter().filter(|o| o["kind"] == kind).count();
        assert_eq!(
            got["kinds"][kind.to_string()].as_u64().unwrap_or(0),
            n as u64,
            "{dir}: objects of kind {kind}"
        );
    }
    for g in [
        "Buildings",
        "Clans",
        "Lodes",
        "Rocks",
        "Routes",
        "Terrain",
        "Units",
        "Vegetation",
    ] {
        assert!(
            got["groups"].as_array().unwrap().iter().any(|x| x == g),
            "{dir}: no collection {g}: {}",
            got["groups"]
        );
    }
    let (meshes, mesh_objects) = (
        got["meshes"].as_u64().unwrap(),
        got["mesh_objects"].as_u64().unwrap(),
    );
    assert!(
        meshes < mesh_objects,
        "{dir}: {meshes} mesh datablocks for {mesh_objects} placed mesh objects: not shared"
    );
    assert_eq!(
        got["wrong_colour"],
        serde_json::json!([]),
        "{dir}: clan colours"
    );
    let clans: std::collections::BTreeSet<i64> = objects
        .iter()
        .map(|o| o["clan"].as_i64().unwrap().max(-1))
        .collect();
    assert_eq!(got["colours"], clans.len(), "{dir}: one colour per clan");
}

/// Imports, exports and edits every corpus mission in `blender` (or
/// `bpy`) and checks what was written.
fn missions_in(corpus: &Path, blender: &Path, bpy: Option<&Path>) {
    let m = common::manifest(corpus);
    let missions = m["missions"].as_array().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let game = tmp.path().join("game");
    copy_dir(corpus, &game);
    let zip = tmp.path().join("addon.zip");
    common::package_addon(&zip);
    let work = tmp.path().join("work");
    let dirs: Vec<String> = missions
        .iter()
        .map(|w| game.join(w["dir"].as_str().unwrap()).display().to_string())
        .collect();
    let t = std::time::Instant::now();
    let (r, stdout) = run_blender(blender, bpy, &zip, &work, &dirs);
    assert_eq!(r["errors"], serde_json::json!([]), "{r}");
    for (i, want) in missions.iter().enumerate() {
        let got = &r["missions"][i];
        check_import(want, got);
        let rel = want["files"]["data.tma"]["path"].as_str().unwrap();
        assert_eq!(
            got["unedited_result"],
            serde_json::json!(["FINISHED"]),
            "{got}"
        );
        let base = std::fs::read(corpus.join(rel)).unwrap();
        let unedited = std::fs::read(work.join(i.to_string()).join("unedited.tma")).unwrap();
        assert!(
            unedited == base,
            "{rel}: the unedited export differs from the base"
        );
        // Nothing reported for an unedited scene (no false warning).
        let path = work.join(i.to_string()).join("unedited.tma");
        let info = stdout
            .lines()
            .find(|l| l.contains("Wrote ") && l.contains(&path.display().to_string()))
            .unwrap_or_else(|| panic!("no summary for {}:\n{stdout}", path.display()));
        let said: Vec<&str> = stdout
            .lines()
            .skip_while(|l| !l.contains(&path.display().to_string()))
            .filter(|l| l.starts_with("Warning: "))
            .take(12)
            .collect();
        assert!(
            info.contains("unchanged; 0 warning(s)"),
            "{info}\n{said:#?}"
        );
        println!(
            "{rel}: {} placed objects, {} mesh objects sharing {} meshes; unedited byte-identical",
            got["placed"], got["mesh_objects"], got["meshes"]
        );
    }
    let model = r["model_export_result"].to_string();
    assert!(
        model.contains("ERROR") && model.contains("Parkan mission"),
        "Export > Parkan model on a mission: {model}"
    );
    assert!(!work.join("model.msh").exists());
    check_edit(corpus, missions, &r, &work);
    check_renamed_copy(corpus, missions, &r, &work);
    check_unwritable(&r, &stdout, &work);
    let png = work.join("mission.png");
    assert!(png.is_file(), "no render");
    println!(
        "{} ({}): {:.1} s; render {}",
        r["blender"],
        if bpy.is_some() { "bpy" } else { "blender -b" },
        t.elapsed().as_secs_f64(),
        png.display()
    );
    if let Ok(keep) = std::env::var("MISSION_PNG") {
        std::fs::copy(&png, keep).unwrap();
    }
}

/// The edited first mission holds the rock's move, not the tree, and the
/// unit's copy (fresh logical id, moved along game y); every other object
/// keeps every field.
fn check_edit(corpus: &Path, missions: &[Value], r: &Value, work: &Path) {
    let e = &r["edit"];
    assert_eq!(r["edited_result"], serde_json::json!(["FINISHED"]), "{r}");
    assert_eq!(e["copy_names"].as_array().map(Vec::len), Some(1), "{e}");
    let rel = missions[0]["files"]["data.tma"]["path"].as_str().unwrap();
    let (base, _) = tma::read(&std::fs::read(corpus.join(rel)).unwrap(), Mode::Strict).unwrap();
    let bytes = std::fs::read(work.join("0").join("edited.tma")).unwrap();
    let (got, warnings) = tma::read(&bytes, Mode::Strict).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let idx = |k: &str| e[k].as_u64().unwrap() as usize;
    let (rock, tree, unit) = (idx("moved"), idx("deleted"), idx("copied"));
    assert_eq!(
        got.objects.len(),
        base.objects.len(),
        "one deleted, one added"
    );
    let kept: Vec<(usize, &PlacedObject)> = base
        .objects
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != tree)
        .collect();
    for ((i, was), now) in kept.iter().zip(&got.objects) {
        if *i == rock {
            for (a, d) in ROCK_MOVE.iter().enumerate() {
                let moved = f64::from(now.position[a]) - f64::from(was.position[a]);
                assert!(
                    (moved - d).abs() < TOL,
                    "rock {i} axis {a} moved {moved}, want {d}"
                );
            }
            let mut w = (*was).clone();
            w.position[..2].copy_from_slice(&now.position[..2]);
            assert_eq!(now, &w, "moved rock {i}: only x and y change");
        } else {
            assert_eq!(now, *was, "object {i} unchanged");
        }
    }
    let fresh = check_copy(&base, &got, unit);
    println!(
        "{rel}: rock {rock} moved, tree {tree} deleted, unit {unit} copied with logical id {fresh}"
    );
}

/// The last object of `got` is a copy of `base` object `unit` with a
/// fresh logical id (`LogicalID` too), moved [`COPY_MOVE`] along game y,
/// the rest of its transform and its property list the original's.
/// Returns the fresh id.
fn check_copy(base: &Mission, got: &Mission, unit: usize) -> i32 {
    let added = got.objects.last().unwrap();
    let orig = &base.objects[unit];
    let fresh = base.objects.iter().map(|o| o.logical_id).max().unwrap() + 1;
    assert_eq!(
        (&added.path, added.kind, added.clan, added.logical_id),
        (&orig.path, orig.kind, orig.clan, fresh),
        "the copy of unit {unit}"
    );
    let dy = f64::from(added.position[1]) - f64::from(orig.position[1]);
    assert!((dy - COPY_MOVE).abs() < TOL, "copy moved {dy} along y");
    assert_eq!(added.position[0], orig.position[0], "copy x");
    assert_eq!(added.position[2], orig.position[2], "copy z");
    assert_eq!(added.rotation, orig.rotation, "copy rotation");
    let lid = added
        .properties
        .iter()
        .find(|p| p.name == b"LogicalID")
        .unwrap();
    assert_eq!(
        (lid.value, lid.minimum, lid.maximum),
        (fresh as u32, fresh as u32, fresh as u32)
    );
    assert_eq!(added.properties.len(), orig.properties.len());
    fresh
}

/// The scaled building, the added mesh, the piece moved inside a unit and
/// the tree's edited mesh of the first mission are not written and each
/// is a warning in the operator's report naming the object; the moved
/// route is written (issue 36 item 6: its points +3 along game x, the file
/// otherwise the earlier edit's); the summary is not "unchanged" and
/// counts them.
fn check_unwritable(r: &Value, stdout: &str, work: &Path) {
    let u = &r["unwritable"];
    assert_eq!(u["result"], serde_json::json!(["FINISHED"]), "{u}");
    let read = |f: &str| {
        let b = std::fs::read(work.join("0").join(f)).unwrap();
        tma::read(&b, Mode::Strict).unwrap().0
    };
    let (mut warned, edited) = (read("warned.tma"), read("edited.tma"));
    let k = u["route_index"].as_u64().unwrap() as usize;
    for (p, q) in warned.routes[k].points.iter().zip(&edited.routes[k].points) {
        assert!(
            (p[0] - q[0] - 3.0).abs() < 1e-3 && p[1] == q[1] && p[2] == q[2],
            "route {k}: {p:?} for {q:?}"
        );
    }
    warned.routes[k] = edited.routes[k].clone();
    assert!(
        warned == edited,
        "a building's scale, a piece or a mesh edit reached data.tma"
    );
    let warning = |name: &str, what: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with("Warning: ") && l.contains(name) && l.contains(what))
            .unwrap_or_else(|| panic!("no warning naming {name} ({what}):\n{stdout}"))
            .to_owned()
    };
    let scaled = warning(u["scaled"].as_str().unwrap(), "ignores the scale");
    let added = warning(u["added"].as_str().unwrap(), "not a placed object");
    let piece = warning(u["piece"].as_str().unwrap(), "inside placed object");
    let mesh = warning(u["mesh"].as_str().unwrap(), "its shape was edited");
    let info = stdout
        .lines()
        .rfind(|l| l.contains("Wrote ") && l.contains("warned.tma"))
        .unwrap_or_else(|| panic!("no summary for warned.tma:\n{stdout}"));
    let all: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("Warning: "))
        .collect();
    // Five warnings of what is not written, and two of heights (issue 37
    // item 2): the moved rock and the copied unit left off the ground.
    assert!(
        !info.contains("unchanged") && info.contains("7 warning(s)"),
        "{info}\n{all:#?}"
    );
    for who in ["R0 st_s_rock_75: ", "U13 w_m_trk2.002: "] {
        assert!(
            all.iter()
                .any(|l| l.contains(who) && l.contains(" the ground at (")),
            "no height warning for {who}: {all:#?}"
        );
    }
    // The objects' counts (moved, edited, … against the base) are the
    // earlier edit's: the scale does not count as written.
    let counts = |file: &str| {
        let l = stdout
            .lines()
            .rfind(|l| l.contains("Wrote ") && l.contains(file))
            .unwrap_or_else(|| panic!("no summary for {file}:\n{stdout}"));
        let from = l.find("data.tma: ").expect(l);
        let to = l.find(" (objects)").expect(l);
        l[from..to].to_owned()
    };
    let first = |f: &str| work.join("0").join(f).display().to_string();
    assert_eq!(counts(&first("warned.tma")), counts(&first("edited.tma")));
    // The earlier edit (a move, a delete, a Shift+D copy of a unit with
    // its pieces) warned of the copy and of the heights of the two objects
    // it placed anew (the moved rock and the copy, issue 37 item 2) only:
    // no piece or mesh of the copy is taken for an edit.
    let edited = stdout
        .lines()
        .rfind(|l| l.contains("Wrote ") && l.contains(&first("edited.tma")))
        .unwrap();
    assert!(edited.ends_with("; 3 warning(s))"), "{edited}");
    println!("unwritable edits reported:\n  {scaled}\n  {added}\n  {piece}\n  {mesh}\n  {info}");
}

/// The second mission's names collided with the first's on import
/// (`U13 w_m_trk2.001`); its Shift+D copy (`.002`, no longer) is still the
/// copy: the original keeps every field and its logical id.
fn check_renamed_copy(corpus: &Path, missions: &[Value], r: &Value, work: &Path) {
    let e = &r["edit_renamed"];
    assert!(e["skipped"].is_null(), "{e}");
    assert_eq!(e["result"], serde_json::json!(["FINISHED"]), "{e}");
    let names = e["copy_names"].as_array().unwrap();
    assert_eq!(names.len(), 1, "{e}");
    let (orig, copy) = (
        e["original_name"].as_str().unwrap(),
        names[0].as_str().unwrap(),
    );
    assert!(
        copy.len() <= orig.len(),
        "not the case under test: {orig} / {copy}"
    );
    let rel = missions[1]["files"]["data.tma"]["path"].as_str().unwrap();
    let (base, _) = tma::read(&std::fs::read(corpus.join(rel)).unwrap(), Mode::Strict).unwrap();
    let bytes = std::fs::read(work.join("1").join("edited.tma")).unwrap();
    let (got, warnings) = tma::read(&bytes, Mode::Strict).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(got.objects.len(), base.objects.len() + 1);
    for (i, (now, was)) in got.objects.iter().zip(&base.objects).enumerate() {
        assert_eq!(now, was, "object {i} unchanged");
    }
    let unit = e["copied"].as_u64().unwrap() as usize;
    let fresh = check_copy(&base, &got, unit);
    println!("{rel}: {orig} copied as {copy}: the copy got logical id {fresh}");
}
