//! [`Land`] → Land.msh bytes (terrain-notes §1, container PN §1).
//!
//! Streams are written in the stored order of [`Land::entries`] with their
//! names; `attr1` = record count (Res2: slot count), `attr3` = stride (68
//! for Res2), `attr2` as stored (Res1: grid cells along X). For every file
//! that [`super::read::decode`] accepts and that was written canonically,
//! `encode(decode(bytes)) == bytes`.

use super::ir::*;
use super::read::stride_of;
use super::TerrainError;
use crate::nres;

fn put_f32s(out: &mut Vec<u8>, v: &[f32]) {
    for x in v {
        out.extend_from_slice(&x.to_le_bytes());
    }
}

fn put_u16s(out: &mut Vec<u8>, v: &[u16]) {
    for x in v {
        out.extend_from_slice(&x.to_le_bytes());
    }
}

fn res2(land: &Land) -> Vec<u8> {
    let mut out = Vec::with_capacity(RES2_HEADER + SLOT_SIZE * land.slots.len());
    for c in &land.corners {
        put_f32s(&mut out, c);
    }
    out.extend_from_slice(&land.header_tail);
    for s in &land.slots {
        put_u16s(&mut out, &[s.first, s.count]);
        out.extend_from_slice(&s.reserved);
        put_f32s(&mut out, &s.min);
        put_f32s(&mut out, &s.max);
        put_f32s(&mut out, &s.centre);
        put_f32s(&mut out, &[s.radius]);
        out.extend_from_slice(&s.tail);
    }
    out
}

/// The 28 bytes of one Res21 record.
pub fn face_bytes(f: &Face) -> [u8; FACE_SIZE] {
    let mut out = Vec::with_capacity(FACE_SIZE);
    put_u16s(&mut out, &[f.flags, f.surface]);
    out.extend_from_slice(&[f.tex1, f.tex2]);
    put_u16s(&mut out, &[f.word3]);
    put_u16s(&mut out, &f.v);
    put_u16s(&mut out, &f.nb);
    put_u16s(&mut out, &f.normal.map(|n| n as u16));
    out.extend_from_slice(&[f.edges, f.byte27]);
    out.try_into().expect("28 bytes")
}

/// The payload of stream `type_id`.
fn payload(land: &Land, type_id: u32) -> Vec<u8> {
    let mut out = Vec::new();
    match type_id {
        1 => {
            for s in &land.squares {
                put_u16s(&mut out, &s.hdr);
                put_u16s(&mut out, &s.slots);
            }
        }
        2 => out = res2(land),
        3 => land.positions.iter().for_each(|p| put_f32s(&mut out, p)),
        4 => land.normals.iter().for_each(|n| out.extend_from_slice(n)),
        5 => land.uv0.iter().for_each(|u| put_u16s(&mut out, u)),
        18 => land.uv1.iter().for_each(|u| put_u16s(&mut out, u)),
        14 => put_f32s(&mut out, land.alpha.as_deref().unwrap_or(&[])),
        11 => {
            for e in &land.order {
                put_u16s(&mut out, &[e.face]);
                out.extend_from_slice(&[e.flags, e.byte3]);
            }
        }
        21 => land
            .faces
            .iter()
            .for_each(|f| out.extend_from_slice(&face_bytes(f))),
        _ => {}
    }
    out
}

/// Encodes `land` as a canonical NRes file.
///
/// # Errors
/// `terrain.streams` for an entry of unknown type; `nres.name` /
/// `nres.total_size` from the container writer.
pub fn encode(land: &Land) -> Result<Vec<u8>, TerrainError> {
    let mut payloads = Vec::with_capacity(land.entries.len());
    for e in &land.entries {
        let stride = stride_of(e.type_id).ok_or_else(|| {
            TerrainError::stream("terrain.streams", e.type_id, "unknown stream type")
        })?;
        let data = payload(land, e.type_id);
        let body = if e.type_id == 2 {
            data.len() - RES2_HEADER
        } else {
            data.len()
        };
        payloads.push((data, (body / stride) as u32, stride as u32));
    }
    let entries: Vec<nres::Entry<'_>> = land
        .entries
        .iter()
        .zip(&payloads)
        .map(|(e, (data, a1, a3))| nres::Entry {
            type_id: e.type_id,
            attr1: *a1,
            attr2: e.attr2,
            attr3: *a3,
            name: &e.name,
            data,
        })
        .collect();
    Ok(nres::write(&entries)?)
}
