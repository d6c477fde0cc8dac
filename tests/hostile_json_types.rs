//! Issue 36 items 3 and 10: a glTF JSON value of the wrong type (or out of
//! the schema's range, or an enumeration it does not hold) is refused with
//! `gltf.json` naming its JSON pointer, never read as absent and written as
//! an edit; an integral number (`504.0`) is an integer, as JSON Schema
//! 2020-12 reads it; a repainted texture that models draw through the
//! `DEFAULT` fallback warns naming them. Synthetic GLBs built here: no
//! `../shared` needed.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use mshgltf::gltf_export::CellChoice;
use mshgltf::gltf_import::{self, GltfFile, ImportOptions};
use serde_json::{json, Value};

/// The committed sample `name` as msh2gltf exports it: base, JSON, BIN.
fn exported(name: &str) -> (mshgltf::msh::Model, Value, Vec<u8>) {
    let (base, _, doc) = common::export_sample(name, CellChoice::default());
    (base, doc.to_json(), doc.buffers[0].clone())
}

/// The GLB of `json` with the string `"@@"` replaced by the JSON text
/// `raw` (a number serde_json's `Value` cannot hold, such as 2^64), parsed.
fn parse_raw(json: &Value, bin: &[u8], raw: &str) -> Result<GltfFile, gltf_import::ImportError> {
    let mut j = serde_json::to_string(json)
        .unwrap()
        .replace("\"@@\"", raw)
        .into_bytes();
    while !j.len().is_multiple_of(4) {
        j.push(b' ');
    }
    let total = 12 + 8 + j.len() + 8 + bin.len();
    let mut glb = Vec::with_capacity(total);
    glb.extend_from_slice(b"glTF");
    glb.extend_from_slice(&2u32.to_le_bytes());
    glb.extend_from_slice(&(total as u32).to_le_bytes());
    glb.extend_from_slice(&(j.len() as u32).to_le_bytes());
    glb.extend_from_slice(b"JSON");
    glb.extend_from_slice(&j);
    glb.extend_from_slice(&(bin.len() as u32).to_le_bytes());
    glb.extend_from_slice(b"BIN\0");
    glb.extend_from_slice(bin);
    gltf_import::parse(&glb, None)
}

/// `json` as a GLB, parsed.
fn parse(json: &Value, bin: &[u8]) -> Result<GltfFile, gltf_import::ImportError> {
    parse_raw(json, bin, "\"@@\"")
}

/// Asserts the parse refused with `gltf.json` naming `pointer`.
fn refused_at(r: Result<GltfFile, gltf_import::ImportError>, pointer: &str, case: &str) {
    match r {
        Ok(_) => panic!("{case}: read (a wrong type read as absent), not refused at {pointer}"),
        Err(e) => assert!(
            e.rule == "gltf.json" && e.detail.starts_with(&format!("{pointer}: ")),
            "{case}: {e}"
        ),
    }
}

#[test]
fn an_accessors_buffer_view_of_the_wrong_type_is_refused_naming_it() {
    let (_, mut json, bin) = exported("static_box.msh");
    assert!(json["accessors"][0]["bufferView"].is_u64());
    for (value, raw) in [
        (json!("0"), None),
        (Value::Null, None),
        (json!([0]), None),
        (json!("@@"), Some("18446744073709551616")),
    ] {
        json["accessors"][0]["bufferView"] = value.clone();
        let r = parse_raw(&json, &bin, raw.unwrap_or("\"@@\""));
        refused_at(
            r,
            "/accessors/0/bufferView",
            &format!("bufferView {value} {raw:?}"),
        );
    }
}

#[test]
fn a_translation_component_as_a_string_is_refused_naming_it() {
    let (_, mut json, bin) = exported("lod_tower.msh");
    let nodes = json["nodes"].as_array_mut().unwrap();
    assert!(nodes.len() > 1);
    nodes[1]["translation"] = json!(["-1.1", 0.0, 0.0]);
    refused_at(parse(&json, &bin), "/nodes/1/translation/0", "translation");
}

