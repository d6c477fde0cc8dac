//! Decoding an MSH model NRes into the IR (msh-core §3–§5, §7;
//! msh-animation §2).
//!
//! Streams are located by type id only (format-notes §2), never by name or
//! order. Every stream the IR knows (Res1, 2, 3, 4, 5, 6, 7, 8, 10, 13, 15,
//! 16, 18, 19) is decoded into typed fields; every other entry (9, 17, 20,
//! anything) is kept raw in [`Model::entries`] with its name and attributes.
//!
//! Counts always come from payload sizes; `attr1` is only compared, never
//! used to allocate. Every decoded model is then checked with
//! [`validate`](super::validate::validate) (strict) or repaired first
//! (tolerant, see [`Mode::Tolerant`] and `validate::repair`).

use super::error::MshError;
use super::ir::*;
use super::validate;
use crate::nres;

/// How strictly the codec treats defects: the NRes container's mode.
///
/// - [`Mode::Strict`]: every broken rule of msh-core §7 / msh-animation §9 is
///   an error; only canonical-form findings of the container
///   (`nres.alignment`, `nres.padding`, `nres.name_fill`) are warnings.
/// - [`Mode::Tolerant`]: locally repairable defects are repaired in the IR and
///   listed as warnings (see `validate::repair` for the list); everything
///   that would make an index unsafe and cannot be repaired locally stays an
///   error. A tolerant model always passes [`validate`](super::validate::validate).
pub use crate::nres::Mode;

/// A decoded model and the non-fatal findings (canonical-form deviations; in
/// tolerant mode also every repair made, each with its rule id).
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    /// The model IR.
    pub model: Model,
    /// Warnings, in the order found.
    pub warnings: Vec<MshError>,
}

/// Stream types the IR decodes into typed fields (everything else is raw).
pub const DECODED_TYPES: [u32; 14] = [1, 2, 3, 4, 5, 6, 7, 8, 10, 13, 15, 16, 18, 19];

/// Streams every model must have (msh-core §3.1).
pub const REQUIRED_TYPES: [u32; 5] = [1, 2, 3, 6, 13];

/// Size of the Res2 header (msh-core §5.2.1).
pub const RES2_HEADER: usize = 0x8C;
/// Size of one `Slot68` record.
pub const SLOT_SIZE: usize = 68;
/// Size of one `Node38` record.
pub const NODE38_SIZE: usize = 38;
/// Size of one legacy node record (`MTCHECK.MSH`).
pub const NODE24_SIZE: usize = 24;

/// Record size of a fixed-stride decoded stream (Res1 is 38 here; Res2 and
/// Res10 have no fixed stride).
pub fn record_size(type_id: u32) -> Option<usize> {
    Some(match type_id {
        1 => NODE38_SIZE,
        3 => 12,
        4 | 5 | 18 => 4,
        6 | 19 => 2,
        7 => 16,
        8 => 24,
        13 => 20,
        15 | 16 => 8,
        _ => return None,
    })
}

/// The `attr3` a decoded stream must carry (msh-core §7.1, §8.2): the stride,
/// except Res2 = 68 (slot size), Res8 = 4, Res10 = 0.
pub fn expected_attr3(type_id: u32) -> Option<u32> {
    match type_id {
        2 => Some(SLOT_SIZE as u32),
        8 => Some(4),
        10 => Some(0),
        t => record_size(t).map(|s| s as u32),
    }
}

/// True when the archive is a model: it has streams 1, 2, 3, 6 and 13
/// (msh-core §3.3). Terrain (`Land.msh`: 11/14/21, no 6 and no 13) is not.
pub fn is_model(archive: &nres::Archive<'_>) -> bool {
    REQUIRED_TYPES
        .iter()
        .all(|t| archive.entries.iter().any(|e| e.type_id == *t))
}

/// Parses `bytes` as an NRes container and decodes the model in it.
///
/// # Errors
/// Any `nres.*` rule of the container (format-notes §1), then the rules of
/// [`decode_entries`].
pub fn decode(bytes: &[u8], mode: Mode) -> Result<Decoded, MshError> {
    let archive = nres::read(bytes, mode)?;
    decode_entries(&archive, mode)
}

