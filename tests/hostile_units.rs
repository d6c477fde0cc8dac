//! Issue 26 on units, without `../shared`: a synthetic game folder built
//! from the committed samples (`objects.rlb`, `parts.rlb` holding
//! `samples/demo/demo.rlb`'s TOWER as chassis and turret and
//! `samples/anim_rotor.msh` as gun, `UNITS/u.dat`) with hostile unit files
//! and registries: no panic, a typed error or a warning naming the
//! component, record and rule.

mod common;
mod hostile;

use common::unit_file::{dat, write_objects_rlb};
use std::path::{Path, PathBuf};

use common::{msh2gltf, sample, stderr};
use hostile::{make_hostile, run_bounded};
use mshgltf::{nres, source};
use serde_json::Value;

/// A game folder: objects.rlb (records chassis, turret, gun), parts.rlb,
/// and `UNITS/u.dat` holding `components`.
fn game(dir: &Path, components: &[(&str, i32, u32, i32)]) -> PathBuf {
    let demo = std::fs::read(sample("demo/demo.rlb")).unwrap();
    let a = nres::read(&demo, nres::Mode::Strict).unwrap();
    let tower = source::find_entry(&a, "TOWER.msh").unwrap();
    let rotor = std::fs::read(sample("anim_rotor.msh")).unwrap();
    let mut entries = vec![a.entries[tower].clone(); 3];
    entries[0].name = b"chassis.msh";
    entries[1].name = b"turret.msh";
    entries[2].name = b"gun.msh";
    entries[2].data = &rotor;
    std::fs::write(dir.join("parts.rlb"), nres::write(&entries).unwrap()).unwrap();
    write_objects_rlb(dir, "parts.rlb", &["chassis", "turret", "gun"]);
    std::fs::create_dir_all(dir.join("UNITS")).unwrap();
    let u = dir.join("UNITS/u.dat");
    std::fs::write(&u, dat(components)).unwrap();
    u
}

fn scene_parts(glb: &Path) -> Vec<Value> {
    let d = std::fs::read(glb).unwrap();
    let n = u32::from_le_bytes(d[12..16].try_into().unwrap()) as usize;
    let j: Value = serde_json::from_slice(&d[20..20 + n]).unwrap();
    j["scenes"][0]["extras"]["msh"]["unit"]["parts"]
        .as_array()
        .unwrap()
        .clone()
}

/// A turret whose attach is −1 (only the root's may be) carrying a gun
/// panicked in assembly (issue 26 item 3): now the turret and the gun it
/// carries are left out with a warning naming the component, its record
/// and its attach, and the chassis converts.
#[test]
fn a_turret_without_socket_carrying_a_gun_is_left_out_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let ok = game(
        tmp.path(),
        &[("chassis", -1, 0, 1), ("turret", 3, 1, 1), ("gun", 1, 4, 0)],
    );
    let out = tmp.path().join("ok.glb");
    let o = msh2gltf().arg(&ok).arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(scene_parts(&out).len(), 3);
    let u = game(
        tmp.path(),
        &[
            ("chassis", -1, 0, 1),
            ("turret", -1, 1, 1),
            ("gun", 1, 4, 0),
        ],
    );
    let out = tmp.path().join("u.glb");
    let o = msh2gltf().arg(&u).arg(&out).output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(!err.contains("panic"), "{err}");
    for want in ["component 1 \"turret\"", "attach -1", "component 2 \"gun\""] {
        assert!(err.contains(want), "{want:?} missing from {err}");
    }
    let parts = scene_parts(&out);
    assert_eq!(parts.len(), 1, "{parts:?}");
    assert_eq!(parts[0]["record"], "chassis");
}

/// The same in a batch of the game folder: the unit's row is converted with
/// the warning, never `internal.panic`.
#[test]
fn the_batch_converts_the_unit_without_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let g = tmp.path().join("game");
    std::fs::create_dir(&g).unwrap();
    game(
        &g,
        &[
            ("chassis", -1, 0, 1),
            ("turret", -1, 1, 1),
            ("gun", 1, 4, 0),
        ],
    );
    let out = tmp.path().join("out");
    let report = tmp.path().join("report.json");
    let o = msh2gltf()
        .arg(&g)
        .arg(&out)
        .arg("--report")
        .arg(&report)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(!err.contains("panic"), "{err}");
    let r: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let rows = r["models"].as_array().or(r["rows"].as_array()).unwrap();
    let row = rows
        .iter()
        .find(|m| m["source"].as_str().is_some_and(|s| s.ends_with("u.dat")))
        .unwrap_or_else(|| panic!("no u.dat row in {r}"));
    assert_eq!(row["status"], "converted", "{row}");
}

