//! The way back for an assembled unit (issue 24 item 5; unit-files-notes
//! §3.5 step 5): an edited glTF of a whole unit, as
//! [`super::assemble::convert_unit`] built it and Blender wrote it back,
//! split into one model document per mounted part, each as `msh2gltf`
//! exports that part's `ARCHIVE:ENTRY` on its own, so the model `--base`
//! edit can write it into its archive entry.
//!
//! The inverse of the mount (§3.4): a node belongs to the part named by its
//! `extras.msh.part` (a node without one: its nearest ancestor's part);
//! every node of a mounted part whose parent belongs to another part (its
//! socket) hangs again on the part's node 0, restored from the part's own
//! export (name, pose, extras and the node-0 animation channels the
//! assembly dropped); the mount keeps the children's local poses, so the
//! part's nodes keep theirs and are again in the part's own model frame.
//! Channels of the part's nodes are kept (animations left empty are
//! dropped); the scene extras are the part's own (conventions, fps, up)
//! with the edited scene's `frame_current`.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{json, Value};

use super::assemble::{self, Part};
use crate::convert::{ConvertError, ConvertOptions};
use crate::gltf_import::matching::{child_links, local_matrix, strip_blender_suffix};
use crate::gltf_import::read::{arr, idx, msh_u64};
use crate::gltf_import::{GltfFile, ImportError};

pub use crate::gltf_export::msh_extras::PART_KEY;

/// A part's own export: its glTF JSON and binary buffer, as `msh2gltf
/// ARCHIVE:ENTRY` gives them (with its control points and clips).
pub struct OwnExport {
    /// The glTF JSON.
    pub json: Value,
    /// The GLB binary buffer.
    pub bin: Vec<u8>,
}

/// Exports part `part` of a unit from its archive in `game` on its own
/// (what [`super::assemble`] merges). `archives`: the archives read so
/// far ([`crate::source::SharedFiles`]); one missing there is read from `game`.
///
/// # Errors
/// [`ConvertError`] naming `ARCHIVE:ENTRY`: the archive or entry is
/// missing, or the model does not convert.
pub fn part_export(
    game: &Path,
    part: &Part,
    opts: &ConvertOptions,
    archives: &crate::source::SharedFiles,
) -> Result<OwnExport, ConvertError> {
    let (c, _) = assemble::convert_part(game, part, None, opts, archives)?;
    let json = serde_json::to_value(&c.exported.root).map_err(|e| ConvertError {
        source: format!("{}:{}", part.archive, part.mesh_entry),
        kind: crate::convert::ConvertErrorKind::Export(crate::gltf_export::ExportError::Json(e)),
    })?;
    Ok(OwnExport {
        json,
        bin: c.exported.bin,
    })
}

/// The part index of every node of `doc`: its `extras.msh.part`, else its
/// nearest ancestor's (an object added under a part's node belongs to that
/// part); `None` for a node with neither.
///
/// # Errors
/// `gltf.hierarchy` for a child index out of range or a node listed as a
/// child twice.
pub fn node_parts(doc: &GltfFile) -> Result<Vec<Option<usize>>, ImportError> {
    let nodes = doc.nodes();
    let parent = child_links(nodes)?;
    let own: Vec<Option<usize>> = nodes
        .iter()
        .map(|n| msh_u64(n, PART_KEY).map(|k| k as usize))
        .collect();
    Ok((0..nodes.len())
        .map(|g| {
            let mut at = Some(g);
            // At most one step per node: a cycle ends the walk.
            for _ in 0..=nodes.len() {
                let n = at?;
                if let Some(k) = own[n] {
                    return Some(k);
                }
                at = parent[n];
            }
            None
        })
        .collect())
}

/// The work of splitting `doc` into `parts` part documents, counted
/// before any part is exported: each part document starts from the whole
/// unit's JSON and the model edit of each part matches every node it is
/// given, so the unit's nodes count once per part
/// ([`crate::limits::UNITS_PER_NODE`] each). Returns the units and what
/// was counted.
pub fn split_work(doc: &GltfFile, parts: usize) -> (u64, String) {
    let nodes = doc.nodes().len() as u64;
    let units = nodes
        .saturating_mul(crate::limits::UNITS_PER_NODE)
        .saturating_mul(parts as u64);
    (
        units,
        format!("splitting {nodes} nodes into {parts} part documents"),
    )
}

