//! MSH IR → glTF 2.0 (gltf-mapping.md is normative for every convention
//! used here).
//!
//! [`export`] builds a [`gltf_json::Root`] and one binary buffer from a
//! decoded [`Model`]; [`to_glb`] and [`to_gltf`] serialise the result.
//!
//! - Nodes: one glTF node per Res1 node (glTF node `i` = Res1 node `i`),
//!   parented by `hdr1`, named from Res10 (Windows-1251), TRS = the engine
//!   pose at `t = 0` (msh-animation §3, §4.4) in glTF axes ([`Up`]).
//! - Meshes: one glTF mesh per used Res2 slot, one primitive per Res13
//!   batch, indices = the raw Res6 values, vertex attributes = accessors at
//!   `base_vertex` into one model-wide vertex buffer (msh-core §6.3).
//! - Animation: one glTF animation per model, translation + rotation
//!   channels (LINEAR) per node with a frame map, times `key.time / fps`;
//!   non-canonical tracks are baked at every frame (msh-animation §5).
//! - Materials: one per used `material_index`, doubleSided, metallic 0,
//!   roughness 1, optional embedded PNG base colour texture.
//! - Extras on scene, nodes, meshes and materials let gltf2msh find its way
//!   back (gltf-mapping.md, "Extras").

pub(crate) mod anim;
pub use crate::convention::{axes, Up};
pub(crate) mod bin;
mod budget;
pub mod glb;
mod material;
mod mesh;
pub mod msh_extras;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use gltf_json as json;
use json::validation::USize64;
use json::{Index, Root};

use crate::anim::{AnimError, Sampler};
use crate::convention::{self, ConventionChoices, Conventions, Decided};
use crate::msh::{Model, Node38, Nodes, CELLS, NONE16};

use bin::Bin;
pub use budget::check_finite;
pub use glb::{to_glb, to_gltf};
use mesh::{check_batch, BatchRange, Geometry};

/// Which slot cell a node shows (`--state`, `--lod`, `--all-cells`;
/// gltf-mapping.md "Meshes", format-notes §6 R7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CellChoice {
    /// Damage state `0..3` (intact, damaged, destroyed).
    pub state: u8,
    /// Level `0..5` (LOD 0..3; level 4 = the cockpit view).
    pub lod: u8,
    /// Export every non-empty cell as a child node `<node>.S<state>L<lod>`
    /// (the node itself then gets no mesh).
    pub all_cells: bool,
}

impl CellChoice {
    /// The Res1 slot-matrix index `5 * state + lod`.
    pub fn cell(&self) -> usize {
        usize::from(self.state) * 5 + usize::from(self.lod)
    }
}

/// The glTF name of the child node that carries cell `cell` of node `node`
/// with `--all-cells`: `<node>.S<state>L<lod>`. [`parse_cell_name`] is its
/// inverse.
pub fn cell_name(node: &str, cell: usize) -> String {
    format!("{node}.S{}L{}", cell / 5, cell % 5)
}

/// Inverse of [`cell_name`]: `Some((node, cell))` for `<node>.S<s>L<l>`
/// with `s < 3`, `l < 5`.
pub fn parse_cell_name(name: &str) -> Option<(&str, usize)> {
    let (node, tail) = name.rsplit_once(".S")?;
    let (s, l) = tail.split_once('L')?;
    let (s, l): (usize, usize) = (s.parse().ok()?, l.parse().ok()?);
    (s < 3 && l < 5 && !node.is_empty()).then_some((node, s * 5 + l))
}

