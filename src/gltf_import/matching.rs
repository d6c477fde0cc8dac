//! Matching glTF nodes, meshes and materials to the base model's Res1
//! nodes, Res2 slots and WEAR rows (gltf-mapping.md, "Extras").
//!
//! Order of evidence: extras (`{"msh": {"node": i}}` on nodes, `{"msh":
//! {"slot": s, "batches": [first, count]}}` on meshes, `{"msh":
//! {"material_index": i}}` on materials), then names (the names msh2gltf
//! gives, with Blender's `.001` suffixes stripped), then order. Nodes that
//! carry a cell's mesh (`{"msh": {"node": i, "cell": c}}`, `--all-cells`)
//! are not Res1 nodes.

use crate::gltf_import::read::{Elem, Props};
use std::collections::HashMap;

use crate::convention::{self, Conventions, NameSource};
use crate::gltf_export::BatchMaterial;

use serde_json::Value;

use super::read::{arr, idx, msh_extras, GltfFile};
use super::{ImportError, ImportReport};
use crate::msh::{Model, Node38, Nodes, NONE16};

/// What a glTF mesh stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MeshTarget {
    /// A Res2 slot.
    Slot(usize),
    /// Every batch of a legacy 24-byte-node model (one mesh).
    Legacy,
}

/// The matching of a document onto a base model.
#[derive(Debug, Clone, Default)]
pub struct Matched {
    /// glTF node index of each Res1 node (empty for the legacy table).
    pub node_of: Vec<usize>,
    /// Res1 node of each glTF node (`None`: a cell carrier or an ignored node).
    pub res1_of: Vec<Option<usize>>,
    /// glTF mesh → what it stands for, in glTF mesh order (meshes used by no
    /// node are left out).
    pub meshes: Vec<(usize, MeshTarget)>,
    /// glTF material → `Batch20.material_index`, when known.
    pub materials: Vec<Option<BatchMaterial>>,
    /// Findings that are not errors.
    pub warnings: Vec<String>,
}

fn err(rule: &'static str, detail: impl Into<String>) -> ImportError {
    ImportError::new(rule, detail)
}

/// The glTF node names msh2gltf gives the Res1 nodes (see
/// [`crate::gltf_export::node_names`]).
pub fn exported_names(model: &Model, names: NameSource) -> Vec<String> {
    crate::gltf_export::node_names(
        model,
        names,
        model.nodes.len(),
        &mut crate::gltf_export::Namer::default(),
    )
}

/// `name` without a Blender duplicate suffix (`.001` .. `.999`).
pub fn strip_blender_suffix(name: &str) -> &str {
    let b = name.as_bytes();
    if b.len() > 4 && b[b.len() - 4] == b'.' && b[b.len() - 3..].iter().all(u8::is_ascii_digit) {
        &name[..name.len() - 4]
    } else {
        name
    }
}

/// A glTF object's `name`, or empty.
fn name_of<P: Props + ?Sized>(v: &P) -> &str {
    v.prop("name").and_then(Value::as_str).unwrap_or("")
}

/// An integer of the object's `{"msh": {...}}` extras.
fn extras_u64<P: Props + ?Sized>(v: &P, key: &str) -> Option<u64> {
    super::read::msh_u64(v, key)
}

/// The local matrix of glTF node `n` at rest: its `matrix` (16 floats,
/// column-major), else its `translation` x `rotation` x `scale` (each
/// defaulting to identity), in f64.
pub(crate) fn local_matrix<P: Props + ?Sized>(n: &P) -> glam::DMat4 {
    let get = |key: &str| -> Option<Vec<f64>> {
        n.prop(key)?.as_array()?.iter().map(Value::as_f64).collect()
    };
    if let Some(m) = get("matrix").filter(|m| m.len() == 16) {
        let mut a = [0.0; 16];
        a.copy_from_slice(&m);
        return glam::DMat4::from_cols_array(&a);
    }
    let t = get("translation")
        .filter(|v| v.len() == 3)
        .unwrap_or(vec![0.0; 3]);
    let r = get("rotation")
        .filter(|v| v.len() == 4)
        .unwrap_or(vec![0.0, 0.0, 0.0, 1.0]);
    let s = get("scale")
        .filter(|v| v.len() == 3)
        .unwrap_or(vec![1.0; 3]);
    glam::DMat4::from_scale_rotation_translation(
        glam::DVec3::new(s[0], s[1], s[2]),
        glam::DQuat::from_xyzw(r[0], r[1], r[2], r[3]).normalize(),
        glam::DVec3::new(t[0], t[1], t[2]),
    )
}