/// Refuses a node whose `extras.msh.part` names no part of the unit:
/// a value that is not an unsigned integer, or one at or past `parts`
/// (the unit's mounted parts are `0..parts`, unit-files-notes §3.5). Such
/// a node (and what hangs below it) would go to no part document, so
/// nothing would write it.
///
/// # Errors
/// `gltf.unit` naming the node (index and name), its value and the valid
/// range.
pub fn check_part_numbers(doc: &GltfFile, parts: usize) -> Result<(), ImportError> {
    for (g, n) in doc.nodes().iter().enumerate() {
        let Some(v) = crate::gltf_import::read::msh_extras(n).and_then(|e| e.get(PART_KEY)) else {
            continue;
        };
        let ok = crate::gltf_import::read::extra_u64(v).is_some_and(|k| k < parts as u64);
        if !ok {
            let name = n["name"].as_str().unwrap_or("(unnamed)");
            return Err(ImportError::new(
                "gltf.unit",
                format!(
                    "node {g} {name:?}: extras.msh.{PART_KEY} {v} names no part of this unit (its parts are 0..={}): set it to the part the object belongs to, or remove it to put the object in its parent's part",
                    parts.saturating_sub(1)
                ),
            ));
        }
    }
    Ok(())
}

/// The glTF nodes that belong to no part (no `extras.msh.part` on them or
/// an ancestor), by name: nothing writes them.
pub fn orphans(doc: &GltfFile, parts_of: &[Option<usize>]) -> Vec<String> {
    doc.nodes()
        .iter()
        .zip(parts_of)
        .filter(|(_, k)| k.is_none())
        .map(|(n, _)| n["name"].as_str().unwrap_or("(unnamed)").to_string())
        .collect()
}

/// An object of a mounted part that hangs elsewhere than on its part's
/// socket: re-parented in Blender to another node (or to none). The game
/// mounts a part at the node its `.dat` component names (+68 attach,
/// unit-files-notes §3.3, §3.4), and [`part_document`] hangs the object
/// on the part's node 0 again, so the new parent reaches nothing the game
/// reads: the caller warns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MovedMount {
    /// The part index.
    pub part: usize,
    /// The object's name.
    pub node: String,
    /// Its parent now (name, the part it belongs to); `None`: a scene root.
    pub now: Option<(String, Option<usize>)>,
}

/// Every object of a mounted part (part 1 and up) whose parent is neither
/// a node of its own part nor its socket (the node of `parts[k].parent_part`
/// whose `extras.msh.node` is `parts[k].socket`), in node order.
/// `parts_of`: [`node_parts`].
pub fn moved_mounts(doc: &GltfFile, parts_of: &[Option<usize>], parts: &[Part]) -> Vec<MovedMount> {
    let nodes = doc.nodes();
    let Ok(parent) = child_links(nodes) else {
        return Vec::new();
    };
    let name = |g: usize| nodes[g]["name"].as_str().unwrap_or("(unnamed)").to_string();
    let mut out = Vec::new();
    for (g, k) in parts_of.iter().enumerate() {
        let Some(part) = k.filter(|&k| k > 0).and_then(|k| parts.get(k)) else {
            continue;
        };
        let p = parent.get(g).copied().flatten();
        let on_socket = p.is_some_and(|p| {
            parts_of[p] == *k
                || (parts_of[p] == part.parent_part
                    && msh_u64(&nodes[p], "node") == part.socket.map(|s| s as u64))
        });
        if !on_socket {
            out.push(MovedMount {
                part: k.unwrap_or_default(),
                node: name(g),
                now: p.map(|p| (name(p), parts_of[p])),
            });
        }
    }
    out
}

/// Largest departure of a world scale factor from 1 that is not a scale:
/// f32 noise of a glTF written by Blender.
pub const SCALE_TOL: f64 = 1e-4;

