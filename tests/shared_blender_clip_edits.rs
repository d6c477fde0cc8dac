//! Issue 24 item 4 through the Blender add-on
//! (`tests/blender/clip_edits_test.py` in a real, headless Blender 3.4.1
//! and in PyPI bpy 5.x, on a copy of a corpus archive): clips are actions
//! on muted NLA tracks that play in the game's direction, densified
//! rotation keys are hidden, and a clip edit reaches the game inside that
//! clip only.
//!
//! The subject is the first manifest model with a reversed state chain
//! (`first > last`) spanning at least 3 frames whose clip animation keys a
//! translation at two whole frames inside it. Checked:
//! - every clip of the model is an action on a muted NLA track named after
//!   it; the reversed clip's value at clip frame 0 is the timeline's at the
//!   clip's start frame (in Blender, 1e-4);
//! - each object's timeline rotation keys in Blender = the glTF timeline's
//!   keys minus its `extras.msh.densified` keys (one key per stored key);
//! - unedited export: the archive entry's bytes;
//! - a location key of the clip's action moved +0.25 along z on its NLA
//!   track, and again with the clip action made active: the written model's
//!   Res8 pose of that node at the key's timeline frame is +0.25 along z
//!   (1e-3), between its neighbour keys by at most that, and every node at
//!   every whole frame outside the clip unchanged (1e-4);
//! - a key past the clip's end: the export is refused naming the clip.
//!
//! Skips (passing) without `../shared/corpus`, Blender or PyPI bpy.

mod common;

use std::path::Path;

use mshgltf::anim::Sampler;
use mshgltf::msh::{self, Model};
use mshgltf::{convention, nres, source};
use serde_json::Value;

/// msh2gltf's GLB of `ARCHIVE:ENTRY` (24 fps, no textures), parsed.
fn export(archive: &Path, entry: &str) -> mshgltf::gltf_import::GltfFile {
    let tmp = tempfile::tempdir().unwrap();
    let glb = tmp.path().join("m.glb");
    let st = std::process::Command::new(env!("CARGO_BIN_EXE_msh2gltf"))
        .arg(format!("{}:{entry}", archive.display()))
        .arg(&glb)
        .args(["--fps", "24", "--no-textures", "-q"])
        .status()
        .unwrap();
    assert!(st.success());
    mshgltf::gltf_import::parse(&std::fs::read(&glb).unwrap(), None).unwrap()
}

/// True when clip animation `a` keys some node's translation at two whole
/// frames strictly inside the clip.
fn has_interior_keys(doc: &mshgltf::gltf_import::GltfFile, a: &Value) -> bool {
    let ms = &a["extras"]["msh"];
    let len = (ms["end"].as_f64().unwrap() - ms["start"].as_f64().unwrap()).abs();
    a["channels"].as_array().unwrap().iter().any(|ch| {
        let s = &a["samplers"][ch["sampler"].as_u64().unwrap() as usize];
        ch["target"]["path"] == "translation"
            && doc
                .floats(s["input"].as_u64().unwrap() as usize, 1, "input")
                .unwrap()
                .iter()
                .map(|t| f64::from(*t) * 24.0)
                .filter(|f| *f > 1e-3 && *f < len - 1e-3 && (f - f.round()).abs() < 1e-3)
                .count()
                >= 2
    })
}

/// (archive, entry, clip name) of the subject: the first manifest model
/// with a reversed state chain of 3 frames or more whose clip animation
/// keys a translation at two whole frames inside it.
fn subject(corpus: &Path, m: &Value) -> (String, String, String) {
    for model in m["models"].as_array().unwrap() {
        let (Some(file), Some(entry)) = (model["file"].as_str(), model["entry"].as_str()) else {
            continue;
        };
        let reversed: Vec<&str> = model["clips"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| {
                let (f0, f1) = (c["first"].as_f64().unwrap(), c["last"].as_f64().unwrap());
                c["kind"] == "state_chain" && f0 - f1 >= 3.0 && f1 >= 1.0
            })
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        if reversed.is_empty() {
            continue;
        }
        let doc = export(&corpus.join(file), entry);
        for a in doc.to_json()["animations"].as_array().unwrap() {
            let name = a["name"].as_str().unwrap_or("");
            if reversed.contains(&name) && has_interior_keys(&doc, a) {
                return (file.to_string(), entry.to_string(), name.to_string());
            }
        }
    }
    panic!("no model with a reversed state chain keyed at whole frames inside it");
}

