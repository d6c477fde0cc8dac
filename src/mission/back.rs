//! A mission scene written back over its `data.tma` (mission-notes §8.7):
//! objects are read from the nodes carrying `extras.parkan_object`
//! (wherever the user put them), every field from its raw value in the
//! extras, the transform from the node's world matrix only where it
//! differs from what the exporter showed (`shown`): an untouched object,
//! axis or angle keeps its stored bits, so an unedited scene gives the base
//! back byte for byte.
//!
//! - Moved: the position from the node (`(x, z, −y)` back to game axes);
//!   a unit inside a building keeps its stored position (it stands at its
//!   hall-way vertex) unless its extras' `host` and `vertex` were set to −1.
//! - Turned: `Rz·Ry·Rx` angles from the node's rotation; `rz` on the 2π
//!   branch nearest the stored angle; `rx`, `ry` within 1e-6 of the
//!   stored ones keep their bits.
//! - Rescaled: kinds 2 and 3 write the node's scale (a non-uniform one with
//!   a warning); kinds 0 and 1 keep the stored scale (the game ignores it)
//!   with a warning.
//! - Deleted: an object of the base with no node is dropped.
//! - Copied: a second node carrying the extras of an object (the one with
//!   the longer name, Blender's `.001`) is a new object appended with its
//!   property list and, when owned, a fresh logical id (`LogicalID` too).
//! - The `clan` word and the `ClanID` property, the `logical_id` and the
//!   `LogicalID` property move together.
//! - Lodes and clan bases follow their empties; routes, clans' other
//!   fields, the map path and the description come from the base.
//! - Anything else that draws (a mesh node outside every placed object,
//!   route, clan, lode, zone and the terrain) is a warning naming it:
//!   `data.tma` places the game's models by name only.

use glam::{DMat4, DQuat, DVec3, EulerRot};
use serde_json::Value;

use super::extras::{self, get_string};
use super::ir::{Mission, PlacedObject, Property};
use super::MissionError;
use crate::convention::Up;
use crate::gltf_import::matching::local_matrix;

/// What [`apply`] wrote.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Written {
    /// The mission to write.
    pub mission: Mission,
    /// Differences not written, and what was decided (new ids).
    pub warnings: Vec<String>,
    /// Objects of the base moved, turned or rescaled (copies count as
    /// `added` only).
    pub moved: usize,
    /// Objects of the base with no node.
    pub deleted: usize,
    /// Copies added.
    pub added: usize,
    /// Objects of the base whose other fields (the extras) were edited,
    /// whether or not they also moved.
    pub edited: usize,
    /// Lodes and clan bases moved.
    pub layers: usize,
}

fn node_err(node: &str, detail: impl Into<String>) -> MissionError {
    MissionError::new("mission.node", Some(format!("node {node:?}")), detail)
}

