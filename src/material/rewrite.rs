//! Edits of existing library entries (format-notes §1, §4, §6 R9, R10;
//! issue 23): a MAT0 record rewritten in place ([`Mat0Change`]: colour
//! `p[4..=6]` and opacity `p[3]` of phase 0, the texture name of the phase
//! that names one, the blend mode in the directory entry's attr1), and
//! entries' payloads replaced at their positions ([`replace_entries`]).
//! Every other field of the record and every other entry keeps its bytes:
//! the library is written again by the canonical NRes writer, which
//! reproduces retail libraries byte for byte.

use super::mat0::Mat0;
use super::MaterialError;
use crate::nres;

/// What to change in one MAT0 entry (`None`: keep).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Mat0Change {
    /// Diffuse RGB (0..1) into phase 0 `p[4..=6]` (× 255, rounded).
    pub color: Option<[f32; 3]>,
    /// Opacity (0..1) into phase 0 `p[3]` (× 100, rounded).
    pub opacity: Option<f32>,
    /// Directory attr1 (the blend mode, §6 R10).
    pub attr1: Option<u32>,
    /// The texture name (≤ 15 bytes) of the first phase that names one
    /// (phase 0 when none does); `Some(None)` empties it.
    pub texture: Option<Option<Vec<u8>>>,
}

/// `data` (a MAT0 payload of `version`) with `change` applied; the other
/// phases keep their bytes (a note says so when they exist and the colour
/// or opacity changed).
///
/// # Errors
/// The MAT0 rules of `data` ([`Mat0::parse`]); `mat0.size` for a record
/// without phases; `mat0.texture_name` for a name over 15 bytes.
pub fn edit_mat0(
    data: &[u8],
    version: u32,
    change: &Mat0Change,
) -> Result<(Vec<u8>, Vec<String>), MaterialError> {
    let mut m = Mat0::parse(data, version)?;
    let mut notes = Vec::new();
    if m.phases.is_empty() {
        return Err(MaterialError::new(
            "mat0.size",
            "a record without phases has no colour or texture to edit",
        ));
    }
    let q = |x: f32, s: f32| (x.clamp(0.0, 1.0) * s).round() as u8;
    let p = &mut m.phases[0].params;
    if let Some(c) = change.color {
        p[4] = q(c[0], 255.0);
        p[5] = q(c[1], 255.0);
        p[6] = q(c[2], 255.0);
    }
    if let Some(a) = change.opacity {
        p[3] = q(a, 100.0);
    }
    if (change.color.is_some() || change.opacity.is_some()) && m.phases.len() > 1 {
        notes.push(format!(
            "phase 0 of {} written; phases 1..{} (the material's animation) keep their colours",
            m.phases.len(),
            m.phases.len() - 1
        ));
    }
    if let Some(t) = &change.texture {
        let i = m
            .phases
            .iter()
            .position(|ph| ph.texture().is_some())
            .unwrap_or(0);
        let mut raw = [0u8; 16];
        if let Some(t) = t {
            if t.len() > 15 || t.contains(&0) {
                return Err(MaterialError::new(
                    "mat0.texture_name",
                    format!(
                        "texture name {:?}: the 16-byte field holds at most 15 bytes and a NUL",
                        String::from_utf8_lossy(t)
                    ),
                ));
            }
            raw[..t.len()].copy_from_slice(t);
        }
        m.phases[i].texture_raw = raw;
    }
    Ok((m.to_bytes(), notes))
}

/// One replaced entry: its index, new attr1 and payload (type, attr2,
/// attr3 and name are kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement {
    /// Entry index in the library.
    pub index: usize,
    /// New attr1.
    pub attr1: u32,
    /// New payload.
    pub data: Vec<u8>,
}

/// The library `lib` with `replaced` entries' attr1 and payloads replaced
/// at their positions and `added` entries appended; every other entry is
/// written unchanged.
///
/// # Errors
/// The NRes rules of a library that does not read strictly; `lib.index`
/// for an index past the directory; `label` names the library.
pub fn replace_entries(
    label: &str,
    lib: &[u8],
    replaced: &[Replacement],
    added: &[super::write::NewEntry],
) -> Result<Vec<u8>, MaterialError> {
    let a =
        nres::read(lib, nres::Mode::Strict).map_err(|e| MaterialError::from(e).context(label))?;
    let mut entries = a.entries.clone();
    for r in replaced {
        let e = entries.get_mut(r.index).ok_or_else(|| {
            MaterialError::new("lib.index", format!("{label}: no entry {}", r.index))
        })?;
        e.attr1 = r.attr1;
        e.data = &r.data;
    }
    for n in added {
        entries.push(nres::Entry {
            type_id: n.type_id,
            attr1: n.attr1,
            attr2: n.attr2,
            attr3: n.attr3,
            name: &n.name,
            data: &n.data,
        });
    }
    nres::write(&entries).map_err(|e| MaterialError::from(e).context(label))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::material::mat0::Phase;

    fn two_phases() -> Mat0 {
        let mut m = Mat0::new_colour([0.5, 0.5, 0.5, 1.0], Some(b"TX_A.0")).unwrap();
        let mut p = [7u8; 18];
        p[3] = 33;
        m.phases.insert(
            0,
            Phase {
                params: p,
                texture_raw: [0; 16],
            },
        );
        m
    }

    #[test]
    fn only_the_named_fields_change() {
        let m = two_phases();
        let data = m.to_bytes();
        let (same, notes) = edit_mat0(&data, 6, &Mat0Change::default()).unwrap();
        assert_eq!(same, data);
        assert!(notes.is_empty());
        let c = Mat0Change {
            color: Some([1.0, 0.0, 0.2]),
            opacity: Some(0.5),
            attr1: Some(4),
            texture: Some(Some(b"RUST.0".to_vec())),
        };
        let (out, notes) = edit_mat0(&data, 6, &c).unwrap();
        assert_eq!(notes.len(), 1);
        let mut want = data.clone();
        // Header 14 bytes (v6), phase 0 params at 14.., phase 1 at 48...
        want[14 + 3] = 50;
        want[14 + 4..14 + 7].copy_from_slice(&[255, 0, 51]);
        // Phase 0 has no texture: the name goes to phase 1, the textured one.
        want[48 + 18..48 + 34].copy_from_slice(b"RUST.0\0\0\0\0\0\0\0\0\0\0");
        assert_eq!(out, want);
        let long = Mat0Change {
            texture: Some(Some(b"A_NAME_OF_16_BYT".to_vec())),
            ..Mat0Change::default()
        };
        assert_eq!(
            edit_mat0(&data, 6, &long).unwrap_err().rule,
            "mat0.texture_name"
        );
    }
}
