//! Assembled units (unit-files-notes §3.3–§3.5): a `.dat` component tree
//! resolved through `objects.rlb` and the part archives, each mounted part
//! converted with its own control points and clips, then merged into one
//! glTF scene the way the engine merges parts (§3.4): every mounted part's
//! node 0 is dropped and its children hang on the parent part's socket
//! node with their own local poses; a control point on node 0 means the
//! socket. Every node carries `extras.msh.part` (part index, record,
//! display name, class); the scene carries `extras.msh.unit`, which makes
//! `gltf2msh` refuse the file and name the parts to edit instead.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::bytes::trim_name;
use super::dat::{self, UnitFile};
use super::hallway::{self, Hallway};
use super::{pipeline, siblings, UnitError};
use crate::convert::{self, ConvertError, ConvertErrorKind, ConvertOptions, Converted, ModelRef};
use crate::gltf_export::{ExportError, Exported, Namer};
use crate::material::Libraries;
use crate::source::SharedFiles;
use crate::{nres, source};

/// The registry (unit-files-notes §3.3).
pub const REGISTRY: &str = "objects.rlb";
pub use crate::gltf_export::msh_extras::UNIT_KEY;

pub use crate::source::is_unit_file;

/// The folder holding `objects.rlb` at or above the unit file's folder
/// (`UNITS/<class>/x.dat` → the game folder), at most four levels up.
pub fn game_dir(unit_path: &Path) -> Option<PathBuf> {
    game_dir_with(unit_path, &SharedFiles::default())
}

/// [`game_dir`] with the unit file's folder resolved through the run's
/// shared inputs `files` ([`SharedFiles::canonical_file`]: once per
/// folder, not once per unit; issue 28 item 2).
pub fn game_dir_with(unit_path: &Path, files: &SharedFiles) -> Option<PathBuf> {
    let mut dir = files.canonical_file(unit_path)?.parent()?.to_path_buf();
    for _ in 0..4 {
        if find_file(&dir, REGISTRY).is_some() {
            return Some(dir);
        }
        dir = dir.parent()?.to_path_buf();
    }
    None
}

/// `dir/name`, matched case-insensitively ([`source::find_any_case`]: ASCII
/// case, folders skipped, one name chosen the same way every time); `None`
/// also when `dir` cannot be listed.
pub fn find_file(dir: &Path, name: &str) -> Option<PathBuf> {
    source::find_any_case(dir, &[name]).ok().flatten()
}

/// The `(archive, member)` slots of every `objects.rlb` record, by
/// lower-case record name (§3.3: runs of 64-byte slots).
pub struct Registry {
    records: HashMap<String, Vec<(String, String)>>,
}

impl Registry {
    /// Reads `objects.rlb`.
    ///
    /// # Errors
    /// `unit.registry` when it is not an NRes or a record is not a whole
    /// number of 64-byte slots.
    pub fn read(data: &[u8]) -> Result<Registry, UnitError> {
        Self::read_within(data, crate::limits::DEFAULT_MAX_WORK)
    }

    /// [`Registry::read`] under a work budget of `max_work` units: the
    /// slots of every record are counted from the records' sizes
    /// ([`crate::limits::UNITS_PER_REGISTRY_SLOT`] each) before any is
    /// decoded.
    ///
    /// # Errors
    /// `limits.work` naming the count and the budget; those of
    /// [`Registry::read`].
    pub fn read_within(data: &[u8], max_work: u64) -> Result<Registry, UnitError> {
        let a = nres::read(data, nres::Mode::Tolerant)
            .map_err(|e| UnitError::new("unit.registry", e.to_string()))?;
        let slots = a
            .entries
            .iter()
            .map(|e| (e.data.len() / 64) as u64)
            .fold(0u64, u64::saturating_add);
        let units = slots.saturating_mul(crate::limits::UNITS_PER_REGISTRY_SLOT);
        if units > max_work {
            return Err(UnitError::new(
                "limits.work",
                format!(
                    "{REGISTRY}: {} records hold {slots} slots: {units} work units, over the budget of {max_work} (docs/safety.md \"Bounded work\"; raise it with --max-work)",
                    a.entries.len()
                ),
            ));
        }
        let mut records = HashMap::new();
        for e in &a.entries {
            let name = source::decode_name(e.name);
            if e.data.len() % 64 != 0 {
                return Err(UnitError::new(
                    "unit.registry",
                    format!(
                        "record {name:?}: {} bytes, not whole 64-byte slots",
                        e.data.len()
                    ),
                ));
            }
            let slots = e
                .data
                .chunks_exact(64)
                .map(|s| {
                    let d = |b: &[u8]| source::decode_name(trim_name(b));
                    (d(&s[..32]), d(&s[32..]))
                })
                .collect();
            records.insert(name.to_lowercase(), slots);
        }
        Ok(Registry { records })
    }

