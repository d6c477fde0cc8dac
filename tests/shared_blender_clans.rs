//! Routes, clans and owners through the Blender add-on (issue 37 item 4):
//! `tests/blender/clans_test.py` imports the corpus mission with the most
//! route points (File › Import › Parkan mission), moves a route point,
//! inserts one and deletes one in the route's mesh, adds a clan with
//! Add › Parkan clan, links a unit into two clan collections (refused on
//! export, naming it), then moves it into the new clan's collection only
//! and 6 along x, exports (File › Export › Parkan mission) into a mission
//! folder of a game copy and imports that. Here: the import made one clan
//! collection per clan holding exactly the buildings and units it owns;
//! the written `data.tma`, read back strictly by `msh2gltf --report` and
//! by the project's reader, holds the route's new point list (the points
//! that did not move with their bits), the new clan (base at the 3D
//! cursor, type, minds, relations both ways) owning the moved unit
//! (`clan` word and `ClanID`); the re-import shows the unit in the new
//! clan's collection and the route with its new point count. The unit's
//! former clan is renamed "Raiders" with Object › Rename Parkan clan (a
//! taken name refused first): written so in every clan's relations, its
//! objects still its own, its collection named so on re-import. In Blender
//! 3.4.1 and the newest bpy (5.3.0).
//!
//! Skips (passing) when `../shared` or Blender is absent.

mod common;

use std::path::{Path, PathBuf};

use mshgltf::mission::{tma, Mission, Mode};
use serde_json::Value;

/// Float32 round trips through Blender's location (f32) and glTF.
const TOL: f32 = 1e-3;

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

fn read(p: &Path) -> Mission {
    tma::read(&std::fs::read(p).unwrap(), Mode::Strict)
        .unwrap()
        .0
}

/// The manifest's mission with the most route points: its folder (under
/// `root`) and the mission.
fn mission(root: &Path) -> (PathBuf, Mission) {
    let mut best: Option<(usize, PathBuf, Mission)> = None;
    for m in common::manifest(root)["missions"].as_array().unwrap() {
        let dir = root.join(m["dir"].as_str().unwrap());
        let t = read(&root.join(m["files"]["data.tma"]["path"].as_str().unwrap()));
        let n = t.routes.iter().map(|r| r.points.len()).max().unwrap_or(0);
        if best.as_ref().is_none_or(|b| n > b.0) {
            best = Some((n, dir, t));
        }
    }
    let (_, d, t) = best.unwrap();
    (d, t)
}

#[test]
#[ignore = "needs ../shared and Blender: cargo test -- --include-ignored"]
fn routes_clans_and_owners_in_blender() {
    let Some((corpus, blender)) = common::corpus_and_blender() else {
        return;
    };
    clans_in(&corpus, &blender, None);
}

#[test]
#[ignore = "needs ../shared and PyPI bpy (../shared/tools/blender-inspect --bpy): cargo test -- --include-ignored"]
fn routes_clans_and_owners_in_bpy_5() {
    let (Some((corpus, blender)), Some(py)) = (
        common::corpus_and_blender(),
        common::bpy_python(common::NEWEST_BPY),
    ) else {
        println!("SKIP: no ../shared, Blender or PyPI bpy");
        return;
    };
    clans_in(&corpus, &blender, Some(&py));
}