/// The parent of every glTF node from the `children` lists (glTF 2.0
/// §3.5.3: a node has one parent); `--base` matching and authoring both
/// read the hierarchy through it.
///
/// # Errors
/// `gltf.hierarchy`: a child index out of range, or a node listed as a
/// child twice (by one parent or two).
pub(crate) fn child_links<N: Props>(nodes: &[N]) -> Result<Vec<Option<usize>>, ImportError> {
    let mut parent: Vec<Option<usize>> = vec![None; nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        for c in arr(n, "children") {
            let Some(c) = c.as_u64().map(|c| c as usize).filter(|&c| c < nodes.len()) else {
                return Err(err(
                    "gltf.hierarchy",
                    format!("node {i}: child {c} is not a node index"),
                ));
            };
            if let Some(p) = parent[c] {
                return Err(err(
                    "gltf.hierarchy",
                    format!("node {c} is listed as a child twice (of node {p} and of node {i}); a glTF node has one parent"),
                ));
            }
            parent[c] = Some(i);
        }
    }
    Ok(parent)
}

/// The parent of every glTF node, after checking the node hierarchy is a
/// forest (glTF 2.0 §3.5.3) and the document has a scene.
///
/// # Errors
/// `gltf.hierarchy`: no scene (or `scene` names none), a child index out of
/// range, a node listed as a child twice (by one parent or two), a scene
/// root that is also a child (or not a node), or a cycle.
pub fn parents(doc: &GltfFile) -> Result<Vec<Option<usize>>, ImportError> {
    let nodes = doc.nodes();
    let scenes = doc.scenes();
    // `/scene` of the wrong type is refused naming it, never read as 0
    // (without scenes, whatever it is is refused below).
    let scene = match scenes.len() {
        0 => idx(&doc.json, "scene").unwrap_or(0),
        n => super::read::refs::default_scene(&doc.json, n)?,
    };
    if scenes.is_empty() || scene >= scenes.len() {
        return Err(err(
            "gltf.hierarchy",
            format!(
                "the glTF has {} scene(s) and `scene` is {scene}: no scene to compare with the base",
                scenes.len()
            ),
        ));
    }
    let parent = child_links(nodes)?;
    // A scene's nodes are roots (glTF 2.0 §3.5.2): a listed node that is
    // also a child would be shown twice, or its two placements disagree.
    for (k, sc) in scenes.iter().enumerate() {
        for r in arr(sc, "nodes").iter().map(Value::as_u64) {
            match r.map(|r| r as usize) {
                Some(r) if r < nodes.len() => {
                    if let Some(p) = parent[r] {
                        return Err(err(
                            "gltf.hierarchy",
                            format!("scene {k} lists node {r} as a root, but it is a child of node {p}: a scene's nodes must be roots (glTF 2.0 §3.5.2)"),
                        ));
                    }
                }
                _ => {
                    return Err(err(
                        "gltf.hierarchy",
                        format!(
                            "scene {k} lists node {r:?}, not a node of the glTF's {}",
                            nodes.len()
                        ),
                    ))
                }
            }
        }
    }
    // A cycle: walk up from each node, marking the path (1) until a root
    // or a node known to reach one (2); meeting the path again is a cycle.
    // Every node is walked once: linear.
    let mut state = vec![0u8; nodes.len()];
    let mut path = Vec::new();
    for start in 0..nodes.len() {
        let mut at = Some(start);
        while let Some(n) = at {
            match state[n] {
                2 => break,
                1 => {
                    return Err(err(
                        "gltf.hierarchy",
                        format!("node {n} is its own ancestor (a cycle in children)"),
                    ))
                }
                _ => {
                    state[n] = 1;
                    path.push(n);
                    at = parent[n];
                }
            }
        }
        for n in path.drain(..) {
            state[n] = 2;
        }
    }
    Ok(parent)
}

