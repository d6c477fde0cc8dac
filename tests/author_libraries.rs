//! gltf2msh authoring with `--game-dir` (issue 9, point 1): a textured glTF
//! (PNG with and without alpha, a JPEG that needs resizing, an untextured
//! colour) is authored into copies of a game folder's `Material.lib` and
//! `Textures.lib`; every old entry stays byte-identical, the new MAT0
//! records carry the colour, opacity, blend mode and texture name, the Texm
//! entries a full mip chain; `msh2gltf` of the result shows the same
//! pixels (±1 per channel after quantisation) and colours. Collisions are
//! refused unless `--replace-entries`; `--in-place` edits the game's libraries.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use image::RgbaImage;
use mshgltf::gltf_import::{self, materials};
use mshgltf::material::texm::{self, TexFormat, Texm};
use mshgltf::material::{Mat0, TYPE_MAT0, TYPE_TEXM};
use mshgltf::nres;
use serde_json::{json, Value};

use common::{glb, max_diff, order_args};

fn run(exe: &str, args: &[&str]) -> std::process::Output {
    Command::new(exe).args(args).output().unwrap()
}

fn gltf2msh(args: &[&str]) -> std::process::Output {
    run(env!("CARGO_BIN_EXE_gltf2msh"), args)
}

fn msh2gltf(args: &[&str]) -> std::process::Output {
    run(env!("CARGO_BIN_EXE_msh2gltf"), args)
}

fn ok(o: &std::process::Output) {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn gradient(w: u32, h: u32, alpha: bool) -> RgbaImage {
    RgbaImage::from_fn(w, h, |x, y| {
        image::Rgba([
            (x * 255 / w.max(2).saturating_sub(1).max(1)).min(255) as u8,
            (y * 255 / h.max(2).saturating_sub(1).max(1)).min(255) as u8,
            ((x * 37 + y * 91) % 256) as u8,
            if alpha {
                ((x + y) * 255 / (w + h - 2)) as u8
            } else {
                255
            },
        ])
    })
}

fn png(img: &RgbaImage) -> Vec<u8> {
    texm::encode_png(img).unwrap()
}

fn jpeg(img: &RgbaImage) -> Vec<u8> {
    let rgb = image::DynamicImage::ImageRgba8(img.clone()).to_rgb8();
    let mut out = std::io::Cursor::new(Vec::new());
    rgb.write_to(&mut out, image::ImageFormat::Jpeg).unwrap();
    out.into_inner()
}

/// (name, rgba, alphaMode, image index)
const MATS: [(&str, [f32; 4], &str, Option<usize>); 4] = [
    ("Hull paint", [0.8, 0.4, 0.2, 1.0], "OPAQUE", Some(0)),
    ("glass", [0.2, 0.6, 1.0, 0.5], "BLEND", Some(1)),
    ("flat", [0.1, 0.9, 0.3, 1.0], "MASK", None),
    ("photo", [1.0, 1.0, 1.0, 1.0], "OPAQUE", Some(2)),
];

/// The scene: one triangle per material; images 0 (16 x 8 PNG), 1 (8 x 8
/// PNG with alpha), 2 (20 x 12 JPEG, resized to 16 x 16). Returns the GLB
/// and the decoded source images.
fn scene() -> (Vec<u8>, Vec<RgbaImage>) {
    let mut bin: Vec<u8> = Vec::new();
    let mut views = Vec::new();
    let mut view = |bin: &mut Vec<u8>, b: &[u8]| {
        while !bin.len().is_multiple_of(4) {
            bin.push(0);
        }
        views.push(json!({"buffer": 0, "byteOffset": bin.len(), "byteLength": b.len()}));
        bin.extend_from_slice(b);
        views.len() - 1
    };
    let pos: Vec<f32> = vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0];
    let uv: Vec<f32> = vec![0.0, 0.0, 1.0, 0.0, 0.0, 1.0];
    let f = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let pv = view(&mut bin, &f(&pos));
    let uvv = view(&mut bin, &f(&uv));
    let srcs = [
        gradient(16, 8, false),
        gradient(8, 8, true),
        gradient(20, 12, false),
    ];
    let enc = [png(&srcs[0]), png(&srcs[1]), jpeg(&srcs[2])];
    let iv: Vec<usize> = enc.iter().map(|b| view(&mut bin, b)).collect();
    // What a decoder sees (the JPEG is lossy).
    let decoded: Vec<RgbaImage> = enc
        .iter()
        .map(|b| image::load_from_memory(b).unwrap().to_rgba8())
        .collect();
    let prims: Vec<Value> = (0..MATS.len())
        .map(|m| json!({"attributes": {"POSITION": 0, "TEXCOORD_0": 1}, "material": m}))
        .collect();
    let materials: Vec<Value> = MATS
        .iter()
        .map(|(name, c, mode, img)| {
            let mut pbr = json!({"baseColorFactor": c});
            if let Some(i) = img {
                pbr["baseColorTexture"] = json!({"index": i});
            }
            json!({"name": name, "pbrMetallicRoughness": pbr, "alphaMode": mode})
        })
        .collect();
    let json = json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"name": "body", "mesh": 0}],
        "meshes": [{"primitives": prims}],
        "materials": materials,
        "textures": [{"source": 0}, {"source": 1}, {"source": 2}],
        "images": [
            {"bufferView": iv[0], "mimeType": "image/png", "name": "hull paint texture"},
            {"bufferView": iv[1], "mimeType": "image/png"},
            {"bufferView": iv[2], "mimeType": "image/jpeg", "name": "photo"}
        ],
        "accessors": [
            {"bufferView": pv, "componentType": 5126, "count": 3, "type": "VEC3",
             "min": [0.0, 0.0, 0.0], "max": [1.0, 1.0, 0.0]},
            {"bufferView": uvv, "componentType": 5126, "count": 3, "type": "VEC2"}
        ],
        "bufferViews": views,
        "buffers": [{"byteLength": bin.len()}],
    });
    (glb(&json, &bin), decoded)
}

