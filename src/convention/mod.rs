//! The one home of every reading convention that a model file, an option or
//! the mapping decides (format-notes §6, gltf-mapping.md): node names (R1),
//! the Batch20 material field (R2), the Res8 quaternion order (R3), the WEAR
//! key (R4), the Res5 UV sign (R6), the Texm byte order (R8), the axes and
//! the quantisations.
//!
//! Every rule keeps its forward reading (file → value) beside its inverse
//! (value → file), the way glTF-Blender-IO keeps each `*_gltf_to_blender`
//! beside its `*_blender_to_gltf`. A model's conventions are decided once,
//! by [`detect`], into one [`Conventions`] value that export, import and
//! authoring carry in their options; [`Decided`] says how each was decided,
//! for the one-line summary, the JSON report and the scene extras.

pub mod axes;
pub mod quant;

use serde::{Deserialize, Serialize};

pub use crate::anim::QuatLayout;
use crate::material::texm::{self, ChannelOrder};
use crate::material::wear::Wear;
use crate::msh::{Batch20, Model};

/// Size of one Res9 node-name field in retail files (format-notes §6 R1).
pub const RES9_NAME_SIZE: usize = 32;
/// Res9's stream type id (retail: node names; seed: opaque).
pub const RES9: u32 = 9;

/// Which game axis becomes glTF's up axis (`--up`, gltf-mapping.md "Axes").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Up {
    /// Default: glTF `(x, y, z)` = game `(x, z, -y)` (a rotation, Y up).
    #[default]
    Y,
    /// Game coordinates unchanged (Z up).
    Z,
}

/// R1: where node names are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NameSource {
    /// Retail: Res9, one 32-byte Windows-1251 NUL-padded field per node; the
    /// Res10 strings are labels (socket names).
    Res9,
    /// Seed: the Res10 strings.
    Res10,
}

/// R2: the layout of the Batch20 material fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BatchLayout {
    /// Retail: `+0..+3` is one flag word (`+2` = 0), `+4` low byte = the
    /// material key, `+4` high byte = lightmap row (`0xFF` = none).
    Retail,
    /// Seed: the u16 at `+2` is the material key; no lightmap flag.
    Seed,
}

/// R4: what a batch's material key selects in the WEAR table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WearKey {
    /// Retail: the row whose id column equals the key.
    Id,
    /// Seed: the row number.
    Row,
}

/// R6: how a Res5 UV component is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UvSign {
    /// Retail: u16 / 1024 (the engine reads uint16).
    Unsigned,
    /// Seed: i16 / 1024.
    Signed,
}

/// R8: the byte order of Texm 8888, 888 and palettes (global: a file cannot
/// tell; `--texm-order`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TexmOrder {
    /// Retail (Direct3D memory order): 8888 B,G,R,A; 888 B,G,R,X; palette
    /// B,G,R,X.
    #[default]
    Retail,
    /// The other public reading: 8888 A,R,G,B; 888 R,G,B,X; palette R,G,B,A.
    Argb,
}

impl TexmOrder {
    /// The channel order of every format under this convention.
    pub fn channel_order(self) -> ChannelOrder {
        match self {
            TexmOrder::Retail => texm::RETAIL_ORDER,
            TexmOrder::Argb => texm::ARGB_ORDER,
        }
    }
    /// `retail` or `argb`.
    pub fn as_str(self) -> &'static str {
        match self {
            TexmOrder::Retail => "retail",
            TexmOrder::Argb => "argb",
        }
    }
}

/// The per-model conventions (format-notes §6 R1–R4, R6), decided once per
/// model by [`detect`] and carried in the export/import options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Conventions {
    /// R1.
    pub names: NameSource,
    /// R2.
    #[serde(rename = "material")]
    pub batch: BatchLayout,
    /// R3.
    #[serde(with = "quat_serde")]
    pub quat: QuatLayout,
    /// R4.
    pub wear_key: WearKey,
    /// R6.
    pub uv: UvSign,
}

