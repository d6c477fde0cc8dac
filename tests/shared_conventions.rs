//! format-notes §6 against the corpus manifest, for every valid model: the
//! per-model conventions decided from the file (retail or seed), and what
//! the exported glTF shows because of them: node names (R1), Res10 labels,
//! cockpit nodes (R11), each batch's material key, WEAR row, lightmap and
//! texture (R2, R4, R5), and each material's alphaMode and base colour
//! (R9, R10), and the unedited trip back (`gltf2msh --base` path) is
//! byte-identical. World matrices at every manifest time are checked by
//! `shared_export.rs`, texture pixels by `shared_textures.rs`.
//! Skips (prints a line) when ../shared/corpus is missing.

mod common;

use std::collections::HashMap;
use std::path::Path;

use mshgltf::convention::{self, BatchLayout, QuatLayout};
use mshgltf::convert::{convert, ConvertOptions, ModelRef};
use mshgltf::gltf_export::Exported;
use mshgltf::material::Libraries;
use mshgltf::msh::{self, Mode};
use mshgltf::{nres, source};
use serde_json::Value;

fn extras(v: &Value) -> Value {
    v.get("extras").cloned().unwrap_or(Value::Null)
}

/// What the walk over the manifest's models counted.
#[derive(Default)]
struct Counts {
    models: usize,
    batches: usize,
    lit: usize,
    cockpits: usize,
    labels: usize,
    materials: usize,
}

/// The model's bytes and its WEAR sibling (archive entries only); archive
/// bytes are read once into `archives`.
fn model_bytes(
    root: &Path,
    file: &str,
    entry: Option<&str>,
    archives: &mut HashMap<String, Vec<u8>>,
) -> (Vec<u8>, Option<Vec<u8>>) {
    match entry {
        Some(e) if !file.starts_with("models/") => {
            let data = archives
                .entry(file.to_string())
                .or_insert_with(|| std::fs::read(root.join(file)).expect("archive"));
            let a = nres::read(data, nres::Mode::Strict).expect("archive NRes");
            let i = source::find_entry(&a, e).expect("entry");
            let w = source::find_wear(&a, a.entries[i].name).map(<[u8]>::to_vec);
            (a.entries[i].data.to_vec(), w)
        }
        _ => (std::fs::read(root.join(file)).expect("model"), None),
    }
}

/// Checks the conventions the file decides against the manifest (R3 quat
/// storage, R2 retail batches); returns the decision's label.
fn check_conventions(rec: &Value, label: &str, model: &msh::Model, wear: Option<&[u8]>) -> String {
    // The conventions the file decides, against the manifest.
    let w = wear.map(|b| mshgltf::material::Wear::parse(b).expect("WEAR"));
    let d = convention::detect(model, w.as_ref(), &Default::default());
    let retail = rec["convention"] == "retail";
    let want_quat = if rec["quat_storage"] == "wxyz" {
        QuatLayout::Wxyz
    } else {
        QuatLayout::Xyzw
    };
    assert_eq!(d.conventions.quat, want_quat, "{label}: R3");
    if retail {
        assert_eq!(d.conventions.batch, BatchLayout::Retail, "{label}: R2");
    }
    d.label().to_string()
}

/// Checks the unedited trip back through gltf2msh's `--base` path gives
/// `bytes` back.
fn check_round_trip(label: &str, bytes: &[u8], model: &msh::Model, exported: &Exported) {
    // The unedited trip back through gltf2msh's path gives the bytes back
    // (lit materials, Res9 names and retail batches included).
    let glb = mshgltf::gltf_export::to_glb(exported).unwrap();
    let doc = mshgltf::gltf_import::parse(&glb, None).unwrap();
    let back = mshgltf::gltf_import::import_with_base(&doc, model, &Default::default())
        .unwrap_or_else(|e| panic!("{label}: import: {e}"));
    assert!(
        msh::encode(&back.model).unwrap() == bytes,
        "{label}: unedited round trip changes bytes: {:?}",
        back.report
    );
}

