//! A mission as one glTF scene (mission-notes §8.1–§8.5):
//!
//! ```text
//! Mission <dir>            scene extras parkan_mission
//! ├─ Terrain               the map (terrain-notes §4), LOD 0
//! ├─ Buildings / Units / Vegetation / Rocks
//! │   └─ <K><index> <name> one node per placed object, its model's node tree below
//! ├─ Routes                "Route <id>": a LINE_LOOP mesh of the points
//! ├─ Clans                 an empty per clan at its base, zone empties below
//! └─ Lodes                 an empty per lode
//! ```
//!
//! Each distinct model (kind + lower-case path) is converted once
//! (buildings and units assembled from their `.dat`, scenery from its
//! `objects.rlb` record), its meshes, materials and images added to the
//! document once; every placed object gets its own copy of the model's
//! nodes, all referencing those meshes (§8.2). No animations (§8.2), and no
//! geometry on `0x20` cockpit nodes (§4.3).
//!
//! Placement (§5, §8.3): translation `(x, z, −y)`, rotation the quaternion
//! of `Rz·Ry·Rx` with its vector part mapped the same way, scale `(s, s, s)`
//! on kinds 2 and 3 only; a unit with a host stands at the host building's
//! hall-way vertex (building placement without scale · the joint node's
//! world matrix · the Res17 vertex), unturned.
//!
//! The whole mission is one work unit ([`crate::limits`]): every node,
//! primitive and buffer byte it adds is counted against `max_work`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use glam::{DMat4, DQuat, DVec3};
use serde_json::{json, Value};

use super::extras::{self, num};
use super::ir::{Mission, PlacedObject};
use super::validate::{find_in_game, map_dir};
use super::MissionError;
use crate::convention::{axes, Up};
use crate::convert::{ConvertOptions, Converted};
use crate::gltf_import::matching::local_matrix;
use crate::limits::{self, Budget};
use crate::material::Libraries;
use crate::unit::assemble::{self, Part, Registry, REGISTRY};

/// Names of the group nodes of kinds 0..3.
pub const GROUPS: [&str; 4] = ["Buildings", "Units", "Vegetation", "Rocks"];
/// The letter that starts a placed object's node name, by kind.
pub const LETTERS: [char; 4] = ['B', 'U', 'V', 'R'];

/// What the scene is built from.
pub struct SceneInput<'a> {
    /// The mission.
    pub mission: &'a Mission,
    /// The mission's name (its folder: `Single.01`).
    pub name: &'a str,
    /// `data.tma` as given (for the extras).
    pub source: &'a str,
    /// SHA-256 of `data.tma`, hex.
    pub sha256: &'a str,
    /// The game folder (objects.rlb, UNITS, the map).
    pub game: &'a Path,
    /// The menu title (`descr`), if the folder has one.
    pub descr: Option<&'a str>,
    /// The text files beside `data.tma` (name, bytes).
    pub files: &'a [(String, Vec<u8>)],
    /// The run's shared inputs (the registry, unit files' parts and part
    /// archives, read once per run: issue 28 item 1).
    pub shared: &'a crate::source::SharedFiles,
}

/// A built mission scene.
#[derive(Debug, Clone)]
pub struct MissionScene {
    /// The glTF document (buffer 0 without a URI).
    pub json: Value,
    /// Buffer 0.
    pub bin: Vec<u8>,
    /// Everything approximated or left out, naming the object or model.
    pub warnings: Vec<String>,
    /// Files read (the unit files, the map's files, the libraries).
    pub inputs: Vec<PathBuf>,
    /// Counts for the report.
    pub counts: SceneCounts,
}

/// Counts of a mission scene.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SceneCounts {
    /// Placed-object nodes.
    pub placed: usize,
    /// Distinct models converted.
    pub models: usize,
    /// glTF nodes.
    pub nodes: usize,
    /// glTF meshes (shared by the copies).
    pub meshes: usize,
    /// Nodes with a mesh below the placed objects.
    pub placed_mesh_nodes: usize,
    /// Terrain triangles.
    pub terrain_triangles: usize,
    /// Materials.
    pub materials: usize,
    /// Embedded images.
    pub textures: usize,
}

