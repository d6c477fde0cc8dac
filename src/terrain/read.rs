//! Land.msh bytes → [`Land`] (terrain-notes §1, validation rules §5.2 1-2).
//!
//! Only the structural rules are checked here (streams present once, stride,
//! counts, limits): what a decoder needs to stay in bounds. Everything else
//! is [`super::validate`]'s job. Allocation is bounded by the file size.

use super::ir::*;
use super::TerrainError;
use crate::nres;

/// Stride of each fixed-size stream (Res2 is header + slots).
pub fn stride_of(type_id: u32) -> Option<usize> {
    match type_id {
        1 => Some(SQUARE_SIZE),
        2 => Some(SLOT_SIZE),
        3 => Some(12),
        4 | 5 | 11 | 14 | 18 => Some(4),
        21 => Some(FACE_SIZE),
        _ => None,
    }
}

fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}

fn f32_at(b: &[u8], o: usize) -> f32 {
    f32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}

fn vec3_at(b: &[u8], o: usize) -> [f32; 3] {
    [f32_at(b, o), f32_at(b, o + 4), f32_at(b, o + 8)]
}

/// Checks the stream set and each stream's size, attr1 and attr3 (rule 1).
fn check_entry(e: &nres::Entry<'_>) -> Result<(), TerrainError> {
    let t = e.type_id;
    let Some(stride) = stride_of(t) else {
        return Err(TerrainError::stream(
            "terrain.streams",
            t,
            "unknown stream type in a terrain file",
        ));
    };
    let size = e.data.len();
    let body = if t == 2 {
        if size < RES2_HEADER {
            return Err(TerrainError::stream(
                "terrain.stride",
                t,
                format!("payload {size} bytes is shorter than the 0x8C header"),
            ));
        }
        size - RES2_HEADER
    } else {
        size
    };
    if body % stride != 0 || e.attr3 as usize != stride {
        return Err(TerrainError::stream(
            "terrain.stride",
            t,
            format!(
                "payload {size} bytes, attr3 {}: not whole records of {stride} bytes",
                e.attr3
            ),
        ));
    }
    if e.attr1 as usize != body / stride {
        return Err(TerrainError::stream(
            "terrain.count",
            t,
            format!(
                "attr1 {} but the payload holds {} records",
                e.attr1,
                body / stride
            ),
        ));
    }
    Ok(())
}

/// Finds each stream once (rule 1): 1, 2, 3, 4, 5, 11, 18, 21 required, 14
/// optional.
fn stream_index(a: &nres::Archive<'_>) -> Result<[Option<usize>; 22], TerrainError> {
    let mut idx = [None; 22];
    for (i, e) in a.entries.iter().enumerate() {
        check_entry(e)?;
        let slot = &mut idx[e.type_id as usize];
        if slot.is_some() {
            return Err(TerrainError::stream(
                "terrain.streams",
                e.type_id,
                "stream present twice",
            ));
        }
        *slot = Some(i);
    }
    for t in [1u32, 2, 3, 4, 5, 11, 18, 21] {
        if idx[t as usize].is_none() {
            return Err(TerrainError::stream(
                "terrain.streams",
                t,
                "required stream missing",
            ));
        }
    }
    Ok(idx)
}

fn records<T>(data: &[u8], stride: usize, f: impl Fn(&[u8]) -> T) -> Vec<T> {
    data.chunks_exact(stride).map(f).collect()
}

fn square(r: &[u8]) -> Square {
    let w = |k: usize| u16_at(r, 2 * k);
    Square {
        hdr: [w(0), w(1), w(2), w(3)],
        slots: std::array::from_fn(|k| w(4 + k)),
    }
}

fn slot(r: &[u8]) -> Slot {
    Slot {
        first: u16_at(r, 0),
        count: u16_at(r, 2),
        reserved: [r[4], r[5], r[6], r[7]],
        min: vec3_at(r, 8),
        max: vec3_at(r, 20),
        centre: vec3_at(r, 32),
        radius: f32_at(r, 44),
        tail: r[48..68].try_into().expect("20 bytes"),
    }
}

fn face(r: &[u8]) -> Face {
    let w = |o: usize| u16_at(r, o);
    Face {
        flags: w(0),
        surface: w(2),
        tex1: r[4],
        tex2: r[5],
        word3: w(6),
        v: [w(8), w(10), w(12)],
        nb: [w(14), w(16), w(18)],
        normal: [w(20) as i16, w(22) as i16, w(24) as i16],
        edges: r[26],
        byte27: r[27],
    }
}

fn u16x2(r: &[u8]) -> [u16; 2] {
    [u16_at(r, 0), u16_at(r, 2)]
}

/// Checks vertex and face counts across streams and the u16 limits (rule 2).
fn check_counts(land: &Land) -> Result<(), TerrainError> {
    let v = land.positions.len();
    let per_vertex = [
        (4, land.normals.len()),
        (5, land.uv0.len()),
        (18, land.uv1.len()),
        (14, land.alpha.as_ref().map_or(v, Vec::len)),
    ];
    for (t, n) in per_vertex {
        if n != v {
            return Err(TerrainError::stream(
                "terrain.vertex_count",
                t,
                format!("{n} records but Res3 has {v} vertices"),
            ));
        }
    }
    let f = land.faces.len();
    if land.order.len() != f {
        return Err(TerrainError::stream(
            "terrain.face_count",
            11,
            format!("{} entries but Res21 has {f} faces", land.order.len()),
        ));
    }
    if v > 65_535 || f > 65_535 {
        return Err(TerrainError::file(
            "terrain.limit",
            format!("{v} vertices / {f} faces: at most 65535 of each fit u16 indices"),
        ));
    }
    Ok(())
}

/// Decodes Land.msh bytes into the IR.
///
/// # Errors
/// `nres.*` when the container is broken; `terrain.streams` (a required
/// stream missing, one present twice, an unknown type), `terrain.stride`
/// (payload not whole records, attr3 ≠ stride, Res2 shorter than its
/// header), `terrain.count` (attr1 ≠ records), `terrain.vertex_count`,
/// `terrain.face_count`, `terrain.limit` (terrain-notes §5.2 rules 1-2).
/// These hold in both modes: nothing can be decoded without them.
pub fn decode(bytes: &[u8]) -> Result<Land, TerrainError> {
    let a = nres::read(bytes, nres::Mode::Tolerant)?;
    let idx = stream_index(&a)?;
    let data = |t: usize| idx[t].map(|i| a.entries[i].data);
    let d = |t: usize| data(t).unwrap_or(&[]);
    let res2 = d(2);
    let land = Land {
        entries: a.entries.iter().map(StreamEntry::decoded).collect(),
        squares: records(d(1), SQUARE_SIZE, square),
        corners: std::array::from_fn(|k| vec3_at(res2, 12 * k)),
        header_tail: res2[0x60..RES2_HEADER].try_into().expect("44 bytes"),
        slots: records(&res2[RES2_HEADER..], SLOT_SIZE, slot),
        positions: records(d(3), 12, |r| vec3_at(r, 0)),
        normals: records(d(4), 4, |r| [r[0], r[1], r[2], r[3]]),
        uv0: records(d(5), 4, u16x2),
        uv1: records(d(18), 4, u16x2),
        alpha: data(14).map(|b| records(b, 4, |r| f32_at(r, 0))),
        order: records(d(11), 4, |r| DrawEntry {
            face: u16_at(r, 0),
            flags: r[2],
            byte3: r[3],
        }),
        faces: records(d(21), FACE_SIZE, face),
    };
    check_counts(&land)?;
    Ok(land)
}