fn run_blender(
    blender: &Path,
    bpy: Option<&Path>,
    args: [&Path; 2],
    entry: &str,
    clip: &str,
    work: &Path,
) -> Value {
    let tmp = work.parent().unwrap();
    common::blender_report(
        common::blender_script(blender, bpy, "clip_edits_test.py", tmp)
            .arg("--")
            .args(args)
            .arg(entry)
            .arg(clip)
            .arg(work),
        "CLIP_EDITS",
    )
}

/// Per glTF node: the glTF timeline's rotation keys minus its densified
/// ones, from msh2gltf's own export of the subject.
fn stored_rotation_keys(archive: &Path, entry: &str) -> Vec<(usize, usize)> {
    let doc = export(archive, entry);
    let j = &doc.to_json();
    let tl = &j["animations"][0];
    let dens = &tl["extras"]["msh"]["densified"];
    let mut out = Vec::new();
    for ch in tl["channels"].as_array().unwrap() {
        if ch["target"]["path"] != "rotation" {
            continue;
        }
        let node = ch["target"]["node"].as_u64().unwrap() as usize;
        let s = &tl["samplers"][ch["sampler"].as_u64().unwrap() as usize];
        let n = doc
            .accessor_def(s["input"].as_u64().unwrap() as usize)
            .unwrap()["count"]
            .as_u64()
            .unwrap() as usize;
        let extra = dens[node.to_string()].as_array().map_or(0, Vec::len);
        out.push((node, n - extra));
    }
    out
}

/// The written model moved `node` by +0.25 along z at `frame`, by at
/// most that along z elsewhere inside the clip's frames `[lo, hi]` (the
/// keys around the edit interpolate), and nothing else: every node at every
/// whole frame outside the clip, and every other node inside it, as the
/// base (1e-4).
fn check_clip_edit(base: &Model, written: &Path, node: usize, frame: f32, [lo, hi]: [f32; 2]) {
    let bytes = std::fs::read(written).unwrap_or_else(|_| panic!("{} written", written.display()));
    let m = msh::decode(&bytes, msh::Mode::Strict).unwrap().model;
    assert_eq!(m.positions, base.positions, "vertices unchanged");
    let layout = convention::detect(base, None, &Default::default())
        .conventions
        .quat;
    let (sb, sm) = (
        Sampler::new(base, layout).unwrap(),
        Sampler::new(&m, layout).unwrap(),
    );
    let name = written.display();
    for r in 0..base.nodes.len() {
        for f in 0..base.frame_count.max(1) {
            let f = f as f32;
            let (a, b) = (sb.node_pose(r, f), sm.node_pose(r, f));
            let dz = b.pos[2] - a.pos[2];
            let xy = (0..2).all(|k| (b.pos[k] - a.pos[k]).abs() <= 1e-4);
            if r == node && f == frame {
                assert!(
                    xy && (dz - 0.25).abs() <= 1e-3,
                    "{name}: node {r} frame {f}: {:?} vs {:?}",
                    b.pos,
                    a.pos
                );
            } else if r == node && f > lo && f < hi {
                assert!(
                    xy && (-1e-4..=0.25 + 1e-4).contains(&dz),
                    "{name}: node {r} frame {f}: {:?} vs {:?}",
                    b.pos,
                    a.pos
                );
            } else {
                assert!(
                    xy && dz.abs() <= 1e-4,
                    "{name}: node {r} frame {f} (outside the edit): {:?} vs {:?}",
                    b.pos,
                    a.pos
                );
            }
            assert!(
                (0..4).all(|k| (a.q[k] - b.q[k]).abs() <= 1e-4),
                "{name}: node {r} frame {f}: rotation changed"
            );
        }
    }
}