/// A model converted once: its nodes (meshes already in the document) and
/// its hall-way vertices (joint node, position in glTF axes).
struct Template {
    nodes: Vec<Value>,
    roots: Vec<usize>,
    hallway: Vec<(Option<usize>, [f32; 3])>,
    resolved: Value,
}

struct Builder<'a> {
    doc: Value,
    bin: Vec<u8>,
    budget: Budget,
    up: Up,
    warnings: Vec<String>,
    inputs: Vec<PathBuf>,
    game: &'a Path,
    libs: Option<&'a Libraries>,
    opts: &'a ConvertOptions,
    /// The registry, unit files' parts and part archives, each read once.
    archives: crate::source::SharedFiles,
    registry: Option<Registry>,
}

fn err(rule: &'static str, record: Option<String>, detail: impl Into<String>) -> MissionError {
    MissionError::new(rule, record, detail)
}

fn object_name(i: usize, o: &PlacedObject) -> String {
    format!("object {i} ({})", o.path_text())
}

impl Builder<'_> {
    fn nodes(&mut self) -> &mut Vec<Value> {
        self.doc["nodes"].as_array_mut().expect("nodes array")
    }

    /// Adds a node (children given), counted against the budget.
    fn add_node(&mut self, node: Value, what: &str) -> Result<usize, MissionError> {
        self.spend(limits::UNITS_PER_NODE, what)?;
        self.nodes().push(node);
        Ok(self.nodes().len() - 1)
    }

    fn spend(&mut self, units: u64, what: &str) -> Result<(), MissionError> {
        self.budget
            .spend(units, what)
            .map_err(|d| err("limits.work", None, d))
    }

    /// Appends the buffer bytes and resources of document `p` (its
    /// animations dropped) and returns its nodes, meshes rebased.
    fn add_document(
        &mut self,
        mut p: Value,
        bin: &[u8],
        what: &str,
    ) -> Result<Vec<Value>, MissionError> {
        if let Some(o) = p.as_object_mut() {
            o.remove("animations");
        }
        let prims: usize = p["meshes"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| m["primitives"].as_array().map_or(0, Vec::len))
            .sum();
        self.spend(
            prims as u64 * limits::UNITS_PER_PRIMITIVE + bin.len() as u64 / limits::BYTES_PER_UNIT,
            what,
        )?;
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        let off = self.bin.len();
        self.bin.extend_from_slice(bin);
        assemble::rebase_resources(&self.doc, &mut p, off);
        let nodes = p["nodes"]
            .as_array_mut()
            .map(std::mem::take)
            .unwrap_or_default();
        assemble::append_arrays(
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
            ],
        );
        Ok(nodes)
    }

    /// A copy of `nodes` (children relative to the list) appended to the
    /// document; returns the new indices of `roots`.
    fn copy_nodes(
        &mut self,
        nodes: &[Value],
        roots: &[usize],
        what: &str,
    ) -> Result<Vec<usize>, MissionError> {
        self.spend(nodes.len() as u64 * limits::UNITS_PER_NODE, what)?;
        let base = self.nodes().len();
        for n in nodes {
            let mut n = n.clone();
            if let Some(ch) = n.get_mut("children").and_then(Value::as_array_mut) {
                for c in ch.iter_mut() {
                    *c = Value::from(c.as_u64().unwrap_or(0) as usize + base);
                }
            }
            self.nodes().push(n);
        }
        Ok(roots.iter().map(|r| r + base).collect())
    }

    fn registry(&mut self) -> Result<&Registry, String> {
        if self.registry.is_none() {
            let path = find_in_game(self.game, REGISTRY)
                .ok_or_else(|| format!("no {REGISTRY} in {}", self.game.display()))?;
            let bytes = self
                .archives
                .get(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let reg = Registry::read(&bytes).map_err(|e| e.detail)?;
            self.inputs.push(path);
            self.registry = Some(reg);
        }
        Ok(self.registry.as_ref().expect("registry"))
    }

    /// Converts the model of `o` (its `.dat` assembly or its `objects.rlb`
    /// record, §4) into a template.
    fn convert_model(&mut self, i: usize, o: &PlacedObject) -> Result<Template, MissionError> {
        let path = o.path_text();
        let rec = || Some(object_name(i, o));
        let (c, resolved) = if o.is_owned() {
            let file = find_in_game(self.game, &path).ok_or_else(|| {
                err(
                    "mission.resolve",
                    rec(),
                    format!("{path} is not in {}", self.game.display()),
                )
            })?;
            let data = crate::source::read_regular(&file, crate::output::MAX_UPDATE_BYTES)
                .map_err(|e| err("io", rec(), format!("cannot read {}: {e}", file.display())))?;
            let c = assemble::convert_unit_with(&file, &data, self.libs, self.opts, &self.archives)
                .map_err(|e| err(e.rule(), rec(), e.to_string()))?;
            self.inputs.push(file);
            (c, json!({"dat": path}))
        } else {
            let mesh = self
                .registry()
                .map_err(|d| err("mission.resolve", rec(), d))?
                .mesh_of(&path)
                .map_err(|e| err("mission.resolve", rec(), e.detail))?;
            let part = Part {
                component: 0,
                record: path.clone(),
                display: path.clone(),
                class: 0,
                archive: mesh.archive.clone(),
                mesh_entry: mesh.entry.clone(),
                via: mesh.via.clone(),
                parent_part: None,
                socket: None,
            };
            let (c, _) =
                assemble::convert_part(self.game, &part, self.libs, self.opts, &self.archives)
                    .map_err(|e| err(e.rule(), rec(), e.to_string()))?;
            let resolved =
                json!({"record": path, "mesh": format!("{}:{}", mesh.archive, mesh.entry)});
            (c, resolved)
        };
        self.template(i, o, c, resolved)
    }

    fn template(
        &mut self,
        i: usize,
        o: &PlacedObject,
        c: Converted,
        resolved: Value,
    ) -> Result<Template, MissionError> {
        let what = format!("the model of {}", object_name(i, o));
        let doc = serde_json::to_value(&c.exported.root)
            .map_err(|e| err("gltf.json", Some(object_name(i, o)), e.to_string()))?;
        let roots: Vec<usize> = doc["scenes"][0]["nodes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r.as_u64().map(|r| r as usize))
            .collect();
        let hall = doc["scenes"][0]["extras"]["msh"]["unit"]["hallway"]["vertices"].clone();
        let mut nodes = self.add_document(doc, &c.exported.bin, &what)?;
        for n in nodes.iter_mut() {
            // §4.3: cockpit shells (0x20) are drawn only from inside.
            let cockpit = n["extras"]["msh"]["flags"]
                .as_u64()
                .is_some_and(|f| f & 0x20 != 0);
            if cockpit {
                if let Some(o) = n.as_object_mut() {
                    o.remove("mesh");
                }
            }
        }
        let hallway = hall
            .as_array()
            .into_iter()
            .flatten()
            .map(|v| {
                let joint = v["node"].as_u64();
                let node = nodes.iter().position(|n| {
                    let m = &n["extras"]["msh"];
                    m["part"].as_u64() == Some(0)
                        && m.get("control_point").is_none()
                        && m["node"].as_u64() == joint
                });
                let p: Vec<f32> = v["position"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|x| x.as_f64().unwrap_or(0.0) as f32)
                    .collect();
                let p = [0, 1, 2].map(|k| p.get(k).copied().unwrap_or(0.0));
                (node, axes::vec3(self.up, p))
            })
            .collect();
        self.warnings.extend(
            c.warnings
                .iter()
                .map(|w| format!("{} {}: {w}", LETTERS[o.kind as usize], o.path_text())),
        );
        Ok(Template {
            nodes,
            roots,
            hallway,
            resolved,
        })
    }
}

/// The world matrix of node `i` of a template (parents found through the
/// children lists).
fn template_world(nodes: &[Value], i: usize) -> DMat4 {
    let mut m = local_matrix(&nodes[i]);
    let mut at = i;
    for _ in 0..nodes.len() {
        let parent = nodes.iter().position(|n| {
            n["children"]
                .as_array()
                .is_some_and(|c| c.iter().any(|c| c.as_u64() == Some(at as u64)))
        });
        match parent {
            Some(p) => {
                m = local_matrix(&nodes[p]) * m;
                at = p;
            }
            None => break,
        }
    }
    m
}

/// The placement of `o` in glTF axes (§5.2, §5.7): translation, rotation
/// (the quaternion of `Rz·Ry·Rx`, its vector part mapped like a position)
/// and the scale shown (the stored one on kinds 2 and 3, §5.3; 1 on
/// kinds 0 and 1), its components permuted like the axes.
pub fn placement(up: Up, o: &PlacedObject) -> (DVec3, DQuat, DVec3) {
    let [rx, ry, rz] = o.rotation.map(f64::from);
    let q = DQuat::from_rotation_z(rz) * DQuat::from_rotation_y(ry) * DQuat::from_rotation_x(rx);
    let map = |v: [f64; 3]| match up {
        Up::Y => DVec3::new(v[0], v[2], -v[1]),
        Up::Z => DVec3::new(v[0], v[1], v[2]),
    };
    let qv = map([q.x, q.y, q.z]);
    let t = map(o.position.map(f64::from));
    let s = if o.kind >= 2 {
        let [a, b, c] = o.scale.map(f64::from);
        match up {
            Up::Y => DVec3::new(a, c, b),
            Up::Z => DVec3::new(a, b, c),
        }
    } else {
        DVec3::ONE
    };
    (t, DQuat::from_xyzw(qv.x, qv.y, qv.z, q.w), s)
}

/// The node of placed object `i`: its name (§8.3: `<K><index>` and the
/// instance name when it is exact text, else the path's stem), transform
/// and extras; `hosted` is the hall-way position when the unit has a host.
///
/// # Errors
/// What is not finite (issue 36 item 8: a node never shows `null`): a
/// stored position, rotation or scale (read `--tolerant`), or the
/// translation, rotation or scale derived from them (a hall-way position,
/// an f32 overflow).
fn object_node(
    up: Up,
    i: usize,
    o: &PlacedObject,
    hosted: Option<DVec3>,
    resolved: Value,
) -> Result<Value, String> {
    let stored = o.position.iter().chain(&o.rotation).chain(&o.scale);
    if !stored.clone().all(|x| x.is_finite()) {
        return Err(format!(
            "its stored position {:?}, rotation {:?} or scale {:?} is not finite",
            o.position, o.rotation, o.scale
        ));
    }
    let letter = LETTERS.get(o.kind as usize).copied().unwrap_or('X');
    let label = extras::exact_text(&o.instance_name)
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| {
            let p = o.path_text();
            let file = p.rsplit(['\\', '/']).next().unwrap_or(&p).to_string();
            crate::source::stem_of(&file).to_string()
        });
    let (t, r, s) = placement(up, o);
    let (t, r) = match hosted {
        Some(h) => (h, DQuat::IDENTITY),
        None => (t, r),
    };
    let f32s = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<f32>>();
    let (t32, r32, s32) = (
        f32s(&[t.x, t.y, t.z]),
        f32s(&[r.x, r.y, r.z, r.w]),
        f32s(&[s.x, s.y, s.z]),
    );
    if !t32.iter().chain(&r32).chain(&s32).all(|x| x.is_finite()) {
        return Err(format!(
            "its node's translation {t32:?}, rotation {r32:?} or scale {s32:?} is not finite in f32"
        ));
    }
    let f = |v: &[f32]| Value::from(v.iter().map(|&x| num(x)).collect::<Vec<_>>());
    let (t, r, s) = (f(&t32), f(&r32), f(&s32));
    // What the node shows, so the writer tells an untouched node (§8.7).
    let shown = json!({"scale_applied": o.kind >= 2, "hosted": hosted.is_some(),
                       "translation": t, "rotation": r, "scale": s});
    Ok(json!({
        "name": format!("{letter}{i} {label}"),
        "translation": t, "rotation": r, "scale": s,
        "extras": {extras::OBJECT_KEY: extras::object(i, o, resolved, shown)},
    }))
}

