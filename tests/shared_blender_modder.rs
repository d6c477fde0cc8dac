//! Issue 39 item 3 ("what a modder found") through the Blender add-on's
//! operators (`tests/blender/modder_test.py` in a real, headless Blender,
//! on a copy of `../shared/corpus` without `bad/`), each in Blender 3.4
//! (`blender`) and in PyPI's bpy 5 ([`common::bpy_python`]):
//!
//! - `an_unkeyed_move_stays_and_every_export_writes_it`: an animated part
//!   moved without a key, exported as an archive copy and then installed
//!   into the game: the scene keeps the move (at every frame: it is folded
//!   into the keys), both files hold it (the node's pose at every frame
//!   +0.25 on x, 1e-3), and each Info line names the file written (the
//!   game's archive after Install, never the unused copy's name);
//! - `every_report_line_is_true`: a recolour's "shared" warning is counted;
//!   a map repaint reports its repainted faces; a mission export with one
//!   building moved, one rock scaled and two copies says "2 moved, turned
//!   or rescaled, 2 added as copies" (no overlapping counts); every Info
//!   line counts exactly the warnings it lists;
//! - `unit_and_mission_imports_show_progress`: the unit import, the mission
//!   import and export begin, step (with a status text) and end progress;
//! - `a_soloed_clip_plays_at_clip_frames`: every clip's NLA strip plays
//!   clip frame f at scene frame f (soloed, the pose is the clip action's).
//!
//! Skips (passing) without `../shared` or Blender; the bpy 5 tests skip
//! without PyPI `bpy`.

mod common;

use std::path::Path;

use mshgltf::anim::Sampler;
use mshgltf::msh::{self, Model};
use mshgltf::{convention, nres, source};

const ARCHIVE: &str = "animals.rlb";
const ENTRY: &str = "a_bird_12.msh";

/// Copies `from` into `to`, leaving out `bad/` and `manifest.json`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let name = e.file_name();
        if name == "bad" || name == "manifest.json" {
            continue;
        }
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &to.join(&name));
        } else {
            std::fs::copy(e.path(), to.join(&name)).unwrap();
        }
    }
}

/// Runs one section of the script on a fresh copy of the corpus: (report,
/// the game folder, the work folder, the temporary folder kept alive).
fn run(
    corpus: &Path,
    blender: &Path,
    bpy: Option<&Path>,
    section: &str,
    args: impl Fn(&Path, &Path) -> Vec<String>,
) -> (
    serde_json::Value,
    std::path::PathBuf,
    std::path::PathBuf,
    tempfile::TempDir,
) {
    let tmp = tempfile::tempdir().unwrap();
    let game = tmp.path().join("game");
    copy_tree(corpus, &game);
    let work = tmp.path().join("work");
    let zip = tmp.path().join("addon.zip");
    common::package_addon(&zip);
    let r = common::blender_report(
        common::blender_script(blender, bpy, "modder_test.py", tmp.path())
            .arg("--")
            .arg(&zip)
            .arg(section)
            .args(args(&game, &work)),
        "MODDER_TEST",
    );
    println!("{} {section}: {r}", r["blender"]);
    (r, game, work, tmp)
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// The add-on's report lines of one step at `level`.
fn lines<'a>(r: &'a serde_json::Value, step: &str, level: &str) -> Vec<&'a str> {
    r["reports"][step]
        .as_array()
        .unwrap_or_else(|| panic!("no reports of {step}: {r}"))
        .iter()
        .filter(|l| l[0] == level)
        .map(|l| l[1].as_str().unwrap())
        .collect()
}

fn entry_bytes(archive: &Path, entry: &str) -> Vec<u8> {
    let bytes = std::fs::read(archive).unwrap();
    let a = nres::read(&bytes, nres::Mode::Strict).unwrap();
    a.entries[source::find_entry(&a, entry).unwrap()]
        .data
        .to_vec()
}

fn model(bytes: &[u8]) -> Model {
    msh::decode(bytes, msh::Mode::Strict).unwrap().model
}

