//! Encoding the IR back into a canonical model NRes (msh-core §8,
//! msh-animation §8; container layout format-notes §1).
//!
//! Entries are written in the order of [`Model::entries`] with their names.
//! Decoded streams are serialised from the typed fields, with
//! `attr1` = record count (Res2: slot count, Res10: node count, Res8: key
//! count, Res19: word count) and `attr3` = the format value (stride; Res2: 68,
//! Res8: 4, Res10: 0; Res1: 38, or 24 for the legacy table); `Res19.attr2` =
//! [`Model::frame_count`]. Every other attribute is written as stored in the
//! entry. Undecoded streams are written from `raw` with their attributes.
//! For every valid model, `encode(decode(bytes)) == bytes`.

use super::error::MshError;
use super::ir::*;
use super::read::{NODE24_SIZE, NODE38_SIZE, RES2_HEADER, SLOT_SIZE};
use super::validate;
use crate::nres;

/// Encodes `model` as a canonical NRes file.
///
/// The model is validated first ([`validate::validate`]); an invalid model
/// is not written.
///
/// # Errors
/// Any rule of [`validate::validate`]; `nres.name` / `nres.total_size` from
/// the container writer; `msh.attr_count` when a count does not fit 32 bits.
pub fn encode(model: &Model) -> Result<Vec<u8>, MshError> {
    validate::validate(model)?;
    let payloads: Vec<(Vec<u8>, u32, u32, u32)> = model
        .entries
        .iter()
        .map(|e| stream_payload(model, e))
        .collect::<Result<_, _>>()?;
    let entries: Vec<nres::Entry<'_>> = model
        .entries
        .iter()
        .zip(&payloads)
        .map(|(e, (data, a1, a2, a3))| nres::Entry {
            type_id: e.type_id,
            attr1: *a1,
            attr2: *a2,
            attr3: *a3,
            name: &e.name,
            data,
        })
        .collect();
    Ok(nres::write(&entries)?)
}

fn count32(type_id: u32, n: usize) -> Result<u32, MshError> {
    u32::try_from(n).map_err(|_| {
        MshError::at_stream(
            "msh.attr_count",
            type_id,
            format!("{n} records do not fit a 32-bit attr1"),
        )
    })
}

/// Payload and attributes `(data, attr1, attr2, attr3)` of one entry:
/// `raw` as stored, or the typed fields serialised by the stream's writer
/// with `attr1` = count and `attr3` = the format value (msh-core §8.2).
///
/// # Errors
/// `msh.attr_count` when a count does not fit 32 bits; `msh.res10` for a
/// name longer than 4 GiB.
fn stream_payload(m: &Model, e: &StreamEntry) -> Result<(Vec<u8>, u32, u32, u32), MshError> {
    let t = e.type_id;
    if let Some(raw) = &e.raw {
        return Ok((raw.clone(), e.attr1, e.attr2, e.attr3));
    }
    let mut out = Vec::new();
    let o = &mut out;
    let (count, attr2, attr3) = match t {
        res::NODES => {
            let (count, stride) = put_res1(o, &m.nodes);
            (count, e.attr2, stride)
        }
        res::SLOTS => (put_res2(o, m), e.attr2, SLOT_SIZE as u32),
        res::POSITIONS => (put_records(o, &m.positions, 12, put3), e.attr2, 12),
        res::NORMALS => {
            let v = m.normals.as_deref().unwrap_or(&[]);
            o.extend(v.iter().flat_map(|n| n.map(|b| b as u8)));
            (v.len(), e.attr2, 4)
        }
        res::UVS => {
            let v = m.uvs.as_deref().unwrap_or(&[]);
            let count = put_records(o, v, 4, |o, uv| {
                o.extend_from_slice(&uv[0].to_le_bytes());
                o.extend_from_slice(&uv[1].to_le_bytes());
            });
            (count, e.attr2, 4)
        }
        res::INDICES => (
            put_records(o, &m.indices, 2, |o, i| put_words(o, &[*i])),
            e.attr2,
            2,
        ),
        res::TRIS => {
            let v = m.tris.as_deref().unwrap_or(&[]);
            (put_records(o, v, 16, put_tri), e.attr2, 16)
        }
        res::KEYS => {
            let v = m.keys.as_deref().unwrap_or(&[]);
            (put_records(o, v, 24, put_key), e.attr2, 4)
        }
        res::NAMES => {
            put_res10(o, m.names.as_deref().unwrap_or(&[]))?;
            (m.nodes.len(), e.attr2, 0)
        }
        res::BATCHES => (put_records(o, &m.batches, 20, put_batch), e.attr2, 20),
        res::RES15 => (put_raw(o, m.res15.as_deref()), e.attr2, 8),
        res::RES16 => (put_raw(o, m.res16.as_deref()), e.attr2, 8),
        res::RES18 => (put_raw(o, m.res18.as_deref()), e.attr2, 4),
        res::FRAME_MAP => {
            let v = m.frame_map.as_deref().unwrap_or(&[]);
            (
                put_records(o, v, 2, |o, w| put_words(o, &[*w])),
                m.frame_count,
                2,
            )
        }
        // Not a decoded type and no raw payload: an empty stream.
        _ => return Ok((Vec::new(), e.attr1, e.attr2, e.attr3)),
    };
    Ok((out, count32(t, count)?, attr2, attr3))
}

