//! The terrain IR (terrain-notes §1): every Land.msh stream decoded into
//! typed records; bytes without a known meaning kept raw so that
//! [`super::write::encode`] gives the file back byte for byte.

/// Size of the Res2 map header (terrain-notes §1.2).
pub const RES2_HEADER: usize = 0x8C;
/// Res2 cell (slot) record size.
pub const SLOT_SIZE: usize = 68;
/// Res1 square record size.
pub const SQUARE_SIZE: usize = 38;
/// Res21 face record size.
pub const FACE_SIZE: usize = 28;
/// "No face / no slot" marker in u16 links.
pub const NONE: u16 = 0xFFFF;
/// `tex2` of a face without a second material.
pub const NO_TEX2: u8 = 0xFF;

/// Face flag: the face has a second material (`tex2 != 0xFF`).
pub const FLAG_SECOND: u16 = 0x004;
/// Face flag: water / liquid surface.
pub const FLAG_WATER: u16 = 0x008;
/// Face flag: liquid bed (under water or lava).
pub const FLAG_BED: u16 = 0x2000;
/// Surface bit: liquid surface.
pub const SURFACE_WATER: u16 = 0x02;
/// Surface bit: clear on lava and lava bed.
pub const SURFACE_NOT_LAVA: u16 = 0x10;

/// The NRes directory record of one stream, as stored (the type shared with
/// the model IR; `raw` is always `None` here: every Land.msh stream is
/// decoded, and [`super::write::encode`] writes from the typed fields).
pub use crate::nres::StreamEntry;

/// Res1 square record: 19 u16 words (terrain-notes §1.1): `hdr[4]` then
/// `slot[15]` (`slot[0]` LOD0 cell, `slot[1]` LOD1 cell, rest 0xFFFF).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Square {
    /// The four header words (`0, 0xFFFF, 0, 0` in retail data).
    pub hdr: [u16; 4],
    /// The 15 slot words.
    pub slots: [u16; 15],
}

impl Square {
    /// The retail Res1 record of square `i` of `count` (terrain-notes
    /// §1.1; its check is §5.2 warning rule 3, `terrain.res1_record`):
    /// header `0, 0xFFFF, 0, 0`, `slot[0] = i` (the LOD 0 cell),
    /// `slot[1] = count + i` (the LOD 1 cell), the other 13 slots 0xFFFF.
    /// Indices are stored as u16 (`count` ≤ 32,767 in a valid map).
    pub fn retail(i: usize, count: usize) -> Square {
        let mut slots = [NONE; 15];
        slots[0] = i as u16;
        slots[1] = (count + i) as u16;
        Square {
            hdr: [0, NONE, 0, 0],
            slots,
        }
    }
}

/// Res2 cell record, 68 bytes (terrain-notes §1.2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slot {
    /// First face of the run (Res21 and Res11 index).
    pub first: u16,
    /// Number of faces in the run.
    pub count: u16,
    /// Bytes +4..+7 (zero in retail data), raw.
    pub reserved: [u8; 4],
    /// Box minimum (world units, Z up).
    pub min: [f32; 3],
    /// Box maximum.
    pub max: [f32; 3],
    /// Box centre.
    pub centre: [f32; 3],
    /// Radius of the sphere around the box.
    pub radius: f32,
    /// Bytes +48..+67 (zero in retail data), raw.
    pub tail: [u8; 20],
}

/// Res11 draw-order entry (terrain-notes §1.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DrawEntry {
    /// Face index into Res21.
    pub face: u16,
    /// `0x48 | 0x10` on a batch start (bit 7 tolerated).
    pub flags: u8,
    /// The 4th byte (0 in almost all retail entries), raw.
    pub byte3: u8,
}

/// Res21 face record, 28 bytes (terrain-notes §1.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Face {
    /// Flags word (+0): `0x600 | 0x004 | 0x008 | 0x2000`.
    pub flags: u16,
    /// Surface word (+2): `0x10 | 0x02`.
    pub surface: u16,
    /// First material: Land1.wea row.
    pub tex1: u8,
    /// Second material: Land1.wea row, 0xFF = none.
    pub tex2: u8,
    /// Word +6 (0xFFFF in retail data).
    pub word3: u16,
    /// Vertex indices, CCW seen from +Z.
    pub v: [u16; 3],
    /// Neighbour face across edge `e` = `(v[e], v[(e+1)%3])`, 0xFFFF = none.
    pub nb: [u16; 3],
    /// Face normal, i16 ÷ 32767.
    pub normal: [i16; 3],
    /// Edge codes: code of edge e = `(b >> 2e) & 3`, 3 = no neighbour.
    pub edges: u8,
    /// Byte +27 (0 in retail data), raw.
    pub byte27: u8,
}

