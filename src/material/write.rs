//! Adding new entries to `Material.lib`, `Textures.lib` and `LightMap.lib`
//! (NRes libraries, format-notes §1 and §4) for authored models.
//!
//! [`add_entries`] reads a library strictly, refuses (or, when asked,
//! replaces in place) entries whose names collide case-insensitively with a
//! new one, appends the new entries, and writes the result with the
//! canonical NRes writer ([`crate::nres::write`]): every other entry keeps
//! its position, attributes and payload bytes. [`texture_name`] makes valid
//! texture names (the MAT0 phase field is 16 bytes with a NUL).

use std::collections::HashSet;

use super::MaterialError;
use crate::nres;

/// Most bytes of a texture name: the 16-byte MAT0 field needs a NUL.
pub const MAX_TEXTURE_NAME: usize = 15;
/// Most bytes of an NRes entry name (36-byte field with a NUL).
pub const MAX_ENTRY_NAME: usize = 35;

/// An entry to add to a library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEntry {
    /// Entry name (Windows-1251 bytes, 1..=35, no NUL).
    pub name: Vec<u8>,
    /// Type id (`TYPE_MAT0`, `TYPE_TEXM`).
    pub type_id: u32,
    /// Attribute 1 (MAT0: the blend mode, format-notes §6 R10; Texm: 0).
    pub attr1: u32,
    /// Attribute 2 (MAT0: the version, 6; Texm: 0).
    pub attr2: u32,
    /// Attribute 3 (0 in retail libraries).
    pub attr3: u32,
    /// Payload.
    pub data: Vec<u8>,
}

/// What [`add_entries`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct LibraryEdit {
    /// Names appended at the end.
    pub added: Vec<String>,
    /// Names whose existing entry was replaced in place (`replace`).
    pub replaced: Vec<String>,
    /// Entries of the library before the edit.
    pub kept: usize,
}

fn lossy(b: &[u8]) -> String {
    super::decode_name(b)
}

/// Adds `new` to the library `lib` (`None`: a new, empty library) and
/// returns the new library bytes. Names are compared with ASCII
/// case folding, like the engine's lookup. An existing entry with a new
/// entry's name is an error unless `replace`, which overwrites its type,
/// attributes and payload at its position. Every other entry is written
/// unchanged.
///
/// # Errors
/// `lib.name` (empty, NUL, over 35 bytes, or two new entries with one
/// name), `lib.collision` (an existing name and not `replace`), the NRes
/// rules of a library that does not read strictly; `label` names the
/// library in the message.
pub fn add_entries(
    label: &str,
    lib: Option<&[u8]>,
    new: &[NewEntry],
    replace: bool,
) -> Result<(Vec<u8>, LibraryEdit), MaterialError> {
    let archive = match lib {
        Some(b) => Some(
            nres::read(b, nres::Mode::Strict).map_err(|e| MaterialError::from(e).context(label))?,
        ),
        None => None,
    };
    let mut entries: Vec<nres::Entry<'_>> = archive
        .as_ref()
        .map_or_else(Vec::new, |a| a.entries.clone());
    let mut edit = LibraryEdit {
        kept: entries.len(),
        ..LibraryEdit::default()
    };
    let mut seen: HashSet<Vec<u8>> = HashSet::new();
    for e in new {
        if e.name.is_empty() || e.name.len() > MAX_ENTRY_NAME || e.name.contains(&0) {
            return Err(MaterialError::new(
                "lib.name",
                format!(
                    "{label}: entry name {:?} must be 1..={MAX_ENTRY_NAME} bytes without NUL",
                    lossy(&e.name)
                ),
            ));
        }
        if !seen.insert(e.name.to_ascii_lowercase()) {
            return Err(MaterialError::new(
                "lib.name",
                format!("{label}: two new entries are named {:?}", lossy(&e.name)),
            ));
        }
    }
    let hits: Vec<Option<usize>> = new
        .iter()
        .map(|e| {
            entries
                .iter()
                .position(|x| x.name.eq_ignore_ascii_case(&e.name))
        })
        .collect();
    if !replace {
        let taken: Vec<String> = hits
            .iter()
            .flatten()
            .map(|&i| format!("{:?} (entry {i})", lossy(entries[i].name)))
            .collect();
        if !taken.is_empty() {
            return Err(MaterialError::new(
                "lib.collision",
                format!(
                    "{label} already has {} entr{} named like new ones: {}; rename the glTF materials or images, or give --replace-entries to replace the existing entries",
                    taken.len(),
                    if taken.len() == 1 { "y" } else { "ies" },
                    taken.join(", ")
                ),
            ));
        }
    }
    let mut appended = Vec::new();
    for (e, hit) in new.iter().zip(hits) {
        let entry = nres::Entry {
            type_id: e.type_id,
            attr1: e.attr1,
            attr2: e.attr2,
            attr3: e.attr3,
            name: &e.name,
            data: &e.data,
        };
        match hit {
            Some(i) => {
                edit.replaced.push(lossy(&e.name));
                entries[i] = entry;
            }
            None => {
                edit.added.push(lossy(&e.name));
                appended.push(entry);
            }
        }
    }
    entries.extend(appended);
    let bytes = nres::write(&entries).map_err(|e| MaterialError::from(e).context(label))?;
    Ok((bytes, edit))
}