#[inline]
fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}
#[inline]
fn i16_at(b: &[u8], o: usize) -> i16 {
    i16::from_le_bytes([b[o], b[o + 1]])
}
#[inline]
fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}
#[inline]
fn f32_at(b: &[u8], o: usize) -> f32 {
    f32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}
#[inline]
fn vec3_at(b: &[u8], o: usize) -> [f32; 3] {
    [f32_at(b, o), f32_at(b, o + 4), f32_at(b, o + 8)]
}

/// Decodes the model streams of an already parsed NRes (a bare model file,
/// or the nested NRes of an archive's `.msh` entry). The archive's own
/// warnings are carried over.
///
/// Structural checks made here (the IR cannot hold these defects):
/// `msh.duplicate_stream` (a decoded type twice), `msh.missing_stream`
/// (1, 2, 3, 6, 13), `msh.res2_size` (`size < 0x8C` or
/// `(size - 0x8C) % 68 != 0`), `msh.stride` (size not a multiple of the
/// stride, or `attr3` != the format's value), `msh.attr_count`
/// (`attr1` != record count; Res2: slot count, Res10: node count) and
/// `msh.res10` (a record runs past the payload, bytes after the last record,
/// a text without its NUL). In tolerant mode a wrong `attr3` (when the size
/// fits the stride), a wrong `attr1`, Res10 tail bytes and a missing NUL are
/// warnings. Then every IR rule of [`validate`](super::validate::validate).
pub fn decode_entries(archive: &nres::Archive<'_>, mode: Mode) -> Result<Decoded, MshError> {
    let tolerant = mode == Mode::Tolerant;
    let mut warnings: Vec<MshError> = archive.warnings.iter().cloned().map(Into::into).collect();
    let streams = Streams::locate(&archive.entries)?;

    // Res1 layout: 38-byte nodes, or the legacy 24-byte table.
    let res1 = streams.req(res::NODES);
    let legacy = res1.attr3 == NODE24_SIZE as u32;
    let node_size = if legacy { NODE24_SIZE } else { NODE38_SIZE };

    check_sizes(&streams, node_size)?;
    let node_count = res1.data.len() / node_size;
    check_attributes(&streams, node_size, tolerant, &mut warnings)?;

    let (mut model, mut known) =
        decode_model(&streams, legacy, node_count, tolerant, &mut warnings)?;
    if tolerant {
        validate::repair(&mut model, &mut warnings)?;
        known = validate::Known::default();
    }
    warnings.extend(validate::validate_known(&model, known)?);
    Ok(Decoded { model, warnings })
}

/// The entries of a model NRes with its decoded streams located by type id
/// (format-notes §2): `slot_of[t]` is the entry index of stream `Res{t}`.
struct Streams<'e, 'a> {
    /// The container's entries in directory order.
    entries: &'e [nres::Entry<'a>],
    /// Entry index per decoded type id (ids are below 20).
    slot_of: [Option<usize>; 20],
}

impl<'e, 'a> Streams<'e, 'a> {
    /// Locates the decoded streams by type id, never by name or order.
    ///
    /// # Errors
    /// `msh.duplicate_stream` when a decoded type appears twice,
    /// `msh.missing_stream` when one of [`REQUIRED_TYPES`] is absent
    /// (msh-core §3.1).
    fn locate(entries: &'e [nres::Entry<'a>]) -> Result<Self, MshError> {
        let mut slot_of = [None::<usize>; 20];
        for (i, e) in entries.iter().enumerate() {
            if DECODED_TYPES.contains(&e.type_id) {
                let s = &mut slot_of[e.type_id as usize];
                if let Some(first) = *s {
                    return Err(MshError::at_stream(
                        "msh.duplicate_stream",
                        e.type_id,
                        format!(
                            "entries {first} and {i} both have type {}; a model holds each stream once",
                            e.type_id
                        ),
                    ));
                }
                *s = Some(i);
            }
        }
        for t in REQUIRED_TYPES {
            if slot_of[t as usize].is_none() {
                return Err(MshError::at_stream(
                    "msh.missing_stream",
                    t,
                    format!("required stream Res{t} is absent"),
                ));
            }
        }
        Ok(Streams { entries, slot_of })
    }

    /// The entry of stream `t`, if present.
    fn get(&self, t: u32) -> Option<&'e nres::Entry<'a>> {
        self.slot_of[t as usize].map(|i| &self.entries[i])
    }

    /// The entry of required stream `t` (present after [`Streams::locate`]).
    fn req(&self, t: u32) -> &'e nres::Entry<'a> {
        &self.entries[self.slot_of[t as usize].expect("required stream located")]
    }
}