/// Options of one export.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportOptions {
    /// Frames per second of the glTF timeline (`--fps`, default 24): a key
    /// at frame `f` goes to `f / fps` seconds.
    pub fps: f32,
    /// Axis convention.
    pub up: Up,
    /// The model's conventions as decided by the caller
    /// ([`crate::convention::detect`]); `None`: decided here from the model
    /// alone (no WEAR table).
    pub conventions: Option<Decided>,
    /// Whether batches flagged lit (format-notes §6 R2) are lit: the WEAR
    /// has a LIGHTMAPS row, or there is no WEAR. Also needs Res18.
    pub lightmaps: bool,
    /// Cell selection.
    pub cells: CellChoice,
    /// Where the model came from (`file` or `ARCHIVE:ENTRY`), for the scene extras.
    pub source: String,
    /// Hex SHA-256 of the model bytes, for the scene extras.
    pub sha256: String,
    /// Model stem: scene, animation and legacy node name.
    pub name: String,
    /// Work budget of this export (units, [`crate::limits`]; `--max-work`);
    /// over it the export fails with `limits.work`.
    pub max_work: u64,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            fps: 24.0,
            up: Up::Y,
            conventions: None,
            lightmaps: true,
            cells: CellChoice::default(),
            source: String::new(),
            sha256: String::new(),
            name: String::new(),
            max_work: crate::limits::DEFAULT_MAX_WORK,
        }
    }
}

/// A decoded texture, ready to embed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextureImage {
    /// Texture name (Textures.lib or LightMap.lib entry); images are shared by name.
    pub name: String,
    /// PNG file bytes.
    pub png: std::sync::Arc<[u8]>,
    /// True when some texel is not opaque.
    pub has_alpha: bool,
}

/// The material a batch draws with: its key (format-notes §6 R2) and
/// whether it is lit by a lightmap. One glTF material per used pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct BatchMaterial {
    /// The material key (a WEAR id or row, format-notes §6 R4).
    pub key: u16,
    /// Lit: lightmap byte set, Res18 present, and a LIGHTMAPS row (or no WEAR).
    pub lit: bool,
}

/// The MAT0 blend mode, from the Material.lib directory entry's attr1
/// (format-notes §6 R10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Blend {
    /// attr1 0 or 2 (2: the texture's alpha is discarded): `OPAQUE`.
    #[default]
    Opaque,
    /// attr1 4 or 5: `BLEND`.
    Alpha,
    /// attr1 8: `BLEND`, with `"blend": "additive"` in the extras.
    Additive,
}

impl Blend {
    /// attr1 → blend mode (unknown values: opaque).
    pub fn from_attr1(attr1: u32) -> Blend {
        match attr1 {
            4 | 5 => Blend::Alpha,
            8 => Blend::Additive,
            _ => Blend::Opaque,
        }
    }
}

/// What the caller knows about one used [`BatchMaterial`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ExportMaterial {
    /// The batch material this describes.
    pub key: BatchMaterial,
    /// WEAR row name.
    pub name: Option<String>,
    /// Linear RGBA base colour factor: MAT0 phase 0 `p[4..6] / 255`,
    /// opacity `p[3] / 100` (format-notes §6 R9).
    pub base_color: Option<[f32; 4]>,
    /// Blend mode (format-notes §6 R10).
    pub blend: Blend,
    /// Base colour texture.
    pub texture: Option<Arc<TextureImage>>,
    /// The LightMap.lib entry name (WEAR LIGHTMAPS row 0) of a lit material.
    pub lightmap_name: Option<String>,
    /// The lightmap image (`occlusionTexture`, `texCoord 1`).
    pub lightmap: Option<Arc<TextureImage>>,
}

/// Summary of an export.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ExportReport {
    /// The conventions used and how they were decided.
    pub conventions: Option<Decided>,
    /// Nodes whose track was baked (non-canonical tracks).
    pub baked_nodes: Vec<usize>,
    /// Human-readable warnings (zero normals, legacy node table, ...).
    pub warnings: Vec<String>,
    /// glTF nodes written.
    pub nodes: usize,
    /// glTF meshes written.
    pub meshes: usize,
    /// glTF primitives written.
    pub primitives: usize,
    /// Nodes with animation channels.
    pub animated_nodes: usize,
}

/// An exported model: the glTF document (its single buffer, when any, has
/// no URI yet) and the buffer bytes (length a multiple of 4).
#[derive(Debug, Clone)]
pub struct Exported {
    /// The glTF document.
    pub root: Root,
    /// Buffer 0.
    pub bin: Vec<u8>,
    /// Summary.
    pub report: ExportReport,
}

