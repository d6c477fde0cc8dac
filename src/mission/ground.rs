//! Heights on the ground, as the game places them (mission-notes §5.4):
//! the vertical rule for a placed object at a new `(x, y)`, once, for the
//! write-back (`gltf2msh --drop-to-ground`, and the warning that names an
//! object left off the ground), the add-on's Drop to ground (through the
//! `--report`'s `ground` rows) and the asset library's new objects
//! ([`grounded_z`]).
//!
//! - **Unit** (kind 1): the model's lowest vertex (rest pose, turned as
//!   placed, unscaled: the game ignores a unit's scale, §5.3) touches the
//!   ground under its origin: "a unit's z is set so its wheels or feet
//!   touch" (§5.4: median origin − terrain +1.56, lowest vertex −0.00).
//! - **Scenery** (kinds 2, 3): the origin's offset above the ground is
//!   kept (`z = ground(new) + z_old − ground(old)`; trees are authored
//!   hanging below their origin, §5.4); a brand-new one takes the median
//!   offset of the mission's other placements of its record, else 0
//!   ([`record_offset`]).
//! - **Building** (kind 0): set down on the mean ground along its `.bas`
//!   outer ring as placed (turned and moved; [`crate::unit::bas`]), as the
//!   terrain insertion does — unless its start flag is set, when the game
//!   keeps the stored z. A building whose `.bas` does not read (the
//!   generated corpus stores opaque bytes) is set on the ground under its
//!   origin instead, and the row says why.
//! - A unit inside a building (host/vertex set) stands at its hall-way
//!   vertex (§5.5): never touched.
//!
//! The ground is [`crate::terrain::ground::Ground`] (LOD 0, the one ground
//! rule). [`settle`] applies the rule to the moved and new objects of a
//! write-back ([`super::back::Written::origins`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use glam::{DMat4, DQuat, DVec3};
use serde_json::{json, Value};

use super::back::Written;
use super::ir::{Mission, PlacedObject};
use super::validate::{find_in_game, map_dir};
use super::MissionError;
use crate::convention::Up;
use crate::gltf_import::matching::local_matrix;
use crate::gltf_import::GltfFile;
use crate::terrain::ground::Ground;
use crate::terrain::ir::Land;

/// An object further than this above or below where the rule puts it is
/// named in a warning (issue 37 item 2; mission-notes §9 warning 6).
pub const TOLERANCE: f32 = 0.25;

/// The largest step (world units) between samples of a building's outer
/// ring ([`Ground::mean_along`]).
pub const RING_STEP: f32 = 1.0;

/// What the rule needs of a placed object's model.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Footing {
    /// A unit's vertices in its own frame (game axes, Z up, unturned,
    /// unscaled): [`model_points`].
    pub points: Vec<[f32; 3]>,
    /// A building's `.bas` outer ring in its own frame (x, y), when it
    /// reads ([`outer_ring`]).
    pub outer_ring: Option<Vec<[f32; 2]>>,
    /// Why a building has no ring, or a unit no vertices.
    pub note: Option<String>,
}

/// Which part of the rule placed the object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// A unit's lowest vertex on the ground.
    Unit,
    /// Scenery: the origin's offset above the ground kept.
    Scenery,
    /// A building on the mean ground of its outer ring.
    BuildingRing,
    /// A building without a readable ring: on the ground under its origin.
    BuildingOrigin,
}

impl Rule {
    /// The rule in words, for rows and warnings.
    pub fn text(self) -> &'static str {
        match self {
            Rule::Unit => "a unit's lowest vertex on the ground",
            Rule::Scenery => "scenery keeps its origin's offset above the ground",
            Rule::BuildingRing => "a building on the mean ground of its .bas outer ring",
            Rule::BuildingOrigin => {
                "a building on the ground under its origin (no readable .bas outer ring)"
            }
        }
    }
}

/// Where the rule puts an object.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Height {
    /// At world height `z` by `rule`.
    Ground {
        /// The height (game axes, Z up).
        z: f32,
        /// The part of the rule.
        rule: Rule,
    },
    /// The game keeps the stored height (a flagged building, a hosted
    /// unit): why.
    Kept(&'static str),
    /// No ground under it (off the map, over a hole).
    OffMap,
}

