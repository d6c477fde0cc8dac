//! The Blender add-on (`blender/io_scene_parkan`) in a real, headless
//! Blender: `scripts/package_addon.sh` builds the zip with this build's
//! converters, `tests/blender/addon_test.py` installs it into a temporary
//! user scripts folder, imports an animated, textured corpus model through
//! File › Import, exports it unedited and with one vertex moved through File ›
//! Export, checks the lightmap wiring on a constructed glTF and renders a
//! PNG. Here the results are checked against the project's own decoder.
//!
//! Skips (passing) when `../shared/corpus` or Blender is absent. Blender is
//! `$BLENDER`, else `blender` on PATH, else `/usr/bin/blender`; the same
//! runs in the newest PyPI `bpy` and in each Blender of the matrix
//! (`common::bpy_python`, `common::matrix_bpys`).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mshgltf::msh::{self, Model};
use mshgltf::{nres, source};

/// The model the test edits: animated (4 animated nodes, 10 frames) and
/// textured, 6 nodes, 192 vertices.
const ARCHIVE: &str = "animals.rlb";
const ENTRY: &str = "a_bird_12.msh";
/// The edit the Blender script makes: +0.25 on z (Blender local = game axes).
const DZ: f32 = 0.25;

/// Triangles of each Res2 slot as corner positions (bit patterns), sorted:
/// a multiset that ignores vertex order, sharing and triangle order.
fn slot_triangles(m: &Model) -> Vec<Vec<[[u32; 3]; 3]>> {
    m.slots
        .iter()
        .map(|s| {
            let mut tris = Vec::new();
            let (b0, bn) = (s.batch_start as usize, s.batch_count as usize);
            for b in &m.batches[b0..b0 + bn] {
                let idx = &m.indices
                    [b.index_start as usize..b.index_start as usize + b.index_count as usize];
                for t in idx.chunks_exact(3) {
                    let corner = |i: u16| {
                        let p = m.positions[b.base_vertex as usize + i as usize];
                        p.map(f32::to_bits)
                    };
                    // Rotate so that the smallest corner comes first (winding kept).
                    let c = [corner(t[0]), corner(t[1]), corner(t[2])];
                    let k = (0..3).min_by_key(|&k| c[k]).unwrap();
                    tris.push([c[k], c[(k + 1) % 3], c[(k + 2) % 3]]);
                }
            }
            tris.sort();
            tris
        })
        .collect()
}

fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let be = |o: usize| u32::from_be_bytes(bytes[o..o + 4].try_into().unwrap());
    (be(16), be(20))
}

/// Paths of one add-on run: the zip, the archive imported from, the work
/// folder the script writes into and the render.
struct Run {
    tmp: tempfile::TempDir,
    zip: PathBuf,
    archive: PathBuf,
    work: PathBuf,
    png: PathBuf,
}

/// Runs `tests/blender/addon_test.py` in `blender` (or in `bpy_python`)
/// and returns its `ADDON_TEST {...}` report; panics when it prints none.
fn run_addon_test(
    blender: &Path,
    bpy_python: Option<&Path>,
    corpus: &Path,
    run: &Run,
) -> serde_json::Value {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = run.tmp.path();
    common::blender_report(
        common::blender_script(blender, bpy_python, "addon_test.py", tmp)
            .arg("--")
            .arg(&run.zip)
            .arg(&run.archive)
            .arg(ENTRY)
            .arg(&run.work)
            .arg("--render")
            .arg(&run.png)
            .arg("--demo")
            .arg(root.join("samples/demo"))
            .arg("--bad")
            .arg(corpus.join("bad/index_out_of_range.msh")),
        "ADDON_TEST",
    )
}

/// Checks the add-on was installed into the temporary user scripts folder,
/// runs its own binaries and added both menu entries.
fn check_installed(r: &serde_json::Value, tmp: &Path) {
    // Installed into the temporary user scripts folder, running its own binaries.
    let addon_dir = tmp.join("scripts/addons/io_scene_parkan");
    assert_eq!(
        r["addon_file"].as_str().unwrap(),
        addon_dir.join("__init__.py").to_str().unwrap()
    );
    for b in ["msh2gltf", "gltf2msh"] {
        assert_eq!(
            r[b].as_str().unwrap(),
            addon_dir.join("bin").join(b).to_str().unwrap()
        );
    }
    assert_eq!(r["menu_import"], true);
    assert_eq!(r["menu_export"], true);
}