/// Export errors. Each has a stable [`ExportError::rule`] id.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The animation runtime rejected the model (`msh.anim.*`,
    /// `msh.hierarchy.*`).
    #[error(transparent)]
    Anim(#[from] AnimError),
    /// The model violates an invariant the export relies on.
    #[error("{rule}: {detail}")]
    Model {
        /// Stable rule id (`msh.index_range`, `msh.slot_index`, ...).
        rule: &'static str,
        /// What was found (stream, record, values).
        detail: String,
    },
    /// JSON serialisation failed (`gltf.json`).
    #[error("gltf.json: {0}")]
    Json(#[from] serde_json::Error),
}

impl ExportError {
    pub(crate) fn model(rule: &'static str, detail: String) -> Self {
        ExportError::Model { rule, detail }
    }

    /// Stable rule id.
    pub fn rule(&self) -> &'static str {
        match self {
            ExportError::Anim(e) => e.rule,
            ExportError::Model { rule, .. } => rule,
            ExportError::Json(_) => "gltf.json",
        }
    }
}

/// JSON value → glTF extras.
pub(crate) fn extras(v: &serde_json::Value) -> Result<json::Extras, ExportError> {
    Ok(Some(json::extras::RawValue::from_string(
        serde_json::to_string(v)?,
    )?))
}

/// Unique glTF names: a name already given gets a `.<k>` suffix, the
/// smallest `k` not yet used for that base (linear in the number of names).
#[derive(Debug, Default)]
pub struct Namer {
    used: HashSet<String>,
    next: HashMap<String, usize>,
}

impl Namer {
    /// `base`, or `base.<k>` when taken; the result is marked as taken.
    pub fn unique(&mut self, base: String) -> String {
        if self.used.insert(base.clone()) {
            return base;
        }
        let k = self.next.entry(base.clone()).or_insert(1);
        loop {
            let name = format!("{base}.{k}");
            *k += 1;
            if self.used.insert(name.clone()) {
                return name;
            }
        }
    }
}

/// The glTF names of the first `n` Res1 nodes (gltf-mapping.md "Nodes",
/// format-notes §6 R1): the name `names` reads ([`NameSource::node_name`]:
/// Res9 in retail files, Res10 in seed ones) decoded from Windows-1251,
/// `node<i>` when empty, made unique by a `.<k>` suffix against `namer`.
/// `gltf2msh` matches nodes by these names.
///
/// [`NameSource::node_name`]: crate::convention::NameSource::node_name
pub fn node_names(
    model: &Model,
    names: convention::NameSource,
    n: usize,
    namer: &mut Namer,
) -> Vec<String> {
    (0..n)
        .map(|i| {
            let base = match names.node_name(model, i) {
                Some(b) => convention::decode_name(b),
                None => format!("node{i}"),
            };
            namer.unique(base)
        })
        .collect()
}

/// `hdr0` bit of a cockpit node (format-notes §6 R11): geometry only at
/// level 4.
pub const COCKPIT_FLAG: u16 = 0x20;

/// Checks `hdr1` links: in range and acyclic (`msh.hierarchy.*`), in one
/// pass over each node's chain with a memo of finished nodes (linear: a
/// 65 000-deep chain is walked once).
fn check_hierarchy(parents: &[u16]) -> Result<(), ExportError> {
    let n = parents.len();
    for (i, &p) in parents.iter().enumerate() {
        if p != NONE16 && usize::from(p) >= n {
            return Err(ExportError::model(
                "msh.hierarchy.parent_range",
                format!("Res1 node {i}: parent {p} outside the {n} nodes"),
            ));
        }
    }
    // 0 = unvisited, 1 = on the current chain, 2 = reaches a root.
    let mut state = vec![0u8; n];
    let mut chain: Vec<usize> = Vec::new();
    for i in 0..n {
        chain.clear();
        let mut cur = i;
        while state[cur] == 0 {
            state[cur] = 1;
            chain.push(cur);
            match parents[cur] {
                NONE16 => break,
                p => cur = usize::from(p),
            }
        }
        if state[cur] == 1 && parents[cur] != NONE16 {
            return Err(ExportError::model(
                "msh.hierarchy.cycle",
                format!("Res1 node {cur}: parent chain loops"),
            ));
        }
        for &c in &chain {
            state[c] = 2;
        }
    }
    Ok(())
}

