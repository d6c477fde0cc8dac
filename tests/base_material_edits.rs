//! Material and texture edits with `gltf2msh --base` (issue 23): an
//! unedited material in the form Blender gives it back is not an edit; with
//! `--game-dir` a colour, opacity, blend or texture edit rewrites that MAT0
//! or Texm entry only, in copies of the libraries beside the output. The
//! game folder is built in the test from `samples/demo` (its materials are
//! `OPAQUE` with MAT0 opacity `p[3]` = 0, exported with alpha 0).

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

/// A copy of `samples/demo` in a temporary folder.
fn game() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/demo");
    for f in ["demo.rlb", "Material.lib", "Textures.lib"] {
        std::fs::copy(demo.join(f), t.path().join(f)).unwrap();
    }
    t
}

/// msh2gltf's GLB of `demo.rlb:TOWER.msh` in `dir`: (JSON, BIN).
fn export(dir: &Path) -> (serde_json::Value, Vec<u8>) {
    let glb = dir.join("tower.glb");
    let o = common::msh2gltf()
        .arg(format!("{}:TOWER.msh", dir.join("demo.rlb").display()))
        .arg(&glb)
        .arg("-q")
        .arg("--force")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    split_glb(&std::fs::read(&glb).unwrap())
}

fn split_glb(b: &[u8]) -> (serde_json::Value, Vec<u8>) {
    let u = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap()) as usize;
    let jl = u(12);
    let json = serde_json::from_slice(&b[20..20 + jl]).unwrap();
    let bl = u(20 + jl);
    (json, b[28 + jl..28 + jl + bl].to_vec())
}

/// `gltf2msh EDIT.glb --base demo.rlb:TOWER.msh -o OUT args…` in `dir`.
fn back(dir: &Path, json: &serde_json::Value, bin: &[u8], out: &Path, args: &[&str]) -> Output {
    let glb = dir.join("edit.glb");
    std::fs::write(&glb, common::glb(json, bin)).unwrap();
    common::gltf2msh()
        .arg(&glb)
        .arg("--base")
        .arg(format!("{}:TOWER.msh", dir.join("demo.rlb").display()))
        .arg("-o")
        .arg(out)
        .args(args)
        .output()
        .unwrap()
}

fn out_dir(dir: &Path, name: &str) -> PathBuf {
    let o = dir.join(name);
    std::fs::create_dir_all(&o).unwrap();
    o
}