/// Checks R1 node names, Res10 labels and R11 cockpit nodes against the
/// manifest's `nodes`.
fn check_nodes(rec: &Value, label: &str, nodes: &[Value], n: &mut Counts) {
    // R1 names, labels, R11 cockpit nodes.
    for (i, mn) in rec["nodes"].as_array().unwrap().iter().enumerate() {
        let g = &nodes[i];
        let want = mn["expected_name"].as_str().unwrap();
        let got = g["name"].as_str().unwrap();
        let base = got
            .rsplit_once('.')
            .filter(|(_, k)| k.parse::<u32>().is_ok())
            .map_or(got, |(b, _)| b);
        assert!(
            got == want || base == want,
            "{label} node {i}: glTF name {got:?}, manifest {want:?}"
        );
        let ex = extras(g);
        assert_eq!(
            ex["msh"]["label"].as_str(),
            mn["label"].as_str(),
            "{label} node {i}: label"
        );
        n.labels += usize::from(mn["label"].is_string());
        if mn["cockpit"] == true {
            n.cockpits += 1;
            assert_eq!(
                ex["msh"]["cockpit"], true,
                "{label} node {i}: cockpit extras"
            );
            assert!(
                g.get("mesh").is_none(),
                "{label} node {i}: cockpit has a mesh"
            );
        }
    }
}

/// The exported document's arrays a batch check looks up, and the
/// manifest's MAT0 entries.
struct Doc<'a> {
    mats: Vec<Value>,
    images: Vec<Value>,
    textures: Vec<Value>,
    mat_entries: &'a serde_json::Map<String, Value>,
}

impl Doc<'_> {
    /// The image name of a texture info's texture.
    fn tex_name(&self, info: &Value) -> Option<String> {
        let t = info.get("index")?.as_u64()? as usize;
        let img = self.textures.get(t)?["source"].as_u64()? as usize;
        self.images.get(img)?["name"].as_str().map(str::to_string)
    }
}

/// Checks every mesh's primitives against the manifest's batches: primitive
/// p of mesh "slot<s>" is the p-th non-empty batch.
fn check_batches(
    rec: &Value,
    label: &str,
    model: &msh::Model,
    root_json: &Value,
    d: &Doc,
    n: &mut Counts,
) {
    // Batches: primitive p of mesh "slot<s>" is the p-th non-empty batch.
    let want_batches = rec["batches"].as_array().unwrap();
    for mesh in root_json["meshes"].as_array().cloned().unwrap_or_default() {
        let ex = extras(&mesh);
        let first = ex["msh"]["batches"][0].as_u64().unwrap() as usize;
        let count = ex["msh"]["batches"][1].as_u64().unwrap() as usize;
        let nonempty: Vec<usize> = (first..first + count)
            .filter(|&b| model.batches[b].index_count > 0)
            .collect();
        let prims = mesh["primitives"].as_array().unwrap();
        assert_eq!(prims.len(), nonempty.len(), "{label}: primitives");
        for (p, &b) in prims.iter().zip(&nonempty) {
            n.batches += 1;
            check_batch(&format!("{label} batch {b}"), p, &want_batches[b], d, n);
        }
    }
}

