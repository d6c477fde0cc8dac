//! Land.msh checks (terrain-notes §5.2): every invariant of the validation
//! list as a typed rule naming stream, record and rule.
//!
//! [`check`] collects findings; [`validate`] applies a [`Mode`]:
//! - strict rejects on the first error-level finding;
//! - tolerant rejects only on findings nothing can be recovered from
//!   (the slot table), drops faces with a bad vertex and reports the rest.
//!
//! Error-level rules: `terrain.res1_grid`, `terrain.slot_count`,
//! `terrain.slot_word`, `terrain.slot_range`, `terrain.slot_chain`,
//! `terrain.face_vertex_range`, `terrain.neighbour_range`,
//! `terrain.neighbour_mutual`, `terrain.res11_range`,
//! `terrain.res11_permutation`, `terrain.float.non_finite`,
//! `terrain.patch_vertices` (a two-material patch's border vertex shared
//! with a face of another pair: [`super::patches`]). Everything else
//! is a warning (retail data satisfies it; edited or seed-style files may
//! not).

use std::collections::BTreeSet;

use super::ir::*;
use super::{Mode, TerrainError};

/// At most this many findings of one rule are listed (the rest are counted).
pub const MAX_PER_RULE: usize = 20;

/// Findings of [`check`].
#[derive(Debug, Clone, Default)]
pub struct Findings {
    /// Error-level findings (first [`MAX_PER_RULE`] of each rule).
    pub errors: Vec<TerrainError>,
    /// Warning-level findings: what the user can act on.
    pub warnings: Vec<TerrainError>,
    /// Facts of the file that need no action and are kept as they are
    /// (a non-zero Res11 byte 3, an alpha on a vertex without a second
    /// material): listed with `-v` only (issue 24 item 7).
    pub notes: Vec<TerrainError>,
    /// Faces a tolerant reader drops (bad vertex index, non-finite vertex).
    pub drop_faces: BTreeSet<usize>,
    /// Grid `(across, down)`: from Res1 attr2, or recovered (square grid)
    /// when attr2 is unusable.
    pub grid: Option<(usize, usize)>,
    /// Res11 must be regenerated on the way back (not a permutation).
    pub regenerate_order: bool,
}

impl Findings {
    fn push(list: &mut Vec<TerrainError>, e: TerrainError) {
        if list.iter().filter(|x| x.rule == e.rule).count() < MAX_PER_RULE {
            list.push(e);
        }
    }
    fn error(&mut self, e: TerrainError) {
        Self::push(&mut self.errors, e);
    }
    fn warn(&mut self, e: TerrainError) {
        Self::push(&mut self.warnings, e);
    }
    fn note(&mut self, e: TerrainError) {
        Self::push(&mut self.notes, e);
    }
}

/// Rules a tolerant reader cannot work around.
const FATAL_TOLERANT: [&str; 4] = [
    "terrain.slot_count",
    "terrain.slot_range",
    "terrain.slot_chain",
    "terrain.res1_grid_unrecoverable",
];

/// Checks `land` and applies `mode`.
///
/// # Errors
/// Strict: the first error-level finding. Tolerant: the first finding of
/// `terrain.slot_count`, `terrain.slot_range` or `terrain.slot_chain`.
pub fn validate(land: &Land, mode: Mode) -> Result<Findings, TerrainError> {
    let f = check(land);
    let fatal = f.errors.iter().find(|e| match mode {
        Mode::Strict => true,
        Mode::Tolerant => FATAL_TOLERANT.contains(&e.rule),
    });
    match fatal {
        Some(e) => Err(e.clone()),
        None => Ok(f),
    }
}

/// Collects every finding of terrain-notes §5.2 (Land.msh part).
pub fn check(land: &Land) -> Findings {
    let mut f = Findings::default();
    container(land, &mut f);
    grid(land, &mut f);
    slots(land, &mut f);
    floats(land, &mut f);
    faces(land, &mut f);
    adjacency(land, &mut f);
    draw_order(land, &mut f);
    vertices(land, &mut f);
    // Rule `terrain.patch_vertices` (terrain-notes §1.7, §5.1): only on
    // faces whose vertices are all in range (rule 5 reports the rest).
    if !f
        .errors
        .iter()
        .any(|e| e.rule == "terrain.face_vertex_range")
    {
        for e in super::patches::check(land) {
            f.error(e);
        }
    }
    f
}