mod quat_serde {
    use super::QuatLayout;
    use serde::{Deserialize, Deserializer, Serializer};
    pub fn serialize<S: Serializer>(q: &QuatLayout, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(super::quat_str(*q))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<QuatLayout, D::Error> {
        let s = String::deserialize(d)?;
        super::parse_quat(&s).ok_or_else(|| serde::de::Error::custom("xyzw or wxyz"))
    }
}

/// `xyzw` (seed) or `wxyz` (retail).
pub fn quat_str(q: QuatLayout) -> &'static str {
    match q {
        QuatLayout::Xyzw => "xyzw",
        QuatLayout::Wxyz => "wxyz",
    }
}

/// Inverse of [`quat_str`].
pub fn parse_quat(s: &str) -> Option<QuatLayout> {
    match s {
        "xyzw" => Some(QuatLayout::Xyzw),
        "wxyz" => Some(QuatLayout::Wxyz),
        _ => None,
    }
}

impl Conventions {
    /// How real game files are laid out (format-notes §6); what authoring
    /// writes.
    pub const RETAIL: Conventions = Conventions {
        names: NameSource::Res9,
        batch: BatchLayout::Retail,
        quat: QuatLayout::Wxyz,
        wear_key: WearKey::Id,
        uv: UvSign::Unsigned,
    };
    /// The seed documents' reading.
    pub const SEED: Conventions = Conventions {
        names: NameSource::Res10,
        batch: BatchLayout::Seed,
        quat: QuatLayout::Xyzw,
        wear_key: WearKey::Row,
        uv: UvSign::Signed,
    };
}

impl Default for Conventions {
    fn default() -> Self {
        Conventions::RETAIL
    }
}

/// The user's choices (`--names`, `--batch-layout`, `--quat-layout`,
/// `--wear-key`, `--uv`): `None` = `auto` (decide from the file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ConventionChoices {
    /// `--names`.
    pub names: Option<NameSource>,
    /// `--batch-layout`.
    pub batch: Option<BatchLayout>,
    /// `--quat-layout`.
    pub quat: Option<QuatLayout>,
    /// `--wear-key`.
    pub wear_key: Option<WearKey>,
    /// `--uv`.
    pub uv: Option<UvSign>,
}

/// How one convention was decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reason {
    /// `option` (forced by the user), `file` (the file decided), `default`
    /// (the file could not tell: the retail reading).
    pub by: &'static str,
    /// The evidence, for humans.
    pub why: String,
}

impl Reason {
    fn option() -> Reason {
        Reason {
            by: "option",
            why: "set by option".into(),
        }
    }
    fn file(why: impl Into<String>) -> Reason {
        Reason {
            by: "file",
            why: why.into(),
        }
    }
    fn default(why: impl Into<String>) -> Reason {
        Reason {
            by: "default",
            why: why.into(),
        }
    }
}

/// The conventions of one model and how each was decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decided {
    /// The values.
    pub conventions: Conventions,
    /// R1 evidence.
    pub names: Reason,
    /// R2 evidence.
    pub material: Reason,
    /// R3 evidence.
    pub quat: Reason,
    /// R4 evidence.
    pub wear_key: Reason,
    /// R6 evidence.
    pub uv: Reason,
}

impl Decided {
    /// One short line: `names=res9 material=retail quat=wxyz wear_key=id uv=unsigned`.
    pub fn summary(&self) -> String {
        let c = &self.conventions;
        format!(
            "names={} material={} quat={} wear_key={} uv={}",
            match c.names {
                NameSource::Res9 => "res9",
                NameSource::Res10 => "res10",
            },
            match c.batch {
                BatchLayout::Retail => "retail",
                BatchLayout::Seed => "seed",
            },
            quat_str(c.quat),
            match c.wear_key {
                WearKey::Id => "id",
                WearKey::Row => "row",
            },
            match c.uv {
                UvSign::Unsigned => "unsigned",
                UvSign::Signed => "signed",
            }
        )
    }
    /// `retail` when every convention is the retail one, `seed` when every
    /// one is the seed one, else `mixed`.
    pub fn label(&self) -> &'static str {
        let c = self.conventions;
        if c == Conventions::RETAIL {
            "retail"
        } else if c == Conventions::SEED {
            "seed"
        } else {
            "mixed"
        }
    }
}