    /// The `(archive, entry)` of record `record`'s member ending in `.ext`
    /// (§3.3: members are found by suffix).
    pub fn member(&self, record: &str, ext: &str) -> Option<(String, String)> {
        let want = format!(".{ext}");
        self.records
            .get(&record.to_lowercase())?
            .iter()
            .find(|(_, m)| m.to_lowercase().ends_with(&want))
            .cloned()
    }

    /// The `(archive, entry)` of record `record`'s mesh and the records
    /// walked to reach it (mission-notes §4.3, unit-files-notes §3.3): the
    /// record's own first `.msh` member, else the mesh of the record that
    /// one of its slots names (a member with no extension, or archive
    /// `objects.rlb`: a `FORT` building's agent record), at most
    /// [`AGENT_HOPS`] hops, never revisiting a record.
    ///
    /// # Errors
    /// `unit.resolve` naming the chain walked when no `.msh` is reached
    /// (no such record, no mesh slot, a cycle, or too many hops).
    pub fn mesh_of(&self, record: &str) -> Result<MeshRef, UnitError> {
        let mut via = vec![record.to_string()];
        let mut at = record.to_lowercase();
        for _ in 0..=AGENT_HOPS {
            let Some(slots) = self.records.get(&at) else {
                return Err(resolve_error(&via, "is not a record"));
            };
            if let Some((archive, entry)) = self.member(&at, "msh") {
                return Ok(MeshRef {
                    archive,
                    entry,
                    via,
                });
            }
            let next = slots.iter().find(|(a, m)| {
                !m.is_empty() && (a.eq_ignore_ascii_case(REGISTRY) || !m.contains('.'))
            });
            let Some((_, next)) = next else {
                return Err(resolve_error(
                    &via,
                    "has no .msh member and names no agent record",
                ));
            };
            if via.iter().any(|v| v.eq_ignore_ascii_case(next)) {
                return Err(resolve_error(
                    &via,
                    &format!("names {next:?} again (a cycle)"),
                ));
            }
            via.push(next.clone());
            at = next.to_lowercase();
        }
        Err(resolve_error(
            &via,
            &format!("reaches no .msh within {AGENT_HOPS} hops"),
        ))
    }
}

/// How many records [`Registry::mesh_of`] follows past the first
/// (mission-notes §4.3: OP follows up to 3).
pub const AGENT_HOPS: usize = 3;

/// A record's mesh as [`Registry::mesh_of`] resolves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MeshRef {
    /// Part archive (`fortif.rlb`).
    pub archive: String,
    /// The `.msh` entry (`fr_fact_17.msh`).
    pub entry: String,
    /// The records walked, the component's own first (`["fr_fact_17_f",
    /// "fr_fact_17_ag"]`); one name when the record names its mesh itself.
    pub via: Vec<String>,
}

fn resolve_error(via: &[String], what: &str) -> UnitError {
    let last = via.last().map_or("", String::as_str);
    let chain = if via.len() > 1 {
        format!(" (reached through {})", via.join(" -> "))
    } else {
        String::new()
    };
    UnitError::new(
        "unit.resolve",
        format!("record {last:?}{chain} {what} in {REGISTRY}"),
    )
}

/// One mounted part of a unit.
#[derive(Debug, Clone)]
pub struct Part {
    /// The `.dat` component index.
    pub component: usize,
    /// Record name (`e_tur_bt_96`).
    pub record: String,
    /// Display name.
    pub display: String,
    /// Component class.
    pub class: u32,
    /// Part archive (`turrets.rlb`) and mesh entry.
    pub archive: String,
    /// The `.msh` entry.
    pub mesh_entry: String,
    /// The records walked to the mesh ([`MeshRef::via`]): more than one
    /// for a building's `FORT` record reached through its agent record.
    pub via: Vec<String>,
    /// Index (in the part list) of the part it is mounted on.
    pub parent_part: Option<usize>,
    /// Node of the parent part's mesh it hangs on.
    pub socket: Option<usize>,
}

