//! Finding a model's `.cpt` and `.ctl` siblings (unit-files-notes §3.3:
//! found by suffix, same stem, any case; their type ids vary per archive)
//! and reading them, so that a broken sibling is a warning and the model
//! still converts.

use std::path::{Path, PathBuf};

use super::{cpt, ctl, UnitError};
use crate::nres;

/// One sibling file: where it came from and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sibling {
    /// `ARCHIVE:ENTRY` or the file path.
    pub source: String,
    /// Its payload.
    pub data: Vec<u8>,
}

/// The `.cpt` and `.ctl` beside a model, when present.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Siblings {
    /// `<stem>.cpt`.
    pub cpt: Option<Sibling>,
    /// `<stem>.ctl`.
    pub ctl: Option<Sibling>,
    /// Siblings found but not read (a FIFO, a device, a folder, over the
    /// size cap, unreadable): one line each naming the file and why;
    /// [`Siblings::parse`] turns them into warnings (issue 26 item 10).
    pub unread: Vec<String>,
}

/// The entry `<stem of model_entry>.<ext>` of `archive` (ASCII case-insensitive).
fn entry_with_ext<'a>(
    archive: &'a nres::Archive<'a>,
    model_entry: &[u8],
    ext: &[u8],
) -> Option<&'a nres::Entry<'a>> {
    let stem = match model_entry.iter().rposition(|&c| c == b'.') {
        Some(i) => &model_entry[..i],
        None => model_entry,
    };
    let want = [stem, b".", ext].concat();
    archive
        .entries
        .iter()
        .find(|e| e.name.eq_ignore_ascii_case(&want))
}

/// The siblings of archive entry `model_entry` (unit-files-notes §3.3: the
/// `.cpt`/`.ctl` with the model's stem in the same archive). `archive_name`
/// is used for the sources. Linear in the archive's entries.
pub fn in_archive(archive: &nres::Archive<'_>, archive_name: &str, model_entry: &[u8]) -> Siblings {
    let get = |ext: &[u8]| {
        entry_with_ext(archive, model_entry, ext).map(|e| Sibling {
            source: format!("{archive_name}:{}", crate::source::decode_name(e.name)),
            data: e.data.to_vec(),
        })
    };
    Siblings {
        cpt: get(b"cpt"),
        ctl: get(b"ctl"),
        unread: Vec::new(),
    }
}

