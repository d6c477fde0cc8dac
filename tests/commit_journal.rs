//! Issue 36 item 2: a commit of several files is one promise, across a
//! kill too (docs/safety.md "One commit, one promise"). Two realistic
//! commits, built from the committed samples:
//!
//! - three files: a recolour + repaint + moved vertex written
//!   `gltf2msh EDIT.glb --base G/demo.rlb:TOWER.msh --in-place --game-dir G`
//!   (Material.lib, Textures.lib and demo.rlb replaced);
//! - two archives: a unit whose chassis and gun live in two part archives,
//!   both edited, `gltf2msh u.glb --base G/UNITS/u.dat --in-place`.
//!
//! Each is stopped by the test-only hook `MSHGLTF_TEST_STOP_AFTER_RENAME=k`
//! right after its rename `k` (and after its commit point, `k` = the number
//! of renames): by SIGTERM (the handler rolls back before exiting) and by
//! SIGKILL (the journal is left; the next run, or `gltf2msh --recover`,
//! completes it). Afterwards every file is wholly old or wholly new, all
//! alike, the recovery said so, and none of the tools' own files is left.
//! Issue 36 item 11: a batch skips those files by name and says so.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::unit_file::{dat, name32};
use mshgltf::nres;

/// Files of `dir` (not recursing) and their bytes, without lock files.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_file())
        .filter(|e| !e.file_name().to_string_lossy().ends_with(".mshgltf-lock"))
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).unwrap())
        })
        .collect();
    v.sort();
    v
}

fn names(s: &[(String, Vec<u8>)]) -> Vec<&str> {
    s.iter().map(|(n, _)| n.as_str()).collect()
}

fn glb_parts(b: &[u8]) -> (serde_json::Value, Vec<u8>) {
    let u = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap()) as usize;
    let jl = u(12);
    let json = serde_json::from_slice(&b[20..20 + jl]).unwrap();
    let bl = u(20 + jl);
    (json, b[28 + jl..28 + jl + bl].to_vec())
}

/// Moves the first vertex of the first mesh by 0.5 along x.
fn move_a_vertex(json: &serde_json::Value, bin: &mut [u8]) {
    let acc = json["meshes"][0]["primitives"][0]["attributes"]["POSITION"]
        .as_u64()
        .unwrap() as usize;
    let a = &json["accessors"][acc];
    let bv = &json["bufferViews"][a["bufferView"].as_u64().unwrap() as usize];
    let at =
        (bv["byteOffset"].as_u64().unwrap_or(0) + a["byteOffset"].as_u64().unwrap_or(0)) as usize;
    let x = f32::from_le_bytes(bin[at..at + 4].try_into().unwrap()) + 0.5;
    bin[at..at + 4].copy_from_slice(&x.to_le_bytes());
}

/// A game folder `G` (a copy of `samples/demo`) and, outside it, the
/// edited glTF of TOWER: STEEL.0 recoloured, STEEL_TX.0 repainted (its
/// first row red), a vertex moved. Returns (G, work folder, glb).
fn three_file_game() -> (tempfile::TempDir, tempfile::TempDir, PathBuf) {
    let g = tempfile::tempdir().unwrap();
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/demo");
    for f in ["demo.rlb", "Material.lib", "Textures.lib"] {
        std::fs::copy(demo.join(f), g.path().join(f)).unwrap();
    }
    let work = tempfile::tempdir().unwrap();
    let glb = work.path().join("tower.glb");
    let o = common::msh2gltf()
        .arg(format!("{}:TOWER.msh", g.path().join("demo.rlb").display()))
        .arg(&glb)
        .arg("-q")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    let (mut json, mut bin) = glb_parts(&std::fs::read(&glb).unwrap());
    let k = (0..2)
        .find(|&k| json["materials"][k]["name"] == "STEEL.0")
        .unwrap();
    json["materials"][k]["pbrMetallicRoughness"]["baseColorFactor"] =
        serde_json::json!([1.0, 0.2, 0.0, 1.0]);
    let lib = mshgltf::material::Library::open(&g.path().join("Textures.lib")).unwrap();
    let t =
        mshgltf::material::texm::Texm::parse(lib.data(lib.find("STEEL_TX.0").unwrap())).unwrap();
    let mut img = t.decode();
    for x in 0..img.width() {
        img.put_pixel(x, 0, image::Rgba([255, 0, 0, 255]));
    }
    std::fs::write(
        work.path().join("painted.png"),
        mshgltf::material::texm::encode_png(&img).unwrap(),
    )
    .unwrap();
    let i = json["images"]
        .as_array()
        .unwrap()
        .iter()
        .position(|i| i["name"] == "STEEL_TX.0")
        .unwrap();
    json["images"][i] = serde_json::json!({"uri": "painted.png", "name": "STEEL_TX.0"});
    move_a_vertex(&json, &mut bin);
    let edit = work.path().join("edit.glb");
    std::fs::write(&edit, common::glb(&json, &bin)).unwrap();
    (g, work, edit)
}