/// Matches `doc` onto `base`.
///
/// # Errors
/// `gltf.skin` (skins), `gltf.match.node` (node count or identity
/// mismatch), `gltf.hierarchy` (an invalid hierarchy, see [`parents`], or
/// a parent differs from the base's `hdr1`),
/// `gltf.match.mesh` (a mesh maps to no slot or two meshes to one slot).
pub fn match_document(
    doc: &GltfFile,
    base: &Model,
    conv: Conventions,
) -> Result<Matched, ImportError> {
    let nodes = doc.nodes();
    if !arr(&doc.json, "skins").is_empty() || nodes.iter().any(|n| n.get("skin").is_some()) {
        return Err(err(
            "gltf.skin",
            "skins (skeletal meshes) cannot be stored in MSH; bake or remove the armature",
        ));
    }
    let mut out = Matched {
        res1_of: vec![None; nodes.len()],
        ..Default::default()
    };
    let parent = parents(doc)?;
    let mesh_hint: Vec<(usize, Option<usize>)> = match &base.nodes {
        Nodes::Legacy24 { .. } => nodes
            .iter()
            .filter_map(|n| idx(n, "mesh"))
            .map(|m| (m, None))
            .collect(),
        Nodes::Node38(n38) => {
            let names = exported_names(base, conv.names);
            match_nodes(nodes, &names, &mut out)?;
            check_hierarchy(nodes, &parent, n38, &names, &out)?;
            node38_mesh_hints(nodes, n38, &out)
        }
    };
    match_meshes(doc, base, mesh_hint, &mut out)?;
    match_materials(doc, &mut out);
    Ok(out)
}

/// Cell carriers and control-point empties (crate::unit::gltf) are not Res1
/// nodes.
fn is_carrier(n: &Elem) -> bool {
    msh_extras(n).is_some_and(|e| {
        e.contains_key("cell") || e.contains_key(crate::gltf_export::msh_extras::CONTROL_POINT_KEY)
    })
}

/// Matches the glTF nodes that are not carriers to the `names.len()` Res1
/// nodes: extras (`{"msh": {"node"}}`), then names (exact, then without a
/// Blender suffix), then order (with a warning). Fills `out.node_of` and
/// `out.res1_of`.
///
/// # Errors
/// `gltf.match.node`: an extra out of range or said twice, or counts of
/// unmatched nodes that differ.
fn match_nodes(nodes: &[Elem], names: &[String], out: &mut Matched) -> Result<(), ImportError> {
    let n = names.len();
    let cand: Vec<usize> = (0..nodes.len())
        .filter(|&i| !is_carrier(&nodes[i]))
        .collect();
    let mut taken = vec![false; nodes.len()];
    let mut node_of: Vec<Option<usize>> = vec![None; n];
    nodes_by_extras(nodes, &cand, &mut node_of, &mut taken)?;
    nodes_by_names(nodes, &cand, names, &mut node_of, &mut taken);
    // 3. order
    let rest_g: Vec<usize> = cand.iter().copied().filter(|&g| !taken[g]).collect();
    let rest_r: Vec<usize> = (0..n).filter(|&r| node_of[r].is_none()).collect();
    if rest_g.len() != rest_r.len() {
        let gl: Vec<String> = rest_g
            .iter()
            .map(|&g| format!("{g} {:?}", name_of(&nodes[g])))
            .collect();
        let rl: Vec<String> = rest_r
            .iter()
            .map(|&r| format!("{r} {:?}", names[r]))
            .collect();
        return Err(err(
            "gltf.match.node",
            format!(
                "the glTF has {} nodes, the base has {n} Res1 nodes; unmatched glTF nodes: [{}]; Res1 nodes without a glTF node: [{}]",
                cand.len(),
                gl.join(", "),
                rl.join(", ")
            ),
        ));
    }
    if !rest_g.is_empty() {
        out.warnings.push(format!(
            "{} glTF node(s) matched to Res1 nodes by order (no extras, no name match)",
            rest_g.len()
        ));
    }
    for (g, r) in rest_g.into_iter().zip(rest_r) {
        node_of[r] = Some(g);
    }
    out.node_of = node_of
        .into_iter()
        .map(|g| g.unwrap_or(usize::MAX))
        .collect();
    for (r, &g) in out.node_of.iter().enumerate() {
        out.res1_of[g] = Some(r);
    }
    Ok(())
}