/// The LOD 0 ground height of the map at `(x, y)` (game axes): the
/// triangle of LOD 0 under the point, interpolated; `None` off the map
/// ([`crate::terrain::ground::Ground`], the one ground rule).
pub fn ground_z(land: &crate::terrain::ir::Land, x: f32, y: f32) -> Option<f32> {
    crate::terrain::ground::Ground::new(land).height_at(x, y)
}

/// Builds the scene of `input` (§8.1). `libs` gives materials and
/// textures to the models and the map.
///
/// # Errors
/// `mission.resolve` (a `.dat`, record or map that is not in the game
/// folder), a model's own conversion rule (naming the placed object),
/// `terrain.*` rules of the map, `limits.work` (the whole mission over
/// `opts.max_work`), `gltf.json`.
pub fn build(
    input: &SceneInput<'_>,
    libs: Option<&Libraries>,
    opts: &ConvertOptions,
) -> Result<MissionScene, MissionError> {
    let m = input.mission;
    let mut b = Builder {
        doc: json!({
            "asset": {"version": "2.0", "generator": concat!("mshgltf ", env!("CARGO_PKG_VERSION"), " (mission)")},
            "scene": 0,
            "scenes": [{"name": format!("Mission {}", input.name), "nodes": [0]}],
            "nodes": [{"name": format!("Mission {}", input.name), "children": []}],
            "meshes": [], "materials": [], "bufferViews": [], "accessors": [],
        }),
        bin: Vec::new(),
        budget: Budget::new(opts.max_work),
        up: opts.up,
        warnings: Vec::new(),
        inputs: Vec::new(),
        game: input.game,
        libs,
        opts,
        archives: input.shared.clone(),
        registry: None,
    };
    let mut counts = SceneCounts::default();
    let mut groups = Vec::new();
    let (terrain, land) = add_terrain(&mut b, m, opts, &mut counts)?;
    groups.push(terrain);
    groups.extend(add_objects(&mut b, m, &mut counts)?);
    groups.extend(add_routes(&mut b, m)?);
    groups.extend(add_clans(&mut b, m, land.as_ref())?);
    groups.extend(add_lodes(&mut b, m)?);
    b.doc["nodes"][0]["children"] = json!(groups);
    let mut x = extras::mission(m, input.source, input.sha256, input.descr, input.files);
    if opts.up == Up::Z {
        x["conventions"]["up"] = json!("z");
    }
    b.doc["scenes"][0]["extras"] = json!({ extras::MISSION_KEY: x });
    finish(b, counts)
}

