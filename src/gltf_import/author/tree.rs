//! The node tree of the default scene (module docs of [`super`], point 1):
//! the Res1 order, the parents and the cell carriers.

use crate::gltf_import::read::Elem;
use crate::gltf_import::read::TopArray;
use serde_json::Value;

use super::{err, MAX_NODES};
use crate::gltf_import::animation::node_trs_full;
use crate::gltf_import::read::{arr, msh_u64, GltfFile};
use crate::gltf_import::ImportError;
use crate::msh::CELLS;

/// The tree of the default scene.
pub(super) struct Tree {
    /// Res1 order: glTF node indices.
    pub(super) order: Vec<usize>,
    /// glTF node → Res1 index.
    pub(super) res1_of: Vec<Option<usize>>,
    /// glTF node → parent glTF node.
    pub(super) parent: Vec<Option<usize>>,
    /// Cell carriers: (glTF node, Res1 parent, cell).
    pub(super) carriers: Vec<(usize, usize, usize)>,
}

/// Cells per state (format-notes §6 R7: `cell = 5 * state + lod`).
const CELLS_PER_STATE: usize = 5;

/// The cell a carrier's name gives under a parent named `parent`:
/// `<parent>.S<s>L<l>` (cell `5 s + l`, s < 3, l < 5; what msh2gltf
/// `--all-cells` writes after the retail renaming) or `<parent>.L<l>G<g>`
/// (the earlier naming, cell `5 l + g`, l < 3, g < 5). A Blender duplicate
/// suffix `.001` is allowed after it.
pub fn cell_from_name(name: &str, parent: &str) -> Option<usize> {
    let rest = name.strip_prefix(parent)?.strip_prefix('.')?;
    let rest = match rest.rsplit_once('.') {
        Some((r, d)) if d.len() == 3 && d.bytes().all(|c| c.is_ascii_digit()) => r,
        _ => rest,
    };
    let b = rest.as_bytes();
    if b.len() != 4 || !b[1].is_ascii_digit() || !b[3].is_ascii_digit() {
        return None;
    }
    let (x, y) = (usize::from(b[1] - b'0'), usize::from(b[3] - b'0'));
    match (b[0], b[2]) {
        (b'S', b'L') | (b'L', b'G') if x < CELLS / CELLS_PER_STATE && y < CELLS_PER_STATE => {
            Some(CELLS_PER_STATE * x + y)
        }
        _ => None,
    }
}

/// Whether a node's TRS is the identity (within 1e-6).
fn is_identity(node: &Elem) -> bool {
    let (trs, _) = node_trs_full(node);
    trs.t.iter().all(|x| x.abs() < 1e-6)
        && trs.s.iter().all(|x| (x - 1.0).abs() < 1e-6)
        && (trs.r[3].abs() - 1.0).abs() < 1e-6
}

/// The tree of the default scene (module docs of [`super`], point 1): the
/// nodes reached from its roots depth-first, cell carriers set aside,
/// ordered by msh2gltf's node extras when they are complete.
///
/// # Errors
/// `gltf.index` (a root that is not a node), `gltf.hierarchy` (a child
/// that is not a node, a node with two parents, a cycle), `gltf.limits` (more than
/// [`MAX_NODES`] nodes).
pub(super) fn scene_tree(doc: &GltfFile, warnings: &mut Vec<String>) -> Result<Tree, ImportError> {
    let nodes = doc.nodes();
    let n = nodes.len();
    let parent = crate::gltf_import::matching::child_links(nodes)?;
    let roots = scene_roots(doc, &parent, warnings)?;
    let (order, seen) = preorder(nodes, &roots)?;
    let mut carrier = cell_carriers(nodes, &order, &parent, warnings);
    lod_carriers(nodes, &order, &seen, &mut carrier, warnings);
    let left_out = (0..n).filter(|&g| !seen[g] && carrier[g].is_none()).count();
    if left_out > 0 {
        warnings.push(format!(
            "{left_out} node(s) outside the default scene ignored"
        ));
    }
    let order: Vec<usize> = order
        .into_iter()
        .filter(|&g| carrier[g].is_none())
        .collect();
    let order = hinted_order(nodes, order, &parent);
    if order.len() > MAX_NODES {
        return Err(err(
            "gltf.limits",
            format!(
                "the scene has {} nodes; Res1 can address at most {MAX_NODES}",
                order.len()
            ),
        ));
    }
    let mut res1_of = vec![None; n];
    for (i, &g) in order.iter().enumerate() {
        res1_of[g] = Some(i);
    }
    let carriers = (0..n)
        .filter_map(|g| {
            let (p, c) = carrier[g]?;
            Some((g, res1_of[p]?, c))
        })
        .collect();
    Ok(Tree {
        order,
        res1_of,
        parent,
        carriers,
    })
}

