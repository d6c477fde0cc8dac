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
//! - Added: a node carrying `extras.parkan_asset` (from the game's asset
//!   library) is a new object appended after the copies
//!   ([`super::assets`]).
//! - The `clan` word and the `ClanID` property, the `logical_id` and the
//!   `LogicalID` property move together.
//! - Lodes, clan bases (x and y), zone centres and route points follow
//!   their nodes ([`super::layers`]); a base clan's name, type, relation
//!   words, minds, raw id, script and tree follow its empty's extras
//!   ([`super::clan_edits`]: a rename renames it in every relation list);
//!   the map path and the description come from the base.
//! - New clans (a clan node without `index`, [`super::layers::new_clans`])
//!   are appended first; an object whose node names another owner
//!   ([`super::owners::OWNER_KEY`], its clan collection in Blender) changes
//!   its `clan` word and `ClanID` together (issue 37 item 4).
//! - What `data.tma` cannot hold is a warning naming it and saying where
//!   to edit it instead ([`super::shapes`]): the terrain moved or
//!   reshaped, a piece moved inside a placed model, a model's mesh
//!   reshaped, a clan empty moved vertically; and anything else that draws
//!   (a mesh node outside every placed object, route, clan, lode, zone and
//!   the terrain): `data.tma` places the game's models by name only.
//! - Read strictly (issue 36 item 7): an extras value of the wrong type is
//!   an error naming its JSON pointer, never read as absent; the hierarchy
//!   must be a forest; `conventions.up` must be the export's.

use glam::{DMat4, DQuat, DVec3, EulerRot};
use serde_json::Value;

use super::extras::{self, get_string};
use super::ir::{Mission, PlacedObject, Property};
use super::{layers, owners, shapes, MissionError};
use crate::convention::Up;
use crate::gltf_import::matching::local_matrix;
use crate::gltf_import::read::refs;
use crate::gltf_import::GltfFile;

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
    /// Lodes, clan bases, zones and routes moved.
    pub layers: usize,
    /// Clans of the base whose other fields (name, type, relations,
    /// minds, raw id, script, tree) were edited ([`super::clan_edits`]).
    pub clans: usize,
    /// The clans renamed: (index, the base's name), so an owner naming
    /// the old name still resolves ([`super::owners::owner_of`]).
    pub renamed: Vec<(usize, Vec<u8>)>,
    /// Where each object of `mission.objects` came from (same order), for
    /// the ground rule ([`super::ground::settle`]).
    pub origins: Vec<Origin>,
}

/// Where a written object came from: its node, the base object it was
/// read from (`None`: a new object with no base record) and whether it is
/// new (a copy).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    /// The node's name.
    pub node: String,
    /// The index of the base object it was read from.
    pub base: Option<usize>,
    /// A new object (a copy, or one with no base record).
    pub new: bool,
}

pub(super) fn node_err(node: &str, detail: impl Into<String>) -> MissionError {
    MissionError::new("mission.node", Some(format!("node {node:?}")), detail)
}

static NULL: Value = Value::Null;

/// A JSON value read from the extras, with its JSON pointer (RFC 6901)
/// and the node it belongs to: a value of the wrong type is an error
/// naming both, never read as absent (issue 36 item 7).
#[derive(Clone)]
pub struct Field<'a> {
    v: &'a Value,
    ptr: String,
    node: &'a str,
}

/// At most 80 characters of `v`'s JSON text.
fn short(v: &Value) -> String {
    let t = v.to_string();
    match t.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &t[..i]),
        None => t,
    }
}

/// An integer: a JSON integer or an integral number (JSON Schema 2020-12:
/// `3.0` is the integer 3; Blender may write integer properties so).
fn integer(v: &Value) -> Option<i128> {
    if let Some(i) = v.as_i64() {
        return Some(i.into());
    }
    if let Some(u) = v.as_u64() {
        return Some(u.into());
    }
    let f = v.as_f64()?;
    (f.is_finite() && f.fract() == 0.0 && f.abs() < 1.8e19).then_some(f as i128)
}

impl<'a> Field<'a> {
    /// The value at `ptr` in node `node`.
    pub fn new(v: &'a Value, ptr: String, node: &'a str) -> Self {
        Field { v, ptr, node }
    }