/// The siblings of a bare model file: `<stem>.cpt` / `<stem>.ctl` in its
/// folder (any case).
pub fn beside_file(path: &Path) -> Siblings {
    let Some(stem) = path.file_stem().map(|s| s.to_string_lossy().into_owned()) else {
        return Siblings::default();
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let names = [format!("{stem}.cpt"), format!("{stem}.ctl")];
    // One listing for both; a folder that does not list gives neither.
    let mut found = crate::source::each_any_case(dir, &[&names[0], &names[1]])
        .unwrap_or_else(|_| vec![None, None]);
    let mut unread = Vec::new();
    let mut get = |p: Option<PathBuf>| {
        let p = p?;
        match crate::source::read_regular(&p, crate::output::MAX_UPDATE_BYTES) {
            Ok(data) => Some(Sibling {
                source: p.display().to_string(),
                data,
            }),
            Err(e) => {
                unread.push(format!("{}: {e}; ignored", p.display()));
                None
            }
        }
    };
    let (cpt, ctl) = (get(found[0].take()), get(found[1].take()));
    Siblings { cpt, ctl, unread }
}

/// The siblings of a batch job: entry `entry` of the archive `bytes` read
/// from `file`, or the bare model `file` (then `bytes` is unused). A
/// directory that does not read gives no siblings. Linear in the archive's
/// entries (the directory is read again per model).
pub fn of_job(file: &Path, bytes: &[u8], entry: Option<usize>) -> Siblings {
    let Some(i) = entry else {
        return beside_file(file);
    };
    match nres::read(bytes, nres::Mode::Tolerant) {
        Ok(a) if i < a.entries.len() => {
            in_archive(&a, &file.display().to_string(), a.entries[i].name)
        }
        _ => Siblings::default(),
    }
}

/// The siblings read: a sibling that breaks its layout is left out and
/// reported in `warnings` (the model still converts).
#[derive(Debug, Clone, Default)]
pub struct Parsed {
    /// The control points.
    pub cpt: Option<cpt::ControlPoints>,
    /// The controller.
    pub ctl: Option<ctl::Controller>,
    /// One line per ignored sibling, naming the file and the rule.
    pub warnings: Vec<String>,
}

impl Siblings {
    /// The work (in [`crate::limits`] units) of adding these siblings to a
    /// model of `model_nodes` glTF nodes, read from their headers alone
    /// (issue 26 item 5): the `.cpt`'s point count (each point a glTF node,
    /// [`crate::limits::UNITS_PER_CONTROL_POINT`]) and the `.ctl`'s channel and
    /// state counts (`counts[2]`, `counts[0]`; each at most one clip
    /// animation, [`crate::limits::UNITS_PER_CLIP`]), with the model's own
    /// nodes ([`crate::limits::UNITS_PER_NODE`]). Returns the units and what was counted. A header too short to
    /// hold its counts counts 0 (the parse reports it).
    pub fn work(&self, model_nodes: usize) -> (u64, String) {
        use crate::limits::{UNITS_PER_CLIP, UNITS_PER_CONTROL_POINT, UNITS_PER_NODE};
        let word = |s: &Option<Sibling>, k: usize| -> u64 {
            s.as_ref()
                .and_then(|s| s.data.get(4 * k..4 * k + 4))
                .map_or(0, |b| {
                    u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                })
        };
        let points = word(&self.cpt, 0);
        let (states, channels) = (word(&self.ctl, 0), word(&self.ctl, 2));
        let units = (model_nodes as u64)
            .saturating_mul(UNITS_PER_NODE)
            .saturating_add(points.saturating_mul(UNITS_PER_CONTROL_POINT))
            .saturating_add(
                states
                    .saturating_add(channels)
                    .saturating_mul(UNITS_PER_CLIP),
            );
        let mut what = format!("{model_nodes} glTF nodes");
        if let Some(s) = &self.cpt {
            what += &format!(", {points} control points of {}", s.source);
        }
        if let Some(s) = &self.ctl {
            what += &format!(", {channels} channels and {states} states of {}", s.source);
        }
        (units, what)
    }

    /// Reads both siblings (unit-files-notes §5.1, §5.2).
    pub fn parse(&self) -> Parsed {
        let mut out = Parsed {
            warnings: self.unread.clone(),
            ..Parsed::default()
        };
        fn keep<T>(r: Result<T, UnitError>, s: &Sibling, w: &mut Vec<String>) -> Option<T> {
            r.map_err(|e| w.push(format!("{}; ignored", e.in_file(s.source.clone()))))
                .ok()
        }
        if let Some(s) = &self.cpt {
            let r = cpt::read(&s.data).and_then(|c| finite_points(&c).map(|()| c));
            out.cpt = keep(r, s, &mut out.warnings);
        }
        if let Some(s) = &self.ctl {
            let r = ctl::read(&s.data).and_then(|c| finite_channels(&c).map(|()| c));
            out.ctl = keep(r, s, &mut out.warnings);
        }
        out
    }
}

/// `cpt.non_finite`: a point whose position or direction holds a NaN or
/// an infinity (it would reach the glTF as `null`; glTF 2.0 §5.25), naming
/// the point. The whole `.cpt` is then ignored (the `.ctl` refers to points
/// by index).
fn finite_points(c: &cpt::ControlPoints) -> Result<(), UnitError> {
    for (i, p) in c.points.iter().enumerate() {
        if p.position
            .iter()
            .chain(&p.direction)
            .any(|x| !x.is_finite())
        {
            return Err(UnitError::new(
                "cpt.non_finite",
                format!(
                    "point {i} {:?}: position {:?} direction {:?} is not finite",
                    p.name(),
                    p.position,
                    p.direction
                ),
            ));
        }
    }
    Ok(())
}

/// `ctl.non_finite`: a channel whose frames, initial value, rate or span,
/// or a state whose frame ranges, hold a NaN or an infinity (they become
/// clip key times), naming the channel or state. The whole `.ctl` is then
/// ignored.
fn finite_channels(c: &ctl::Controller) -> Result<(), UnitError> {
    for (i, ch) in c.channels.iter().enumerate() {
        let v = [ch.first, ch.last, ch.initial, ch.rate, ch.span];
        if v.iter().any(|x| !x.is_finite()) {
            return Err(UnitError::new(
                "ctl.non_finite",
                format!(
                    "channel {i} (node {}): first {} last {} initial {} rate {} span {} is not finite",
                    ch.node, ch.first, ch.last, ch.initial, ch.rate, ch.span
                ),
            ));
        }
    }
    for (i, st) in c.states.iter().enumerate() {
        let (a, b) = (st.frames_a(), st.frames_b());
        if a.iter().chain(&b).any(|x| !x.is_finite()) {
            return Err(UnitError::new(
                "ctl.non_finite",
                format!("state {i}: frames {a:?} {b:?} are not finite"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broken_siblings_are_warnings_and_good_ones_read() {
        let good = cpt::write(&cpt::ControlPoints {
            points: vec![cpt::ControlPoint {
                word0: 0,
                node: 0,
                carrier: 0,
                position: [1.0, 2.0, 3.0],
                direction: [0.0, 0.0, 1.0],
                name_field: cpt::name_field(b"dust_01"),
            }],
        });
        let s = Siblings {
            cpt: Some(Sibling {
                source: "a.rlb:x.cpt".into(),
                data: good,
            }),
            ctl: Some(Sibling {
                source: "a.rlb:x.ctl".into(),
                data: vec![1, 2, 3],
            }),
            unread: Vec::new(),
        };
        let p = s.parse();
        assert_eq!(p.cpt.unwrap().points[0].name(), "dust_01");
        assert!(p.ctl.is_none());
        assert_eq!(p.warnings.len(), 1);
        assert!(
            p.warnings[0].starts_with("a.rlb:x.ctl: ctl.size:")
                && p.warnings[0].ends_with("; ignored"),
            "{:?}",
            p.warnings
        );
    }

    #[test]
    fn non_finite_points_and_channels_are_ignored_naming_them() {
        let mut pts = cpt::ControlPoints {
            points: vec![cpt::ControlPoint {
                word0: 0,
                node: 0,
                carrier: 0,
                position: [1.0, 2.0, 3.0],
                direction: [0.0, 0.0, 1.0],
                name_field: cpt::name_field(b"dust_01"),
            }],
        };
        for bad in [f32::NAN, f32::INFINITY] {
            pts.points[0].position[1] = bad;
            let s = Siblings {
                cpt: Some(Sibling {
                    source: "a.rlb:x.cpt".into(),
                    data: cpt::write(&pts),
                }),
                ctl: None,
                unread: Vec::new(),
            };
            let p = s.parse();
            assert!(p.cpt.is_none());
            assert_eq!(p.warnings.len(), 1);
            let w = &p.warnings[0];
            assert!(
                w.starts_with("a.rlb:x.cpt: cpt.non_finite: point 0 \"dust_01\"")
                    && w.ends_with("; ignored"),
                "{w}"
            );
        }
    }

    #[test]
    fn archive_siblings_by_stem_any_case() {
        let es = [
            nres::Entry {
                type_id: 0,
                attr1: 0,
                attr2: 0,
                attr3: 0,
                name: b"Tank.msh",
                data: b"m",
            },
            nres::Entry {
                type_id: 7,
                attr1: 0,
                attr2: 0,
                attr3: 0,
                name: b"TANK.CPT",
                data: b"c",
            },
            nres::Entry {
                type_id: 8,
                attr1: 0,
                attr2: 0,
                attr3: 0,
                name: b"tank.ctl",
                data: b"l",
            },
        ];
        let bytes = nres::write(&es).unwrap();
        let a = nres::read(&bytes, nres::Mode::Strict).unwrap();
        let s = in_archive(&a, "u.rlb", b"Tank.msh");
        assert_eq!(s.cpt.unwrap().source, "u.rlb:TANK.CPT");
        assert_eq!(s.ctl.unwrap().data, b"l");
        assert_eq!(in_archive(&a, "u.rlb", b"other.msh"), Siblings::default());
    }
}