/// A small game folder: two materials and two textures of our own.
fn game_dir(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let m = Mat0::new_colour([0.5, 0.5, 0.5, 1.0], Some(b"OLD.0"))
        .unwrap()
        .to_bytes();
    let lib = nres::write(&[
        nres::Entry {
            type_id: TYPE_MAT0,
            attr1: 0,
            attr2: 6,
            attr3: 0,
            name: b"DEFAULT",
            data: &m,
        },
        nres::Entry {
            type_id: TYPE_MAT0,
            attr1: 8,
            attr2: 6,
            attr3: 0,
            name: b"METAL.0",
            data: &m,
        },
    ])
    .unwrap();
    std::fs::write(dir.join("Material.lib"), lib).unwrap();
    let t = texm::encode(
        &gradient(4, 4, false),
        TexFormat::Rgb565,
        &texm::RETAIL_ORDER,
        0,
        32,
    )
    .unwrap();
    let lib = nres::write(&[
        nres::Entry {
            type_id: TYPE_TEXM,
            attr1: 0,
            attr2: 0,
            attr3: 0,
            name: b"OLD.0",
            data: &t,
        },
        nres::Entry {
            type_id: TYPE_TEXM,
            attr1: 0,
            attr2: 0,
            attr3: 0,
            name: b"ROCK.0",
            data: &t,
        },
    ])
    .unwrap();
    std::fs::write(dir.join("Textures.lib"), lib).unwrap();
}

/// Old entries unchanged and first; returns the new ones.
fn new_entries<'a>(old: &'a [u8], new: &'a [u8]) -> Vec<nres::Entry<'a>> {
    let o = nres::read(old, nres::Mode::Strict).unwrap();
    let n = nres::read(new, nres::Mode::Strict).unwrap();
    assert_eq!(
        n.entries[..o.entries.len()],
        o.entries[..],
        "old entries changed"
    );
    n.entries[o.entries.len()..].to_vec()
}