/// Pass 1: payload sizes (msh-core §7.1). `node_size` is the Res1 record
/// size (38, or 24 for the legacy table).
///
/// # Errors
/// `msh.res2_size` (`size < 0x8C` or `(size - 0x8C) % 68 != 0`) and
/// `msh.stride` (a payload not a multiple of its record size), in both modes.
fn check_sizes(streams: &Streams<'_, '_>, node_size: usize) -> Result<(), MshError> {
    let res2 = streams.req(res::SLOTS);
    if res2.data.len() < RES2_HEADER || !(res2.data.len() - RES2_HEADER).is_multiple_of(SLOT_SIZE) {
        return Err(MshError::at_stream(
            "msh.res2_size",
            2,
            format!(
                "payload is {} bytes; expected 0x8C + 68 * slot_count",
                res2.data.len()
            ),
        ));
    }
    for &t in &DECODED_TYPES {
        let Some(e) = streams.get(t) else { continue };
        let stride = if t == 1 {
            node_size
        } else {
            match record_size(t) {
                Some(s) => s,
                None => continue,
            }
        };
        if e.data.len() % stride != 0 {
            return Err(MshError::at_stream(
                "msh.stride",
                t,
                format!(
                    "payload is {} bytes, not a multiple of the {stride}-byte record",
                    e.data.len()
                ),
            ));
        }
    }
    Ok(())
}

/// Pass 2: attributes (msh-core §7.1, §8.2): `attr3` against the format's
/// value ([`expected_attr3`], Res1: `node_size`) and `attr1` against the
/// record count (Res2: slot count, Res10: node count). Sizes are checked.
///
/// # Errors
/// `msh.stride` (attr3) and `msh.attr_count` (attr1); in tolerant mode both
/// are pushed to `warnings` instead.
fn check_attributes(
    streams: &Streams<'_, '_>,
    node_size: usize,
    tolerant: bool,
    warnings: &mut Vec<MshError>,
) -> Result<(), MshError> {
    let node_count = streams.req(res::NODES).data.len() / node_size;
    for &t in &DECODED_TYPES {
        let Some(e) = streams.get(t) else { continue };
        let want3 = if t == 1 {
            node_size as u32
        } else {
            expected_attr3(t).unwrap_or(0)
        };
        if e.attr3 != want3 {
            let err = MshError::at_stream(
                "msh.stride",
                t,
                format!("attr3 is {}, the format requires {want3}", e.attr3),
            );
            // The Res1 layout is chosen by attr3; any value but 38/24 is
            // read as 38 in tolerant mode (the size fits 38 at this point).
            strict_or_warn(err, tolerant, warnings)?;
        }
        let count = match t {
            1 => node_count,
            2 => (e.data.len() - RES2_HEADER) / SLOT_SIZE,
            10 => node_count,
            _ => e.data.len() / record_size(t).unwrap_or(1),
        };
        if e.attr1 as u64 != count as u64 {
            let what = match t {
                2 => "slot count",
                10 => "node count",
                19 => "word count",
                8 => "key count",
                _ => "record count",
            };
            let err = MshError::at_stream(
                "msh.attr_count",
                t,
                format!("attr1 is {} but the {what} is {count}", e.attr1),
            );
            strict_or_warn(err, tolerant, warnings)?;
        }
    }
    Ok(())
}

/// A finding that is an error in strict mode and a warning (pushed to
/// `warnings`) in tolerant mode.
///
/// # Errors
/// `err` itself when not `tolerant`.
fn strict_or_warn(
    err: MshError,
    tolerant: bool,
    warnings: &mut Vec<MshError>,
) -> Result<(), MshError> {
    if !tolerant {
        return Err(err);
    }
    warnings.push(err);
    Ok(())
}