fn finish(mut b: Builder<'_>, mut counts: SceneCounts) -> Result<MissionScene, MissionError> {
    while !b.bin.len().is_multiple_of(4) {
        b.bin.push(0);
    }
    b.doc["buffers"] = json!([{"byteLength": b.bin.len()}]);
    if let Some(o) = b.doc.as_object_mut() {
        if b.bin.is_empty() {
            o.remove("buffers");
        }
        // No empty array (issue 36 item 4: the validator's EMPTY_ENTITY).
        for key in [
            "images",
            "textures",
            "samplers",
            "meshes",
            "materials",
            "bufferViews",
            "accessors",
        ] {
            if o.get(key)
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty)
            {
                o.remove(key);
            }
        }
    }
    check_finite(&b.doc, &b.bin)?;
    let n = |k: &str| assemble::len(&b.doc, k);
    counts.nodes = n("nodes");
    counts.meshes = n("meshes");
    counts.materials = n("materials");
    counts.textures = n("images");
    b.inputs.sort();
    b.inputs.dedup();
    Ok(MissionScene {
        json: b.doc,
        bin: b.bin,
        warnings: b.warnings,
        inputs: b.inputs,
        counts,
    })
}

/// The model export's finiteness check ([`crate::gltf_export::check_finite`])
/// over the whole mission document: every node transform, accessor bound
/// and float element (issue 36 item 8: what the steps above leave out is
/// never written as `null`).
///
/// # Errors
/// `gltf.non_finite` naming the node or accessor; `gltf.json` when the
/// document is not a glTF root.
fn check_finite(doc: &Value, bin: &[u8]) -> Result<(), MissionError> {
    let root: gltf_json::Root = serde_json::from_value(doc.clone())
        .map_err(|e| err("gltf.json", None, format!("the mission document: {e}")))?;
    crate::gltf_export::check_finite(&root, bin).map_err(|e| {
        let detail = match &e {
            crate::gltf_export::ExportError::Model { detail, .. } => detail.clone(),
            _ => e.to_string(),
        };
        err(e.rule(), None, detail)
    })
}