/// The mounted parts of `unit` in tree order (§3.5 step 1); components that
/// are not drawn (internal parts, armour) are reported in `warnings` and
/// left out, as are parts whose parent is not mounted.
///
/// # Errors
/// `unit.resolve` when a mounted record reaches no `.msh` member
/// ([`Registry::mesh_of`]).
pub fn mounted_parts(
    unit: &UnitFile,
    reg: &Registry,
    warnings: &mut Vec<String>,
) -> Result<Vec<Part>, UnitError> {
    let mut part_of: Vec<Option<usize>> = vec![None; unit.components.len()];
    let mut parts = Vec::new();
    for (i, c) in unit.components.iter().enumerate() {
        let record = c.record_name();
        if !c.is_mounted() {
            warnings.push(format!(
                "component {i} {record:?} (class {}): not drawn, left out",
                c.class
            ));
            continue;
        }
        let parent_part = match c.parent {
            None => None,
            Some(p) => match part_of[p] {
                Some(pp) => Some(pp),
                None => {
                    warnings.push(format!(
                        "component {i} {record:?}: its parent {p} is not mounted; left out"
                    ));
                    continue;
                }
            },
        };
        let socket = match (parent_part, usize::try_from(c.attach)) {
            (None, _) => None,
            (Some(_), Ok(s)) => Some(s),
            (Some(_), Err(_)) => {
                warnings.push(format!(
                    "component {i} {record:?} (class {}): attach {} names no node of its parent part (unit-files-notes §3.3: +68 attach is a node index, -1 only on the root); left out with the parts it carries",
                    c.class, c.attach
                ));
                continue;
            }
        };
        let mesh = reg
            .mesh_of(&record)
            .map_err(|e| UnitError::new(e.rule, format!("component {i}: {}", e.detail)))?;
        let (archive, mesh_entry, via) = (mesh.archive, mesh.entry, mesh.via);
        part_of[i] = Some(parts.len());
        parts.push(Part {
            component: i,
            record,
            display: c.display_name(),
            class: c.class,
            archive,
            mesh_entry,
            via,
            parent_part,
            socket,
        });
    }
    if parts.first().is_none_or(|p| p.parent_part.is_some()) {
        return Err(UnitError::new(
            "unit.resolve",
            "the root component is not a mounted part",
        ));
    }
    Ok(parts)
}

/// Adds `k` to the index at `v[key]` when present.
fn shift(v: &mut Value, key: &str, k: usize) {
    if let Some(x) = v.get(key).and_then(Value::as_u64) {
        v[key] = Value::from(x + k as u64);
    }
}

pub(crate) fn len(doc: &Value, key: &str) -> usize {
    doc.get(key).and_then(Value::as_array).map_or(0, Vec::len)
}

fn items<'a>(doc: &'a mut Value, key: &str) -> impl Iterator<Item = &'a mut Value> {
    doc.get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
}

/// Rebases every non-node index of part document `p` onto `m` (whose buffer
/// already holds the part's bytes at `bin_off`): views, accessors, images,
/// textures, samplers, materials and meshes (glTF 2.0 §5).
pub(crate) fn rebase_resources(m: &Value, p: &mut Value, bin_off: usize) {
    let (n_view, n_acc) = (len(m, "bufferViews"), len(m, "accessors"));
    let (n_img, n_tex, n_smp) = (len(m, "images"), len(m, "textures"), len(m, "samplers"));
    let (n_mat, n_mesh) = (len(m, "materials"), len(m, "meshes"));
    for v in items(p, "bufferViews") {
        shift(v, "byteOffset", bin_off);
        if v.get("byteOffset").is_none() {
            v["byteOffset"] = Value::from(bin_off);
        }
        v["buffer"] = Value::from(0);
    }
    for a in items(p, "accessors") {
        shift(a, "bufferView", n_view);
    }
    for i in items(p, "images") {
        shift(i, "bufferView", n_view);
    }
    for t in items(p, "textures") {
        shift(t, "source", n_img);
        shift(t, "sampler", n_smp);
    }
    for mat in items(p, "materials") {
        for key in ["normalTexture", "occlusionTexture", "emissiveTexture"] {
            if let Some(t) = mat.get_mut(key) {
                shift(t, "index", n_tex);
            }
        }
        if let Some(pbr) = mat.get_mut("pbrMetallicRoughness") {
            for key in ["baseColorTexture", "metallicRoughnessTexture"] {
                if let Some(t) = pbr.get_mut(key) {
                    shift(t, "index", n_tex);
                }
            }
        }
    }
    for mesh in items(p, "meshes") {
        for prim in items(mesh, "primitives") {
            if let Some(attrs) = prim.get_mut("attributes").and_then(Value::as_object_mut) {
                for a in attrs.values_mut() {
                    *a = Value::from(a.as_u64().unwrap_or(0) + n_acc as u64);
                }
            }
            shift(prim, "indices", n_acc);
            shift(prim, "material", n_mat);
        }
    }
    for an in items(p, "animations") {
        for s in items(an, "samplers") {
            shift(s, "input", n_acc);
            shift(s, "output", n_acc);
        }
    }
    for n in items(p, "nodes") {
        shift(n, "mesh", n_mesh);
    }
}

/// Appends the arrays of `p` to those of `m`.
pub(crate) fn append_arrays(m: &mut Value, p: &mut Value, keys: &[&str]) {
    for key in keys {
        if let Some(src) = p.get_mut(*key).and_then(Value::as_array_mut) {
            let src = std::mem::take(src);
            if src.is_empty() {
                continue;
            }
            match m.get_mut(*key).and_then(Value::as_array_mut) {
                Some(dst) => dst.extend(src),
                None => m[*key] = Value::from(src),
            }
        }
    }
}

