//! gltf2msh authoring (no base) on the glTF 2.0 samples of Debian's
//! `assimp-testmodels` package (`/usr/share/assimp/models/glTF2`; skipped
//! when the folder is missing). Every file either converts into a model that
//! passes strict validation and reads back strictly, or is refused with a
//! rule id; nothing panics. Prints a converted/refused table.

use std::path::{Path, PathBuf};

use mshgltf::gltf_import::{self, AuthorOptions};
use mshgltf::msh;

const DIR: &str = "/usr/share/assimp/models/glTF2";

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else if p
            .extension()
            .is_some_and(|x| x.eq_ignore_ascii_case("gltf") || x.eq_ignore_ascii_case("glb"))
        {
            out.push(p);
        }
    }
}

/// `Ok(summary)` or `Err(rule, message)`.
fn author(path: &Path) -> Result<String, (String, String)> {
    let doc = gltf_import::load_path(path).map_err(|e| (e.rule.to_string(), e.to_string()))?;
    let a = gltf_import::author(&doc, &AuthorOptions::default())
        .map_err(|e| (e.rule.to_string(), e.to_string()))?;
    msh::validate(&a.model).unwrap_or_else(|e| panic!("{}: invalid: {e}", path.display()));
    let bytes = msh::encode(&a.model).unwrap_or_else(|e| panic!("{}: encode: {e}", path.display()));
    msh::decode(&bytes, msh::Mode::Strict)
        .unwrap_or_else(|e| panic!("{}: does not read back: {e}", path.display()));
    a.wear
        .to_bytes()
        .unwrap_or_else(|e| panic!("{}: WEAR: {e}", path.display()));
    Ok(format!(
        "{} nodes, {} slots, {} vertices, {} triangles, {} frames, {} materials",
        a.report.nodes,
        a.report.slots,
        a.report.vertices,
        a.report.triangles,
        a.report.frame_count,
        a.report.materials.len()
    ))
}

#[test]
#[ignore = "needs Debian assimp-testmodels: cargo test -- --include-ignored"]
fn assimp_gltf2_samples_convert_or_are_refused_with_a_rule() {
    let dir = Path::new(DIR);
    if !dir.is_dir() {
        println!("SKIP: {DIR} not found (apt-get install assimp-testmodels)");
        return;
    }
    let mut files = Vec::new();
    walk(dir, &mut files);
    assert!(!files.is_empty(), "no glTF files under {DIR}");
    let mut converted = 0;
    let mut refused = 0;
    let mut results = Vec::new();
    println!("{:<70} | result", "file");
    for f in &files {
        let rel = f.strip_prefix(dir).unwrap_or(f).display().to_string();
        let r = std::panic::catch_unwind(|| author(f));
        let r = match r {
            Ok(r) => r,
            Err(_) => panic!("{rel}: panicked"),
        };
        match &r {
            Ok(s) => {
                converted += 1;
                println!("{rel:<70} | converted: {s}");
            }
            Err((rule, msg)) => {
                refused += 1;
                let short: String = msg.chars().take(110).collect();
                println!("{rel:<70} | refused [{rule}]: {short}");
                assert!(
                    rule == "io" || (rule.starts_with("gltf.") || rule.starts_with("msh.")),
                    "{rel}: refusal without a rule id: {msg}"
                );
            }
        }
        results.push((rel, r));
    }
    println!(
        "assimp glTF2 samples: {} files, {converted} converted, {refused} refused",
        files.len()
    );
    // What the samples hold decides the outcome where it is known.
    let expect = |name: &str, want: Result<(), &str>| {
        let Some((_, r)) = results.iter().find(|(n, _)| n.ends_with(name)) else {
            return;
        };
        match (r, want) {
            (Ok(_), Ok(())) => {}
            (Err((rule, _)), Err(w)) => assert_eq!(rule, w, "{name}"),
            (r, w) => panic!("{name}: {r:?}, expected {w:?}"),
        }
    };
    expect("BoxTextured-glTF-Binary/BoxTextured.glb", Ok(()));
    expect("BoxTextured-glTF-Embedded/BoxTextured.gltf", Ok(()));
    expect("simple_skin/simple_skin.gltf", Err("gltf.skin"));
    expect(
        "AnimatedMorphCube-glTF/AnimatedMorphCube.gltf",
        Err("gltf.morph"),
    );
    expect(
        "Mesh_PrimitiveMode/Mesh_PrimitiveMode_00.gltf",
        Err("gltf.mode"),
    );
    expect(
        "Mesh_PrimitiveMode/Mesh_PrimitiveMode_01.gltf",
        Err("gltf.mode"),
    );
    expect("Mesh_PrimitiveMode/Mesh_PrimitiveMode_05.gltf", Ok(()));
    expect("Mesh_PrimitiveMode/Mesh_PrimitiveMode_06.gltf", Ok(()));
    expect("RecursiveNodes/RecursiveNodes.gltf", Err("gltf.hierarchy"));
    expect("draco/2CylinderEngine.gltf", Err("gltf.extension"));
    assert!(converted > 0);
}