/// A mounted part that Blender shows scaled by what it hangs on: the
/// objects of another part (its socket and their parents) carry a scale,
/// which the game never applies to a mounted part (it mounts the part's
/// own model at the socket's point and direction, unit-files-notes §3.4).
#[derive(Debug, Clone, PartialEq)]
pub struct InheritedScale {
    /// The part index.
    pub part: usize,
    /// The socket's name (the node of another part it hangs on).
    pub socket: String,
    /// The socket's world scale at rest (x, y, z).
    pub scale: [f64; 3],
}

/// Every mounted part of `doc` whose socket has a world scale other than 1
/// (beyond [`SCALE_TOL`]) at rest, in part order. `parts_of`: [`node_parts`].
/// The part's own nodes are written in its own frame ([`part_document`]),
/// so such a scale reaches nothing the game reads: the caller warns.
pub fn inherited_scales(doc: &GltfFile, parts_of: &[Option<usize>]) -> Vec<InheritedScale> {
    let nodes = doc.nodes();
    let Ok(parent) = child_links(nodes) else {
        return Vec::new();
    };
    let world = |i: usize| {
        let mut m = local_matrix(&nodes[i]);
        let mut at = parent[i];
        for _ in 0..nodes.len() {
            let Some(p) = at else { break };
            m = local_matrix(&nodes[p]) * m;
            at = parent[p];
        }
        m
    };
    let mut out: Vec<InheritedScale> = Vec::new();
    for (i, k) in parts_of.iter().enumerate() {
        let (Some(k), Some(p)) = (*k, parent.get(i).copied().flatten()) else {
            continue;
        };
        if parts_of[p] == Some(k) || out.iter().any(|s| s.part == k) {
            continue;
        }
        let (s, _, _) = world(p).to_scale_rotation_translation();
        if (s - glam::DVec3::ONE).abs().max_element() > SCALE_TOL {
            out.push(InheritedScale {
                part: k,
                socket: nodes[p]["name"].as_str().unwrap_or("(unnamed)").to_string(),
                scale: s.to_array(),
            });
        }
    }
    out.sort_by_key(|s| s.part);
    out
}

