//! Issue 15: an unedited lightmapped model exported from Blender 3.4 comes
//! back byte-identical. Blender 3.4's glTF exporter writes the material
//! extra `"lit": true` as `1` (5.x writes `true`); both must mean a lit
//! batch, or every lightmap is dropped without a word.
//!
//! The retail model with the most lit batches (from `manifest.json`) goes
//! `msh2gltf` → Blender (`../shared/tools/blender-inspect --export`, the
//! import and export settings of the add-on's edit path) → `gltf2msh
//! --base`, and must equal the archive entry byte for byte.

mod common;

use std::process::Command;

use mshgltf::{nres, source};

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn lightmapped_model_from_blender_comes_back_byte_identical() {
    let Some(root) = common::corpus() else { return };
    if common::blender().is_none() {
        println!("SKIP: no Blender");
        return;
    }
    let man = common::manifest(&root);
    let rec = common::most_lit_retail_model(&man);
    let (arch, entry) = (
        root.join(rec["archive"].as_str().unwrap()),
        rec["entry"].as_str().unwrap(),
    );
    let spec = format!("{}:{entry}", arch.display());
    let tmp = tempfile::tempdir().unwrap();
    let (glb, rt, out) = (
        tmp.path().join("in.glb"),
        tmp.path().join("rt.glb"),
        tmp.path().join("out.msh"),
    );
    let o = Command::new(env!("CARGO_BIN_EXE_msh2gltf"))
        .args(["-q", &spec])
        .arg(&glb)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let inspect = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/tools/blender-inspect"
    );
    let o = Command::new(inspect)
        .arg("--export")
        .arg(&rt)
        .arg(&glb)
        .output()
        .unwrap();
    assert!(
        o.status.success() && rt.is_file(),
        "Blender export failed:\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let o = Command::new(env!("CARGO_BIN_EXE_gltf2msh"))
        .arg(&rt)
        .args(["--base", &spec, "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let bytes = std::fs::read(&arch).unwrap();
    let a = nres::read(&bytes, nres::Mode::Strict).unwrap();
    let e = source::find_entry(&a, entry).unwrap();
    assert!(
        std::fs::read(&out).unwrap() == a.entries[e].data,
        "{entry} from Blender differs from the base: {err}"
    );
}
