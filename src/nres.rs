//! NRes container: bounded reader (strict and tolerant), name lookup through
//! the sort table, and the canonical writer (format-notes §1).
//!
//! Layout (all little-endian):
//! ```text
//! [header 16][payload 0][pad][payload 1][pad]...[directory: count x 64]
//! header: "NRes", u32 version = 0x100, i32 entry_count, u32 total_size (= file length)
//! entry: u32 type_id, attr1, attr2, size, attr3; char name[36]; u32 data_offset, sort_index
//! ```
//!
//! The reader never allocates from a count in the file before checking that the
//! bytes it describes are present: the directory size is checked against the
//! file length first, and every payload is a borrowed slice of the input.

use std::cmp::Ordering;

/// Size of the NRes header in bytes.
pub const HEADER_SIZE: usize = 16;
/// Size of one directory record in bytes.
pub const DIR_ENTRY_SIZE: usize = 64;
/// Size of the name field of a directory record (35 bytes + NUL at most).
pub const NAME_FIELD: usize = 36;
/// The only version seen in game data.
pub const VERSION: u32 = 0x100;
/// File magic.
pub const MAGIC: &[u8; 4] = b"NRes";
/// RsLi archive magic (`NL\0\1`), a different container the converter skips.
pub const RSLI_MAGIC: &[u8; 4] = b"NL\x00\x01";

/// A broken NRes rule. `rule` is a stable identifier (`nres.total_size`, ...)
/// shared with the corpus manifest's `check` vocabulary; `detail` says what
/// was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{rule}: {detail}")]
pub struct NresError {
    /// Stable rule identifier, e.g. `nres.entry_range`.
    pub rule: &'static str,
    /// Human-readable description naming the entry and the values.
    pub detail: String,
}

impl NresError {
    fn new(rule: &'static str, detail: impl Into<String>) -> Self {
        NresError {
            rule,
            detail: detail.into(),
        }
    }
}

/// How strictly [`read`] treats deviations from canonical form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Every invariant of format-notes §1 is an error, except the canonical
    /// layout checks (alignment, padding bytes, name fill), which are warnings.
    #[default]
    Strict,
    /// A sort table that is not a valid permutation is a warning (lookups fall
    /// back to a linear scan); everything that could read out of bounds is
    /// still an error.
    Tolerant,
}

/// One directory record with its payload borrowed from the file (or from the
/// caller, when writing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<'a> {
    /// Type id: a stream number inside a model, a FourCC in libraries.
    pub type_id: u32,
    /// Attribute 1 (a count in model streams).
    pub attr1: u32,
    /// Attribute 2.
    pub attr2: u32,
    /// Attribute 3 (a stride in model streams).
    pub attr3: u32,
    /// Name bytes before the NUL (Windows-1251 in practice), 1..=35 bytes.
    pub name: &'a [u8],
    /// Payload.
    pub data: &'a [u8],
}

/// One directory record kept with the IR of a model or a map, in file order
/// (format-notes §1; msh-core §9, terrain-notes §1): the header fields as
/// stored and, for a stream the IR does not decode, its payload.
///
/// Shared by the model ([`crate::msh::Model::entries`]) and terrain
/// ([`crate::terrain::Land::entries`]) pipelines. Decoded streams are
/// re-encoded from the IR's typed fields; `attr1` and `attr3` are then
/// recomputed (count and stride), `attr2` is kept (model `Res19.attr2` =
/// frame count). Terrain streams are all decoded: their `raw` is `None`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamEntry {
    /// Stream type id (1..21 in models; 1, 2, 3, 4, 5, 11, 14, 18 or 21 in
    /// Land.msh).
    pub type_id: u32,
    /// Entry name bytes (meaningless to the engine; kept for the round trip;
    /// `Land` in retail maps).
    pub name: Vec<u8>,
    /// attr1 as stored (the element count of decoded streams).
    pub attr1: u32,
    /// attr2 as stored (Land.msh Res1: grid cells along X).
    pub attr2: u32,
    /// attr3 as stored (the stride of decoded streams).
    pub attr3: u32,
    /// Payload of an undecoded stream; `None` for streams held in typed fields.
    pub raw: Option<Vec<u8>>,
}

impl StreamEntry {
    /// The header fields of `e` (type id, name, attributes) for a stream the
    /// IR decodes: `raw` is `None`.
    pub fn decoded(e: &Entry<'_>) -> StreamEntry {
        StreamEntry {
            type_id: e.type_id,
            name: e.name.to_vec(),
            attr1: e.attr1,
            attr2: e.attr2,
            attr3: e.attr3,
            raw: None,
        }
    }

