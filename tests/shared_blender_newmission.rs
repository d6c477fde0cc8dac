//! A new mission made and written through the Blender add-on (issue 38
//! item 2; mission-notes §8.7 "Without a base", §1.1, §5.5, §9):
//! `tests/blender/newmission_test.py` on a copy of `../shared/corpus` (with
//! a hero unit file added: `UNITS/UNITS/HERO/hero01.dat`, the corpus's
//! `w_m_trk2.dat` with the hero's Type word 0x01020000) runs File › New ›
//! Parkan mission (template `MISSIONS/Single.01`, map `MAPS/m01`), places
//! an object of every kind (per the asset library's contract:
//! `parkan_asset` + `parkan_owner`), moves the enemy's base, adds a route,
//! exports without a hero (refused, naming `mission.hero` and the clan),
//! places the hero and exports again, then imports the result.
//!
//! Here: the new folder is `MISSIONS/Single.02` (the next free number); it
//! opened with the map, two clans at the map's quarter points and no
//! placed objects; the written `data.tma` reads strictly, every record
//! resolves (§9 error 6), its hero rule holds; its objects stand where they
//! were placed (game x, y = Blender x, y; z = Blender z, within
//! [`TOL`]), with their turn, scale and clan; the route has the four points
//! drawn; the enemy's base moved; `msh2gltf GAME OUT` converts it like the
//! corpus's own missions; and the second import shows every object where
//! it was placed.
//!
//! Needs the asset library's writer (h/assets: `parkan_asset` nodes become
//! placed objects). Until that branch is merged, the export after placing
//! the hero is refused with `mission.hero` (the new objects are not read)
//! and this test fails saying so.
//!
//! Skips (passing) when `../shared/corpus` or Blender is absent.

mod common;

use std::path::Path;

use mshgltf::mission::{tma, validate, Mode};
use serde_json::Value;

/// Float32 round trips through Blender's location (f32) and glTF.
const TOL: f64 = 1e-3;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let (p, q) = (e.path(), to.join(e.file_name()));
        if p.is_dir() {
            if e.file_name() != "bad" {
                copy_dir(&p, &q);
            }
        } else {
            std::fs::copy(&p, &q).unwrap();
        }
    }
}

#[test]
#[ignore = "needs ../shared and Blender: cargo test -- --include-ignored"]
fn a_new_mission_through_the_addon_in_blender() {
    let Some((corpus, blender)) = common::corpus_and_blender() else {
        return;
    };
    new_mission_in(&corpus, &blender, None);
}

#[test]
#[ignore = "needs ../shared and PyPI bpy (../shared/tools/blender-inspect --bpy): cargo test -- --include-ignored"]
fn a_new_mission_through_the_addon_in_bpy_5() {
    let (Some((corpus, blender)), Some(py)) = (
        common::corpus_and_blender(),
        common::bpy_python(common::NEWEST_BPY),
    ) else {
        println!("SKIP: no ../shared, Blender or PyPI bpy");
        return;
    };
    new_mission_in(&corpus, &blender, Some(&py));
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

fn near(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() <= TOL, "{what}: {a} vs {b}");
}