/// A node reference `v` of `n` nodes as an index.
///
/// # Errors
/// `gltf.index`: `v` is not an integer `< n`; the message starts with
/// `what()` (e.g. `node 3: child`).
fn node_index(v: &Value, n: usize, what: impl FnOnce() -> String) -> Result<usize, ImportError> {
    v.as_u64()
        .map(|x| x as usize)
        .filter(|&x| x < n)
        .ok_or_else(|| {
            err(
                "gltf.index",
                format!("{} {v} is not a node index (< {n})", what()),
            )
        })
}

/// The root nodes of the default scene (`scene`, else scene 0); without
/// scenes, every parentless node (with a warning).
///
/// # Errors
/// `gltf.index`: the scene does not exist or a root is not a node index;
/// `gltf.json` naming `/scene` when it is not a scene index.
fn scene_roots(
    doc: &GltfFile,
    parent: &[Option<usize>],
    warnings: &mut Vec<String>,
) -> Result<Vec<usize>, ImportError> {
    let n = parent.len();
    let scenes = doc.scenes();
    if scenes.is_empty() {
        if n > 0 {
            warnings.push("the document has no scene: every parentless node is used".into());
        }
        return Ok((0..n).filter(|&i| parent[i].is_none()).collect());
    }
    let si = crate::gltf_import::read::refs::default_scene(&doc.json, scenes.len())?;
    let sc = doc.elem(TopArray::Scenes, si)?;
    let mut r = Vec::new();
    for v in arr(sc, "nodes") {
        r.push(node_index(v, n, || format!("scene {si}: root"))?);
    }
    Ok(r)
}

/// Depth-first preorder from `roots` with cycle detection: the nodes in
/// order and, per glTF node, whether it was reached.
///
/// # Errors
/// `gltf.hierarchy`: a node reached twice (a cycle, or a root that is also
/// a child).
fn preorder(nodes: &[Elem], roots: &[usize]) -> Result<(Vec<usize>, Vec<bool>), ImportError> {
    let mut seen = vec![false; nodes.len()];
    let mut order = Vec::new();
    let mut stack: Vec<usize> = roots.iter().rev().copied().collect();
    while let Some(g) = stack.pop() {
        if seen[g] {
            return Err(err(
                "gltf.hierarchy",
                format!("node {g} is reached twice from the scene (a cycle, or a root that is also a child)"),
            ));
        }
        seen[g] = true;
        order.push(g);
        for c in arr(&nodes[g], "children").iter().rev() {
            if let Some(c) = c.as_u64() {
                stack.push(c as usize);
            }
        }
    }
    Ok((order, seen))
}