/// Part `k`'s model document from the edited unit `doc` (see the module
/// docs). `parts_of`: [`node_parts`] of `doc`; `own`: the part's own export
/// ([`part_export`]), whose node 0, node-0 channels and scene extras are
/// restored (part 0 keeps its node 0 in the assembly: only its scene
/// extras are taken).
///
/// # Errors
/// `gltf.hierarchy` as [`node_parts`]; `gltf.unit` when `own` has no node 0;
/// `gltf.json` naming `/scene` of `doc` when it is not a scene index.
pub fn part_document(
    doc: &GltfFile,
    parts_of: &[Option<usize>],
    k: usize,
    own: &OwnExport,
) -> Result<GltfFile, ImportError> {
    let nodes = doc.nodes();
    let parent = child_links(nodes)?;
    let mine: Vec<usize> = (0..nodes.len())
        .filter(|&g| parts_of.get(g).copied().flatten() == Some(k))
        .collect();
    let first = usize::from(k > 0);
    let mut new_of: Vec<Option<usize>> = vec![None; nodes.len()];
    for (i, &g) in mine.iter().enumerate() {
        new_of[g] = Some(first + i);
    }
    let mut out_nodes: Vec<Value> = Vec::with_capacity(mine.len() + first);
    let mut roots: Vec<Value> = Vec::new();
    let mut hung: Vec<Value> = Vec::new();
    if k > 0 {
        let Some(n0) = own.json["nodes"].get(0) else {
            return Err(ImportError::new(
                "gltf.unit",
                format!("part {k}: its own export has no node 0"),
            ));
        };
        let mut n0 = n0.clone();
        if let Some(o) = n0.as_object_mut() {
            // Its own mesh comes back with its resources (restore_root).
            o.remove("children");
            o.remove("mesh");
        }
        out_nodes.push(n0);
        roots.push(json!(0));
    }
    for &g in &mine {
        let mut n = nodes[g].to_value();
        let children: Vec<Value> = arr(&nodes[g], "children")
            .iter()
            .filter_map(|c| c.as_u64().and_then(|c| new_of.get(c as usize).copied()?))
            .map(Value::from)
            .collect();
        if let Some(ex) = n.pointer_mut("/extras/msh").and_then(Value::as_object_mut) {
            // A model document, as the part exports on its own.
            ex.remove(PART_KEY);
        }
        if let Some(o) = n.as_object_mut() {
            o.remove("children");
            if !children.is_empty() {
                o.insert("children".into(), Value::from(children));
            }
        }
        out_nodes.push(n);
        let here = json!(new_of[g].expect("a node of the part"));
        match parent[g] {
            None => roots.push(here),
            Some(p) if parts_of[p] != Some(k) => {
                if k > 0 {
                    hung.push(here);
                } else {
                    roots.push(here);
                }
            }
            Some(_) => {}
        }
    }
    if !hung.is_empty() {
        out_nodes[0]["children"] = Value::from(hung);
    }
    restore_names(&mut out_nodes, &own.json);
    // The whole tree: the part's own accessors and views are appended.
    let mut json = doc.to_json();
    let mut buffers = doc.buffers.clone();
    let mut anims = part_animations(&json, &new_of);
    if k > 0 {
        if let Some(a) = restore_root(&mut json, &mut buffers, &mut out_nodes[0], own) {
            anims.push(a);
        }
    }
    json["nodes"] = Value::from(out_nodes);
    json["animations"] = Value::from(anims);
    json["scene"] = json!(0);
    let mut scene = json!({"nodes": roots});
    let own_scene = &own.json["scenes"][idx(&own.json, "scene").unwrap_or(0)];
    if let Some(n) = own_scene.get("name") {
        scene["name"] = n.clone();
    }
    if let Some(ex) = own_scene.get("extras") {
        scene["extras"] = ex.clone();
    }
    let scene_i = crate::gltf_import::read::refs::default_scene(&doc.json, doc.scenes().len())?;
    let edited_scene = doc.scenes().get(scene_i);
    let edited_extras = edited_scene.map_or(&Value::Null, |s| &s["extras"]);
    if let Some(f) = edited_extras["msh"].get("frame_current") {
        if scene["extras"]["msh"].is_object() {
            scene["extras"]["msh"]["frame_current"] = f.clone();
        }
    }
    json["scenes"] = json!([scene]);
    Ok(GltfFile::new(json, buffers))
}

/// Gives each Res1 node (`extras.msh.node`) the name it has in the part's
/// own export when its name is that name made unique by the assembly
/// (`Mount_m8o1.1` for a gun mounted twice, with or without a Blender
/// suffix); a name the user changed otherwise stays.
fn restore_names(nodes: &mut [Value], own: &Value) {
    let mut by_node: HashMap<u64, &str> = HashMap::new();
    for n in arr(own, "nodes") {
        if let (Some(r), Some(name)) = (msh_u64(n, "node"), n["name"].as_str()) {
            if n["extras"]["msh"][super::gltf::CONTROL_POINT_KEY].is_null() {
                by_node.entry(r).or_insert(name);
            }
        }
    }
    for n in nodes.iter_mut() {
        if !n["extras"]["msh"][super::gltf::CONTROL_POINT_KEY].is_null() {
            continue;
        }
        let (Some(r), Some(name)) = (msh_u64(n, "node"), n["name"].as_str()) else {
            continue;
        };
        let Some(&want) = by_node.get(&r) else {
            continue;
        };
        let plain = strip_blender_suffix(name);
        let variant = plain
            .strip_prefix(want)
            .and_then(|s| s.strip_prefix('.'))
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
        if variant {
            n["name"] = Value::from(want);
        }
    }
}