    /// Its JSON pointer (`/nodes/12/extras/parkan_clan`).
    pub(super) fn pointer(&self) -> &str {
        &self.ptr
    }

    /// The name of the node it belongs to.
    pub(super) fn node(&self) -> &'a str {
        self.node
    }

    /// At most 80 characters of its JSON text, for messages.
    pub(super) fn json(&self) -> String {
        short(self.v)
    }

    /// Whether the value is absent (or JSON null).
    pub(super) fn is_null(&self) -> bool {
        self.v.is_null()
    }

    /// The value as an index, read leniently (after [`apply`] checked it).
    pub(super) fn v_index(&self) -> Option<u64> {
        self.v["index"].as_u64()
    }

    /// Whether member `key` is there (whatever its value).
    pub(super) fn has(&self, key: &str) -> bool {
        self.v.get(key).is_some()
    }

    /// Member `key` (null when absent).
    pub(super) fn at(&self, key: &str) -> Field<'a> {
        Field {
            v: self.v.get(key).unwrap_or(&NULL),
            ptr: format!("{}/{key}", self.ptr),
            node: self.node,
        }
    }

    /// The error "`ptr`: `value` is not `want`".
    pub(super) fn wrong(&self, want: &str) -> MissionError {
        let found = if self.v.is_null() {
            "missing or null".to_string()
        } else {
            short(self.v)
        };
        node_err(
            self.node,
            format!("extras {}: {found} is not {want}", self.ptr),
        )
    }

    pub(super) fn int_in(&self, lo: i128, hi: i128, want: &str) -> Result<i128, MissionError> {
        integer(self.v)
            .filter(|i| (lo..=hi).contains(i))
            .ok_or_else(|| self.wrong(want))
    }

    /// A 32-bit word (0..=4294967295).
    pub(super) fn u32(&self) -> Result<u32, MissionError> {
        self.int_in(
            0,
            u32::MAX.into(),
            "a 32-bit word (an integer 0..=4294967295)",
        )
        .map(|i| i as u32)
    }

    /// A signed 32-bit integer.
    pub(super) fn i32(&self) -> Result<i32, MissionError> {
        self.int_in(
            i32::MIN.into(),
            i32::MAX.into(),
            "a signed 32-bit integer (-2147483648..=2147483647)",
        )
        .map(|i| i as i32)
    }

    /// An index below `len` (`what`: "of the base's 37 objects").
    pub(super) fn index(&self, len: usize, what: &str) -> Result<usize, MissionError> {
        let hi = (len as i128) - 1;
        self.int_in(0, hi, &format!("an index {what}"))
            .map(|i| i as usize)
    }

    /// A finite number.
    fn number(&self) -> Result<f64, MissionError> {
        self.v
            .as_f64()
            .filter(|f| f.is_finite())
            .ok_or_else(|| self.wrong("a finite number"))
    }

    /// An array (of exactly `n` elements when given).
    pub(super) fn array(&self, n: Option<usize>) -> Result<Vec<Field<'a>>, MissionError> {
        let a = self.v.as_array().filter(|a| n.is_none_or(|n| a.len() == n));
        let Some(a) = a else {
            return Err(self.wrong(&match n {
                Some(n) => format!("an array of {n}"),
                None => "an array".into(),
            }));
        };
        Ok(a.iter()
            .enumerate()
            .map(|(k, v)| Field {
                v,
                ptr: format!("{}/{k}", self.ptr),
                node: self.node,
            })
            .collect())
    }

    /// `n` finite numbers.
    fn numbers(&self, n: usize) -> Result<Vec<f64>, MissionError> {
        self.array(Some(n))?.iter().map(Field::number).collect()
    }

    /// An object.
    pub(super) fn object(&self) -> Result<&'a Value, MissionError> {
        if self.v.is_object() {
            Ok(self.v)
        } else {
            Err(self.wrong("an object"))
        }
    }

    /// String field `key` ([`extras::get_string`]'s rule): `key_b64` when
    /// it is not null, else the text; either of the wrong type is an error.
    pub(super) fn string(&self, key: &str) -> Result<Vec<u8>, MissionError> {
        let b = self.at(&format!("{key}_b64"));
        if !b.v.is_null() {
            return b
                .v
                .as_str()
                .and_then(extras::b64_decode)
                .ok_or_else(|| b.wrong("base64 text"));
        }
        let t = self.at(key);
        get_string(self.v, key)
            .ok_or_else(|| t.wrong("Windows-1251 text (or null with the bytes in its _b64)"))
    }
}

