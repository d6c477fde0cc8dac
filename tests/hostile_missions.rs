//! Hostile missions read by `msh2gltf` (issue 36, items 5 and 11), built
//! in the test: paths leaving the game folder are refused naming the
//! record, a broken `data.tma` names its `mission.*` rule (never "not an
//! NRes container"), and every table is counted against `--max-work`
//! before it is read. The large default-budget cases are
//! `hostile_inputs::every_case_exits_with_its_rule` (tests/hostile/mission.rs).

mod hostile;

use std::path::Path;
use std::process::Output;

use hostile::mission::{game_with, mission, Tables, TMA};

fn run(dir: &Path, files: Vec<(String, Vec<u8>)>, args: &[&str]) -> Output {
    for (p, b) in files {
        let f = dir.join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, b).unwrap();
    }
    std::process::Command::new(env!("CARGO_BIN_EXE_msh2gltf"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A building's `.dat` path or the map path with `..` is refused with
/// `mission.resolve` naming the record, before anything outside the game
/// folder is opened (a file there would be read otherwise).
#[test]
fn mission_paths_leaving_the_game_folder_are_refused() {
    let cases: [(&str, Tables); 3] = [
        (
            "object 0",
            Tables {
                objects: vec![(0, b"..\\outside\\x.dat".to_vec(), 0)],
                ..Default::default()
            },
        ),
        (
            "object 1",
            Tables {
                objects: vec![
                    (3, b"st_s_rock_75".to_vec(), 0),
                    (1, b"UNITS/../../outside/x.dat".to_vec(), 0),
                ],
                ..Default::default()
            },
        ),
        (
            "map path",
            Tables {
                map_path: b"DATA\\MAPS\\..\\..\\outside\\land".to_vec(),
                ..Default::default()
            },
        ),
    ];
    for (record, t) in cases {
        let d = tempfile::tempdir().unwrap();
        // What the paths reach: files that would be read.
        let outside = d.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("x.dat"), b"\xf1\xf0\0\0junk").unwrap();
        std::fs::write(outside.join("land.msh"), b"junk").unwrap();
        let g = d.path().join("G");
        std::fs::create_dir_all(&g).unwrap();
        let o = run(&g, game_with(mission(&t), vec![]), &[TMA, "out.glb"]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{record}: {err}");
        assert!(
            err.contains("mission.resolve")
                && err.contains(record)
                && err.contains("leaves the game folder"),
            "{record}: {err}"
        );
        assert!(!g.join("out.glb").exists());
    }
}

/// A `data.tma` whose format word is not 1, or that is cut short, names
/// its `mission.*` rule: converted (a failed row) and listed (exit 2),
/// never "not an NRes container" / "no models to list (NotNres)".
#[test]
fn a_broken_mission_names_its_rule() {
    let mut two = mission(&Tables::default());
    two[0] = 2;
    let cut = mission(&Tables::default())[..30].to_vec();
    for (bytes, rule) in [(two, "mission.version"), (cut, "mission.count_fits")] {
        let d = tempfile::tempdir().unwrap();
        let o = run(d.path(), game_with(bytes, vec![]), &[TMA, "out.glb"]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains(rule) && !err.contains("NRes"), "{err}");
        let o = run(d.path(), vec![], &["--list", TMA]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(rule) && !err.contains("NotNres"), "{err}");
        assert!(o.stdout.is_empty());
    }
}

/// Each table is counted from its header against `--max-work` before its
/// records are read: at a budget of 10 000 units, missions far below the
/// default's refusals (a 100 x 100 relation table, 1000 properties, 1000
/// listed objects, 1000 route points, a 40 KB description or cfg, 500
/// zones or lodes) fail `limits.work` naming what was counted; the same
/// files pass that point at the default budget.
#[test]
fn mission_tables_are_counted_against_the_budget() {
    let rock = || b"st_s_rock_75".to_vec();
    type Files = Vec<(String, Vec<u8>)>;
    let cases: Vec<(&str, Tables, Files)> = vec![
        (
            "relations",
            Tables {
                clans: (0..100)
                    .map(|i| (vec![b'a' + (i % 26) as u8], 100, 0))
                    .collect(),
                ..Default::default()
            },
            vec![],
        ),
        (
            "properties",
            Tables {
                objects: vec![(3, rock(), 1000)],
                ..Default::default()
            },
            vec![],
        ),
        (
            "route points",
            Tables {
                route_points: 1000,
                ..Default::default()
            },
            vec![],
        ),
        (
            "description",
            Tables {
                description: 40_000,
                ..Default::default()
            },
            vec![],
        ),
        (
            "mission.cfg",
            Tables::default(),
            vec![("MISSIONS/M/mission.cfg".into(), vec![b'#'; 40_000])],
        ),
        (
            "zones",
            Tables {
                clans: vec![(b"Natur".to_vec(), 1, 500)],
                ..Default::default()
            },
            vec![],
        ),
        (
            "lodes",
            Tables {
                lodes: 500,
                ..Default::default()
            },
            vec![],
        ),
    ];
    for (what, t, more) in cases {
        let d = tempfile::tempdir().unwrap();
        let files = game_with(mission(&t), more);
        let o = run(d.path(), files, &[TMA, "out.glb", "--max-work", "10000"]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{what}: {err}");
        assert!(
            err.contains("limits.work") && err.contains(what) && err.contains("10000"),
            "{what}: {err}"
        );
        // At the default budget the tables are read: the run gets as far
        // as the game folder (this one has no map).
        let o = run(d.path(), vec![], &[TMA, "out.glb"]);
        let err = stderr(&o);
        assert!(!err.contains("limits.work"), "{what}: {err}");
    }
    let d = tempfile::tempdir().unwrap();
    let listed = Tables {
        objects: vec![(3, rock(), 0)],
        copies: 1000,
        ..Default::default()
    };
    let o = run(
        d.path(),
        game_with(mission(&listed), vec![]),
        &["--list", TMA, "--max-work", "10000"],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("limits.work") && err.contains("1000 objects"),
        "{err}"
    );
    assert!(o.stdout.is_empty());
    let o = run(d.path(), vec![], &["--list", TMA]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}