/// The placement turn `Rz·Ry·Rx` of `rotation` (radians, §5.2).
fn turn(rotation: [f32; 3]) -> DQuat {
    let [rx, ry, rz] = rotation.map(f64::from);
    DQuat::from_rotation_z(rz) * DQuat::from_rotation_y(ry) * DQuat::from_rotation_x(rx)
}

/// The height the rule of mission-notes §5.4 gives `o` at its position
/// `o.position[0..2]`, turned by `o.rotation` (module docs). `footing` is
/// its model's ([`Footing`]); `scenery_offset` the offset above the ground
/// a scenery object keeps ([`scenery_offset`] of its old position, or
/// [`record_offset`] for a new one; unused for kinds 0 and 1).
pub fn grounded_z(
    ground: &Ground<'_>,
    o: &PlacedObject,
    footing: &Footing,
    scenery_offset: f32,
) -> Height {
    let [x, y, _] = o.position;
    if o.kind == 1 && (o.host != -1 || o.vertex != -1) {
        return Height::Kept("a unit inside a building stands at its hall-way vertex");
    }
    if o.kind == 0 && o.start_flag & 1 != 0 {
        return Height::Kept("a building with its start flag set keeps its stored height");
    }
    let q = turn(o.rotation);
    let (z, rule) = match o.kind {
        0 => match &footing.outer_ring {
            Some(ring) if ring.len() >= 3 => {
                let world: Vec<[f32; 2]> = ring
                    .iter()
                    .map(|p| {
                        let v = q * DVec3::new(f64::from(p[0]), f64::from(p[1]), 0.0);
                        [x + v.x as f32, y + v.y as f32]
                    })
                    .collect();
                (ground.mean_along(&world, RING_STEP), Rule::BuildingRing)
            }
            _ => (ground.height_at(x, y), Rule::BuildingOrigin),
        },
        1 => {
            let lowest = footing
                .points
                .iter()
                .map(|p| (q * DVec3::from(p.map(f64::from))).z)
                .fold(f64::INFINITY, f64::min);
            let lowest = if lowest.is_finite() { lowest } else { 0.0 };
            (
                ground
                    .height_at(x, y)
                    .map(|g| (f64::from(g) - lowest) as f32),
                Rule::Unit,
            )
        }
        _ => (
            ground.height_at(x, y).map(|g| g + scenery_offset),
            Rule::Scenery,
        ),
    };
    match z {
        Some(z) if z.is_finite() => Height::Ground { z, rule },
        _ => Height::OffMap,
    }
}

/// The offset of `position`'s z above the ground under it (`None` off the
/// map): what a moved scenery object keeps (§5.4).
pub fn scenery_offset(ground: &Ground<'_>, position: [f32; 3]) -> Option<f32> {
    ground
        .height_at(position[0], position[1])
        .map(|g| position[2] - g)
}

/// The offset above the ground a brand-new scenery object of record `path`
/// takes: the median offset of the mission's placements of that record
/// (kinds 2 and 3, the path compared ignoring case), else 0.
pub fn record_offset(ground: &Ground<'_>, mission: &Mission, path: &[u8]) -> f32 {
    let mut v: Vec<f32> = mission
        .objects
        .iter()
        .filter(|o| o.kind >= 2 && o.path.eq_ignore_ascii_case(path))
        .filter_map(|o| scenery_offset(ground, o.position))
        .collect();
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f32::total_cmp);
    v[v.len() / 2]
}

/// The vertices of every mesh below glTF node `node` of `file`, in that
/// node's own frame (its own transform left out: it is the placement),
/// in game axes (`up`, §5.7): a unit's model as placed, for [`Footing`].
/// Each node is visited once; a vertex accessor that does not read is
/// skipped.
pub fn model_points(file: &GltfFile, node: usize, up: Up) -> Vec<[f32; 3]> {
    let nodes = file.nodes();
    let mut seen = vec![false; nodes.len()];
    let mut out = Vec::new();
    let mut stack: Vec<(usize, DMat4)> = children(file, node)
        .into_iter()
        .map(|c| (c, DMat4::IDENTITY))
        .collect();
    while let Some((i, parent)) = stack.pop() {
        if i >= nodes.len() || std::mem::replace(&mut seen[i], true) {
            continue;
        }
        let m = parent * local_matrix(&nodes[i]);
        stack.extend(children(file, i).into_iter().map(|c| (c, m)));
        let Some(mesh) = nodes[i].get("mesh").and_then(Value::as_u64) else {
            continue;
        };
        let prims = file
            .meshes()
            .get(mesh as usize)
            .and_then(|me| me.get("primitives"))
            .and_then(Value::as_array);
        for p in prims.into_iter().flatten() {
            let Some(a) = p["attributes"]["POSITION"].as_u64() else {
                continue;
            };
            let Ok(acc) = file.accessor(a as usize) else {
                continue;
            };
            if acc.ncomp != 3 {
                continue;
            }
            for v in acc.to_f32().chunks_exact(3) {
                let w = m.transform_point3(DVec3::new(
                    f64::from(v[0]),
                    f64::from(v[1]),
                    f64::from(v[2]),
                ));
                let g = super::back::to_game(up, w);
                out.push(g.map(|c| c as f32));
            }
        }
    }
    out
}