/// Fixed-stride records of `data` decoded with `f` (the size is an exact
/// multiple of `stride` after [`check_sizes`]).
fn records<T>(data: &[u8], stride: usize, f: impl FnMut(&[u8]) -> T) -> Vec<T> {
    data.chunks_exact(stride).map(f).collect()
}

/// Typed decoding of every located stream into the [`Model`] (msh-core §5,
/// msh-animation §2); sizes are exact multiples here. Entries the IR does
/// not decode are kept raw in [`Model::entries`]. Returns the model and
/// what the decoding established on the way (Res7 links in range, Res3
/// finite), so that validation does not read those values again.
///
/// # Errors
/// `msh.res10` from [`decode_res10`] (tolerant: its repairable findings go
/// to `warnings`).
fn decode_model(
    s: &Streams<'_, '_>,
    legacy: bool,
    node_count: usize,
    tolerant: bool,
    warnings: &mut Vec<MshError>,
) -> Result<(Model, validate::Known), MshError> {
    let (header, slots) = decode_res2(s.req(res::SLOTS).data);
    let names = match s.get(res::NAMES) {
        Some(e) => Some(decode_res10(e.data, node_count, tolerant, warnings)?),
        None => None,
    };
    let bytes8 = |t: u32| {
        s.get(t)
            .map(|e| records(e.data, 8, |c| c.try_into().expect("8-byte chunk")))
    };
    let res19 = s.get(res::FRAME_MAP);
    // Fused checks (msh.res7_link, msh.float.non_finite on Res3): the
    // largest `link + 1` (NONE wraps to 0) and the largest exponent field.
    let mut link_top = 0u16;
    let mut exp_top = 0u32;
    let model = Model {
        entries: stream_entries(s.entries),
        nodes: decode_res1(s.req(res::NODES).data, legacy),
        header,
        slots,
        positions: records(s.req(res::POSITIONS).data, 12, |c| {
            let p = vec3_at(c, 0);
            for v in p {
                exp_top = exp_top.max(validate::exp_bits(v));
            }
            p
        }),
        normals: s.get(res::NORMALS).map(|e| {
            records(e.data, 4, |c| {
                [c[0] as i8, c[1] as i8, c[2] as i8, c[3] as i8]
            })
        }),
        uvs: s
            .get(res::UVS)
            .map(|e| records(e.data, 4, |c| [i16_at(c, 0), i16_at(c, 2)])),
        indices: records(s.req(res::INDICES).data, 2, |c| u16_at(c, 0)),
        tris: s.get(res::TRIS).map(|e| {
            records(e.data, 16, |c| {
                let t = tri_desc(c);
                for l in t.links {
                    link_top = link_top.max(validate::link_end(l));
                }
                t
            })
        }),
        batches: records(s.req(res::BATCHES).data, 20, batch),
        names,
        res15: bytes8(res::RES15),
        res16: bytes8(res::RES16),
        res18: s
            .get(res::RES18)
            .map(|e| records(e.data, 4, |c| c.try_into().expect("4-byte chunk"))),
        keys: s.get(res::KEYS).map(|e| records(e.data, 24, anim_key)),
        frame_map: res19.map(|e| records(e.data, 2, |c| u16_at(c, 0))),
        frame_count: res19.map_or(1, |e| e.attr2),
    };
    let known = validate::Known {
        res7_links_ok: validate::links_in_range(link_top, model.tris.as_ref().map_or(0, Vec::len)),
        positions_finite: validate::finite_top(exp_top),
    };
    Ok((model, known))
}