    /// The header fields of `e` with a copy of its payload, for a stream the
    /// IR keeps raw.
    pub fn undecoded(e: &Entry<'_>) -> StreamEntry {
        StreamEntry {
            raw: Some(e.data.to_vec()),
            ..StreamEntry::decoded(e)
        }
    }
}

/// A parsed NRes file: entries in directory order.
#[derive(Debug, Clone)]
pub struct Archive<'a> {
    /// Entries in directory order.
    pub entries: Vec<Entry<'a>>,
    /// The stored sort table (`sort_index` of each record), if it is a valid
    /// permutation that orders the names; `None` means lookups scan linearly.
    sort_table: Option<Vec<u32>>,
    /// Non-fatal findings (canonical-form deviations; in tolerant mode also
    /// the broken sort table).
    pub warnings: Vec<NresError>,
}

fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}

/// Lower-case ASCII folding used by the engine's name comparison.
fn cmp_names(a: &[u8], b: &[u8]) -> Ordering {
    let fa = a.iter().map(|c| c.to_ascii_lowercase());
    let fb = b.iter().map(|c| c.to_ascii_lowercase());
    fa.cmp(fb)
}

/// True when `data` starts with the NRes magic.
pub fn is_nres(data: &[u8]) -> bool {
    data.len() >= 4 && &data[..4] == MAGIC
}

/// Parses an NRes file (format-notes §1).
///
/// # Errors
/// [`NresError`] with rule `nres.magic`, `nres.header`, `nres.version`,
/// `nres.entry_count`, `nres.directory`, `nres.total_size`,
/// `nres.entry_range`, `nres.name`, `nres.overlap` or (strict only)
/// `nres.sort_index`.
pub fn read(data: &[u8], mode: Mode) -> Result<Archive<'_>, NresError> {
    let (count, dir_off) = check_header(data)?;
    let mut warnings = Vec::new();
    let (entries, sort) = read_directory(data, dir_off, count, &mut warnings)?;
    check_layout(data, dir_off, &entries, &mut warnings)?;
    let sort_table = match check_sort_table(&entries, &sort) {
        Ok(()) => Some(sort),
        Err(e) => {
            if mode == Mode::Strict {
                return Err(e);
            }
            warnings.push(e);
            None
        }
    };
    Ok(Archive {
        entries,
        sort_table,
        warnings,
    })
}

/// The entry count an archive's header declares (u32 at +8), read without
/// the directory, when it is one the file can hold (64 bytes per directory
/// record, format-notes §1): for counting the work of listing it before
/// it is read (issue 26 item 5, [`crate::limits`]). `None` for a header
/// that does not parse or a count the file cannot hold (the reader
/// reports those, `nres.*`).
pub fn declared_entries(data: &[u8]) -> Option<u64> {
    if data.len() < HEADER_SIZE || &data[..4] != MAGIC {
        return None;
    }
    let count = u64::from(u32_at(data, 8));
    let room = (data.len() - HEADER_SIZE) as u64 / DIR_ENTRY_SIZE as u64;
    (count <= room).then_some(count)
}