/// The extras object `v.extras.msh`, created when missing.
fn msh_extras(v: &mut Value) -> &mut Value {
    if !v.get("extras").is_some_and(Value::is_object) {
        v["extras"] = json!({});
    }
    if !v["extras"].get("msh").is_some_and(Value::is_object) {
        v["extras"]["msh"] = json!({});
    }
    &mut v["extras"]["msh"]
}

/// The scene being assembled.
struct Merger {
    doc: Value,
    bin: Vec<u8>,
    namer: Namer,
    /// Animation names (a part mounted twice repeats its clip names).
    anim_namer: Namer,
    /// Per part: old glTF node → merged node (node 0 of a mounted part → its socket).
    maps: Vec<Vec<usize>>,
    warnings: Vec<String>,
}

impl Merger {
    /// Starts from the chassis (part 0), whose node 0 stays.
    fn new(part: &Part, e: Exported) -> Result<Merger, ExportError> {
        let mut doc = serde_json::to_value(&e.root)?;
        let mut namer = Namer::default();
        let n = len(&doc, "nodes");
        for node in items(&mut doc, "nodes") {
            let name = node["name"].as_str().unwrap_or("node").to_string();
            node["name"] = Value::from(namer.unique(name));
            msh_extras(node)["part"] = Value::from(0);
        }
        let mut m = Merger {
            doc,
            bin: e.bin,
            namer,
            anim_namer: Namer::default(),
            maps: vec![(0..n).collect()],
            warnings: Vec::new(),
        };
        m.tag_animations(0, &part.record, 0);
        Ok(m)
    }

    /// Prefixes the names of animations `from..` with the part's record
    /// (unique: `.1` for a part mounted twice) and tags them with the part
    /// index.
    fn tag_animations(&mut self, k: usize, record: &str, from: usize) {
        let names = &mut self.anim_namer;
        for an in items(&mut self.doc, "animations").skip(from) {
            let name = an["name"].as_str().unwrap_or("animation").to_string();
            an["name"] = Value::from(names.unique(format!("{record}/{name}")));
            msh_extras(an)["part"] = Value::from(k);
        }
    }

    /// Mounts part `k` (§3.4): node 0 dropped, its children (and its
    /// control points) on the socket, every other node rebased.
    fn mount(&mut self, k: usize, part: &Part, e: Exported) -> Result<(), ExportError> {
        let (Some(pp), Some(socket)) = (part.parent_part, part.socket) else {
            // Not mounted: an empty map keeps `maps` indexed by part.
            self.maps.push(Vec::new());
            return Ok(());
        };
        let Some(&socket_new) = self.maps.get(pp).and_then(|m| m.get(socket)) else {
            self.warnings.push(format!(
                "part {k} {:?}: socket node {socket} outside its parent part's nodes; left out",
                part.record
            ));
            self.maps.push(Vec::new());
            return Ok(());
        };
        let mut p = serde_json::to_value(&e.root)?;
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        let bin_off = self.bin.len();
        self.bin.extend_from_slice(&e.bin);
        rebase_resources(&self.doc, &mut p, bin_off);
        let base = len(&self.doc, "nodes");
        let n = len(&p, "nodes");
        let map: Vec<usize> = (0..n)
            .map(|i| if i == 0 { socket_new } else { base + i - 1 })
            .collect();
        let mut nodes: Vec<Value> = p["nodes"]
            .as_array_mut()
            .map(std::mem::take)
            .unwrap_or_default();
        let root0 = nodes.remove(0);
        if root0.get("mesh").is_some() {
            self.warnings.push(format!(
                "part {k} {:?}: node 0 has geometry, dropped with it (mounted roots carry none)",
                part.record
            ));
        }
        for node in nodes.iter_mut() {
            if let Some(ch) = node.get_mut("children").and_then(Value::as_array_mut) {
                for c in ch.iter_mut() {
                    *c = Value::from(map[c.as_u64().unwrap_or(0) as usize]);
                }
            }
            let name = node["name"].as_str().unwrap_or("node").to_string();
            node["name"] = Value::from(self.namer.unique(name));
            msh_extras(node)["part"] = Value::from(k);
        }
        let hang: Vec<Value> = root0["children"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| Value::from(map[c.as_u64().unwrap_or(0) as usize]))
            .collect();
        self.doc["nodes"]
            .as_array_mut()
            .expect("nodes")
            .extend(nodes);
        let sock = &mut self.doc["nodes"][socket_new];
        match sock.get_mut("children").and_then(Value::as_array_mut) {
            Some(c) => c.extend(hang),
            None if !hang.is_empty() => sock["children"] = Value::from(hang),
            None => {}
        }
        // Scene roots other than node 0 (points on nodes the part lacks).
        let extra_roots: Vec<Value> = p["scenes"][0]["nodes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| {
                r.as_u64()
                    .filter(|&r| r != 0)
                    .map(|r| Value::from(map[r as usize]))
            })
            .collect();
        if let Some(r) = self.doc["scenes"][0]["nodes"].as_array_mut() {
            r.extend(extra_roots);
        }
        for an in items(&mut p, "animations") {
            if let Some(chs) = an.get_mut("channels").and_then(Value::as_array_mut) {
                // The part root's pose never reaches the picture (§3.4).
                chs.retain(|c| c["target"]["node"].as_u64() != Some(0));
                for c in chs.iter_mut() {
                    let t = c["target"]["node"].as_u64().unwrap_or(0) as usize;
                    c["target"]["node"] = Value::from(map[t]);
                }
            }
        }
        if let Some(a) = p.get_mut("animations").and_then(Value::as_array_mut) {
            a.retain(|an| an["channels"].as_array().is_some_and(|c| !c.is_empty()));
        }
        let from = len(&self.doc, "animations");
        append_arrays(
            &mut self.doc,
            &mut p,
            &[
                "bufferViews",
                "accessors",
                "images",
                "textures",
                "samplers",
                "materials",
                "meshes",
                "animations",
            ],
        );
        self.tag_animations(k, &part.record, from);
        self.maps.push(map);
        Ok(())
    }
}