/// The directory records in file order: header fields of every entry, and
/// the payload of each stream not in [`DECODED_TYPES`] (msh-core §9).
fn stream_entries(entries: &[nres::Entry<'_>]) -> Vec<StreamEntry> {
    entries
        .iter()
        .map(|e| {
            if DECODED_TYPES.contains(&e.type_id) {
                StreamEntry::decoded(e)
            } else {
                StreamEntry::undecoded(e)
            }
        })
        .collect()
}

/// Res1 (msh-core §5.1): `Node38` records, or the legacy 24-byte table kept
/// raw when `legacy`.
fn decode_res1(data: &[u8], legacy: bool) -> Nodes {
    if legacy {
        return Nodes::Legacy24 { raw: data.to_vec() };
    }
    Nodes::Node38(records(data, NODE38_SIZE, |c| {
        let mut slots = [0u16; CELLS];
        for (k, s) in slots.iter_mut().enumerate() {
            *s = u16_at(c, 8 + 2 * k);
        }
        Node38 {
            flags: u16_at(c, 0),
            parent: u16_at(c, 2),
            map_start: u16_at(c, 4),
            fallback_key: u16_at(c, 6),
            slots,
        }
    }))
}

/// Res2 (msh-core §5.2): the 0x8C-byte header (hull, sphere, capsule) and
/// the `Slot68` records after it.
fn decode_res2(data: &[u8]) -> (Res2Header, Vec<Slot68>) {
    let h = &data[..RES2_HEADER];
    let mut hull = [[0f32; 3]; 8];
    for (k, c) in hull.iter_mut().enumerate() {
        *c = vec3_at(h, 12 * k);
    }
    let header = Res2Header {
        hull,
        sphere_center: vec3_at(h, 0x60),
        sphere_radius: f32_at(h, 0x6C),
        capsule_a: vec3_at(h, 0x70),
        capsule_b: vec3_at(h, 0x7C),
        capsule_radius: f32_at(h, 0x88),
    };
    let slots = records(&data[RES2_HEADER..], SLOT_SIZE, |c| {
        let mut tail = [0u32; 5];
        for (k, t) in tail.iter_mut().enumerate() {
            *t = u32_at(c, 48 + 4 * k);
        }
        Slot68 {
            tri_start: u16_at(c, 0),
            tri_count: u16_at(c, 2),
            batch_start: u16_at(c, 4),
            batch_count: u16_at(c, 6),
            aabb_min: vec3_at(c, 8),
            aabb_max: vec3_at(c, 20),
            sphere_center: vec3_at(c, 32),
            sphere_radius: f32_at(c, 44),
            tail,
        }
    });
    (header, slots)
}

/// One 16-byte Res7 record (msh-core §5.7).
fn tri_desc(c: &[u8]) -> TriDesc16 {
    TriDesc16 {
        flags: u16_at(c, 0),
        links: [u16_at(c, 2), u16_at(c, 4), u16_at(c, 6)],
        normal: [i16_at(c, 8), i16_at(c, 10), i16_at(c, 12)],
        sel: u16_at(c, 14),
    }
}

/// One 20-byte Res13 record (msh-core §5.8).
fn batch(c: &[u8]) -> Batch20 {
    Batch20 {
        flags: u16_at(c, 0),
        material_index: u16_at(c, 2),
        opaque4: u16_at(c, 4),
        opaque6: u16_at(c, 6),
        index_count: u16_at(c, 8),
        index_start: u32_at(c, 10),
        opaque14: u16_at(c, 14),
        base_vertex: u32_at(c, 16),
    }
}

/// One 24-byte Res8 key (msh-animation §2.1).
fn anim_key(c: &[u8]) -> AnimKey24 {
    AnimKey24 {
        pos: vec3_at(c, 0),
        time: f32_at(c, 12),
        q: [i16_at(c, 16), i16_at(c, 18), i16_at(c, 20), i16_at(c, 22)],
    }
}

/// Res10 (msh-core §5.9): exactly `node_count` records `u32 len`, then
/// `len` bytes + NUL when `len > 0`. Lengths are checked against the bytes
/// left before anything is copied.
fn decode_res10(
    data: &[u8],
    node_count: usize,
    tolerant: bool,
    warnings: &mut Vec<MshError>,
) -> Result<Vec<Option<Vec<u8>>>, MshError> {
    let mut out = Vec::with_capacity(node_count.min(data.len() / 4));
    let mut cur = 0usize;
    for i in 0..node_count {
        if data.len() - cur < 4 {
            return Err(MshError::at(
                "msh.res10",
                10,
                i,
                format!(
                    "record {i} of {node_count} starts at byte {cur}, past the {}-byte payload",
                    data.len()
                ),
            ));
        }
        let len = u32_at(data, cur) as u64;
        cur += 4;
        if len == 0 {
            out.push(None);
            continue;
        }
        let left = (data.len() - cur) as u64;
        if len + 1 > left {
            return Err(MshError::at(
                "msh.res10",
                10,
                i,
                format!(
                    "length {len} (+ NUL) at byte {} runs past the {}-byte payload",
                    cur - 4,
                    data.len()
                ),
            ));
        }
        let len = len as usize;
        let text = &data[cur..cur + len];
        if data[cur + len] != 0 {
            let err = MshError::at(
                "msh.res10",
                10,
                i,
                format!(
                    "text of length {len} is followed by byte 0x{:02X}, not NUL",
                    data[cur + len]
                ),
            );
            strict_or_warn(err, tolerant, warnings)?;
        }
        out.push(Some(text.to_vec()));
        cur += len + 1;
    }
    if cur != data.len() {
        let err = MshError::at_stream(
            "msh.res10",
            10,
            format!(
                "{} bytes after the last of {node_count} records (payload {} bytes)",
                data.len() - cur,
                data.len()
            ),
        );
        strict_or_warn(err, tolerant, warnings)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res10(records: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for r in records {
            out.extend_from_slice(&(r.len() as u32).to_le_bytes());
            if !r.is_empty() {
                out.extend_from_slice(r);
                out.push(0);
            }
        }
        out
    }

    #[test]
    fn res10_records_and_their_errors() {
        let mut w = Vec::new();
        let data = res10(&[b"hull", b"", b"x"]);
        let names = decode_res10(&data, 3, false, &mut w).unwrap();
        assert_eq!(
            names,
            vec![Some(b"hull".to_vec()), None, Some(b"x".to_vec())]
        );
        assert!(w.is_empty());
        // Fewer records than nodes: overrun at record 3.
        let e = decode_res10(&data, 4, false, &mut w).unwrap_err();
        assert_eq!((e.rule, e.record), ("msh.res10", Some(3)));
        // A huge length is checked against the bytes left, never allocated.
        let mut bomb = data.clone();
        bomb[..4].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
        let e = decode_res10(&bomb, 3, true, &mut w).unwrap_err();
        assert_eq!((e.rule, e.record), ("msh.res10", Some(0)));
        // Tail bytes: strict error, tolerant warning.
        let mut tail = data.clone();
        tail.extend_from_slice(&[1, 2, 3]);
        assert_eq!(
            decode_res10(&tail, 3, false, &mut w).unwrap_err().rule,
            "msh.res10"
        );
        assert_eq!(decode_res10(&tail, 3, true, &mut w).unwrap(), names);
        assert_eq!(w.len(), 1);
        // A text without its NUL.
        let mut nonul = data;
        nonul[8] = b'!';
        assert_eq!(
            decode_res10(&nonul, 3, false, &mut w).unwrap_err().rule,
            "msh.res10"
        );
    }

    #[test]
    fn stream_constants() {
        assert_eq!(expected_attr3(2), Some(68));
        assert_eq!(expected_attr3(8), Some(4));
        assert_eq!(expected_attr3(10), Some(0));
        assert_eq!(expected_attr3(19), Some(2));
        assert_eq!(expected_attr3(9), None);
        assert_eq!(record_size(1), Some(38));
        assert_eq!(record_size(13), Some(20));
    }

    #[test]
    fn non_models_are_rejected_by_rule() {
        assert_eq!(decode(b"", Mode::Strict).unwrap_err().rule, "nres.magic");
        let only_res1 = nres::write(&[nres::Entry {
            type_id: 1,
            attr1: 0,
            attr2: 0,
            attr3: 38,
            name: b"n",
            data: b"",
        }])
        .unwrap();
        let e = decode(&only_res1, Mode::Tolerant).unwrap_err();
        assert_eq!((e.rule, e.stream), ("msh.missing_stream", Some(2)));
        assert!(!is_model(&nres::read(&only_res1, Mode::Strict).unwrap()));
    }
}