/// The header checks (format-notes §1): magic, size, version, entry count
/// and `total_size` against the file length. Returns the entry count and the
/// directory's offset (`total_size - count * 64`, inside the file).
///
/// # Errors
/// `nres.magic`, `nres.header`, `nres.version`, `nres.entry_count`,
/// `nres.directory` or `nres.total_size` (a truncated file is told from a
/// corrupt `total_size` by [`directory_at_eof_is_plausible`]).
fn check_header(data: &[u8]) -> Result<(usize, usize), NresError> {
    if data.len() < 4 || &data[..4] != MAGIC {
        return Err(NresError::new(
            "nres.magic",
            format!(
                "file does not start with \"NRes\" (first bytes {:02X?})",
                &data[..data.len().min(4)]
            ),
        ));
    }
    if data.len() < HEADER_SIZE {
        return Err(NresError::new(
            "nres.header",
            format!(
                "file is {} bytes, shorter than the 16-byte header",
                data.len()
            ),
        ));
    }
    let version = u32_at(data, 4);
    if version != VERSION {
        return Err(NresError::new(
            "nres.version",
            format!("version 0x{version:X}, expected 0x100"),
        ));
    }
    let count = u32_at(data, 8) as i32;
    if count < 0 {
        return Err(NresError::new(
            "nres.entry_count",
            format!("entry_count {count} is negative"),
        ));
    }
    let count = count as u64;
    let dir_size = count * DIR_ENTRY_SIZE as u64;
    let len = data.len() as u64;
    if dir_size + HEADER_SIZE as u64 > len {
        return Err(NresError::new(
            "nres.entry_count",
            format!(
                "entry_count {count} needs a {dir_size}-byte directory, the file has {len} bytes"
            ),
        ));
    }
    let total = u32_at(data, 12) as u64;
    let dir_off = total.saturating_sub(dir_size);
    if count > 0 && dir_off >= len && !directory_at_eof_is_plausible(data, count as usize) {
        // The bytes where the directory should end are missing: a truncated file.
        return Err(NresError::new(
            "nres.total_size",
            format!(
                "header total_size {total} but the file has {len} bytes (truncated: no directory at its end)"
            ),
        ));
    }
    if total < dir_size + HEADER_SIZE as u64 || (count > 0 && dir_off >= len) {
        return Err(NresError::new(
            "nres.directory",
            format!(
                "total_size {total} puts the {count}-entry directory at {dir_off}, outside the {len}-byte file"
            ),
        ));
    }
    if total != len {
        return Err(NresError::new(
            "nres.total_size",
            format!("header total_size {total} but the file has {len} bytes"),
        ));
    }
    Ok((count as usize, dir_off as usize))
}

/// Reads the `count` directory records at `dir_off` (format-notes §1): each
/// entry's name (NUL-terminated, non-empty; bytes after the NUL that are not
/// zero give an `nres.name_fill` warning) and its payload, a slice checked to
/// lie in the data area `16..dir_off`. Returns the entries and the stored
/// `sort_index` column. The directory is inside the file ([`check_header`]).
///
/// # Errors
/// `nres.name` (no NUL, empty name), `nres.entry_range` (payload outside
/// the data area).
fn read_directory<'a>(
    data: &'a [u8],
    dir_off: usize,
    count: usize,
    warnings: &mut Vec<NresError>,
) -> Result<(Vec<Entry<'a>>, Vec<u32>), NresError> {
    let mut entries = Vec::with_capacity(count);
    let mut sort = Vec::with_capacity(count);
    for i in 0..count {
        let r = &data[dir_off + i * DIR_ENTRY_SIZE..dir_off + (i + 1) * DIR_ENTRY_SIZE];
        let name_field = &r[0x14..0x14 + NAME_FIELD];
        let nul = name_field.iter().position(|&c| c == 0).ok_or_else(|| {
            NresError::new(
                "nres.name",
                format!("entry {i}: name field has no NUL terminator"),
            )
        })?;
        if nul == 0 {
            return Err(NresError::new(
                "nres.name",
                format!("entry {i}: name is empty"),
            ));
        }
        let name = &name_field[..nul];
        if name_field[nul..].iter().any(|&c| c != 0) {
            warnings.push(NresError::new(
                "nres.name_fill",
                format!(
                    "entry {i} ({}): bytes after the name's NUL are not zero (not kept on write)",
                    String::from_utf8_lossy(name)
                ),
            ));
        }
        let size = u32_at(r, 0x0C) as u64;
        let off = u32_at(r, 0x38) as u64;
        if off < HEADER_SIZE as u64 || off + size > dir_off as u64 {
            return Err(NresError::new(
                "nres.entry_range",
                format!(
                    "entry {i} ({}): payload {off}..{} is outside the data area 16..{dir_off}",
                    String::from_utf8_lossy(name),
                    off + size
                ),
            ));
        }
        sort.push(u32_at(r, 0x3C));
        entries.push(Entry {
            type_id: u32_at(r, 0),
            attr1: u32_at(r, 4),
            attr2: u32_at(r, 8),
            attr3: u32_at(r, 0x10),
            name,
            data: &data[off as usize..(off + size) as usize],
        });
    }
    Ok((entries, sort))
}

/// True when the last `count * 64` bytes of the file read as a directory
/// whose payloads lie inside the file: tells a corrupt `total_size` (the
/// directory is intact at EOF) from a truncated file.
fn directory_at_eof_is_plausible(data: &[u8], count: usize) -> bool {
    let dir = data.len() - count * DIR_ENTRY_SIZE;
    (0..count).all(|i| {
        let r = &data[dir + i * DIR_ENTRY_SIZE..dir + (i + 1) * DIR_ENTRY_SIZE];
        let size = u32_at(r, 0x0C) as u64;
        let off = u32_at(r, 0x38) as u64;
        r[0x14..0x14 + NAME_FIELD].contains(&0)
            && off >= HEADER_SIZE as u64
            && off + size <= dir as u64
    })
}