/// The batch ranges of a slot, empty batches left out.
fn slot_ranges(model: &Model, s: usize, empty: &mut usize) -> Result<Vec<BatchRange>, ExportError> {
    let slot = model.slots[s];
    let first = usize::from(slot.batch_start);
    let count = usize::from(slot.batch_count);
    if first + count > model.batches.len() {
        return Err(ExportError::model(
            "msh.batch_range",
            format!(
                "Res2 slot {s}: batches {first}+{count} outside the {} Res13 batches",
                model.batches.len()
            ),
        ));
    }
    let mut v = Vec::with_capacity(count);
    for b in first..first + count {
        match check_batch(model, b)? {
            Some(r) => v.push(r),
            None => *empty += 1,
        }
    }
    Ok(v)
}

fn used_materials<'a>(ranges: impl Iterator<Item = &'a BatchRange>) -> Vec<BatchMaterial> {
    let set: BTreeSet<BatchMaterial> = ranges.map(|r| r.material).collect();
    set.into_iter().collect()
}

/// The [`BatchMaterial`] of a batch under `conv` (format-notes §6 R2, R5).
pub fn batch_material(
    conv: &Conventions,
    lit_allowed: bool,
    b: &crate::msh::Batch20,
) -> BatchMaterial {
    BatchMaterial {
        key: conv.batch.material_key(b),
        lit: lit_allowed && conv.batch.lightmap_row(b).is_some(),
    }
}

fn trs_node(
    name: String,
    translation: Option<[f32; 3]>,
    rotation: Option<[f32; 4]>,
    mesh: Option<Index<json::Mesh>>,
    extras: json::Extras,
) -> json::Node {
    json::Node {
        children: None,
        extras,
        mesh,
        name: Some(name),
        rotation: rotation.map(json::scene::UnitQuaternion),
        translation,
        ..Default::default()
    }
}

/// Exports `model` to a glTF document per gltf-mapping.md.
///
/// `materials` describes the material indices the caller knows (WEAR name,
/// colour, texture); any other index used by an exported batch gets a
/// default material `material<i>`.
///
/// # Errors
/// - [`ExportError::Anim`] when the animation runtime rejects the model
///   (fallback key or frame map out of range, bad hierarchy);
/// - `msh.slot_index`, `msh.batch_range`, `msh.index_range`,
///   `msh.index_count`, `msh.hierarchy.*` for out-of-range references;
/// - `gltf.options` for an invalid `fps`, `state` or `lod`.
pub fn export(
    model: &Model,
    materials: &[ExportMaterial],
    opts: &ExportOptions,
) -> Result<Exported, ExportError> {
    check_options(opts)?;
    let decided = match &opts.conventions {
        Some(d) => d.clone(),
        None => convention::detect(model, None, &ConventionChoices::default()),
    };
    let mut x = Export::begin(model, materials, opts, decided)?;
    match &model.nodes {
        Nodes::Legacy24 { raw } => x.legacy24(raw)?,
        Nodes::Node38(nodes) => x.node38(nodes)?,
    }
    x.finish()
}

/// Checks the options an export cannot run with.
///
/// # Errors
/// `gltf.options` when `fps` is not a positive number, or the cell's state
/// or level is outside 3 states x 5 levels (format-notes §6 R7).
fn check_options(opts: &ExportOptions) -> Result<(), ExportError> {
    if !(opts.fps.is_finite() && opts.fps > 0.0) {
        return Err(ExportError::model(
            "gltf.options",
            format!("fps {} is not a positive number", opts.fps),
        ));
    }
    if opts.cells.state >= 3 || opts.cells.lod >= 5 {
        return Err(ExportError::model(
            "gltf.options",
            format!(
                "cell state {} lod {} outside 3 states x 5 levels",
                opts.cells.state, opts.cells.lod
            ),
        ));
    }
    Ok(())
}

