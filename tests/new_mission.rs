//! Issue 38 item 2: `gltf2msh --new-mission` (mission-notes §8.7 "Without
//! a base", §1.1, §5.5). In a generated game folder (an empty
//! `objects.rlb` marker, the tiny map of `tests/land` as `MAPS/tiny`, a
//! template mission of three clans written by the project's own writer):
//! the new `MISSIONS/Single.<n>` (the next free number) holds the template's
//! files as they were, `descr` = the name, and a `data.tma` that reads
//! strictly with the template's versions, the map path, exactly the player
//! and the enemy clan (their scripts, trees, minds), their relations
//! reduced to the two, their bases at the map's quarter points, and no
//! objects, routes or lodes; an existing folder is refused without
//! `--force`; a scene of the new mission without a hero is refused with
//! `mission.hero` naming the clan, and nothing is written; the hero rule
//! on the IR (path folder or `.dat` Type word). With `../shared` (ignored):
//! the same from the corpus template `MISSIONS/Single.01` on `MAPS/m01`.

mod common;
#[path = "land/mod.rs"]
mod land;

use std::path::{Path, PathBuf};

use mshgltf::mission::ir::{Clan, Mission, PlacedObject};
use mshgltf::mission::{tma, validate, Mode};

const TEMPLATE_FILES: [(&str, &[u8]); 5] = [
    ("mission.cfg", b"object minimap\r\nend\r\n"),
    ("Mistips.mis", b"<<title>>Tips\r\n"),
    ("messages.cfg", b"object m1\r\nend\r\n"),
    ("sky.wea", b"sky\r\n"),
    ("sky.ske", b"\x01\x02\x03"),
];

fn clan(name: &str, kind: u32, script: &str, minds: u32, rel: &[(&str, u32)]) -> Clan {
    Clan {
        name: name.as_bytes().to_vec(),
        raw_id: -1,
        base: [1.0, 2.0],
        kind,
        ai_script: script.as_bytes().to_vec(),
        zones: Vec::new(),
        tree: b"MISSIONS\\SCRIPTS\\scream.trf".to_vec(),
        minds,
        relations: rel
            .iter()
            .map(|(n, w)| (n.as_bytes().to_vec(), *w))
            .collect(),
    }
}

fn template() -> Mission {
    let rel = |a: u32, b: u32, c: u32| vec![("Natur", a), ("Player", b), ("Clan I", c)];
    let r = [rel(1, 1, 1), rel(1, 1, 0), rel(1, 0, 1)];
    let rs = |i: usize| -> Vec<(&str, u32)> { r[i].clone() };
    Mission {
        format: 1,
        routes: Vec::new(),
        clan_version: 6,
        clans: vec![
            clan("Natur", 0, "MISSIONS\\SCRIPTS\\scr_nat", 2, &rs(0)),
            clan("Player", 1, "MISSIONS\\SCRIPTS\\scr_pl", 8, &rs(1)),
            clan("Clan I", 2, "MISSIONS\\SCRIPTS\\scr_en", 7, &rs(2)),
        ],
        object_version: 10,
        objects: Vec::new(),
        map_path: b"DATA\\MAPS\\old\\land".to_vec(),
        map_word: 1,
        description: b"Old\xCD\xCD\xCD".to_vec(),
        lode_word: 1,
        lodes: Vec::new(),
        trailing: Vec::new(),
    }
}

/// A game folder: `objects.rlb`, `MAPS/tiny` (the 2×2 tiny map, 20 × 20
/// units), `MISSIONS/Single.01` (the template and its files).
fn game() -> tempfile::TempDir {
    let g = tempfile::tempdir().unwrap();
    std::fs::write(g.path().join("objects.rlb"), b"").unwrap();
    let map = g.path().join("MAPS/tiny");
    std::fs::create_dir_all(&map).unwrap();
    land::write_map(&map, &land::tiny_land(2));
    let t = g.path().join("MISSIONS/Single.01");
    std::fs::create_dir_all(&t).unwrap();
    std::fs::write(t.join("data.tma"), tma::write(&template())).unwrap();
    std::fs::write(t.join("descr"), b"Old\r\n").unwrap();
    for (n, b) in TEMPLATE_FILES {
        std::fs::write(t.join(n), b).unwrap();
    }
    g
}