/// Materials of a msh2gltf GLB by WEAR name: (baseColorFactor, PNG pixels).
fn exported(path: &Path) -> Vec<(String, [f32; 4], Option<RgbaImage>)> {
    let doc = gltf_import::parse(&std::fs::read(path).unwrap(), None).unwrap();
    doc.to_json()["materials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let name = m["extras"]["msh"]["name"]
                .as_str()
                .or(m["name"].as_str())
                .unwrap_or("")
                .to_string();
            let c = m["pbrMetallicRoughness"]["baseColorFactor"]
                .as_array()
                .map_or([1.0; 4], |c| {
                    std::array::from_fn(|i| c[i].as_f64().unwrap() as f32)
                });
            let img = m["pbrMetallicRoughness"]["baseColorTexture"]["index"]
                .as_u64()
                .map(|t| {
                    let src = doc.to_json()["textures"][t as usize]["source"]
                        .as_u64()
                        .unwrap();
                    let b = materials::image_bytes(&doc, None, src as usize).unwrap();
                    image::load_from_memory(&b).unwrap().to_rgba8()
                });
            (name, c, img)
        })
        .collect()
}

/// What [`author_into_copies`] left behind: the decoded source images, the
/// new archive, the game's libraries before and the copies after, and the
/// `--texm-order` arguments of each side.
struct Authored {
    sources: Vec<RgbaImage>,
    out: PathBuf,
    new_rlb: String,
    old_mat: Vec<u8>,
    old_tex: Vec<u8>,
    mat: Vec<u8>,
    tex: Vec<u8>,
    g_order: Vec<&'static str>,
    m_order: Vec<&'static str>,
}

/// Authors [`scene`] into a new archive with `--game-dir` and `--texture-bits
/// bits`; checks the game folder is untouched and reads the library copies.
fn author_into_copies(tmp: &Path, bits: &str) -> Authored {
    let (glb_bytes, sources) = scene();
    let input = tmp.join("scene.glb");
    std::fs::write(&input, &glb_bytes).unwrap();
    let game = tmp.join("GAME");
    game_dir(&game);
    let old_mat = std::fs::read(game.join("Material.lib")).unwrap();
    let old_tex = std::fs::read(game.join("Textures.lib")).unwrap();
    let out = tmp.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let (g_order, m_order) = order_args();
    let s = |p: &Path| p.to_str().unwrap().to_string();
    // Into an archive (msh2gltf reads the WEAR entry beside the model there).
    let units = tmp.join("units.rlb");
    std::fs::write(&units, nres::write(&[]).unwrap()).unwrap();
    let (new_rlb, game_s) = (s(&out.join("units.rlb")), s(&game));
    let mut args = vec![
        s(&input),
        "--into".into(),
        s(&units),
        "--name".into(),
        "NEW".into(),
        "-o".into(),
        new_rlb.clone(),
        "--game-dir".into(),
        game_s,
        "--texture-bits".into(),
        bits.into(),
    ];
    args.extend(g_order.iter().map(|x| x.to_string()));
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(&gltf2msh(&argv));
    // The game folder is untouched; the copies hold old + new entries.
    assert_eq!(std::fs::read(game.join("Material.lib")).unwrap(), old_mat);
    assert_eq!(std::fs::read(game.join("Textures.lib")).unwrap(), old_tex);
    let mat = std::fs::read(out.join("Material.lib")).unwrap();
    let tex = std::fs::read(out.join("Textures.lib")).unwrap();
    Authored {
        sources,
        out,
        new_rlb,
        old_mat,
        old_tex,
        mat,
        tex,
        g_order,
        m_order,
    }
}