fn clans_in(corpus: &Path, blender: &Path, bpy: Option<&Path>) {
    let tmp = tempfile::tempdir().unwrap();
    let game = tmp.path().join("game");
    copy_dir(corpus, &game);
    let (dir, base) = mission(&game);
    let zip = tmp.path().join("addon.zip");
    common::package_addon(&zip);
    // The written mission in a folder of its own beside the original.
    let out_dir = dir.with_file_name(format!(
        "{}_clans",
        dir.file_name().unwrap().to_string_lossy()
    ));
    std::fs::create_dir_all(&out_dir).unwrap();
    let out = out_dir.join("data.tma");
    let (r, stdout) = common::blender_output(
        common::blender_script(blender, bpy, "clans_test.py", tmp.path())
            .arg("--")
            .arg(&zip)
            .arg(&dir)
            .arg(&out),
        "CLANS_TEST",
    );
    assert_eq!(r["errors"], serde_json::json!([]), "{r}\n{stdout}");
    check_import(&base, &r);
    // Refusals: a second clan name, a unit in two clan collections.
    assert_eq!(r["add_clan"], serde_json::json!(["FINISHED"]), "{r}");
    assert_eq!(r["add_clan_again"][0], "ERROR", "{r}");
    let unit_name = r["unit"]["name"].as_str().unwrap();
    let two = r["two_owners"].to_string();
    assert!(
        r["two_owners"][0] == "ERROR"
            && two.contains(unit_name)
            && !r["two_owners_wrote"].as_bool().unwrap(),
        "{r}"
    );
    assert_eq!(
        r["export"],
        serde_json::json!(["FINISHED"]),
        "{r}\n{stdout}"
    );
    assert_eq!(
        r["owner_left"],
        serde_json::json!([]),
        "parkan_owner removed after export"
    );
    // Read back strictly by msh2gltf --report.
    let rep = tmp.path().join("back.json");
    let o = common::msh2gltf()
        .arg(&out)
        .arg(tmp.path().join("back.glb"))
        .args(["--force", "--no-textures", "--report"])
        .arg(&rep)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    let report: Value = serde_json::from_slice(&std::fs::read(&rep).unwrap()).unwrap();
    assert!(report.is_object(), "{report}");
    let new = read(&out);
    check_route(&base, &new, &r);
    let renamed = check_rename(&base, &new, &r);
    let n = check_clan(&renamed, &new);
    check_unit(&renamed, &new, &r, n);
    // Re-imported: the unit in the new clan's collection, the route's points.
    let k = r["unit"]["index"].as_u64().unwrap();
    assert_eq!(r["reimport_result"], serde_json::json!(["FINISHED"]), "{r}");
    assert_eq!(
        r["reimport_members"]["Clan Z"],
        serde_json::json!([k]),
        "{r}"
    );
    assert_eq!(
        r["reimport_route_points"], r["route_edit"]["route_points_after"],
        "{r}"
    );
    // The renamed clan's collection holds what it owns.
    let c = r["unit"]["clan"].as_u64().unwrap() as i32;
    let owned: Vec<u64> = new
        .objects
        .iter()
        .enumerate()
        .filter(|(_, o)| o.is_owned() && o.clan == c)
        .map(|(i, _)| i as u64)
        .collect();
    assert_eq!(
        r["reimport_members"]["Raiders"],
        serde_json::json!(owned),
        "{r}"
    );
}

/// Object › Rename Parkan clan: a taken name refused; the unit's former
/// clan renamed "Raiders" (its extras, its collection and `CLAN_COLL`,
/// its empty), written so with every clan's relation entry that named it
/// (words kept), the objects it owns still its own. Returns the base with
/// the rename applied (what the rest of the edit is compared with).
fn check_rename(base: &Mission, new: &Mission, r: &Value) -> Mission {
    assert_eq!(r["rename_taken"][0], "ERROR", "{r}");
    assert!(
        r["rename_taken"]
            .to_string()
            .contains("choose another name"),
        "{r}"
    );
    assert_eq!(r["rename"], serde_json::json!(["FINISHED"]), "{r}");
    let k = r["unit"]["clan"].as_u64().unwrap() as usize;
    let old = base.clans[k].name.clone();
    let e = &r["renamed"];
    assert_eq!(
        (&e["extras_name"], &e["collection"], &e["collection_clan"]),
        (
            &serde_json::json!("Raiders"),
            &serde_json::json!("Raiders"),
            &serde_json::json!("Raiders")
        ),
        "{r}"
    );
    assert!(e["empty"].as_str().unwrap().contains("Raiders"), "{r}");
    let mut want = base.clone();
    want.clans[k].name = b"Raiders".to_vec();
    for c in &mut want.clans {
        for rel in &mut c.relations {
            if rel.0.eq_ignore_ascii_case(&old) {
                rel.0 = b"Raiders".to_vec();
            }
        }
    }
    assert_eq!(
        &new.clans[..base.clans.len()]
            .iter()
            .map(|c| &c.name)
            .collect::<Vec<_>>(),
        &want.clans.iter().map(|c| &c.name).collect::<Vec<_>>()
    );
    for (j, c) in want.clans.iter().enumerate() {
        assert_eq!(
            &new.clans[j].relations[..c.relations.len()],
            &c.relations[..],
            "clan {j}'s relations"
        );
    }
    let unit = r["unit"]["index"].as_u64().unwrap() as usize;
    for (i, (a, b)) in new.objects.iter().zip(&base.objects).enumerate() {
        if i != unit {
            assert_eq!(a.clan, b.clan, "object {i} keeps its owner");
        }
    }
    want
}