/// Node `node`'s pose at every frame is the base's + (0.25, 0, 0); every
/// other node's is the base's (1e-3).
fn check_moved(base: &Model, m: &Model, node: usize, what: &str) {
    let q = convention::detect(base, None, &Default::default())
        .conventions
        .quat;
    let (sb, sm) = (Sampler::new(base, q).unwrap(), Sampler::new(m, q).unwrap());
    for n in 0..base.nodes.len() {
        let d = if n == node { 0.25 } else { 0.0 };
        for f in 0..base.frame_count.max(1) {
            let (a, b) = (sb.node_pose(n, f as f32).pos, sm.node_pose(n, f as f32).pos);
            let want = [a[0] + d, a[1], a[2]];
            assert!(
                (0..3).all(|k| (b[k] - want[k]).abs() <= 1e-3),
                "{what}: node {n} frame {f}: {b:?}, want {want:?}"
            );
        }
    }
}

fn unkeyed(corpus: &Path, blender: &Path, bpy: Option<&Path>) {
    let base = entry_bytes(&corpus.join(ARCHIVE), ENTRY);
    let (r, game, work, _tmp) = run(corpus, blender, bpy, "unkeyed", |game, work| {
        vec![s(game), s(&game.join(ARCHIVE)), ENTRY.into(), s(work)]
    });
    assert_eq!(r["errors"], serde_json::json!([]), "{r:#}");
    assert_eq!(
        r["results"]["copy"],
        serde_json::json!(["FINISHED"]),
        "{r:#}"
    );
    assert_eq!(
        r["results"]["install"],
        serde_json::json!(["FINISHED"]),
        "{r:#}"
    );
    // The scene keeps the move: after the export, after a replay of the
    // animation, at another frame, and after the second export.
    for k in ["after_copy", "after_replay", "other_frame", "after_install"] {
        let d = r[k].as_f64().unwrap();
        assert!(
            (d - 0.25).abs() < 1e-4,
            "{k}: moved {d} in Blender, want 0.25: {r:#}"
        );
    }
    // Both exports wrote it.
    let node = r["moved"]["node"].as_u64().unwrap() as usize;
    let copy = work.join("a_bird_12_edit.rlb");
    let base_model = model(&base);
    check_moved(
        &base_model,
        &model(&entry_bytes(&copy, ENTRY)),
        node,
        "copy",
    );
    let installed = game.join(ARCHIVE);
    check_moved(
        &base_model,
        &model(&entry_bytes(&installed, ENTRY)),
        node,
        "installed",
    );
    // Each Info line names the file written.
    let info = lines(&r, "copy", "INFO");
    assert!(
        info.iter()
            .any(|l| l.starts_with(&format!("Wrote {}", s(&copy)))),
        "{info:?}"
    );
    let info = lines(&r, "install", "INFO");
    assert!(
        info.iter()
            .any(|l| l.starts_with(&format!("Installed into {}", s(&installed)))),
        "{info:?}"
    );
    assert!(
        info.iter()
            .all(|l| !l.contains(&s(&copy)) && !l.contains("unchanged")),
        "{info:?}"
    );
}

fn reports(corpus: &Path, blender: &Path, bpy: Option<&Path>) {
    let (r, game, work, _tmp) = run(corpus, blender, bpy, "reports", |game, work| {
        vec![s(game), s(work)]
    });
    assert_eq!(r["errors"], serde_json::json!([]), "{r:#}");
    for step in ["recolour", "repaint", "mission"] {
        assert_eq!(
            r["results"][step],
            serde_json::json!(["FINISHED"]),
            "{step}: {r:#}"
        );
    }
    // The recolour's shared-use warning is listed, so counted.
    let warned = lines(&r, "recolour", "WARNING");
    assert!(
        warned.iter().any(|w| w.contains("is shared")),
        "no shared-use warning: {warned:?}"
    );
    // The repaint says so.
    let info = lines(&r, "repaint", "INFO").join("\n");
    let faces: usize = info
        .split(" faces repainted")
        .next()
        .and_then(|h| h.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no \"N faces repainted\" in {info}"));
    assert!(faces > 0, "{info}");
    assert!(
        info.starts_with(&format!("Wrote {}", s(&work.join("Land_edit.msh")))),
        "{info}"
    );
    // The mission's counts, each object once.
    let info = lines(&r, "mission", "INFO").join("\n");
    assert!(
        info.contains("2 moved, turned or rescaled, 2 added as copies (objects)"),
        "{info}"
    );
    let base = mshgltf::mission::tma::read(
        &std::fs::read(game.join("MISSIONS/Single.01/data.tma")).unwrap(),
        mshgltf::mission::Mode::Strict,
    )
    .unwrap()
    .0;
    let edited = mshgltf::mission::tma::read(
        &std::fs::read(work.join("data_edit.tma")).unwrap(),
        mshgltf::mission::Mode::Strict,
    )
    .unwrap()
    .0;
    assert_eq!(edited.objects.len(), base.objects.len() + 2);
}