/// Offsets of the payloads relative to `data`, for the layout checks.
fn offset_in(data: &[u8], part: &[u8]) -> usize {
    part.as_ptr() as usize - data.as_ptr() as usize
}

/// Overlap is an error; alignment, gaps and non-zero padding are warnings.
fn check_layout(
    data: &[u8],
    dir_off: usize,
    entries: &[Entry<'_>],
    warnings: &mut Vec<NresError>,
) -> Result<(), NresError> {
    let mut spans: Vec<(usize, usize, usize)> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| !e.data.is_empty())
        .map(|(i, e)| {
            let o = offset_in(data, e.data);
            (o, o + e.data.len(), i)
        })
        .collect();
    spans.sort_unstable();
    for w in spans.windows(2) {
        if w[1].0 < w[0].1 {
            return Err(NresError::new(
                "nres.overlap",
                format!(
                    "entry {} ({}) payload {}..{} overlaps entry {} ({}) at {}..{}",
                    w[1].2,
                    String::from_utf8_lossy(entries[w[1].2].name),
                    w[1].0,
                    w[1].1,
                    w[0].2,
                    String::from_utf8_lossy(entries[w[0].2].name),
                    w[0].0,
                    w[0].1
                ),
            ));
        }
    }
    // Canonical layout: payloads in directory order, each at the next multiple of 8.
    let mut cursor = HEADER_SIZE;
    let mut aligned = true;
    for e in entries {
        if e.data.is_empty() {
            continue;
        }
        let o = offset_in(data, e.data);
        if o != cursor {
            aligned = false;
            break;
        }
        cursor = (o + e.data.len()).next_multiple_of(8);
    }
    if aligned && cursor != dir_off {
        aligned = false;
    }
    if !aligned {
        warnings.push(NresError::new(
            "nres.alignment",
            "payloads are not laid out canonically (directory order, 8-byte aligned); \
             the file is readable but will not be reproduced byte for byte",
        ));
    } else {
        // Padding bytes between payloads (and before the directory) must be zero.
        let mut gaps = Vec::with_capacity(entries.len() + 1);
        let mut prev_end = HEADER_SIZE;
        for e in entries.iter().filter(|e| !e.data.is_empty()) {
            let o = offset_in(data, e.data);
            gaps.push(prev_end..o);
            prev_end = o + e.data.len();
        }
        gaps.push(prev_end..dir_off);
        if let Some(g) = gaps
            .into_iter()
            .find(|g| data[g.clone()].iter().any(|&b| b != 0))
        {
            warnings.push(NresError::new(
                "nres.padding",
                format!(
                    "non-zero padding bytes at {}..{} (first of possibly several)",
                    g.start, g.end
                ),
            ));
        }
    }
    Ok(())
}

/// The sort table must be a permutation listing the entries in stable
/// case-insensitive name order.
fn check_sort_table(entries: &[Entry<'_>], sort: &[u32]) -> Result<(), NresError> {
    let n = entries.len();
    let mut seen = vec![false; n];
    for (i, &s) in sort.iter().enumerate() {
        let s = s as usize;
        if s >= n || seen[s] {
            return Err(NresError::new(
                "nres.sort_index",
                format!("sort_index of entry {i} is {s}: the table is not a permutation of 0..{n}"),
            ));
        }
        seen[s] = true;
    }
    for (i, w) in sort.windows(2).enumerate() {
        if cmp_names(entries[w[0] as usize].name, entries[w[1] as usize].name) == Ordering::Greater
        {
            return Err(NresError::new(
                "nres.sort_index",
                format!(
                    "sort table positions {i} and {} are not in name order",
                    i + 1
                ),
            ));
        }
    }
    Ok(())
}

/// The canonical sort table: original indices stably sorted by
/// case-insensitive name (format-notes §1).
pub fn sort_table<'a>(names: impl Iterator<Item = &'a [u8]>) -> Vec<u32> {
    let names: Vec<&[u8]> = names.collect();
    let mut idx: Vec<u32> = (0..names.len() as u32).collect();
    idx.sort_by(|&a, &b| cmp_names(names[a as usize], names[b as usize]));
    idx
}