fn children(file: &GltfFile, i: usize) -> Vec<usize> {
    file.nodes()
        .get(i)
        .and_then(|n| n.get("children"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.as_u64().map(|c| c as usize))
        .collect()
}

/// The `.bas` outer ring (x, y in the building's frame) of the building
/// whose unit file is `dat` (a game path, `UNITS\BUILDS\...`): its root
/// component's `objects.rlb` record, or a record that one names on the way
/// to the mesh, holds a `.bas` member (unit-files-notes §5.4). Returns the
/// ring and the files read.
///
/// # Errors
/// Text naming the file, record or entry: no such unit file, record or
/// archive, no `.bas` member, or a `.bas` that is not a BASE ground plan.
pub fn outer_ring(game: &Path, dat: &str) -> Result<(Vec<[f32; 2]>, Vec<PathBuf>), String> {
    use crate::unit::assemble::{Registry, REGISTRY};
    let read = |p: &Path| {
        crate::source::read_regular(p, crate::output::MAX_UPDATE_BYTES)
            .map_err(|e| format!("cannot read {}: {e}", p.display()))
    };
    let dat_path =
        find_in_game(game, dat).ok_or_else(|| format!("{dat} is not in the game folder"))?;
    let unit = crate::unit::dat::read(&read(&dat_path)?).map_err(|e| format!("{dat}: {e}"))?;
    let root = unit
        .components
        .iter()
        .find(|c| c.parent.is_none())
        .ok_or_else(|| format!("{dat}: no root component"))?
        .record_name();
    let reg_path = find_in_game(game, REGISTRY).ok_or_else(|| format!("no {REGISTRY}"))?;
    let reg = Registry::read(&read(&reg_path)?).map_err(|e| e.to_string())?;
    let via = reg
        .mesh_of(&root)
        .map(|m| m.via)
        .unwrap_or_else(|_| vec![root.clone()]);
    let (archive, entry) = via
        .iter()
        .find_map(|r| reg.member(r, "bas"))
        .ok_or_else(|| format!("record {root:?} names no .bas ground plan"))?;
    let arc_path = find_in_game(game, &archive).ok_or_else(|| format!("no {archive}"))?;
    let bytes = read(&arc_path)?;
    let a = crate::nres::read(&bytes, crate::nres::Mode::Tolerant)
        .map_err(|e| format!("{archive}: {e}"))?;
    let k = a
        .find(entry.as_bytes())
        .ok_or_else(|| format!("{archive} has no entry {entry}"))?;
    let plan =
        crate::unit::bas::read(a.entries[k].data).map_err(|e| format!("{archive}:{entry}: {e}"))?;
    let ring = plan.outer.iter().map(|p| [p[0], p[1]]).collect();
    Ok((ring, vec![dat_path, reg_path, arc_path]))
}

/// The map of `mission` (its `Land.msh` under `game`, read as the terrain
/// IR) and its path.
///
/// # Errors
/// `mission.resolve` when the map path names no `Land.msh`; `terrain.*`
/// when it does not decode.
pub fn load_land(game: &Path, mission: &Mission) -> Result<(Land, PathBuf), MissionError> {
    let map = crate::source::decode_name(&mission.map_path);
    let stem = map.rsplit(['\\', '/']).next().unwrap_or("land").to_string();
    let msh = map_dir(&map)
        .and_then(|d| find_in_game(game, &format!("{d}\\{stem}.msh")))
        .ok_or_else(|| {
            MissionError::new(
                "mission.resolve",
                Some("map path".into()),
                format!("{map:?}: no {stem}.msh under {}", game.display()),
            )
        })?;
    let bytes =
        crate::source::read_regular(&msh, crate::output::MAX_UPDATE_BYTES).map_err(|e| {
            MissionError::new(
                "io",
                Some("map".into()),
                format!("cannot read {}: {e}", msh.display()),
            )
        })?;
    let land = crate::terrain::read::decode(&bytes).map_err(|e| {
        MissionError::new(
            e.rule,
            Some("map".into()),
            format!("{}: {e}", msh.display()),
        )
    })?;
    Ok((land, msh))
}

/// The footings of a write-back's models, each found once: units' vertices
/// from the scene msh2gltf makes of the base (`reference`), else from the
/// edited scene's node of the object ([`Footings::with_edited`]: a unit the
/// base does not place, from the asset library or in a new mission),
/// buildings' rings from the game folder.
pub struct Footings<'a> {
    reference: &'a GltfFile,
    up: Up,
    game: &'a Path,
    /// Reference node of each base object index (not hosted).
    nodes: HashMap<usize, usize>,
    /// The edited scene and its placed nodes (`parkan_object` or
    /// `parkan_asset` extras) by name.
    edited: Option<(&'a GltfFile, HashMap<String, usize>)>,
    cache: HashMap<(u32, String), Footing>,
    /// Files read (unit files, objects.rlb, archives).
    pub inputs: Vec<PathBuf>,
}

impl<'a> Footings<'a> {
    /// Footings over the reference scene `reference` (up axis `up`) of a
    /// mission of the game folder `game`.
    pub fn new(reference: &'a GltfFile, up: Up, game: &'a Path) -> Self {
        let mut nodes = HashMap::new();
        for (i, n) in reference.nodes().iter().enumerate() {
            let x = n.get("extras").map(|e| &e[super::extras::OBJECT_KEY]);
            if let Some(k) = x.and_then(|x| x["index"].as_u64()) {
                nodes.entry(k as usize).or_insert(i);
            }
        }
        Footings {
            reference,
            up,
            game,
            nodes,
            edited: None,
            cache: HashMap::new(),
            inputs: Vec::new(),
        }
    }

    /// The same footings, also reading a unit's vertices from its node in
    /// `edited` (the scene being written, its up axis the reference's) when
    /// the reference shows no placement of its model: the model the asset
    /// library put under the node (mission-notes §5.4, §8.7).
    pub fn with_edited(mut self, edited: &'a GltfFile) -> Self {
        let mut by_name = HashMap::new();
        for (i, n) in edited.nodes().iter().enumerate() {
            let ex = n.get("extras");
            let placed = [super::extras::OBJECT_KEY, super::extras::ASSET_KEY]
                .iter()
                .any(|k| ex.and_then(|e| e.get(*k)).is_some());
            if let (true, Some(name)) = (placed, n.get("name").and_then(Value::as_str)) {
                by_name.entry(name.to_string()).or_insert(i);
            }
        }
        self.edited = Some((edited, by_name));
        self
    }

    /// The footing of `o`'s model; `like` is a base object of the same
    /// model shown in the reference (its index), if known.
    pub fn of(&mut self, o: &PlacedObject, like: Option<usize>, base: &Mission) -> &Footing {
        self.of_node(o, like, base, "")
    }

    /// [`Footings::of`], with `node` the name of `o`'s node in the edited
    /// scene ([`Footings::with_edited`]; empty: none).
    pub fn of_node(
        &mut self,
        o: &PlacedObject,
        like: Option<usize>,
        base: &Mission,
        node: &str,
    ) -> &Footing {
        let key = (o.kind, o.path_text().to_lowercase());
        if !self.cache.contains_key(&key) {
            let f = self.find(o, like, base, node);
            self.cache.insert(key.clone(), f);
        }
        &self.cache[&key]
    }

    fn find(
        &mut self,
        o: &PlacedObject,
        like: Option<usize>,
        base: &Mission,
        node: &str,
    ) -> Footing {
        match o.kind {
            0 => match outer_ring(self.game, &o.path_text()) {
                Ok((ring, files)) => {
                    self.inputs.extend(files);
                    Footing {
                        outer_ring: Some(ring),
                        ..Default::default()
                    }
                }
                Err(why) => Footing {
                    note: Some(why),
                    ..Default::default()
                },
            },
            1 => {
                // The given object's node, else any placement of its model.
                let same =
                    |b: &PlacedObject| b.kind == o.kind && b.path.eq_ignore_ascii_case(&o.path);
                let at = like
                    .and_then(|k| self.nodes.get(&k))
                    .or_else(|| {
                        (0..base.objects.len())
                            .filter(|&k| same(&base.objects[k]))
                            .find_map(|k| self.nodes.get(&k))
                    })
                    .copied();
                let mut points =
                    at.map_or_else(Vec::new, |n| model_points(self.reference, n, self.up));
                if let (true, Some((doc, by_name))) = (points.is_empty(), &self.edited) {
                    if let Some(&n) = by_name.get(node) {
                        points = model_points(doc, n, self.up);
                    }
                }
                let note = points.is_empty().then(|| {
                    "no vertices of its model in the base's scene or under its node: its origin set on the ground"
                        .to_string()
                });
                Footing {
                    points,
                    note,
                    ..Default::default()
                }
            }
            _ => Footing::default(),
        }
    }
}

/// The letter and label of a written object for messages: its node's
/// name.
fn describe(node: &str, o: &PlacedObject) -> String {
    if node.is_empty() {
        format!("object {}", o.path_text())
    } else {
        node.to_string()
    }
}

/// Applies the rule to every moved or new object of `w` (an original
/// whose position or turn differs from `base`'s, a copy, an object with no
/// base): with `drop`, sets its z to where the rule puts it; without, a
/// warning names each left more than [`TOLERANCE`] above or below it.
/// Returns one report row per such object: `{node, index, kind, rule, z
/// (as written), ground_z (the rule's), off (the user's z − the rule's),
/// set}`; the warnings (an object off the ground, or off the map, or set
/// down by the approximate rule of a building without a ring) go to
/// `w.warnings`.
pub fn settle(
    w: &mut Written,
    base: &Mission,
    land: &Land,
    footings: &mut Footings<'_>,
    drop: bool,
) -> Vec<Value> {
    let ground = Ground::new(land);
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let n = w.mission.objects.len().min(w.origins.len());
    for i in 0..n {
        let origin = w.origins[i].clone();
        let b = origin.base.and_then(|k| base.objects.get(k));
        let o = w.mission.objects[i].clone();
        let changed =
            origin.new || b.is_none_or(|b| b.position != o.position || b.rotation != o.rotation);
        if !changed || o.kind > 3 {
            continue;
        }
        let offset = match b {
            Some(b) => scenery_offset(&ground, b.position).unwrap_or(0.0),
            None => record_offset(&ground, base, &o.path),
        };
        let footing = footings
            .of_node(&o, origin.base, base, &origin.node)
            .clone();
        let name = describe(&origin.node, &o);
        let (z, rule) = match grounded_z(&ground, &o, &footing, offset) {
            Height::Ground { z, rule } => (z, rule),
            Height::Kept(_) => continue,
            Height::OffMap => {
                notes.push(format!(
                    "{name}: no ground under ({:.2}, {:.2}) (off the map or over a hole): its height is written as is",
                    o.position[0], o.position[1]
                ));
                continue;
            }
        };
        let user = o.position[2];
        let off = user - z;
        let why = footing
            .note
            .as_deref()
            .map_or(String::new(), |n| format!("; {n}"));
        if drop {
            w.mission.objects[i].position[2] = z;
            if let (true, Some(n)) = (off.abs() > 1e-3, &footing.note) {
                notes.push(format!(
                    "{name}: set down by an approximate rule ({}): {n}",
                    rule.text()
                ));
            }
        } else if off.abs() > TOLERANCE {
            let side = if off > 0.0 { "above" } else { "below" };
            notes.push(format!(
                "{name}: {:.2} {side} the ground at ({:.2}, {:.2}) ({}{why}); --drop-to-ground or Blender's Drop to ground sets it down",
                off.abs(),
                o.position[0],
                o.position[1],
                rule.text()
            ));
        }
        rows.push(json!({
            "node": origin.node, "index": i, "kind": o.kind, "rule": rule.text(),
            "note": footing.note, "z": user, "ground_z": z, "off": off, "set": drop,
        }));
    }
    w.warnings.extend(notes);
    rows
}