/// Cell carriers: msh2gltf --all-cells children (`{"msh": {"cell"}}`
/// extras, else the names `<node>.S<s>L<l>` / `<node>.L<l>G<g>`), mesh
/// leaves with an identity transform. Returns `carrier[g] = (glTF parent,
/// cell)`; a marked node that cannot be a carrier is kept with a warning.
fn cell_carriers(
    nodes: &[Elem],
    order: &[usize],
    parent: &[Option<usize>],
    warnings: &mut Vec<String>,
) -> Vec<Option<(usize, usize)>> {
    let mut carrier: Vec<Option<(usize, usize)>> = vec![None; nodes.len()];
    let name_of = |g: usize| nodes[g].get("name").and_then(Value::as_str).unwrap_or("");
    for &g in order {
        let nd = &nodes[g];
        let Some(p) = parent[g] else { continue };
        let extra = msh_u64(nd, "cell").map(|c| c as usize);
        let (cell, how) = match extra {
            Some(c) => (Some(c), "cell extra"),
            None => (cell_from_name(name_of(g), name_of(p)), "cell name"),
        };
        let Some(c) = cell else { continue };
        if c < CELLS
            && arr(nd, "children").is_empty()
            && is_identity(nd)
            && nd.get("mesh").is_some()
        {
            carrier[g] = Some((p, c));
        } else {
            warnings.push(format!(
                "node {g}: {how} {c} ignored (a carrier is a mesh leaf with an identity transform under node {p}, cell < {CELLS}); kept as a node"
            ));
        }
    }
    carrier
}

/// The levels of `MSFT_lod` extensions as carriers (`ids[i]` → cell
/// `i + 1` of the node), added to `carrier`; levels that cannot be one are
/// ignored with a warning, a level's own transform with a warning.
fn lod_carriers(
    nodes: &[Elem],
    order: &[usize],
    seen: &[bool],
    carrier: &mut [Option<(usize, usize)>],
    warnings: &mut Vec<String>,
) {
    let n = nodes.len();
    for &g in order {
        let Some(ids) = nodes[g]
            .get("extensions")
            .and_then(|e| e.get("MSFT_lod"))
            .and_then(|e| e.get("ids"))
            .and_then(Value::as_array)
        else {
            continue;
        };
        for (i, id) in ids.iter().enumerate() {
            let lod = i + 1;
            let Some(id) = id.as_u64().map(|x| x as usize).filter(|&x| x < n) else {
                warnings.push(format!("node {g}: MSFT_lod id {id} is not a node; ignored"));
                continue;
            };
            if lod >= CELLS_PER_STATE || nodes[id].get("mesh").is_none() || carrier[id].is_some() {
                warnings.push(format!(
                    "node {g}: MSFT_lod level {lod} (node {id}) ignored (levels 1..{} with a mesh)",
                    CELLS_PER_STATE - 1
                ));
                continue;
            }
            if seen[id] && !arr(&nodes[id], "children").is_empty() {
                warnings.push(format!(
                    "node {g}: MSFT_lod level {lod} (node {id}) has children; kept as a node"
                ));
                continue;
            }
            if !is_identity(&nodes[id]) {
                warnings.push(format!(
                    "node {g}: MSFT_lod level {lod} (node {id}): its own transform is ignored (the level is drawn in node {g}'s frame)"
                ));
            }
            carrier[id] = Some((g, lod));
        }
    }
}

/// msh2gltf's node order (`{"msh": {"node"}}` extras), when every node of
/// `order` has one, they are distinct and they keep parents first; else
/// `order` unchanged.
fn hinted_order(nodes: &[Elem], order: Vec<usize>, parent: &[Option<usize>]) -> Vec<usize> {
    let hint: Vec<Option<u64>> = order.iter().map(|&g| msh_u64(&nodes[g], "node")).collect();
    if !hint.iter().all(Option::is_some) {
        return order;
    }
    let mut by: Vec<(u64, usize)> = hint
        .iter()
        .zip(&order)
        .map(|(h, &g)| (h.unwrap_or(0), g))
        .collect();
    by.sort_unstable();
    let distinct = by.windows(2).all(|w| w[0].0 != w[1].0);
    let sorted: Vec<usize> = by.iter().map(|&(_, g)| g).collect();
    let mut pos = vec![usize::MAX; nodes.len()];
    for (i, &g) in sorted.iter().enumerate() {
        pos[g] = i;
    }
    let parents_first = sorted.iter().enumerate().all(|(i, &g)| match parent[g] {
        None => true,
        Some(p) => pos[p] < i,
    });
    if distinct && parents_first {
        sorted
    } else {
        order
    }
}