impl<'a> Archive<'a> {
    /// Finds an entry by name, case-insensitively: binary search through the
    /// stored sort table, or a linear scan when that table was rejected.
    pub fn find(&self, name: &[u8]) -> Option<usize> {
        match &self.sort_table {
            Some(t) => t
                .binary_search_by(|&i| cmp_names(self.entries[i as usize].name, name))
                .ok()
                .map(|p| t[p] as usize),
            None => self
                .entries
                .iter()
                .position(|e| cmp_names(e.name, name) == Ordering::Equal),
        }
    }

    /// True when the stored sort table was valid (lookups use binary search).
    pub fn has_sort_table(&self) -> bool {
        self.sort_table.is_some()
    }
}

/// Writes entries as a canonical NRes file: header, payloads in order each
/// padded with zeros to a multiple of 8, directory with the canonical sort
/// table, `total_size` = file length (format-notes §1).
///
/// # Errors
/// `nres.name` when a name is empty, longer than 35 bytes or contains NUL;
/// `nres.total_size` when the file would exceed 4 GiB.
pub fn write(entries: &[Entry<'_>]) -> Result<Vec<u8>, NresError> {
    for (i, e) in entries.iter().enumerate() {
        if e.name.is_empty() || e.name.len() >= NAME_FIELD || e.name.contains(&0) {
            return Err(NresError::new(
                "nres.name",
                format!(
                    "entry {i}: name {:?} must be 1..=35 bytes without NUL",
                    String::from_utf8_lossy(e.name)
                ),
            ));
        }
    }
    let payload: usize = entries
        .iter()
        .map(|e| e.data.len().next_multiple_of(8))
        .sum();
    let total = HEADER_SIZE + payload + entries.len() * DIR_ENTRY_SIZE;
    if total > u32::MAX as usize || entries.len() > i32::MAX as usize {
        return Err(NresError::new(
            "nres.total_size",
            format!("{total} bytes do not fit a 32-bit total_size"),
        ));
    }
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(entries.len() as u32).to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    let mut offsets = Vec::with_capacity(entries.len());
    for e in entries {
        offsets.push(out.len() as u32);
        out.extend_from_slice(e.data);
        out.resize(out.len().next_multiple_of(8), 0);
    }
    let table = sort_table(entries.iter().map(|e| e.name));
    for (i, e) in entries.iter().enumerate() {
        for v in [e.type_id, e.attr1, e.attr2, e.data.len() as u32, e.attr3] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        let mut name = [0u8; NAME_FIELD];
        name[..e.name.len()].copy_from_slice(e.name);
        out.extend_from_slice(&name);
        out.extend_from_slice(&offsets[i].to_le_bytes());
        out.extend_from_slice(&table[i].to_le_bytes());
    }
    debug_assert_eq!(out.len(), total);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry<'a>(name: &'a [u8], data: &'a [u8]) -> Entry<'a> {
        Entry {
            type_id: 1,
            attr1: 2,
            attr2: 3,
            attr3: 4,
            name,
            data,
        }
    }

    #[test]
    fn write_read_round_trip_is_canonical() {
        let es = [
            entry(b"b", b"12345"),
            entry(b"A", b""),
            entry(b"c", b"12345678"),
        ];
        let bytes = write(&es).unwrap();
        assert_eq!(bytes.len(), 16 + 8 + 8 + 3 * 64);
        let a = read(&bytes, Mode::Strict).unwrap();
        assert!(a.warnings.is_empty(), "{:?}", a.warnings);
        assert_eq!(a.entries, es);
        assert_eq!(write(&a.entries).unwrap(), bytes);
        assert_eq!(a.find(b"a"), Some(1));
        assert_eq!(a.find(b"C"), Some(2));
        assert_eq!(a.find(b"x"), None);
        // sort table A, b, c = [1, 0, 2]
        assert_eq!(sort_table(es.iter().map(|e| e.name)), vec![1, 0, 2]);
    }

    #[test]
    fn rejects_short_and_wrong_files() {
        assert_eq!(read(b"", Mode::Strict).unwrap_err().rule, "nres.magic");
        assert_eq!(
            read(b"NRes\0\x01", Mode::Strict).unwrap_err().rule,
            "nres.header"
        );
        let mut b = write(&[entry(b"x", b"abc")]).unwrap();
        b[8..12].copy_from_slice(&0x4000_0000u32.to_le_bytes());
        assert_eq!(read(&b, Mode::Strict).unwrap_err().rule, "nres.entry_count");
    }
}
