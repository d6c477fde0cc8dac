//! Names of authored models: WEAR material names (format-notes §4) and
//! Res10 node names in Windows-1251 (module docs of [`super`], points 1
//! and 4).

use crate::gltf_import::read::Elem;
use std::collections::HashSet;

use serde_json::Value;

use super::{AuthorReport, Rename, MAX_MATERIAL_STEM};
use crate::gltf_import::read::msh_extras;
use crate::material::wear::WearRow;

/// Makes a WEAR material name (`NAME.N`, format-notes §4): characters other
/// than ASCII letters, digits, `_` and `-` and the letters Windows-1251
/// encodes become `_`, letters are upper-cased, the stem is cut to
/// [`MAX_MATERIAL_STEM`] characters, a trailing `.digits` of the input is
/// kept as the suffix (else `.0`), and the result is made unique
/// (case-insensitively) among `used` by replacing the stem's end with `_2`,
/// `_3`, ... The name is added to `used`.
pub fn wear_name(name: &str, used: &mut HashSet<String>) -> String {
    let (stem, suffix) = match name.rsplit_once('.') {
        Some((s, d))
            if !s.is_empty()
                && !d.is_empty()
                && d.len() <= 3
                && d.bytes().all(|c| c.is_ascii_digit()) =>
        {
            (s, d.to_string())
        }
        _ => (name, "0".to_string()),
    };
    let clean: Vec<char> = stem
        .chars()
        .map(|c| {
            let ok = c.is_ascii_alphanumeric()
                || c == '_'
                || c == '-'
                || (!c.is_ascii() && c.is_alphabetic() && cp1251_encodable(c));
            if ok {
                c.to_uppercase()
                    .next()
                    .filter(|u| cp1251_encodable(*u))
                    .unwrap_or(c)
            } else {
                '_'
            }
        })
        .collect();
    let mut clean: Vec<char> = clean.into_iter().take(MAX_MATERIAL_STEM).collect();
    if clean.is_empty() {
        clean = "MATERIAL".chars().collect();
    }
    let make = |stem: &[char]| format!("{}.{suffix}", stem.iter().collect::<String>());
    let mut out = make(&clean);
    let mut k = 2usize;
    while used.contains(&out.to_uppercase()) {
        let tag: Vec<char> = format!("_{k}").chars().collect();
        let keep = clean.len().min(MAX_MATERIAL_STEM - tag.len());
        let mut s = clean[..keep].to_vec();
        s.extend(tag);
        out = make(&s);
        k += 1;
    }
    used.insert(out.to_uppercase());
    out
}

fn cp1251_encodable(c: char) -> bool {
    let mut buf = [0u8; 4];
    let (_, _, bad) = encoding_rs::WINDOWS_1251.encode(c.encode_utf8(&mut buf));
    !bad
}

/// Windows-1251 bytes of a node name; unencodable characters become `_`.
/// Returns the bytes and whether anything was replaced.
pub(super) fn cp1251_name(name: &str) -> (Vec<u8>, bool) {
    let mut out = Vec::with_capacity(name.len());
    let mut replaced = false;
    for c in name.chars() {
        let mut buf = [0u8; 4];
        let (b, _, bad) = encoding_rs::WINDOWS_1251.encode(c.encode_utf8(&mut buf));
        if bad || c == '\0' {
            out.push(b'_');
            replaced = true;
        } else {
            out.extend_from_slice(&b);
        }
    }
    (out, replaced)
}

/// The WEAR material rows of an authored model (module docs of [`super`],
/// point 4), in row order, with the names already used.
pub(super) struct WearRows {
    /// Names taken so far (upper-case, see [`wear_name`]).
    used: HashSet<String>,
    /// Number of glTF materials: rows below it are theirs.
    gltf_count: usize,
    /// The rows made so far.
    pub(super) rows: Vec<WearRow>,
}

impl WearRows {
    /// One row per glTF material, in order (row `i` = material `i`): the
    /// name from its `{"msh": {"name"}}` extra, else its `name`, else
    /// `MATERIAL<i>`, made valid by [`wear_name`]; renames are reported.
    pub(super) fn from_materials(materials: &[Elem], report: &mut AuthorReport) -> Self {
        let mut out = WearRows {
            used: HashSet::new(),
            gltf_count: materials.len(),
            rows: Vec::new(),
        };
        for (i, m) in materials.iter().enumerate() {
            let src = msh_extras(m)
                .and_then(|e| e.get("name"))
                .and_then(Value::as_str)
                .or_else(|| m.get("name").and_then(Value::as_str))
                .filter(|s| !s.trim().is_empty())
                .map_or_else(|| format!("MATERIAL{i}"), str::to_string);
            out.add(i, src, report);
        }
        out
    }

    /// Appends row `row` named after `src` (made valid by [`wear_name`]); a
    /// changed name of a glTF material's row is reported in
    /// [`AuthorReport::renamed_materials`].
    pub(super) fn add(&mut self, row: usize, src: String, report: &mut AuthorReport) {
        let name = wear_name(&src, &mut self.used);
        if name != src && row < self.gltf_count {
            report.renamed_materials.push(Rename {
                row,
                from: src,
                to: name.clone(),
            });
        }
        self.rows.push(WearRow {
            legacy_id: row as i32,
            name,
        });
    }
}