/// The animations of `doc` with only the channels whose target node has a
/// new index in `new_of` (re-targeted); animations left without channels
/// are dropped. Samplers stay as they are (unused ones are never read).
fn part_animations(doc: &Value, new_of: &[Option<usize>]) -> Vec<Value> {
    let mut out = Vec::new();
    for a in arr(doc, "animations") {
        let channels: Vec<Value> = arr(a, "channels")
            .iter()
            .filter_map(|c| {
                let g = idx(&c["target"], "node")?;
                let n = new_of.get(g).copied()??;
                let mut c = c.clone();
                c["target"]["node"] = Value::from(n);
                Some(c)
            })
            .collect();
        if channels.is_empty() {
            continue;
        }
        let mut a = a.clone();
        a["channels"] = Value::from(channels);
        out.push(a);
    }
    out
}

/// Offsets of `own`'s resources appended to the part document.
#[derive(Clone, Copy)]
struct Appended {
    accessors: usize,
    materials: usize,
}

/// Appends `own`'s buffer, buffer views, accessors and materials (texture
/// references dropped: the part export has no images) to `json`/`buffers`.
fn append_own(json: &mut Value, buffers: &mut Vec<Vec<u8>>, own: &OwnExport) -> Appended {
    let (n_view, n_acc) = (arr(json, "bufferViews").len(), arr(json, "accessors").len());
    let n_mat = arr(json, "materials").len();
    let b = buffers.len();
    buffers.push(own.bin.clone());
    push_all(json, "buffers", vec![json!({"byteLength": own.bin.len()})]);
    let views = arr(&own.json, "bufferViews")
        .iter()
        .map(|v| {
            let mut v = v.clone();
            v["buffer"] = Value::from(b);
            v
        })
        .collect();
    push_all(json, "bufferViews", views);
    let accessors = arr(&own.json, "accessors")
        .iter()
        .map(|a| {
            let mut a = a.clone();
            if let Some(v) = idx(&a, "bufferView") {
                a["bufferView"] = Value::from(v + n_view);
            }
            a
        })
        .collect();
    push_all(json, "accessors", accessors);
    let materials = arr(&own.json, "materials")
        .iter()
        .map(|m| {
            let mut m = m.clone();
            if let Some(o) = m.as_object_mut() {
                for key in ["normalTexture", "occlusionTexture", "emissiveTexture"] {
                    o.remove(key);
                }
            }
            if let Some(p) = m
                .get_mut("pbrMetallicRoughness")
                .and_then(Value::as_object_mut)
            {
                p.remove("baseColorTexture");
                p.remove("metallicRoughnessTexture");
            }
            m
        })
        .collect();
    push_all(json, "materials", materials);
    Appended {
        accessors: n_acc,
        materials: n_mat,
    }
}

/// What the assembly dropped with a mounted part's node 0 (§3.4), restored
/// from `own` into the part document: its mesh (a mounted root carries
/// none in the game's data, but a model may), set on `node0`, and its
/// channels, returned as one animation. `own`'s resources are appended
/// only when one of them is there.
fn restore_root(
    json: &mut Value,
    buffers: &mut Vec<Vec<u8>>,
    node0: &mut Value,
    own: &OwnExport,
) -> Option<Value> {
    let mut channels = Vec::new();
    let mut samplers = Vec::new();
    for a in arr(&own.json, "animations") {
        // Clip animations repeat timeline ranges; the timeline has them all.
        if crate::unit::back::is_clip(a) {
            continue;
        }
        for c in arr(a, "channels") {
            if idx(&c["target"], "node") != Some(0) {
                continue;
            }
            let Some(s) = idx(c, "sampler").and_then(|s| arr(a, "samplers").get(s)) else {
                continue;
            };
            let mut c = c.clone();
            c["sampler"] = Value::from(samplers.len());
            channels.push(c);
            samplers.push(s.clone());
        }
    }
    let mesh = idx(&own.json["nodes"][0], "mesh").and_then(|m| arr(&own.json, "meshes").get(m));
    if channels.is_empty() && mesh.is_none() {
        return None;
    }
    let off = append_own(json, buffers, own);
    let shift = |v: &mut Value, key: &str, by: usize| {
        if let Some(i) = idx(v, key) {
            v[key] = Value::from(i + by);
        }
    };
    if let Some(mesh) = mesh {
        let mut mesh = mesh.clone();
        for p in mesh
            .get_mut("primitives")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if let Some(at) = p.get_mut("attributes").and_then(Value::as_object_mut) {
                for a in at.values_mut() {
                    *a = Value::from(a.as_u64().unwrap_or(0) as usize + off.accessors);
                }
            }
            shift(p, "indices", off.accessors);
            shift(p, "material", off.materials);
        }
        node0["mesh"] = Value::from(arr(json, "meshes").len());
        push_all(json, "meshes", vec![mesh]);
    }
    if channels.is_empty() {
        return None;
    }
    for s in &mut samplers {
        shift(s, "input", off.accessors);
        shift(s, "output", off.accessors);
    }
    Some(json!({"name": "node 0 (restored)", "channels": channels, "samplers": samplers}))
}