fn three_file_cmd(g: &Path, edit: &Path) -> Command {
    let mut c = common::gltf2msh();
    c.arg(edit)
        .arg("--base")
        .arg(format!("{}:TOWER.msh", g.join("demo.rlb").display()))
        .arg("--game-dir")
        .arg(g)
        .arg("--in-place");
    c
}

/// The bytes of an `objects.rlb` naming `chassis` in `parts.rlb` and
/// `gun` in `guns.rlb`.
fn two_archive_registry() -> Vec<u8> {
    let slots: Vec<Vec<u8>> = [("parts.rlb", "chassis"), ("guns.rlb", "gun")]
        .iter()
        .map(|(a, r)| {
            let mut s = name32(a).to_vec();
            s.extend_from_slice(&name32(&format!("{r}.msh")));
            s
        })
        .collect();
    let recs: Vec<nres::Entry> = slots
        .iter()
        .zip(["chassis", "gun"])
        .map(|(s, r)| nres::Entry {
            type_id: 0,
            attr1: 0,
            attr2: 0,
            attr3: 0,
            name: r.as_bytes(),
            data: s,
        })
        .collect();
    nres::write(&recs).unwrap()
}

/// A game folder with a unit whose chassis (`parts.rlb`) and gun
/// (`guns.rlb`) are in two archives, and the unit's glTF with a node of
/// each moved. Returns (G, work folder, glb).
fn two_archive_game() -> (tempfile::TempDir, tempfile::TempDir, PathBuf) {
    let g = tempfile::tempdir().unwrap();
    let dir = g.path();
    let demo = std::fs::read(common::sample("demo/demo.rlb")).unwrap();
    let a = nres::read(&demo, nres::Mode::Strict).unwrap();
    let tower = mshgltf::source::find_entry(&a, "TOWER.msh").unwrap();
    let rotor = std::fs::read(common::sample("anim_rotor.msh")).unwrap();
    let mut chassis = a.entries[tower].clone();
    chassis.name = b"chassis.msh";
    let mut gun = a.entries[tower].clone();
    gun.name = b"gun.msh";
    gun.data = &rotor;
    std::fs::write(dir.join("parts.rlb"), nres::write(&[chassis]).unwrap()).unwrap();
    std::fs::write(dir.join("guns.rlb"), nres::write(&[gun]).unwrap()).unwrap();
    std::fs::write(dir.join("objects.rlb"), two_archive_registry()).unwrap();
    std::fs::create_dir(dir.join("UNITS")).unwrap();
    let u = dir.join("UNITS/u.dat");
    std::fs::write(&u, dat(&[("chassis", -1, 0, 1), ("gun", 3, 4, 0)])).unwrap();
    let work = tempfile::tempdir().unwrap();
    let glb = work.path().join("u.glb");
    let o = common::msh2gltf()
        .arg(&u)
        .arg(&glb)
        .arg("-q")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    let (mut json, bin) = glb_parts(&std::fs::read(&glb).unwrap());
    // A node of the chassis (TOWER's turret) and of the gun (the rotor).
    for name in ["turret", "rotor"] {
        let n = json["nodes"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|n| n["name"] == name)
            .unwrap_or_else(|| panic!("no node {name}"));
        let mut t = n["translation"].clone();
        if t.is_null() {
            t = serde_json::json!([0.0, 0.0, 0.0]);
        }
        t[0] = serde_json::Value::from(t[0].as_f64().unwrap() + 0.25);
        n["translation"] = t;
    }
    let edit = work.path().join("edit.glb");
    std::fs::write(&edit, common::glb(&json, &bin)).unwrap();
    (g, work, edit)
}

fn two_archive_cmd(g: &Path, edit: &Path) -> Command {
    let mut c = common::gltf2msh();
    c.arg(edit)
        .arg("--base")
        .arg(g.join("UNITS/u.dat"))
        .arg("--in-place");
    c
}

/// How a stopped run ended.
fn stopped_by(o: &Output) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(s) = o.status.signal() {
            return format!("signal {s}");
        }
    }
    format!("exit {:?}", o.status.code())
}

