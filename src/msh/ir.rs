//! The canonical MSH IR (msh-core §9): every stream decoded into typed
//! records, every unknown field and unknown stream kept raw, so that
//! `encode(decode(bytes)) == bytes` for every valid model.
//!
//! The IR is the single source of truth between the container and glTF:
//! exporters and importers read and edit these structures, never bytes.

/// Sentinel for "none" in u16 index fields (parent, map start, slot index,
/// triangle link).
pub const NONE16: u16 = 0xFFFF;

/// Number of slot cells per node: `cell = 5*a + b` (msh-core §5.1); real
/// files: a = damage state 0..2, b = level 0..4 (format-notes §3, §6 R7; the
/// seed reads 3 LODs x 5 groups).
pub const CELLS: usize = 15;

/// Stream type ids (msh-core §3.1).
pub mod res {
    /// Node table.
    pub const NODES: u32 = 1;
    /// Model header + slots.
    pub const SLOTS: u32 = 2;
    /// Positions.
    pub const POSITIONS: u32 = 3;
    /// Packed normals.
    pub const NORMALS: u32 = 4;
    /// Packed UV0.
    pub const UVS: u32 = 5;
    /// Index buffer.
    pub const INDICES: u32 = 6;
    /// Triangle descriptors.
    pub const TRIS: u32 = 7;
    /// Animation key pool.
    pub const KEYS: u32 = 8;
    /// Node names.
    pub const NAMES: u32 = 10;
    /// Batch table.
    pub const BATCHES: u32 = 13;
    /// Per-vertex 8-byte stream of unknown meaning.
    pub const RES15: u32 = 15;
    /// Per-vertex 8-byte stream (tangent/bitangent?), never seen.
    pub const RES16: u32 = 16;
    /// Per-vertex 4-byte stream of lightmapped models.
    pub const RES18: u32 = 18;
    /// Animation frame map.
    pub const FRAME_MAP: u32 = 19;
}

/// One directory record of the model NRes, in file order. Known streams are
/// re-encoded from the typed fields of [`Model`]; `raw` holds the payload of
/// streams the IR does not decode (types 9, 17, 20 and any other). The type
/// is shared with the terrain IR and lives beside the container.
pub use crate::nres::StreamEntry;

/// `Res1` record, stride 38 (msh-core §5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Node38 {
    /// `hdr0`: node flags (meaning not established; kept).
    pub flags: u16,
    /// `hdr1`: parent node index or [`NONE16`].
    pub parent: u16,
    /// `hdr2`: start of this node's frame map in Res19, or [`NONE16`].
    pub map_start: u16,
    /// `hdr3`: fallback key index in Res8 (the last key of the node's track).
    pub fallback_key: u16,
    /// Slot index per cell `5*state + lod`, or [`NONE16`].
    pub slots: [u16; CELLS],
}

/// The node table: the 38-byte layout, or the legacy 24-byte layout of
/// unknown meaning copied through raw (format-notes §2, `MTCHECK.MSH`).
#[derive(Debug, Clone, PartialEq)]
pub enum Nodes {
    /// Regular `Res1.attr3 == 38` table.
    Node38(Vec<Node38>),
    /// `Res1.attr3 == 24`: raw payload; `count` = payload / 24.
    Legacy24 {
        /// The Res1 payload as stored.
        raw: Vec<u8>,
    },
}

impl Nodes {
    /// Number of node records.
    pub fn len(&self) -> usize {
        match self {
            Nodes::Node38(v) => v.len(),
            Nodes::Legacy24 { raw } => raw.len() / 24,
        }
    }
    /// True when there are no nodes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// `Res2` header, 0x8C bytes, model space (msh-core §5.2.1).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Res2Header {
    /// Eight hull corners.
    pub hull: [[f32; 3]; 8],
    /// Bounding sphere centre.
    pub sphere_center: [f32; 3],
    /// Bounding sphere radius.
    pub sphere_radius: f32,
    /// Capsule segment start.
    pub capsule_a: [f32; 3],
    /// Capsule segment end.
    pub capsule_b: [f32; 3],
    /// Capsule radius.
    pub capsule_radius: f32,
}

/// `Slot68`: one geometry slot (msh-core §5.2.2). Bounds are node-local.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Slot68 {
    /// First triangle descriptor (Res7) of the slot.
    pub tri_start: u16,
    /// Number of triangle descriptors.
    pub tri_count: u16,
    /// First batch (Res13).
    pub batch_start: u16,
    /// Number of batches.
    pub batch_count: u16,
    /// AABB minimum.
    pub aabb_min: [f32; 3],
    /// AABB maximum.
    pub aabb_max: [f32; 3],
    /// Sphere centre.
    pub sphere_center: [f32; 3],
    /// Sphere radius.
    pub sphere_radius: f32,
    /// `unk30..unk40`, kept raw (one peer reads the first two as f32 area and volume).
    pub tail: [u32; 5],
}