fn unit_err(source: &str, e: UnitError) -> ConvertError {
    ConvertError {
        source: source.to_string(),
        kind: ConvertErrorKind::Export(ExportError::Model {
            rule: e.rule,
            detail: if e.file.is_empty() {
                e.detail
            } else {
                format!("{}: {}", e.file, e.detail)
            },
        }),
    }
}

/// Converts one part: its model from its archive in `game`, with its WEAR,
/// `.cpt` and `.ctl` siblings, and its Res17 hall-way graph if it has one.
/// `files`: the run's shared inputs ([`SharedFiles`]): each archive is
/// read once however many parts and units use it (issue 28 item 1).
pub(crate) fn convert_part(
    game: &Path,
    p: &Part,
    libs: Option<&Libraries>,
    opts: &ConvertOptions,
    files: &SharedFiles,
) -> Result<(Converted, Option<Hallway>), ConvertError> {
    let src = format!("{}:{}", p.archive, p.mesh_entry);
    let path = find_file(game, &p.archive).ok_or_else(|| {
        unit_err(
            &src,
            UnitError::new(
                "unit.resolve",
                format!("no archive {} in {}", p.archive, game.display()),
            ),
        )
    })?;
    let data = files.get(&path).map_err(|e| {
        unit_err(
            &src,
            UnitError::new("io", format!("cannot read {}: {e}", path.display())),
        )
    })?;
    let a = nres::read(&data, nres::Mode::Tolerant)
        .map_err(|e| unit_err(&src, UnitError::new(e.rule, e.detail)))?;
    let i = source::find_entry(&a, &p.mesh_entry)
        .map_err(|e| unit_err(&src, UnitError::new("unit.resolve", e)))?;
    let m = ModelRef {
        source: src.clone(),
        stem: source::stem_of(&p.mesh_entry).to_string(),
        bytes: a.entries[i].data,
        wear: source::find_wear(&a, a.entries[i].name),
    };
    let mut c = convert::convert(&m, libs, opts)?;
    let hall = hallway_of(a.entries[i].data, &mut c.warnings);
    let sib = siblings::in_archive(&a, &p.archive, a.entries[i].name);
    pipeline::decorate(&mut c, &sib, opts.fps, opts.up, opts.max_work).map_err(|e| {
        ConvertError {
            source: src,
            kind: ConvertErrorKind::Export(e),
        }
    })?;
    Ok((c, hall))
}

/// The model's Res17 hall-way graph (unit-files-notes §4.1) when it has a
/// non-empty one; a broken one is a warning (the model keeps its bytes).
fn hallway_of(model: &[u8], warnings: &mut Vec<String>) -> Option<Hallway> {
    let a = nres::read(model, nres::Mode::Tolerant).ok()?;
    let e = a
        .entries
        .iter()
        .find(|e| e.type_id == hallway::STREAM && !e.data.is_empty())?;
    hallway::read(e.data, e.attr1, e.attr2)
        .map_err(|err| {
            warnings.push(format!(
                "Res17: {}: {}; hall-way graph left out",
                err.rule, err.detail
            ))
        })
        .ok()
}

/// A unit file resolved to its mounted parts ([`resolve`]).
pub struct Resolved {
    /// The unit file.
    pub unit: UnitFile,
    /// The game folder ([`game_dir`]).
    pub game: PathBuf,
    /// The mounted parts in tree order ([`mounted_parts`]).
    pub parts: Vec<Part>,
    /// Components left out.
    pub warnings: Vec<String>,
}

