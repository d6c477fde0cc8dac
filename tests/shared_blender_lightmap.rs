//! Blender shows what the game draws for a lightmapped building
//! (format-notes §6 R5, gltf-mapping.md "Materials and textures"):
//! `msh2gltf` writes the lit batches' lightmap as the material's
//! `occlusionTexture` on `TEXCOORD_1`, and `scripts/blender_import_all.py`
//! multiplies it into the base colour. Checked in a real headless Blender:
//! every glTF material with an occlusion texture, and only those, gets the
//! lightmap Mix node (MULTIPLY, fed by the lightmap image, feeding the
//! Principled BSDF's Base Color).
//!
//! Skips (prints a line) without ../shared/corpus or without Blender
//! (`common::blender`).

mod common;

use std::process::Command;

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn lightmapped_building_shows_its_lightmap_in_blender() {
    let Some((root, blender)) = common::corpus_and_blender() else {
        return;
    };
    let man = common::manifest(&root);
    // The retail lightmapped model with the most lit batches.
    let rec = common::most_lit_retail_model(&man);
    let spec = format!(
        "{}:{}",
        root.join(rec["file"].as_str().unwrap()).display(),
        rec["entry"].as_str().unwrap()
    );
    let dir = tempfile::tempdir().unwrap();
    let glb = dir.path().join("lit.glb");
    let st = Command::new(env!("CARGO_BIN_EXE_msh2gltf"))
        .args([spec.as_str(), glb.to_str().unwrap(), "-q"])
        .status()
        .unwrap();
    assert!(st.success(), "msh2gltf {spec}");
    let doc = gltf::Gltf::open(&glb).unwrap();
    let mut want: Vec<String> = doc
        .materials()
        .filter(|m| m.occlusion_texture().is_some_and(|t| t.tex_coord() == 1))
        .map(|m| m.name().unwrap().to_string())
        .collect();
    want.sort();
    assert!(!want.is_empty(), "{spec}: no lightmapped material");

    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/blender_import_all.py");
    let out = Command::new(blender)
        .args(["-b", "--factory-startup", "--python", script, "--"])
        .arg(dir.path())
        .arg(dir.path().join("all.blend"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find_map(|l| l.find("IMPORT_SUMMARY ").map(|i| &l[i + 15..]))
        .unwrap_or_else(|| panic!("no IMPORT_SUMMARY:\n{stdout}"));
    let summary: serde_json::Value = serde_json::from_str(line).unwrap();
    let got: Vec<String> = summary["lightmap_materials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    println!("{spec}: lightmap wired in Blender for {got:?}");
    assert_eq!(
        got, want,
        "{spec}: materials with the lightmap multiplied in"
    );
    assert_eq!(summary["models"], 1);
}
