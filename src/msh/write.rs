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

/// Payload and attributes `(data, attr1, attr2, attr3)` of one entry.
fn stream_payload(m: &Model, e: &StreamEntry) -> Result<(Vec<u8>, u32, u32, u32), MshError> {
    let t = e.type_id;
    if let Some(raw) = &e.raw {
        return Ok((raw.clone(), e.attr1, e.attr2, e.attr3));
    }
    let mut out = Vec::new();
    let (count, attr2, attr3) = match t {
        res::NODES => match &m.nodes {
            Nodes::Node38(v) => {
                out.reserve(v.len() * NODE38_SIZE);
                for n in v {
                    for w in [n.flags, n.parent, n.map_start, n.fallback_key] {
                        out.extend_from_slice(&w.to_le_bytes());
                    }
                    for s in n.slots {
                        out.extend_from_slice(&s.to_le_bytes());
                    }
                }
                (v.len(), e.attr2, NODE38_SIZE as u32)
            }
            Nodes::Legacy24 { raw } => {
                out.extend_from_slice(raw);
                (raw.len() / NODE24_SIZE, e.attr2, NODE24_SIZE as u32)
            }
        },
        res::SLOTS => {
            out.reserve(RES2_HEADER + m.slots.len() * SLOT_SIZE);
            let h = &m.header;
            for c in &h.hull {
                put3(&mut out, c);
            }
            put3(&mut out, &h.sphere_center);
            put_f(&mut out, h.sphere_radius);
            put3(&mut out, &h.capsule_a);
            put3(&mut out, &h.capsule_b);
            put_f(&mut out, h.capsule_radius);
            for s in &m.slots {
                for w in [s.tri_start, s.tri_count, s.batch_start, s.batch_count] {
                    out.extend_from_slice(&w.to_le_bytes());
                }
                put3(&mut out, &s.aabb_min);
                put3(&mut out, &s.aabb_max);
                put3(&mut out, &s.sphere_center);
                put_f(&mut out, s.sphere_radius);
                for w in s.tail {
                    out.extend_from_slice(&w.to_le_bytes());
                }
            }
            (m.slots.len(), e.attr2, SLOT_SIZE as u32)
        }
        res::POSITIONS => {
            out.reserve(m.positions.len() * 12);
            for p in &m.positions {
                put3(&mut out, p);
            }
            (m.positions.len(), e.attr2, 12)
        }
        res::NORMALS => {
            let v = m.normals.as_deref().unwrap_or(&[]);
            out.extend(v.iter().flat_map(|n| n.map(|b| b as u8)));
            (v.len(), e.attr2, 4)
        }
        res::UVS => {
            let v = m.uvs.as_deref().unwrap_or(&[]);
            out.reserve(v.len() * 4);
            for uv in v {
                out.extend_from_slice(&uv[0].to_le_bytes());
                out.extend_from_slice(&uv[1].to_le_bytes());
            }
            (v.len(), e.attr2, 4)
        }
        res::INDICES => {
            out.reserve(m.indices.len() * 2);
            for i in &m.indices {
                out.extend_from_slice(&i.to_le_bytes());
            }
            (m.indices.len(), e.attr2, 2)
        }
        res::TRIS => {
            let v = m.tris.as_deref().unwrap_or(&[]);
            out.reserve(v.len() * 16);
            for d in v {
                out.extend_from_slice(&d.flags.to_le_bytes());
                for l in d.links {
                    out.extend_from_slice(&l.to_le_bytes());
                }
                for n in d.normal {
                    out.extend_from_slice(&n.to_le_bytes());
                }
                out.extend_from_slice(&d.sel.to_le_bytes());
            }
            (v.len(), e.attr2, 16)
        }
        res::KEYS => {
            let v = m.keys.as_deref().unwrap_or(&[]);
            out.reserve(v.len() * 24);
            for k in v {
                put3(&mut out, &k.pos);
                put_f(&mut out, k.time);
                for q in k.q {
                    out.extend_from_slice(&q.to_le_bytes());
                }
            }
            (v.len(), e.attr2, 4)
        }
        res::NAMES => {
            let v = m.names.as_deref().unwrap_or(&[]);
            for n in v {
                match n.as_deref() {
                    Some(s) if !s.is_empty() => {
                        let len = u32::try_from(s.len()).map_err(|_| {
                            MshError::at_stream("msh.res10", 10, "name longer than 4 GiB")
                        })?;
                        out.extend_from_slice(&len.to_le_bytes());
                        out.extend_from_slice(s);
                        out.push(0);
                    }
                    // An empty name is written as `len 0` (read back as None).
                    _ => out.extend_from_slice(&0u32.to_le_bytes()),
                }
            }
            (m.nodes.len(), e.attr2, 0)
        }
        res::BATCHES => {
            out.reserve(m.batches.len() * 20);
            for b in &m.batches {
                for w in [
                    b.flags,
                    b.material_index,
                    b.opaque4,
                    b.opaque6,
                    b.index_count,
                ] {
                    out.extend_from_slice(&w.to_le_bytes());
                }
                out.extend_from_slice(&b.index_start.to_le_bytes());
                out.extend_from_slice(&b.opaque14.to_le_bytes());
                out.extend_from_slice(&b.base_vertex.to_le_bytes());
            }
            (m.batches.len(), e.attr2, 20)
        }
        res::RES15 => {
            let v = m.res15.as_deref().unwrap_or(&[]);
            out.extend(v.iter().flatten());
            (v.len(), e.attr2, 8)
        }
        res::RES16 => {
            let v = m.res16.as_deref().unwrap_or(&[]);
            out.extend(v.iter().flatten());
            (v.len(), e.attr2, 8)
        }
        res::RES18 => {
            let v = m.res18.as_deref().unwrap_or(&[]);
            out.extend(v.iter().flatten());
            (v.len(), e.attr2, 4)
        }
        res::FRAME_MAP => {
            let v = m.frame_map.as_deref().unwrap_or(&[]);
            out.reserve(v.len() * 2);
            for w in v {
                out.extend_from_slice(&w.to_le_bytes());
            }
            (v.len(), m.frame_count, 2)
        }
        // Not a decoded type and no raw payload: an empty stream.
        _ => return Ok((Vec::new(), e.attr1, e.attr2, e.attr3)),
    };
    Ok((out, count32(t, count)?, attr2, attr3))
}

fn put_f(out: &mut Vec<u8>, v: f32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put3(out: &mut Vec<u8>, v: &[f32; 3]) {
    for c in v {
        put_f(out, *c);
    }
}