/// Which `(node, cell, slot)` triples a Node38 model shows: the chosen cell
/// of every node, or every non-empty cell with `--all-cells`
/// (gltf-mapping.md "Meshes", format-notes §6 R7).
///
/// # Errors
/// `msh.slot_index` when a cell names a slot outside Res2.
fn shown_cells(
    model: &Model,
    nodes: &[Node38],
    cells: CellChoice,
) -> Result<Vec<(usize, usize, usize)>, ExportError> {
    let chosen = cells.cell();
    let mut shown: Vec<(usize, usize, usize)> = Vec::new();
    for (i, nd) in nodes.iter().enumerate() {
        for c in 0..CELLS {
            if !cells.all_cells && c != chosen {
                continue;
            }
            let s = nd.slots[c];
            if s == NONE16 {
                continue;
            }
            if usize::from(s) >= model.slots.len() {
                return Err(ExportError::model(
                    "msh.slot_index",
                    format!(
                        "Res1 node {i} cell {c}: slot {s} outside the {} Res2 slots",
                        model.slots.len()
                    ),
                ));
            }
            shown.push((i, c, usize::from(s)));
        }
    }
    Ok(shown)
}

/// The glTF material of every batch material, by key.
type MaterialMap = BTreeMap<BatchMaterial, Index<json::Material>>;

/// One export in progress: what every step reads (model, caller's
/// materials, options, decided conventions) and what they build (the glTF
/// document, buffer 0, the model-wide geometry views, the report).
struct Export<'m> {
    /// The model.
    model: &'m Model,
    /// What the caller knows about the used materials.
    materials: &'m [ExportMaterial],
    /// The options.
    opts: &'m ExportOptions,
    /// The conventions and how they were decided.
    decided: Decided,
    /// `decided.conventions`.
    conv: Conventions,
    /// Lit batches are lit: `opts.lightmaps` and Res18 present.
    lit_allowed: bool,
    /// Res5 covers every vertex (`TEXCOORD_0`).
    has_uv: bool,
    /// Res18 covers every vertex (`TEXCOORD_1`).
    has_uv1: bool,
    /// The document.
    root: Root,
    /// Buffer 0.
    bin: Bin,
    /// The summary.
    report: ExportReport,
    /// Vertex and index views and accessor caches.
    geo: Geometry<'m>,
    /// Empty Res13 batches left out.
    empty_batches: usize,
    /// The scene's root nodes.
    scene_nodes: Vec<Index<json::Node>>,
}

impl<'m> Export<'m> {
    /// Starts the export: the report and the geometry views (vertex streams
    /// and the Res6 index view, [`Geometry::write`]).
    ///
    /// # Errors
    /// Those of [`Geometry::write`].
    fn begin(
        model: &'m Model,
        materials: &'m [ExportMaterial],
        opts: &'m ExportOptions,
        decided: Decided,
    ) -> Result<Self, ExportError> {
        let conv = decided.conventions;
        let mut root = Root::default();
        let mut bin = Bin::default();
        let mut report = ExportReport {
            conventions: Some(decided.clone()),
            ..Default::default()
        };
        let geo = Geometry::write(
            &mut root,
            &mut bin,
            model,
            opts.up,
            conv.uv,
            &mut report.warnings,
        )?;
        let covers = |n: Option<usize>| n.is_some_and(|n| n == model.positions.len() && n != 0);
        Ok(Export {
            model,
            materials,
            opts,
            decided,
            conv,
            lit_allowed: opts.lightmaps && model.res18.is_some(),
            has_uv: covers(model.uvs.as_ref().map(Vec::len)),
            has_uv1: covers(model.res18.as_ref().map(Vec::len)),
            root,
            bin,
            report,
            geo,
            empty_batches: 0,
            scene_nodes: Vec::new(),
        })
    }