/// Step 1, extras: the candidates with a `{"msh": {"node": r}}` extra take
/// Res1 node `r`.
///
/// # Errors
/// `gltf.match.node`: `r` out of range, or said by two glTF nodes.
fn nodes_by_extras(
    nodes: &[Elem],
    cand: &[usize],
    node_of: &mut [Option<usize>],
    taken: &mut [bool],
) -> Result<(), ImportError> {
    let n = node_of.len();
    for &g in cand {
        if let Some(r) = extras_u64(&nodes[g], "node") {
            let r = r as usize;
            if r >= n {
                return Err(err(
                    "gltf.match.node",
                    format!(
                        "glTF node {g} ({:?}) says Res1 node {r}, the base has {n} nodes",
                        name_of(&nodes[g])
                    ),
                ));
            }
            if let Some(prev) = node_of[r] {
                return Err(err(
                    "gltf.match.node",
                    format!(
                        "glTF nodes {prev} ({:?}) and {g} ({:?}) both say Res1 node {r}",
                        name_of(&nodes[prev]),
                        name_of(&nodes[g])
                    ),
                ));
            }
            node_of[r] = Some(g);
            taken[g] = true;
        }
    }
    Ok(())
}

/// Step 2, names: the candidates not yet taken whose name (first pass) or
/// name without a Blender suffix (second pass) is the exported name of a
/// Res1 node not yet matched take it.
fn nodes_by_names(
    nodes: &[Elem],
    cand: &[usize],
    names: &[String],
    node_of: &mut [Option<usize>],
    taken: &mut [bool],
) {
    let mut by_name: HashMap<&str, usize> = HashMap::new();
    for (r, nm) in names.iter().enumerate() {
        if node_of[r].is_none() {
            by_name.insert(nm.as_str(), r);
        }
    }
    for pass in 0..2 {
        for &g in cand {
            if taken[g] {
                continue;
            }
            let nm = name_of(&nodes[g]);
            let key = if pass == 0 {
                nm
            } else {
                strip_blender_suffix(nm)
            };
            if let Some(&r) = by_name.get(key) {
                if node_of[r].is_none() {
                    node_of[r] = Some(g);
                    taken[g] = true;
                }
            }
        }
    }
}

/// Hierarchy: the glTF parent of every matched node must be the glTF node
/// of its base `hdr1` parent (a root for 0xFFFF).
///
/// # Errors
/// `gltf.hierarchy`, naming both parents (re-parenting is not supported).
fn check_hierarchy(
    nodes: &[Elem],
    parent: &[Option<usize>],
    n38: &[Node38],
    names: &[String],
    out: &Matched,
) -> Result<(), ImportError> {
    for (r, &g) in out.node_of.iter().enumerate() {
        let want = n38[r].parent;
        let got = parent[g].map(|p| out.res1_of[p]);
        let ok = match got {
            None => want == NONE16,
            Some(Some(p)) => usize::from(want) == p,
            Some(None) => false,
        };
        if !ok {
            let gp = match parent[g] {
                None => "no parent (a root)".to_string(),
                Some(p) => format!("glTF node {p} {:?}", name_of(&nodes[p])),
            };
            let bp = if want == NONE16 {
                "a root".to_string()
            } else {
                format!("child of Res1 node {want} {:?}", names[usize::from(want)])
            };
            return Err(err(
                "gltf.hierarchy",
                format!("Res1 node {r} {:?}: glTF parent is {gp}, the base has it as {bp} (re-parenting is not supported)", names[r]),
            ));
        }
    }
    Ok(())
}

