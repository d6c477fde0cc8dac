//! Retexture and recolour in Blender (issue 23): a material of a corpus
//! model recoloured and its texture painted in Blender 3.4.1, exported
//! through the add-on (mode "Edit of the imported model", archive copy);
//! the add-on passes the imported model's game folder, gltf2msh writes
//! copies of Material.lib and Textures.lib beside the output, and msh2gltf
//! of the result with those libraries shows the new colour and pixels,
//! every other library entry keeping its bytes.

mod common;

use std::path::Path;

const ARCHIVE: &str = "static.rlb";
const ENTRY: &str = "s_rock_45.msh";
const MATERIAL: &str = "LEAF.3";
/// LEAF.3's texture (8888, 64 x 32, no mips).
const TEXTURE: &str = "TX05_8888.0";

/// msh2gltf's GLB of `archive:ENTRY` with the libraries of `game`: (JSON, BIN).
fn export(archive: &Path, game: &Path, glb: &Path) -> (serde_json::Value, Vec<u8>) {
    let o = common::msh2gltf()
        .arg(format!("{}:{ENTRY}", archive.display()))
        .arg(glb)
        .arg("--game-dir")
        .arg(game)
        .arg("-q")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    let b = std::fs::read(glb).unwrap();
    let u = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap()) as usize;
    let jl = u(12);
    let bl = u(20 + jl);
    (
        serde_json::from_slice(&b[20..20 + jl]).unwrap(),
        b[28 + jl..28 + jl + bl].to_vec(),
    )
}