    /// Sets each range's [`BatchMaterial`] under the conventions.
    fn set_materials(&self, ranges: &mut [BatchRange]) {
        for r in ranges {
            r.material = batch_material(&self.conv, self.lit_allowed, &r.batch);
        }
    }

    /// One glTF material per batch material used by `ranges`
    /// ([`material::build`]).
    ///
    /// # Errors
    /// Those of [`material::build`].
    fn build_materials<'r>(
        &mut self,
        ranges: impl Iterator<Item = &'r BatchRange>,
    ) -> Result<MaterialMap, ExportError> {
        material::build(
            &mut self.root,
            &mut self.bin,
            &used_materials(ranges),
            self.materials,
            self.has_uv,
            self.has_uv1,
            &mut self.report.warnings,
        )
    }

    /// The legacy 24-byte node table (format-notes §2, layout unknown): one
    /// untransformed root node holding every batch, with a warning.
    ///
    /// # Errors
    /// `msh.index_range` / `msh.index_count` from [`check_batch`]; those of
    /// the material and mesh builders.
    fn legacy24(&mut self, raw: &[u8]) -> Result<(), ExportError> {
        let model = self.model;
        let mut ranges: Vec<BatchRange> = (0..model.batches.len())
            .filter_map(|b| check_batch(model, b).transpose())
            .collect::<Result<_, _>>()?;
        self.set_materials(&mut ranges);
        self.empty_batches = model.batches.len() - ranges.len();
        let mats = self.build_materials(ranges.iter())?;
        let name = if self.opts.name.is_empty() {
            "model".to_string()
        } else {
            self.opts.name.clone()
        };
        let mesh = self.geo.mesh(
            &mut self.root,
            &mut self.bin,
            name.clone(),
            &ranges,
            &mats,
            serde_json::json!({"msh": {"legacy24": true, "batches": [0, model.batches.len()]}}),
        )?;
        let node_extras =
            extras(&serde_json::json!({"msh": {"legacy24": true, "records": raw.len() / 24}}))?;
        self.scene_nodes.push(
            self.root
                .push(trs_node(name, None, None, mesh, node_extras)),
        );
        self.report.warnings.push(format!(
            "Res1: legacy 24-byte node table ({} records, layout unknown): exported as one untransformed root node holding all {} batches",
            raw.len() / 24,
            model.batches.len()
        ));
        Ok(())
    }

    /// The Node38 table (gltf-mapping.md "Nodes", "Meshes", "Animation"):
    /// check the hierarchy, choose the cells, spend the budget, build the
    /// slot meshes, then the nodes (glTF node `i` = Res1 node `i`), the cell
    /// children, the parent links and the animation.
    ///
    /// # Errors
    /// `msh.hierarchy.*`, `msh.slot_index`, `msh.batch_range`,
    /// `limits.work`, [`ExportError::Anim`], and those of the builders.
    fn node38(&mut self, nodes: &[Node38]) -> Result<(), ExportError> {
        let model = self.model;
        let n = nodes.len();
        let parents: Vec<u16> = nodes.iter().map(|nd| nd.parent).collect();
        check_hierarchy(&parents)?;
        let sampler = Sampler::new(model, self.conv.quat)?;
        let tracks = crate::anim::tracks(model)?;
        let shown = shown_cells(model, nodes, self.opts.cells)?;
        let used_slots: BTreeSet<usize> = shown.iter().map(|&(_, _, s)| s).collect();
        // The budget is spent before any per-primitive data is built.
        let mut work = crate::limits::Budget::new(self.opts.max_work);
        budget::spend_structure(
            &mut work,
            n + shown.len(),
            used_slots
                .iter()
                .map(|&s| usize::from(model.slots[s].batch_count))
                .sum(),
            self.bin.data.len(),
        )?;
        let slot_mesh = self.slot_meshes(&used_slots)?;

        let mut namer = Namer::default();
        let names = node_names(model, self.conv.names, n, &mut namer);
        let mut children: Vec<Vec<Index<json::Node>>> = vec![Vec::new(); n];
        for (i, &p) in parents.iter().enumerate() {
            if p == NONE16 {
                self.scene_nodes.push(Index::new(i as u32));
            } else {
                children[usize::from(p)].push(Index::new(i as u32));
            }
        }
        self.push_nodes(nodes, &sampler, &slot_mesh, &names)?;
        if self.opts.cells.all_cells {
            for &(i, c, s) in &shown {
                let Some(mesh) = slot_mesh.get(&s).copied().flatten() else {
                    continue;
                };
                let name = namer.unique(cell_name(&names[i], c));
                let ex = extras(&serde_json::json!({"msh": {"node": i, "cell": c}}))?;
                let idx = self.root.push(trs_node(name, None, None, Some(mesh), ex));
                children[i].push(idx);
            }
        }
        for (i, ch) in children.into_iter().enumerate() {
            if !ch.is_empty() {
                self.root.nodes[i].children = Some(ch);
            }
        }
        self.animation(&sampler, &tracks, &mut work)
    }

    /// The meshes of the used slots: each slot's batch ranges (empty
    /// batches counted and left out), their materials, then one glTF mesh
    /// per slot (`None` when every batch is empty).
    ///
    /// # Errors
    /// `msh.batch_range`, `msh.index_range`, `msh.index_count`; those of the
    /// material and mesh builders.
    fn slot_meshes(
        &mut self,
        used_slots: &BTreeSet<usize>,
    ) -> Result<BTreeMap<usize, Option<Index<json::Mesh>>>, ExportError> {
        let model = self.model;
        let mut slot_batches: BTreeMap<usize, Vec<BatchRange>> = BTreeMap::new();
        for &s in used_slots {
            let mut ranges = slot_ranges(model, s, &mut self.empty_batches)?;
            self.set_materials(&mut ranges);
            slot_batches.insert(s, ranges);
        }
        let mats = self.build_materials(slot_batches.values().flatten())?;
        let mut slot_mesh: BTreeMap<usize, Option<Index<json::Mesh>>> = BTreeMap::new();
        for (&s, ranges) in &slot_batches {
            let sl = model.slots[s];
            let ex = serde_json::json!({"msh": {"slot": s, "batches": [sl.batch_start, sl.batch_count]}});
            slot_mesh.insert(
                s,
                self.geo.mesh(
                    &mut self.root,
                    &mut self.bin,
                    format!("slot{s}"),
                    ranges,
                    &mats,
                    ex,
                )?,
            );
        }
        Ok(slot_mesh)
    }

    /// One glTF node per Res1 node, in order: the `t = 0` pose in glTF axes
    /// (msh-animation §3, §4.4), the chosen cell's mesh (none with
    /// `--all-cells`), extras with the node index, flags, label and cockpit
    /// bit (format-notes §6 R11).
    ///
    /// # Errors
    /// `gltf.json` when the extras do not serialise.
    fn push_nodes(
        &mut self,
        nodes: &[Node38],
        sampler: &Sampler<'_>,
        slot_mesh: &BTreeMap<usize, Option<Index<json::Mesh>>>,
        names: &[String],
    ) -> Result<(), ExportError> {
        let up = self.opts.up;
        let chosen = self.opts.cells.cell();
        for (i, nd) in nodes.iter().enumerate() {
            let pose = sampler.node_pose(i, 0.0);
            let t = axes::vec3(up, pose.pos);
            let q = axes::engine_quat_to_gltf(up, pose.q);
            let mesh = if self.opts.cells.all_cells {
                None
            } else {
                nd.slots
                    .get(chosen)
                    .and_then(|&s| slot_mesh.get(&usize::from(s)).copied().flatten())
            };
            let label = self
                .conv
                .names
                .label(self.model, i)
                .map(convention::decode_name);
            let mut ex = serde_json::json!({"msh": {"node": i, "flags": nd.flags}});
            if let Some(l) = label {
                ex["msh"]["label"] = serde_json::Value::String(l);
            }
            if nd.flags & COCKPIT_FLAG != 0 {
                ex["msh"]["cockpit"] = serde_json::Value::Bool(true);
            }
            let ex = extras(&ex)?;
            self.root
                .push(trs_node(names[i].clone(), Some(t), Some(q), mesh, ex));
        }
        Ok(())
    }

    /// The model's animation ([`anim::build`]) and its report lines.
    ///
    /// # Errors
    /// `limits.work`, [`ExportError::Anim`].
    fn animation(
        &mut self,
        sampler: &Sampler<'_>,
        tracks: &[crate::anim::Track],
        work: &mut crate::limits::Budget,
    ) -> Result<(), ExportError> {
        let opts = self.opts;
        let a = anim::build(
            &mut self.root,
            &mut self.bin,
            sampler,
            tracks,
            opts.up,
            opts.fps,
            &opts.name,
            work,
        )?;
        self.report.animated_nodes = a.animated;
        self.report.baked_nodes = a.baked;
        if !self.report.baked_nodes.is_empty() {
            self.report.warnings.push(format!(
                "Res8/Res19: non-canonical tracks of nodes {:?} baked at every frame",
                self.report.baked_nodes
            ));
        }
        Ok(())
    }

    /// Finishes the document: the empty-batch warning, buffer 0 (aligned),
    /// the scene with its extras, the asset and the report's counts.
    /// Finiteness is not checked here but once, when the document is
    /// serialised ([`to_glb`], [`to_gltf`]): a unit's `.ctl`/`.cpt`
    /// siblings add nodes and animations after this.
    ///
    /// # Errors
    /// `gltf.json`.
    fn finish(self) -> Result<Exported, ExportError> {
        let Export {
            opts,
            decided,
            lit_allowed,
            mut root,
            mut bin,
            mut report,
            geo,
            empty_batches,
            scene_nodes,
            ..
        } = self;
        if empty_batches > 0 {
            report.warnings.push(format!(
                "Res13: {empty_batches} empty batches (index_count 0) left out"
            ));
        }
        bin.align4();
        if !bin.data.is_empty() {
            root.push(json::Buffer {
                byte_length: USize64(bin.data.len() as u64),
                name: None,
                uri: None,
                extensions: None,
                extras: None,
            });
        }
        let scene = root.push(json::Scene {
            extensions: None,
            extras: extras(&scene_extras(opts, &decided, lit_allowed))?,
            name: (!opts.name.is_empty()).then(|| opts.name.clone()),
            nodes: scene_nodes,
        });
        root.scene = Some(scene);
        root.asset = json::Asset {
            generator: Some(format!("mshgltf {}", env!("CARGO_PKG_VERSION"))),
            ..Default::default()
        };
        report.nodes = root.nodes.len();
        report.meshes = root.meshes.len();
        report.primitives = geo.primitives;
        Ok(Exported {
            root,
            bin: bin.data,
            report,
        })
    }
}

/// The scene's extras (gltf-mapping.md, "Extras"): fps, up axis, quaternion
/// layout, source, SHA-256, lightmaps, the conventions and how each was
/// decided.
fn scene_extras(opts: &ExportOptions, decided: &Decided, lit_allowed: bool) -> serde_json::Value {
    let conv = decided.conventions;
    serde_json::json!({"msh": {
        "fps": opts.fps,
        "up": match opts.up { Up::Y => "y", Up::Z => "z" },
        "quat_layout": convention::quat_str(conv.quat),
        "source": opts.source,
        "sha256": opts.sha256,
        "lightmaps": lit_allowed,
        "conventions": conv,
        "conventions_decided": {
            "names": decided.names, "material": decided.material, "quat": decided.quat,
            "wear_key": decided.wear_key, "uv": decided.uv,
        },
    }, "conventions": conv})
}