/// One commit stopped at every rename (and after its commit point), by
/// `how`, then completed by the next run; `files` is what the commit
/// replaces.
fn stop_at_every_rename(
    make: fn() -> (tempfile::TempDir, tempfile::TempDir, PathBuf),
    cmd: fn(&Path, &Path) -> Command,
    reader: fn(&Path) -> String,
    files: &[&str],
    how: &str,
) {
    // What the commit writes when nothing stops it.
    let (g, _w, edit) = make();
    let before = snapshot(g.path());
    let o = cmd(g.path(), &edit).output().unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    let after = snapshot(g.path());
    let changed: Vec<&str> = after
        .iter()
        .zip(&before)
        .filter(|(a, b)| a != b)
        .map(|(a, _)| a.0.as_str())
        .collect();
    assert_eq!(changed, files, "the commit replaces these files");
    assert_eq!(names(&after), names(&before));
    // In a game folder (objects.rlb) the commit is an install: each
    // original's backup and the store's manifest are renamed in the same
    // commit (output::install), after the files.
    let renames = if g.path().join("objects.rlb").exists() {
        2 * files.len() + 1
    } else {
        files.len()
    };
    for k in 0..=renames {
        let (g, _w, edit) = make();
        assert_eq!(snapshot(g.path()), before);
        let o = cmd(g.path(), &edit)
            .env("MSHGLTF_TEST_STOP_AFTER_RENAME", k.to_string())
            .env("MSHGLTF_TEST_STOP_HOW", how)
            .output()
            .unwrap();
        let said = stopped_by(&o);
        let e = common::stderr(&o);
        let finished = k == renames;
        if how == "term" {
            // The handler completed the commit before exiting.
            #[cfg(unix)]
            assert_eq!(o.status.code(), Some(143), "k={k}: {said}: {e}");
            #[cfg(windows)]
            assert_eq!(o.status.code(), Some(130), "k={k}: {said}: {e}");
            let want = if finished { &after } else { &before };
            assert!(
                snapshot(g.path()) == *want,
                "k={k}: term: every file {}, nothing left: {:?}",
                if finished { "new" } else { "old" },
                names(&snapshot(g.path()))
            );
            continue;
        }
        assert!(!o.status.success(), "k={k}: {said}");
        #[cfg(unix)]
        assert_eq!(said, "signal 9", "k={k}: {e}");
        let left = snapshot(g.path());
        assert!(
            left.iter().any(|(n, _)| n.starts_with(".mshgltf-journal-")),
            "k={k}: the kill leaves the journal: {:?}",
            names(&left)
        );
        // The next run: `--recover`, the same command again, or a run of
        // msh2gltf reading a file of the folder, by turns.
        let out = tempfile::tempdir().unwrap();
        let (o, want) = match k % 3 {
            0 => (
                common::gltf2msh()
                    .arg("--recover")
                    .arg(g.path())
                    .output()
                    .unwrap(),
                if finished { &after } else { &before },
            ),
            1 => (cmd(g.path(), &edit).output().unwrap(), &after),
            _ => (
                common::msh2gltf()
                    .arg(reader(g.path()))
                    .arg(out.path().join("x.glb"))
                    .output()
                    .unwrap(),
                if finished { &after } else { &before },
            ),
        };
        let e = common::stderr(&o);
        assert!(o.status.success(), "k={k}: {e}");
        let now = snapshot(g.path());
        assert!(
            now == *want,
            "k={k}: every file wholly {}: {:?}\n{e}",
            if *want == after { "new" } else { "old" },
            names(&now)
        );
        let verb = if finished {
            "finished an interrupted commit"
        } else {
            "rolled back an interrupted commit"
        };
        assert!(e.contains(verb), "k={k}: {e}");
        for f in files {
            assert!(e.contains(f), "k={k}: names {f}: {e}");
        }
        // Nothing more to do.
        let o = common::gltf2msh()
            .arg("--recover")
            .arg(g.path())
            .output()
            .unwrap();
        assert!(
            common::stderr(&o).contains("no interrupted commit"),
            "{}",
            common::stderr(&o)
        );
    }
}

#[test]
fn a_three_file_commit_killed_at_every_rename_is_whole_after_the_next_run() {
    stop_at_every_rename(
        three_file_game,
        three_file_cmd,
        |g| format!("{}:TOWER.msh", g.join("demo.rlb").display()),
        &["Material.lib", "Textures.lib", "demo.rlb"],
        "kill",
    );
}

#[test]
fn a_two_archive_commit_killed_at_every_rename_is_whole_after_the_next_run() {
    stop_at_every_rename(
        two_archive_game,
        two_archive_cmd,
        |g| format!("{}:chassis.msh", g.join("parts.rlb").display()),
        &["guns.rlb", "parts.rlb"],
        "kill",
    );
}