/// `objects.rlb` or the part archive it names that is a FIFO or a symlink
/// to `/dev/zero` (issue 26 item 4): refused before it is read (no hang,
/// no unbounded read), naming the file, exit 1; nothing written.
#[test]
fn registry_and_part_archives_that_are_not_regular_files_are_refused() {
    let dat = &[("chassis", -1, 0, 1), ("gun", 3, 4, 0)];
    for file in ["objects.rlb", "parts.rlb"] {
        for fifo in [true, false] {
            let tmp = tempfile::tempdir().unwrap();
            let u = game(tmp.path(), dat);
            if !make_hostile(&tmp.path().join(file), fifo) {
                eprintln!("skipped: no mkfifo/symlink here");
                return;
            }
            let out = tmp.path().join("u.glb");
            let o = run_bounded(msh2gltf().arg(&u).arg(&out));
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(1), "{file} fifo={fifo}: {err}");
            for want in [file, "not a regular file"] {
                assert!(
                    err.contains(want),
                    "{file} fifo={fifo}: {want:?} missing: {err}"
                );
            }
            assert!(!out.exists());
        }
    }
}

/// A model's `.cpt`/`.ctl` sibling that is a FIFO is not opened: the model
/// converts without it.
#[test]
fn a_fifo_sibling_does_not_hang_a_model() {
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("anim_rotor.msh");
    std::fs::copy(sample("anim_rotor.msh"), &m).unwrap();
    for ext in ["cpt", "ctl"] {
        if !make_hostile(&tmp.path().join(format!("anim_rotor.{ext}")), true) {
            return;
        }
    }
    let out = tmp.path().join("a.glb");
    let o = run_bounded(msh2gltf().arg(&m).arg(&out));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.exists());
    // Item 10: each sibling left out is named, never skipped silently.
    for ext in ["cpt", "ctl"] {
        let want = format!("anim_rotor.{ext}: not a regular file");
        assert!(err.contains(&want), "{want:?} missing: {err}");
    }
}

// ---- Issue 26 item 8: clip ranges come from the base's .ctl ----

fn glb_parts(path: &Path) -> (Value, Vec<u8>) {
    let d = std::fs::read(path).unwrap();
    let n = u32::from_le_bytes(d[12..16].try_into().unwrap()) as usize;
    let json = serde_json::from_slice(&d[20..20 + n]).unwrap();
    let at = 20 + n;
    let len = u32::from_le_bytes(d[at..at + 4].try_into().unwrap()) as usize;
    (json, d[at + 8..at + 8 + len].to_vec())
}

/// A `.ctl` with one looping channel on `node` over frames `first..last`
/// (unit-files-notes §1.7).
fn one_channel_ctl(node: i32, first: f32, last: f32) -> Vec<u8> {
    use mshgltf::unit::ctl;
    let mut fixed = vec![0u8; ctl::COMPONENT_FIXED];
    fixed[0..4].copy_from_slice(&3i32.to_le_bytes());
    fixed[0xAC..0xB0].copy_from_slice(&1u32.to_le_bytes());
    let c = ctl::Controller {
        contacts_per_state: 0,
        params: vec![0; ctl::PARAMS],
        states: vec![ctl::State {
            raw: [0u8; ctl::STATE_FIXED],
            contacts: vec![],
        }],
        costs: vec![ctl::NO_EDGE],
        channels: vec![ctl::Channel {
            node,
            first,
            last,
            initial: 0.0,
            second_point: -1,
            point: 0,
            rate: 2.0,
            span: 6.283_185_5,
            flags: 1,
        }],
        components: vec![ctl::Component {
            fixed,
            channels: vec![0],
            label: None,
        }],
        group_block: vec![-1; ctl::GROUP_BLOCK],
        groups: vec![],
    };
    ctl::write(&c)
}