fn new_mission_in(corpus: &Path, blender: &Path, bpy: Option<&Path>) {
    let tmp = tempfile::tempdir().unwrap();
    let game = tmp.path().join("game");
    copy_dir(corpus, &game);
    let hero = game.join("UNITS/UNITS/HERO");
    std::fs::create_dir_all(&hero).unwrap();
    let mut dat = std::fs::read(game.join("UNITS/BATTLE/w_m_trk2.dat")).unwrap();
    dat[4..8].copy_from_slice(&validate::HERO_TYPE.to_le_bytes());
    std::fs::write(hero.join("hero01.dat"), dat).unwrap();
    let zip = tmp.path().join("addon.zip");
    common::package_addon(&zip);
    let (r, stdout) = common::blender_output(
        common::blender_script(blender, bpy, "newmission_test.py", tmp.path())
            .arg("--")
            .arg(&zip)
            .arg(&game),
        "NEWMISSION_TEST",
    );
    // The ordinary edit of the new mission: the route drawn with Add ›
    // Parkan route and the enemy's base move (no hero rule there).
    assert_eq!(r["edit_result"], serde_json::json!(["FINISHED"]), "{r:#}");
    let (e, _) = tma::read(
        &std::fs::read(r["edit"].as_str().unwrap())
            .unwrap_or_else(|e| panic!("{e}: {}\n{stdout}", r["edit"])),
        Mode::Strict,
    )
    .unwrap();
    check_route_and_base(&e, &r);
    assert_eq!(
        r["errors"],
        serde_json::json!([]),
        "{}{r:#}\n{stdout}",
        if r["export_error"]
            .as_str()
            .unwrap_or("")
            .contains("mission.hero")
        {
            "the placed objects (parkan_asset) were not written: this needs h/assets merged (module docs)\n"
        } else {
            ""
        }
    );
    let folder = Path::new(r["folder"].as_str().unwrap());
    assert_eq!(folder, game.join("MISSIONS/Single.02"));
    assert_eq!(r["placed_after_new"], 0, "{r:#}");
    assert_eq!(r["terrain"], true);
    // The bases at the quarter points of m01 (0..960): the clan empties.
    let man = common::manifest(corpus);
    let ext = &man["missions"][0]["map_extent"];
    let at = |t: f64, a: usize| f(&ext["min"][a]) + t * (f(&ext["max"][a]) - f(&ext["min"][a]));
    for (name, t) in [("Player", 0.25), ("Clan I", 0.75)] {
        for a in 0..2 {
            near(f(&r["clans"][name][a]), at(t, a), name);
        }
    }
    let refusal = r["heroless_error"].as_str().unwrap();
    assert!(
        refusal.contains("mission.hero") && refusal.contains("Player"),
        "{refusal}\n{stdout}"
    );
    assert_eq!(r["export_result"], serde_json::json!(["FINISHED"]), "{r:#}");
    let (m, _) = tma::read(
        &std::fs::read(folder.join("data.tma")).unwrap(),
        Mode::Strict,
    )
    .expect("the new mission reads strictly");
    assert!(validate::check(&m).is_empty());
    assert!(
        validate::resolve(&m, &game).is_empty(),
        "{:?}",
        validate::resolve(&m, &game)
    );
    assert!(validate::hero(&m, &game).is_empty());
    let placed = r["objects"].as_array().unwrap();
    assert_eq!(m.objects.len(), placed.len(), "every placed object written");
    for p in placed {
        let path = p["path"].as_str().unwrap();
        let o = m
            .objects
            .iter()
            .find(|o| {
                o.path_text() == path
                    && (0..2).all(|a| (f64::from(o.position[a]) - f(&p["at"][a])).abs() <= TOL)
            })
            .unwrap_or_else(|| panic!("{path} at {:?} not written: {:?}", p["at"], m.objects));
        assert_eq!(u64::from(o.kind), p["kind"].as_u64().unwrap(), "{path}");
        near(f64::from(o.position[2]), f(&p["at"][2]), path);
        near(f64::from(o.rotation[2]), f(&p["turn"]), path);
        if o.kind >= 2 {
            near(f64::from(o.scale[0]), f(&p["scale"]), path);
        }
        if let Some(owner) = p["owner"].as_str() {
            let clan = &m.clans[o.clan as usize];
            assert_eq!(clan.name, owner.as_bytes(), "{path}");
        }
    }
    check_route_and_base(&m, &r);
    // Re-imported: every object where it was placed.
    let again = r["reimported"].as_array().unwrap();
    assert_eq!(again.len(), placed.len());
    for p in placed {
        let hit = again.iter().any(|q| {
            q["path"] == p["path"] && (0..3).all(|a| (f(&q["at"][a]) - f(&p["at"][a])).abs() <= TOL)
        });
        assert!(hit, "{p} not re-imported where it was placed: {again:?}");
    }
    // The batch over the game folder converts it like the corpus's own.
    let out = tmp.path().join("out");
    let o = common::msh2gltf()
        .arg(&game)
        .arg(&out)
        .arg("-q")
        .arg("--report")
        .arg(tmp.path().join("batch.json"))
        .output()
        .unwrap();
    let rep: Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("batch.json")).unwrap()).unwrap();
    let rows = rep["models"].as_array().unwrap();
    let missions: Vec<&Value> = rows.iter().filter(|r| r["kind"] == "mission").collect();
    assert_eq!(missions.len(), 3, "{missions:?}\n{}", common::stderr(&o));
    for row in missions {
        assert_eq!(row["status"], "converted", "{row}");
    }
    assert!(out.join("MISSIONS/Single.02.glb").is_file());
}

/// `m` holds the one route drawn (its four points, in game axes = Blender
/// axes) and the enemy's base where it was moved.
fn check_route_and_base(m: &mshgltf::mission::Mission, r: &Value) {
    assert_eq!(m.routes.len(), 1);
    assert_eq!(m.routes[0].id, 0);
    let drawn = r["route_points"].as_array().unwrap();
    assert_eq!(m.routes[0].points.len(), drawn.len());
    for p in drawn {
        let hit = m.routes[0]
            .points
            .iter()
            .any(|q| (0..3).all(|a| (f64::from(q[a]) - f(&p[a])).abs() <= TOL));
        assert!(hit, "route point {p:?} not in {:?}", m.routes[0].points);
    }
    near(
        f64::from(m.clans[1].base[0]),
        f(&r["enemy_base"][0]),
        "enemy base x",
    );
    near(
        f64::from(m.clans[1].base[1]),
        f(&r["enemy_base"][1]),
        "enemy base y",
    );
}
