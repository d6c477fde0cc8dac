//! gltf2msh --base (issue 11, class 6): mesh edits that MSH cannot express
//! through the base (a deleted mesh, a node re-pointed to another slot's
//! mesh, a detached node) are refused with a rule, never reported as
//! "unchanged".

mod common;

use std::path::Path;

use mshgltf::convert::{self, ConvertOptions, ModelRef};
use mshgltf::gltf_export::CellChoice;
use mshgltf::gltf_import::{self, GltfFile, ImportOptions};
use mshgltf::msh::{self, Model, NONE16};

/// The sample `name` and msh2gltf's glTF of it showing `cells`.
fn exported(name: &str, cells: CellChoice) -> (Model, GltfFile) {
    let (base, _, doc) = common::export_sample(name, cells);
    (base, doc)
}

fn rule(doc: &GltfFile, base: &Model) -> Result<bool, String> {
    gltf_import::import_with_base(doc, base, &ImportOptions::default())
        .map(|i| i.report.unchanged)
        .map_err(|e| e.rule.to_string())
}

/// glTF nodes that carry a mesh.
fn with_mesh(doc: &GltfFile) -> Vec<usize> {
    (0..doc.to_json()["nodes"].as_array().unwrap().len())
        .filter(|&i| doc.to_json()["nodes"][i].get("mesh").is_some())
        .collect()
}

#[test]
fn unedited_documents_are_unchanged_at_every_cell() {
    for name in ["anim_rotor.msh", "lod_tower.msh", "static_box.msh"] {
        for (state, lod) in [(0, 0), (1, 0), (2, 0)] {
            let (base, doc) = exported(
                name,
                CellChoice {
                    state,
                    lod,
                    all_cells: false,
                },
            );
            assert_eq!(rule(&doc, &base), Ok(true), "{name} S{state}L{lod}");
        }
        let (base, doc) = exported(
            name,
            CellChoice {
                all_cells: true,
                ..Default::default()
            },
        );
        assert_eq!(rule(&doc, &base), Ok(true), "{name} all cells");
    }
}

#[test]
fn deleting_a_mesh_is_refused() {
    let (base, mut doc) = exported("lod_tower.msh", CellChoice::default());
    let g = with_mesh(&doc)[0];
    doc.tree_mut()["nodes"][g]
        .as_object_mut()
        .unwrap()
        .remove("mesh");
    assert_eq!(rule(&doc, &base), Err("gltf.match.mesh".into()));
}

#[test]
fn re_pointing_a_node_is_refused() {
    let (base, mut doc) = exported("lod_tower.msh", CellChoice::default());
    let m = with_mesh(&doc);
    let meshes: Vec<_> = m
        .iter()
        .map(|&g| doc.to_json()["nodes"][g]["mesh"].clone())
        .collect();
    let other = m
        .iter()
        .position(|&g| doc.to_json()["nodes"][g]["mesh"] != meshes[0])
        .expect("two nodes with different meshes");
    doc.tree_mut()["nodes"][m[0]]["mesh"] = meshes[other].clone();
    assert_eq!(rule(&doc, &base), Err("gltf.match.mesh".into()));
}

#[test]
fn re_pointing_a_cell_node_is_refused() {
    let (base, mut doc) = exported(
        "lod_tower.msh",
        CellChoice {
            all_cells: true,
            ..Default::default()
        },
    );
    let m = with_mesh(&doc);
    let first = doc.to_json()["nodes"][m[0]]["mesh"].clone();
    let other = m
        .iter()
        .find(|&&g| doc.to_json()["nodes"][g]["mesh"] != first)
        .copied()
        .expect("two cell nodes with different meshes");
    doc.tree_mut()["nodes"][m[0]]["mesh"] = doc.to_json()["nodes"][other]["mesh"].clone();
    assert_eq!(rule(&doc, &base), Err("gltf.match.mesh".into()));
}

#[test]
fn detaching_a_node_is_refused() {
    let (base, mut doc) = exported("anim_rotor.msh", CellChoice::default());
    let nodes = doc.to_json()["nodes"].as_array().unwrap().clone();
    let (p, _) = nodes
        .iter()
        .enumerate()
        .find(|(_, n)| n.get("children").is_some())
        .expect("a parent");
    let child = doc.to_json()["nodes"][p]["children"][0].clone();
    doc.tree_mut()["nodes"][p]
        .as_object_mut()
        .unwrap()
        .remove("children");
    let s = doc.to_json()["scene"].as_u64().unwrap_or(0) as usize;
    doc.tree_mut()["scenes"][s]["nodes"]
        .as_array_mut()
        .unwrap()
        .push(child);
    assert_eq!(rule(&doc, &base), Err("gltf.hierarchy".into()));
    // The base does have that parent link.
    assert!(base.nodes38().iter().any(|n| n.parent != NONE16));
}