#[test]
fn a_three_file_commit_terminated_at_every_rename_is_rolled_back_by_its_handler() {
    stop_at_every_rename(
        three_file_game,
        three_file_cmd,
        |g| format!("{}:TOWER.msh", g.join("demo.rlb").display()),
        &["Material.lib", "Textures.lib", "demo.rlb"],
        "term",
    );
}

#[test]
fn a_two_archive_commit_terminated_at_every_rename_is_rolled_back_by_its_handler() {
    stop_at_every_rename(
        two_archive_game,
        two_archive_cmd,
        |g| format!("{}:chassis.msh", g.join("parts.rlb").display()),
        &["guns.rlb", "parts.rlb"],
        "term",
    );
}

/// A journal that is truncated or garbled is refused by `--recover` and by
/// any run touching its folder (exit 1, `output.journal`, what to do), and
/// nothing is changed on its word: the kept originals stay.
#[test]
fn a_garbled_journal_is_refused_and_nothing_is_removed() {
    let (g, _w, edit) = three_file_game();
    let o = three_file_cmd(g.path(), &edit)
        .env("MSHGLTF_TEST_STOP_AFTER_RENAME", "1")
        .env("MSHGLTF_TEST_STOP_HOW", "kill")
        .output()
        .unwrap();
    assert!(!o.status.success());
    let left = snapshot(g.path());
    let (jname, jbytes) = left
        .iter()
        .find(|(n, _)| n.starts_with(".mshgltf-journal-"))
        .cloned()
        .expect("a journal");
    let j = g.path().join(&jname);
    for garbled in [
        jbytes[..jbytes.len() / 2].to_vec(),
        {
            let mut b = jbytes.clone();
            b[30] ^= 1;
            b
        },
        vec![0u8; 2 << 20],
    ] {
        std::fs::write(&j, &garbled).unwrap();
        let held = snapshot(g.path());
        let o = common::gltf2msh()
            .arg("--recover")
            .arg(g.path())
            .output()
            .unwrap();
        let e = common::stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{e}");
        assert!(
            e.contains(&jname) && e.contains("by hand") && e.contains("cannot be completed"),
            "{e}"
        );
        assert!(snapshot(g.path()) == held, "nothing changed: {e}");
        // A run touching the folder refuses too, before writing.
        let o = three_file_cmd(g.path(), &edit).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", common::stderr(&o));
        assert!(
            common::stderr(&o).contains("output.journal") || common::stderr(&o).contains("by hand")
        );
        assert!(snapshot(g.path()) == held);
    }
    // Put back, the journal completes.
    std::fs::write(&j, &jbytes).unwrap();
    let o = common::gltf2msh()
        .arg("--recover")
        .arg(g.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(common::stderr(&o).contains("rolled back"));
}

/// Issue 36 item 11: a batch over a game folder skips the tools' own
/// leftovers (a kept original, a temporary file, a journal) by name and
/// says so; only the game's archive is converted.
#[test]
fn a_batch_skips_the_tools_own_files_and_says_so() {
    let g = tempfile::tempdir().unwrap();
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/demo/demo.rlb");
    std::fs::copy(&demo, g.path().join("demo.rlb")).unwrap();
    let count = |out: &Path| {
        walk(out)
            .iter()
            .filter(|p| p.extension().is_some_and(|x| x == "glb"))
            .count()
    };
    let out1 = tempfile::tempdir().unwrap();
    let o = common::msh2gltf()
        .arg(g.path())
        .arg(out1.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    let alone = count(out1.path());
    assert!(alone > 0);
    for leftover in [".demo.rlb.mshgltf-keep-123-0", ".mshgltf-Ab12Cd.tmp"] {
        std::fs::copy(&demo, g.path().join(leftover)).unwrap();
    }
    let out2 = tempfile::tempdir().unwrap();
    let o = common::msh2gltf()
        .arg(g.path())
        .arg(out2.path())
        .output()
        .unwrap();
    let e = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        common::stderr(&o)
    );
    assert!(o.status.success(), "{e}");
    assert_eq!(count(out2.path()), alone, "{e}");
    for leftover in [".demo.rlb.mshgltf-keep-123-0", ".mshgltf-Ab12Cd.tmp"] {
        let line = e
            .lines()
            .find(|l| l.contains(leftover))
            .unwrap_or_else(|| panic!("a line names {leftover}: {e}"));
        assert!(line.contains("skipped") && line.contains("own"), "{line}");
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            v.extend(walk(&p));
        } else {
            v.push(p);
        }
    }
    v
}