/// `TriDesc16`: one triangle descriptor (msh-core §5.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TriDesc16 {
    /// Triangle flags (kept).
    pub flags: u16,
    /// Neighbour triangle per edge, or [`NONE16`].
    pub links: [u16; 3],
    /// Face normal, `i16 / 32767`.
    pub normal: [i16; 3],
    /// Three 2-bit selectors (3 = none).
    pub sel: u16,
}

/// `Batch20`: one draw batch (msh-core §5.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Batch20 {
    /// Batch flags (kept).
    pub flags: u16,
    /// Row of the model's WEAR table.
    pub material_index: u16,
    /// `unk4` (kept).
    pub opaque4: u16,
    /// `unk6` (kept).
    pub opaque6: u16,
    /// Number of Res6 indices.
    pub index_count: u16,
    /// First Res6 index (in elements).
    pub index_start: u32,
    /// `unk14` (kept; one peer reads a vertex count).
    pub opaque14: u16,
    /// Added to every index of the batch.
    pub base_vertex: u32,
}

/// `AnimKey24`: one key of the Res8 pool (msh-animation §2.1). The
/// quaternion stays raw; its interpretation is the `--quat-layout`
/// convention (gltf-mapping.md).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct AnimKey24 {
    /// Node-local translation.
    pub pos: [f32; 3],
    /// Key time in frames.
    pub time: f32,
    /// Stored i16 quaternion components in file order (`/32767`).
    pub q: [i16; 4],
}

/// A decoded MSH model (msh-core §9, msh-animation §6).
///
/// Per-vertex streams (`normals`, `uvs`, `res15`, `res16`, `res18`) have
/// `positions.len()` records when present (validated). Optional streams
/// are `None` when the model has no such entry.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Model {
    /// Directory records in file order (names, attributes, raw payloads of
    /// undecoded streams).
    pub entries: Vec<StreamEntry>,
    /// Res1.
    pub nodes: Nodes,
    /// Res2 header.
    pub header: Res2Header,
    /// Res2 slot table.
    pub slots: Vec<Slot68>,
    /// Res3, node-local positions.
    pub positions: Vec<[f32; 3]>,
    /// Res4, `PackedNormal4` (x, y, z `/127`, 4th byte kept).
    pub normals: Option<Vec<[i8; 4]>>,
    /// Res5, `PackedUV4` (`/1024`).
    pub uvs: Option<Vec<[i16; 2]>>,
    /// Res6.
    pub indices: Vec<u16>,
    /// Res7.
    pub tris: Option<Vec<TriDesc16>>,
    /// Res13.
    pub batches: Vec<Batch20>,
    /// Res10 node names (bytes without NUL, Windows-1251); `None` = `len 0`.
    /// `None` for the whole field when the model has no Res10.
    pub names: Option<Vec<Option<Vec<u8>>>>,
    /// Res15, 8 raw bytes per vertex.
    pub res15: Option<Vec<[u8; 8]>>,
    /// Res16, 8 raw bytes per vertex.
    pub res16: Option<Vec<[u8; 8]>>,
    /// Res18, 4 raw bytes per vertex.
    pub res18: Option<Vec<[u8; 4]>>,
    /// Res8 key pool.
    pub keys: Option<Vec<AnimKey24>>,
    /// Res19 frame map words.
    pub frame_map: Option<Vec<u16>>,
    /// Res19.attr2: the model's timeline length in frames (1 when static or
    /// when there is no Res19).
    pub frame_count: u32,
}

impl Default for Nodes {
    fn default() -> Self {
        Nodes::Node38(Vec::new())
    }
}

impl Model {
    /// The 38-byte node records, or an empty slice for the legacy layout.
    pub fn nodes38(&self) -> &[Node38] {
        match &self.nodes {
            Nodes::Node38(v) => v,
            Nodes::Legacy24 { .. } => &[],
        }
    }

    /// The node's name as stored (bytes), if any.
    pub fn node_name(&self, i: usize) -> Option<&[u8]> {
        self.names.as_ref()?.get(i)?.as_deref()
    }

    /// The raw payload of the first undecoded stream of type `type_id`
    /// (Res9, Res17, Res20, ...), if the model has one.
    pub fn raw_stream(&self, type_id: u32) -> Option<&[u8]> {
        self.entries
            .iter()
            .find(|e| e.type_id == type_id)
            .and_then(|e| e.raw.as_deref())
    }

    /// Mutable [`Model::raw_stream`].
    pub fn raw_stream_mut(&mut self, type_id: u32) -> Option<&mut Vec<u8>> {
        self.entries
            .iter_mut()
            .find(|e| e.type_id == type_id)
            .and_then(|e| e.raw.as_mut())
    }

    /// Number of vertices (Res3 records).
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }
}