/// The map named by the mission's map path (terrain-notes §4, LOD 0)
/// under a `Terrain` node; returns the node and the map (for ground
/// heights).
fn add_terrain(
    b: &mut Builder<'_>,
    m: &Mission,
    opts: &ConvertOptions,
    counts: &mut SceneCounts,
) -> Result<(usize, Option<crate::terrain::ir::Land>), MissionError> {
    use crate::terrain::{export, source::TerrainSource, Mode as TMode};
    let map = crate::source::decode_name(&m.map_path);
    let stem = map.rsplit(['\\', '/']).next().unwrap_or("land").to_string();
    let msh = map_dir(&map).and_then(|d| find_in_game(b.game, &format!("{d}\\{stem}.msh")));
    let Some(msh) = msh else {
        return Err(err(
            "mission.resolve",
            Some("map path".into()),
            format!("{map:?}: no {stem}.msh under {}", b.game.display()),
        ));
    };
    let mode = match opts.mode {
        crate::msh::read::Mode::Tolerant => TMode::Tolerant,
        _ => TMode::Strict,
    };
    let terr = |e: crate::terrain::TerrainError| {
        err(
            e.rule,
            Some("map".into()),
            format!("{}: {e}", msh.display()),
        )
    };
    let src = TerrainSource::load(&msh, mode, b.libs).map_err(terr)?;
    let topts = export::TerrainExportOptions {
        up: opts.up,
        textures: opts.textures,
        ..Default::default()
    };
    crate::terrain::convert::check_work(&src, &topts).map_err(terr)?;
    let g = export::export(&src, b.libs, &topts);
    b.inputs.extend(src.inputs.iter().cloned());
    b.warnings
        .extend(g.warnings.iter().map(|w| format!("terrain: {w}")));
    counts.terrain_triangles = g.triangles;
    let scene_extras = g.json["scenes"][0]["extras"].clone();
    let roots: Vec<usize> = g.json["scenes"][0]["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r.as_u64().map(|r| r as usize))
        .collect();
    let nodes = b.add_document(g.json, &g.bin, "the map")?;
    let children = b.copy_nodes(&nodes, &roots, "the map")?;
    let node = b.add_node(
        json!({"name": "Terrain", "children": children, "extras": {extras::TERRAIN_KEY: scene_extras}}),
        "the map",
    )?;
    Ok((node, Some(src.land)))
}

/// The four kind groups with a node per placed object (§8.3), each
/// model converted once.
fn add_objects(
    b: &mut Builder<'_>,
    m: &Mission,
    counts: &mut SceneCounts,
) -> Result<Vec<usize>, MissionError> {
    let mut templates: HashMap<(u32, String), Template> = HashMap::new();
    for (i, o) in m.objects.iter().enumerate() {
        let key = (o.kind, o.path_text().to_lowercase());
        if o.kind <= 3 && !templates.contains_key(&key) {
            let t = b.convert_model(i, o)?;
            templates.insert(key, t);
        }
    }
    counts.models = templates.len();
    let mut members: [Vec<usize>; 4] = Default::default();
    for (i, o) in m.objects.iter().enumerate() {
        let Some(t) = templates.get(&(o.kind, o.path_text().to_lowercase())) else {
            b.warnings.push(format!(
                "{}: kind {} is not 0..3; not shown",
                object_name(i, o),
                o.kind
            ));
            continue;
        };
        let hosted = hosted_position(b, m, i, o, &templates)?;
        let what = object_name(i, o);
        let mut node = match object_node(b.up, i, o, hosted, t.resolved.clone()) {
            Ok(n) => n,
            Err(why) => {
                b.warnings.push(format!(
                    "{what}: {why}: left out of the scene (glTF numbers are finite; a write-back of this scene drops the object)"
                ));
                continue;
            }
        };
        let children = b.copy_nodes(&t.nodes, &t.roots, &what)?;
        counts.placed_mesh_nodes += t.nodes.iter().filter(|n| n.get("mesh").is_some()).count();
        node["children"] = json!(children);
        members[o.kind as usize].push(b.add_node(node, &what)?);
        counts.placed += 1;
    }
    let mut groups = Vec::new();
    for (k, list) in members.into_iter().enumerate() {
        groups.extend(b.group(GROUPS[k], list)?);
    }
    Ok(groups)
}

impl Builder<'_> {
    /// A group node holding `children`; none when there are none (issue
    /// 36 item 4: glTF arrays are never empty, the Khronos validator's
    /// `EMPTY_ENTITY`).
    fn group(&mut self, name: &str, children: Vec<usize>) -> Result<Option<usize>, MissionError> {
        if children.is_empty() {
            return Ok(None);
        }
        self.add_node(json!({"name": name, "children": children}), name)
            .map(Some)
    }
}