#[test]
fn an_opaque_materials_alpha_coming_back_as_one_is_not_an_edit() {
    let g = game();
    let (mut json, bin) = export(g.path());
    let mats = json["materials"].as_array_mut().unwrap();
    assert!(!mats.is_empty());
    for m in mats.iter_mut() {
        assert_eq!(m["alphaMode"], "OPAQUE");
        // msh2gltf wrote the MAT0 opacity p[3] = 0 as alpha 0.
        assert_eq!(m["pbrMetallicRoughness"]["baseColorFactor"][3], 0.0);
        // Blender's importer drops it and exports 1.0.
        m["pbrMetallicRoughness"]["baseColorFactor"][3] = serde_json::json!(1.0);
    }
    let out = out_dir(g.path(), "o").join("demo.rlb");
    let o = back(g.path(), &json, &bin, &out, &[]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(
        common::stderr(&o).contains("unchanged"),
        "{}",
        common::stderr(&o)
    );
    assert!(std::fs::read(&out).unwrap() == std::fs::read(g.path().join("demo.rlb")).unwrap());

    // The same alpha with alphaMode BLEND is an edit (refused without --game-dir).
    json["materials"][0]["alphaMode"] = serde_json::json!("BLEND");
    let out = out_dir(g.path(), "o2").join("demo.rlb");
    let o = back(g.path(), &json, &bin, &out, &[]);
    assert_eq!(o.status.code(), Some(1));
    let e = common::stderr(&o);
    assert!(
        e.contains("gltf.material_edit") && e.contains("alphaMode OPAQUE -> BLEND"),
        "{e}"
    );
    assert!(!out.exists());
}

/// Offset of entry `name`'s payload and of its directory record in the
/// NRes file `lib`.
fn offsets(lib: &[u8], name: &str) -> (usize, usize) {
    let a = mshgltf::nres::read(lib, mshgltf::nres::Mode::Strict).unwrap();
    let i = a.find(name.as_bytes()).unwrap();
    let data = a.entries[i].data.as_ptr() as usize - lib.as_ptr() as usize;
    let total = lib.len();
    (data, total - a.entries.len() * 64 + i * 64)
}

/// msh2gltf's report row of `archive:TOWER.msh` with the libraries of `game`.
fn reexport(archive: &Path, game: &Path) -> serde_json::Value {
    let dir = archive.parent().unwrap();
    let glb = dir.join("check.glb");
    let o = common::msh2gltf()
        .arg(format!("{}:TOWER.msh", archive.display()))
        .arg(&glb)
        .arg("--game-dir")
        .arg(game)
        .arg("-q")
        .arg("--force")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    split_glb(&std::fs::read(&glb).unwrap()).0
}

#[test]
fn a_colour_opacity_and_blend_edit_rewrites_that_mat0_entry_only() {
    let g = game();
    // Another model of the game folder with the same materials.
    std::fs::copy(g.path().join("demo.rlb"), g.path().join("other.rlb")).unwrap();
    let (mut json, bin) = export(g.path());
    let k = (0..2)
        .find(|&k| json["materials"][k]["name"] == "STEEL.0")
        .unwrap();
    json["materials"][k]["pbrMetallicRoughness"]["baseColorFactor"] =
        serde_json::json!([1.0, 0.2, 0.0, 0.5]);
    json["materials"][k]["alphaMode"] = serde_json::json!("BLEND");

    // Without --game-dir: refused, naming --game-dir.
    let out = out_dir(g.path(), "refused").join("demo.rlb");
    let o = back(g.path(), &json, &bin, &out, &[]);
    assert_eq!(o.status.code(), Some(1));
    let e = common::stderr(&o);
    assert!(
        e.contains("gltf.material_edit") && e.contains("--game-dir"),
        "{e}"
    );
    assert!(!out.exists());

    // With it: Material.lib beside the output, that entry only.
    let dir = out_dir(g.path(), "o");
    let out = dir.join("demo.rlb");
    let report = dir.join("report.json");
    let game_arg = g.path().to_str().unwrap().to_string();
    let rep_arg = report.to_str().unwrap().to_string();
    let o = back(
        g.path(),
        &json,
        &bin,
        &out,
        &["--game-dir", &game_arg, "--report", &rep_arg],
    );
    let e = common::stderr(&o);
    assert!(o.status.success(), "{e}");
    assert!(std::fs::read(&out).unwrap() == std::fs::read(g.path().join("demo.rlb")).unwrap());
    assert!(!dir.join("Textures.lib").exists(), "no texture changed");
    let old = std::fs::read(g.path().join("Material.lib")).unwrap();
    let new = std::fs::read(dir.join("Material.lib")).unwrap();
    let (data, rec) = offsets(&old, "STEEL.0");
    let mut want = old.clone();
    // Phase 0 after the 14-byte v6 header: p[3] opacity, p[4..=6] colour.
    want[data + 14 + 3] = 50;
    want[data + 14 + 4..data + 14 + 7].copy_from_slice(&[255, 51, 0]);
    want[rec + 4..rec + 8].copy_from_slice(&4u32.to_le_bytes()); // attr1: alpha blend
    assert!(new == want, "Material.lib differs beyond STEEL.0's fields");
    // The game folder itself is untouched.
    assert!(std::fs::read(g.path().join("Material.lib")).unwrap() == old);

    // The sharing model is named, in the summary and the report.
    assert!(
        e.contains("material STEEL.0 is shared") && e.contains("other.rlb:TOWER.msh"),
        "{e}"
    );
    assert!(!e.contains("demo.rlb:TOWER.msh"), "{e}");
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let libs = &r["import"]["libraries"];
    assert_eq!(
        libs["shared"]["material STEEL.0"],
        serde_json::json!(["other.rlb:TOWER.msh"]),
        "{libs}"
    );
    assert!(libs["materials"]["STEEL.0"].is_array(), "{libs}");

    // msh2gltf with the written libraries shows the new colour and blend.
    let j = reexport(&out, &dir);
    let m = j["materials"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "STEEL.0")
        .unwrap();
    assert_eq!(m["alphaMode"], "BLEND");
    let c: Vec<f64> = m["pbrMetallicRoughness"]["baseColorFactor"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert!(
        (c[0] - 1.0).abs() < 1e-6
            && (c[1] - 0.2).abs() < 1e-6
            && c[2] == 0.0
            && (c[3] - 0.5).abs() < 1e-6,
        "{c:?}"
    );
}

/// A palette (format 0) Texm of `img` (at most 256 colours), one level,
/// retail B, G, R, X entries.
fn palette_texm(img: &image::RgbaImage) -> Vec<u8> {
    let mut cols: Vec<[u8; 3]> = Vec::new();
    let mut idx = Vec::new();
    for p in img.pixels() {
        let c = [p[0], p[1], p[2]];
        let i = cols.iter().position(|x| *x == c).unwrap_or_else(|| {
            cols.push(c);
            cols.len() - 1
        });
        idx.push(i as u8);
    }
    let mut d = b"Texm".to_vec();
    for v in [img.width(), img.height(), 1, 32, 0, 0, 0] {
        d.extend_from_slice(&v.to_le_bytes());
    }
    let mut pal = vec![0u8; 1024];
    for (i, c) in cols.iter().enumerate() {
        pal[i * 4..i * 4 + 4].copy_from_slice(&[c[2], c[1], c[0], 0]);
    }
    d.extend_from_slice(&pal);
    d.extend_from_slice(&idx);
    d
}

#[test]
fn a_texture_edit_comes_back_in_its_own_format_other_entries_untouched() {
    use mshgltf::material::texm::{self, TexFormat, Texm, RETAIL_ORDER};
    let start = image::RgbaImage::from_fn(4, 4, |x, y| {
        image::Rgba([(x * 60) as u8, (y * 60) as u8, 90, 255])
    });
    for (label, fmt) in [
        ("888", Some(TexFormat::Rgbx888)),
        ("8888", Some(TexFormat::Argb8888)),
        ("565", Some(TexFormat::Rgb565)),
        ("palette", None),
    ] {
        let g = game();
        // STEEL_TX.0 stored in the format under test (mips where it has them).
        let payload = match fmt {
            Some(f) => texm::encode(&start, f, &RETAIL_ORDER, 3, 32).unwrap(),
            None => palette_texm(&start),
        };
        let lib = std::fs::read(g.path().join("Textures.lib")).unwrap();
        let entry = mshgltf::material::write::NewEntry {
            name: b"STEEL_TX.0".to_vec(),
            type_id: mshgltf::material::TYPE_TEXM,
            attr1: 0,
            attr2: 0,
            attr3: 0,
            data: payload.clone(),
        };
        let (lib, _) =
            mshgltf::material::write::add_entries("Textures.lib", Some(&lib), &[entry], true)
                .unwrap();
        std::fs::write(g.path().join("Textures.lib"), &lib).unwrap();
        let (mut json, bin) = export(g.path());
        // Paint: two pixels get new colours (a palette has free slots for them).
        let before = Texm::parse(&payload)
            .unwrap()
            .decode_with(&RETAIL_ORDER, 0)
            .unwrap();
        let mut painted = before.clone();
        painted.put_pixel(1, 2, image::Rgba([250, 10, 10, 255]));
        painted.put_pixel(3, 0, image::Rgba([10, 250, 120, 255]));
        let png = texm::encode_png(&painted).unwrap();
        std::fs::write(g.path().join("painted.png"), png).unwrap();
        let img = json["images"]
            .as_array()
            .unwrap()
            .iter()
            .position(|i| i["name"] == "STEEL_TX.0")
            .unwrap();
        json["images"][img] = serde_json::json!({"uri": "painted.png", "name": "STEEL_TX.0"});

        let dir = out_dir(g.path(), "o");
        let out = dir.join("demo.rlb");
        let game_arg = g.path().to_str().unwrap().to_string();
        let o = back(g.path(), &json, &bin, &out, &["--game-dir", &game_arg]);
        let e = common::stderr(&o);
        assert!(o.status.success(), "{label}: {e}");
        assert!(e.contains("textures [\"STEEL_TX.0\"]"), "{label}: {e}");
        assert!(
            !dir.join("Material.lib").exists(),
            "{label}: no material changed"
        );
        let new_lib = std::fs::read(dir.join("Textures.lib")).unwrap();
        let a = mshgltf::nres::read(&new_lib, mshgltf::nres::Mode::Strict).unwrap();
        let b = mshgltf::nres::read(&lib, mshgltf::nres::Mode::Strict).unwrap();
        assert_eq!(a.entries.len(), b.entries.len());
        for (x, y) in a.entries.iter().zip(&b.entries) {
            assert_eq!(
                (x.name, x.type_id, x.attr1, x.attr2, x.attr3),
                (y.name, y.type_id, y.attr1, y.attr2, y.attr3)
            );
            if x.name != b"STEEL_TX.0" {
                assert!(
                    x.data == y.data,
                    "{label}: {:?} changed",
                    String::from_utf8_lossy(x.name)
                );
            }
        }
        let t = Texm::parse(a.entries[a.find(b"STEEL_TX.0").unwrap()].data).unwrap();
        let old = Texm::parse(&payload).unwrap();
        assert_eq!(t.format, old.format, "{label}");
        assert_eq!(
            (t.width, t.height, t.mip_count(), t.flags4),
            (4, 4, old.mip_count(), 32),
            "{label}"
        );
        let got = t.decode_with(&RETAIL_ORDER, 0).unwrap();
        let want = match fmt {
            Some(f) => Texm::parse(&texm::encode(&painted, f, &RETAIL_ORDER, 1, 32).unwrap())
                .unwrap()
                .decode_with(&RETAIL_ORDER, 0)
                .unwrap(),
            None => painted.clone(),
        };
        assert_eq!(
            got, want,
            "{label}: the edited pixels within the format's quantisation"
        );
        assert_ne!(got, before, "{label}");
    }
}

/// The demo's glTF with STEEL.0's image replaced by `painted.png` (named
/// `name`) in `dir`: STEEL_TX.0's pixels with its first row red.
fn painted(dir: &Path, name: &str) -> (serde_json::Value, Vec<u8>) {
    let (mut json, bin) = export(dir);
    let lib = mshgltf::material::Library::open(&dir.join("Textures.lib")).unwrap();
    let t =
        mshgltf::material::texm::Texm::parse(lib.data(lib.find("STEEL_TX.0").unwrap())).unwrap();
    let mut img = t.decode();
    for x in 0..img.width() {
        img.put_pixel(x, 0, image::Rgba([255, 0, 0, 255]));
    }
    std::fs::write(
        dir.join("painted.png"),
        mshgltf::material::texm::encode_png(&img).unwrap(),
    )
    .unwrap();
    let i = json["images"]
        .as_array()
        .unwrap()
        .iter()
        .position(|i| i["name"] == "STEEL_TX.0")
        .unwrap();
    json["images"][i] = serde_json::json!({"uri": "painted.png", "name": name});
    (json, bin)
}

#[test]
fn a_painted_texture_without_game_dir_is_refused_naming_it() {
    let g = game();
    let (json, bin) = painted(g.path(), "STEEL_TX.0");
    let out = out_dir(g.path(), "o").join("demo.rlb");
    let o = back(g.path(), &json, &bin, &out, &[]);
    let e = common::stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("gltf.texture_edit") && e.contains("STEEL_TX.0") && e.contains("--game-dir"),
        "{e}"
    );
    assert!(!out.exists());
}

#[test]
fn in_place_rewrites_the_games_material_lib_only() {
    let g = game();
    let (mut json, bin) = export(g.path());
    let k = (0..2)
        .find(|&k| json["materials"][k]["name"] == "GLASS.1")
        .unwrap();
    json["materials"][k]["pbrMetallicRoughness"]["baseColorFactor"] =
        serde_json::json!([0.0, 0.4, 1.0, 1.0]);
    let old = std::fs::read(g.path().join("Material.lib")).unwrap();
    let tex = std::fs::read(g.path().join("Textures.lib")).unwrap();
    let dir = out_dir(g.path(), "o");
    let game_arg = g.path().to_str().unwrap().to_string();
    let o = back(
        g.path(),
        &json,
        &bin,
        &dir.join("demo.rlb"),
        &["--game-dir", &game_arg, "--in-place"],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(!dir.join("Material.lib").exists());
    let (data, _) = offsets(&old, "GLASS.1");
    let mut want = old.clone();
    want[data + 14 + 4..data + 14 + 7].copy_from_slice(&[0, 102, 255]);
    assert!(std::fs::read(g.path().join("Material.lib")).unwrap() == want);
    assert!(std::fs::read(g.path().join("Textures.lib")).unwrap() == tex);
}

#[test]
fn a_new_image_name_is_a_new_entry_and_an_existing_one_needs_replace_entries() {
    use mshgltf::material::texm::{TexFormat, Texm};
    let g = game();
    let game_arg = g.path().to_str().unwrap().to_string();
    // A new name: a new Textures.lib entry (authoring's name), STEEL.0 points at it.
    let (json, bin) = painted(g.path(), "my paint");
    let dir = out_dir(g.path(), "new");
    let o = back(
        g.path(),
        &json,
        &bin,
        &dir.join("demo.rlb"),
        &["--game-dir", &game_arg],
    );
    let e = common::stderr(&o);
    assert!(o.status.success(), "{e}");
    let lib = mshgltf::material::Library::open(&dir.join("Textures.lib")).unwrap();
    let old = mshgltf::material::Library::open(&g.path().join("Textures.lib")).unwrap();
    assert_eq!(lib.len(), old.len() + 1);
    for i in 0..old.len() {
        assert!(lib.data(i) == old.data(i) && lib.name(i) == old.name(i));
    }
    assert_eq!(lib.name(old.len()), "MY_PAINT.0");
    let mats = mshgltf::material::Library::open(&dir.join("Material.lib")).unwrap();
    let m = mats.mat0(mats.find("STEEL.0").unwrap()).unwrap();
    assert_eq!(m.primary_texture().as_deref(), Some("MY_PAINT.0"));

    // The name of another library texture with other pixels: refused…
    let (json, bin) = painted(g.path(), "GLASS_TX.0");
    let dir = out_dir(g.path(), "collide");
    let o = back(
        g.path(),
        &json,
        &bin,
        &dir.join("demo.rlb"),
        &["--game-dir", &game_arg],
    );
    let e = common::stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("GLASS_TX.0") && e.contains("--replace-entries"),
        "{e}"
    );
    assert!(!dir.join("Textures.lib").exists());
    // …and replaced, in its own format (565), with --replace-entries.
    let o = back(
        g.path(),
        &json,
        &bin,
        &dir.join("demo.rlb"),
        &["--game-dir", &game_arg, "--replace-entries"],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let lib = mshgltf::material::Library::open(&dir.join("Textures.lib")).unwrap();
    let t = Texm::parse(lib.data(lib.find("GLASS_TX.0").unwrap())).unwrap();
    assert_eq!((t.format, t.width, t.height), (TexFormat::Rgb565, 4, 4));
    assert_eq!(t.decode().get_pixel(0, 0).0, [255, 0, 0, 255]);
    let mats = mshgltf::material::Library::open(&dir.join("Material.lib")).unwrap();
    let m = mats.mat0(mats.find("STEEL.0").unwrap()).unwrap();
    assert_eq!(m.primary_texture().as_deref(), Some("GLASS_TX.0"));
}

/// Every file of `dir` with its bytes, but the lock files
/// (`.NAME.mshgltf-lock`, empty, left in place by in-place runs).
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

#[test]
fn in_place_with_a_rename_failure_at_each_position_leaves_the_game_old() {
    let g = game();
    let (mut json, bin) = painted(g.path(), "STEEL_TX.0");
    let k = (0..2)
        .find(|&k| json["materials"][k]["name"] == "STEEL.0")
        .unwrap();
    json["materials"][k]["pbrMetallicRoughness"]["baseColorFactor"] =
        serde_json::json!([1.0, 0.2, 0.0, 0.0]);
    // The glTF and its image live outside the game folder.
    let work = tempfile::tempdir().unwrap();
    std::fs::rename(
        g.path().join("painted.png"),
        work.path().join("painted.png"),
    )
    .unwrap();
    let glb = work.path().join("edit.glb");
    std::fs::write(&glb, common::glb(&json, &bin)).unwrap();
    std::fs::remove_file(g.path().join("tower.glb")).unwrap();
    let before = snapshot(g.path());
    let out = work.path().join("o/demo.rlb");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let run = |fail: Option<usize>| {
        let mut c = common::gltf2msh();
        c.arg(&glb)
            .arg("--base")
            .arg(format!("{}:TOWER.msh", g.path().join("demo.rlb").display()))
            .arg("-o")
            .arg(&out)
            .arg("--game-dir")
            .arg(g.path())
            .arg("--in-place");
        if let Some(k) = fail {
            c.env("MSHGLTF_TEST_FAIL_RENAME_AT", k.to_string());
        }
        c.output().unwrap()
    };
    // Material.lib, Textures.lib, the output archive.
    for k in 0..3 {
        let o = run(Some(k));
        let e = common::stderr(&o);
        assert_eq!(o.status.code(), Some(1), "k={k}: {e}");
        assert!(
            e.contains("injected") && e.contains("nothing was changed"),
            "k={k}: {e}"
        );
        assert_eq!(snapshot(g.path()), before, "k={k}: {e}");
        assert!(!out.exists(), "k={k}");
    }
    let o = run(None);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let after = snapshot(g.path());
    let changed: Vec<&str> = after
        .iter()
        .zip(&before)
        .filter(|(a, b)| a != b)
        .map(|(a, _)| a.0.as_str())
        .collect();
    assert_eq!(changed, ["Material.lib", "Textures.lib"]);
    assert_eq!(after.len(), before.len(), "no kept or temporary file left");
}

#[test]
fn two_variants_of_one_entry_edited_differently_are_a_warning() {
    let g = game();
    let (mut json, bin) = export(g.path());
    let k = (0..2)
        .find(|&k| json["materials"][k]["name"] == "STEEL.0")
        .unwrap();
    // A second glTF material of the same entry (as a lit variant is).
    let mut lit = json["materials"][k].clone();
    lit["name"] = serde_json::json!("STEEL.0+lightmap");
    lit["pbrMetallicRoughness"]["baseColorFactor"] = serde_json::json!([0.0, 1.0, 0.0, 0.0]);
    json["materials"].as_array_mut().unwrap().push(lit);
    json["materials"][k]["pbrMetallicRoughness"]["baseColorFactor"] =
        serde_json::json!([1.0, 0.2, 0.0, 0.0]);
    let dir = out_dir(g.path(), "o");
    let game_arg = g.path().to_str().unwrap().to_string();
    let o = back(
        g.path(),
        &json,
        &bin,
        &dir.join("demo.rlb"),
        &["--game-dir", &game_arg],
    );
    let e = common::stderr(&o);
    assert!(o.status.success(), "{e}");
    assert!(
        e.contains("material STEEL.0: glTF material 2 \"STEEL.0+lightmap\"")
            && e.contains("edited differently"),
        "{e}"
    );
    // The later one is written.
    let mats = mshgltf::material::Library::open(&dir.join("Material.lib")).unwrap();
    let m = mats.mat0(mats.find("STEEL.0").unwrap()).unwrap();
    assert_eq!(&m.phases[0].params[4..7], &[0, 255, 0]);
}