/// The `gltf.json` error of a reference of the wrong type
/// ([`refs`]) as a mission error.
fn gltf_err(e: crate::gltf_import::ImportError) -> MissionError {
    MissionError::new(e.rule, None, e.detail)
}

/// The default scene of the mission document `doc`
/// ([`refs::default_scene`]: `/scene`, else 0).
///
/// # Errors
/// `gltf.json` naming `/scene` when it is there and not a scene index.
pub(super) fn default_scene(doc: &Value) -> Result<usize, MissionError> {
    let scenes = doc["scenes"].as_array().map_or(0, Vec::len);
    refs::default_scene(doc, scenes).map_err(gltf_err)
}

/// The root nodes of `doc`'s default scene, as indices of its `nodes`
/// nodes (none without scenes).
///
/// # Errors
/// `gltf.json` naming `/scene`, or `/scenes/{s}/nodes[/k]` when it is not
/// an array of node indices.
fn scene_roots(doc: &Value, nodes: usize) -> Result<Vec<usize>, MissionError> {
    let scene = default_scene(doc)?;
    let at = format!("/scenes/{scene}/nodes");
    refs::node_list(doc["scenes"][scene].get("nodes"), &at, nodes).map_err(gltf_err)
}

/// The children of node `i` of `nodes`.
///
/// # Errors
/// `gltf.json` naming `/nodes/{i}/children[/k]` when they are not an
/// array of node indices.
pub(super) fn node_children(nodes: &[Value], i: usize) -> Result<Vec<usize>, MissionError> {
    let at = format!("/nodes/{i}/children");
    refs::node_list(nodes[i].get("children"), &at, nodes.len()).map_err(gltf_err)
}

/// The mesh of node `i` of `doc` (`None`: it has none).
///
/// # Errors
/// `gltf.json` naming `/nodes/{i}/mesh` when it is not a mesh index.
pub(super) fn node_mesh(doc: &Value, i: usize) -> Result<Option<usize>, MissionError> {
    let meshes = doc["meshes"].as_array().map_or(0, Vec::len);
    let at = format!("/nodes/{i}/mesh");
    refs::index_at(doc["nodes"][i].get("mesh"), &at, meshes, "meshes").map_err(gltf_err)
}

/// The `POSITION` accessor of each primitive of mesh `m` of `doc` (`None`
/// for a primitive without one), with its JSON pointer.
///
/// # Errors
/// `gltf.json` naming `/meshes/{m}/primitives` when it is not an array, or
/// a `POSITION` that is not an accessor index.
pub(super) fn mesh_positions(
    doc: &Value,
    m: usize,
) -> Result<Vec<(Option<usize>, String)>, MissionError> {
    let accessors = doc["accessors"].as_array().map_or(0, Vec::len);
    let prims = match doc["meshes"][m].get("primitives") {
        None => &[][..],
        Some(Value::Array(a)) => a.as_slice(),
        Some(v) => {
            return Err(MissionError::new(
                "gltf.json",
                None,
                format!("/meshes/{m}/primitives: {} is not an array", short(v)),
            ))
        }
    };
    prims
        .iter()
        .enumerate()
        .map(|(k, p)| {
            let at = format!("/meshes/{m}/primitives/{k}/attributes/POSITION");
            let a = p.get("attributes").and_then(|a| a.get("POSITION"));
            let a = refs::index_at(a, &at, accessors, "accessors").map_err(gltf_err)?;
            Ok((a, at))
        })
        .collect()
}