/// Decides a model's conventions (format-notes §6, "how a reader tells, per
/// model"); a choice in `choices` overrides the file.
///
/// - R1: Res9 when its payload is `32 × nodes` bytes and some field is
///   non-empty (or no Res10 string is either), else Res10.
/// - R2: retail when every batch has `+2 == 0` and `+4 >> 8 ∈ {0x00, 0xFF}`,
///   else seed.
/// - R3: [`crate::anim::pick_quat_layout`] (the slot holding ±32767 in most
///   static keys); on a tie, the order whose posed cell-0 geometry at `t = 0`
///   fits the Res2 header box better; still undecided: `wxyz`.
/// - R4: by id when the WEAR ids are exactly a permutation of `0..n`, else
///   by row (no WEAR: by id, unused).
/// - R6: signed when some triangle spans more than `0x8000` raw as u16 but
///   not as i16 in u or v, else unsigned.
pub fn detect(model: &Model, wear: Option<&Wear>, choices: &ConventionChoices) -> Decided {
    let (names, names_r) = match choices.names {
        Some(v) => (v, Reason::option()),
        None => detect_names(model),
    };
    let (batch, material_r) = match choices.batch {
        Some(v) => (v, Reason::option()),
        None => detect_batch(model),
    };
    let (quat, quat_r) = match choices.quat {
        Some(v) => (v, Reason::option()),
        None => detect_quat(model),
    };
    let (wear_key, wear_r) = match choices.wear_key {
        Some(v) => (v, Reason::option()),
        None => detect_wear_key(wear),
    };
    let (uv, uv_r) = match choices.uv {
        Some(v) => (v, Reason::option()),
        None => detect_uv(model),
    };
    Decided {
        conventions: Conventions {
            names,
            batch,
            quat,
            wear_key,
            uv,
        },
        names: names_r,
        material: material_r,
        quat: quat_r,
        wear_key: wear_r,
        uv: uv_r,
    }
}

fn detect_names(model: &Model) -> (NameSource, Reason) {
    let n = model.nodes.len();
    match model.raw_stream(RES9) {
        Some(raw) if n > 0 && raw.len() == RES9_NAME_SIZE * n => {
            let named = raw
                .chunks_exact(RES9_NAME_SIZE)
                .filter(|f| f[0] != 0)
                .count();
            if named > 0 {
                (
                    NameSource::Res9,
                    Reason::file(format!("Res9 is 32 x {n} bytes, {named} names")),
                )
            } else if (0..n).any(|i| model.node_name(i).is_some_and(|s| !s.is_empty())) {
                (
                    NameSource::Res10,
                    Reason::file(format!(
                        "Res9 is 32 x {n} bytes but every field is empty; Res10 has names"
                    )),
                )
            } else {
                (
                    NameSource::Res9,
                    Reason::file(format!(
                        "Res9 is 32 x {n} bytes (every field empty, Res10 too)"
                    )),
                )
            }
        }
        Some(raw) => (
            NameSource::Res10,
            Reason::file(format!("Res9 is {} bytes, not 32 x {n}", raw.len())),
        ),
        None => (NameSource::Res10, Reason::file("no Res9")),
    }
}

