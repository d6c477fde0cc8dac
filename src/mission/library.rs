//! The game's objects as an asset library (issue 37 item 1): every
//! placeable object of a game folder — scenery (kinds 2, 3) by its
//! `objects.rlb` `STAT` record (mission-notes §4.1–§4.2), buildings and
//! units by their `.dat` under `UNITS` (§4.3; a building when the Type
//! word has the class bit 0x80000000, §2.5) — as one GLB each, its model
//! converted as a mission converts it (assembled from the `.dat`, or the
//! record's mesh; rest pose, no animations, no `0x20` cockpit geometry,
//! §8.2), under a root node whose extras `parkan_asset` are the placement
//! template the mission writer reads ([`super::assets`]); plus
//! `index.json` naming every asset with its catalog (kind, then archive
//! or class) and every record and `.dat` a model can be changed to.
//!
//! ```text
//! OUT/index.json
//! OUT/Buildings/<stem>.glb   OUT/Units/<stem>.glb
//! OUT/Vegetation/<record>.glb   OUT/Rocks/<record>.glb
//! ```
//!
//! Property templates come from the game's own placements (every
//! `MISSIONS/**/data.tma`): same path, else the same `Type` word, else the
//! minimal set ([`super::assets::template_properties`]), recorded with
//! where they came from. A scenery record takes the kind of its first
//! placement, else 2 (vegetation and rock are created alike, §2.4).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::assets::{self, TemplateSource, KIND_NAMES};
use super::extras::{self, ASSET_KEY};
use super::gltf::GROUPS;
use super::{tma, Mission, MissionError, Mode};
use crate::convert::{ConvertOptions, Converted};
use crate::material::Libraries;
use crate::source::SharedFiles;
use crate::unit::assemble::{self, Part, Registry, REGISTRY};

/// The index file of a library.
pub const INDEX: &str = "index.json";
/// Files walked at most under `UNITS` and `MISSIONS` (a bound on a hostile
/// folder; the shipped game has 458 `.dat` and 60 missions).
pub const MAX_FILES: usize = 100_000;
/// NRes type of a scenery record in `objects.rlb` (§4.1).
const STAT: u32 = u32::from_le_bytes(*b"STAT");

/// One placeable object of the game folder.
#[derive(Debug, Clone, PartialEq)]
pub struct Asset {
    /// Display name: the record name or the `.dat` stem.
    pub name: String,
    /// 0 building, 1 unit, 2 vegetation, 3 rock.
    pub kind: u32,
    /// What a placement's `path` holds: the record name, or the `.dat`
    /// path relative to the game folder with backslashes.
    pub path: String,
    /// The `.dat` Type word (kinds 0/1).
    pub type_word: Option<u32>,
    /// Catalog path: `Buildings/plant`, `Vegetation/static.rlb`.
    pub catalog: String,
    /// The GLB's path relative to the library folder (`/`).
    pub file: String,
}

/// What a game folder offers ([`discover`]).
#[derive(Debug, Clone, Default)]
pub struct Offer {
    /// The assets, scenery first (by record name), then `.dat` by path.
    pub assets: Vec<Asset>,
    /// The game's missions read strictly (path relative to the game
    /// folder, mission), for the templates.
    pub missions: Vec<(String, Mission)>,
    /// Files read.
    pub inputs: Vec<PathBuf>,
    /// What could not be read (a mission, a `.dat`), each a sentence.
    pub warnings: Vec<String>,
}

/// The §2.5 name of a Type word's class (`plant`, `warrior`), else its
/// class bit (`building 0x80000020`, `robot 0x01000001`).
pub fn class_name(word: u32) -> String {
    let known = [
        (0x8001_0000, "bunker small"),
        (0x8002_0000, "bunker medium"),
        (0x8004_0000, "bunker large"),
        (0x8000_0002, "generator"),
        (0x8000_0004, "mine"),
        (0x8000_0008, "storage"),
        (0x8000_0010, "plant"),
        (0x8000_0040, "hangar"),
        (0x8000_0080, "mast"),
        (0x8000_0100, "little teleport"),
        (0x8000_0200, "main teleport"),
        (0x8000_0400, "institute"),
        (0x8010_0000, "tower medium"),
        (0x8020_0000, "tower large"),
        (0x8000_1000, "bridge"),
        (0x8000_2000, "ruin"),
        (0x0100_2000, "transport"),
        (0x0100_4000, "builder"),
        (0x0100_8000, "warrior"),
        (0x0101_0000, "HQ"),
        (0x0102_0000, "hero"),
        (0x2000_0000, "animal"),
    ];
    match known.iter().find(|(w, _)| *w == word) {
        Some((_, n)) => (*n).to_string(),
        None if word & 0x8000_0000 != 0 => format!("building {word:#010x}"),
        None => format!("class {word:#010x}"),
    }
}