/// Appends `items` to the array `json[key]` (created when missing).
fn push_all(json: &mut Value, key: &str, items: Vec<Value>) {
    match json.get_mut(key).and_then(Value::as_array_mut) {
        Some(a) => a.extend(items),
        None => json[key] = Value::from(items),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(json: Value) -> GltfFile {
        GltfFile::new(json, vec![])
    }

    /// A chassis (node 0, node 1 socket) with a turret mounted on node 1
    /// (its node 0 dropped: nodes 2, 3), as the assembly writes it.
    fn assembled() -> Value {
        json!({
            "scene": 0,
            "scenes": [{"nodes": [0], "extras": {"msh": {"unit": {}, "frame_current": 3}}}],
            "nodes": [
                {"name": "Body", "children": [1], "extras": {"msh": {"node": 0, "part": 0}}},
                {"name": "Base_TL", "children": [2], "translation": [0, 1, 0], "extras": {"msh": {"node": 1, "part": 0}}},
                {"name": "Turn", "children": [3, 4], "translation": [0.5, 0, 0], "extras": {"msh": {"node": 1, "part": 1}}},
                {"name": "Gun", "extras": {"msh": {"node": 2, "part": 1}}},
                {"name": "Added"}
            ],
            "animations": [{"name": "t", "channels": [
                {"sampler": 0, "target": {"node": 1, "path": "rotation"}},
                {"sampler": 1, "target": {"node": 3, "path": "rotation"}}
            ], "samplers": [{"input": 0, "output": 1}, {"input": 0, "output": 2}]}]
        })
    }

    fn turret_own() -> OwnExport {
        OwnExport {
            json: json!({
                "scene": 0,
                "scenes": [{"nodes": [0], "name": "e_tur", "extras": {"msh": {"fps": 24.0, "up": "y"}}}],
                "nodes": [
                    {"name": "e_tur", "children": [1], "rotation": [0, 0, 0, 1], "extras": {"msh": {"node": 0}}},
                    {"name": "Turn", "children": [2]},
                    {"name": "Gun"}
                ],
                "bufferViews": [{"buffer": 0, "byteLength": 8}],
                "accessors": [{"bufferView": 0, "count": 1, "type": "SCALAR", "componentType": 5126},
                              {"bufferView": 0, "count": 1, "type": "VEC3", "componentType": 5126}],
                "animations": [{"channels": [{"sampler": 0, "target": {"node": 0, "path": "translation"}},
                                             {"sampler": 1, "target": {"node": 1, "path": "translation"}}],
                                "samplers": [{"input": 0, "output": 1}, {"input": 0, "output": 1}]}]
            }),
            bin: vec![0; 8],
        }
    }

    #[test]
    fn nodes_take_their_part_or_their_ancestors() {
        let mut j = assembled();
        j["nodes"][2]["children"] = json!([3, 4]);
        let d = doc(j);
        let p = node_parts(&d).unwrap();
        assert_eq!(p, [Some(0), Some(0), Some(1), Some(1), Some(1)]);
        let mut j = assembled();
        j["scenes"][0]["nodes"] = json!([0, 4]);
        j["nodes"][2]["children"] = json!([3]);
        let d = doc(j);
        let p = node_parts(&d).unwrap();
        assert_eq!(p[4], None);
        assert_eq!(orphans(&d, &p), ["Added"]);
    }

    /// The turret (part 1) hangs on Base_TL: a scale on Body reaches it
    /// (a warning), a scale on the turret's own node does not; a rotation
    /// without scale is no scale.
    #[test]
    fn a_part_shown_scaled_by_its_socket_is_found() {
        use std::f64::consts::FRAC_1_SQRT_2;
        let d = doc(assembled());
        let p = node_parts(&d).unwrap();
        assert_eq!(inherited_scales(&d, &p), []);
        let mut j = assembled();
        j["nodes"][0]["scale"] = json!([1.5, 1.5, 2.0]);
        j["nodes"][0]["rotation"] = json!([0.0, 0.0, FRAC_1_SQRT_2, FRAC_1_SQRT_2]);
        let d = doc(j);
        let s = inherited_scales(&d, &node_parts(&d).unwrap());
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].part, s[0].socket.as_str()), (1, "Base_TL"));
        for (got, want) in s[0].scale.iter().zip([1.5, 1.5, 2.0]) {
            assert!((got - want).abs() < 1e-6, "{:?}", s[0].scale);
        }
        let mut j = assembled();
        j["nodes"][2]["scale"] = json!([3.0, 3.0, 3.0]);
        j["nodes"][1]["rotation"] = json!([0.0, FRAC_1_SQRT_2, 0.0, FRAC_1_SQRT_2]);
        let d = doc(j);
        assert_eq!(inherited_scales(&d, &node_parts(&d).unwrap()), []);
    }

    #[test]
    fn a_mounted_part_hangs_on_its_restored_node_0() {
        let mut j = assembled();
        j["nodes"][2]["children"] = json!([3]);
        let d = doc(j);
        let p = node_parts(&d).unwrap();
        let td = part_document(&d, &p, 1, &turret_own()).unwrap();
        let t = td.to_json();
        let n = t["nodes"].as_array().unwrap();
        let names: Vec<&str> = n.iter().map(|n| n["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["e_tur", "Turn", "Gun"]);
        assert_eq!(n[0]["children"], json!([1]));
        assert_eq!(n[0]["rotation"], json!([0, 0, 0, 1]));
        assert_eq!(n[1]["children"], json!([2]));
        // The local pose on the socket is the pose on node 0.
        assert_eq!(n[1]["translation"], json!([0.5, 0, 0]));
        assert_eq!(t["scenes"][0]["nodes"], json!([0]));
        let ex = &t["scenes"][0]["extras"]["msh"];
        assert_eq!(
            (ex["fps"].clone(), ex["frame_current"].clone()),
            (json!(24.0), json!(3))
        );
        assert!(ex.get("unit").is_none());
        // The turret's channel re-targeted; node 0's channel restored from
        // its own export with its buffer appended.
        let an = t["animations"].as_array().unwrap();
        assert_eq!(an.len(), 2);
        assert_eq!(
            an[0]["channels"],
            json!([{"sampler": 1, "target": {"node": 2, "path": "rotation"}}])
        );
        assert_eq!(
            an[1]["channels"][0]["target"],
            json!({"node": 0, "path": "translation"})
        );
        assert_eq!(an[1]["samplers"][0], json!({"input": 0, "output": 1}));
        assert_eq!(td.buffers.len(), 1);
        assert_eq!(
            td.accessor_def(1).unwrap().get("bufferView"),
            Some(&json!(0))
        );
        assert_eq!(
            td.buffer_view_def(0).unwrap().get("buffer"),
            Some(&json!(0))
        );
    }

    #[test]
    fn the_chassis_keeps_its_node_0_and_loses_mounted_parts() {
        let mut j = assembled();
        j["nodes"][2]["children"] = json!([3]);
        let d = doc(j);
        let p = node_parts(&d).unwrap();
        let c = part_document(&d, &p, 0, &turret_own()).unwrap().to_json();
        let n = c["nodes"].as_array().unwrap();
        assert_eq!(n.len(), 2);
        assert!(n[1].get("children").is_none());
        assert_eq!(c["scenes"][0]["nodes"], json!([0]));
        assert_eq!(
            c["animations"][0]["channels"],
            json!([{"sampler": 0, "target": {"node": 1, "path": "rotation"}}])
        );
    }
}
