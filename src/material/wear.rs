//! WEAR material tables (format-notes §4): the text entry `<STEM>.wea`
//! (type `'WEAR'`) beside a model in its archive.
//!
//! ```text
//! <count>
//! <legacy_id> <MATERIAL_NAME>      x count   (row number = Batch20.material_index)
//! <blank line>                     (required before LIGHTMAPS)
//! LIGHTMAPS
//! <count>
//! <legacy_id> <LIGHTMAP_NAME>      x count
//! ```
//!
//! Text is Windows-1251; lines end in LF or CRLF. The legacy id is kept but
//! carries no meaning: the row number is the key.

use super::MaterialError;
use crate::nres::Archive;

/// The keyword line that opens the lightmap section.
pub const LIGHTMAPS: &str = "LIGHTMAPS";

/// One row of a WEAR section: `<legacy_id> <NAME>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WearRow {
    /// The id written before the name; ignored by the engine (the row number
    /// is the key), kept for writing the table back.
    pub legacy_id: i32,
    /// Material name (a `Material.lib` entry) or lightmap name (a
    /// `LightMap.lib` entry), decoded from Windows-1251, surrounding
    /// whitespace removed.
    pub name: String,
}

/// A parsed WEAR table (format-notes §4).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Wear {
    /// Material rows; row `i` is `Batch20.material_index == i`.
    pub materials: Vec<WearRow>,
    /// Lightmap rows (empty when the table has no `LIGHTMAPS` section).
    pub lightmaps: Vec<WearRow>,
    /// True when the source text used CRLF line ends (informational;
    /// [`Wear::to_text`] always writes CRLF).
    pub crlf: bool,
}

/// Line cursor over the decoded text: 1-based line numbers, `\r` stripped.
struct Lines<'t> {
    iter: std::iter::Enumerate<std::str::Split<'t, char>>,
}

impl<'t> Lines<'t> {
    fn next(&mut self) -> Option<(usize, &'t str)> {
        self.iter
            .next()
            .map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)))
    }
}

fn parse_row(line_no: usize, line: &str, section: &str) -> Result<WearRow, MaterialError> {
    let t = line.trim();
    let (id, name) = t.split_once(char::is_whitespace).ok_or_else(|| {
        MaterialError::new(
            "wear.syntax",
            format!("line {line_no} ({section} row): expected `<legacy_id> <NAME>`, found {t:?}"),
        )
    })?;
    let legacy_id = id.parse::<i32>().map_err(|_| {
        MaterialError::new(
            "wear.syntax",
            format!("line {line_no} ({section} row): legacy id {id:?} is not an integer"),
        )
    })?;
    Ok(WearRow {
        legacy_id,
        name: name.trim().to_owned(),
    })
}

/// Reads `<count>` and then `count` rows. Rows are pushed as they are read,
/// so a huge count allocates nothing before the rows exist.
fn parse_section(lines: &mut Lines<'_>, section: &str) -> Result<Vec<WearRow>, MaterialError> {
    let (line_no, line) = lines.next().ok_or_else(|| {
        MaterialError::new(
            "wear.syntax",
            format!("{section} section: the text ends before the row count"),
        )
    })?;
    let count: u64 = line.trim().parse().map_err(|_| {
        MaterialError::new(
            "wear.syntax",
            format!(
                "line {line_no}: {section} row count expected, found {:?}",
                line.trim()
            ),
        )
    })?;
    let mut rows = Vec::new();
    for r in 0..count {
        let Some((no, line)) = lines.next() else {
            return Err(MaterialError::new(
                "wear.count",
                format!("{section} section declares {count} rows, the text ends after {r}"),
            ));
        };
        let t = line.trim();
        if t.is_empty() || t.eq_ignore_ascii_case(LIGHTMAPS) {
            return Err(MaterialError::new(
                "wear.count",
                format!(
                    "line {no}: {section} section declares {count} rows, found {} after {r}",
                    if t.is_empty() {
                        "a blank line"
                    } else {
                        "LIGHTMAPS"
                    }
                ),
            ));
        }
        rows.push(parse_row(no, line, section)?);
    }
    Ok(rows)
}