/// A clip whose range is widened in the glTF's extras (`extras.msh.clip`
/// first/last, `extras.msh.start`/`end`) with its keys stretched past the
/// `.ctl`'s range: refused (`gltf.clip.range`, exit 1, nothing written),
/// because the range is the base `.ctl`'s; without a `.ctl` beside the
/// base the edited clip is not written and a warning says so.
#[test]
fn a_clip_range_widened_in_the_gltf_writes_no_keys_outside_the_ctl() {
    use mshgltf::msh::{self, Nodes};
    let bytes = std::fs::read(sample("anim_rotor.msh")).unwrap();
    let model = msh::decode(&bytes, msh::Mode::Strict).unwrap().model;
    let Nodes::Node38(nodes) = &model.nodes else {
        panic!("38-byte nodes")
    };
    let node = nodes.iter().position(|n| n.map_start != 0xFFFF).unwrap() as i32;
    let full = (model.frame_count - 1) as f32;
    let half = (full / 2.0).floor();
    assert!(half >= 2.0, "frames {full}");
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("rotor.msh");
    std::fs::write(&m, &bytes).unwrap();
    std::fs::write(
        tmp.path().join("rotor.ctl"),
        one_channel_ctl(node, 0.0, half),
    )
    .unwrap();
    let glb = tmp.path().join("rotor.glb");
    let o = msh2gltf().arg(&m).arg(&glb).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let (mut j, mut bin) = glb_parts(&glb);
    let a = j["animations"]
        .as_array()
        .unwrap()
        .iter()
        .position(|a| !a["extras"]["msh"]["clip"].is_null())
        .expect("a clip animation");
    // Widen the clip in its extras and stretch every key time x2.
    j["animations"][a]["extras"]["msh"]["clip"]["last"] = full.into();
    j["animations"][a]["extras"]["msh"]["start"] = 0.0.into();
    j["animations"][a]["extras"]["msh"]["end"] = full.into();
    let inputs: Vec<usize> = j["animations"][a]["samplers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["input"].as_u64().unwrap() as usize)
        .collect();
    let mut done = std::collections::BTreeSet::new();
    for acc in inputs.into_iter().filter(|&x| done.insert(x)) {
        let ac = j["accessors"][acc].clone();
        let view = &j["bufferViews"][ac["bufferView"].as_u64().unwrap() as usize];
        let off = view["byteOffset"].as_u64().unwrap_or(0) + ac["byteOffset"].as_u64().unwrap_or(0);
        for k in 0..ac["count"].as_u64().unwrap() {
            let at = (off + 4 * k) as usize;
            let t = f32::from_le_bytes(bin[at..at + 4].try_into().unwrap()) * 2.0;
            bin[at..at + 4].copy_from_slice(&t.to_le_bytes());
        }
        let acm = &mut j["accessors"][acc];
        acm["min"] = serde_json::json!([ac["min"][0].as_f64().unwrap() * 2.0]);
        acm["max"] = serde_json::json!([ac["max"][0].as_f64().unwrap() * 2.0]);
    }
    let wide = tmp.path().join("wide.glb");
    std::fs::write(&wide, common::glb(&j, &bin)).unwrap();
    let out = tmp.path().join("out.msh");
    let run = || {
        common::gltf2msh()
            .arg(&wide)
            .arg("--base")
            .arg(&m)
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap()
    };
    let o = run();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("gltf.clip.range"), "{err}");
    assert!(
        err.contains(&format!("{half}")),
        "the .ctl's range is named: {err}"
    );
    assert!(!out.exists(), "nothing is written");
    // No .ctl beside the base: the clip's range is unknown, nothing of it written, warned.
    std::fs::remove_file(tmp.path().join("rotor.ctl")).unwrap();
    let o = run();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("keys are not written"), "{err}");
    assert_eq!(
        std::fs::read(&out).unwrap(),
        bytes,
        "the clip is not written"
    );
}

/// Item 8: `gltf2msh --base` of a glTF whose scene lists a node that is
/// also another node's child: refused (`gltf.hierarchy`, exit 1, nothing
/// written), naming the node and its parent.
#[test]
fn a_scene_root_that_is_also_a_child_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("rotor.msh");
    std::fs::copy(sample("anim_rotor.msh"), &m).unwrap();
    let glb = tmp.path().join("rotor.glb");
    let o = msh2gltf().arg(&m).arg(&glb).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let (mut j, bin) = glb_parts(&glb);
    let (child, parent) = j["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .find_map(|(p, n)| Some((n["children"].as_array()?.first()?.as_u64()?, p)))
        .expect("a node with a child");
    j["scenes"][0]["nodes"]
        .as_array_mut()
        .unwrap()
        .push(child.into());
    let bad = tmp.path().join("bad.glb");
    std::fs::write(&bad, common::glb(&j, &bin)).unwrap();
    let out = tmp.path().join("out.msh");
    let o = common::gltf2msh()
        .arg(&bad)
        .arg("--base")
        .arg(&m)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let want = format!("lists node {child} as a root, but it is a child of node {parent}");
    assert!(
        err.contains("gltf.hierarchy") && err.contains(&want),
        "{err}"
    );
    assert!(!out.exists());
}