/// Checks the new MAT0 and Texm entries' names, MAT0 types and attributes,
/// opacity and texture names; returns the MAT0 entry names.
fn check_new_entries(nm: &[nres::Entry], nt: &[nres::Entry]) -> Vec<String> {
    let names: Vec<String> = nm
        .iter()
        .map(|e| String::from_utf8_lossy(e.name).into_owned())
        .collect();
    assert_eq!(names, ["HULL_PAINT.0", "GLASS.0", "FLAT.0", "PHOTO.0"]);
    assert_eq!(
        nm.iter()
            .map(|e| (e.type_id, e.attr1, e.attr2))
            .collect::<Vec<_>>(),
        [
            (TYPE_MAT0, 0, 6),
            (TYPE_MAT0, 4, 6),
            (TYPE_MAT0, 2, 6),
            (TYPE_MAT0, 0, 6)
        ]
    );
    let tnames: Vec<String> = nt
        .iter()
        .map(|e| String::from_utf8_lossy(e.name).into_owned())
        .collect();
    assert_eq!(tnames, ["HULL_PAINT_TE.0", "TEXTURE.0", "PHOTO.0"]);
    for (e, (_, c, _, img)) in nm.iter().zip(MATS) {
        let m = Mat0::parse(e.data, 6).unwrap();
        assert_eq!(m.phases[0].params[3], (c[3] * 100.0).round() as u8);
        assert_eq!(m.primary_texture(), img.map(|i| tnames[i].clone()));
    }
    names
}

/// Checks each new Texm's format for `bits`, its full mip chain and its
/// pixels against the quantised source; returns the quantised sources.
fn check_new_texms(
    nt: &[nres::Entry],
    bits: &str,
    order: &texm::ChannelOrder,
    sources: &[RgbaImage],
) -> Vec<RgbaImage> {
    let alpha_format = if bits == "16" {
        TexFormat::Argb4444
    } else {
        TexFormat::Argb8888
    };
    let want_formats = if bits == "32" {
        [TexFormat::Argb8888; 3]
    } else {
        [TexFormat::Rgb565, alpha_format, TexFormat::Rgb565]
    };
    let mut expected = Vec::new();
    for (k, e) in nt.iter().enumerate() {
        let t = Texm::parse(e.data).unwrap();
        assert_eq!(t.format, want_formats[k], "texture {k}");
        assert_eq!(
            t.mip_count() as u32,
            texm::full_mip_count(t.width, t.height)
        );
        let src = if k == 2 {
            assert_eq!((t.width, t.height), (16, 16));
            image::imageops::resize(&sources[2], 16, 16, image::imageops::FilterType::Triangle)
        } else {
            sources[k].clone()
        };
        // The quantised source: what the Texm should decode to.
        let q = Texm::parse(&texm::encode(&src, t.format, order, 1, 32).unwrap())
            .unwrap()
            .decode_with(order, 0)
            .unwrap();
        assert_eq!(max_diff(&t.decode_with(order, 0).unwrap(), &q), 0);
        expected.push(q);
    }
    expected
}

/// Exports the new model with msh2gltf and checks every material's colour
/// (±0.5/255, alpha ±0.01) and pixels (±1) against `expected`.
fn check_exported(a: &Authored, names: &[String], expected: &[RgbaImage]) {
    let s = |p: &Path| p.to_str().unwrap().to_string();
    // msh2gltf of the result: same pixels (±1) and colours.
    let back = a.out.join("new.glb");
    let mut args = vec![format!("{}:NEW.msh", a.new_rlb), s(&back), "--force".into()];
    args.extend(a.m_order.iter().map(|x| x.to_string()));
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(&msh2gltf(&argv));
    let mats = exported(&back);
    for (i, (_, c, _, img)) in MATS.iter().enumerate() {
        let (name, bc, png) = mats.iter().find(|m| m.0 == names[i]).unwrap_or_else(|| {
            panic!(
                "{} not exported: {:?}",
                names[i],
                mats.iter().map(|m| &m.0).collect::<Vec<_>>()
            )
        });
        for k in 0..3 {
            assert!(
                (bc[k] - c[k]).abs() <= 0.5 / 255.0 + 1e-6,
                "{name}: colour {bc:?} vs {c:?}"
            );
        }
        assert!(
            (bc[3] - c[3]).abs() <= 0.01,
            "{name}: alpha {bc:?} vs {c:?}"
        );
        match (img, png) {
            (Some(k), Some(p)) => {
                let d = max_diff(p, &expected[*k]);
                assert!(d <= 1, "{name}: pixels differ by {d}");
            }
            (None, None) => {}
            (a, b) => panic!("{name}: texture {a:?} vs exported {}", b.is_some()),
        }
    }
}