/// The hall-way position of a hosted unit (§5.5), or `None` (with a
/// warning when the host building or its model cannot be found).
///
/// # Errors
/// `mission.host_vertex` (§9 error 5: `vertex` below the building's Res17
/// vertex count), naming the object, the host and the index, in strict
/// mode; tolerant reading warns instead and places the unit at the
/// building's origin.
fn hosted_position(
    b: &mut Builder<'_>,
    m: &Mission,
    i: usize,
    o: &PlacedObject,
    templates: &HashMap<(u32, String), Template>,
) -> Result<Option<DVec3>, MissionError> {
    if o.host == -1 && o.vertex == -1 {
        return Ok(None);
    }
    let host = m
        .objects
        .iter()
        .find(|h| h.kind == 0 && h.logical_id == o.host);
    let Some((h, t)) =
        host.and_then(|h| Some((h, templates.get(&(h.kind, h.path_text().to_lowercase()))?)))
    else {
        b.warnings.push(format!(
            "{}: host {} vertex {} not found (no such building); shown at its stored position",
            object_name(i, o),
            o.host,
            o.vertex
        ));
        return Ok(None);
    };
    let (ht, hr, _) = placement(b.up, h);
    let count = t.hallway.len();
    let Some(&(joint, p)) = usize::try_from(o.vertex)
        .ok()
        .and_then(|v| t.hallway.get(v))
    else {
        let detail = format!(
            "host {} ({}) vertex {}: not below the building's Res17 hall-way vertex count {count}",
            o.host,
            h.path_text(),
            o.vertex
        );
        if b.opts.mode != crate::msh::read::Mode::Tolerant {
            return Err(MissionError::new(
                "mission.host_vertex",
                Some(object_name(i, o)),
                detail,
            ));
        }
        b.warnings.push(format!(
            "{}: mission.host_vertex: {detail}; placed at the building's origin",
            object_name(i, o)
        ));
        return Ok(Some(ht));
    };
    let joint = joint.map_or(DMat4::IDENTITY, |j| template_world(&t.nodes, j));
    let world = DMat4::from_rotation_translation(hr, ht) * joint;
    Ok(Some(world.transform_point3(DVec3::new(
        f64::from(p[0]),
        f64::from(p[1]),
        f64::from(p[2]),
    ))))
}