/// The material named `name` and the decoded base colour image of it.
fn material(json: &serde_json::Value, bin: &[u8], name: &str) -> (Vec<f64>, image::RgbaImage) {
    let m = json["materials"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no material {name}"));
    let c = m["pbrMetallicRoughness"]["baseColorFactor"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let t = m["pbrMetallicRoughness"]["baseColorTexture"]["index"]
        .as_u64()
        .unwrap() as usize;
    let i = json["textures"][t]["source"].as_u64().unwrap() as usize;
    assert_eq!(json["images"][i]["name"], TEXTURE);
    let v = &json["bufferViews"][json["images"][i]["bufferView"].as_u64().unwrap() as usize];
    let off = v["byteOffset"].as_u64().unwrap_or(0) as usize;
    let len = v["byteLength"].as_u64().unwrap() as usize;
    let img = image::load_from_memory(&bin[off..off + len])
        .unwrap()
        .into_rgba8();
    (c, img)
}

/// Entries of the NRes `a` and `b` that differ (by name).
fn changed_entries(a: &Path, b: &Path) -> Vec<String> {
    let (a, b) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
    let a = mshgltf::nres::read(&a, mshgltf::nres::Mode::Strict).unwrap();
    let b = mshgltf::nres::read(&b, mshgltf::nres::Mode::Strict).unwrap();
    assert_eq!(a.entries.len(), b.entries.len());
    a.entries
        .iter()
        .zip(&b.entries)
        .filter(|(x, y)| x != y)
        .map(|(x, _)| String::from_utf8_lossy(x.name).into_owned())
        .collect()
}

#[test]
#[ignore = "needs ../shared and Blender: cargo test -- --include-ignored"]
fn a_material_recoloured_and_its_texture_painted_in_blender_reach_the_libraries() {
    let Some((corpus, blender)) = common::corpus_and_blender() else {
        return;
    };
    retexture(&corpus, &blender, None);
}

/// The same in Blender 5.x (PyPI `bpy`, [`common::bpy_python`]); skips
/// (passing) without it.
#[test]
#[ignore = "needs ../shared and PyPI bpy (../shared/tools/blender-inspect --bpy): cargo test -- --include-ignored"]
fn a_material_recoloured_and_its_texture_painted_in_bpy_5_reach_the_libraries() {
    let (Some((corpus, blender)), Some(py)) = (
        common::corpus_and_blender(),
        common::bpy_python(common::NEWEST_BPY),
    ) else {
        println!("SKIP: no ../shared, Blender or PyPI bpy");
        return;
    };
    retexture(&corpus, &blender, Some(&py));
}

/// The same in each Blender of the matrix (PyPI `bpy` 4.2 LTS, 4.5 LTS and
/// 5.0: [`common::matrix_bpys`]; README "Tested").
#[test]
#[ignore = "needs ../shared, Blender and the matrix's PyPI bpy (../shared/tools/blender-inspect --bpy=VERSION): cargo test -- --include-ignored"]
fn a_material_recoloured_and_its_texture_painted_in_each_matrix_bpy_reach_the_libraries() {
    let Some((corpus, blender)) = common::corpus_and_blender() else {
        return;
    };
    common::for_each_matrix_bpy(|version, py| {
        println!("bpy {version}");
        retexture(&corpus, &blender, Some(py));
    });
}

fn retexture(corpus: &Path, blender: &Path, bpy: Option<&Path>) {
    let tmp = tempfile::tempdir().unwrap();
    let game = tmp.path().join("game");
    std::fs::create_dir_all(&game).unwrap();
    for f in ["Material.lib", "Textures.lib", "LightMap.lib", ARCHIVE] {
        std::fs::copy(corpus.join(f), game.join(f)).unwrap();
    }
    let zip = tmp.path().join("io_scene_parkan.zip");
    common::package_addon(&zip);
    let work = tmp.path().join("work");
    let (r, stdout) = common::blender_output(
        common::blender_script(blender, bpy, "retexture_test.py", tmp.path())
            .arg("--")
            .arg(&zip)
            .arg(game.join(ARCHIVE))
            .arg(ENTRY)
            .arg(MATERIAL)
            .arg(&work),
        "RETEXTURE_TEST",
    );
    assert_eq!(r["errors"], serde_json::json!([]), "{r:#}\n{stdout}");
    assert_eq!(r["export"], serde_json::json!(["FINISHED"]), "{r:#}");
    // The add-on remembered the game folder of the import and passed it.
    assert_eq!(
        Path::new(r["game_dir"].as_str().unwrap())
            .canonicalize()
            .unwrap(),
        game.canonicalize().unwrap()
    );
    // Copies beside the output; the game folder untouched.
    for f in ["Material.lib", "Textures.lib"] {
        assert!(
            std::fs::read(corpus.join(f)).unwrap() == std::fs::read(game.join(f)).unwrap(),
            "{f} of the game folder changed"
        );
    }
    assert_eq!(
        changed_entries(&game.join("Material.lib"), &work.join("Material.lib")),
        [MATERIAL]
    );
    assert_eq!(
        changed_entries(&game.join("Textures.lib"), &work.join("Textures.lib")),
        [TEXTURE]
    );
    // The model did not change: the archive copy is the game's archive.
    assert!(
        std::fs::read(work.join("out.rlb")).unwrap() == std::fs::read(game.join(ARCHIVE)).unwrap()
    );

    // msh2gltf with the written libraries shows the new colour and pixels.
    let (j0, b0) = export(&game.join(ARCHIVE), &game, &tmp.path().join("before.glb"));
    let (j1, b1) = export(&work.join("out.rlb"), &work, &tmp.path().join("after.glb"));
    let (_, before) = material(&j0, &b0, MATERIAL);
    let (c, after) = material(&j1, &b1, MATERIAL);
    assert!(
        (c[0] - 1.0).abs() < 0.5 / 255.0 && (c[1] - 0.2).abs() < 0.5 / 255.0 && c[2] == 0.0,
        "{c:?}"
    );
    assert_eq!(after.dimensions(), before.dimensions());
    let (w, h) = after.dimensions();
    for y in 0..h {
        for x in 0..w {
            let want = if y == h - 1 {
                image::Rgba([255, 0, 0, 255]) // painted (8888 holds it exactly)
            } else {
                *before.get_pixel(x, y)
            };
            assert_eq!(*after.get_pixel(x, y), want, "pixel {x},{y}");
        }
    }
}