/// Checks one primitive's material against its manifest batch `wb`: key,
/// WEAR row, lightmap (R4), texture (R5), alphaMode and colour (R9, R10).
fn check_batch(at: &str, p: &Value, wb: &Value, d: &Doc, n: &mut Counts) {
    let mat = &d.mats[p["material"].as_u64().unwrap() as usize];
    let mx = extras(mat);
    assert_eq!(mx["msh"]["material_index"], wb["material_key"], "{at}: key");
    assert_eq!(mx["msh"]["name"], wb["wear_name"], "{at}: WEAR row name");
    let is_lit = mx["msh"]["lit"] == true;
    assert_eq!(is_lit, wb["lit"] == true, "{at}: lit");
    if is_lit {
        n.lit += 1;
        assert_eq!(mx["msh"]["lightmap"], wb["lightmap"], "{at}: lightmap");
        assert!(p["attributes"]["TEXCOORD_1"].is_u64(), "{at}: TEXCOORD_1");
        if wb["lightmap_present"] == true {
            let occ = &mat["occlusionTexture"];
            assert_eq!(occ["texCoord"], 1, "{at}: occlusion texCoord");
            assert_eq!(
                d.tex_name(occ).as_deref(),
                wb["lightmap"].as_str(),
                "{at}: lightmap image"
            );
        }
    }
    if wb["texture_present"] == true {
        let info = &mat["pbrMetallicRoughness"]["baseColorTexture"];
        assert_eq!(
            d.tex_name(info).as_deref(),
            wb["texture"].as_str(),
            "{at}: texture"
        );
    }
    // R9, R10: the resolved MAT0 entry's expected glTF material.
    if let Some(resolved) = wb["material"].as_str() {
        let e = &d.mat_entries[resolved]["expected_gltf"];
        let alpha = mat["alphaMode"].as_str().unwrap_or("OPAQUE");
        assert_eq!(alpha, e["alphaMode"], "{at}: alphaMode of {resolved}");
        let got = mat["pbrMetallicRoughness"]["baseColorFactor"]
            .as_array()
            .cloned()
            .unwrap_or_else(|| vec![1.0.into(); 4]);
        for (g, w) in got.iter().zip(e["baseColorFactor"].as_array().unwrap()) {
            let (g, w) = (g.as_f64().unwrap(), w.as_f64().unwrap());
            assert!((g - w).abs() < 1e-6, "{at}: colour {g} vs {w}");
        }
        n.materials += 1;
    }
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn every_model_shows_what_the_manifest_expects() {
    let Some(root) = common::corpus() else { return };
    let man = common::manifest(&root);
    let libs = Libraries::load(&root).expect("corpus libraries");
    let mat_entries = man["materials"]["entries"].as_object().expect("entries");
    // Archive bytes, for the WEAR siblings.
    let mut archives: HashMap<String, Vec<u8>> = HashMap::new();
    let mut n = Counts::default();
    let mut by_convention: HashMap<String, usize> = HashMap::new();
    for rec in man["models"].as_array().expect("models[]") {
        let file = rec["file"].as_str().unwrap();
        let entry = rec["entry"].as_str();
        let label = format!("{file}:{}", entry.unwrap_or(""));
        let (bytes, wear) = model_bytes(&root, file, entry, &mut archives);
        n.models += 1;

        let model = msh::decode(&bytes, Mode::Strict).expect("decode").model;
        let decided = check_conventions(rec, &label, &model, wear.as_deref());
        *by_convention.entry(decided).or_default() += 1;

        let m = ModelRef {
            source: label.clone(),
            stem: source::stem_of(entry.unwrap_or(file)).to_string(),
            bytes: &bytes,
            wear: wear.as_deref(),
        };
        let c = convert(&m, Some(&libs), &ConvertOptions::default())
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        check_round_trip(&label, &bytes, &model, &c.exported);
        let root_json = serde_json::to_value(&c.exported.root).unwrap();
        let nodes = root_json["nodes"].as_array().unwrap();
        check_nodes(rec, &label, nodes, &mut n);

        let array = |k: &str| root_json[k].as_array().cloned().unwrap_or_default();
        let d = Doc {
            mats: array("materials"),
            images: array("images"),
            textures: array("textures"),
            mat_entries,
        };
        check_batches(rec, &label, &model, &root_json, &d, &mut n);
    }
    let Counts {
        models,
        batches,
        lit,
        cockpits,
        labels,
        materials,
    } = n;
    println!(
        "{models} models {by_convention:?}: {batches} batches ({lit} lit, {materials} with a \
         resolved material), {cockpits} cockpit nodes, {labels} labels"
    );
    assert_eq!(models, man["models"].as_array().unwrap().len());
    assert!(models > 0);
    assert!(lit > 0 && cockpits > 0 && labels > 0);
}