/// Warning rule 1: stored order, attr2, names.
fn container(land: &Land, f: &mut Findings) {
    let order: Vec<u32> = land.entries.iter().map(|e| e.type_id).collect();
    let retail: Vec<u32> = super::STREAM_ORDER
        .iter()
        .copied()
        .filter(|t| order.contains(t))
        .collect();
    if order != retail {
        f.warn(TerrainError::file(
            "terrain.order",
            format!("streams stored as {order:?}, retail order is {retail:?}"),
        ));
    }
    for e in &land.entries {
        if e.type_id != 1 && e.attr2 != 0 {
            f.warn(TerrainError::stream(
                "terrain.attr2",
                e.type_id,
                format!("attr2 = {}", e.attr2),
            ));
        }
        if e.name != b"Land" {
            let name = String::from_utf8_lossy(&e.name).into_owned();
            f.warn(TerrainError::stream(
                "terrain.name",
                e.type_id,
                format!("name {name:?}, retail is \"Land\""),
            ));
        }
    }
}

/// Rule 3 and warning rule 3: the Res1 grid and its records.
fn grid(land: &Land, f: &mut Findings) {
    let n = land.squares.len();
    let attr2 = land
        .entries
        .iter()
        .find(|e| e.type_id == 1)
        .map_or(0, |e| e.attr2) as usize;
    f.grid = land.grid();
    if f.grid.is_none() {
        f.error(TerrainError::stream(
            "terrain.res1_grid",
            1,
            format!("attr2 (grid cells along X) = {attr2} does not divide attr1 = {n}"),
        ));
        let side = (n as f64).sqrt() as usize;
        if side > 0 && side * side == n {
            f.grid = Some((side, side));
        } else {
            f.error(TerrainError::stream(
                "terrain.res1_grid_unrecoverable",
                1,
                format!("{n} squares are not a square grid"),
            ));
        }
    }
    let slots = land.slots.len();
    for (i, s) in land.squares.iter().enumerate() {
        if let Some(w) = s
            .slots
            .iter()
            .find(|&&w| w != NONE && usize::from(w) >= slots)
        {
            f.error(TerrainError::record(
                "terrain.slot_word",
                1,
                i,
                format!("slot word {w} >= slot count {slots}"),
            ));
        }
        if *s != Square::retail(i, n) {
            f.warn(TerrainError::record(
                "terrain.res1_record",
                1,
                i,
                format!(
                    "words {:?} {:?}, expected 0,0xFFFF,0,0,{i},{},0xFFFF x13",
                    s.hdr,
                    &s.slots[..2],
                    n + i
                ),
            ));
        }
    }
}

/// Rules 3-4 and warning rule 2: slot count, runs, chaining, boxes.
fn slots(land: &Land, f: &mut Findings) {
    let n = land.squares.len();
    let nf = land.faces.len();
    if land.slots.len() != 2 * n {
        f.error(TerrainError::stream(
            "terrain.slot_count",
            2,
            format!("{} slots, expected 2 x {n} squares", land.slots.len()),
        ));
    }
    let mut next = 0usize;
    for (i, s) in land.slots.iter().enumerate() {
        let (first, count) = (usize::from(s.first), usize::from(s.count));
        if first + count > nf {
            f.error(TerrainError::record(
                "terrain.slot_range",
                2,
                i,
                format!("run {first}+{count} > {nf} faces"),
            ));
        } else if first != next {
            f.error(TerrainError::record(
                "terrain.slot_chain",
                2,
                i,
                format!("first = {first}, the previous run ends at {next}"),
            ));
        }
        next = first + count;
        if s.reserved != [0; 4] || s.tail != [0; 20] {
            f.warn(TerrainError::record(
                "terrain.reserved",
                2,
                i,
                "bytes +4..+7 or +48..+67 not zero",
            ));
        }
        if i >= n && i < land.slots.len() && i - n < n {
            let p = &land.slots[i - n];
            if p.min != s.min || p.max != s.max {
                f.warn(TerrainError::record(
                    "terrain.slot_pair_box",
                    2,
                    i,
                    format!("box differs from LOD0 slot {}", i - n),
                ));
            }
        }
    }
    if next != nf && !land.slots.is_empty() {
        f.error(TerrainError::stream(
            "terrain.slot_chain",
            2,
            format!("runs end at face {next}, Res21 has {nf} faces"),
        ));
    }
    if land.header_tail != [0; RES2_HEADER - 0x60] {
        f.warn(TerrainError::stream(
            "terrain.reserved",
            2,
            "header bytes 0x60..0x8B not zero",
        ));
    }
}

