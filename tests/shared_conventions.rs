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

use mshgltf::convention::{self, BatchLayout, QuatLayout};
use mshgltf::convert::{convert, ConvertOptions, ModelRef};
use mshgltf::material::Libraries;
use mshgltf::msh::{self, Mode};
use mshgltf::{nres, source};
use serde_json::Value;

fn extras(v: &Value) -> Value {
    v.get("extras").cloned().unwrap_or(Value::Null)
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
    let (mut models, mut batches, mut lit, mut cockpits, mut labels, mut materials) =
        (0, 0, 0, 0, 0, 0);
    let mut by_convention: HashMap<String, usize> = HashMap::new();
    for rec in man["models"].as_array().expect("models[]") {
        let file = rec["file"].as_str().unwrap();
        let entry = rec["entry"].as_str();
        let label = format!("{file}:{}", entry.unwrap_or(""));
        let (bytes, wear): (Vec<u8>, Option<Vec<u8>>) = match entry {
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
        };
        models += 1;

        // The conventions the file decides, against the manifest.
        let model = msh::decode(&bytes, Mode::Strict).expect("decode").model;
        let w = wear
            .as_deref()
            .map(|b| mshgltf::material::Wear::parse(b).expect("WEAR"));
        let d = convention::detect(&model, w.as_ref(), &Default::default());
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
        *by_convention.entry(d.label().to_string()).or_default() += 1;

        let m = ModelRef {
            source: label.clone(),
            stem: source::stem_of(entry.unwrap_or(file)).to_string(),
            bytes: &bytes,
            wear: wear.as_deref(),
        };
        let c = convert(&m, Some(&libs), &ConvertOptions::default())
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        // The unedited trip back through gltf2msh's path gives the bytes back
        // (lit materials, Res9 names and retail batches included).
        let glb = mshgltf::gltf_export::to_glb(&c.exported).unwrap();
        let doc = mshgltf::gltf_import::parse(&glb, None).unwrap();
        let back = mshgltf::gltf_import::import_with_base(&doc, &model, &Default::default())
            .unwrap_or_else(|e| panic!("{label}: import: {e}"));
        assert!(
            msh::encode(&back.model).unwrap() == bytes,
            "{label}: unedited round trip changes bytes: {:?}",
            back.report
        );
        let root_json = serde_json::to_value(&c.exported.root).unwrap();
        let nodes = root_json["nodes"].as_array().unwrap();

        // R1 names, labels, R11 cockpit nodes.
        for (i, n) in rec["nodes"].as_array().unwrap().iter().enumerate() {
            let g = &nodes[i];
            let want = n["expected_name"].as_str().unwrap();
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
                n["label"].as_str(),
                "{label} node {i}: label"
            );
            labels += usize::from(n["label"].is_string());
            if n["cockpit"] == true {
                cockpits += 1;
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

        // Batches: primitive p of mesh "slot<s>" is the p-th non-empty batch.
        let mats = root_json["materials"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let images = root_json["images"].as_array().cloned().unwrap_or_default();
        let textures = root_json["textures"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let tex_name = |info: &Value| -> Option<String> {
            let t = info.get("index")?.as_u64()? as usize;
            let img = textures.get(t)?["source"].as_u64()? as usize;
            images.get(img)?["name"].as_str().map(str::to_string)
        };
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
                batches += 1;
                let wb = &want_batches[b];
                let mat = &mats[p["material"].as_u64().unwrap() as usize];
                let mx = extras(mat);
                let at = format!("{label} batch {b}");
                assert_eq!(mx["msh"]["material_index"], wb["material_key"], "{at}: key");
                assert_eq!(mx["msh"]["name"], wb["wear_name"], "{at}: WEAR row name");
                let is_lit = mx["msh"]["lit"] == true;
                assert_eq!(is_lit, wb["lit"] == true, "{at}: lit");
                if is_lit {
                    lit += 1;
                    assert_eq!(mx["msh"]["lightmap"], wb["lightmap"], "{at}: lightmap");
                    assert!(p["attributes"]["TEXCOORD_1"].is_u64(), "{at}: TEXCOORD_1");
                    if wb["lightmap_present"] == true {
                        let occ = &mat["occlusionTexture"];
                        assert_eq!(occ["texCoord"], 1, "{at}: occlusion texCoord");
                        assert_eq!(
                            tex_name(occ).as_deref(),
                            wb["lightmap"].as_str(),
                            "{at}: lightmap image"
                        );
                    }
                }
                if wb["texture_present"] == true {
                    let info = &mat["pbrMetallicRoughness"]["baseColorTexture"];
                    assert_eq!(
                        tex_name(info).as_deref(),
                        wb["texture"].as_str(),
                        "{at}: texture"
                    );
                }
                // R9, R10: the resolved MAT0 entry's expected glTF material.
                if let Some(resolved) = wb["material"].as_str() {
                    let e = &mat_entries[resolved]["expected_gltf"];
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
                    materials += 1;
                }
            }
        }
    }
    println!(
        "{models} models {by_convention:?}: {batches} batches ({lit} lit, {materials} with a \
         resolved material), {cockpits} cockpit nodes, {labels} labels"
    );
    assert_eq!(models, man["models"].as_array().unwrap().len());
    assert!(models > 0);
    assert!(lit > 0 && cockpits > 0 && labels > 0);
}