/// tower.MSH of samples/demo/demo.rlb exported with the demo libraries
/// (colours and textures resolved).
fn exported_with_libraries() -> (Model, GltfFile) {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/demo");
    let arch = std::fs::read(demo.join("demo.rlb")).unwrap();
    let a = mshgltf::nres::read(&arch, mshgltf::nres::Mode::Strict).unwrap();
    let e = mshgltf::source::find_entry(&a, "tower.MSH").unwrap();
    let bytes = a.entries[e].data.to_vec();
    let base = msh::decode(&bytes, msh::Mode::Strict).unwrap().model;
    let libs = mshgltf::material::library::Libraries::load(&demo).unwrap();
    let m = ModelRef {
        source: "tower.MSH".into(),
        stem: "tower".into(),
        bytes: &bytes,
        wear: mshgltf::source::find_wear(&a, a.entries[e].name),
    };
    let x = convert::convert(&m, Some(&libs), &ConvertOptions::default())
        .unwrap()
        .exported;
    let json = serde_json::to_value(&x.root).unwrap();
    (base, GltfFile::new(json, vec![x.bin]))
}

/// Material `m` as exported without a texture.
fn m_untextured(m: &mut serde_json::Value) {
    m["pbrMetallicRoughness"]
        .as_object_mut()
        .unwrap()
        .remove("baseColorTexture");
    m["extras"]["msh"]["exported"]["texture"] = serde_json::Value::Null;
}

#[test]
fn material_edits_with_base_are_refused_naming_what_changed() {
    let (base, doc) = exported_with_libraries();
    assert_eq!(rule(&doc, &base), Ok(true));
    let mats = doc.to_json()["materials"].as_array().unwrap().len();
    assert!(mats > 0);
    let textured = (0..mats)
        .find(|&i| {
            doc.to_json()["materials"][i]["pbrMetallicRoughness"]
                .get("baseColorTexture")
                .is_some()
        })
        .expect("a textured material in the demo");
    let name = doc.to_json()["materials"][0]["name"]
        .as_str()
        .unwrap()
        .to_string();
    // Colour.
    let mut d = doc.clone();
    d.tree_mut()["materials"][0]["pbrMetallicRoughness"]["baseColorFactor"] =
        serde_json::json!([0.9, 0.1, 0.1, 1.0]);
    let e = gltf_import::import_with_base(&d, &base, &ImportOptions::default()).unwrap_err();
    assert_eq!(e.rule, "gltf.material_edit");
    assert!(
        e.detail.contains(&format!("material 0 {name:?}")) && e.detail.contains("colour"),
        "{e}"
    );
    // Opacity: an edit once the material blends; the alpha of a material
    // exported OPAQUE and still OPAQUE is not compared (glTF ignores it,
    // Blender's importer drops it).
    let mut d = doc.clone();
    d.tree_mut()["materials"][0]["pbrMetallicRoughness"]["baseColorFactor"][3] =
        serde_json::json!(0.5);
    assert_eq!(doc.to_json()["materials"][0]["alphaMode"], "OPAQUE");
    assert_eq!(rule(&d, &base), Ok(true));
    d.tree_mut()["materials"][0]["alphaMode"] = serde_json::json!("BLEND");
    let e = gltf_import::import_with_base(&d, &base, &ImportOptions::default()).unwrap_err();
    assert!(e.detail.contains("opacity"), "{e}");
    // Blender 4.2+ writes an untextured BLEND material of alpha 1 as
    // OPAQUE: not an edit; with a texture (or an alpha below 1) it is.
    let mut d = doc.clone();
    let mut tree = d.tree_mut();
    let m = &mut tree["materials"][0];
    m["extras"]["msh"]["exported"]["alpha_mode"] = serde_json::json!("BLEND");
    m["extras"]["msh"]["exported"]["color"][3] = serde_json::json!(1.0);
    m["pbrMetallicRoughness"]["baseColorFactor"][3] = serde_json::json!(1.0);
    m["alphaMode"] = serde_json::json!("OPAQUE");
    let textured_now = m["pbrMetallicRoughness"].get("baseColorTexture").is_some();
    drop(tree);
    let e = gltf_import::import_with_base(&d, &base, &ImportOptions::default());
    assert_eq!(e.is_err(), textured_now, "{e:?}");
    m_untextured(&mut d.tree_mut()["materials"][0]);
    assert_eq!(rule(&d, &base), Ok(true));
    d.tree_mut()["materials"][0]["pbrMetallicRoughness"]["baseColorFactor"][3] =
        serde_json::json!(0.5);
    let e = gltf_import::import_with_base(&d, &base, &ImportOptions::default()).unwrap_err();
    assert!(e.detail.contains("alphaMode BLEND -> OPAQUE"), "{e}");
    // Texture: another image name, or removed.
    let mut d = doc.clone();
    let t = doc.to_json()["materials"][textured]["pbrMetallicRoughness"]["baseColorTexture"]
        ["index"]
        .as_u64()
        .unwrap() as usize;
    let img = doc.to_json()["textures"][t]["source"].as_u64().unwrap() as usize;
    d.tree_mut()["images"][img]["name"] = serde_json::json!("RUST");
    let e = gltf_import::import_with_base(&d, &base, &ImportOptions::default()).unwrap_err();
    assert!(
        e.detail.contains("texture") && e.detail.contains("RUST"),
        "{e}"
    );
    let mut d = doc.clone();
    d.tree_mut()["materials"][textured]["pbrMetallicRoughness"]
        .as_object_mut()
        .unwrap()
        .remove("baseColorTexture");
    let e = gltf_import::import_with_base(&d, &base, &ImportOptions::default()).unwrap_err();
    assert!(e.detail.contains("texture"), "{e}");
    // A Blender duplicate suffix on the image is not an edit.
    let mut d = doc.clone();
    let tree = doc.to_json();
    let old = tree["images"][img]["name"].as_str().unwrap();
    d.tree_mut()["images"][img]["name"] = serde_json::json!(format!("{old}.001"));
    assert_eq!(rule(&d, &base), Ok(true));
}