/// The whole round trip at `--texture-bits bits`: author, check the new
/// library entries, export and compare.
fn check_round_trip(tmp: &Path, bits: &str) {
    let a = author_into_copies(tmp, bits);
    let nm = new_entries(&a.old_mat, &a.mat);
    let nt = new_entries(&a.old_tex, &a.tex);
    let names = check_new_entries(&nm, &nt);
    let order = if a.g_order.is_empty() {
        texm::RETAIL_ORDER
    } else {
        texm::ARGB_ORDER
    };
    let expected = check_new_texms(&nt, bits, &order, &a.sources);
    check_exported(&a, &names, &expected);
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn textures_16_bit_round_trip() {
    check_round_trip(tmp().path(), "16");
}

#[test]
fn textures_auto_and_32_bit_round_trip() {
    check_round_trip(tmp().path(), "auto");
    check_round_trip(tmp().path(), "32");
}

#[test]
fn collisions_force_and_in_place() {
    let t = tmp();
    let (glb_bytes, _) = scene();
    let input = t.path().join("scene.glb");
    std::fs::write(&input, &glb_bytes).unwrap();
    let game = t.path().join("GAME");
    game_dir(&game);
    let s = |p: PathBuf| p.to_str().unwrap().to_string();
    let (i, g) = (s(input.clone()), s(game.clone()));
    // Writing the copies into the game folder needs --in-place.
    let o = gltf2msh(&[&i, "-o", &s(game.join("NEW.msh")), "--game-dir", &g]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("--in-place"));
    assert!(!game.join("NEW.msh").exists());
    // In place: the game's libraries gain the entries.
    let before = std::fs::read(game.join("Material.lib")).unwrap();
    ok(&gltf2msh(&[
        &i,
        "-o",
        &s(t.path().join("a/NEW.msh")),
        "--game-dir",
        &g,
        "--in-place",
    ]));
    let after = std::fs::read(game.join("Material.lib")).unwrap();
    assert_eq!(new_entries(&before, &after).len(), 4);
    assert!(!t.path().join("a/Material.lib").exists());
    // Again: the names now exist -> refused (exit 2, lists every entry),
    // nothing written; --force (output files only) does not change that.
    for force in [false, true] {
        let mut args = vec![
            i.clone(),
            "-o".into(),
            s(t.path().join("b/NEW.msh")),
            "--game-dir".into(),
            g.clone(),
            "--in-place".into(),
        ];
        if force {
            args.push("--force".into());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = gltf2msh(&args);
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("lib.collision")
                && err.contains("HULL_PAINT.0")
                && err.contains("--replace-entries"),
            "{err}"
        );
        assert!(!t.path().join("b/NEW.msh").exists());
        assert_eq!(std::fs::read(game.join("Material.lib")).unwrap(), after);
    }
    // --replace-entries replaces them in place (same entry count).
    ok(&gltf2msh(&[
        &i,
        "-o",
        &s(t.path().join("b/NEW.msh")),
        "--game-dir",
        &g,
        "--in-place",
        "--replace-entries",
    ]));
    let forced = std::fs::read(game.join("Material.lib")).unwrap();
    assert_eq!(
        nres::read(&forced, nres::Mode::Strict)
            .unwrap()
            .entries
            .len(),
        6
    );
    assert_eq!(
        forced, after,
        "replacing with identical entries gives identical bytes"
    );
}

#[test]
fn lightmap_uv_res18_lightmaps_row_and_res15() {
    let t = tmp();
    let mut bin: Vec<u8> = Vec::new();
    let mut views = Vec::new();
    let mut view = |bin: &mut Vec<u8>, b: &[u8]| {
        while !bin.len().is_multiple_of(4) {
            bin.push(0);
        }
        views.push(json!({"buffer": 0, "byteOffset": bin.len(), "byteLength": b.len()}));
        bin.extend_from_slice(b);
        views.len() - 1
    };
    let f = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let pos = view(&mut bin, &f(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]));
    let uv0 = view(&mut bin, &f(&[0.0, 0.0, 1.0, 0.0, 0.0, 1.0]));
    let uv1 = view(&mut bin, &f(&[0.25, 0.5, 1.0 / 3.0, -0.1, 0.5, 70.0]));
    let r15: Vec<u8> = (0u8..24).collect();
    let r15v = view(&mut bin, &r15);
    let img = view(&mut bin, &png(&gradient(8, 8, false)));
    let json = json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"name": "hut", "mesh": 0}],
        "meshes": [{"primitives": [
            {"attributes": {"POSITION": 0, "TEXCOORD_0": 1, "TEXCOORD_1": 2, "_RES15": 3}, "material": 0},
            {"attributes": {"POSITION": 0, "TEXCOORD_0": 1}, "material": 1}
        ]}],
        "materials": [
            {"name": "wall", "occlusionTexture": {"index": 0, "texCoord": 1}},
            {"name": "roof"}
        ],
        "textures": [{"source": 0}],
        "images": [{"bufferView": img, "mimeType": "image/png", "name": "lm_hut"}],
        "accessors": [
            {"bufferView": pos, "componentType": 5126, "count": 3, "type": "VEC3",
             "min": [0.0, 0.0, 0.0], "max": [1.0, 1.0, 0.0]},
            {"bufferView": uv0, "componentType": 5126, "count": 3, "type": "VEC2"},
            {"bufferView": uv1, "componentType": 5126, "count": 3, "type": "VEC2"},
            {"bufferView": r15v, "componentType": 5125, "count": 3, "type": "VEC2"}
        ],
        "bufferViews": views,
        "buffers": [{"byteLength": bin.len()}],
    });
    let doc = gltf_import::parse(&glb(&json, &bin), None).unwrap();
    let a = gltf_import::author(&doc, &Default::default()).unwrap();
    let m = &a.model;
    // Res18 after Res5, lit vertices quantised, unlit 0; Res15 written back.
    let types: Vec<u32> = m.entries.iter().map(|e| e.type_id).collect();
    assert_eq!(&types[..7], &[1, 2, 3, 4, 5, 18, 15]);
    let r18 = m.res18.as_ref().unwrap();
    let q = |u: u16, v: u16| [u.to_le_bytes(), v.to_le_bytes()].concat();
    assert_eq!(r18[0].to_vec(), q(256, 512));
    assert_eq!(r18[1].to_vec(), q(341, 0));
    assert_eq!(r18[2].to_vec(), q(512, 65535));
    assert_eq!(r18[3..], [[0u8; 4]; 3]);
    let res15 = m.res15.as_ref().unwrap();
    assert_eq!(res15[0], [0, 1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(res15[2], [16, 17, 18, 19, 20, 21, 22, 23]);
    assert_eq!(res15[3], [0; 8]);
    assert_eq!(a.wear.lightmaps.len(), 1);
    assert_eq!(a.wear.lightmaps[0].name, "LM_HUT.0");
    assert_eq!(a.report.lightmap.as_deref(), Some("LM_HUT.0"));
    let bytes = mshgltf::msh::encode(m).unwrap();
    mshgltf::msh::decode(&bytes, mshgltf::msh::Mode::Strict).unwrap();
    let wear = mshgltf::material::Wear::parse(&a.wear.to_bytes().unwrap()).unwrap();
    assert_eq!(wear.lightmaps, a.wear.lightmaps);
    // The CLI writes the lightmap into LightMap.lib (565, flags4 0).
    let input = t.path().join("hut.glb");
    std::fs::write(&input, glb(&json, &bin)).unwrap();
    let game = t.path().join("GAME");
    game_dir(&game);
    let out = t.path().join("out");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    ok(&gltf2msh(&[
        &s(&input),
        "-o",
        &s(&out.join("HUT.msh")),
        "--game-dir",
        &s(&game),
    ]));
    let lm = std::fs::read(out.join("LightMap.lib")).unwrap();
    let lib = nres::read(&lm, nres::Mode::Strict).unwrap();
    assert_eq!(lib.entries.len(), 1);
    assert_eq!(lib.entries[0].name, b"LM_HUT.0");
    let tx = Texm::parse(lib.entries[0].data).unwrap();
    assert_eq!(
        (tx.format, tx.flags4, tx.mip_count()),
        (TexFormat::Rgb565, 0, 4)
    );
    let wea = std::fs::read_to_string(out.join("HUT.wea")).unwrap();
    assert!(
        wea.contains("LIGHTMAPS") && wea.contains("LM_HUT.0"),
        "{wea}"
    );
}

#[test]
fn bare_model_reads_its_wea_and_the_library_copies() {
    // gltf2msh -o out/NEW.msh writes NEW.wea beside it; msh2gltf of the bare
    // model reads that WEAR and the library copies in the same folder.
    let t = tmp();
    let (glb_bytes, _) = scene();
    let input = t.path().join("scene.glb");
    std::fs::write(&input, &glb_bytes).unwrap();
    let game = t.path().join("GAME");
    game_dir(&game);
    let out = t.path().join("out");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let (g_order, m_order) = order_args();
    let mut args = vec![
        s(&input),
        "-o".into(),
        s(&out.join("NEW.msh")),
        "--game-dir".into(),
        s(&game),
    ];
    args.extend(g_order.iter().map(|x| x.to_string()));
    ok(&gltf2msh(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
    ));
    let back = out.join("new.glb");
    let mut args = vec![s(&out.join("NEW.msh")), s(&back)];
    args.extend(m_order.iter().map(|x| x.to_string()));
    ok(&msh2gltf(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
    ));
    let mats = exported(&back);
    let names: Vec<&str> = mats.iter().map(|m| m.0.as_str()).collect();
    assert_eq!(names, ["HULL_PAINT.0", "GLASS.0", "FLAT.0", "PHOTO.0"]);
    assert_eq!(
        mats.iter().map(|m| m.2.is_some()).collect::<Vec<_>>(),
        [true, true, false, true]
    );
    assert!(
        (mats[2].1[1] - 0.9).abs() <= 0.5 / 255.0 + 1e-6,
        "{:?}",
        mats[2].1
    );
}

#[test]
fn images_are_budgeted_from_their_header() {
    // Image 2 is 20 x 12 = 240 pixels: 30 work units (limits::IMAGE_PIXELS_PER_UNIT).
    let (glb_bytes, _) = scene();
    let doc = gltf_import::parse(&glb_bytes, None).unwrap();
    let opts = |max_work| materials::TextureOptions {
        max_work,
        ..Default::default()
    };
    let e = materials::texture_from_image(&doc, None, 2, "PHOTO".into(), &opts(29)).unwrap_err();
    assert_eq!(e.rule, "limits.work");
    assert!(
        e.detail.contains("20 x 12 pixels") && e.detail.contains("--max-work 30"),
        "{e}"
    );
    let t = materials::texture_from_image(&doc, None, 2, "PHOTO".into(), &opts(30)).unwrap();
    assert_eq!(t.rgba.dimensions(), (16, 16));
}
