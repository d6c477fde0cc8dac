//! Materials and textures against the shared corpus (format-notes §4):
//! every manifest texture and lightmap decoded exactly (sampled pixels and the
//! SHA-256 of mip 0 in both channel orders), every MAT0 entry, every model's
//! WEAR table with its resolution, and the bad material/texture files.
//! Skips (prints a line) when ../shared/corpus is missing.

use std::collections::HashMap;
use std::path::Path;

use mshgltf::material::texm::ARGB_ORDER;
use mshgltf::material::wear::find_wear_entry;
use mshgltf::material::{Fallback, Libraries, Library, MaterialError, Wear, TYPE_WEAR};
use mshgltf::nres;
use serde_json::Value;
use sha2::{Digest, Sha256};

mod common;
use common::{corpus, manifest};

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn opt_str(v: &Value) -> Option<&str> {
    v.as_str()
}

/// Checks one manifest texture record; returns the mismatches.
fn check_texture(libs: &Libraries, t: &Value, lightmap: bool) -> Vec<String> {
    let name = t["name"].as_str().unwrap();
    let mut bad = Vec::new();
    let texm = if lightmap {
        libs.lightmap_texm(name)
    } else {
        libs.texture_texm(name)
    };
    let texm = match texm {
        Ok(x) => x,
        Err(e) => return vec![format!("{name}: {e}")],
    };
    let lib = if lightmap {
        libs.lightmap_lib()
    } else {
        libs.textures_lib()
    }
    .unwrap();
    let mut field = |what: &str, got: u64, want: &Value| {
        if Some(got) != want.as_u64() {
            bad.push(format!("{name}: {what} {got}, manifest {want}"));
        }
    };
    field("width", u64::from(texm.width), &t["width"]);
    field("height", u64::from(texm.height), &t["height"]);
    field("mips", texm.mip_count() as u64, &t["mips"]);
    field("format", u64::from(texm.format.code()), &t["format"]);
    field("flags4", u64::from(texm.flags4), &t["flags4"]);
    field("flags5", u64::from(texm.flags5), &t["flags5"]);
    field(
        "bytes",
        lib.data(lib.find(name).unwrap()).len() as u64,
        &t["bytes"],
    );
    if texm.palette.is_some() != t["palette"].as_bool().unwrap() {
        bad.push(format!("{name}: palette presence differs"));
    }
    let rects: Vec<[i64; 4]> = texm
        .page
        .iter()
        .flatten()
        .map(|r| [r.x, r.w, r.y, r.h].map(i64::from))
        .collect();
    let want: Vec<[i64; 4]> = t["page_rects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let v: Vec<i64> = r
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_i64().unwrap())
                .collect();
            [v[0], v[1], v[2], v[3]]
        })
        .collect();
    if rects != want {
        bad.push(format!("{name}: page rects {rects:?}, manifest {want:?}"));
    }
    let img = texm.decode();
    let alt = texm.decode_with(&ARGB_ORDER, 0).unwrap();
    for p in t["pixels_mip0"].as_array().unwrap() {
        let (x, y) = (
            p["x"].as_u64().unwrap() as u32,
            p["y"].as_u64().unwrap() as u32,
        );
        let rgba = |v: &Value| -> Vec<u8> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_u64().unwrap() as u8)
                .collect()
        };
        let got = img.get_pixel(x, y).0.to_vec();
        if got != rgba(&p["rgba"]) {
            bad.push(format!(
                "{name} ({}): pixel ({x}, {y}) {got:?}, manifest {}",
                texm.format.code(),
                p["rgba"]
            ));
        }
        let got = alt.get_pixel(x, y).0.to_vec();
        if got != rgba(&p["rgba_alt_argb_rgbx"]) {
            bad.push(format!(
                "{name}: ARGB-order pixel ({x}, {y}) {got:?}, manifest {}",
                p["rgba_alt_argb_rgbx"]
            ));
        }
    }
    let sha = hex(&Sha256::digest(img.as_raw()));
    if Some(sha.as_str()) != t["mip0_rgba8_sha256"].as_str() {
        bad.push(format!("{name}: mip 0 RGBA8 SHA-256 differs"));
    }
    let sha = hex(&Sha256::digest(alt.as_raw()));
    if Some(sha.as_str()) != t["mip0_rgba8_sha256_alt_argb_rgbx"].as_str() {
        bad.push(format!("{name}: ARGB-order mip 0 SHA-256 differs"));
    }
    // The cached PNG decodes back to the same pixels.
    let png = if lightmap {
        libs.lightmap_png(name)
    } else {
        libs.texture_png(name)
    };
    match png {
        Ok(png) => {
            let back = image::load_from_memory_with_format(&png.png, image::ImageFormat::Png)
                .unwrap()
                .to_rgba8();
            if back != img || png.rgba != img || (png.width, png.height) != img.dimensions() {
                bad.push(format!("{name}: PNG does not round-trip mip 0"));
            }
            if png.has_alpha != img.pixels().any(|p| p.0[3] != 255) {
                bad.push(format!("{name}: has_alpha wrong"));
            }
        }
        Err(e) => bad.push(format!("{name}: PNG: {e}")),
    }
    bad
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn textures_and_lightmaps_match_manifest() {
    let Some(root) = corpus() else { return };
    let m = manifest(&root);
    let libs = Libraries::load(&root).expect("libraries load");
    let mut bad = Vec::new();
    let mut n = 0;
    for (key, lightmap) in [("textures", false), ("lightmaps", true)] {
        for t in m[key].as_array().unwrap() {
            bad.extend(check_texture(&libs, t, lightmap));
            n += 1;
        }
    }
    let want =
        m["summary"]["textures"].as_u64().unwrap() + m["summary"]["lightmaps"].as_u64().unwrap();
    assert_eq!(n as u64, want, "manifest textures and lightmaps");
    let missing = m["missing_lightmap"].as_str().unwrap();
    assert_eq!(libs.lightmap_png(missing).unwrap_err().rule, "lib.missing");
    assert!(
        bad.is_empty(),
        "{} mismatches:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// `msh2gltf GAME_DIR OUT --textures-out DIR` writes every texture and
/// every lightmap of the libraries as PNG, with the manifest's pixels (mip 0
/// RGBA8 SHA-256, retail byte order).
#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn textures_out_writes_every_texture_and_lightmap() {
    let Some(root) = corpus() else { return };
    let m = manifest(&root);
    let dir = tempfile::tempdir().unwrap();
    let tex = dir.path().join("tex");
    let st = std::process::Command::new(env!("CARGO_BIN_EXE_msh2gltf"))
        .arg(root.join("units.rlb"))
        .arg(dir.path().join("out"))
        .arg("--textures-out")
        .arg(&tex)
        .arg("-q")
        .status()
        .unwrap();
    assert_eq!(st.code(), Some(0));
    let mut n = 0;
    for key in ["textures", "lightmaps"] {
        for t in m[key].as_array().unwrap() {
            let name = t["name"].as_str().unwrap();
            let path = tex.join(format!("{name}.png"));
            let img = image::open(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
                .to_rgba8();
            assert_eq!(
                Some(hex(&Sha256::digest(img.as_raw())).as_str()),
                t["mip0_rgba8_sha256"].as_str(),
                "{name}: pixels"
            );
            n += 1;
        }
    }
    let want =
        m["summary"]["textures"].as_u64().unwrap() + m["summary"]["lightmaps"].as_u64().unwrap();
    assert_eq!(n as u64, want, "manifest textures and lightmaps");
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn materials_match_manifest() {
    let Some(root) = corpus() else { return };
    let m = manifest(&root);
    let libs = Libraries::load(&root).expect("libraries load");
    let lib = libs.material_lib().expect("Material.lib");
    let mut bad = Vec::new();
    let entries = m["materials"]["entries"].as_object().unwrap();
    assert_eq!(entries.len(), lib.len());
    for (name, e) in entries {
        let i = lib.find(name).expect("entry present");
        let mat = match lib.mat0(i) {
            Ok(x) => x,
            Err(err) => {
                bad.push(format!("{name}: {err}"));
                continue;
            }
        };
        let untextured = mat.phases.iter().filter(|p| p.texture().is_none()).count();
        let got = (
            mat.phases.len() as u64,
            mat.anim_blocks.len() as u64,
            untextured as u64,
            u64::from(lib.entries()[i].attr1),
        );
        let want = (
            e["phases"].as_u64().unwrap(),
            e["anim_blocks"].as_u64().unwrap(),
            e["untextured_phases"].as_u64().unwrap(),
            e["attr1"].as_u64().unwrap(),
        );
        if got != want {
            bad.push(format!(
                "{name}: (phases, anim_blocks, untextured, attr1) {got:?}, manifest {want:?}"
            ));
        }
        let r = libs.resolve_material(name);
        if r.resolved != *name
            || r.fallback.is_some()
            || r.error.is_some()
            || r.texture.as_deref() != opt_str(&e["primary_texture"])
            || r.base_color != mat.diffuse()
        {
            bad.push(format!("{name}: resolved {r:?}, manifest {e}"));
        }
    }
    for name in m["materials"]["missing_from_material_lib"]
        .as_array()
        .unwrap()
    {
        let name = name.as_str().unwrap();
        assert!(lib.find(name).is_none(), "{name} should be missing");
        let r = libs.resolve_material(name);
        assert_eq!(
            (r.resolved.as_str(), r.fallback, r.error),
            ("DEFAULT", Some(Fallback::Default), None),
            "{name}"
        );
        assert_eq!(r.requested, name);
    }
    assert!(
        bad.is_empty(),
        "{} mismatches:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn model_wear_tables_match_manifest() {
    let Some(root) = corpus() else { return };
    let m = manifest(&root);
    let libs = Libraries::load(&root).expect("libraries load");
    let mut archives: HashMap<String, Vec<u8>> = HashMap::new();
    let mut bad = Vec::new();
    let (mut checked, mut listed) = (0, 0);
    for model in m["models"].as_array().unwrap() {
        let w = &model["wear"];
        if w.is_null() {
            continue;
        }
        listed += 1;
        let archive = model["archive"]
            .as_str()
            .expect("a model with WEAR is in an archive");
        let bytes = archives
            .entry(archive.to_owned())
            .or_insert_with(|| std::fs::read(root.join(archive)).expect("archive"));
        let a = nres::read(bytes, nres::Mode::Tolerant).expect("archive parses");
        let msh = model["entry"].as_str().unwrap();
        let Some(wi) = find_wear_entry(&a, msh.as_bytes()) else {
            bad.push(format!("{archive}/{msh}: no WEAR sibling"));
            continue;
        };
        let e = &a.entries[wi];
        let ctx = format!("{archive}/{}", String::from_utf8_lossy(e.name));
        if e.name != w["entry"].as_str().unwrap().as_bytes() || e.type_id != TYPE_WEAR {
            bad.push(format!(
                "{ctx}: entry name/type differs from manifest {}",
                w["entry"]
            ));
        }
        let wear = match Wear::parse(e.data) {
            Ok(x) => x,
            Err(err) => {
                bad.push(format!("{ctx}: {err}"));
                continue;
            }
        };
        if wear.crlf != w["crlf"].as_bool().unwrap() {
            bad.push(format!("{ctx}: crlf {}", wear.crlf));
        }
        let rows = w["rows"].as_array().unwrap();
        if rows.len() != wear.materials.len() {
            bad.push(format!(
                "{ctx}: {} rows, manifest {}",
                wear.materials.len(),
                rows.len()
            ));
        }
        for (i, ((row, r), want)) in wear
            .materials
            .iter()
            .zip(libs.resolve_wear(&wear))
            .zip(rows)
            .enumerate()
        {
            let present = r.texture.as_deref().map(|t| libs.texture_png(t).is_ok());
            let got = (
                i64::from(row.legacy_id),
                row.name.as_str(),
                r.resolved.as_str(),
                r.texture.as_deref(),
                present,
            );
            let exp = (
                want["legacy_id"].as_i64().unwrap(),
                want["material"].as_str().unwrap(),
                want["resolved"].as_str().unwrap(),
                opt_str(&want["texture"]),
                want["texture_present"].as_bool(),
            );
            if got != exp {
                bad.push(format!("{ctx} row {i}: {got:?}, manifest {exp:?}"));
            }
            let fallback_expected = exp.1 != exp.2;
            if fallback_expected != (r.fallback == Some(Fallback::Default)) {
                bad.push(format!("{ctx} row {i}: fallback {:?}", r.fallback));
            }
        }
        let lms = w["lightmaps"].as_array().unwrap();
        if lms.len() != wear.lightmaps.len() {
            bad.push(format!(
                "{ctx}: {} lightmaps, manifest {}",
                wear.lightmaps.len(),
                lms.len()
            ));
        }
        for (row, want) in wear.lightmaps.iter().zip(lms) {
            let got = (
                i64::from(row.legacy_id),
                row.name.as_str(),
                libs.lightmap_png(&row.name).is_ok(),
            );
            let exp = (
                want["legacy_id"].as_i64().unwrap(),
                want["name"].as_str().unwrap(),
                want["present"].as_bool().unwrap(),
            );
            if got != exp {
                bad.push(format!("{ctx} lightmap: {got:?}, manifest {exp:?}"));
            }
        }
        // Writing the table back and parsing it again gives the same rows.
        let again = Wear::parse(&wear.to_bytes().unwrap()).unwrap();
        if (again.materials != wear.materials) || (again.lightmaps != wear.lightmaps) {
            bad.push(format!("{ctx}: to_bytes does not round-trip"));
        }
        checked += 1;
    }
    assert!(checked > 0);
    assert_eq!(checked, listed, "models with a WEAR table");
    assert!(
        bad.is_empty(),
        "{} mismatches:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// The first error rule met in a bad library or archive.
fn observed_rule(root: &Path, file: &str) -> (Vec<&'static str>, Vec<String>) {
    let path = root.join(file);
    let bytes = std::fs::read(&path).unwrap();
    let mut rules = Vec::new();
    let mut ok = Vec::new();
    let mut note = |name: String, r: Result<(), MaterialError>| match r {
        Ok(()) => ok.push(name),
        Err(e) => rules.push(e.rule),
    };
    if file.ends_with(".rlb") {
        let a = nres::read(&bytes, nres::Mode::Strict).unwrap();
        for e in &a.entries {
            if let Some(wi) = find_wear_entry(&a, e.name) {
                let name = String::from_utf8_lossy(a.entries[wi].name).into_owned();
                note(name, Wear::parse(a.entries[wi].data).map(|_| ()));
            }
        }
    } else {
        let lib = Library::from_bytes(file, bytes).unwrap();
        let is_mat = file.contains("Material");
        let libs = if is_mat {
            Libraries::from_parts(Some(lib), None, None)
        } else {
            Libraries::from_parts(None, Some(lib), None)
        };
        let lib = if is_mat {
            libs.material_lib()
        } else {
            libs.textures_lib()
        }
        .unwrap();
        for i in 0..lib.len() {
            let name = lib.name(i);
            if is_mat {
                note(name.clone(), libs.try_resolve_material(&name).map(|_| ()));
            } else {
                note(name.clone(), libs.texture_png(&name).map(|_| ()));
            }
        }
    }
    (rules, ok)
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn bad_material_and_texture_files_are_rejected_with_their_rule() {
    let Some(root) = corpus() else { return };
    let m = manifest(&root);
    let mut seen = 0;
    for b in m["bad"].as_array().unwrap() {
        let file = b["file"].as_str().unwrap();
        let check = b["check"].as_str().unwrap();
        if !(check.starts_with("texm.") || check.starts_with("mat0.") || check.starts_with("wear."))
        {
            continue;
        }
        seen += 1;
        let (rules, ok) = observed_rule(&root, file);
        assert_eq!(
            rules,
            vec![check],
            "{file}: rules {rules:?}, manifest {check}"
        );
        if file.ends_with("Textures_truncated.lib") {
            assert_eq!(
                ok,
                vec!["OK_TEX.0".to_owned()],
                "{file}: OK_TEX.0 still decodes"
            );
        }
    }
    assert_eq!(seen, 4, "four material/texture bad files in the manifest");
    // Tolerant path of the bad Material.lib entry: DEFAULT is absent, entry 0
    // is the broken one, so the result is untextured white with the error kept.
    let lib = Library::open(&root.join("bad/Material_bad_anim_count.lib")).unwrap();
    let r = Libraries::from_parts(Some(lib), None, None).resolve_material("BAD.0");
    assert_eq!(r.error.as_ref().map(|e| e.rule), Some("mat0.anim_count"));
    assert_eq!((r.texture, r.base_color), (None, [1.0; 4]));
}

/// Issue 23, texture edits: every Textures.lib and LightMap.lib entry of
/// the corpus, given back its own decoded mip 0, is "the same pixels"
/// (an unedited texture is not an edit), and re-encoded with it keeps its
/// format, size, mip count, header fields and Page chunk, with the same
/// decoded mip 0 (palettes keep their palette). A painted copy (one pixel
/// changed) is not the same and comes back with that pixel.
#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn every_corpus_texture_re_encodes_in_its_own_format() {
    use mshgltf::material::retexture::{reencode, same_pixels};
    use mshgltf::material::texm::{Texm, RETAIL_ORDER};
    let Some(root) = corpus() else {
        return;
    };
    let mut formats: HashMap<u32, usize> = HashMap::new();
    for file in ["Textures.lib", "LightMap.lib"] {
        let lib = Library::open(&root.join(file)).unwrap();
        for i in 0..lib.len() {
            let data = lib.data(i);
            let Ok(t) = Texm::parse(data) else { continue };
            let name = format!("{file}:{}", lib.name(i));
            let img = t.decode_with(&RETAIL_ORDER, 0).unwrap();
            assert!(same_pixels(data, &img, &RETAIL_ORDER).unwrap(), "{name}");
            let r = reencode(data, &img, &RETAIL_ORDER).unwrap();
            let n = Texm::parse(&r.data).unwrap();
            assert_eq!(
                (
                    n.width,
                    n.height,
                    n.mip_count(),
                    n.flags4,
                    n.flags5,
                    n.unk6,
                    n.format
                ),
                (
                    t.width,
                    t.height,
                    t.mip_count(),
                    t.flags4,
                    t.flags5,
                    t.unk6,
                    t.format
                ),
                "{name}"
            );
            assert_eq!(n.page, t.page, "{name}");
            assert_eq!(n.decode_with(&RETAIL_ORDER, 0).unwrap(), img, "{name}");
            assert_eq!(n.palette, t.palette, "{name}");
            assert!(!r.new_palette, "{name}");
            // Painted: one pixel to another colour the format can hold.
            let mut painted = img.clone();
            let p = *painted.get_pixel(0, 0);
            painted.put_pixel(
                0,
                0,
                image::Rgba([255 - p[0], 255 - p[1], 255 - p[2], p[3]]),
            );
            let r = reencode(data, &painted, &RETAIL_ORDER).unwrap();
            let n = Texm::parse(&r.data).unwrap();
            let got = n.decode_with(&RETAIL_ORDER, 0).unwrap();
            assert_ne!(got.get_pixel(0, 0), img.get_pixel(0, 0), "{name}");
            assert!(same_pixels(&r.data, &got, &RETAIL_ORDER).unwrap(), "{name}");
            *formats.entry(t.format.code()).or_default() += 1;
        }
    }
    println!("re-encoded per format: {formats:?}");
    for code in [0, 565, 8888, 888] {
        assert!(
            formats.contains_key(&code),
            "no format {code} in the corpus: {formats:?}"
        );
    }
}