/// Reads the unit file `path` (bytes `data`), finds the game folder above
/// it and resolves its mounted parts through `objects.rlb`
/// (unit-files-notes §3.3, §3.5 step 1).
///
/// # Errors
/// `dat.*` (the unit file), `unit.registry`, `unit.resolve` (no game
/// folder, record or mesh), `io`.
pub fn resolve(path: &Path, data: &[u8]) -> Result<Resolved, UnitError> {
    resolve_with(
        path,
        data,
        &SharedFiles::default(),
        crate::limits::DEFAULT_MAX_WORK,
    )
}

/// [`resolve`] reading `objects.rlb` through the run's shared inputs
/// `files` (once per run, not once per unit), under a work budget of
/// `max_work` units: the unit file's components and the registry's slots
/// are counted before they are decoded ([`dat::read_within`],
/// [`Registry::read_within`]).
///
/// # Errors
/// As [`resolve`]; `limits.work`.
pub fn resolve_with(
    path: &Path,
    data: &[u8],
    files: &SharedFiles,
    max_work: u64,
) -> Result<Resolved, UnitError> {
    let unit = dat::read_within(data, max_work)?;
    let game = game_dir_with(path, files).ok_or_else(|| {
        UnitError::new(
            "unit.resolve",
            format!("no {REGISTRY} in the folders above the unit file"),
        )
    })?;
    let reg_path = find_file(&game, REGISTRY).ok_or_else(|| {
        UnitError::new(
            "unit.resolve",
            format!("{REGISTRY} vanished from {}", game.display()),
        )
    })?;
    let reg_bytes = files
        .get(&reg_path)
        .map_err(|e| UnitError::new("io", format!("cannot read {}: {e}", reg_path.display())))?;
    let reg = Registry::read_within(&reg_bytes, max_work)?;
    let mut warnings = Vec::new();
    let parts = mounted_parts(&unit, &reg, &mut warnings)?;
    Ok(Resolved {
        unit,
        game,
        parts,
        warnings,
    })
}

/// Converts the unit file `path` (bytes `data`) into one assembled scene
/// (unit-files-notes §3.5). The registry and the part archives are looked
/// up in the game folder above the file ([`game_dir`]).
///
/// # Errors
/// [`ConvertError`] naming the unit file or the part: `dat.*` (the unit
/// file), `unit.registry`, `unit.resolve` (no game folder, record, archive
/// or entry), or the part's own conversion error.
pub fn convert_unit(
    path: &Path,
    data: &[u8],
    libs: Option<&Libraries>,
    opts: &ConvertOptions,
) -> Result<Converted, ConvertError> {
    convert_unit_with(path, data, libs, opts, &SharedFiles::default())
}

/// [`convert_unit`] reading the registry and the part archives through the
/// run's shared inputs `files` ([`SharedFiles`]: each read once per run).
///
/// # Errors
/// As [`convert_unit`].
pub fn convert_unit_with(
    path: &Path,
    data: &[u8],
    libs: Option<&Libraries>,
    opts: &ConvertOptions,
    files: &SharedFiles,
) -> Result<Converted, ConvertError> {
    let src = path.display().to_string();
    let Resolved {
        unit,
        game,
        parts,
        mut warnings,
    } = resolve_with(path, data, files, opts.max_work).map_err(|e| unit_err(&src, e))?;
    let mut budget =
        assembly_budget(&unit, &parts, opts.max_work).map_err(|e| unit_err(&src, e))?;
    let mut merger: Option<Merger> = None;
    let mut first: Option<Converted> = None;
    let (mut counts, mut textures) = (convert::Counts::default(), Vec::new());
    let mut wear_materials: Vec<String> = Vec::new();
    let mut root_hall = None;
    for (k, p) in parts.iter().enumerate() {
        let (c, hall) = convert_part(&game, p, libs, opts, files)?;
        spend_part(&mut budget, k, p, &c).map_err(|e| unit_err(&src, e))?;
        if k == 0 {
            root_hall = hall;
        }
        for w in &c.wear_materials {
            if !wear_materials.contains(w) {
                wear_materials.push(w.clone());
            }
        }
        warnings.extend(
            c.warnings
                .iter()
                .map(|w| format!("part {k} {}: {w}", p.record)),
        );
        add_counts(&mut counts, &c.counts);
        textures.extend(
            c.textures
                .iter()
                .filter(|t| !textures.contains(*t))
                .cloned()
                .collect::<Vec<_>>(),
        );
        let e = c.exported.clone();
        let to_err = |e: ExportError| ConvertError {
            source: src.clone(),
            kind: ConvertErrorKind::Export(e),
        };
        match merger.as_mut() {
            None => merger = Some(Merger::new(p, e).map_err(to_err)?),
            Some(m) => m.mount(k, p, e).map_err(to_err)?,
        }
        first.get_or_insert(c);
    }
    let (mut m, first) = (merger.expect("a root part"), first.expect("a root part"));
    warnings.append(&mut m.warnings);
    finish_scene(&mut m, &unit, &parts, &src, root_hall.as_ref()).map_err(|e| ConvertError {
        source: src.clone(),
        kind: ConvertErrorKind::Export(e),
    })?;
    let root: gltf_json::Root = serde_json::from_value(m.doc).map_err(|e| ConvertError {
        source: src.clone(),
        kind: ConvertErrorKind::Export(ExportError::Json(e)),
    })?;
    let mut report = first.exported.report.clone();
    report.nodes = root.nodes.len();
    report.meshes = root.meshes.len();
    Ok(Converted {
        exported: Exported {
            root,
            bin: m.bin,
            report,
        },
        warnings,
        counts,
        conventions: first.conventions,
        textures,
        wear_materials,
    })
}

