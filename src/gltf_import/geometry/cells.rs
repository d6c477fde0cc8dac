//! Whether a vertex edit reaches the cells the glTF does not show (issue
//! 39): a node's damaged and destroyed states and its other levels are
//! other Res2 slots (cells `5 * state + lod`, format-notes §6 R7), exported
//! only with `--all-cells`, `--state` or `--lod`. A slot of such a cell that
//! draws every edited vertex of the shown slot (the cells share Res3
//! vertices) shows the edit too: a note says which. One that draws none or
//! only some of them, or any cell beside a slot whose faces were rebuilt,
//! keeps the old shape: a warning names the node, the cells and their
//! slots.

use std::collections::{BTreeMap, BTreeSet};

use super::super::matching::{Matched, MeshTarget};
use super::super::read::GltfFile;
use super::super::ImportReport;
use crate::msh::{derive, Model, NONE16};

/// A cell's name for a modder: `damaged (S1L0, slot 3)`.
fn cell_label(c: usize, slot: usize) -> String {
    let state = ["intact", "damaged", "destroyed"][c / 5 % 3];
    let level = match c % 5 {
        0 => String::new(),
        4 => " cockpit view".to_string(),
        l => format!(" LOD {l}"),
    };
    format!("{state}{level} (S{}L{}, slot {slot})", c / 5, c % 5)
}

/// The Res3 vertices slot `s` draws (its batches' triangles).
fn slot_vertices(base: &Model, s: usize) -> BTreeSet<u32> {
    base.slots.get(s).map_or_else(BTreeSet::new, |slot| {
        derive::slot_triangles(base, slot)
            .into_iter()
            .flatten()
            .collect()
    })
}

/// How far an edit of a shown slot reaches another slot.
enum Reach {
    /// Every edited vertex is drawn by it.
    All,
    /// `k` of `n` edited vertices are.
    Part(usize, usize),
    /// None are, or the shown slot was rebuilt.
    None,
}

/// Adds a warning per node and edited shown slot whose edit does not reach
/// (or reaches only in part) the node's cells the glTF does not show, and a
/// note (`report.shared_edits`) per cell that shows it through shared
/// vertices. `edited` marks the base vertices whose position, normal or UV
/// the glTF changed; `rebuilt` the slots whose faces were re-made.
pub(super) fn other_cells(
    doc: &GltfFile,
    m: &Matched,
    base: &Model,
    (edited, rebuilt): (&[bool], &BTreeSet<usize>),
    report: &mut ImportReport,
) {
    let n38 = base.nodes38();
    let shown: BTreeSet<usize> = m
        .meshes
        .iter()
        .filter_map(|&(_, t)| match t {
            MeshTarget::Slot(s) => Some(s),
            MeshTarget::Legacy => None,
        })
        .collect();
    // Edited vertices of each shown slot (empty: unedited).
    let mut edits: BTreeMap<usize, BTreeSet<u32>> = BTreeMap::new();
    for &s in &shown {
        let e: BTreeSet<u32> = slot_vertices(base, s)
            .into_iter()
            .filter(|&v| edited.get(v as usize) == Some(&true))
            .collect();
        if !e.is_empty() || rebuilt.contains(&s) {
            edits.insert(s, e);
        }
    }
    if edits.is_empty() {
        return;
    }
    let nodes = doc.nodes();
    for (r, nd) in n38.iter().enumerate() {
        let name = m
            .node_of
            .get(r)
            .and_then(|&g| nodes.get(g))
            .and_then(|n| n.get("name"))
            .and_then(serde_json::Value::as_str)
            .unwrap_or("");
        let slots: Vec<(usize, usize)> = (0..15)
            .filter(|&c| nd.slots[c] != NONE16)
            .map(|c| (c, usize::from(nd.slots[c])))
            .collect();
        for (&s, e) in &edits {
            if !slots.iter().any(|&(_, x)| x == s) {
                continue;
            }
            let mut missed: Vec<String> = Vec::new();
            for &(c, t) in slots.iter().filter(|&&(_, t)| !shown.contains(&t)) {
                let reach = if rebuilt.contains(&s) {
                    Reach::None
                } else {
                    let drawn = slot_vertices(base, t);
                    match e.iter().filter(|v| drawn.contains(v)).count() {
                        k if k == e.len() => Reach::All,
                        0 => Reach::None,
                        k => Reach::Part(k, e.len()),
                    }
                };
                match reach {
                    Reach::All => report.shared_edits.push(format!(
                        "Res1 node {r} {name:?}: its {} draws the edited vertices of slot {s}: it shows the edit too",
                        cell_label(c, t)
                    )),
                    Reach::Part(k, n) => missed.push(format!(
                        "{} (draws {k} of the {n} edited vertices)",
                        cell_label(c, t)
                    )),
                    Reach::None => missed.push(cell_label(c, t)),
                }
            }
            if !missed.is_empty() {
                let why = if rebuilt.contains(&s) {
                    "its faces were rebuilt and those slots keep their own"
                } else {
                    "those slots have their own vertices"
                };
                report.warnings.push(format!(
                    "Res1 node {r} {name:?}: the edit of slot {s} does not reach {}: {why} (import or export with all cells, or that state, to edit them too)",
                    missed.join(", ")
                ));
            }
        }
    }
}
