//! Cells from glTF (issue 9, point 4): every corpus model with more than one
//! non-empty cell is exported with `--all-cells` and authored back without a
//! base, in three forms: as exported (`{"msh": {"cell"}}` extras), with the
//! extras removed (the `<node>.L<l>G<g>` names alone), and renamed
//! `<node>.S<s>L<l>` (the retail naming). Each time every node has the same
//! non-empty cells as the corpus model, and each cell the same triangles
//! (node-local corners within 1e-4). Skips without ../shared.

mod common;

use mshgltf::convert::{self, ConvertOptions, ModelRef};
use mshgltf::gltf_export::{axes, CellChoice, Up};
use mshgltf::gltf_import::{self, AuthorOptions, GltfFile};
use mshgltf::msh::{self, derive, Model, NONE16};
use serde_json::Value;

fn corners(m: &Model, slot: u16) -> Vec<[f32; 3]> {
    derive::slot_triangles(m, &m.slots[slot as usize])
        .into_iter()
        .flatten()
        .map(|v| m.positions[v as usize])
        .collect()
}

fn strip_cells(doc: &mut GltfFile, rename: bool) {
    let mut tree = doc.tree_mut();
    let nodes = tree["nodes"].as_array_mut().unwrap();
    for n in nodes.iter_mut() {
        let Some(c) = n["extras"]["msh"]["cell"].as_u64() else {
            continue;
        };
        n["extras"]["msh"].as_object_mut().unwrap().remove("cell");
        if rename {
            let name = n["name"].as_str().unwrap().to_string();
            let (stem, _) = name.rsplit_once('.').unwrap();
            n["name"] = Value::from(format!("{stem}.S{}L{}", c / 5, c % 5));
        }
    }
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn shared_all_cells_export_authors_back_with_the_same_cells() {
    let Some(root) = common::corpus() else {
        return;
    };
    let mut checked = 0;
    for cm in common::corpus_models(&root) {
        let Ok(d) = msh::decode(&cm.bytes, msh::Mode::Strict) else {
            continue;
        };
        let base = d.model;
        let cells: usize = base
            .nodes38()
            .iter()
            .map(|n| n.slots.iter().filter(|&&s| s != NONE16).count())
            .sum();
        if cells <= base.nodes38().len() {
            continue;
        }
        let opts = ConvertOptions {
            textures: false,
            cells: CellChoice {
                state: 0,
                lod: 0,
                all_cells: true,
            },
            ..Default::default()
        };
        let r = ModelRef {
            source: cm.display.clone(),
            stem: cm.stem.clone(),
            bytes: &cm.bytes,
            wear: None,
        };
        let Ok(c) = convert::convert(&r, None, &opts) else {
            continue;
        };
        let e = c.exported;
        let up = Up::Y;
        for form in 0..3 {
            let mut doc =
                GltfFile::new(serde_json::to_value(&e.root).unwrap(), vec![e.bin.clone()]);
            if form > 0 {
                strip_cells(&mut doc, form == 2);
            }
            let a = gltf_import::author(&doc, &AuthorOptions::default())
                .unwrap_or_else(|e| panic!("{}: form {form}: {e}", cm.display));
            let m = &a.model;
            assert_eq!(m.nodes38().len(), base.nodes38().len(), "{}", cm.display);
            for (i, (nb, na)) in base.nodes38().iter().zip(m.nodes38()).enumerate() {
                for c in 0..15 {
                    assert_eq!(
                        nb.slots[c] == NONE16,
                        na.slots[c] == NONE16,
                        "{} form {form} node {i} cell {c}",
                        cm.display
                    );
                    if nb.slots[c] == NONE16 {
                        continue;
                    }
                    let (x, y) = (corners(&base, nb.slots[c]), corners(m, na.slots[c]));
                    assert_eq!(x.len(), y.len(), "{} node {i} cell {c}", cm.display);
                    for (p, q) in x.iter().zip(&y) {
                        // Both in game axes; the export went through `up`.
                        let (p, q) = (axes::vec3(up, *p), axes::vec3(up, *q));
                        let d = (0..3).map(|k| (p[k] - q[k]).abs()).fold(0.0f32, f32::max);
                        assert!(
                            d <= 1e-4,
                            "{} form {form} node {i} cell {c}: {p:?} vs {q:?}",
                            cm.display
                        );
                    }
                }
            }
        }
        checked += 1;
    }
    println!("{checked} multi-cell corpus models author back with the same cells");
    assert!(checked > 0);
}