/// The nodes reachable from the scene, with their world matrices.
fn scene_nodes(doc: &Value) -> Vec<(usize, DMat4)> {
    let scene = doc["scene"].as_u64().unwrap_or(0) as usize;
    let mut stack: Vec<(usize, DMat4)> = doc["scenes"][scene]["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r.as_u64().map(|r| (r as usize, DMat4::IDENTITY)))
        .collect();
    let n = doc["nodes"].as_array().map_or(0, Vec::len);
    let mut seen = vec![false; n];
    let mut out = Vec::new();
    while let Some((i, parent)) = stack.pop() {
        if i >= n || seen[i] {
            continue;
        }
        seen[i] = true;
        let node = &doc["nodes"][i];
        let w = parent * local_matrix(node);
        for c in node["children"].as_array().into_iter().flatten() {
            if let Some(c) = c.as_u64() {
                stack.push((c as usize, w));
            }
        }
        out.push((i, w));
    }
    out.sort_by_key(|(i, _)| *i);
    out
}

fn u32_of(x: &Value, key: &str, node: &str) -> Result<u32, MissionError> {
    x[key]
        .as_i64()
        .map(|v| v as u32)
        .ok_or_else(|| node_err(node, format!("extras {key} is not an integer")))
}

fn bits3(x: &Value, node: &str) -> Result<[[f32; 3]; 3], MissionError> {
    let mut out = [[0.0; 3]; 3];
    for (k, key) in ["position", "rotation", "scale"].iter().enumerate() {
        for (a, v) in out[k].iter_mut().enumerate() {
            let b = x["f32_bits"][key][a]
                .as_u64()
                .ok_or_else(|| node_err(node, format!("extras f32_bits.{key} is not 3 words")))?;
            *v = f32::from_bits(b as u32);
        }
    }
    Ok(out)
}

/// Every raw field of a placed object from its extras (§8.3).
///
/// # Errors
/// `mission.node` naming the node and the field that is missing or not
/// of its type.
pub fn object_from_extras(x: &Value, node: &str) -> Result<PlacedObject, MissionError> {
    let string = |key: &str| {
        get_string(x, key).ok_or_else(|| node_err(node, format!("extras {key} is not a string")))
    };
    let [position, rotation, scale] = bits3(x, node)?;
    let mut properties = Vec::new();
    for (k, p) in x["properties"].as_array().into_iter().flatten().enumerate() {
        let words = |i: usize| {
            p["words"][i]
                .as_u64()
                .map(|w| w as u32)
                .ok_or_else(|| node_err(node, format!("property {k}: words[{i}] is not a word")))
        };
        properties.push(Property {
            kind: u32_of(p, "type", node)?,
            value: words(0)?,
            minimum: words(1)?,
            maximum: words(2)?,
            name: get_string(p, "name")
                .ok_or_else(|| node_err(node, format!("property {k}: no name")))?,
        });
    }
    Ok(PlacedObject {
        kind: u32_of(x, "kind", node)?,
        marker: u32_of(x, "marker", node)?,
        path: string("path")?,
        clan: u32_of(x, "clan", node)? as i32,
        logical_id: u32_of(x, "logical_id", node)? as i32,
        position,
        rotation,
        scale,
        instance_name: string("instance_name")?,
        start_flag: u32_of(x, "start_flag", node)?,
        host: u32_of(x, "host", node)? as i32,
        vertex: u32_of(x, "vertex", node)? as i32,
        property_word: u32_of(x, "property_word", node)?,
        properties,
    })
}

fn vec(v: &Value, n: usize, d: f64) -> Vec<f64> {
    (0..n).map(|k| v[k].as_f64().unwrap_or(d)).collect()
}

/// `new` where it differs from `old` by more than `tol` (relative to
/// `old`, at least `tol`), else `old` (its bits kept).
fn keep_or(old: f32, new: f64, tol: f64) -> f32 {
    if (new - f64::from(old)).abs() <= tol * f64::from(old).abs().max(1.0) {
        old
    } else {
        new as f32
    }
}

fn to_game(up: Up, v: DVec3) -> [f64; 3] {
    match up {
        Up::Y => [v.x, -v.z, v.y],
        Up::Z => [v.x, v.y, v.z],
    }
}

/// Applies the node's world transform `w` to `o` where it differs from
/// `shown` (what the exporter wrote); returns true when something was
/// written. Differences that cannot be written are warnings.
fn apply_transform(
    o: &mut PlacedObject,
    w: &DMat4,
    shown: &Value,
    up: Up,
    node: &str,
    warnings: &mut Vec<String>,
) -> Result<bool, MissionError> {
    let (s, r, t) = w.to_scale_rotation_translation();
    if !(s.is_finite() && r.is_finite() && t.is_finite()) {
        return Err(node_err(node, "its transform is not finite"));
    }
    let st = vec(&shown["translation"], 3, 0.0);
    let sr = vec(&shown["rotation"], 4, 0.0);
    let ss = vec(&shown["scale"], 3, 1.0);
    let was = DQuat::from_xyzw(sr[0], sr[1], sr[2], sr[3]);
    let moved = (t - DVec3::from_slice(&st)).abs().max_element() > 1e-3;
    let turned = r.angle_between(was.normalize()) > 1e-5;
    let scaled = (s - DVec3::from_slice(&ss)).abs().max_element() > 1e-5;
    let hosted = o.host != -1 || o.vertex != -1;
    let mut changed = false;
    if hosted && (moved || turned) {
        warnings.push(format!(
            "{node}: a unit inside a building stands at its hall-way vertex, unturned: the move or turn is not written (set host and vertex to -1 in its extras to place it freely)"
        ));
    } else {
        if moved || (shown["hosted"] == true && !hosted) {
            let p = to_game(up, t);
            let new = [0, 1, 2].map(|k| keep_or(o.position[k], p[k], 1e-6));
            changed |= new != o.position;
            o.position = new;
        }
        if turned {
            let v = to_game(up, DVec3::new(r.x, r.y, r.z));
            let q = DQuat::from_xyzw(v[0], v[1], v[2], r.w);
            let (rz, ry, rx) = q.to_euler(EulerRot::ZYX);
            let stored = f64::from(o.rotation[2]);
            let tau = std::f64::consts::TAU;
            let rz = rz + tau * ((stored - rz) / tau).round();
            o.rotation = [
                keep_or(o.rotation[0], rx, 1e-6),
                keep_or(o.rotation[1], ry, 1e-6),
                keep_or(o.rotation[2], rz, 1e-6),
            ];
            changed = true;
        }
    }
    if scaled {
        if o.kind >= 2 {
            let g = match up {
                Up::Y => [s.x, s.z, s.y],
                Up::Z => [s.x, s.y, s.z],
            };
            if (g[0] - g[1]).abs().max((g[0] - g[2]).abs()) > 1e-4 * g[0].abs().max(1e-6) {
                warnings.push(format!("{node}: non-uniform scale {g:?} written as is (the game scales scenery uniformly in every shipped mission)"));
            }
            o.scale = [0, 1, 2].map(|k| keep_or(o.scale[k], g[k], 1e-6));
            changed = true;
        } else {
            warnings.push(format!(
                "{node}: the game ignores the scale of buildings and units (mission-notes §5.3): the stored scale is kept"
            ));
        }
    }
    Ok(changed)
}

/// Keeps the `ClanID` and `LogicalID` properties with the words they
/// mirror (§8.7) when the extras changed `clan` or `logical_id`.
fn sync_ids(o: &mut PlacedObject, old_clan: i32, old_id: i32) {
    for p in &mut o.properties {
        if p.name == b"ClanID" && o.clan != old_clan && p.value == old_clan as u32 {
            p.value = o.clan as u32;
        }
        if p.name == b"LogicalID" && o.logical_id != old_id && p.value == old_id as u32 {
            p.value = o.logical_id as u32;
            p.minimum = p.value;
            p.maximum = p.value;
        }
    }
}

/// The mission `doc` (a glTF exported from `base` by [`super::gltf`])
/// describes, written over `base` (module docs).
///
/// # Errors
/// `mission.gltf` when the scene has no `extras.parkan_mission`;
/// `mission.node` naming a node whose extras are not a placed object, name
/// an index the base does not have, or whose transform is not finite.
pub fn apply(doc: &Value, base: &Mission) -> Result<Written, MissionError> {
    let scene = doc["scene"].as_u64().unwrap_or(0) as usize;
    let x = &doc["scenes"][scene]["extras"][extras::MISSION_KEY];
    if !x.is_object() {
        return Err(MissionError::new(
            "mission.gltf",
            None,
            "the scene has no extras.parkan_mission: not a mission exported by msh2gltf",
        ));
    }
    let up = if x["conventions"]["up"] == "z" {
        Up::Z
    } else {
        Up::Y
    };
    let nodes = scene_nodes(doc);
    for (i, _) in &nodes {
        if doc["nodes"][*i]["extras"][extras::OBJECT_KEY].is_string() {
            let name = doc["nodes"][*i]["name"].as_str().unwrap_or("");
            return Err(node_err(
                name,
                "extras parkan_object is text, not an object (Blender 3.4's glTF exporter writes a nested custom property as its Python text): nothing written; re-encode it as JSON before gltf2msh",
            ));
        }
    }
    let mut placed: Vec<(usize, &DMat4, String)> = nodes
        .iter()
        .filter(|(i, _)| doc["nodes"][*i]["extras"][extras::OBJECT_KEY].is_object())
        .map(|(i, w)| {
            (
                *i,
                w,
                doc["nodes"][*i]["name"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    // The original of an object is its node with the shortest name
    // (copies get Blender's ".001"), then the first.
    placed.sort_by_key(|(i, _, name)| (name.len(), *i));
    let mut w = Written {
        mission: base.clone(),
        ..Default::default()
    };
    let mut originals: Vec<Option<PlacedObject>> = vec![None; base.objects.len()];
    let mut copies = Vec::new();
    for (i, world, name) in &placed {
        let x = &doc["nodes"][*i]["extras"][extras::OBJECT_KEY];
        let index = x["index"].as_u64().unwrap_or(u64::MAX) as usize;
        let mut o = object_from_extras(x, name)?;
        let Some(b) = base.objects.get(index) else {
            return Err(node_err(
                name,
                format!(
                    "extras index {index}: the base has {} objects",
                    base.objects.len()
                ),
            ));
        };
        sync_ids(&mut o, b.clan, b.logical_id);
        // Its fields before the move: "edited" counts the other fields only.
        let fields_edited = o != *b;
        let moved = apply_transform(&mut o, world, &x["shown"], up, name, &mut w.warnings)?;
        match &originals[index] {
            None => {
                w.moved += usize::from(moved);
                w.edited += usize::from(fields_edited);
                originals[index] = Some(o);
            }
            // A copy counts once, as added (its place is its own).
            Some(_) => copies.push((*i, name.clone(), index, o)),
        }
    }
    add_copies(&mut w, &originals, copies);
    w.deleted = originals.iter().filter(|o| o.is_none()).count();
    let mut objects: Vec<PlacedObject> = originals.into_iter().flatten().collect();
    objects.append(&mut w.mission.objects);
    w.mission.objects = objects;
    layers(doc, &nodes, up, &mut w);
    w.warnings.extend(foreign_nodes(doc).into_iter().map(|name| {
        format!(
            "{name}: not a placed object of the mission (no extras.{}): not written; data.tma places the game's models by name, so to add a building, unit, tree or rock duplicate a placed one of that model (Shift+D) and move the copy",
            extras::OBJECT_KEY
        )
    }));
    Ok(w)
}

/// The names of the scene's additions that `data.tma` cannot hold: each
/// topmost node that draws something (a mesh in its subtree) and is
/// neither one of the mission's nodes ([`extras::NODE_KEYS`], with what is
/// under them) nor a group holding some (the mission and kind groups).
/// Iterative (no recursion on a deep hierarchy); each node visited once.
fn foreign_nodes(doc: &Value) -> Vec<String> {
    let nodes = doc["nodes"].as_array().map_or(&[][..], Vec::as_slice);
    let children = |i: usize| -> Vec<usize> {
        nodes[i]["children"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c.as_u64().map(|c| c as usize))
            .filter(|&c| c < nodes.len())
            .collect()
    };
    let keyed = |i: usize| {
        extras::NODE_KEYS
            .iter()
            .any(|k| nodes[i]["extras"][*k].is_object())
    };
    let scene = doc["scene"].as_u64().unwrap_or(0) as usize;
    let roots: Vec<usize> = doc["scenes"][scene]["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r.as_u64().map(|r| r as usize))
        .filter(|&r| r < nodes.len())
        .collect();
    // Pre-order from the roots; flags filled bottom-up in reverse.
    let (mut order, mut seen, mut stack) = (Vec::new(), vec![false; nodes.len()], roots.clone());
    while let Some(i) = stack.pop() {
        if !std::mem::replace(&mut seen[i], true) {
            order.push(i);
            stack.extend(children(i));
        }
    }
    let (mut has_key, mut draws) = (vec![false; nodes.len()], vec![false; nodes.len()]);
    for &i in order.iter().rev() {
        has_key[i] = keyed(i);
        draws[i] = nodes[i].get("mesh").is_some();
        for c in children(i) {
            has_key[i] |= has_key[c];
            draws[i] |= draws[c];
        }
    }
    let mut out = Vec::new();
    let (mut stack, mut done) = (roots, vec![false; nodes.len()]);
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut done[i], true) || keyed(i) {
            continue;
        }
        if has_key[i] {
            stack.extend(children(i));
        } else if draws[i] {
            out.push(nodes[i]["name"].as_str().unwrap_or("(unnamed)").to_owned());
        }
    }
    out.sort();
    out
}

/// Appends the copies (in node order) to `w.mission.objects` (emptied
/// first), each owned copy with a fresh logical id.
fn add_copies(
    w: &mut Written,
    originals: &[Option<PlacedObject>],
    mut copies: Vec<(usize, String, usize, PlacedObject)>,
) {
    copies.sort_by_key(|c| c.0);
    let mut next = originals
        .iter()
        .flatten()
        .chain(copies.iter().map(|c| &c.3))
        .map(|o| o.logical_id)
        .max()
        .unwrap_or(0)
        .max(0);
    w.mission.objects.clear();
    for (_, name, index, mut o) in copies {
        let mut id = String::new();
        if o.is_owned() {
            next += 1;
            let old = o.logical_id;
            o.logical_id = next;
            let clan = o.clan;
            sync_ids(&mut o, clan, old);
            id = format!(" with the fresh logical id {next}");
        }
        w.warnings.push(format!(
            "{name}: a copy of object {index}, added as object {}{id}",
            originals.iter().flatten().count() + w.added
        ));
        w.added += 1;
        w.mission.objects.push(o);
    }
}

/// Lodes and clan bases moved with their empties (positions in game
/// axes; a clan base is x and y only).
fn layers(doc: &Value, nodes: &[(usize, DMat4)], up: Up, w: &mut Written) {
    for (i, world) in nodes {
        let x = &doc["nodes"][*i]["extras"];
        let t = to_game(up, world.w_axis.truncate());
        let name = doc["nodes"][*i]["name"].as_str().unwrap_or("");
        if let Some(k) = x[extras::LODE_KEY]["index"].as_u64() {
            if let Some(l) = w.mission.lodes.get_mut(k as usize) {
                let new = [0, 1, 2].map(|a| keep_or(l.position[a], t[a], 1e-6));
                if new != l.position {
                    l.position = new;
                    w.layers += 1;
                }
            }
        }
        if let Some(k) = x[extras::CLAN_KEY]["index"].as_u64() {
            if let Some(c) = w.mission.clans.get_mut(k as usize) {
                let new = [0, 1].map(|a| keep_or(c.base[a], t[a], 1e-6));
                if new != c.base {
                    c.base = new;
                    w.layers += 1;
                }
            }
        }
        if x[extras::ROUTE_KEY].is_object() && !world.abs_diff_eq(DMat4::IDENTITY, 1e-6) {
            w.warnings.push(format!(
                "{name}: a moved route is not written (route points are taken from the base)"
            ));
        }
    }
}