/// Non-finite floats anywhere (positions drop their faces).
fn floats(land: &Land, f: &mut Findings) {
    let mut bad_vertices = BTreeSet::new();
    for (i, p) in land.positions.iter().enumerate() {
        if p.iter().any(|c| !c.is_finite()) {
            bad_vertices.insert(i);
            f.error(TerrainError::record(
                "terrain.float.non_finite",
                3,
                i,
                format!("position {p:?}"),
            ));
        }
    }
    if let Some(a) = &land.alpha {
        for (i, x) in a.iter().enumerate().filter(|(_, x)| !x.is_finite()) {
            f.error(TerrainError::record(
                "terrain.float.non_finite",
                14,
                i,
                format!("alpha {x}"),
            ));
        }
    }
    for (i, s) in land.slots.iter().enumerate() {
        let all = s
            .min
            .iter()
            .chain(&s.max)
            .chain(&s.centre)
            .chain([&s.radius]);
        if all.into_iter().any(|c| !c.is_finite()) {
            f.error(TerrainError::record(
                "terrain.float.non_finite",
                2,
                i,
                "cell box",
            ));
        }
    }
    if land.corners.iter().flatten().any(|c| !c.is_finite()) {
        f.error(TerrainError::stream(
            "terrain.float.non_finite",
            2,
            "header box",
        ));
    }
    for (i, face) in land.faces.iter().enumerate() {
        if face
            .v
            .iter()
            .any(|&v| bad_vertices.contains(&usize::from(v)))
        {
            f.drop_faces.insert(i);
        }
    }
}

/// Which slot's run holds each face (`None`: no run, e.g. broken chains).
pub fn face_slots(land: &Land) -> Vec<Option<u32>> {
    let n = land.faces.len();
    let mut out = vec![None; n];
    for (i, s) in land.slots.iter().enumerate() {
        let r = usize::from(s.first)..usize::from(s.first) + usize::from(s.count);
        for k in r.filter(|&k| k < n) {
            out[k] = Some(i as u32);
        }
    }
    out
}

fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// Unnormalised `cross(b − a, c − a)`.
pub fn cross_of(a: [f32; 3], b: [f32; 3], c: [f32; 3]) -> [f32; 3] {
    let (u, v) = (sub(b, a), sub(c, a));
    [
        u[1] * v[2] - u[2] * v[1],
        u[2] * v[0] - u[0] * v[2],
        u[0] * v[1] - u[1] * v[0],
    ]
}

/// Rule 5 (vertex indices) and warning rules 4, 7, 8, 10 per face.
fn faces(land: &Land, f: &mut Findings) {
    let nv = land.positions.len();
    let owner = face_slots(land);
    for (i, face) in land.faces.iter().enumerate() {
        if let Some((k, v)) = face
            .v
            .iter()
            .enumerate()
            .find(|(_, &v)| usize::from(v) >= nv)
        {
            f.error(TerrainError::record(
                "terrain.face_vertex_range",
                21,
                i,
                format!("v[{k}] = {v} >= vertex count {nv}"),
            ));
            f.drop_faces.insert(i);
            continue;
        }
        let p = face.v.map(|v| land.positions[usize::from(v)]);
        face_geometry(land, f, i, face, p, owner[i]);
        let second = face.tex2 != NO_TEX2;
        if face.flags & 0x600 != 0x600
            || (face.flags & FLAG_SECOND != 0) != second
            || (face.flags & FLAG_WATER != 0) != (face.surface & SURFACE_WATER != 0)
            || face.word3 != NONE
            || face.tex1 == 0
        {
            f.warn(TerrainError::record(
                "terrain.face_flags",
                21,
                i,
                format!(
                    "flags 0x{:04X} surface 0x{:04X} tex {}/{} word3 0x{:04X}",
                    face.flags, face.surface, face.tex1, face.tex2, face.word3
                ),
            ));
        }
        for (name, uv) in [("Res5", &land.uv0), ("Res18", &land.uv1)] {
            let t = face.v.map(|v| uv[usize::from(v)]);
            for axis in 0..2 {
                let lo = t.iter().map(|q| q[axis]).min().unwrap_or(0);
                let hi = t.iter().map(|q| q[axis]).max().unwrap_or(0);
                if hi - lo > 32768 {
                    f.warn(TerrainError::record(
                        "terrain.uv_span",
                        21,
                        i,
                        format!("{name} axis {axis} spans {} raw units", hi - lo),
                    ));
                }
            }
        }
    }
}