/// Meshes and their slot hints: `(glTF mesh, base slot)` per glTF node with
/// a mesh. A carrier's hint is the slot of its `{"msh": {"node", "cell"}}`
/// extras; a Res1 node's, its cell 0 slot, else its first slot.
fn node38_mesh_hints(nodes: &[Elem], n38: &[Node38], out: &Matched) -> Vec<(usize, Option<usize>)> {
    let n = n38.len();
    let mut mesh_hint = Vec::new();
    for (g, nd) in nodes.iter().enumerate() {
        let Some(m) = idx(nd, "mesh") else { continue };
        let hint = if is_carrier(nd) {
            let r = extras_u64(nd, "node")
                .map(|r| r as usize)
                .filter(|&r| r < n);
            let c = extras_u64(nd, "cell")
                .map(|c| c as usize)
                .filter(|&c| c < 15);
            match (r, c) {
                (Some(r), Some(c)) => Some(n38[r].slots[c])
                    .filter(|&s| s != NONE16)
                    .map(usize::from),
                _ => None,
            }
        } else {
            out.res1_of[g].and_then(|r| {
                let s = &n38[r].slots;
                let s0 = if s[0] != NONE16 {
                    s[0]
                } else {
                    s.iter().copied().find(|&x| x != NONE16).unwrap_or(NONE16)
                };
                (s0 != NONE16).then_some(usize::from(s0))
            })
        };
        mesh_hint.push((m, hint));
    }
    mesh_hint
}

/// Mesh → slot: each glTF mesh used by a node stands for the slot of its
/// `{"msh": {"slot"}}` extra, else its `slot<N>` name, else its node's
/// hint (legacy models: every batch, one mesh). Fills `out.meshes` in glTF
/// mesh order.
///
/// # Errors
/// `gltf.index` (a mesh that does not exist), `gltf.match.mesh` (no slot,
/// two slots for a mesh, a slot out of range or taken by two meshes, two
/// meshes for a legacy model).
fn match_meshes(
    doc: &GltfFile,
    base: &Model,
    mesh_hint: Vec<(usize, Option<usize>)>,
    out: &mut Matched,
) -> Result<(), ImportError> {
    let meshes = doc.meshes();
    let mut seen: HashMap<usize, MeshTarget> = HashMap::new();
    let mut slot_mesh: HashMap<usize, usize> = HashMap::new();
    for (m, hint) in mesh_hint {
        let mesh = meshes.get(m).ok_or_else(|| {
            err(
                "gltf.index",
                format!("meshes[{m}] does not exist ({} meshes)", meshes.len()),
            )
        })?;
        let target = mesh_target(base, m, mesh, hint)?;
        if let Some(prev) = seen.get(&m) {
            if *prev != target {
                return Err(err(
                    "gltf.match.mesh",
                    format!("glTF mesh {m} maps to two slots"),
                ));
            }
            continue;
        }
        if let MeshTarget::Slot(s) = target {
            if s >= base.slots.len() {
                return Err(err(
                    "gltf.match.mesh",
                    format!(
                        "glTF mesh {m} {:?} names Res2 slot {s}, the base has {} slots",
                        name_of(mesh),
                        base.slots.len()
                    ),
                ));
            }
            if let Some(&other) = slot_mesh.get(&s) {
                return Err(err(
                    "gltf.match.mesh",
                    format!(
                        "glTF meshes {other} {:?} and {m} {:?} both map to Res2 slot {s} (make the mesh data single, or remove one)",
                        name_of(&meshes[other]),
                        name_of(mesh)
                    ),
                ));
            }
            slot_mesh.insert(s, m);
        } else if !seen.is_empty() {
            return Err(err(
                "gltf.match.mesh",
                "legacy model: more than one glTF mesh",
            ));
        }
        seen.insert(m, target);
        out.meshes.push((m, target));
    }
    out.meshes.sort_by_key(|&(m, _)| m);
    Ok(())
}