/// One clan collection per clan, holding exactly its buildings and units.
fn check_import(base: &Mission, r: &Value) {
    assert_eq!(r["import_result"], serde_json::json!(["FINISHED"]), "{r}");
    let members = r["members"].as_object().unwrap();
    assert_eq!(members.len(), base.clans.len(), "{r}");
    for (k, c) in base.clans.iter().enumerate() {
        let name = String::from_utf8_lossy(&c.name).into_owned();
        let want: Vec<u64> = base
            .objects
            .iter()
            .enumerate()
            .filter(|(_, o)| o.is_owned() && o.clan == k as i32)
            .map(|(i, _)| i as u64)
            .collect();
        assert_eq!(members[&name], serde_json::json!(want), "clan {name}");
    }
}

/// The route: point 0 moved (+4, +2), a point inserted between 1 and 2
/// (their midpoint +3 along y), the last deleted; written from old point 1
/// in the old order, the points that did not move with their bits.
fn check_route(base: &Mission, new: &Mission, r: &Value) {
    let e = &r["route_edit"];
    assert_eq!(e["route_world_identity"], true, "{r}");
    let k = e["route_index"].as_u64().unwrap() as usize;
    let old = &base.routes[k].points;
    let got = &new.routes[k].points;
    let n = old.len();
    assert_eq!(got.len(), n, "moved 1, added 1, deleted 1: {got:?}");
    let mid = [
        (old[1][0] + old[2][0]) / 2.0,
        (old[1][1] + old[2][1]) / 2.0 + 3.0,
        (old[1][2] + old[2][2]) / 2.0,
    ];
    let moved = [old[0][0] + 4.0, old[0][1] + 2.0, old[0][2]];
    let mut want = vec![old[1], mid];
    want.extend_from_slice(&old[2..n - 1]);
    want.push(moved);
    for (j, (g, w)) in got.iter().zip(&want).enumerate() {
        let exact = j != 1 && j != n - 1;
        for a in 0..3 {
            if exact {
                assert_eq!(
                    g[a].to_bits(),
                    w[a].to_bits(),
                    "point {j}: {got:?} for {want:?}"
                );
            } else {
                assert!(
                    (g[a] - w[a]).abs() <= TOL,
                    "point {j}: {got:?} for {want:?}"
                );
            }
        }
    }
    for (j, (a, b)) in new.routes.iter().zip(&base.routes).enumerate() {
        if j != k {
            assert_eq!(a, b, "route {j} unchanged");
        }
    }
}

/// The new clan "Clan Z": enemy, 7 minds, base at the 3D cursor (300,
/// 400), the first enemy clan's script and tree, relations both ways.
fn check_clan(base: &Mission, new: &Mission) -> usize {
    let n = base.clans.len();
    assert_eq!(new.clans.len(), n + 1);
    let c = &new.clans[n];
    let like = base.clans.iter().find(|c| c.kind == 2).unwrap();
    assert_eq!(
        (&c.name[..], c.kind, c.minds, c.raw_id),
        (&b"Clan Z"[..], 2, 7, -1)
    );
    assert!(
        (c.base[0] - 300.0).abs() <= TOL && (c.base[1] - 400.0).abs() <= TOL,
        "{:?}",
        c.base
    );
    assert_eq!((&c.ai_script, &c.tree), (&like.ai_script, &like.tree));
    let word = |a: u32, b: u32| u32::from(matches!(a, 0 | 3) || matches!(b, 0 | 3));
    for (k, o) in new.clans.iter().enumerate() {
        assert_eq!(o.relations.len(), n + 1, "clan {k}");
        let r = &o.relations[n];
        let want = if k == n { 1 } else { word(o.kind, 2) };
        assert_eq!(
            (&r.0[..], r.1),
            (&b"Clan Z"[..], want),
            "clan {k} towards Clan Z"
        );
        if k < n {
            assert_eq!(
                &o.relations[..n],
                &base.clans[k].relations[..],
                "clan {k} kept"
            );
        }
    }
    n
}

/// The unit: owned by the new clan (word and ClanID), moved +6 along x.
fn check_unit(base: &Mission, new: &Mission, r: &Value, n: usize) {
    let k = r["unit"]["index"].as_u64().unwrap() as usize;
    let (u, b) = (&new.objects[k], &base.objects[k]);
    assert_eq!(u.clan, n as i32);
    assert!(u
        .properties
        .iter()
        .filter(|p| p.name == b"ClanID")
        .all(|p| p.value == n as u32));
    assert!(
        (u.position[0] - b.position[0] - 6.0).abs() <= TOL,
        "{:?} {:?}",
        u.position,
        b.position
    );
    assert_eq!(
        (u.position[1], u.position[2]),
        (b.position[1], b.position[2])
    );
    let mut rest = new.clone();
    rest.objects[k] = b.clone();
    rest.clans = base.clans.clone();
    rest.routes = base.routes.clone();
    assert_eq!(tma::write(&rest), tma::write(base), "nothing else changed");
}