/// Every regular file under `dir` (depth-first, names sorted), at most
/// [`MAX_FILES`], at most 8 folders deep.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0usize)];
    while let Some((d, depth)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
        entries.sort();
        for p in entries.into_iter().rev() {
            if out.len() >= MAX_FILES {
                return out;
            }
            match std::fs::symlink_metadata(&p) {
                Ok(m) if m.is_dir() && depth < 8 => stack.push((p, depth + 1)),
                Ok(m) if m.is_file() => out.push(p),
                _ => {}
            }
        }
    }
    out.sort();
    out
}

/// `p` relative to `game`, with backslashes (the game's own spelling).
fn game_relative(game: &Path, p: &Path) -> String {
    let rel = p.strip_prefix(game).unwrap_or(p);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("\\")
}

/// A file name from `name` (letters, digits, `_`, `-`, `.`), unique in
/// `taken` (case-insensitive).
fn file_name(name: &str, taken: &mut Vec<String>) -> String {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_-.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut out = clean.clone();
    let mut n = 1;
    while taken.iter().any(|t| t.eq_ignore_ascii_case(&out)) {
        n += 1;
        out = format!("{clean}_{n}");
    }
    taken.push(out.clone());
    out
}

/// What `game` offers (module docs): its `STAT` records, its `.dat`
/// files under `UNITS` (magic 0xF0F1, the Type word after it) and its
/// missions under `MISSIONS` (read strictly; one that does not read is a
/// warning), each file an input.
///
/// Returns the offer and the registry (for [`build`]).
///
/// # Errors
/// `mission.resolve` when `game` has no `objects.rlb`; `io`, or
/// `unit.registry` / `limits.work` when it does not read.
pub fn discover(game: &Path, max_work: u64) -> Result<(Offer, Registry), MissionError> {
    let mut offer = Offer::default();
    let reg_path = super::validate::find_in_game(game, REGISTRY).ok_or_else(|| {
        MissionError::new(
            "mission.resolve",
            None,
            format!("{}: no {REGISTRY}: not a game folder", game.display()),
        )
    })?;
    let reg_bytes = crate::source::read_regular(&reg_path, crate::output::MAX_UPDATE_BYTES)
        .map_err(|e| {
            MissionError::new(
                "io",
                None,
                format!("cannot read {}: {e}", reg_path.display()),
            )
        })?;
    let registry = Registry::read_within(&reg_bytes, max_work)
        .map_err(|e| MissionError::new(e.rule, None, e.detail))?;
    offer.inputs.push(reg_path.clone());
    let archive = crate::nres::read(&reg_bytes, crate::nres::Mode::Tolerant)
        .map_err(|e| MissionError::new("unit.registry", None, e.to_string()))?;
    let mut records: Vec<String> = archive
        .entries
        .iter()
        .filter(|e| e.type_id == STAT)
        .map(|e| crate::source::decode_name(e.name))
        .collect();
    records.sort_by_key(|r| r.to_lowercase());
    records.dedup_by(|a, b| a.eq_ignore_ascii_case(b));
    for dir in super::validate::find_in_game(game, "MISSIONS").into_iter() {
        for p in walk(&dir) {
            if !p
                .file_name()
                .is_some_and(|n| n.eq_ignore_ascii_case(super::pipeline::TMA))
            {
                continue;
            }
            let rel = game_relative(game, &p);
            let read = crate::source::read_regular(&p, crate::output::MAX_UPDATE_BYTES)
                .map_err(|e| e.to_string())
                .and_then(|b| tma::read(&b, Mode::Strict).map_err(|e| e.to_string()));
            match read {
                Ok((m, _)) => {
                    offer.inputs.push(p);
                    offer.missions.push((rel, m));
                }
                Err(e) => offer
                    .warnings
                    .push(format!("{rel}: {e}: not used for the property templates")),
            }
        }
    }
    let mut taken = Vec::new();
    for r in records {
        let kind = offer
            .missions
            .iter()
            .flat_map(|(_, m)| &m.objects)
            .find(|o| !o.is_owned() && o.path_text().eq_ignore_ascii_case(&r))
            .map_or(2, |o| o.kind.clamp(2, 3));
        let archive = registry
            .mesh_of(&r)
            .map_or_else(|_| "no mesh".to_string(), |m| m.archive.to_lowercase());
        let group = GROUPS[kind as usize];
        offer.assets.push(Asset {
            name: r.clone(),
            kind,
            file: format!("{group}/{}.glb", file_name(&r, &mut taken)),
            path: r,
            type_word: None,
            catalog: format!("{group}/{archive}"),
        });
    }
    dat_assets(game, &mut offer, &mut taken);
    Ok((offer, registry))
}