/// Checks the entry list and the imported objects, animation, materials
/// and collection extras against the archive and the manifest.
fn check_import(r: &serde_json::Value, corpus: &Path, archive: &Path, a: &nres::Archive) {
    // The entry list is the archive's model entries.
    let names: Vec<String> = source::model_entries(a)
        .iter()
        .map(|&i| source::decode_name(a.entries[i].name))
        .collect();
    assert_eq!(r["entries"], serde_json::json!(names));

    // Objects, materials and animation as the manifest describes the model.
    let manifest = common::manifest(corpus);
    let mm = manifest["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["archive"] == ARCHIVE && m["entry"] == ENTRY)
        .expect("model in the manifest");
    let counts = &mm["counts"];
    assert_eq!(r["import_result"], serde_json::json!(["FINISHED"]));
    // One object per node, plus one empty per control point (issue 18).
    let points = mm["control_points"].as_array().map_or(0, Vec::len) as u64;
    assert_eq!(
        r["objects"].as_u64().unwrap(),
        counts["nodes"].as_u64().unwrap() + points
    );
    assert_eq!(
        r["animated_objects"].as_array().unwrap().len() as u64,
        counts["animated_nodes"].as_u64().unwrap()
    );
    assert!(counts["animated_nodes"].as_u64().unwrap() > 0);
    let last = counts["frame_count"].as_u64().unwrap() - 1;
    assert_eq!(r["frame_range"], serde_json::json!([0, last]));
    assert_eq!(r["fps"], 24);
    assert!(!r["materials"].as_array().unwrap().is_empty());
    assert_eq!(r["materials_with_image"], r["materials"]);
    let src = format!("{}:{ENTRY}", archive.display());
    assert_eq!(r["collection_msh"]["source"], src.as_str());
    assert_eq!(r["collection_msh"]["sha256"], mm["sha256"]);
}

/// Checks the edited export: exactly the moved vertex's corners moved, in
/// its slot only, and everything else of the model is the base's.
fn check_edit(r: &serde_json::Value, base_bytes: &[u8], work: &Path) {
    // The edit: exactly the moved vertex's corners moved, in its slot only.
    let base = msh::decode(base_bytes, msh::Mode::Strict).unwrap().model;
    let edited_bytes = std::fs::read(work.join("edited.msh")).unwrap();
    let edited = msh::decode(&edited_bytes, msh::Mode::Strict).unwrap().model;
    let mv = &r["moved"];
    let f = |v: &serde_json::Value| -> [f32; 3] {
        let a = v.as_array().unwrap();
        [0, 1, 2].map(|i| a[i].as_f64().unwrap() as f32)
    };
    let (old, new) = (f(&mv["old"]), f(&mv["new"]));
    assert_eq!(new, [old[0], old[1], old[2] + DZ]);
    let slot: usize = mv["mesh"]
        .as_str()
        .unwrap()
        .strip_prefix("slot")
        .unwrap()
        .parse()
        .unwrap();
    check_moved_corners(&base, &edited, slot, old, new);
    // Everything else of the model is the base's.
    assert_eq!(edited.nodes, base.nodes, "Res1");
    assert_eq!(edited.batches.len(), base.batches.len(), "Res13 batches");
    let materials = |m: &Model| -> BTreeMap<usize, u16> {
        m.batches
            .iter()
            .enumerate()
            .map(|(i, b)| (i, b.material_index))
            .collect()
    };
    assert_eq!(materials(&edited), materials(&base));
    assert_eq!(edited.keys, base.keys, "Res8 keys");
    assert_eq!(edited.frame_map, base.frame_map, "Res19");
}

/// Checks every slot but `slot` kept its triangles and, in `slot`, moving
/// the corners at `new` back to `old` gives the base's triangles.
fn check_moved_corners(base: &Model, edited: &Model, slot: usize, old: [f32; 3], new: [f32; 3]) {
    let (tb, te) = (slot_triangles(base), slot_triangles(edited));
    assert_eq!(tb.len(), te.len(), "slot count");
    let (ob, nb) = (old.map(f32::to_bits), new.map(f32::to_bits));
    let mut moved_corners = 0;
    for (s, (b, e)) in tb.iter().zip(&te).enumerate() {
        if s != slot {
            assert_eq!(b, e, "slot {s} changed");
            continue;
        }
        // Corners at the new position go back to the old one: that must give
        // the base's triangles (Blender splits a position into several
        // vertices by normal and UV, so only some of its corners moved).
        assert!(
            !b.iter().flatten().any(|c| *c == nb),
            "new position already in the base"
        );
        let mut back: Vec<[[u32; 3]; 3]> = e
            .iter()
            .map(|t| {
                let mut t = *t;
                for c in &mut t {
                    if *c == nb {
                        *c = ob;
                        moved_corners += 1;
                    }
                }
                let k = (0..3).min_by_key(|&k| t[k]).unwrap();
                [t[k], t[(k + 1) % 3], t[(k + 2) % 3]]
            })
            .collect();
        back.sort();
        assert_eq!(&back, b, "slot {s}: only the moved vertex may differ");
    }
    assert!(moved_corners > 0, "the moved vertex is in no triangle");
}

/// Checks the lightmap wiring (multiplied into Base Color through UV map 2)
/// and that the export bypass leaves the material as imported.
fn check_lightmap(r: &serde_json::Value) {
    // The lightmap is multiplied into Base Color, read through UV map 2, and
    // the add-on's export bypass leaves the exported material as imported.
    let lm = &r["lightmap"];
    assert_eq!(lm["wired"], true);
    assert_eq!(lm["blend_type"], "MULTIPLY");
    assert_eq!(lm["base_from_mix"], true);
    assert_eq!(lm["a_image"], "WALL_TEX");
    assert_eq!(lm["b_image"], "LM007.0");
    assert_eq!(lm["b_uv_map"], lm["uv_layers"][1]);
    assert_eq!(lm["bypassed_base_from"], "TEX_IMAGE");
    assert_eq!(lm["restored"], true);
    assert_eq!(lm["export_base_texcoord"], 0);
    assert_eq!(lm["export_occlusion_texcoord"], 1);
}

/// Checks the refusals reach the UI and write nothing: a colour edit with
/// --base, a broken model, an ambiguous export.
fn check_refusals(r: &serde_json::Value, work: &Path) {
    // A colour edit is written (issue 23): the add-on passes the imported
    // model's game folder, gltf2msh writes a Material.lib copy beside the
    // output (tests/shared_blender_retexture.rs checks its bytes).
    let ce = &r["colour_edit"];
    assert_eq!(ce["result"], serde_json::json!(["FINISHED"]), "{ce}");
    assert!(work.join("recoloured.msh").exists());
    assert!(work.join("Material.lib").exists());

    // A broken model: the converter's message (file, stream, record, rule) reaches the UI.
    let bad = r["bad"]["error"]
        .as_str()
        .expect("the bad import must fail");
    assert!(
        bad.contains("index_out_of_range.msh: Res13 record 0: msh.index_range"),
        "{bad}"
    );

    // Two imported models and none active: the export asks which one, writes nothing.
    let amb = r["ambiguous"]["error"]
        .as_str()
        .expect("an ambiguous export must fail");
    assert!(amb.contains("2 imported models"), "{amb}");
    assert!(!work.join("ambiguous.msh").exists());
}

/// Checks the game-folder import (folder > archive > model collections) and
/// the new model's exports: bare with its WEAR, refused without replace,
/// replaced, and into a copy of the archive.
fn check_folder_and_new_model(r: &serde_json::Value, work: &Path) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // A whole game folder: folder > archive > model collections.
    assert_eq!(r["folder"]["result"], serde_json::json!(["FINISHED"]));
    let demo = root.join("samples/demo").canonicalize().unwrap();
    let tower = &r["folder"]["tree"]["demo"]["TOWER"];
    assert_eq!(tower["objects"], 4);
    assert_eq!(
        tower["msh"].as_str().unwrap(),
        format!("{}:TOWER.msh", demo.join("demo.rlb").display())
    );
    // ... exported as a new model (bare, with its WEAR table) and into a copy of the archive.
    assert_eq!(r["new"]["result"], serde_json::json!(["FINISHED"]));
    // Issue 15: no --force on the user's behalf; the refusal reaches the UI.
    let again = &r["new_again"];
    assert_ne!(again["result"], serde_json::json!(["FINISHED"]), "{again}");
    assert!(
        again.to_string().contains("Replace existing file") || again["result"][0] == "CANCELLED",
        "{again}"
    );
    assert_eq!(again["kept"], serde_json::json!(true));
    assert_eq!(r["new_replaced"]["result"], serde_json::json!(["FINISHED"]));
    let new = msh::decode(
        &std::fs::read(work.join("new.msh")).unwrap(),
        msh::Mode::Strict,
    )
    .unwrap()
    .model;
    assert_eq!(new.nodes.len(), 4);
    assert!(work.join("new.wea").is_file());
    assert_eq!(r["new_into"]["result"], serde_json::json!(["FINISHED"]));
    let into = std::fs::read(work.join("new_into.rlb")).unwrap();
    let into = nres::read(&into, nres::Mode::Strict).unwrap();
    let old_demo = std::fs::read(demo.join("demo.rlb")).unwrap();
    let old_demo = nres::read(&old_demo, nres::Mode::Strict).unwrap();
    let tower_new = into.find(b"TOWER.msh").unwrap();
    let tower_old = old_demo.find(b"TOWER.msh").unwrap();
    assert!(into.entries[tower_new].data == old_demo.entries[tower_old].data);
    let added = into
        .find(b"NEWMODEL.msh")
        .expect("NEWMODEL.msh in the archive copy");
    assert!(into.entries[added].data == std::fs::read(work.join("new.msh")).unwrap());
    assert!(into.find(b"NEWMODEL.wea").is_some());
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn addon_imports_edits_exports_and_renders_in_blender() {
    let Some((corpus, blender)) = common::corpus_and_blender() else {
        return;
    };
    addon_in(&corpus, &blender, None);
}

/// The same in the newest Blender CI tests (PyPI `bpy`, [`common::NEWEST_BPY`]).
#[test]
#[ignore = "needs ../shared and PyPI bpy (../shared/tools/blender-inspect --bpy=VERSION): cargo test -- --include-ignored"]
fn addon_imports_edits_exports_and_renders_in_bpy_5() {
    let (Some((corpus, blender)), Some(py)) = (
        common::corpus_and_blender(),
        common::bpy_python(common::NEWEST_BPY),
    ) else {
        println!("SKIP: no ../shared, Blender or PyPI bpy");
        return;
    };
    addon_in(&corpus, &blender, Some(&py));
}

/// The same in each Blender of the matrix (PyPI `bpy` 4.2 LTS, 4.5 LTS and
/// 5.0: [`common::matrix_bpys`]; README "Tested").
#[test]
#[ignore = "needs ../shared, Blender and the matrix's PyPI bpy (../shared/tools/blender-inspect --bpy=VERSION): cargo test -- --include-ignored"]
fn addon_imports_edits_exports_and_renders_in_each_matrix_bpy() {
    let Some((corpus, blender)) = common::corpus_and_blender() else {
        return;
    };
    common::for_each_matrix_bpy(|version, py| {
        println!("bpy {version}");
        addon_in(&corpus, &blender, Some(py));
    });
}

/// The add-on test (module docs) in `blender`, or in the Python `bpy`.
fn addon_in(corpus: &Path, blender: &Path, bpy: Option<&Path>) {
    let tmp = tempfile::tempdir().unwrap();
    let zip = tmp.path().join("io_scene_parkan.zip");
    common::package_addon(&zip);
    let run = Run {
        zip,
        archive: corpus.join(ARCHIVE).canonicalize().unwrap(),
        work: tmp.path().join("work"),
        png: tmp.path().join("render.png"),
        tmp,
    };
    let r = run_addon_test(blender, bpy, corpus, &run);
    assert_eq!(r["errors"], serde_json::json!([]), "Blender side: {r:#}");
    println!("Blender {}", r["blender"]);
    check_installed(&r, run.tmp.path());

    let arch_bytes = std::fs::read(&run.archive).unwrap();
    let a = nres::read(&arch_bytes, nres::Mode::Strict).unwrap();
    check_import(&r, corpus, &run.archive, &a);

    // The unedited trip gives the base back byte for byte (bare and archive copy).
    let ei = a.find(ENTRY.as_bytes()).unwrap();
    let base_bytes = a.entries[ei].data;
    assert!(std::fs::read(run.work.join("unedited.msh")).unwrap() == base_bytes);
    assert!(std::fs::read(run.work.join("unedited.rlb")).unwrap() == arch_bytes);
    check_edit(&r, base_bytes, &run.work);
    check_lightmap(&r);
    check_refusals(&r, &run.work);
    check_folder_and_new_model(&r, &run.work);

    // A picture.
    assert!(
        r["render"]["engine"].is_string(),
        "no render engine worked: {}",
        r["render"]
    );
    let img = std::fs::read(&run.png).unwrap();
    assert_eq!(png_size(&img), (480, 320));
}