/// The work of assembling `unit` from `parts` (issue 26 item 5), counted
/// before any part is read: the unit file's components
/// ([`crate::limits::UNITS_PER_UNIT_COMPONENT`] each), the
/// mounted parts ([`crate::limits::UNITS_PER_PART`] each: the part's glTF
/// kept and merged into the unit's document) and the depth of the part
/// tree ([`crate::limits::UNITS_PER_NODE`] per level: a chain of
/// transforms).
///
/// # Errors
/// `limits.work` naming the counts and the budget.
fn assembly_budget(
    unit: &UnitFile,
    parts: &[Part],
    max_work: u64,
) -> Result<crate::limits::Budget, UnitError> {
    let mut depth = vec![0usize; parts.len()];
    for (k, p) in parts.iter().enumerate() {
        let d = p
            .parent_part
            .and_then(|q| depth.get(q).copied())
            .map_or(1, |d| d + 1);
        depth[k] = d;
    }
    let deepest = depth.iter().copied().max().unwrap_or(0);
    let per = crate::limits::UNITS_PER_PART;
    let units = (unit.components.len() as u64)
        .saturating_mul(crate::limits::UNITS_PER_UNIT_COMPONENT)
        .saturating_add((parts.len() as u64).saturating_mul(per))
        .saturating_add((deepest as u64).saturating_mul(crate::limits::UNITS_PER_NODE));
    let mut b = crate::limits::Budget::new(max_work);
    b.spend(
        units,
        &format!(
            "{} components, {} mounted parts and a part tree {deepest} deep",
            unit.components.len(),
            parts.len()
        ),
    )
    .map_err(|d| UnitError::new("limits.work", d))?;
    Ok(b)
}

/// Spends what part `k` (`p`, converted as `c`) adds to the unit: its glTF
/// nodes ([`crate::limits::UNITS_PER_NODE`]), primitives
/// ([`crate::limits::UNITS_PER_PRIMITIVE`]) and buffer bytes
/// ([`crate::limits::BYTES_PER_UNIT`]), before it is merged.
///
/// # Errors
/// `limits.work` naming the part and the budget.
fn spend_part(
    budget: &mut crate::limits::Budget,
    k: usize,
    p: &Part,
    c: &Converted,
) -> Result<(), UnitError> {
    use crate::limits::{BYTES_PER_UNIT, UNITS_PER_NODE, UNITS_PER_PRIMITIVE};
    let e = &c.exported;
    let nodes = e.root.nodes.len() as u64;
    let prims = e.report.primitives as u64;
    let units = nodes
        .saturating_mul(UNITS_PER_NODE)
        .saturating_add(prims.saturating_mul(UNITS_PER_PRIMITIVE))
        .saturating_add(e.bin.len() as u64 / BYTES_PER_UNIT);
    budget
        .spend(
            units,
            &format!(
                "part {k} {:?} ({nodes} nodes, {prims} primitives, {} buffer bytes)",
                p.record,
                e.bin.len()
            ),
        )
        .map_err(|d| UnitError::new("limits.work", d))
}

fn add_counts(a: &mut convert::Counts, b: &convert::Counts) {
    a.nodes += b.nodes;
    a.slots += b.slots;
    a.vertices += b.vertices;
    a.triangles += b.triangles;
    a.batches += b.batches;
    a.animated_nodes += b.animated_nodes;
    a.frame_count = a.frame_count.max(b.frame_count);
    a.materials += b.materials;
    a.textures += b.textures;
}