fn clip_edits(corpus: &Path, blender: &Path, bpy: Option<&Path>) {
    let m = common::manifest(corpus);
    let (file, entry, clip) = subject(corpus, &m);
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join(&file);
    std::fs::copy(corpus.join(&file), &archive).unwrap();
    let zip = tmp.path().join("addon.zip");
    common::package_addon(&zip);
    let work = tmp.path().join("work");
    let r = run_blender(blender, bpy, [&zip, &archive], &entry, &clip, &work);
    assert_eq!(r["errors"], serde_json::json!([]), "{r}");

    // Every clip an action on a muted NLA track named after it.
    let clips: Vec<&str> = m["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["entry"] == entry.as_str())
        .unwrap()["clips"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    let objects = r["objects"].as_object().unwrap();
    for c in &clips {
        let on_track = objects.values().any(|o| {
            o["tracks"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t[0] == *c && t[1] == true)
        });
        assert!(on_track, "clip {c}: no muted NLA track: {r}");
    }
    // One key per stored key: densified keys hidden.
    for (node, want) in stored_rotation_keys(&archive, &entry) {
        let o = objects
            .values()
            .find(|o| o["node"] == node)
            .unwrap_or_else(|| panic!("no object for node {node}"));
        assert_eq!(
            o["timeline_rotation_keys"].as_u64(),
            Some(want as u64),
            "node {node}: Blender's timeline rotation keys"
        );
    }

    let bytes = std::fs::read(&archive).unwrap();
    let a = nres::read(&bytes, nres::Mode::Strict).unwrap();
    let base_bytes = a.entries[source::find_entry(&a, &entry).unwrap()]
        .data
        .to_vec();
    let base = msh::decode(&base_bytes, msh::Mode::Strict).unwrap().model;
    let ex = &r["exports"];
    assert_eq!(ex["unedited.msh"], serde_json::json!(["FINISHED"]), "{r}");
    assert_eq!(
        std::fs::read(work.join("unedited.msh")).unwrap(),
        base_bytes
    );

    let e = &r["edit"];
    let node = e["node"].as_u64().unwrap() as usize;
    assert_eq!(ex["clip_nla.msh"], serde_json::json!(["FINISHED"]), "{r}");
    let (s, t) = (
        e["start"].as_f64().unwrap() as f32,
        e["end"].as_f64().unwrap() as f32,
    );
    let range = [s.min(t), s.max(t)];
    let f = e["nla_frame"].as_f64().unwrap() as f32;
    check_clip_edit(&base, &work.join("clip_nla.msh"), node, f, range);
    assert_eq!(
        ex["clip_active.msh"],
        serde_json::json!(["FINISHED"]),
        "{r}"
    );
    let f = e["active_frame"].as_f64().unwrap() as f32;
    check_clip_edit(&base, &work.join("clip_active.msh"), node, f, range);

    let refused = &ex["clip_outside.msh"];
    assert_eq!(refused[0], "ERROR", "{r}");
    let msg = refused[1].as_str().unwrap();
    assert!(msg.contains(&format!("{clip:?}")), "{msg}");
    println!(
        "{entry}: {} clips on NLA tracks; clip {clip} edited on its track and made active (keys at frames {} and {}), nothing outside the clip changed; a key past its end refused",
        clips.len(),
        e["nla_frame"],
        e["active_frame"]
    );
}

#[test]
#[ignore = "needs ../shared and Blender: cargo test -- --include-ignored"]
fn a_clip_edited_in_blender_reaches_its_frames_only() {
    let Some((corpus, blender)) = common::corpus_and_blender() else {
        return;
    };
    clip_edits(&corpus, &blender, None);
}

/// The same in Blender 5.x (PyPI `bpy`); skips (passing) without it.
#[test]
#[ignore = "needs ../shared and PyPI bpy (../shared/tools/blender-inspect --bpy): cargo test -- --include-ignored"]
fn a_clip_edited_in_bpy_5_reaches_its_frames_only() {
    let (Some((corpus, blender)), Some(py)) = (
        common::corpus_and_blender(),
        common::bpy_python(common::NEWEST_BPY),
    ) else {
        println!("SKIP: no ../shared, Blender or PyPI bpy");
        return;
    };
    clip_edits(&corpus, &blender, Some(&py));
}

/// The same in each Blender of the matrix (PyPI `bpy` 4.2 LTS, 4.5 LTS and
/// 5.0: [`common::matrix_bpys`]; README "Tested").
#[test]
#[ignore = "needs ../shared, Blender and the matrix's PyPI bpy (../shared/tools/blender-inspect --bpy=VERSION): cargo test -- --include-ignored"]
fn a_clip_edited_in_each_matrix_bpy_reaches_its_frames_only() {
    let Some((corpus, blender)) = common::corpus_and_blender() else {
        return;
    };
    common::for_each_matrix_bpy(|version, py| {
        println!("bpy {version}");
        clip_edits(&corpus, &blender, Some(py));
    });
}