/// Routes (§8.4): a `LINE_LOOP` mesh of the points per route.
fn add_routes(b: &mut Builder<'_>, m: &Mission) -> Result<Option<usize>, MissionError> {
    let mut list = Vec::new();
    for (i, r) in m.routes.iter().enumerate() {
        let pts: Vec<[f32; 3]> = r.points.iter().map(|p| axes::vec3(b.up, *p)).collect();
        let mut node = json!({"name": format!("Route {}", r.id),
                              "extras": {extras::ROUTE_KEY: extras::route(i, r)}});
        if !pts.is_empty() && pts.iter().flatten().all(|x| x.is_finite()) {
            let acc = b.positions(&pts);
            let mesh = assemble::len(&b.doc, "meshes");
            b.doc["meshes"].as_array_mut().expect("meshes").push(json!({
                "name": format!("Route {}", r.id),
                "primitives": [{"attributes": {"POSITION": acc}, "mode": 2}],
            }));
            node["mesh"] = json!(mesh);
        }
        list.push(b.add_node(node, "a route")?);
    }
    b.group("Routes", list)
}

impl Builder<'_> {
    /// A `VEC3` float accessor of `pts` (with min and max).
    fn positions(&mut self, pts: &[[f32; 3]]) -> usize {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        let off = self.bin.len();
        for p in pts {
            p.iter()
                .for_each(|x| self.bin.extend_from_slice(&x.to_le_bytes()));
        }
        let view = assemble::len(&self.doc, "bufferViews");
        self.doc["bufferViews"].as_array_mut().expect("views").push(
            json!({"buffer": 0, "byteOffset": off, "byteLength": pts.len() * 12, "target": 34962}),
        );
        let lo: Vec<Value> = (0..3)
            .map(|k| num(pts.iter().map(|p| p[k]).fold(f32::MAX, f32::min)))
            .collect();
        let hi: Vec<Value> = (0..3)
            .map(|k| num(pts.iter().map(|p| p[k]).fold(f32::MIN, f32::max)))
            .collect();
        let acc = assemble::len(&self.doc, "accessors");
        self.doc["accessors"]
            .as_array_mut()
            .expect("accessors")
            .push(json!({
                "bufferView": view, "componentType": 5126, "count": pts.len(), "type": "VEC3",
                "min": lo, "max": hi,
            }));
        acc
    }
}