#[test]
fn primitives_as_an_object_are_refused_naming_them() {
    let (_, mut json, bin) = exported("static_box.msh");
    json["meshes"][0]["primitives"] = json!({});
    refused_at(parse(&json, &bin), "/meshes/0/primitives", "primitives {}");
}

#[test]
fn animations_as_an_object_are_refused_naming_them() {
    let (_, mut json, bin) = exported("anim_rotor.msh");
    assert!(json["animations"].as_array().is_some_and(|a| !a.is_empty()));
    json["animations"] = json!({});
    refused_at(parse(&json, &bin), "/animations", "animations {}");
}

#[test]
fn integral_floats_are_integers_as_the_schema_reads_them() {
    let (base, mut json, bin) = exported("anim_rotor.msh");
    let mut floated = 0;
    for list in ["accessors", "bufferViews"] {
        for e in json[list].as_array_mut().unwrap() {
            for k in [
                "byteOffset",
                "byteLength",
                "count",
                "bufferView",
                "componentType",
            ] {
                if let Some(n) = e.get(k).and_then(Value::as_u64) {
                    e[k] = json!(n as f64);
                    floated += usize::from(k == "byteOffset" && n > 0);
                }
            }
        }
    }
    for n in json["nodes"].as_array_mut().unwrap() {
        if let Some(m) = n.get("mesh").and_then(Value::as_u64) {
            n["mesh"] = json!(m as f64);
        }
    }
    assert!(floated > 0, "some byteOffset (such as 504) is not 0");
    let text = serde_json::to_string(&json).unwrap();
    assert!(
        text.contains("\"byteOffset\":") && text.contains(".0,"),
        "floats written"
    );
    let doc = parse(&json, &bin).unwrap();
    let out = gltf_import::import_with_base(&doc, &base, &ImportOptions::default()).unwrap();
    assert!(
        out.report.unchanged,
        "504.0 read as 504: the unedited model is unchanged"
    );
}

/// A copy of `samples/demo` in a temporary folder.
fn game() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/demo");
    for f in ["demo.rlb", "Material.lib", "Textures.lib"] {
        std::fs::copy(demo.join(f), t.path().join(f)).unwrap();
    }
    t
}

fn split_glb(b: &[u8]) -> (Value, Vec<u8>) {
    let u = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap()) as usize;
    let jl = u(12);
    let json = serde_json::from_slice(&b[20..20 + jl]).unwrap();
    let bl = u(20 + jl);
    (json, b[28 + jl..28 + jl + bl].to_vec())
}