fn new_mission(g: &Path, extra: &[&str]) -> std::process::Output {
    common::gltf2msh()
        .current_dir(g)
        .args([
            "--new-mission",
            "MISSIONS",
            "--template",
            "MISSIONS/Single.01",
        ])
        .args(["--map", "MAPS/tiny", "--name", "Iron Dawn"])
        .args(extra)
        .output()
        .unwrap()
}

/// The map's extent, as the tool computes it (its Res3 bounds).
fn extent(g: &Path) -> mshgltf::mission::new::Extent {
    let src = mshgltf::terrain::source::TerrainSource::load(
        &g.join("MAPS/tiny/Land.msh"),
        mshgltf::terrain::Mode::Tolerant,
        None,
    )
    .unwrap();
    mshgltf::mission::new::Extent::of_land(&src.land).unwrap()
}

fn read_strict(p: &Path) -> Mission {
    let (m, warnings) = tma::read(&std::fs::read(p).unwrap(), Mode::Strict).unwrap();
    assert!(validate::check(&m).is_empty(), "{:?}", validate::check(&m));
    assert!(warnings.is_empty(), "{warnings:?}");
    m
}

#[test]
fn a_new_mission_is_the_template_reduced_on_the_new_map() {
    let g = game();
    let o = new_mission(g.path(), &[]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let dir = g.path().join("MISSIONS/Single.02");
    for (n, b) in TEMPLATE_FILES {
        assert_eq!(
            std::fs::read(dir.join(n)).unwrap(),
            b,
            "{n} copied as it is"
        );
    }
    assert_eq!(std::fs::read(dir.join("descr")).unwrap(), b"Iron Dawn\r\n");
    let m = read_strict(&dir.join("data.tma"));
    let e = extent(g.path());
    assert_eq!((e.min, e.max), ([0.0, 0.0], [20.0, 20.0]));
    let t = template();
    let mut player = t.clans[1].clone();
    player.base = [5.0, 5.0];
    player.relations = vec![(b"Player".to_vec(), 1), (b"Clan I".to_vec(), 0)];
    let mut enemy = t.clans[2].clone();
    enemy.base = [15.0, 15.0];
    enemy.relations = vec![(b"Player".to_vec(), 0), (b"Clan I".to_vec(), 1)];
    let want = Mission {
        clans: vec![player, enemy],
        map_path: b"DATA\\MAPS\\tiny\\land".to_vec(),
        description: b"Iron Dawn".to_vec(),
        ..t
    };
    assert_eq!(m, want);
    assert!(validate::resolve(&m, g.path()).is_empty());
    // The next one takes Single.03; the same folder again is refused.
    let o = new_mission(g.path(), &[]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(g.path().join("MISSIONS/Single.03/data.tma").is_file());
    let exact = ["--new-mission", "MISSIONS/Single.02"];
    let o = common::gltf2msh()
        .current_dir(g.path())
        .args(exact)
        .args([
            "--template",
            "MISSIONS/Single.01",
            "--map",
            "MAPS/tiny",
            "--name",
            "X",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", common::stderr(&o));
    assert!(
        common::stderr(&o).contains("--force"),
        "{}",
        common::stderr(&o)
    );
    assert_eq!(std::fs::read(dir.join("descr")).unwrap(), b"Iron Dawn\r\n");
}

#[test]
fn a_template_without_an_enemy_or_a_name_the_game_cannot_hold_is_refused() {
    let g = game();
    let mut t = template();
    t.clans.truncate(2);
    let tdir = g.path().join("MISSIONS/Single.01");
    std::fs::write(tdir.join("data.tma"), tma::write(&t)).unwrap();
    let o = new_mission(g.path(), &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = common::stderr(&o);
    assert!(
        err.contains("mission.template") && err.contains("enemy clan (type 2)"),
        "{err}"
    );
    assert!(!g.path().join("MISSIONS/Single.02").exists());
    std::fs::write(tdir.join("data.tma"), tma::write(&template())).unwrap();
    let o = common::gltf2msh()
        .current_dir(g.path())
        .args([
            "--new-mission",
            "MISSIONS",
            "--template",
            "MISSIONS/Single.01",
        ])
        .args(["--map", "MAPS/tiny", "--name", "日本"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(common::stderr(&o).contains("mission.name"));
}

/// The scene msh2gltf makes of `tma`.
fn scene_of(tma: &Path, out: &Path) -> PathBuf {
    let o = common::msh2gltf()
        .arg(tma)
        .arg(out)
        .arg("-q")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    out.to_path_buf()
}

#[test]
fn a_scene_of_a_new_mission_without_a_hero_is_refused() {
    let g = game();
    assert!(new_mission(g.path(), &[]).status.success());
    let dir = g.path().join("MISSIONS/Single.02");
    let before = std::fs::read(dir.join("data.tma")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let glb = scene_of(&dir.join("data.tma"), &work.path().join("level.glb"));
    let o = common::gltf2msh()
        .current_dir(g.path())
        .arg(&glb)
        .args([
            "--new-mission",
            "MISSIONS/Single.02",
            "--template",
            "MISSIONS/Single.01",
        ])
        .arg("--force")
        .output()
        .unwrap();
    let err = common::stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("mission.hero") && err.contains("\"Player\"") && err.contains("asset library"),
        "{err}"
    );
    assert_eq!(std::fs::read(dir.join("data.tma")).unwrap(), before);
}

fn unit(path: &str, clan: i32) -> PlacedObject {
    PlacedObject {
        kind: 1,
        marker: 0x8000_0002,
        path: path.as_bytes().to_vec(),
        clan,
        logical_id: 1,
        scale: [1.0; 3],
        host: -1,
        vertex: -1,
        property_word: 1,
        ..Default::default()
    }
}

#[test]
fn the_hero_is_a_unit_of_the_hero_folder_or_of_the_hero_type() {
    let g = tempfile::tempdir().unwrap();
    let units = g.path().join("UNITS/BATTLE");
    std::fs::create_dir_all(&units).unwrap();
    let dat = |class: u32| {
        let mut b = 0xF0F1u32.to_le_bytes().to_vec();
        b.extend_from_slice(&class.to_le_bytes());
        b
    };
    std::fs::write(units.join("hero_x.dat"), dat(validate::HERO_TYPE)).unwrap();
    std::fs::write(units.join("tank.dat"), dat(0x0100_8000)).unwrap();
    let mut m = template();
    let verdict = |m: &Mission| {
        validate::hero(m, g.path())
            .iter()
            .map(|e| e.rule)
            .collect::<Vec<_>>()
    };
    assert_eq!(verdict(&m), ["mission.hero"]);
    m.objects = vec![unit("UNITS\\BATTLE\\tank.dat", 1)];
    assert_eq!(verdict(&m), ["mission.hero"]);
    m.objects = vec![unit("UNITS\\BATTLE\\hero_x.dat", 2)];
    assert_eq!(verdict(&m), ["mission.hero"], "the enemy's hero");
    m.objects = vec![unit("UNITS\\BATTLE\\hero_x.dat", 1)];
    assert!(verdict(&m).is_empty());
    m.objects = vec![unit("units/units/hero/tut1_p.dat", 1)];
    assert!(verdict(&m).is_empty());
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn a_new_mission_from_the_corpus_template() {
    let Some(corpus) = common::corpus() else {
        println!("SKIP: no ../shared/corpus");
        return;
    };
    let g = tempfile::tempdir().unwrap();
    let o = std::process::Command::new("cp")
        .arg("-a")
        .arg(corpus.join("."))
        .arg(g.path())
        .output()
        .unwrap();
    assert!(o.status.success());
    let o = common::gltf2msh()
        .current_dir(g.path())
        .args([
            "--new-mission",
            "MISSIONS",
            "--template",
            "MISSIONS/Single.01",
        ])
        .args(["--map", "MAPS/m02", "--name", "Iron Dawn"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    let dir = g.path().join("MISSIONS/Single.02");
    let m = read_strict(&dir.join("data.tma"));
    let man = common::manifest(&corpus);
    let single = &man["missions"][0];
    let m02 = man["missions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["map"] == "m02")
        .unwrap();
    let ext = &m02["map_extent"];
    let at = |t: f64| {
        [0, 1].map(|a| {
            let lo = ext["min"][a].as_f64().unwrap();
            let hi = ext["max"][a].as_f64().unwrap();
            (lo + t * (hi - lo)) as f32
        })
    };
    assert_eq!(m.map_path, b"DATA\\MAPS\\m02\\land");
    assert_eq!(m.map_word, single["map_word"].as_u64().unwrap() as u32);
    assert_eq!(m.description, b"Iron Dawn");
    let names: Vec<&[u8]> = m.clans.iter().map(|c| c.name.as_slice()).collect();
    assert_eq!(names, [&b"Player"[..], b"Clan I"]);
    assert_eq!(m.clans[0].base, at(0.25));
    assert_eq!(m.clans[1].base, at(0.75));
    assert_eq!(m.clans[0].ai_script, b"MISSIONS\\SCRIPTS\\scr_pl_2");
    assert_eq!(m.clans[1].minds, 8);
    assert!(m.objects.is_empty() && m.routes.is_empty() && m.lodes.is_empty());
    assert!(validate::resolve(&m, g.path()).is_empty());
    for f in ["mission.cfg", "Mistips.mis", "messages.cfg"] {
        assert_eq!(
            std::fs::read(dir.join(f)).unwrap(),
            std::fs::read(g.path().join("MISSIONS/Single.01").join(f)).unwrap(),
            "{f}"
        );
    }
    assert_eq!(std::fs::read(dir.join("descr")).unwrap(), b"Iron Dawn\r\n");
}

/// A GLB's JSON and BIN chunks.
fn glb_parts(b: &[u8]) -> (serde_json::Value, Vec<u8>) {
    let n = u32::from_le_bytes(b[12..16].try_into().unwrap()) as usize;
    let json = serde_json::from_slice(&b[20..20 + n]).unwrap();
    let bin = b.get(20 + n + 8..).map(<[u8]>::to_vec).unwrap_or_default();
    (json, bin)
}

/// A route drawn in the scene of the new mission (a node with
/// `extras.parkan_route` and no index, a `LINE_LOOP` of 4 points) and its
/// enemy base moved: the later edit of the written mission (`--base`)
/// adds the route with id 0 and the points in game axes, and moves the base.
#[test]
fn a_route_drawn_in_the_new_mission_is_added_by_a_later_edit() {
    let g = game();
    assert!(new_mission(g.path(), &[]).status.success());
    let tma = g.path().join("MISSIONS/Single.02/data.tma");
    let work = tempfile::tempdir().unwrap();
    let glb = scene_of(&tma, &work.path().join("level.glb"));
    let (mut json, mut bin) = glb_parts(&std::fs::read(&glb).unwrap());
    // glTF (x, y, z) = game (x, z, −y).
    let pts: [[f32; 3]; 4] = [
        [4.0, 1.0, -4.0],
        [8.0, 1.0, -4.0],
        [8.0, 1.5, -8.0],
        [4.0, 1.5, -8.0],
    ];
    while bin.len() % 4 != 0 {
        bin.push(0);
    }
    let offset = bin.len();
    for p in pts.iter().flatten() {
        bin.extend_from_slice(&p.to_le_bytes());
    }
    json["buffers"][0]["byteLength"] = bin.len().into();
    let push = |json: &mut serde_json::Value, key: &str, v: serde_json::Value| {
        let a = json[key].as_array_mut().unwrap();
        a.push(v);
        a.len() - 1
    };
    let view = push(
        &mut json,
        "bufferViews",
        serde_json::json!({"buffer": 0, "byteOffset": offset, "byteLength": 48}),
    );
    let acc = push(
        &mut json,
        "accessors",
        serde_json::json!({"bufferView": view, "componentType": 5126, "count": 4, "type": "VEC3", "min": [4.0, 1.0, -8.0], "max": [8.0, 1.5, -4.0]}),
    );
    let mesh = push(
        &mut json,
        "meshes",
        serde_json::json!({"name": "drawn", "primitives": [{"attributes": {"POSITION": acc}, "mode": 2}]}),
    );
    let node = push(
        &mut json,
        "nodes",
        serde_json::json!({"name": "New route", "mesh": mesh, "extras": {"parkan_route": {}}}),
    );
    json["scenes"][0]["nodes"]
        .as_array_mut()
        .unwrap()
        .push(node.into());
    let nodes = json["nodes"].as_array_mut().unwrap();
    let enemy = nodes
        .iter_mut()
        .find(|n| n["extras"]["parkan_clan"]["name"] == "Clan I")
        .unwrap();
    let t = enemy["translation"].clone();
    enemy["translation"] = serde_json::json!([
        t[0].as_f64().unwrap() + 1.0,
        t[1],
        t[2].as_f64().unwrap() - 2.0
    ]);
    std::fs::write(&glb, common::glb(&json, &bin)).unwrap();
    let out = work.path().join("edited.tma");
    let o = common::gltf2msh()
        .arg(&glb)
        .arg("--base")
        .arg(&tma)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let err = common::stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("a new route, added as route 0 with id 0"),
        "{err}"
    );
    let m = read_strict(&out);
    assert_eq!(m.routes.len(), 1);
    assert_eq!(m.routes[0].id, 0);
    let want: Vec<[f32; 3]> = pts.iter().map(|p| [p[0], -p[2], p[1]]).collect();
    assert_eq!(m.routes[0].points, want);
    assert_eq!(m.clans[1].base, [16.0, 17.0]);
}

/// The plane of `land::tiny_land(4)` over x, y ≥ 10 (`tests/land`).
fn plane(x: f32, y: f32) -> f32 {
    0.1 * x + 0.05 * y + 1.0
}

/// [`game`] with models: `MAPS/slope` (the 4 × 4 map of `tests/land`,
/// 40 × 40 units, the ground [`plane`] over x, y ≥ 10), `parts.rlb`
/// (`samples/demo/demo.rlb`'s TOWER as `hero.msh`, `tree.msh`,
/// `bunker.msh`; `bunker.bas`, a ground plan whose outer ring is the
/// square x −1..7, y −4..4), `objects.rlb` (records `hero`, `tree`,
/// `bunker`, the last with its `.bas`), the hero's unit file
/// `UNITS/UNITS/HERO/hero.dat` and the building's `UNITS/BUILDS/bunker.dat`.
fn modelled_game() -> tempfile::TempDir {
    use common::unit_file::{dat, name32};
    use mshgltf::{nres, source};
    let g = game();
    let map = g.path().join("MAPS/slope");
    std::fs::create_dir_all(&map).unwrap();
    land::write_map(&map, &land::tiny_land(4));
    let demo = std::fs::read(common::sample("demo/demo.rlb")).unwrap();
    let a = nres::read(&demo, nres::Mode::Strict).unwrap();
    let tower = a.entries[source::find_entry(&a, "TOWER.msh").unwrap()].clone();
    let ring = [
        [7.0, -4.0, 0.0],
        [7.0, 4.0, 0.0],
        [-1.0, 4.0, 0.0],
        [-1.0, -4.0, 0.0],
    ];
    let bas = mshgltf::unit::bas::write(&ring, &ring);
    let mut entries = vec![tower.clone(); 4];
    for (e, n) in entries
        .iter_mut()
        .zip(["hero.msh", "tree.msh", "bunker.msh"])
    {
        e.name = n.as_bytes();
    }
    entries[3].name = b"bunker.bas";
    entries[3].data = &bas;
    std::fs::write(g.path().join("parts.rlb"), nres::write(&entries).unwrap()).unwrap();
    let slot = |m: &str| [name32("parts.rlb"), name32(m)].concat();
    let recs = [
        ("hero", slot("hero.msh")),
        ("tree", slot("tree.msh")),
        ("bunker", [slot("bunker.msh"), slot("bunker.bas")].concat()),
    ];
    let rlb: Vec<nres::Entry> = recs
        .iter()
        .map(|(n, d)| nres::Entry {
            type_id: 0,
            attr1: 0,
            attr2: 0,
            attr3: 0,
            name: n.as_bytes(),
            data: d,
        })
        .collect();
    std::fs::write(g.path().join("objects.rlb"), nres::write(&rlb).unwrap()).unwrap();
    for (dir, name, record) in [
        ("UNITS/UNITS/HERO", "hero.dat", "hero"),
        ("UNITS/BUILDS", "bunker.dat", "bunker"),
    ] {
        std::fs::create_dir_all(g.path().join(dir)).unwrap();
        std::fs::write(g.path().join(dir).join(name), dat(&[(record, -1, 0, 0)])).unwrap();
    }
    g
}

/// The scene of the starting mission on `MAPS/slope` with three objects
/// from the asset library (`parkan_asset` root nodes): the player's hero
/// "U hero" at game (25, 25, 20) whose model (a triangle under a child
/// node) reaches 1.0 below its origin, the tree "V tree" at (30, 20, 0)
/// and the player's building "B bunker" at (25, 22, 10), unturned.
fn placed_scene(g: &Path, work: &Path) -> PathBuf {
    let o = common::gltf2msh()
        .current_dir(g)
        .args([
            "--new-mission",
            "MISSIONS",
            "--template",
            "MISSIONS/Single.01",
        ])
        .args(["--map", "MAPS/slope", "--name", "Slope"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    let glb = scene_of(
        &g.join("MISSIONS/Single.02/data.tma"),
        &work.join("level.glb"),
    );
    let (mut json, mut bin) = glb_parts(&std::fs::read(&glb).unwrap());
    while bin.len() % 4 != 0 {
        bin.push(0);
    }
    let offset = bin.len();
    // glTF (x, y, z) = game (x, z, −y): the lowest game z is −1.0.
    let tri: [[f32; 3]; 3] = [[0.0, -1.0, 0.0], [1.0, 0.5, 0.0], [0.0, 2.0, -1.0]];
    for p in tri.iter().flatten() {
        bin.extend_from_slice(&p.to_le_bytes());
    }
    json["buffers"][0]["byteLength"] = bin.len().into();
    let push = |json: &mut serde_json::Value, key: &str, v: serde_json::Value| {
        let a = json[key].as_array_mut().unwrap();
        a.push(v);
        a.len() - 1
    };
    let view = push(
        &mut json,
        "bufferViews",
        serde_json::json!({"buffer": 0, "byteOffset": offset, "byteLength": 36}),
    );
    let acc = push(
        &mut json,
        "accessors",
        serde_json::json!({"bufferView": view, "componentType": 5126, "count": 3, "type": "VEC3", "min": [0.0, -1.0, -1.0], "max": [1.0, 2.0, 0.0]}),
    );
    let mesh = push(
        &mut json,
        "meshes",
        serde_json::json!({"name": "hero", "primitives": [{"attributes": {"POSITION": acc}}]}),
    );
    let body = push(
        &mut json,
        "nodes",
        serde_json::json!({"name": "hero body", "mesh": mesh}),
    );
    let lid = serde_json::json!([{"name": "LogicalID", "type": 1, "words": [0, 0, 0]}]);
    let assets = [
        (
            "U hero",
            1,
            "UNITS\\UNITS\\HERO\\hero.dat",
            Some("Player"),
            [25.0, 20.0, -25.0],
        ),
        ("V tree", 2, "tree", None, [30.0, 0.0, -20.0]),
        (
            "B bunker",
            0,
            "UNITS\\BUILDS\\bunker.dat",
            Some("Player"),
            [25.0, 10.0, -22.0],
        ),
    ];
    for (name, kind, path, owner, at) in assets {
        let props = if kind < 2 {
            lid.clone()
        } else {
            serde_json::json!([])
        };
        let mut extras =
            serde_json::json!({"parkan_asset": {"kind": kind, "path": path, "properties": props}});
        if let Some(o) = owner {
            extras["parkan_owner"] = o.into();
        }
        let mut n = serde_json::json!({"name": name, "translation": at, "extras": extras});
        if kind == 1 {
            n["children"] = serde_json::json!([body]);
        }
        let k = push(&mut json, "nodes", n);
        json["scenes"][0]["nodes"]
            .as_array_mut()
            .unwrap()
            .push(k.into());
    }
    std::fs::write(&glb, common::glb(&json, &bin)).unwrap();
    glb
}

/// Issue 38 item 2 with issue 37 item 2's ground rule: in a new mission
/// every object is new. Without `--drop-to-ground` the heights are written
/// as placed and a warning names each object off the ground (the edit's
/// wording); with it the unit's lowest vertex is on the ground (plane + 1.0),
/// the tree at offset 0 (no other placement of its record), the building
/// on the mean ground of its turned and moved outer ring (the plane at
/// the ring's centre (28, 22)).
#[test]
fn objects_of_a_new_mission_meet_the_ground_rule() {
    let g = modelled_game();
    let work = tempfile::tempdir().unwrap();
    let glb = placed_scene(g.path(), work.path());
    let tma = g.path().join("MISSIONS/Single.02/data.tma");
    let run = |extra: &[&str]| {
        let report = work.path().join("report.json");
        let o = common::gltf2msh()
            .current_dir(g.path())
            .arg(&glb)
            .args(["--new-mission", "MISSIONS/Single.02"])
            .args(["--template", "MISSIONS/Single.01", "--force", "--report"])
            .arg(&report)
            .args(extra)
            .output()
            .unwrap();
        let err = common::stderr(&o);
        assert!(o.status.success(), "{err}");
        let r: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
        (err, r, read_strict(&tma))
    };
    let heights = |m: &Mission| -> Vec<(String, f32)> {
        m.objects
            .iter()
            .map(|o| (o.path_text(), o.position[2]))
            .collect()
    };
    let unit_z = plane(25.0, 25.0) + 1.0;
    let tree_z = plane(30.0, 20.0);
    let bunker_z = plane(28.0, 22.0);
    let (err, r, m) = run(&[]);
    assert_eq!(
        heights(&m),
        [
            ("UNITS\\UNITS\\HERO\\hero.dat".to_string(), 20.0),
            ("tree".to_string(), 0.0),
            ("UNITS\\BUILDS\\bunker.dat".to_string(), 10.0),
        ]
    );
    let lines = [
        format!("gltf2msh: warning: U hero: {:.2} above the ground at (25.00, 25.00) (a unit's lowest vertex on the ground); --drop-to-ground or Blender's Drop to ground sets it down", 20.0 - unit_z),
        format!("gltf2msh: warning: V tree: {tree_z:.2} below the ground at (30.00, 20.00) (scenery keeps its origin's offset above the ground); --drop-to-ground or Blender's Drop to ground sets it down"),
        format!("gltf2msh: warning: B bunker: {:.2} above the ground at (25.00, 22.00) (a building on the mean ground of its .bas outer ring); --drop-to-ground or Blender's Drop to ground sets it down", 10.0 - bunker_z),
    ];
    for l in &lines {
        assert!(err.lines().any(|e| e == l), "{l}\nnot in\n{err}");
    }
    assert!(
        err.contains(
            "3 placed objects (3 written at their own height more than 0.25 off the ground)"
        ),
        "{err}"
    );
    assert!(!err.contains("is not written"), "{err}");
    assert_eq!(r["import"]["set_on_ground"], 0);
    let rows = r["import"]["ground"].as_array().unwrap();
    let got: Vec<(&str, f32)> = rows
        .iter()
        .map(|w| {
            (
                w["node"].as_str().unwrap(),
                w["ground_z"].as_f64().unwrap() as f32,
            )
        })
        .collect();
    for ((n, z), (want_n, want_z)) in got.iter().zip([
        ("U hero", unit_z),
        ("V tree", tree_z),
        ("B bunker", bunker_z),
    ]) {
        assert_eq!(*n, want_n);
        assert!((z - want_z).abs() < 1e-4, "{n}: {z} vs {want_z}");
    }

    let (err, r, m) = run(&["--drop-to-ground"]);
    assert!(!err.contains("the ground at ("), "{err}");
    assert!(
        err.contains("3 placed objects (3 set down on the ground)"),
        "{err}"
    );
    assert!(
        err.contains("gltf2msh: U hero: set down on the ground: z 20.00 -> 5.75 (a unit's lowest vertex on the ground)"),
        "{err}"
    );
    assert_eq!(r["import"]["set_on_ground"], 3);
    for ((path, z), want) in heights(&m).iter().zip([unit_z, tree_z, bunker_z]) {
        assert!((z - want).abs() < 1e-4, "{path}: {z} vs {want}");
    }
    // Unturned and where they were placed across the map.
    assert_eq!(
        m.objects
            .iter()
            .map(|o| [o.position[0], o.position[1]])
            .collect::<Vec<_>>(),
        [[25.0, 25.0], [30.0, 20.0], [25.0, 22.0]]
    );
}

/// `--drop-to-ground` sets the objects of a scene: without a glTF it is
/// refused (exit 2), nothing written.
#[test]
fn drop_to_ground_without_a_scene_is_refused() {
    let g = game();
    let o = new_mission(g.path(), &["--drop-to-ground"]);
    assert_eq!(o.status.code(), Some(2), "{}", common::stderr(&o));
    assert!(!g.path().join("MISSIONS/Single.02").exists());
}