impl Wear {
    /// Parses a WEAR payload (Windows-1251 text, LF or CRLF).
    ///
    /// # Errors
    /// - `wear.syntax`: missing or non-numeric count, a row that is not
    ///   `<integer> <name>`, or an unexpected line after a blank line;
    /// - `wear.count`: fewer rows than the count (text ends, blank line or
    ///   `LIGHTMAPS` reached) or more rows than the count;
    /// - `wear.lightmap_separator`: `LIGHTMAPS` without the blank line
    ///   before it.
    pub fn parse(bytes: &[u8]) -> Result<Wear, MaterialError> {
        let (text, _, _) = encoding_rs::WINDOWS_1251.decode(bytes);
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let crlf = text.contains("\r\n");
        let mut lines = Lines {
            iter: text.split('\n').enumerate(),
        };
        let materials = parse_section(&mut lines, "material")?;
        let mut lightmaps = Vec::new();
        let mut blank = false;
        let mut have_lightmaps = false;
        while let Some((no, line)) = lines.next() {
            let t = line.trim();
            if t.is_empty() {
                blank = true;
            } else if t.eq_ignore_ascii_case(LIGHTMAPS) && !have_lightmaps {
                if !blank {
                    return Err(MaterialError::new(
                        "wear.lightmap_separator",
                        format!(
                            "line {no}: LIGHTMAPS follows the {} material rows without the required blank line",
                            materials.len()
                        ),
                    ));
                }
                lightmaps = parse_section(&mut lines, "lightmap")?;
                have_lightmaps = true;
                blank = false;
            } else if !blank {
                let section = if have_lightmaps {
                    "lightmap"
                } else {
                    "material"
                };
                let n = if have_lightmaps {
                    lightmaps.len()
                } else {
                    materials.len()
                };
                return Err(MaterialError::new(
                    "wear.count",
                    format!("line {no}: {section} section declares {n} rows but has more ({t:?})"),
                ));
            } else {
                return Err(MaterialError::new(
                    "wear.syntax",
                    format!("line {no}: unexpected line {t:?} after the blank line"),
                ));
            }
        }
        Ok(Wear {
            materials,
            lightmaps,
            crlf,
        })
    }

    /// Writes the table as text with CRLF line ends: count, rows, and when
    /// there are lightmap rows a blank line, `LIGHTMAPS`, count, rows.
    pub fn to_text(&self) -> String {
        self.to_text_with("\r\n")
    }

    /// [`Wear::to_text`] with a chosen line end (`"\r\n"` or `"\n"`).
    pub fn to_text_with(&self, newline: &str) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let section = |rows: &[WearRow], s: &mut String| {
            let _ = write!(s, "{}{newline}", rows.len());
            for r in rows {
                let _ = write!(s, "{} {}{newline}", r.legacy_id, r.name);
            }
        };
        section(&self.materials, &mut s);
        if !self.lightmaps.is_empty() {
            let _ = write!(s, "{newline}{LIGHTMAPS}{newline}");
            section(&self.lightmaps, &mut s);
        }
        s
    }

    /// [`Wear::to_text`] encoded as Windows-1251, ready to store as a WEAR
    /// entry.
    ///
    /// # Errors
    /// `wear.syntax` when a name is empty, contains a line break or a
    /// character Windows-1251 cannot encode.
    pub fn to_bytes(&self) -> Result<Vec<u8>, MaterialError> {
        for (section, rows) in [("material", &self.materials), ("lightmap", &self.lightmaps)] {
            for (i, r) in rows.iter().enumerate() {
                if r.name.trim().is_empty() || r.name.contains(['\r', '\n']) {
                    return Err(MaterialError::new(
                        "wear.syntax",
                        format!(
                            "{section} row {i}: name {:?} is empty or spans lines",
                            r.name
                        ),
                    ));
                }
            }
        }
        let text = self.to_text();
        let (bytes, _, unmappable) = encoding_rs::WINDOWS_1251.encode(&text);
        if unmappable {
            return Err(MaterialError::new(
                "wear.syntax",
                "a name has characters that Windows-1251 cannot encode",
            ));
        }
        Ok(bytes.into_owned())
    }
}