fn face_geometry(
    land: &Land,
    f: &mut Findings,
    i: usize,
    face: &Face,
    p: [[f32; 3]; 3],
    slot: Option<u32>,
) {
    if p.iter().any(|q| q.iter().any(|c| !c.is_finite())) {
        return;
    }
    let c = cross_of(p[0], p[1], p[2]);
    let len = (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).sqrt();
    if len == 0.0 || face.v[0] == face.v[1] || face.v[1] == face.v[2] || face.v[0] == face.v[2] {
        f.warn(TerrainError::record(
            "terrain.degenerate",
            21,
            i,
            format!("vertices {:?}", face.v),
        ));
        return;
    }
    let n = face.normal.map(|x| f32::from(x) / 32767.0);
    let nlen = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    let dot = (n[0] * c[0] + n[1] * c[1] + n[2] * c[2]) / len;
    if (nlen - 1.0).abs() > 1e-3 || dot <= 0.0 {
        f.warn(TerrainError::record(
            "terrain.face_normal",
            21,
            i,
            format!("normal {n:?} (length {nlen}), cross product {c:?}"),
        ));
    }
    if let Some(s) = slot.and_then(|s| land.slots.get(s as usize)) {
        let eps = 1e-3;
        let inside = p
            .iter()
            .all(|q| (0..3).all(|k| q[k] >= s.min[k] - eps && q[k] <= s.max[k] + eps));
        if !inside {
            f.warn(TerrainError::record(
                "terrain.cell_box",
                21,
                i,
                format!(
                    "a vertex lies outside the box of cell {}",
                    slot.unwrap_or(0)
                ),
            ));
        }
    }
}

/// Rule 5 (neighbours) and warning rule 6: mutual adjacency, edge codes.
fn adjacency(land: &Land, f: &mut Findings) {
    let nf = land.faces.len();
    for (i, face) in land.faces.iter().enumerate() {
        for e in 0..3 {
            let nb = face.nb[e];
            let code = (face.edges >> (2 * e)) & 3;
            if nb == NONE {
                if code != 3 {
                    f.warn(TerrainError::record(
                        "terrain.edge_code",
                        21,
                        i,
                        format!("edge {e}: no neighbour but code {code}"),
                    ));
                }
                continue;
            }
            let Some(other) = land.faces.get(usize::from(nb)) else {
                f.error(TerrainError::record(
                    "terrain.neighbour_range",
                    21,
                    i,
                    format!("edge {e}: neighbour {nb} >= face count {nf}"),
                ));
                continue;
            };
            if !other.nb.contains(&(i as u16)) {
                f.error(TerrainError::record(
                    "terrain.neighbour_mutual",
                    21,
                    i,
                    format!("edge {e}: neighbour {nb} does not name face {i}"),
                ));
                continue;
            }
            if code == 3 || other.nb.get(usize::from(code)) != Some(&(i as u16)) {
                f.warn(TerrainError::record(
                    "terrain.edge_code",
                    21,
                    i,
                    format!("edge {e}: code {code} does not point back from face {nb}"),
                ));
            }
        }
    }
}

