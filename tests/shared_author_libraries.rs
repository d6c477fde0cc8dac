//! gltf2msh `--game-dir` with real inputs (issue 9 acceptance): Debian's
//! assimp glTF 2.0 samples (`/usr/share/assimp/models/glTF2`, package
//! `assimp-testmodels`; external PNG, GLB and data-URI images, RGBA and
//! palette PNGs, a non-power-of-two image) are authored into a copy of the
//! shared corpus's `Material.lib` and `Textures.lib`. Every corpus entry
//! stays byte-identical; `msh2gltf` of the result shows the source pixels
//! (resized to power-of-two sides, then quantised: ±1 per channel) and
//! colours. Skips when the corpus or the samples are absent.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use mshgltf::gltf_import::{self, materials};
use mshgltf::material::texm::{self, Texm};
use mshgltf::nres;

use common::{max_diff, order_args};

const SAMPLES: &str = "/usr/share/assimp/models/glTF2";
const MODELS: [&str; 4] = [
    "BoxTextured-glTF/BoxTextured.gltf",
    "BoxTextured-glTF-Binary/BoxTextured.glb",
    "BoxTextured-glTF-Embedded/BoxTextured.gltf",
    "textureTransform/TextureTransformTest.gltf",
];

fn run(exe: &str, args: &[&str]) {
    let o = Command::new(exe).args(args).output().unwrap();
    assert!(
        o.status.success(),
        "{exe} {args:?}: exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn pow2(d: u32) -> u32 {
    // Nearest power of two in log scale (the documented rule).
    let lo = 1u32 << (31 - d.leading_zeros());
    if lo == d || u64::from(d) * u64::from(d) < u64::from(lo) * u64::from(2 * lo) {
        lo
    } else {
        2 * lo
    }
}

/// Authors `input` with gltf2msh into a new `out/units.rlb` beside copies of
/// the corpus's libraries in `out/`; returns (out folder, new archive).
fn author_into_copies(
    corpus: &Path,
    input: &Path,
    tmp: &Path,
    g_order: &[&str],
) -> (PathBuf, PathBuf) {
    let game = tmp.join("GAME");
    std::fs::create_dir_all(&game).unwrap();
    for f in ["Material.lib", "Textures.lib"] {
        std::fs::copy(corpus.join(f), game.join(f)).unwrap();
    }
    let units = tmp.join("units.rlb");
    std::fs::write(&units, nres::write(&[]).unwrap()).unwrap();
    let out = tmp.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let rlb = out.join("units.rlb");
    let mut args = vec![
        s(input),
        "--into".into(),
        s(&units),
        "--name".into(),
        "NEW".into(),
        "-o".into(),
        s(&rlb),
        "--game-dir".into(),
        s(&game),
    ];
    args.extend(g_order.iter().map(|x| x.to_string()));
    run(
        env!("CARGO_BIN_EXE_gltf2msh"),
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    (out, rlb)
}

/// A path as an argument string.
fn s(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

/// Checks the corpus entries are unchanged and first in both library copies
/// and that each gained entries; returns the new Texm entries (name, bytes).
fn check_corpus_entries_kept(corpus: &Path, out: &Path, model: &str) -> Vec<(String, Vec<u8>)> {
    // Corpus entries unchanged, in place; the new ones appended.
    let mut new_tex = Vec::new();
    for f in ["Material.lib", "Textures.lib"] {
        let old = std::fs::read(corpus.join(f)).unwrap();
        let new = std::fs::read(out.join(f)).unwrap();
        let o = nres::read(&old, nres::Mode::Strict).unwrap();
        let n = nres::read(&new, nres::Mode::Strict).unwrap();
        assert_eq!(n.entries[..o.entries.len()], o.entries[..], "{model}: {f}");
        assert!(
            n.entries.len() > o.entries.len(),
            "{model}: {f} gained nothing"
        );
        if f == "Textures.lib" {
            new_tex = n.entries[o.entries.len()..]
                .iter()
                .map(|e| {
                    (
                        String::from_utf8_lossy(e.name).into_owned(),
                        e.data.to_vec(),
                    )
                })
                .collect();
        }
    }
    new_tex
}

/// One model's source glTF, its msh2gltf export and what the checks of a
/// material need beside them.
struct Back<'a> {
    model: &'a str,
    input: &'a Path,
    src: gltf_import::GltfFile,
    back: gltf_import::GltfFile,
    new_tex: &'a [(String, Vec<u8>)],
    order: &'a texm::ChannelOrder,
}

/// Checks source material `i` against its export (when used): colour within
/// 0.5/255, and if textured, pixels within 1 of the resized, quantised
/// source. Returns whether a texture was compared.
fn check_material(b: &Back, i: usize, m: &serde_json::Value) -> bool {
    let (model, src, back) = (b.model, &b.src, &b.back);
    let back_tree = back.to_json();
    let back_mats = back_tree["materials"].as_array().unwrap();
    let Some(bm) = back_mats
        .iter()
        .find(|x| x["extras"]["msh"]["material_index"].as_u64() == Some(i as u64))
    else {
        return false; // not used by any primitive
    };
    let c = m["pbrMetallicRoughness"]["baseColorFactor"]
        .as_array()
        .map_or([1.0; 4], |c| {
            std::array::from_fn(|k| c[k].as_f64().unwrap())
        });
    let bc = &bm["pbrMetallicRoughness"]["baseColorFactor"];
    for k in 0..3 {
        let d = (bc[k].as_f64().unwrap() - c[k]).abs();
        assert!(
            d <= 0.5 / 255.0 + 1e-6,
            "{model} material {i}: colour {bc} vs {c:?}"
        );
    }
    let Some(t) = m["pbrMetallicRoughness"]["baseColorTexture"]["index"].as_u64() else {
        return false;
    };
    let img = src.to_json()["textures"][t as usize]["source"]
        .as_u64()
        .unwrap() as usize;
    let bytes = materials::image_bytes(src, b.input.parent(), img).unwrap();
    let source = image::load_from_memory(&bytes).unwrap().to_rgba8();
    let (w, h) = source.dimensions();
    let (tw, th) = (pow2(w).min(1024), pow2(h).min(1024));
    let sized = if (tw, th) == (w, h) {
        source
    } else {
        image::imageops::resize(&source, tw, th, image::imageops::FilterType::Triangle)
    };
    let bt = bm["pbrMetallicRoughness"]["baseColorTexture"]["index"]
        .as_u64()
        .unwrap_or_else(|| panic!("{model} material {i}: exported untextured"));
    let bimg = back.to_json()["textures"][bt as usize]["source"]
        .as_u64()
        .unwrap() as usize;
    let png = materials::image_bytes(back, None, bimg).unwrap();
    let shown = image::load_from_memory(&png).unwrap().to_rgba8();
    // The Texm entry's format; quantise the source the same way.
    let name = bm["extras"]["msh"]["name"].as_str().unwrap_or("");
    let fmt = b
        .new_tex
        .iter()
        .map(|(_, d)| Texm::parse(d).unwrap())
        .find(|t| (t.width, t.height) == (tw, th))
        .map(|t| t.format)
        .unwrap_or_else(|| panic!("{model}: no {tw} x {th} texture for {name}"));
    let want = Texm::parse(&texm::encode(&sized, fmt, b.order, 1, 32).unwrap())
        .unwrap()
        .decode_with(b.order, 0)
        .unwrap();
    let d = max_diff(&shown, &want);
    assert!(
        d <= 1,
        "{model} material {i} ({name}): pixels differ by {d}"
    );
    true
}

#[test]
#[ignore = "needs ../shared and Debian assimp-testmodels: cargo test -- --include-ignored"]
fn shared_assimp_textures_into_corpus_libraries() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    if !Path::new(SAMPLES).is_dir() {
        println!("SKIP: {SAMPLES} not found (apt package assimp-testmodels)");
        return;
    }
    let (g_order, m_order) = order_args();
    let order = if g_order.is_empty() {
        texm::RETAIL_ORDER
    } else {
        texm::ARGB_ORDER
    };
    for model in MODELS {
        let input = Path::new(SAMPLES).join(model);
        let tmp = tempfile::tempdir().unwrap();
        let (out, rlb) = author_into_copies(&corpus, &input, tmp.path(), &g_order);
        let new_tex = check_corpus_entries_kept(&corpus, &out, model);
        // msh2gltf of the result.
        let glb = out.join("back.glb");
        let mut args = vec![format!("{}:NEW.msh", s(&rlb)), s(&glb)];
        args.extend(m_order.iter().map(|x| x.to_string()));
        run(
            env!("CARGO_BIN_EXE_msh2gltf"),
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
        );
        let b = Back {
            model,
            input: &input,
            src: gltf_import::load_path(&input).unwrap(),
            back: gltf_import::parse(&std::fs::read(&glb).unwrap(), None).unwrap(),
            new_tex: &new_tex,
            order: &order,
        };
        let src_tree = b.src.to_json();
        let src_mats = src_tree["materials"].as_array().unwrap();
        let mut checked = 0;
        for (i, m) in src_mats.iter().enumerate() {
            if check_material(&b, i, m) {
                checked += 1;
            }
        }
        assert!(checked > 0, "{model}: no textured material checked");
        println!(
            "{model}: {checked} textured materials match; new textures {:?}",
            new_tex.iter().map(|t| &t.0).collect::<Vec<_>>()
        );
    }
}