fn detect_batch(model: &Model) -> (BatchLayout, Reason) {
    if model.batches.is_empty() {
        return (BatchLayout::Retail, Reason::default("no batches"));
    }
    match model
        .batches
        .iter()
        .position(|b| b.material_index != 0 || !matches!(b.opaque4 >> 8, 0x00 | 0xFF))
    {
        None => (
            BatchLayout::Retail,
            Reason::file(format!(
                "all {} batches: +2 = 0 and +4 high byte 0x00/0xFF",
                model.batches.len()
            )),
        ),
        Some(i) => {
            let b = &model.batches[i];
            (
                BatchLayout::Seed,
                Reason::file(format!(
                    "Res13 batch {i}: +2 = {}, +4 = {:#06x}",
                    b.material_index, b.opaque4
                )),
            )
        }
    }
}

fn detect_quat(model: &Model) -> (QuatLayout, Reason) {
    let (votes_xyzw, votes_wxyz) = crate::anim::quat_layout_votes(model);
    if votes_xyzw != votes_wxyz {
        let q = if votes_wxyz > votes_xyzw {
            QuatLayout::Wxyz
        } else {
            QuatLayout::Xyzw
        };
        return (
            q,
            Reason::file(format!(
                "static keys with ±32767 in slot 0: {votes_wxyz}, in slot 3: {votes_xyzw}"
            )),
        );
    }
    // Tie: the Res2 header box.
    let fit = |q: QuatLayout| -> Option<f64> {
        let pts = crate::msh::build::model_space_points(model, q);
        if pts.is_empty() {
            return None;
        }
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for p in &pts {
            for k in 0..3 {
                lo[k] = lo[k].min(f64::from(p[k]));
                hi[k] = hi[k].max(f64::from(p[k]));
            }
        }
        let (hmin, hmax) = (model.header.hull[0], model.header.hull[6]);
        let mut e = 0.0f64;
        for k in 0..3 {
            e = e
                .max((lo[k] - f64::from(hmin[k])).abs())
                .max((hi[k] - f64::from(hmax[k])).abs());
        }
        e.is_finite().then_some(e)
    };
    match (fit(QuatLayout::Xyzw), fit(QuatLayout::Wxyz)) {
        (Some(a), Some(b)) if (a - b).abs() > 1e-4 => {
            let q = if b < a {
                QuatLayout::Wxyz
            } else {
                QuatLayout::Xyzw
            };
            (
                q,
                Reason::file(format!(
                    "static keys tie ({votes_wxyz}:{votes_xyzw}); Res2 box misfit wxyz {b:.4}, xyzw {a:.4}"
                )),
            )
        }
        _ => (
            QuatLayout::Wxyz,
            Reason::default(format!(
                "static keys tie ({votes_wxyz}:{votes_xyzw}) and the Res2 box fits both: w first"
            )),
        ),
    }
}

fn detect_wear_key(wear: Option<&Wear>) -> (WearKey, Reason) {
    let Some(w) = wear else {
        return (WearKey::Id, Reason::default("no WEAR table"));
    };
    let n = w.materials.len();
    let mut seen = vec![false; n];
    let perm = w.materials.iter().all(|r| {
        usize::try_from(r.legacy_id)
            .ok()
            .filter(|&i| i < n)
            .is_some_and(|i| !std::mem::replace(&mut seen[i], true))
    });
    if perm {
        (
            WearKey::Id,
            Reason::file(format!("WEAR ids are a permutation of 0..{n}")),
        )
    } else {
        (
            WearKey::Row,
            Reason::file(format!("WEAR ids are not a permutation of 0..{n}")),
        )
    }
}