/// Rule 6 and warning rule 5: Res11.
fn draw_order(land: &Land, f: &mut Findings) {
    let nf = land.faces.len();
    let mut seen = vec![false; nf];
    for (k, e) in land.order.iter().enumerate() {
        let face = usize::from(e.face);
        if face >= nf {
            f.error(TerrainError::record(
                "terrain.res11_range",
                11,
                k,
                format!("face {face} >= face count {nf}"),
            ));
            f.regenerate_order = true;
        } else if std::mem::replace(&mut seen[face], true) {
            f.error(TerrainError::record(
                "terrain.res11_permutation",
                11,
                k,
                format!("face {face} named twice"),
            ));
            f.regenerate_order = true;
        }
        if e.byte3 != 0 {
            f.note(TerrainError::record(
                "terrain.res11_byte3",
                11,
                k,
                format!("4th byte {}", e.byte3),
            ));
        }
    }
    let owner = face_slots(land);
    let mut met = vec![0u64; 1 << 10];
    for (si, s) in land.slots.iter().enumerate() {
        let r = usize::from(s.first)
            ..(usize::from(s.first) + usize::from(s.count)).min(land.order.len());
        // The pairs met in this cell: one bit per (tex1, tex2), cleared
        // again from `pairs` after the cell (linear, not a search per face).
        let mut pairs = Vec::new();
        for k in r {
            let e = land.order[k];
            let Some(face) = land.faces.get(usize::from(e.face)) else {
                continue;
            };
            if owner[usize::from(e.face)] != Some(si as u32) {
                f.warn(TerrainError::record(
                    "terrain.res11_cell",
                    11,
                    k,
                    format!("face {} is not in cell {si}", e.face),
                ));
            }
            let pair = (face.tex1, face.tex2);
            let start = pairs.last() != Some(&pair);
            let bit = (usize::from(pair.0) << 8) | usize::from(pair.1);
            if start && met[bit / 64] & (1 << (bit % 64)) != 0 {
                f.warn(TerrainError::record(
                    "terrain.res11_pair_repeat",
                    11,
                    k,
                    format!("pair {pair:?} repeats in cell {si}"),
                ));
            }
            if start {
                met[bit / 64] |= 1 << (bit % 64);
                pairs.push(pair);
            }
            if e.flags & 0x7F != 0x48 | if start { 0x10 } else { 0 } {
                f.warn(TerrainError::record(
                    "terrain.res11_flags",
                    11,
                    k,
                    format!("flags 0x{:02X}, batch start {start}", e.flags),
                ));
            }
        }
        for (a, b) in pairs {
            let bit = (usize::from(a) << 8) | usize::from(b);
            met[bit / 64] &= !(1 << (bit % 64));
        }
    }
}

/// Warning rules 2 (header box), 4 (unused vertices, LOD1 ⊂ LOD0) and 9
/// (Res14 and normals).
fn vertices(land: &Land, f: &mut Findings) {
    let nv = land.positions.len();
    let mut used = vec![0u8; nv];
    let lod0 = land.lod_range(0);
    let mut second = vec![false; nv];
    for (i, face) in land.faces.iter().enumerate() {
        for &v in face.v.iter().filter(|&&v| usize::from(v) < nv) {
            used[usize::from(v)] |= if lod0.contains(&i) { 1 } else { 2 };
            second[usize::from(v)] |= face.tex2 != NO_TEX2;
        }
    }
    for (v, &u) in used.iter().enumerate() {
        if u == 0 {
            f.warn(TerrainError::record(
                "terrain.unused_vertex",
                3,
                v,
                "no face uses it",
            ));
        } else if u == 2 {
            f.warn(TerrainError::record(
                "terrain.lod1_vertex",
                3,
                v,
                "used by LOD1 only",
            ));
        }
        let a = land.alpha_of(v);
        if a.is_finite() && !(0.0..=1.0).contains(&a) {
            f.warn(TerrainError::record(
                "terrain.res14_range",
                14,
                v,
                format!("alpha {a}"),
            ));
        } else if a.is_finite() && !second[v] && a != 1.0 {
            // No face of the vertex has a second material: the alpha
            // blends nothing (kept as stored).
            f.note(TerrainError::record(
                "terrain.res14_unused",
                14,
                v,
                format!("alpha {a} on a vertex without a second material (not shown)"),
            ));
        }
        let n = land.normal_of(v);
        let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
        if (len - 1.0).abs() > 0.02 {
            f.warn(TerrainError::record(
                "terrain.vertex_normal",
                4,
                v,
                format!("length {len}"),
            ));
        }
    }
    let finite = land
        .positions
        .iter()
        .filter(|p| p.iter().all(|c| c.is_finite()));
    let (mut lo, mut hi) = ([f32::MAX; 3], [f32::MIN; 3]);
    for p in finite {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    let (clo, chi) = corner_box(&land.corners);
    if nv > 0 && (clo != lo || chi != hi) {
        f.warn(TerrainError::stream(
            "terrain.header_box",
            2,
            format!("header box {clo:?}..{chi:?}, vertices span {lo:?}..{hi:?}"),
        ));
    }
}

/// Min and max over the 8 header corners.
pub fn corner_box(corners: &[[f32; 3]; 8]) -> ([f32; 3], [f32; 3]) {
    let (mut lo, mut hi) = ([f32::MAX; 3], [f32::MIN; 3]);
    for c in corners {
        for k in 0..3 {
            lo[k] = lo[k].min(c[k]);
            hi[k] = hi[k].max(c[k]);
        }
    }
    (lo, hi)
}