#[test]
fn extras_written_as_numbers_match_like_booleans() {
    let (base, mut doc) = exported("anim_rotor.msh", CellChoice::default());
    for m in doc.tree_mut()["materials"].as_array_mut().unwrap() {
        let e = &mut m["extras"]["msh"];
        let k = e["material_index"].as_u64().unwrap();
        e["material_index"] = serde_json::json!(k as f64);
        if e.get("lit").is_some() {
            e["lit"] = serde_json::json!(1);
        }
    }
    for n in doc.tree_mut()["nodes"].as_array_mut().unwrap() {
        if let Some(r) = n["extras"]["msh"]["node"].as_u64() {
            n["extras"]["msh"]["node"] = serde_json::json!(r as f64);
        }
    }
    assert_eq!(rule(&doc, &base), Ok(true));
}

/// Issue 15 item 9: an invalid hierarchy is refused, never "unchanged".
#[test]
fn invalid_hierarchies_are_refused() {
    let (base, doc) = exported("anim_rotor.msh", CellChoice::default());
    let nodes = doc.to_json()["nodes"].as_array().unwrap().len();
    // A child listed twice: a second parent names a node that has one.
    let (child, parent) = (0..nodes)
        .find_map(|p| {
            doc.to_json()["nodes"][p]["children"]
                .as_array()
                .and_then(|c| c.first())
                .map(|c| (c.as_u64().unwrap(), p))
        })
        .expect("the sample has a child node");
    let other = (0..nodes)
        .find(|&p| p != parent && p as u64 != child)
        .unwrap();
    let mut twice = doc.clone();
    let mut tree = twice.tree_mut();
    let ch = tree["nodes"][other]
        .as_object_mut()
        .unwrap()
        .entry("children")
        .or_insert(serde_json::json!([]));
    ch.as_array_mut().unwrap().push(serde_json::json!(child));
    drop(tree);
    assert_eq!(rule(&twice, &base), Err("gltf.hierarchy".into()));
    // The same child twice under one parent.
    let mut dup = doc.clone();
    dup.tree_mut()["nodes"][parent]["children"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!(child));
    assert_eq!(rule(&dup, &base), Err("gltf.hierarchy".into()));
    // No scene.
    let mut none = doc.clone();
    none.tree_mut().as_object_mut().unwrap().remove("scenes");
    assert_eq!(rule(&none, &base), Err("gltf.hierarchy".into()));
    // The unedited document is still unchanged.
    assert_eq!(rule(&doc, &base), Ok(true));
}

/// Issue 15 item 9: schema-invalid glTFs are refused with clear rules.
#[test]
fn schema_invalid_documents_are_refused() {
    let (base, doc) = exported("static_box.msh", CellChoice::default());
    let mut neg = doc.clone();
    neg.tree_mut()["meshes"][0]["primitives"][0]["mode"] = serde_json::json!(-1);
    assert_eq!(rule(&neg, &base), Err("gltf.mode".into()));
    let mut stride = doc.clone();
    let pos = stride.to_json()["meshes"][0]["primitives"][0]["attributes"]["POSITION"]
        .as_u64()
        .unwrap() as usize;
    let view = stride.accessor_def(pos).unwrap()["bufferView"]
        .as_u64()
        .unwrap() as usize;
    stride
        .edit_buffer_view(view, |v| v["byteStride"] = serde_json::json!(4))
        .unwrap();
    assert_eq!(rule(&stride, &base), Err("gltf.accessor".into()));
    let mut min = serde_json::to_vec(&doc.to_json()).unwrap();
    let mut v: serde_json::Value = serde_json::from_slice(&min).unwrap();
    v["asset"]["minVersion"] = serde_json::json!("2.5");
    min = serde_json::to_vec(&v).unwrap();
    let e = gltf_import::parse(&min, None).unwrap_err();
    assert_eq!(e.rule, "gltf.version");
    assert!(e.to_string().contains("minVersion"), "{e}");
}