/// A valid texture (or lightmap) name from `src`: ASCII letters upper-cased,
/// characters other than letters, digits, `_` and `-` become `_`, the stem
/// is cut so that `STEM.0` fits [`MAX_TEXTURE_NAME`] bytes, a trailing
/// `.digits` of `src` is kept as the suffix (else `.0`), and the name is made
/// unique (case-insensitively) among `used` with `_2`, `_3`, ... The name is
/// added to `used`.
pub fn texture_name(src: &str, used: &mut HashSet<String>) -> String {
    let (stem, suffix) = match src.rsplit_once('.') {
        Some((s, d))
            if !s.is_empty()
                && (1..=2).contains(&d.len())
                && d.bytes().all(|c| c.is_ascii_digit()) =>
        {
            (s, d.to_string())
        }
        _ => (src, "0".to_string()),
    };
    let room = MAX_TEXTURE_NAME - 1 - suffix.len();
    let mut clean: Vec<u8> = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c.to_ascii_uppercase() as u8
            } else {
                b'_'
            }
        })
        .take(room)
        .collect();
    if clean.is_empty() {
        clean = b"TEXTURE".to_vec();
    }
    let make = |s: &[u8]| format!("{}.{suffix}", String::from_utf8_lossy(s));
    let mut out = make(&clean);
    let mut k = 2usize;
    while used.contains(&out.to_ascii_uppercase()) {
        let tag = format!("_{k}").into_bytes();
        let keep = clean.len().min(room - tag.len());
        let mut s = clean[..keep].to_vec();
        s.extend(tag);
        out = make(&s);
        k += 1;
    }
    used.insert(out.to_ascii_uppercase());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, data: &[u8]) -> NewEntry {
        NewEntry {
            name: name.as_bytes().to_vec(),
            type_id: super::super::TYPE_TEXM,
            attr1: 0,
            attr2: 0,
            attr3: 0,
            data: data.to_vec(),
        }
    }

    #[test]
    fn texture_names_fit_the_field() {
        let mut used = HashSet::new();
        assert_eq!(texture_name("duck.png", &mut used), "DUCK_PNG.0");
        assert_eq!(texture_name("Duck_png", &mut used), "DUCK_PNG_2.0");
        assert_eq!(
            texture_name("a very long texture name", &mut used),
            "A_VERY_LONG_T.0"
        );
        assert_eq!(
            texture_name("a very long texture name", &mut used),
            "A_VERY_LONG_2.0"
        );
        assert_eq!(texture_name("wood.1", &mut used), "WOOD.1");
        assert_eq!(texture_name("木", &mut used), "_.0");
        assert_eq!(texture_name("", &mut used), "TEXTURE.0");
        for n in &used {
            assert!(n.len() <= MAX_TEXTURE_NAME, "{n}");
        }
    }

    #[test]
    fn adds_refuses_and_replaces() {
        let base = nres::write(&[
            nres::Entry {
                type_id: 1,
                attr1: 2,
                attr2: 3,
                attr3: 4,
                name: b"A.0",
                data: b"abc",
            },
            nres::Entry {
                type_id: 1,
                attr1: 0,
                attr2: 0,
                attr3: 0,
                name: b"B.0",
                data: b"",
            },
        ])
        .unwrap();
        let (out, edit) =
            add_entries("T.lib", Some(&base), &[entry("C.0", b"new")], false).unwrap();
        assert_eq!(edit.added, ["C.0"]);
        let a = nres::read(&out, nres::Mode::Strict).unwrap();
        let b = nres::read(&base, nres::Mode::Strict).unwrap();
        assert_eq!(a.entries[..2], b.entries[..]);
        assert_eq!(a.entries[2].data, b"new");
        // The old bytes are a prefix up to the directory.
        let e = add_entries("T.lib", Some(&base), &[entry("a.0", b"x")], false).unwrap_err();
        assert_eq!(e.rule, "lib.collision");
        assert!(
            e.detail.contains("T.lib") && e.detail.contains("A.0"),
            "{e}"
        );
        let (out, edit) = add_entries("T.lib", Some(&base), &[entry("a.0", b"x")], true).unwrap();
        assert_eq!(edit.replaced, ["a.0"]);
        let a = nres::read(&out, nres::Mode::Strict).unwrap();
        assert_eq!(
            (a.entries.len(), a.entries[0].data, a.entries[0].name),
            (2, &b"x"[..], &b"a.0"[..])
        );
        assert_eq!(a.entries[1], b.entries[1]);
        let e = add_entries("T.lib", None, &[entry("D", b""), entry("d", b"")], false).unwrap_err();
        assert_eq!(e.rule, "lib.name");
        let e = add_entries("T.lib", None, &[entry(&"X".repeat(36), b"")], false).unwrap_err();
        assert_eq!(e.rule, "lib.name");
        let (out, _) = add_entries("T.lib", None, &[entry("N.0", b"1")], false).unwrap();
        assert_eq!(
            nres::read(&out, nres::Mode::Strict).unwrap().entries.len(),
            1
        );
        let e = add_entries("T.lib", Some(b"junk"), &[], false).unwrap_err();
        assert!(e.rule.starts_with("nres."), "{e}");
    }
}