fn progress(corpus: &Path, blender: &Path, bpy: Option<&Path>) {
    let (r, _game, _work, _tmp) = run(corpus, blender, bpy, "progress", |game, work| {
        vec![s(game), s(work)]
    });
    assert_eq!(r["errors"], serde_json::json!([]), "{r:#}");
    for step in ["unit", "mission_import", "mission_export"] {
        assert_eq!(
            r["results"][step],
            serde_json::json!(["FINISHED"]),
            "{step}: {r:#}"
        );
        let calls = r["progress"][step].as_array().unwrap();
        let kinds: Vec<&str> = calls.iter().map(|c| c[0].as_str().unwrap()).collect();
        assert_eq!(kinds.first(), Some(&"begin"), "{step}: {calls:?}");
        assert_eq!(kinds.last(), Some(&"end"), "{step}: {calls:?}");
        let texts = calls
            .iter()
            .filter(|c| c[0] == "step" && c[3].as_str().is_some_and(|t| !t.is_empty()))
            .count();
        assert!(texts >= 2, "{step}: no status texts: {calls:?}");
    }
}

fn clips(corpus: &Path, blender: &Path, bpy: Option<&Path>) {
    let m = common::manifest(corpus);
    let has_clips = m["models"].as_array().unwrap().iter().any(|x| {
        x["file"] == ARCHIVE
            && x["entry"] == ENTRY
            && x["clips"].as_array().is_some_and(|c| !c.is_empty())
    });
    assert!(has_clips, "the manifest gives {ARCHIVE}:{ENTRY} no clips");
    let (r, _game, _work, _tmp) = run(corpus, blender, bpy, "clips", |game, _| {
        vec![s(game), s(&game.join(ARCHIVE)), ENTRY.into()]
    });
    assert_eq!(r["errors"], serde_json::json!([]), "{r:#}");
    assert!(!r["strips"].as_array().unwrap().is_empty(), "{r:#}");
}

macro_rules! in_both {
    ($name:ident, $name5:ident, $f:ident) => {
        #[test]
        #[ignore = "needs ../shared and Blender: cargo test -- --include-ignored"]
        fn $name() {
            let Some((corpus, blender)) = common::corpus_and_blender() else {
                return;
            };
            $f(&corpus, &blender, None);
        }

        /// The same in Blender 5.x (PyPI `bpy`); skips (passing) without it.
        #[test]
        #[ignore = "needs ../shared and PyPI bpy (../shared/tools/blender-inspect --bpy): cargo test -- --include-ignored"]
        fn $name5() {
            let (Some((corpus, blender)), Some(py)) =
                (common::corpus_and_blender(), common::bpy_python(common::NEWEST_BPY))
            else {
                println!("SKIP: no ../shared, Blender or PyPI bpy");
                return;
            };
            $f(&corpus, &blender, Some(&py));
        }
    };
}

in_both!(
    an_unkeyed_move_stays_and_every_export_writes_it,
    an_unkeyed_move_stays_and_every_export_writes_it_in_bpy_5,
    unkeyed
);
in_both!(
    every_report_line_is_true,
    every_report_line_is_true_in_bpy_5,
    reports
);
in_both!(
    unit_and_mission_imports_show_progress,
    unit_and_mission_imports_show_progress_in_bpy_5,
    progress
);
in_both!(
    a_soloed_clip_plays_at_clip_frames,
    a_soloed_clip_plays_at_clip_frames_in_bpy_5,
    clips
);