impl Face {
    /// The class key of the face: `(tex1, tex2, flags, surface, word3)`
    /// (terrain-notes §4.3).
    pub fn class(&self) -> FaceClass {
        FaceClass {
            tex1: self.tex1,
            tex2: self.tex2,
            flags: self.flags,
            surface: self.surface,
            word3: self.word3,
        }
    }

    /// Liquid surface (water or lava): flag 0x008.
    pub fn is_water(&self) -> bool {
        self.flags & FLAG_WATER != 0
    }

    /// Liquid bed: flag 0x2000.
    pub fn is_bed(&self) -> bool {
        self.flags & FLAG_BED != 0
    }
}

/// The material-defining fields of a face (one glTF material per class).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FaceClass {
    /// First material row.
    pub tex1: u8,
    /// Second material row or 0xFF.
    pub tex2: u8,
    /// Flags word.
    pub flags: u16,
    /// Surface word.
    pub surface: u16,
    /// Word +6.
    pub word3: u16,
}

/// A decoded Land.msh: every stream, in stored order.
#[derive(Debug, Clone, PartialEq)]
pub struct Land {
    /// The NRes directory records in stored order.
    pub entries: Vec<StreamEntry>,
    /// Res1 squares (x-major: record i is square `(i / down, i % down)`).
    pub squares: Vec<Square>,
    /// Res2 header: the 8 box corners (terrain-notes §1.2).
    pub corners: [[f32; 3]; 8],
    /// Res2 header bytes 0x60..0x8C (sphere and capsule; zero in retail), raw.
    pub header_tail: [u8; RES2_HEADER - 0x60],
    /// Res2 cells: `0..S` LOD0, `S..2S` LOD1.
    pub slots: Vec<Slot>,
    /// Res3 positions (world units, Z up).
    pub positions: Vec<[f32; 3]>,
    /// Res4 normals: i8 x, y, z ÷ 127 and the raw 4th byte.
    pub normals: Vec<[u8; 4]>,
    /// Res5 material UVs, raw u16 (÷ 1024 = turns).
    pub uv0: Vec<[u16; 2]>,
    /// Res18 microtexture UVs, raw u16 (÷ 1024).
    pub uv1: Vec<[u16; 2]>,
    /// Res14 second-material alpha per vertex (`None`: stream absent).
    pub alpha: Option<Vec<f32>>,
    /// Res11 draw order.
    pub order: Vec<DrawEntry>,
    /// Res21 faces.
    pub faces: Vec<Face>,
}

impl Land {
    /// Number of grid squares (Res1 records).
    pub fn squares_len(&self) -> usize {
        self.squares.len()
    }

    /// Grid cells along X (Res1 attr2) and along Y (attr1 / attr2); `None`
    /// when attr2 is 0 or does not divide attr1.
    pub fn grid(&self) -> Option<(usize, usize)> {
        let e = self.entries.iter().find(|e| e.type_id == 1)?;
        let across = e.attr2 as usize;
        let n = self.squares.len();
        (across > 0 && n.is_multiple_of(across)).then(|| (across, n / across))
    }

    /// The face range of LOD `lod` (0 or 1): `[0, first of slot S)` and the
    /// rest (terrain-notes §1.2). Falls back to all faces when the slot table
    /// is short.
    pub fn lod_range(&self, lod: usize) -> std::ops::Range<usize> {
        let s = self.squares.len();
        let split = self
            .slots
            .get(s)
            .map_or(self.faces.len(), |sl| usize::from(sl.first))
            .min(self.faces.len());
        if lod == 0 {
            0..split
        } else {
            split..self.faces.len()
        }
    }

    /// The Res14 alpha of vertex `v` (1.0 without the stream).
    pub fn alpha_of(&self, v: usize) -> f32 {
        self.alpha
            .as_ref()
            .and_then(|a| a.get(v).copied())
            .unwrap_or(1.0)
    }

    /// The decoded normal of vertex `v` (i8 ÷ 127).
    pub fn normal_of(&self, v: usize) -> [f32; 3] {
        let n = self.normals[v];
        [0, 1, 2].map(|k| f32::from(n[k] as i8) / 127.0)
    }
}