fn detect_uv(model: &Model) -> (UvSign, Reason) {
    let Some(uvs) = model.uvs.as_deref() else {
        return (UvSign::Unsigned, Reason::default("no Res5"));
    };
    for (bi, b) in model.batches.iter().enumerate() {
        let start = b.index_start as usize;
        let Some(idx) = model
            .indices
            .get(start..start.saturating_add(usize::from(b.index_count)))
        else {
            continue;
        };
        for (t, tri) in idx.chunks_exact(3).enumerate() {
            for c in 0..2 {
                let mut vals = [0i16; 3];
                let mut ok = true;
                for (k, &i) in tri.iter().enumerate() {
                    match uvs.get((b.base_vertex as usize).saturating_add(usize::from(i))) {
                        Some(uv) => vals[k] = uv[c],
                        None => ok = false,
                    }
                }
                if !ok {
                    continue;
                }
                let span_u = span(vals.map(|v| i64::from(v as u16)));
                let span_i = span(vals.map(i64::from));
                if span_u > 0x8000 && span_i <= 0x8000 {
                    return (
                        UvSign::Signed,
                        Reason::file(format!(
                            "Res13 batch {bi} triangle {t}: Res5 {} spans {span_u:#x} as u16, {span_i:#x} as i16",
                            if c == 0 { "u" } else { "v" }
                        )),
                    );
                }
            }
        }
    }
    let neg = uvs.iter().flatten().filter(|&&v| v < 0).count();
    (
        UvSign::Unsigned,
        Reason::file(format!(
            "no triangle spans more than 0x8000 as u16 ({neg} raw values >= 0x8000)"
        )),
    )
}

fn span(v: [i64; 3]) -> i64 {
    v.iter().max().unwrap_or(&0) - v.iter().min().unwrap_or(&0)
}

// ---------------------------------------------------------------------------
// R1: node names and labels.

impl NameSource {
    /// The node's name as stored (Windows-1251 bytes, no NUL), per R1: the
    /// Res9 field when this is [`NameSource::Res9`] and the field is
    /// non-empty, else the Res10 string; `None` when both are empty (the
    /// exporter then writes `node<i>`).
    pub fn node_name(self, model: &Model, i: usize) -> Option<&[u8]> {
        if self == NameSource::Res9 {
            if let Some(f) = res9_field(model, i) {
                return Some(f);
            }
        }
        model.node_name(i).filter(|s| !s.is_empty())
    }

    /// The node's Res10 label (retail socket label, `Base_TL` → `e_tur_bb`):
    /// the Res10 string when names come from Res9 and the node has one that
    /// is not just a copy of its Res9 name (seed-style files may mirror the
    /// names into Res9).
    pub fn label(self, model: &Model, i: usize) -> Option<&[u8]> {
        match (self, res9_field(model, i)) {
            (NameSource::Res9, Some(name)) => {
                model.node_name(i).filter(|s| !s.is_empty() && *s != name)
            }
            _ => None,
        }
    }

    /// Inverse of [`NameSource::node_name`]: stores `name` (Windows-1251,
    /// no NUL) where this convention reads it: into the node's 32-byte Res9
    /// field (at most 31 bytes, zero-filled after) or its Res10 record.
    ///
    /// # Errors
    /// A message when the name does not fit the field or the model has no
    /// such stream (the name is then not stored).
    pub fn set_node_name(self, model: &mut Model, i: usize, name: &[u8]) -> Result<(), String> {
        if self == NameSource::Res9 && res9_field(model, i).is_some() {
            if name.len() >= RES9_NAME_SIZE || name.contains(&0) {
                return Err(format!(
                    "Res9 node {i}: name of {} bytes does not fit the 32-byte field (31 + NUL)",
                    name.len()
                ));
            }
            let n = model.nodes.len();
            let raw = model
                .raw_stream_mut(RES9)
                .filter(|r| r.len() == RES9_NAME_SIZE * n)
                .ok_or_else(|| format!("Res9 node {i}: no Res9 name table"))?;
            let f = &mut raw[i * RES9_NAME_SIZE..(i + 1) * RES9_NAME_SIZE];
            f.fill(0);
            f[..name.len()].copy_from_slice(name);
            return Ok(());
        }
        match model.names.as_mut().and_then(|v| v.get_mut(i)) {
            Some(slot) => {
                *slot = (!name.is_empty()).then(|| name.to_vec());
                Ok(())
            }
            None => Err(format!("Res10 node {i}: the model has no Res10 record")),
        }
    }
}