/// Runs msh2gltf on `input` into `out` with `--max-work budget`; returns
/// the exit code and stderr.
fn run_budget(input: &Path, out: &Path, budget: u64) -> (Option<i32>, String) {
    let o = msh2gltf()
        .arg(input)
        .arg(out)
        .args(["--max-work", &budget.to_string(), "--force"])
        .output()
        .unwrap();
    (o.status.code(), stderr(&o))
}

/// The number after `prefix` in `s`.
fn number_after(s: &str, prefix: &str) -> u64 {
    let at = s
        .find(prefix)
        .unwrap_or_else(|| panic!("{prefix:?} in {s}"))
        + prefix.len();
    s[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap()
}

/// Issue 26 item 5: a model's `.ctl` channels and states (640 units each)
/// and `.cpt` points (160 each) with its glTF nodes (32 each) are counted
/// from the siblings' headers before they are parsed: one unit over the
/// budget is `limits.work` (exit 1, naming the counts, nothing written);
/// at the exact budget and at the default the model converts.
#[test]
fn ctl_and_cpt_over_the_work_budget_are_refused_before_parsing() {
    let tmp = tempfile::tempdir().unwrap();
    let msh = tmp.path().join("m.msh");
    std::fs::copy(sample("anim_rotor.msh"), &msh).unwrap();
    for (ext, bytes, per, what) in [
        (
            "ctl",
            hostile::work::ctl_channels(10),
            640,
            "10 channels and 0 states",
        ),
        (
            "cpt",
            hostile::work::cpt_points(10),
            160,
            "10 control points",
        ),
    ] {
        let _ = std::fs::remove_file(tmp.path().join("m.ctl"));
        let _ = std::fs::remove_file(tmp.path().join("m.cpt"));
        std::fs::write(tmp.path().join(format!("m.{ext}")), bytes).unwrap();
        let out = tmp.path().join(format!("{ext}.glb"));
        let (code, err) = run_budget(&msh, &out, 1000);
        assert_eq!(code, Some(1), "{err}");
        assert!(err.contains("limits.work") && err.contains(what), "{err}");
        assert!(!out.exists(), "nothing written: {err}");
        let nodes = number_after(&err, "limits.work: ");
        let units = nodes * 32 + 10 * per;
        assert!(
            err.contains(&format!("make {units} work units")),
            "{units}: {err}"
        );
        let (code, err) = run_budget(&msh, &out, units - 1);
        assert_eq!(code, Some(1), "{err}");
        let (code, err) = run_budget(&msh, &out, units);
        assert_eq!(code, Some(0), "--max-work {units}: {err}");
        let o = msh2gltf()
            .arg(&msh)
            .arg(&out)
            .arg("--force")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
}

/// Issue 26 item 5: an assembled unit's components (`UNITS_PER_UNIT_COMPONENT` each), mounted
/// parts (3072 each) and part-tree depth (32 per level) are counted before
/// any part is read, and each part's nodes, primitives and buffer bytes
/// before it is merged: over the budget is `limits.work` (exit 1, naming
/// the counts or the part, nothing written); the default converts it.
#[test]
fn a_unit_over_the_work_budget_is_refused_before_its_parts_are_read() {
    let tmp = tempfile::tempdir().unwrap();
    let u = game(
        tmp.path(),
        &[("chassis", -1, 0, 1), ("turret", 3, 1, 1), ("gun", 1, 4, 0)],
    );
    let out = tmp.path().join("u.glb");
    let before = 3 * mshgltf::limits::UNITS_PER_UNIT_COMPONENT + 3 * 3072 + 3 * 32;
    let (code, err) = run_budget(&u, &out, before - 1);
    assert_eq!(code, Some(1), "{err}");
    for want in [
        "limits.work",
        "3 components, 3 mounted parts and a part tree 3 deep",
        &format!("to {before} units"),
    ] {
        assert!(err.contains(want), "{want:?} missing: {err}");
    }
    assert!(!out.exists());
    // Within the count before the work, the chassis's own glTF is over it.
    let (code, err) = run_budget(&u, &out, before);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("limits.work") && err.contains("part 0 \"chassis\""),
        "{err}"
    );
    assert!(!out.exists());
    let (code, err) = run_budget(&u, &out, mshgltf::limits::DEFAULT_MAX_WORK);
    assert_eq!(code, Some(0), "{err}");
    // 2000 guns at the default budget: refused before a part is read.
    let many = tmp.path().join("many");
    std::fs::create_dir(&many).unwrap();
    let u = game(&many, &hostile::work::many_guns(2000));
    let (code, err) = run_budget(&u, &out, mshgltf::limits::DEFAULT_MAX_WORK);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("2001 mounted parts"), "{err}");
}