/// The `.dat` files under `UNITS` as assets of kinds 0/1 (module docs).
fn dat_assets(game: &Path, offer: &mut Offer, taken: &mut Vec<String>) {
    let Some(units) = super::validate::find_in_game(game, "UNITS") else {
        offer.warnings.push(format!(
            "{}: no UNITS folder: no buildings or units",
            game.display()
        ));
        return;
    };
    for p in walk(&units) {
        if !p.extension().is_some_and(|e| e.eq_ignore_ascii_case("dat")) {
            continue;
        }
        let rel = game_relative(game, &p);
        let head = crate::source::read_regular(&p, crate::output::MAX_UPDATE_BYTES)
            .ok()
            .filter(|b| b.len() >= 8 && b[..4] == 0xF0F1u32.to_le_bytes())
            .map(|b| u32::from_le_bytes([b[4], b[5], b[6], b[7]]));
        let Some(word) = head else {
            offer.warnings.push(format!(
                "{rel}: not a unit file (no magic 0xF0F1): not offered"
            ));
            continue;
        };
        let kind = if word & 0x8000_0000 != 0 { 0 } else { 1 };
        let stem = crate::source::stem_of(rel.rsplit('\\').next().unwrap_or(&rel)).to_string();
        let group = GROUPS[kind as usize];
        offer.inputs.push(p);
        offer.assets.push(Asset {
            name: stem.clone(),
            kind,
            file: format!("{group}/{}.glb", file_name(&stem, taken)),
            path: rel,
            type_word: Some(word),
            catalog: format!("{group}/{}", class_name(word)),
        });
    }
}

/// The placement template of `a` (`extras.parkan_asset` of its GLB's
/// root, [`super::assets`]'s shape) from the game's placements.
pub fn template(a: &Asset, missions: &[(String, Mission)]) -> Value {
    let list: Vec<&Mission> = missions.iter().map(|(_, m)| m).collect();
    let (props, start_flag, from) =
        assets::template_properties(&list, a.kind, &a.path, a.type_word.unwrap_or(0));
    let source = match from {
        TemplateSource::SamePath { mission, object } => {
            json!({"from": "placement", "mission": missions[mission].0, "object": object})
        }
        TemplateSource::SameType { mission, object } => {
            json!({"from": "type", "mission": missions[mission].0, "object": object})
        }
        TemplateSource::Minimal => json!({"from": "minimal"}),
    };
    let instance = if a.kind <= 1 { a.name.as_str() } else { "" };
    json!({
        "kind": a.kind, "kind_name": KIND_NAMES[a.kind as usize],
        "path": a.path, "instance_name": instance, "start_flag": start_flag,
        "properties": props.iter().map(extras::property).collect::<Vec<_>>(),
        "template": source, "catalog": a.catalog, "name": a.name,
        "type": a.type_word,
    })
}

/// The model of `a` converted as a mission converts it (module docs).
fn convert(
    game: &Path,
    a: &Asset,
    registry: &Registry,
    libs: Option<&Libraries>,
    opts: &ConvertOptions,
    files: &SharedFiles,
) -> Result<(Converted, Vec<PathBuf>), MissionError> {
    let rec = || Some(format!("{} {}", KIND_NAMES[a.kind as usize], a.path));
    if a.kind <= 1 {
        let file = super::validate::find_in_game(game, &a.path)
            .ok_or_else(|| MissionError::new("mission.resolve", rec(), "the file is gone"))?;
        let data = crate::source::read_regular(&file, crate::output::MAX_UPDATE_BYTES)
            .map_err(|e| MissionError::new("io", rec(), e.to_string()))?;
        let c = assemble::convert_unit_with(&file, &data, libs, opts, files)
            .map_err(|e| MissionError::new(e.rule(), rec(), e.to_string()))?;
        return Ok((c, vec![file]));
    }
    let mesh = registry
        .mesh_of(&a.path)
        .map_err(|e| MissionError::new("mission.resolve", rec(), e.detail))?;
    let part = Part {
        component: 0,
        record: a.path.clone(),
        display: a.path.clone(),
        class: 0,
        archive: mesh.archive.clone(),
        mesh_entry: mesh.entry.clone(),
        via: mesh.via.clone(),
        parent_part: None,
        socket: None,
    };
    let (c, _) = assemble::convert_part(game, &part, libs, opts, files)
        .map_err(|e| MissionError::new(e.rule(), rec(), e.to_string()))?;
    let archive = assemble::find_file(game, &mesh.archive);
    Ok((c, archive.into_iter().collect()))
}