/// Finds the WEAR sibling of a model entry in its archive: `<STEM>.wea`, any
/// case, where the model entry is `<STEM>.msh` (format-notes §2). Returns the
/// entry index; `None` when there is no such entry or `msh_entry_name` does
/// not end in `.msh`.
pub fn find_wear_entry(archive: &Archive<'_>, msh_entry_name: &[u8]) -> Option<usize> {
    let n = msh_entry_name.len();
    if n < 4 || !msh_entry_name[n - 4..].eq_ignore_ascii_case(b".msh") {
        return None;
    }
    let mut wea = msh_entry_name[..n - 4].to_vec();
    wea.extend_from_slice(b".wea");
    archive.find(&wea)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i32, name: &str) -> WearRow {
        WearRow {
            legacy_id: id,
            name: name.into(),
        }
    }

    #[test]
    fn parses_lf_and_crlf() {
        let lf = Wear::parse(b"2\n1 HULL_1.2\n2 WOOD_4.1\n").unwrap();
        assert_eq!(lf.materials, vec![row(1, "HULL_1.2"), row(2, "WOOD_4.1")]);
        assert!(lf.lightmaps.is_empty());
        assert!(!lf.crlf);
        let crlf = Wear::parse(b"3\r\n6 SAND.0\r\n248 CRATE_9.1\r\n143 SAND.2\r\n").unwrap();
        assert_eq!(crlf.materials[1], row(248, "CRATE_9.1"));
        assert_eq!(crlf.materials.len(), 3);
        assert!(crlf.crlf);
        // No trailing newline, extra trailing blank lines.
        assert_eq!(
            Wear::parse(b"1\n239 WALL.0").unwrap().materials,
            vec![row(239, "WALL.0")]
        );
        assert_eq!(
            Wear::parse(b"1\n239 WALL.0\n\n\n").unwrap().materials.len(),
            1
        );
        assert!(Wear::parse(b"0\n").unwrap().materials.is_empty());
    }

    #[test]
    fn parses_lightmaps_and_round_trips() {
        let src =
            b"3\r\n1 LEAF_6.0\r\n2 BODY_7.1\r\n3 WALL.0\r\n\r\nLIGHTMAPS\r\n1\r\n74 LM008.0\r\n";
        let w = Wear::parse(src).unwrap();
        assert_eq!(w.materials.len(), 3);
        assert_eq!(w.lightmaps, vec![row(74, "LM008.0")]);
        assert_eq!(w.to_text().as_bytes(), src);
        assert_eq!(w.to_bytes().unwrap(), src);
        let lf = b"3\n203 ARMOR_9.2\n220 LAMP.3\n35 ARMOR88.0\n\nLIGHTMAPS\n1\n48 LM000.0\n";
        let w = Wear::parse(lf).unwrap();
        assert_eq!(w.to_text_with("\n").as_bytes(), lf);
        assert_eq!(
            Wear::parse(w.to_text().as_bytes()).unwrap().lightmaps,
            w.lightmaps
        );
    }

    #[test]
    fn decodes_windows_1251_names() {
        // "ТАНК.0" in Windows-1251.
        let w = Wear::parse(b"1\n5 \xD2\xC0\xCD\xCA.0\n").unwrap();
        assert_eq!(w.materials[0].name, "ТАНК.0");
        assert_eq!(w.to_bytes().unwrap(), b"1\r\n5 \xD2\xC0\xCD\xCA.0\r\n");
    }

    #[test]
    fn error_rules() {
        let rule = |b: &[u8]| Wear::parse(b).unwrap_err().rule;
        assert_eq!(rule(b""), "wear.syntax");
        assert_eq!(rule(b"x\n"), "wear.syntax");
        assert_eq!(rule(b"1\nWALL.0\n"), "wear.syntax");
        assert_eq!(rule(b"1\nx WALL.0\n"), "wear.syntax");
        assert_eq!(rule(b"3\n1 A.0\n2 B.0\n"), "wear.count");
        assert_eq!(rule(b"1\n1 A.0\n2 B.0\n"), "wear.count");
        assert_eq!(rule(b"2\n1 A.0\n\n2 B.0\n"), "wear.count");
        assert_eq!(rule(b"1\n1 A.0\n\n2 B.0\n"), "wear.syntax");
        assert_eq!(
            rule(b"2\n0 BODY.0\n1 GUN.0\nLIGHTMAPS\n1\n0 LM000.0\n"),
            "wear.lightmap_separator"
        );
        assert_eq!(rule(b"1\n0 A.0\n\nLIGHTMAPS\n2\n0 LM.0\n"), "wear.count");
        assert_eq!(rule(b"1\n0 A.0\n\nLIGHTMAPS\n"), "wear.syntax");
        // A huge count with no rows fails without allocating.
        assert_eq!(rule(b"4000000000\n1 A.0\n"), "wear.count");
        let e = Wear::parse(b"3\n1 A.0\n").unwrap_err();
        assert!(e.detail.contains("declares 3 rows"), "{e}");
    }

    #[test]
    fn finds_wear_sibling() {
        use crate::nres::{read, write, Entry, Mode};
        let e = |name: &'static [u8]| Entry {
            type_id: 0,
            attr1: 0,
            attr2: 0,
            attr3: 0,
            name,
            data: b"",
        };
        let bytes = write(&[e(b"SYS_A.MSH"), e(b"SYS_A.WEA"), e(b"b.msh")]).unwrap();
        let a = read(&bytes, Mode::Strict).unwrap();
        assert_eq!(find_wear_entry(&a, b"SYS_A.MSH"), Some(1));
        assert_eq!(find_wear_entry(&a, b"sys_a.msh"), Some(1));
        assert_eq!(find_wear_entry(&a, b"b.msh"), None);
        assert_eq!(find_wear_entry(&a, b"SYS_A"), None);
    }
}