/// The non-empty Res9 field of node `i` (bytes before the first NUL), when
/// Res9 is a `32 × nodes` table.
fn res9_field(model: &Model, i: usize) -> Option<&[u8]> {
    let raw = model.raw_stream(RES9)?;
    if raw.len() != RES9_NAME_SIZE * model.nodes.len() {
        return None;
    }
    let f = raw.get(i * RES9_NAME_SIZE..(i + 1) * RES9_NAME_SIZE)?;
    let end = f.iter().position(|&b| b == 0).unwrap_or(f.len());
    (end > 0).then(|| &f[..end])
}

/// Decodes stored name bytes (Windows-1251) for display and glTF names.
pub fn decode_name(bytes: &[u8]) -> String {
    encoding_rs::WINDOWS_1251
        .decode_without_bom_handling(bytes)
        .0
        .into_owned()
}

/// Inverse of [`decode_name`]; `None` when a character has no Windows-1251
/// code.
pub fn encode_name(s: &str) -> Option<Vec<u8>> {
    let (b, _, bad) = encoding_rs::WINDOWS_1251.encode(s);
    (!bad).then(|| b.into_owned())
}

// ---------------------------------------------------------------------------
// R2: the batch material key and lightmap flag.

/// The stored lightmap byte that means "no lightmap" (retail, `+4` high byte).
pub const NO_LIGHTMAP: u8 = 0xFF;

impl BatchLayout {
    /// The batch's material key (R2): `+4` low byte (retail) or `+2` (seed).
    pub fn material_key(self, b: &Batch20) -> u16 {
        match self {
            BatchLayout::Retail => b.opaque4 & 0xFF,
            BatchLayout::Seed => b.material_index,
        }
    }

    /// The batch's lightmap row (R2): `Some(row)` when the retail `+4` high
    /// byte is not `0xFF`; always `None` in the seed layout. Whether the
    /// batch is really lit also needs Res18 and a LIGHTMAPS row.
    pub fn lightmap_row(self, b: &Batch20) -> Option<u8> {
        match self {
            BatchLayout::Retail => Some((b.opaque4 >> 8) as u8).filter(|&h| h != NO_LIGHTMAP),
            BatchLayout::Seed => None,
        }
    }

    /// Inverse of [`BatchLayout::material_key`]: stores `key` (retail: the
    /// low byte of `+4`, so at most 255, high byte kept).
    ///
    /// # Errors
    /// A message when the key does not fit (retail: > 255).
    pub fn set_material_key(self, b: &mut Batch20, key: u16) -> Result<(), String> {
        match self {
            BatchLayout::Retail => {
                let k = u8::try_from(key).map_err(|_| {
                    format!("material key {key} > 255 (retail Batch20 +4 low byte)")
                })?;
                b.opaque4 = (b.opaque4 & 0xFF00) | u16::from(k);
            }
            BatchLayout::Seed => b.material_index = key,
        }
        Ok(())
    }

    /// Inverse of [`BatchLayout::lightmap_row`] (retail only; the seed
    /// layout has no lightmap flag and ignores this).
    pub fn set_lightmap_row(self, b: &mut Batch20, row: Option<u8>) {
        if self == BatchLayout::Retail {
            let h = u16::from(row.unwrap_or(NO_LIGHTMAP));
            b.opaque4 = (b.opaque4 & 0x00FF) | (h << 8);
        }
    }
}

// ---------------------------------------------------------------------------
// R4: the WEAR key.

impl WearKey {
    /// The WEAR material row a batch key selects (R4); `None` when no row
    /// matches.
    pub fn row(self, wear: &Wear, key: u16) -> Option<usize> {
        match self {
            WearKey::Id => wear
                .materials
                .iter()
                .position(|r| r.legacy_id == i32::from(key)),
            WearKey::Row => (usize::from(key) < wear.materials.len()).then_some(usize::from(key)),
        }
    }