/// The reachable nodes of the scene, with their world matrices, after
/// checking the hierarchy is a forest (`gltf.hierarchy`: a child that is
/// not a node index, a node with two parents, a cycle, a scene root that
/// is a child) and every node's transform is numbers (`gltf.json`; a
/// `/scene`, scene root or child that is not an index, naming its
/// pointer, never skipped).
pub(super) fn scene_nodes(
    file: &GltfFile,
    doc: &Value,
) -> Result<Vec<(usize, DMat4)>, MissionError> {
    crate::gltf_import::matching::parents(file)
        .map_err(|e| MissionError::new(e.rule, None, e.detail))?;
    let nodes = doc["nodes"].as_array().map_or(&[][..], Vec::as_slice);
    for (i, n) in nodes.iter().enumerate() {
        for (key, len) in [
            ("translation", 3),
            ("rotation", 4),
            ("scale", 3),
            ("matrix", 16),
        ] {
            let Some(v) = n.get(key) else { continue };
            let ok = v.as_array().is_some_and(|a| {
                a.len() == len && a.iter().all(|x| x.as_f64().is_some_and(f64::is_finite))
            });
            if !ok {
                return Err(MissionError::new(
                    "gltf.json",
                    Some(format!("node {:?}", n["name"].as_str().unwrap_or(""))),
                    format!("/nodes/{i}/{key}: {} is not {len} finite numbers", short(v)),
                ));
            }
        }
    }
    let mut stack: Vec<(usize, DMat4)> = scene_roots(doc, nodes.len())?
        .into_iter()
        .map(|r| (r, DMat4::IDENTITY))
        .collect();
    let mut seen = vec![false; nodes.len()];
    let mut out = Vec::new();
    while let Some((i, parent)) = stack.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        let w = parent * local_matrix(&nodes[i]);
        stack.extend(node_children(nodes, i)?.into_iter().map(|c| (c, w)));
        out.push((i, w));
    }
    out.sort_by_key(|(i, _)| *i);
    Ok(out)
}

/// The `f32_bits` of a placed object: position, rotation, scale.
fn bits3(x: &Field<'_>) -> Result<[[f32; 3]; 3], MissionError> {
    let mut out = [[0.0; 3]; 3];
    let b = x.at("f32_bits");
    b.object()?;
    for (k, key) in ["position", "rotation", "scale"].iter().enumerate() {
        for (a, f) in b.at(key).array(Some(3))?.iter().enumerate() {
            out[k][a] = f32::from_bits(f.u32()?);
        }
    }
    Ok(out)
}

/// Every raw field of a placed object from its extras `x` (§8.3).
///
/// # Errors
/// `mission.node` naming the node and the JSON pointer of the field that
/// is missing or not of its type (a word above 2^32 − 1, a property list
/// that is not an array, ...): never read as absent (issue 36 item 7).
pub fn object_from_extras(x: &Field<'_>) -> Result<PlacedObject, MissionError> {
    x.object()?;
    let [position, rotation, scale] = bits3(x)?;
    let properties = properties_from_extras(&x.at("properties"))?;
    Ok(PlacedObject {
        kind: x.at("kind").u32()?,
        marker: x.at("marker").u32()?,
        path: x.string("path")?,
        clan: x.at("clan").i32()?,
        logical_id: x.at("logical_id").i32()?,
        position,
        rotation,
        scale,
        instance_name: x.string("instance_name")?,
        start_flag: x.at("start_flag").u32()?,
        host: x.at("host").i32()?,
        vertex: x.at("vertex").i32()?,
        property_word: x.at("property_word").u32()?,
        properties,
    })
}

/// A property list of the extras (`[{"name", "type", "words": [value,
/// minimum, maximum]}, ...]`, §8.3), in order, duplicates kept.
///
/// # Errors
/// `mission.node` naming the JSON pointer of what is not of its type.
pub(super) fn properties_from_extras(list: &Field<'_>) -> Result<Vec<Property>, MissionError> {
    let mut properties = Vec::new();
    for p in list.array(None)? {
        p.object()?;
        let words = p.at("words").array(Some(3))?;
        properties.push(Property {
            kind: p.at("type").u32()?,
            value: words[0].u32()?,
            minimum: words[1].u32()?,
            maximum: words[2].u32()?,
            name: p.string("name")?,
        });
    }
    Ok(properties)
}

/// What the exporter showed of an object (`extras.parkan_object.shown`):
/// translation, rotation (x, y, z, w), scale, and whether the unit stood
/// at its host's hall-way vertex.
pub(super) struct Shown {
    pub(super) translation: DVec3,
    pub(super) rotation: DQuat,
    pub(super) scale: DVec3,
    pub(super) hosted: bool,
}