/// The GLB of asset `a`: its model (no animations, no scene extras, no
/// geometry on `0x20` cockpit nodes: §4.3, §8.2) under a root node named
/// after it carrying `extras.parkan_asset` = `template`.
///
/// # Errors
/// `gltf.json`; `gltf.size` (over 4 GiB).
fn asset_glb(a: &Asset, c: &Converted, template: Value) -> Result<Vec<u8>, MissionError> {
    let json_err = |e: serde_json::Error| MissionError::new("gltf.json", None, e.to_string());
    let mut doc = serde_json::to_value(&c.exported.root).map_err(json_err)?;
    if let Some(o) = doc.as_object_mut() {
        o.remove("animations");
    }
    let roots = doc["scenes"][0]["nodes"].clone();
    let nodes = doc["nodes"]
        .as_array_mut()
        .map(std::mem::take)
        .unwrap_or_default();
    let mut nodes: Vec<Value> = nodes
        .into_iter()
        .map(|mut n| {
            let cockpit = n["extras"]["msh"]["flags"]
                .as_u64()
                .is_some_and(|f| f & 0x20 != 0);
            if cockpit {
                if let Some(o) = n.as_object_mut() {
                    o.remove("mesh");
                }
            }
            n
        })
        .collect();
    nodes.push(json!({"name": a.name, "children": roots, "extras": {ASSET_KEY: template}}));
    let root = nodes.len() - 1;
    doc["nodes"] = Value::from(nodes);
    doc["scenes"] = json!([{"name": a.name, "nodes": [root]}]);
    doc["scene"] = json!(0);
    let json = serde_json::to_vec(&doc).map_err(json_err)?;
    crate::gltf_export::glb::frame(&json, &c.exported.bin).map_err(|total| {
        MissionError::new(
            "gltf.size",
            None,
            format!("GLB of {total} bytes exceeds 4 GiB"),
        )
    })
}

/// One asset written ([`build`]): its GLB bytes, the files read, the
/// conversion's warnings.
pub struct Built {
    /// The GLB.
    pub glb: Vec<u8>,
    /// Files read for it.
    pub inputs: Vec<PathBuf>,
    /// The model conversion's warnings.
    pub warnings: Vec<String>,
}

/// The GLB of asset `a` of game folder `game` (module docs), its
/// template from `missions`.
///
/// # Errors
/// `mission.resolve` (the record reaches no mesh, the `.dat` is gone),
/// the model conversion's own rules naming the asset, `gltf.*`.
pub fn build(
    game: &Path,
    a: &Asset,
    missions: &[(String, Mission)],
    registry: &Registry,
    libs: Option<&Libraries>,
    opts: &ConvertOptions,
    files: &SharedFiles,
) -> Result<Built, MissionError> {
    let (c, inputs) = convert(game, a, registry, libs, opts, files)?;
    let glb = asset_glb(a, &c, template(a, missions))?;
    Ok(Built {
        glb,
        inputs,
        warnings: c.warnings,
    })
}

/// `index.json` of a library (module docs): the game folder, every asset
/// written (`assets`: name, kind, path, type, catalog, file, template
/// source), those that failed (`failed`: name, kind, path, error, rule),
/// and what a model can be changed to (`records`: the `STAT` records, by
/// kind of the placements; `dat`: the `.dat` paths, buildings and units).
pub fn index(
    game: &Path,
    offer: &Offer,
    written: &[(usize, Value)],
    failed: &[(usize, MissionError)],
) -> Value {
    let assets: Vec<Value> = written
        .iter()
        .map(|(k, t)| {
            let a = &offer.assets[*k];
            json!({"name": a.name, "kind": a.kind, "path": a.path, "type": a.type_word,
                   "catalog": a.catalog, "file": a.file, "template": t["template"]})
        })
        .collect();
    let failed: Vec<Value> = failed
        .iter()
        .map(|(k, e)| {
            let a = &offer.assets[*k];
            json!({"name": a.name, "kind": a.kind, "path": a.path, "rule": e.rule, "error": e.to_string()})
        })
        .collect();
    let of = |kinds: &[u32]| -> Vec<Value> {
        offer
            .assets
            .iter()
            .filter(|a| kinds.contains(&a.kind))
            .map(|a| json!(a.path))
            .collect()
    };
    json!({
        "format": 1,
        "generator": concat!("mshgltf ", env!("CARGO_PKG_VERSION"), " (asset library)"),
        "game": game.display().to_string(),
        "catalogs": offer.assets.iter().map(|a| a.catalog.clone()).collect::<std::collections::BTreeSet<_>>(),
        "assets": assets, "failed": failed,
        "records": {"scenery": of(&[2, 3]), "dat": of(&[0, 1])},
        "warnings": offer.warnings,
    })
}