/// What glTF mesh `m` stands for: legacy models' one mesh, else the slot of
/// its extra, its `slot<N>` name or `hint`, in that order.
///
/// # Errors
/// `gltf.match.mesh`: none of them.
fn mesh_target(
    base: &Model,
    m: usize,
    mesh: &Elem,
    hint: Option<usize>,
) -> Result<MeshTarget, ImportError> {
    Ok(if matches!(base.nodes, Nodes::Legacy24 { .. }) {
        MeshTarget::Legacy
    } else if let Some(s) = extras_u64(mesh, "slot") {
        MeshTarget::Slot(s as usize)
    } else if let Some(s) = strip_blender_suffix(name_of(mesh))
        .strip_prefix("slot")
        .and_then(|s| s.parse::<usize>().ok())
    {
        MeshTarget::Slot(s)
    } else if let Some(s) = hint {
        MeshTarget::Slot(s)
    } else {
        return Err(err(
            "gltf.match.mesh",
            format!("glTF mesh {m} {:?}: no slot extras, no slot<N> name and its node shows no base slot", name_of(mesh)),
        ));
    })
}

/// Materials: each glTF material's `Batch20.material_index` from its
/// `{"msh": {"material_index"}}` extra, else its `material<N>` name (else
/// a warning: its primitives keep the base batch's material), with its
/// `lit` extra.
fn match_materials(doc: &GltfFile, out: &mut Matched) {
    for (i, mat) in doc.materials().iter().enumerate() {
        let mi = extras_u64(mat, "material_index")
            .or_else(|| {
                strip_blender_suffix(name_of(mat))
                    .strip_prefix("material")
                    .and_then(|s| s.parse().ok())
            })
            .and_then(|v| u16::try_from(v).ok());
        if mi.is_none() {
            out.warnings.push(format!(
                "glTF material {i} {:?}: no material_index extras; its primitives keep the base batch's material",
                name_of(mat)
            ));
        }
        let lit = super::read::msh_bool(mat, "lit").unwrap_or(false);
        out.materials.push(mi.map(|key| BatchMaterial { key, lit }));
    }
}

/// Applies node-level edits: Res10 names (a name equal to the exported one,
/// or to it plus a Blender `.001` suffix, keeps the raw bytes) and `hdr0`
/// flags from the node extras.
///
/// # Errors
/// `gltf.match.node` when a new name cannot be encoded in Windows-1251.
pub fn apply_nodes(
    doc: &GltfFile,
    m: &Matched,
    base: &Model,
    model: &mut Model,
    conv: Conventions,
    report: &mut ImportReport,
) -> Result<(), ImportError> {
    let nodes = doc.nodes();
    let names = exported_names(base, conv.names);
    for (r, &g) in m.node_of.iter().enumerate() {
        let nd = &nodes[g];
        let nm = name_of(nd);
        if !(nm.is_empty() || nm == names[r] || strip_blender_suffix(nm) == names[r]) {
            let Some(bytes) = convention::encode_name(nm) else {
                return Err(err(
                    "gltf.match.node",
                    format!("Res1 node {r}: new name {nm:?} has characters outside Windows-1251"),
                ));
            };
            match conv.names.set_node_name(model, r, &bytes) {
                Ok(()) => report.renamed_nodes.push(r),
                Err(e) => report
                    .warnings
                    .push(format!("Res1 node {r}: renamed to {nm:?}, not stored: {e}")),
            }
        }
        if let (Some(f), Nodes::Node38(n38)) = (extras_u64(nd, "flags"), &mut model.nodes) {
            if let Ok(f) = u16::try_from(f) {
                n38[r].flags = f;
            }
        }
    }
    Ok(())
}