fn shown_of(x: &Field<'_>) -> Result<Shown, MissionError> {
    let s = x.at("shown");
    s.object()?;
    let t = s.at("translation").numbers(3)?;
    let r = s.at("rotation").numbers(4)?;
    let sc = s.at("scale").numbers(3)?;
    let h = s.at("hosted");
    let hosted = crate::gltf_import::read::extra_bool(h.v).ok_or_else(|| h.wrong("a boolean"))?;
    Ok(Shown {
        translation: DVec3::from_slice(&t),
        rotation: DQuat::from_xyzw(r[0], r[1], r[2], r[3]),
        scale: DVec3::from_slice(&sc),
        hosted,
    })
}

/// `new` where it differs from `old` by more than `tol` (relative to
/// `old`, at least `tol`), else `old` (its bits kept).
pub(super) fn keep_or(old: f32, new: f64, tol: f64) -> f32 {
    if (new - f64::from(old)).abs() <= tol * f64::from(old).abs().max(1.0) {
        old
    } else {
        new as f32
    }
}

pub(super) fn to_game(up: Up, v: DVec3) -> [f64; 3] {
    match up {
        Up::Y => [v.x, -v.z, v.y],
        Up::Z => [v.x, v.y, v.z],
    }
}

/// Applies the node's world transform `w` to `o` where it differs from
/// `shown` (what the exporter wrote); returns true when something was
/// written. Differences that cannot be written are warnings.
pub(super) fn apply_transform(
    o: &mut PlacedObject,
    w: &DMat4,
    shown: &Shown,
    up: Up,
    node: &str,
    warnings: &mut Vec<String>,
) -> Result<bool, MissionError> {
    let (s, r, t) = w.to_scale_rotation_translation();
    if !(s.is_finite() && r.is_finite() && t.is_finite()) {
        return Err(node_err(node, "its transform is not finite"));
    }
    let moved = (t - shown.translation).abs().max_element() > 1e-3;
    let turned = r.angle_between(shown.rotation.normalize()) > 1e-5;
    let scaled = (s - shown.scale).abs().max_element() > 1e-5;
    let hosted = o.host != -1 || o.vertex != -1;
    let mut changed = false;
    if hosted && (moved || turned) {
        warnings.push(format!(
            "{node}: a unit inside a building stands at its hall-way vertex, unturned: the move or turn is not written (set host and vertex to -1 in its extras to place it freely)"
        ));
    } else {
        if moved || (shown.hosted && !hosted) {
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
pub(super) fn sync_ids(o: &mut PlacedObject, old_clan: i32, old_id: i32) {
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

/// Spends what the write-back reads of `file` from a budget of
/// `max_work` units ([`crate::limits`]): every node, and every primitive
/// and position of each mesh once (a mission's meshes are shared by their
/// copies and read once). A mission is not a model: the model's triangle
/// cap does not apply (issue 36 item 4).
///
/// # Errors
/// `limits.work` over the budget.
pub fn check_budget(file: &GltfFile, max_work: u64) -> Result<(), MissionError> {
    use crate::limits::{Budget, BYTES_PER_UNIT, UNITS_PER_IMPORTED_PRIMITIVE, UNITS_PER_NODE};
    let (mut prims, mut bytes) = (0u64, 0u64);
    for m in file.meshes() {
        for p in m
            .get("primitives")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            prims = prims.saturating_add(1);
            let count = p["attributes"]["POSITION"]
                .as_u64()
                .and_then(|a| file.accessor_def(a as usize).ok())
                .and_then(|a| a.get("count").and_then(Value::as_u64))
                .unwrap_or(0);
            bytes = bytes.saturating_add(count.saturating_mul(12));
        }
    }
    let nodes = file.nodes().len() as u64;
    let units = nodes
        .saturating_mul(UNITS_PER_NODE)
        .saturating_add(prims.saturating_mul(UNITS_PER_IMPORTED_PRIMITIVE))
        .saturating_add(bytes / BYTES_PER_UNIT);
    Budget::new(max_work)
        .spend(
            units,
            &format!(
                "{nodes} nodes, {prims} primitives and {bytes} position bytes of the mission scene"
            ),
        )
        .map_err(|d| MissionError::new("limits.work", None, d))
}

/// The up axis the scene says it was exported with
/// (`extras.parkan_mission.conventions.up`: `"y"` or `"z"`).
///
/// # Errors
/// `mission.gltf` when the scene has no `extras.parkan_mission` object;
/// `gltf.json` naming the pointer when `conventions.up` is not `"y"` or
/// `"z"`.
pub fn conventions_up(doc: &Value) -> Result<Up, MissionError> {
    let scene = default_scene(doc)?;
    let x = &doc["scenes"][scene]["extras"][extras::MISSION_KEY];
    if !x.is_object() {
        return Err(MissionError::new(
            "mission.gltf",
            None,
            "the scene has no extras.parkan_mission object: not a mission exported by msh2gltf",
        ));
    }
    let v = &x["conventions"]["up"];
    match v.as_str() {
        Some("y") => Ok(Up::Y),
        Some("z") => Ok(Up::Z),
        _ => Err(MissionError::new(
            "gltf.json",
            Some("scene extras".into()),
            format!(
                "/scenes/{scene}/extras/{}/conventions/up: {} is not \"y\" or \"z\"",
                extras::MISSION_KEY,
                short(v)
            ),
        )),
    }
}

/// How deep a mission extras value may nest: the exporter's are at most 4
/// deep (an object's property words).
pub const MAX_DEPTH: usize = 16;

/// True when `v` nests deeper than [`MAX_DEPTH`] (counted without
/// recursion, stopping at the first value past it).
fn too_deep(v: &Value) -> bool {
    let mut stack = vec![(v, 1usize)];
    while let Some((v, d)) = stack.pop() {
        if d > MAX_DEPTH {
            return true;
        }
        match v {
            Value::Array(a) => stack.extend(a.iter().map(|x| (x, d + 1))),
            Value::Object(o) => stack.extend(o.values().map(|x| (x, d + 1))),
            _ => {}
        }
    }
    false
}

/// Every mission key a node's extras hold ([`extras::NODE_KEYS`]) is an
/// object: one of another type is an error naming the pointer (never read
/// as "no such node", which would delete the object).
fn keyed_extras(doc: &Value) -> Result<(), MissionError> {
    for (i, n) in doc["nodes"].as_array().into_iter().flatten().enumerate() {
        // A name tells an original from its copies and a piece from
        // another: one of the wrong type is never read as "".
        let name = match n.get("name") {
            None => "",
            Some(Value::String(s)) => s.as_str(),
            Some(v) => {
                return Err(MissionError::new(
                    "gltf.json",
                    None,
                    format!("/nodes/{i}/name: {} is not a string", short(v)),
                ))
            }
        };
        if n.get("extras").is_some_and(Value::is_null) {
            // What the reader could not make a tree of (nested past the
            // JSON reader's depth) reads as null: never as "no extras",
            // which would delete a placed object.
            return Err(node_err(
                name,
                format!("extras /nodes/{i}/extras: null or unreadable (nested too deep?): not a node's extras; nothing written"),
            ));
        }
        for key in extras::NODE_KEYS {
            let Some(v) = n["extras"].get(key) else {
                continue;
            };
            if v.is_string() {
                return Err(node_err(
                    name,
                    format!("extras {key} is text, not an object (Blender 3.4's glTF exporter writes a nested custom property as its Python text): nothing written; re-encode it as JSON before gltf2msh"),
                ));
            }
            let f = Field::new(v, format!("/nodes/{i}/extras/{key}"), name);
            if !v.is_object() {
                return Err(f.wrong("an object"));
            }
            if too_deep(v) {
                return Err(f.wrong(&format!("an object nested at most {MAX_DEPTH} deep")));
            }
        }
    }
    Ok(())
}

/// A forged `conventions.up` would "move" every object and lode: the
/// objects' `shown.translation` and the lodes' translations are where the
/// declared axes put the base's values, or the convention is refused.
///
/// # Errors
/// `gltf.json` naming `conventions.up` when none of them stands where the
/// declared axes put it and some stand where the other axes do.
fn check_up(
    doc: &Value,
    nodes: &[(usize, DMat4)],
    base: &Mission,
    up: Up,
) -> Result<(), MissionError> {
    let other = match up {
        Up::Y => Up::Z,
        Up::Z => Up::Y,
    };
    let same = |a: [f32; 3], b: &Value| (0..3).all(|k| b[k].as_f64() == Some(f64::from(a[k])));
    let (mut fit, mut fit_other) = (0usize, 0usize);
    for (i, _) in nodes {
        let n = &doc["nodes"][*i];
        let x = &n["extras"][extras::OBJECT_KEY];
        let lode = &n["extras"][extras::LODE_KEY];
        let (at, shown): ([[f32; 3]; 2], &Value) = if let Some(b) = x["index"]
            .as_u64()
            .and_then(|k| base.objects.get(k as usize))
            .filter(|_| x["shown"]["hosted"] == false)
        {
            let at = |u: Up| {
                let t = super::gltf::placement(u, b).0;
                [t.x as f32, t.y as f32, t.z as f32]
            };
            ([at(up), at(other)], &x["shown"]["translation"])
        } else if let Some(l) = lode["index"]
            .as_u64()
            .and_then(|k| base.lodes.get(k as usize))
        {
            let at = |u: Up| crate::convention::axes::vec3(u, l.position);
            ([at(up), at(other)], &n["translation"])
        } else {
            continue;
        };
        if same(at[0], shown) {
            fit += 1;
        } else if same(at[1], shown) {
            fit_other += 1;
        }
    }
    if fit == 0 && fit_other > 0 {
        let scene = default_scene(doc)?;
        return Err(MissionError::new(
            "gltf.json",
            Some("scene extras".into()),
            format!(
                "/scenes/{scene}/extras/{}/conventions/up: says {up:?} up, but {fit_other} placed objects and lodes stand where the other up axis puts them and none where {up:?} does: the convention is not the export's; nothing written",
                extras::MISSION_KEY
            ),
        ));
    }
    Ok(())
}

/// The mission `file` (a glTF exported from `base` by [`super::gltf`])
/// describes, written over `base` (module docs). `reference` is the
/// scene msh2gltf makes of `base` with the same up axis: what the user
/// started from, for what the extras do not record (the ground height of
/// a clan empty, a zone's place, the terrain, the pieces and meshes of
/// every placed model).
///
/// # Errors
/// `mission.gltf` when the scene has no `extras.parkan_mission`;
/// `gltf.json` (a node transform that is not numbers, a forged
/// `conventions.up`) and `gltf.hierarchy` (a child that is not a node, two
/// parents, a cycle); `mission.node` naming the node and the JSON pointer
/// of an extras value of the wrong type or out of range, an index the
/// base does not have, or a transform that is not finite.
pub fn apply(
    file: &GltfFile,
    base: &Mission,
    reference: &GltfFile,
) -> Result<Written, MissionError> {
    let doc = file.to_json();
    let up = conventions_up(&doc)?;
    let nodes = scene_nodes(file, &doc)?;
    keyed_extras(&doc)?;
    check_up(&doc, &nodes, base, up)?;
    let mut w = Written {
        mission: base.clone(),
        ..Default::default()
    };
    let user = layers::Scene {
        doc: &doc,
        file,
        nodes: &nodes,
        up,
    };
    // The base clans' edits, then new clans: the objects' owners resolve
    // against the clans as written (mission::owners).
    super::clan_edits::apply(&user, &mut w)?;
    layers::new_clans(&user, &mut w)?;
    placed_objects(&doc, &nodes, base, up, &mut w)?;
    let rdoc = reference.to_json();
    let rnodes = scene_nodes(reference, &rdoc)?;
    let shown = layers::Scene {
        doc: &rdoc,
        file: reference,
        nodes: &rnodes,
        up,
    };
    layers::apply(&user, &shown, &mut w)?;
    shapes::compare(&user, &shown, &mut w)?;
    // New objects from the asset library (nodes with extras.parkan_asset),
    // owned by the clans as written (after the layers).
    super::assets::add_assets(&doc, &nodes, up, &mut w)?;
    w.warnings.extend(foreign_nodes(&doc)?.into_iter().map(|name| {
        format!(
            "{name}: not a placed object of the mission (no extras.{}): not written; data.tma places the game's models by name, so to add a building, unit, tree or rock drag one in from the game's asset library (or duplicate a placed one of that model, Shift+D) and move it",
            extras::OBJECT_KEY
        )
    }));
    Ok(w)
}

/// The placed objects of the scene (module docs: moved, turned, rescaled,
/// deleted, copied, fields edited) into `w.mission.objects`.
fn placed_objects(
    doc: &Value,
    nodes: &[(usize, DMat4)],
    base: &Mission,
    up: Up,
    w: &mut Written,
) -> Result<(), MissionError> {
    let name_of = |i: usize| doc["nodes"][i]["name"].as_str().unwrap_or("");
    let mut placed: Vec<(usize, &DMat4)> = nodes
        .iter()
        .filter(|(i, _)| doc["nodes"][*i]["extras"].get(extras::OBJECT_KEY).is_some())
        .map(|(i, w)| (*i, w))
        .collect();
    // The original of an object is its node with the shortest name
    // (copies get Blender's ".001"), then the first.
    placed.sort_by_key(|(i, _)| (name_of(*i).len(), *i));
    let mut originals: Vec<Option<PlacedObject>> = vec![None; base.objects.len()];
    let mut names = vec![String::new(); base.objects.len()];
    let mut copies = Vec::new();
    for (i, world) in placed {
        let name = name_of(i);
        let x = Field::new(
            &doc["nodes"][i]["extras"][extras::OBJECT_KEY],
            format!("/nodes/{i}/extras/{}", extras::OBJECT_KEY),
            name,
        );
        let mut o = object_from_extras(&x)?;
        let index = x.at("index").index(
            base.objects.len(),
            &format!("of the base's {} objects", base.objects.len()),
        )?;
        let shown = shown_of(&x)?;
        let b = &base.objects[index];
        sync_ids(&mut o, b.clan, b.logical_id);
        // The clan collection it sits in (parkan_owner) moves the clan
        // word and ClanID together.
        let ptr = format!("/nodes/{i}/extras");
        let ex = &doc["nodes"][i]["extras"];
        let clans = (&w.mission.clans[..], &w.renamed[..]);
        owners::apply_owner(&mut o, b.clan, ex, &ptr, name, clans, &mut w.warnings)?;
        // Its fields before the move: "edited" counts the other fields only.
        let fields_edited = o != *b;
        let moved = apply_transform(&mut o, world, &shown, up, name, &mut w.warnings)?;
        match &originals[index] {
            None => {
                w.moved += usize::from(moved);
                w.edited += usize::from(fields_edited);
                originals[index] = Some(o);
                names[index] = name.to_string();
            }
            // A copy counts once, as added (its place is its own).
            Some(_) => copies.push((i, name.to_string(), index, o)),
        }
    }
    add_copies(w, &originals, copies);
    w.deleted = originals.iter().filter(|o| o.is_none()).count();
    let mut origins: Vec<Origin> = (0..originals.len())
        .filter(|&k| originals[k].is_some())
        .map(|k| Origin {
            node: std::mem::take(&mut names[k]),
            base: Some(k),
            new: false,
        })
        .collect();
    origins.append(&mut w.origins);
    w.origins = origins;
    let mut objects: Vec<PlacedObject> = originals.into_iter().flatten().collect();
    objects.append(&mut w.mission.objects);
    w.mission.objects = objects;
    Ok(())
}

/// The names of the scene's additions that `data.tma` cannot hold: each
/// topmost node that draws something (a mesh in its subtree) and is
/// neither one of the mission's nodes ([`extras::NODE_KEYS`], with what is
/// under them) nor a group holding some (the mission and kind groups).
/// Iterative (no recursion on a deep hierarchy); each node visited once.
///
/// # Errors
/// `gltf.json` naming `/scene`, a scene root or a child that is not an
/// index ([`scene_roots`], [`node_children`]).
fn foreign_nodes(doc: &Value) -> Result<Vec<String>, MissionError> {
    let nodes = doc["nodes"].as_array().map_or(&[][..], Vec::as_slice);
    let kids = (0..nodes.len())
        .map(|i| node_children(nodes, i))
        .collect::<Result<Vec<_>, _>>()?;
    let children = |i: usize| kids[i].iter().copied();
    let keyed = |i: usize| {
        extras::NODE_KEYS
            .iter()
            .any(|k| nodes[i]["extras"][*k].is_object())
    };
    let roots = scene_roots(doc, nodes.len())?;
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
    Ok(out)
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
    w.origins.clear();
    for (_, name, index, mut o) in copies {
        w.origins.push(Origin {
            node: name.clone(),
            base: Some(index),
            new: true,
        });
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