/// msh2gltf's GLB of `demo.rlb:TOWER.msh` in `dir`: (JSON, BIN).
fn export_tower(dir: &Path) -> (Value, Vec<u8>) {
    let glb = dir.join("tower.glb");
    let o = common::msh2gltf()
        .arg(format!("{}:TOWER.msh", dir.join("demo.rlb").display()))
        .arg(&glb)
        .args(["-q", "--force"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    split_glb(&std::fs::read(&glb).unwrap())
}

/// `gltf2msh EDIT.glb --base demo.rlb:TOWER.msh -o DIR/demo.rlb --game-dir
/// GAME` in `dir` (`game`), the libraries' copies beside the output.
fn back(dir: &Path, json: &Value, bin: &[u8], out: &Path) -> Output {
    let glb = dir.join("edit.glb");
    std::fs::write(&glb, common::glb(json, bin)).unwrap();
    std::fs::create_dir_all(out).unwrap();
    common::gltf2msh()
        .arg(&glb)
        .arg("--base")
        .arg(format!("{}:TOWER.msh", dir.join("demo.rlb").display()))
        .arg("-o")
        .arg(out.join("demo.rlb"))
        .arg("--game-dir")
        .arg(dir)
        .output()
        .unwrap()
}

/// The index of the demo's glTF material `name`.
fn material(json: &Value, name: &str) -> usize {
    json["materials"]
        .as_array()
        .unwrap()
        .iter()
        .position(|m| m["name"] == name)
        .unwrap()
}

/// Each case refused by `gltf2msh` with `gltf.json` at its pointer, and no
/// library or model written.
fn refused_by_gltf2msh(cases: Vec<(String, Value, String)>) {
    let g = game();
    let (json, bin) = export_tower(g.path());
    let k = material(&json, "STEEL.0");
    for (n, (case, edit, pointer)) in cases.into_iter().enumerate() {
        let mut j = json.clone();
        let ptr = pointer.replace("{k}", &k.to_string());
        let (parent, key) = ptr.rsplit_once('/').unwrap();
        let at = j.pointer_mut(parent).unwrap();
        match at {
            Value::Array(a) => a[key.parse::<usize>().unwrap()] = edit,
            _ => at[key] = edit,
        }
        let out: PathBuf = g.path().join(format!("o{n}"));
        let o = back(g.path(), &j, &bin, &out);
        let e = common::stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{case}: {e}");
        assert!(e.contains(&format!("gltf.json: {ptr}: ")), "{case}: {e}");
        assert!(
            !out.join("Material.lib").exists(),
            "{case}: Material.lib written"
        );
        assert!(!out.join("demo.rlb").exists(), "{case}");
    }
}

#[test]
fn a_material_of_the_wrong_type_is_refused_never_written_white() {
    let bcf = "/materials/{k}/pbrMetallicRoughness/baseColorFactor";
    refused_by_gltf2msh(vec![
        (
            "baseColorFactor as strings".into(),
            json!(["1", "0.5", "0", "1"]),
            format!("{bcf}/0"),
        ),
        (
            "baseColorFactor of 3 values".into(),
            json!([1.0, 0.5, 0.0]),
            bcf.into(),
        ),
        (
            "pbrMetallicRoughness as a string".into(),
            json!("red"),
            "/materials/{k}/pbrMetallicRoughness".into(),
        ),
    ]);
}

#[test]
fn base_colour_factors_out_of_the_schemas_range_are_refused() {
    let bcf = "/materials/{k}/pbrMetallicRoughness/baseColorFactor";
    refused_by_gltf2msh(vec![
        (
            "baseColorFactor -0.5".into(),
            json!(-0.5),
            format!("{bcf}/1"),
        ),
        ("baseColorFactor 2.0".into(), json!(2.0), format!("{bcf}/0")),
    ]);
}

#[test]
fn an_alpha_mode_the_schema_does_not_hold_is_refused() {
    refused_by_gltf2msh(vec![
        (
            "alphaMode GARBAGE".into(),
            json!("GARBAGE"),
            "/materials/{k}/alphaMode".into(),
        ),
        (
            "alphaMode 7".into(),
            json!(7),
            "/materials/{k}/alphaMode".into(),
        ),
    ]);
}

/// `demo.rlb` with its WEAR's material names replaced, byte for byte, by
/// names `Material.lib` does not hold (`STEEL.0` → `NOSUCH0`, `GLASS.1` →
/// `NOSUCH1`): a model the game draws through the `DEFAULT` fallback.
fn fallback_model(demo: &[u8]) -> Vec<u8> {
    let mut b = demo.to_vec();
    for (from, to) in [(&b"STEEL.0"[..], &b"NOSUCH0"[..]), (b"GLASS.1", b"NOSUCH1")] {
        let at = b
            .windows(from.len())
            .position(|w| w == from)
            .expect("the WEAR names the material");
        b[at..at + from.len()].copy_from_slice(to);
    }
    b
}

#[test]
fn a_repainted_texture_drawn_through_the_default_fallback_warns_naming_the_models() {
    let g = game();
    // DEFAULT draws STEEL_TX.0 (its phase 0 names it), as retail's DEFAULT
    // draws DEFTEX.0.
    let lib_path = g.path().join("Material.lib");
    let mut lib = std::fs::read(&lib_path).unwrap();
    let a = mshgltf::nres::read(&lib, mshgltf::nres::Mode::Strict).unwrap();
    let i = a.find(b"DEFAULT").unwrap();
    let data = a.entries[i].data.as_ptr() as usize - lib.as_ptr() as usize;
    let name = &mut lib[data + 14 + 18..data + 14 + 34];
    name.fill(0);
    name[..10].copy_from_slice(b"STEEL_TX.0");
    std::fs::write(&lib_path, &lib).unwrap();
    // Two other models whose materials Material.lib does not hold.
    let demo = std::fs::read(g.path().join("demo.rlb")).unwrap();
    for f in ["fallback1.rlb", "fallback2.rlb"] {
        std::fs::write(g.path().join(f), fallback_model(&demo)).unwrap();
    }
    let (mut json, bin) = export_tower(g.path());
    let t = mshgltf::material::Library::open(&g.path().join("Textures.lib")).unwrap();
    let tex = mshgltf::material::texm::Texm::parse(t.data(t.find("STEEL_TX.0").unwrap())).unwrap();
    let mut img = tex.decode();
    for x in 0..img.width() {
        img.put_pixel(x, 0, image::Rgba([255, 0, 0, 255]));
    }
    std::fs::write(
        g.path().join("painted.png"),
        mshgltf::material::texm::encode_png(&img).unwrap(),
    )
    .unwrap();
    let i = json["images"]
        .as_array()
        .unwrap()
        .iter()
        .position(|i| i["name"] == "STEEL_TX.0")
        .unwrap();
    json["images"][i] = json!({"uri": "painted.png", "name": "STEEL_TX.0"});
    let o = back(g.path(), &json, &bin, &g.path().join("o"));
    let e = common::stderr(&o);
    assert!(o.status.success(), "{e}");
    let line = e
        .lines()
        .find(|l| l.contains("texture STEEL_TX.0 is shared"))
        .unwrap_or_else(|| panic!("no shared-use warning for the repainted texture: {e}"));
    assert!(
        line.contains("2 other model(s)")
            && line.contains("fallback1.rlb:TOWER.msh")
            && line.contains("fallback2.rlb:TOWER.msh")
            && line.contains("2 of them through the DEFAULT fallback"),
        "{line}"
    );
}

#[test]
fn extras_nested_too_deep_are_refused_never_read_as_null() {
    let (_, mut json, bin) = exported("static_box.msh");
    json["nodes"][0]["extras"] = json!("@@");
    // 127 levels are read as they are; 200 are refused, not read as null.
    for (depth, read) in [(127usize, true), (200, false)] {
        let raw = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let r = parse_raw(&json, &bin, &raw);
        match (read, r) {
            (true, Ok(f)) => {
                let doc = f.to_json();
                let mut v = &doc["nodes"][0]["extras"];
                let mut n = 0;
                while let Some(inner) = v.as_array() {
                    n += 1;
                    match inner.first() {
                        Some(x) => v = x,
                        None => break,
                    }
                }
                assert_eq!(n, depth, "the extras' tree as written");
            }
            (false, Err(e)) => assert!(
                e.to_string().contains("deep") || e.to_string().contains("recursion"),
                "{e}"
            ),
            (read, r) => panic!("depth {depth}: read={read}, got {:?}", r.map(|_| ())),
        }
    }
}

/// Asserts `r` refused with `gltf.json` naming `pointer` (`rule`,
/// `detail` of a mission or terrain error).
fn refused_with<T, E: std::fmt::Display>(
    r: Result<T, E>,
    rule: impl Fn(&E) -> (&'static str, String),
    pointer: &str,
    case: &str,
) {
    match r {
        Ok(_) => panic!("{case}: read (a wrong type read as absent), not refused at {pointer}"),
        Err(e) => {
            let (r, d) = rule(&e);
            assert!(
                r == "gltf.json" && d.starts_with(&format!("{pointer}: ")),
                "{case}: {e}"
            );
        }
    }
}

/// A mission reference scene: placed unit node 0 (`children`) over a
/// node with `mesh`, one triangle (issue: lenient reads of node links).
fn unit_reference(children: Value, mesh: Value) -> GltfFile {
    let pts: [[f32; 3]; 3] = [[0.0, -1.25, 0.0], [1.0, 0.5, 0.0], [0.0, 2.0, -1.0]];
    let bin: Vec<u8> = pts.iter().flatten().flat_map(|v| v.to_le_bytes()).collect();
    GltfFile::new(
        json!({
            "asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
            "nodes": [
                {"name": "U0 tank", "children": children,
                 "extras": {"parkan_object": {"index": 0}}},
                {"name": "body", "mesh": mesh}],
            "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
            "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3"}],
            "bufferViews": [{"buffer": 0, "byteLength": 36}],
            "buffers": [{"byteLength": 36}],
        }),
        vec![bin],
    )
}

#[test]
fn a_models_child_or_mesh_that_is_not_an_index_is_refused_not_skipped() {
    use mshgltf::convention::Up;
    use mshgltf::mission::ground::model_points;
    let e = |e: &mshgltf::mission::MissionError| (e.rule, e.detail.clone());
    let good = model_points(&unit_reference(json!([1]), json!(0)), 0, Up::Y).unwrap();
    assert_eq!(good.len(), 3, "the unit's triangle");
    for (children, mesh, at) in [
        (json!(["1"]), json!(0), "/nodes/0/children/0"),
        (json!([1, 7]), json!(0), "/nodes/0/children/1"),
        (json!({"0": 1}), json!(0), "/nodes/0/children"),
        (json!([1]), json!("0"), "/nodes/1/mesh"),
        (json!([1]), json!(3), "/nodes/1/mesh"),
    ] {
        let r = model_points(&unit_reference(children.clone(), mesh.clone()), 0, Up::Y);
        refused_with(r, e, at, &format!("children {children} mesh {mesh}"));
    }
}

#[test]
fn a_map_nodes_mesh_or_mode_of_the_wrong_type_is_refused_naming_it() {
    use mshgltf::terrain::author::{read_grid, Palette};
    let palette = Palette {
        rows: vec!["FOOT".into(), "GRASS".into()],
    };
    let e = |e: &mshgltf::terrain::TerrainError| (e.rule, e.detail.clone());
    let doc = |mesh: Value, mode: Value| {
        GltfFile::new(
            json!({
                "asset": {"version": "2.0"}, "scenes": [{"nodes": [0]}],
                "nodes": [{"name": "map", "mesh": mesh}],
                "meshes": [{"primitives": [{"attributes": {}, "mode": mode}]}],
            }),
            vec![],
        )
    };
    for (mesh, mode, at) in [
        (json!("0"), json!(4), "/nodes/0/mesh"),
        (Value::Null, json!(4), "/nodes/0/mesh"),
        (json!(1), json!(4), "/nodes/0/mesh"),
        (json!(0), json!("5"), "/meshes/0/primitives/0/mode"),
        (
            json!(0),
            json!(4),
            "/meshes/0/primitives/0/attributes/POSITION",
        ),
    ] {
        let mut d = doc(mesh.clone(), mode.clone());
        if at.ends_with("POSITION") {
            let mut t = d.to_json();
            t["meshes"][0]["primitives"][0]["attributes"]["POSITION"] = json!([0]);
            d = GltfFile::new(t, vec![]);
        }
        refused_with(
            read_grid(&d, &palette),
            e,
            at,
            &format!("mesh {mesh} mode {mode}"),
        );
    }
}

#[test]
fn a_mission_scene_index_of_the_wrong_type_is_refused_not_read_as_0() {
    use mshgltf::mission::{back, Mission};
    let e = |e: &mshgltf::mission::MissionError| (e.rule, e.detail.clone());
    let doc = |scene: Value, roots: Value| {
        GltfFile::new(
            json!({
                "asset": {"version": "2.0"}, "scene": scene,
                "scenes": [{"nodes": roots,
                            "extras": {"parkan_mission": {"conventions": {"up": "y"}}}}],
                "nodes": [{"name": "group"}],
            }),
            vec![],
        )
    };
    let base = Mission::default();
    let ok = doc(json!(0), json!([0]));
    assert!(back::apply(&ok, &base, &ok).is_ok());
    for (scene, at) in [
        (json!("0"), "/scene"),
        (json!(0.5), "/scene"),
        (json!(1), "/scene"),
    ] {
        let d = doc(scene.clone(), json!([0]));
        refused_with(
            back::apply(&d, &base, &ok),
            e,
            at,
            &format!("scene {scene}"),
        );
        refused_with(back::conventions_up(&d.to_json()), e, at, "conventions_up");
    }
}