    /// Inverse of [`WearKey::row`]: the key that selects `row`.
    pub fn key(self, wear: &Wear, row: usize) -> Option<u16> {
        match self {
            WearKey::Id => u16::try_from(wear.materials.get(row)?.legacy_id).ok(),
            WearKey::Row => u16::try_from(row)
                .ok()
                .filter(|_| row < wear.materials.len()),
        }
    }
}

// ---------------------------------------------------------------------------
// R6: UVs (the quantisation itself lives in [`quant`]).

impl UvSign {
    /// A stored Res5 component (kept as i16 bits in the IR) as its integer
    /// value under this convention.
    pub fn raw_value(self, c: i16) -> i32 {
        match self {
            UvSign::Unsigned => i32::from(c as u16),
            UvSign::Signed => i32::from(c),
        }
    }
}

/// The scene extras msh2gltf writes and gltf2msh reads back
/// (gltf-mapping.md, "Extras"): `{"msh": {...}, "conventions": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SceneMsh {
    /// Frames per second of the timeline.
    pub fps: f32,
    /// Axis convention.
    pub up: Up,
    /// R3 (kept here too for older readers).
    pub quat_layout: String,
    /// `file` or `ARCHIVE:ENTRY`.
    #[serde(default)]
    pub source: String,
    /// SHA-256 of the model bytes.
    #[serde(default)]
    pub sha256: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::material::wear::WearRow;

    #[test]
    fn batch_key_round_trip() {
        let mut b = Batch20 {
            opaque4: 0xFF07,
            ..Default::default()
        };
        assert_eq!(BatchLayout::Retail.material_key(&b), 7);
        assert_eq!(BatchLayout::Retail.lightmap_row(&b), None);
        BatchLayout::Retail.set_material_key(&mut b, 200).unwrap();
        BatchLayout::Retail.set_lightmap_row(&mut b, Some(0));
        assert_eq!(b.opaque4, 0x00C8);
        assert_eq!(BatchLayout::Retail.lightmap_row(&b), Some(0));
        assert!(BatchLayout::Retail.set_material_key(&mut b, 256).is_err());
        BatchLayout::Seed.set_material_key(&mut b, 300).unwrap();
        assert_eq!(BatchLayout::Seed.material_key(&b), 300);
    }

    #[test]
    fn wear_key_by_id_and_row() {
        let rows = |ids: &[i32]| Wear {
            materials: ids
                .iter()
                .map(|&i| WearRow {
                    legacy_id: i,
                    name: format!("M{i}"),
                })
                .collect(),
            ..Default::default()
        };
        let w = rows(&[2, 0, 1]);
        assert_eq!(detect_wear_key(Some(&w)).0, WearKey::Id);
        assert_eq!(WearKey::Id.row(&w, 0), Some(1));
        assert_eq!(WearKey::Id.key(&w, 1), Some(0));
        let w = rows(&[5, 0, 1]);
        assert_eq!(detect_wear_key(Some(&w)).0, WearKey::Row);
        assert_eq!(WearKey::Row.row(&w, 2), Some(2));
        assert_eq!(WearKey::Row.row(&w, 3), None);
        assert_eq!(detect_wear_key(Some(&rows(&[0, 0]))).0, WearKey::Row);
    }

    #[test]
    fn uv_raw_values() {
        assert_eq!(UvSign::Unsigned.raw_value(-1), 0xFFFF);
        assert_eq!(UvSign::Signed.raw_value(-1), -1);
    }

    #[test]
    fn conventions_serialize_as_documented() {
        let v = serde_json::to_value(Conventions::RETAIL).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"names": "res9", "material": "retail", "quat": "wxyz", "wear_key": "id", "uv": "unsigned"})
        );
        let back: Conventions = serde_json::from_value(v).unwrap();
        assert_eq!(back, Conventions::RETAIL);
    }
}