/// Clans (§8.4): an empty at the base on the ground, zone empties below.
///
/// A clan whose base is not finite, and a zone whose centre, radii or
/// position relative to the base is not (an f32 overflow), are left out
/// with a warning (issue 36 item 8); the write-back keeps what it has no
/// node of.
fn add_clans(
    b: &mut Builder<'_>,
    m: &Mission,
    land: Option<&crate::terrain::ir::Land>,
) -> Result<Option<usize>, MissionError> {
    let mut list = Vec::new();
    for (i, k) in m.clans.iter().enumerate() {
        let z = land
            .and_then(|l| ground_z(l, k.base[0], k.base[1]))
            .unwrap_or(0.0);
        let at = axes::vec3(b.up, [k.base[0], k.base[1], z]);
        if !at.iter().all(|x| x.is_finite()) {
            b.warnings.push(format!(
                "clan {i}: its base {:?} is not finite: left out of the scene with its zones (glTF numbers are finite)",
                k.base
            ));
            continue;
        }
        let mut zones = Vec::new();
        for (n, zone) in k.zones.iter().enumerate() {
            let c = axes::vec3(b.up, zone.centre);
            let rel = [0, 1, 2].map(|a| c[a] - at[a]);
            let radii = [zone.inner, zone.outer];
            if !rel.iter().chain(&radii).all(|x| x.is_finite()) {
                b.warnings.push(format!(
                    "clan {i} zone {n}: its centre {:?} (relative to the base {rel:?}) or radii {} / {} are not finite: left out of the scene (glTF numbers are finite)",
                    zone.centre, zone.inner, zone.outer
                ));
                continue;
            }
            zones.push(b.add_node(
                json!({"name": format!("Zone {i}.{n}"), "translation": rel.map(num),
                       "extras": {extras::ZONE_KEY: {"clan": i, "index": n, "outer": extras::display_num(zone.outer)}}}),
                "a zone",
            )?);
        }
        let name = crate::source::decode_name(&k.name);
        let mut node = json!({"name": format!("Clan {i} {name}"), "translation": at.map(num),
                              "extras": {extras::CLAN_KEY: extras::clan(i, k)}});
        if !zones.is_empty() {
            node["children"] = json!(zones);
        }
        list.push(b.add_node(node, "a clan")?);
    }
    b.group("Clans", list)
}

/// Lodes (§8.4): an empty at the stored position.
fn add_lodes(b: &mut Builder<'_>, m: &Mission) -> Result<Option<usize>, MissionError> {
    let mut list = Vec::new();
    for (i, l) in m.lodes.iter().enumerate() {
        let at = axes::vec3(b.up, l.position);
        if !at.iter().all(|x| x.is_finite()) {
            b.warnings.push(format!(
                "lode {i}: its position {:?} is not finite: left out of the scene (glTF numbers are finite)",
                l.position
            ));
            continue;
        }
        list.push(b.add_node(
            json!({"name": format!("Lode {i}"), "translation": at.map(num),
                   "extras": {extras::LODE_KEY: extras::lode(i, l)}}),
            "a lode",
        )?);
    }
    b.group("Lodes", list)
}
