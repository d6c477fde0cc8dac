//! One map on disk: Land.msh with its siblings Land.map, Land1.wea and
//! Land2.wea (terrain-notes §1.10: `<base>.msh`, `<base>.map`, `<base>1.wea`,
//! `<base>2.wea`), decoded, checked, and its material rows resolved through
//! Material.lib and Textures.lib.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::areals;
use super::ir::{Land, NO_TEX2};
use super::map::{self, ArealMap};
use super::validate::{self, Findings};
use super::{read, Mode, TerrainError};
use crate::material::{Libraries, Mat0, Wear};

/// The work of parsing a map sibling (issue 26 item 5), counted from its
/// bytes before it is parsed, in [`crate::limits`] units: a Land.map
/// (`is_map`) 1 per [`crate::limits::MAP_BYTES_PER_UNIT`] bytes (a grid
/// cell listing one areal is 4 bytes on disk and about 56 decoded; an
/// 18 MB Land.map took 229 MB), a WEAR table
/// [`crate::limits::UNITS_PER_WEAR_ROW`] per line (a row, its resolved
/// material and textures). Returns the units and what was counted.
pub fn sibling_work(is_map: bool, bytes: &[u8]) -> (u64, String) {
    use crate::limits::{MAP_BYTES_PER_UNIT, UNITS_PER_WEAR_ROW};
    if is_map {
        let n = bytes.len() as u64;
        (
            n.div_ceil(MAP_BYTES_PER_UNIT),
            format!("{n} bytes of Land.map"),
        )
    } else {
        let lines = bytes.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
        (
            lines.saturating_mul(UNITS_PER_WEAR_ROW),
            format!("{lines} WEAR lines (rows)"),
        )
    }
}

/// A resolved Land1.wea row with its Land2.wea microtexture (same row).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MaterialRow {
    /// Land1 row name.
    pub name: String,
    /// Material.lib entry used (after fallbacks).
    pub resolved: String,
    /// Track-0 texture (Textures.lib entry).
    pub texture: Option<String>,
    /// MAT0 phase-0 diffuse RGBA.
    pub base_color: [f32; 4],
    /// Land2 row name (the microtexture's material).
    pub micro_material: String,
    /// Track-1 texture of the Land2 material (track 0 when it has one track).
    pub micro: Option<String>,
}

/// A decoded, checked map.
#[derive(Debug, Clone)]
pub struct TerrainSource {
    /// Land.msh path as given.
    pub path: PathBuf,
    /// The decoded Land.msh.
    pub land: Land,
    /// Its findings (warnings and, in tolerant mode, the recovered errors).
    pub findings: Findings,
    /// Faces left out (tolerant): bad vertex, non-finite vertex, material row out of range.
    pub skip_faces: BTreeSet<usize>,
    /// Land.map, when present and readable.
    pub map: Option<ArealMap>,
    /// Land1.wea, when present.
    pub land1: Option<Wear>,
    /// Land2.wea, when present.
    pub land2: Option<Wear>,
    /// Resolved Land1 rows (empty without Land1.wea).
    pub rows: Vec<MaterialRow>,
    /// Hex SHA-256 of Land.msh, Land.map, Land1.wea, Land2.wea.
    pub sha256: [Option<String>; 4],
    /// Every file read: Land.msh and the siblings found (the run's inputs).
    pub inputs: Vec<PathBuf>,
    /// Human-readable warnings.
    pub warnings: Vec<String>,
}

/// The texture of MAT0 track `track` (terrain-notes §1.10): animation block
/// `track`'s first key names a phase; a missing track gives track 0; no
/// blocks at all gives the first textured phase.
pub fn track_texture(m: &Mat0, track: usize) -> Option<String> {
    match m.anim_blocks.get(track) {
        Some(b) => b
            .keys
            .first()
            .and_then(|k| m.phases.get(usize::from(k[0])))
            .and_then(|p| p.texture())
            .or_else(|| m.primary_texture()),
        None if track > 0 => track_texture(m, 0),
        None => m.primary_texture(),
    }
}