/// Buffer length, the unit table (`extras.msh.unit`, with the root part's
/// hall-way graph as `hallway` when it has one) and the merged clip table
/// in the scene extras.
fn finish_scene(
    m: &mut Merger,
    unit: &UnitFile,
    parts: &[Part],
    src: &str,
    hall: Option<&Hallway>,
) -> Result<(), ExportError> {
    while !m.bin.len().is_multiple_of(4) {
        m.bin.push(0);
    }
    if let Some(b) = m.doc.get_mut("buffers").and_then(|b| b.get_mut(0)) {
        b["byteLength"] = Value::from(m.bin.len());
    }
    let names: Vec<&str> = m.doc["nodes"]
        .as_array()
        .map(|n| n.iter().map(|x| x["name"].as_str().unwrap_or("")).collect())
        .unwrap_or_default();
    let table: Vec<Value> = parts
        .iter()
        .enumerate()
        .map(|(k, p)| {
            let socket_name = p.parent_part.zip(p.socket).and_then(|(pp, s)| m.maps.get(pp)?.get(s)).and_then(|&g| names.get(g)).map(|g| g.to_string());
            let mut row = json!({"part": k, "component": p.component, "record": p.record, "display": p.display,
                   "class": p.class, "archive": p.archive, "mesh_entry": p.mesh_entry,
                   "parent_part": p.parent_part, "socket_node": p.socket, "socket_name": socket_name});
            if p.via.len() > 1 {
                row["via"] = json!(p.via);
            }
            row
        })
        .collect();
    let clips: Vec<Value> = m.doc["animations"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .filter(|(_, a)| a["extras"]["msh"].get("clip").is_some())
        .map(|(i, a)| json!({"name": a["name"], "animation": i, "part": a["extras"]["msh"]["part"],
                             "kind": a["extras"]["msh"]["clip"]["kind"], "first": a["extras"]["msh"]["clip"]["first"],
                             "last": a["extras"]["msh"]["clip"]["last"]}))
        .collect();
    let scene = &mut m.doc["scenes"][0];
    let ex = msh_extras(scene);
    ex[UNIT_KEY] = json!({"source": src, "class_word": unit.class_word, "parts": table});
    if let Some(h) = hall {
        ex[UNIT_KEY]["hallway"] = h.to_extras();
    }
    ex["clips"] = Value::from(clips);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(archive: &str, member: &str) -> Vec<u8> {
        let mut s = vec![0u8; 64];
        s[..archive.len()].copy_from_slice(archive.as_bytes());
        s[32..32 + member.len()].copy_from_slice(member.as_bytes());
        s
    }

    fn registry(records: &[(&str, Vec<(&str, &str)>)]) -> Registry {
        Registry {
            records: records
                .iter()
                .map(|(n, slots)| {
                    let v = slots.iter().map(|(a, m)| {
                        let b = slot(a, m);
                        let d = |b: &[u8]| source::decode_name(trim_name(b));
                        (d(&b[..32]), d(&b[32..]))
                    });
                    (n.to_lowercase(), v.collect())
                })
                .collect(),
        }
    }

    #[test]
    fn fort_record_reaches_its_mesh_through_the_agent_record() {
        let reg = registry(&[
            (
                "fr_fact_17_f",
                vec![
                    ("objects.rlb", "fr_fact_17_ag"),
                    ("fortif.rlb", "fr_fact_17.bas"),
                ],
            ),
            (
                "fr_fact_17_ag",
                vec![
                    ("fortif.rlb", "fr_fact_17.msh"),
                    ("fortif.rlb", "fr_fact_17.wea"),
                ],
            ),
            ("e_gun", vec![("guns.rlb", "e_gun.msh")]),
        ]);
        let m = reg.mesh_of("FR_FACT_17_F").unwrap();
        assert_eq!(
            (m.archive.as_str(), m.entry.as_str()),
            ("fortif.rlb", "fr_fact_17.msh")
        );
        assert_eq!(m.via, ["FR_FACT_17_F", "fr_fact_17_ag"]);
        assert_eq!(reg.mesh_of("e_gun").unwrap().via, ["e_gun"]);
    }

    #[test]
    fn unresolvable_records_name_the_chain() {
        let reg = registry(&[
            ("a", vec![("objects.rlb", "b")]),
            ("b", vec![("objects.rlb", "a")]),
            ("c", vec![("objects.rlb", "missing")]),
            ("d", vec![("fortif.rlb", "d.bas")]),
            ("h0", vec![("objects.rlb", "h1")]),
            ("h1", vec![("objects.rlb", "h2")]),
            ("h2", vec![("objects.rlb", "h3")]),
            ("h3", vec![("objects.rlb", "h4")]),
            ("h4", vec![("x.rlb", "h4.msh")]),
        ]);
        for (r, want) in [
            ("a", "a cycle"),
            (
                "c",
                "\"missing\" (reached through c -> missing) is not a record",
            ),
            ("d", "names no agent record"),
            ("h0", "within 3 hops"),
            ("zz", "\"zz\" is not a record"),
        ] {
            let e = reg.mesh_of(r).unwrap_err();
            assert_eq!(e.rule, "unit.resolve");
            assert!(e.detail.contains(want), "{r}: {}", e.detail);
        }
        assert_eq!(reg.mesh_of("h1").unwrap().via, ["h1", "h2", "h3", "h4"]);
    }
}