/// Refuses mesh edits that `--base` cannot express instead of reporting
/// them as "unchanged": a Res1 node whose glTF mesh stands for a slot the
/// base node does not show at the exported cell (re-pointed), or that has
/// no mesh although the base node shows a slot at every cell the document
/// can have been exported with (deleted or detached).
///
/// The exported cell is not stored in the glTF; it is inferred as the cells
/// `c` with `base.slots[c] == slot` for every node that has a mesh.
/// Documents exported with `--all-cells` (cell carrier nodes) are checked
/// per carrier: its mesh must be the slot of its `{"node", "cell"}`.
///
/// # Errors
/// `gltf.match.mesh`, naming the node and the slots.
pub fn check_mesh_assignment(doc: &GltfFile, m: &Matched, base: &Model) -> Result<(), ImportError> {
    let n38 = base.nodes38();
    if n38.is_empty() {
        return Ok(());
    }
    let nodes = doc.nodes();
    let slot_of_mesh: HashMap<usize, usize> = m
        .meshes
        .iter()
        .filter_map(|&(mesh, t)| match t {
            MeshTarget::Slot(s) => Some((mesh, s)),
            MeshTarget::Legacy => None,
        })
        .collect();
    let mut carriers = false;
    for nd in nodes {
        let (Some(r), Some(c)) = (extras_u64(nd, "node"), extras_u64(nd, "cell")) else {
            continue;
        };
        carriers = true;
        let (r, c) = (r as usize, c as usize);
        let want = n38.get(r).and_then(|x| x.slots.get(c)).copied();
        let got = idx(nd, "mesh").and_then(|mm| slot_of_mesh.get(&mm).copied());
        if let (Some(w), Some(g)) = (want, got) {
            if w == NONE16 || usize::from(w) != g {
                return Err(err(
                    "gltf.match.mesh",
                    format!("cell node {:?} (Res1 node {r}, cell {c}) shows slot {g}, the base has {} there (changing which slot a cell shows is not supported)", name_of(nd), if w == NONE16 { "no slot".to_string() } else { format!("slot {w}") }),
                ));
            }
        }
    }
    if carriers {
        return Ok(());
    }
    // Cells consistent with every node that has a mesh.
    let mut cells: Vec<bool> = vec![true; 15];
    for (r, &g) in m.node_of.iter().enumerate() {
        let Some(nd) = nodes.get(g) else { continue };
        let Some(s) = idx(nd, "mesh").and_then(|mm| slot_of_mesh.get(&mm).copied()) else {
            continue;
        };
        if !n38[r]
            .slots
            .iter()
            .any(|&x| x != NONE16 && usize::from(x) == s)
        {
            return Err(err(
                "gltf.match.mesh",
                format!(
                    "Res1 node {r} {:?} shows the mesh of slot {s}, which the base node shows in none of its cells (re-pointing a node to another mesh is not supported)",
                    name_of(nd)
                ),
            ));
        }
        for (c, ok) in cells.iter_mut().enumerate() {
            *ok &= n38[r].slots[c] != NONE16 && usize::from(n38[r].slots[c]) == s;
        }
        if !cells.iter().any(|&x| x) {
            return Err(err(
                "gltf.match.mesh",
                format!(
                    "Res1 node {r} {:?} shows slot {s}: no single cell of the base shows the slots the glTF nodes show (re-pointing a node to another mesh is not supported)",
                    name_of(nd)
                ),
            ));
        }
    }
    for (r, &g) in m.node_of.iter().enumerate() {
        let Some(nd) = nodes.get(g) else { continue };
        if idx(nd, "mesh").is_some() {
            continue;
        }
        let always = (0..15)
            .filter(|&c| cells[c])
            .all(|c| n38[r].slots[c] != NONE16);
        if always {
            return Err(err(
                "gltf.match.mesh",
                format!(
                    "Res1 node {r} {:?} has no mesh, but the base node shows slot {} (deleting or detaching a mesh is not supported: delete its faces instead)",
                    name_of(nd),
                    n38[r].slots.iter().find(|&&x| x != NONE16).copied().unwrap_or(NONE16)
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blender_suffix() {
        assert_eq!(strip_blender_suffix("hull.001"), "hull");
        assert_eq!(strip_blender_suffix("hull.1"), "hull.1");
        assert_eq!(strip_blender_suffix(".001"), ".001");
        assert_eq!(strip_blender_suffix("slot3"), "slot3");
    }
}