fn sha(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn resolve_rows(land1: &Wear, land2: Option<&Wear>, libs: Option<&Libraries>) -> Vec<MaterialRow> {
    land1
        .materials
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let micro_material = land2
                .and_then(|w| w.materials.get(i))
                .map_or_else(String::new, |r| r.name.clone());
            let (mut row, mut micro) = (
                MaterialRow {
                    name: r.name.clone(),
                    micro_material,
                    ..Default::default()
                },
                None,
            );
            row.base_color = [1.0; 4];
            if let Some(l) = libs {
                let m = l.resolve_material(&r.name);
                row.resolved = m.resolved.clone();
                row.base_color = m.base_color;
                row.texture = m.mat0.as_ref().and_then(|m| track_texture(m, 0));
                if !row.micro_material.is_empty() {
                    micro = l
                        .resolve_material(&row.micro_material)
                        .mat0
                        .as_ref()
                        .and_then(|m| track_texture(m, 1));
                }
            }
            row.micro = micro;
            row
        })
        .collect()
}

impl TerrainSource {
    /// Reads `msh` and its siblings, checks them under `mode` and resolves
    /// the material rows through `libs`.
    ///
    /// # Errors
    /// [`read::decode`] and [`validate::validate`] rules; `terrain.material_row`
    /// (strict: a face's tex1/tex2 is not a Land1 row); Land.map / WEAR rules
    /// (strict; tolerant reports them and goes on without the file);
    /// `terrain.io` when Land.msh cannot be read.
    pub fn load(
        msh: &Path,
        mode: Mode,
        libs: Option<&Libraries>,
    ) -> Result<TerrainSource, TerrainError> {
        Self::load_within(msh, mode, libs, crate::limits::DEFAULT_MAX_WORK)
    }

    /// [`TerrainSource::load`] under a work budget of `max_work` units
    /// (`--max-work`): each sibling's parse is counted, alone, before it is
    /// parsed ([`sibling_work`]); Land.msh's own share of the export
    /// ([`super::convert::land_work`]) right after its streams are decoded,
    /// before they are validated; the whole export after the load
    /// ([`super::convert::work`]).
    ///
    /// # Errors
    /// Those of [`TerrainSource::load`]; `limits.work` (in either mode)
    /// naming the sibling, what was counted and the budget.
    pub fn load_within(
        msh: &Path,
        mode: Mode,
        libs: Option<&Libraries>,
        max_work: u64,
    ) -> Result<TerrainSource, TerrainError> {
        let bytes =
            crate::source::read_regular(msh, crate::output::MAX_UPDATE_BYTES).map_err(|e| {
                TerrainError::file("terrain.io", format!("cannot read {}: {e}", msh.display()))
            })?;
        let land = read::decode(&bytes)?;
        // The budget before the validation walks the streams.
        let (units, what) = super::convert::land_work(&land);
        if units > max_work {
            return Err(TerrainError::file(
                "limits.work",
                format!(
                    "{}: {what} make {units} work units, over the budget of {max_work} (docs/safety.md \"Bounded work\"; raise it with --max-work)",
                    msh.display()
                ),
            ));
        }
        let findings = validate::validate(&land, mode)?;
        let dir = msh
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let base = msh
            .file_stem()
            .map_or_else(|| "Land".into(), |s| s.to_string_lossy().into_owned());
        let mut src = TerrainSource {
            path: msh.to_path_buf(),
            skip_faces: findings.drop_faces.clone(),
            findings,
            land,
            map: None,
            land1: None,
            land2: None,
            rows: Vec::new(),
            sha256: [Some(sha(&bytes)), None, None, None],
            inputs: vec![msh.to_path_buf()],
            warnings: Vec::new(),
        };
        src.load_siblings(dir, &base, mode, max_work)?;
        src.rows = src
            .land1
            .as_ref()
            .map_or_else(Vec::new, |w| resolve_rows(w, src.land2.as_ref(), libs));
        src.check_rows(mode)?;
        for e in src
            .findings
            .warnings
            .iter()
            .chain(if mode == Mode::Tolerant {
                &src.findings.errors[..]
            } else {
                &[]
            })
        {
            src.warnings.push(e.to_string());
        }
        if !src.skip_faces.is_empty() {
            src.warnings.push(format!(
                "skipped {} face(s): {:?}",
                src.skip_faces.len(),
                src.skip_faces.iter().take(20).collect::<Vec<_>>()
            ));
        }
        Ok(src)
    }