/// Appends `v` record by record with `put` (after reserving `stride` bytes
/// per record); returns the record count.
fn put_records<T>(
    out: &mut Vec<u8>,
    v: &[T],
    stride: usize,
    put: impl Fn(&mut Vec<u8>, &T),
) -> usize {
    out.reserve(v.len() * stride);
    for r in v {
        put(out, r);
    }
    v.len()
}

/// Appends opaque fixed-size records (Res15, Res16, Res18; absent = empty);
/// returns the record count.
fn put_raw<const N: usize>(out: &mut Vec<u8>, v: Option<&[[u8; N]]>) -> usize {
    let v = v.unwrap_or(&[]);
    out.extend(v.iter().flatten());
    v.len()
}

/// Res1 (msh-core §5.1): `Node38` records, or the legacy 24-byte table as
/// stored; returns `(count, attr3)`.
fn put_res1(out: &mut Vec<u8>, nodes: &Nodes) -> (usize, u32) {
    match nodes {
        Nodes::Node38(v) => {
            let count = put_records(out, v, NODE38_SIZE, |out, n| {
                put_words(out, &[n.flags, n.parent, n.map_start, n.fallback_key]);
                put_words(out, &n.slots);
            });
            (count, NODE38_SIZE as u32)
        }
        Nodes::Legacy24 { raw } => {
            out.extend_from_slice(raw);
            (raw.len() / NODE24_SIZE, NODE24_SIZE as u32)
        }
    }
}

/// Res2 (msh-core §5.2): the 0x8C-byte header then the `Slot68` records;
/// returns the slot count.
fn put_res2(out: &mut Vec<u8>, m: &Model) -> usize {
    out.reserve(RES2_HEADER + m.slots.len() * SLOT_SIZE);
    let h = &m.header;
    for c in &h.hull {
        put3(out, c);
    }
    put3(out, &h.sphere_center);
    put_f(out, h.sphere_radius);
    put3(out, &h.capsule_a);
    put3(out, &h.capsule_b);
    put_f(out, h.capsule_radius);
    for s in &m.slots {
        put_words(
            out,
            &[s.tri_start, s.tri_count, s.batch_start, s.batch_count],
        );
        put3(out, &s.aabb_min);
        put3(out, &s.aabb_max);
        put3(out, &s.sphere_center);
        put_f(out, s.sphere_radius);
        for w in s.tail {
            out.extend_from_slice(&w.to_le_bytes());
        }
    }
    m.slots.len()
}

/// One 16-byte Res7 record (msh-core §5.7).
fn put_tri(out: &mut Vec<u8>, d: &TriDesc16) {
    put_words(out, &[d.flags]);
    put_words(out, &d.links);
    for n in d.normal {
        out.extend_from_slice(&n.to_le_bytes());
    }
    put_words(out, &[d.sel]);
}

/// One 24-byte Res8 key (msh-animation §2.1).
fn put_key(out: &mut Vec<u8>, k: &AnimKey24) {
    put3(out, &k.pos);
    put_f(out, k.time);
    for q in k.q {
        out.extend_from_slice(&q.to_le_bytes());
    }
}

/// One 20-byte Res13 record (msh-core §5.8).
fn put_batch(out: &mut Vec<u8>, b: &Batch20) {
    put_words(
        out,
        &[
            b.flags,
            b.material_index,
            b.opaque4,
            b.opaque6,
            b.index_count,
        ],
    );
    out.extend_from_slice(&b.index_start.to_le_bytes());
    out.extend_from_slice(&b.opaque14.to_le_bytes());
    out.extend_from_slice(&b.base_vertex.to_le_bytes());
}

/// Res10 (msh-core §5.9): per node `u32 len` then the text and a NUL; an
/// absent or empty name is written as `len 0` (read back as `None`).
///
/// # Errors
/// `msh.res10` for a name longer than 4 GiB.
fn put_res10(out: &mut Vec<u8>, names: &[Option<Vec<u8>>]) -> Result<(), MshError> {
    for n in names {
        match n.as_deref() {
            Some(s) if !s.is_empty() => {
                let len = u32::try_from(s.len())
                    .map_err(|_| MshError::at_stream("msh.res10", 10, "name longer than 4 GiB"))?;
                out.extend_from_slice(&len.to_le_bytes());
                out.extend_from_slice(s);
                out.push(0);
            }
            _ => out.extend_from_slice(&0u32.to_le_bytes()),
        }
    }
    Ok(())
}

/// Appends little-endian u16 words.
fn put_words(out: &mut Vec<u8>, words: &[u16]) {
    for w in words {
        out.extend_from_slice(&w.to_le_bytes());
    }
}

fn put_f(out: &mut Vec<u8>, v: f32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put3(out: &mut Vec<u8>, v: &[f32; 3]) {
    for c in v {
        put_f(out, *c);
    }
}