    fn load_siblings(
        &mut self,
        dir: &Path,
        base: &str,
        mode: Mode,
        max_work: u64,
    ) -> Result<(), TerrainError> {
        let names = [
            format!("{base}.map"),
            format!("{base}1.wea"),
            format!("{base}2.wea"),
        ];
        for (k, name) in names.iter().enumerate() {
            let Some(p) = crate::source::file_any_case(dir, name) else {
                self.warnings
                    .push(format!("{name}: not found beside {}", self.path.display()));
                continue;
            };
            let bytes =
                crate::source::read_regular(&p, crate::output::MAX_UPDATE_BYTES).map_err(|e| {
                    TerrainError::file("terrain.io", format!("cannot read {}: {e}", p.display()))
                })?;
            self.inputs.push(p.clone());
            let (units, what) = sibling_work(k == 0, &bytes);
            if units > max_work {
                return Err(TerrainError::file(
                    "limits.work",
                    format!(
                        "{}: {what} make {units} work units, over the budget of {max_work} (docs/safety.md \"Bounded work\"; raise it with --max-work)",
                        p.display()
                    ),
                ));
            }
            self.sha256[k + 1] = Some(sha(&bytes));
            let r = match k {
                0 => map::decode(&bytes).map(|m| self.map = Some(m)),
                1 => Wear::parse(&bytes)
                    .map(|w| self.land1 = Some(w))
                    .map_err(Into::into),
                _ => Wear::parse(&bytes)
                    .map(|w| self.land2 = Some(w))
                    .map_err(Into::into),
            };
            match (r, mode) {
                (Err(e), Mode::Strict) => {
                    return Err(TerrainError {
                        detail: format!("{name}: {}", e.detail),
                        ..e
                    })
                }
                (Err(e), Mode::Tolerant) => self.warnings.push(format!("{name} skipped: {e}")),
                (Ok(()), _) => {}
            }
        }
        if let Some(m) = &self.map {
            self.warnings
                .extend(areals::check(m).iter().map(|e| format!("Land.map: {e}")));
        }
        Ok(())
    }

    /// Rule 8: tex1 < rows, tex2 == 0xFF or < rows.
    fn check_rows(&mut self, mode: Mode) -> Result<(), TerrainError> {
        let Some(w) = &self.land1 else { return Ok(()) };
        let n = w.materials.len();
        for (i, f) in self.land.faces.iter().enumerate() {
            if usize::from(f.tex1) < n && (f.tex2 == NO_TEX2 || usize::from(f.tex2) < n) {
                continue;
            }
            let e = TerrainError::record(
                "terrain.material_row",
                21,
                i,
                format!("tex1 {} / tex2 {}: Land1.wea has {n} rows", f.tex1, f.tex2),
            );
            if mode == Mode::Strict {
                return Err(e);
            }
            self.skip_faces.insert(i);
        }
        Ok(())
    }

    /// Land1 row `i`, or a placeholder named `ROW<i>` without textures.
    pub fn material_row(&self, i: usize) -> MaterialRow {
        self.rows.get(i).cloned().unwrap_or_else(|| MaterialRow {
            name: format!("ROW{i}"),
            resolved: String::new(),
            base_color: [1.0; 4],
            ..Default::default()
        })
    }
}
