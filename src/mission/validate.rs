//! The mission rules (mission-notes §9): [`check`] for what the file
//! alone decides (errors 3–5), [`resolve`] for what needs the game folder
//! (error 6: every placed object's `.dat` or `objects.rlb` record, the
//! map's files).

use std::path::{Path, PathBuf};

use super::ir::{Mission, PlacedObject};
use super::tma::MARKER;
use super::MissionError;
use crate::unit::assemble::{Registry, REGISTRY};

fn object_record(i: usize, o: &PlacedObject) -> Option<String> {
    Some(format!("object {i} ({})", o.path_text()))
}

/// The §9 errors 3–5 of `m`, in file order: `mission.marker`,
/// `mission.kind`, `mission.finite` (position, rotation, scale; route
/// points, clan bases, zones and lodes too), `mission.property_type`,
/// `mission.clan_index` (owned objects), `mission.host` (a host that is not
/// the logical id of a building of the mission, or one of host/vertex
/// −1 without the other).
pub fn check(m: &Mission) -> Vec<MissionError> {
    let mut out = Vec::new();
    let buildings: Vec<i32> = m
        .objects
        .iter()
        .filter(|o| o.kind == 0)
        .map(|o| o.logical_id)
        .collect();
    for (i, o) in m.objects.iter().enumerate() {
        let rec = || object_record(i, o);
        if o.marker != MARKER {
            out.push(MissionError::new(
                "mission.marker",
                rec(),
                format!("marker {:#010x}, not {MARKER:#010x}", o.marker),
            ));
        }
        if o.kind > 3 {
            out.push(MissionError::new(
                "mission.kind",
                rec(),
                format!(
                    "kind {}, not 0..3 (building, unit, vegetation, rock)",
                    o.kind
                ),
            ));
        }
        let floats = o.position.iter().chain(&o.rotation).chain(&o.scale);
        if floats.clone().any(|f| !f.is_finite()) {
            out.push(MissionError::new(
                "mission.finite",
                rec(),
                format!(
                    "position {:?}, rotation {:?}, scale {:?} are not all finite",
                    o.position, o.rotation, o.scale
                ),
            ));
        }
        if let Some((k, p)) = o.properties.iter().enumerate().find(|(_, p)| p.kind > 1) {
            out.push(MissionError::new(
                "mission.property_type",
                rec(),
                format!(
                    "property {k} ({}) has type {}, not 0 (float) or 1 (int)",
                    crate::source::decode_name(&p.name),
                    p.kind
                ),
            ));
        }
        if o.is_owned() && usize::try_from(o.clan).map_or(true, |c| c >= m.clans.len()) {
            out.push(MissionError::new(
                "mission.clan_index",
                rec(),
                format!("clan {} >= clan count {}", o.clan, m.clans.len()),
            ));
        }
        host_rule(o, &buildings, rec, &mut out);
    }
    finite_tables(m, &mut out);
    out
}

fn host_rule(
    o: &PlacedObject,
    buildings: &[i32],
    rec: impl Fn() -> Option<String>,
    out: &mut Vec<MissionError>,
) {
    match (o.host, o.vertex) {
        (-1, -1) => {}
        (-1, _) | (_, -1) => out.push(MissionError::new(
            "mission.host",
            rec(),
            format!(
                "host {} and vertex {}: both −1 or both set",
                o.host, o.vertex
            ),
        )),
        (h, _) if !buildings.contains(&h) => out.push(MissionError::new(
            "mission.host",
            rec(),
            format!("host {h} is not the logical id of a building of the mission"),
        )),
        _ => {}
    }
}

fn finite_tables(m: &Mission, out: &mut Vec<MissionError>) {
    let bad = |v: &[f32]| v.iter().any(|f| !f.is_finite());
    for (i, r) in m.routes.iter().enumerate() {
        if r.points.iter().any(|p| bad(p)) {
            out.push(MissionError::new(
                "mission.finite",
                Some(format!("route {i}")),
                "a point is not finite",
            ));
        }
    }
    for (i, k) in m.clans.iter().enumerate() {
        let zones = k
            .zones
            .iter()
            .any(|z| bad(&z.centre) || bad(&[z.inner, z.outer]));
        if bad(&k.base) || zones {
            out.push(MissionError::new(
                "mission.finite",
                Some(format!("clan {i}")),
                "its base or a zone is not finite",
            ));
        }
    }
    for (i, l) in m.lodes.iter().enumerate() {
        if bad(&l.position) {
            out.push(MissionError::new(
                "mission.finite",
                Some(format!("lode {i}")),
                format!("position {:?}", l.position),
            ));
        }
    }
}

/// `rel` (a game path with `\\` or `/`, any case) under `game`, matched
/// component by component without case; `None` when a component is
/// missing, or when `rel` leaves the game folder
/// ([`crate::source::game_path_components`]: `..`, a drive; [`confined`]
/// names it).
pub fn find_in_game(game: &Path, rel: &str) -> Option<PathBuf> {
    let mut at = game.to_path_buf();
    for part in crate::source::game_path_components(rel).ok()? {
        let direct = at.join(part);
        at = if direct.exists() {
            direct
        } else {
            std::fs::read_dir(&at)
                .ok()?
                .flatten()
                .map(|e| e.path())
                .find(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().eq_ignore_ascii_case(part))
                })?
        };
    }
    Some(at)
}

/// The paths of `m` that would leave the game folder (issue 36 item 11):
/// each building's or unit's `.dat` path and the map path, by
/// [`crate::source::game_path_components`] (`..`, a drive, a stream), as
/// `mission.resolve` naming the record (`object 3 (…)`, `map path`).
/// Scenery paths are `objects.rlb` record names, never file paths.
pub fn confined(m: &Mission) -> Vec<MissionError> {
    let mut out = Vec::new();
    for (i, o) in m.objects.iter().enumerate().filter(|(_, o)| o.is_owned()) {
        if let Err(e) = crate::source::game_path_components(&o.path_text()) {
            out.push(MissionError::new(
                "mission.resolve",
                object_record(i, o),
                e.to_string(),
            ));
        }
    }
    let map = crate::source::decode_name(&m.map_path);
    if let Err(e) = crate::source::game_path_components(&map) {
        out.push(MissionError::new(
            "mission.resolve",
            Some("map path".into()),
            e.to_string(),
        ));
    }
    out
}

/// The §9 error 6 findings of `m` against the game folder `game`
/// (`mission.resolve`): a building's or unit's `.dat` that is missing; a
/// scenery record missing from `objects.rlb` or reaching no mesh
/// ([`Registry::mesh_of`]); a missing `objects.rlb`; a map path whose
/// `Land.msh` is missing.
pub fn resolve(m: &Mission, game: &Path) -> Vec<MissionError> {
    let mut out = Vec::new();
    let reg = find_in_game(game, REGISTRY)
        .and_then(|p| crate::source::read_regular(&p, crate::output::MAX_UPDATE_BYTES).ok())
        .and_then(|b| Registry::read(&b).ok());
    for (i, o) in m.objects.iter().enumerate() {
        let path = o.path_text();
        let why = match o.kind {
            0 | 1 => find_in_game(game, &path)
                .is_none()
                .then(|| format!("{path} is not in {}", game.display())),
            2 | 3 => match &reg {
                None => Some(format!("no readable {REGISTRY} in {}", game.display())),
                Some(r) => r.mesh_of(&path).err().map(|e| e.detail),
            },
            _ => None,
        };
        if let Some(why) = why {
            out.push(MissionError::new(
                "mission.resolve",
                object_record(i, o),
                why,
            ));
        }
    }
    let map = crate::source::decode_name(&m.map_path);
    let land = map_dir(&map).and_then(|d| find_in_game(game, &format!("{d}\\Land.msh")));
    if land.is_none() {
        out.push(MissionError::new(
            "mission.resolve",
            Some("map path".into()),
            format!("{map:?}: no Land.msh under {}", game.display()),
        ));
    }
    out
}

/// The game-relative folder of a map path (`DATA\MAPS\m01\land` →
/// `MAPS\m01`: the leading `DATA\` is the game folder itself, the last
/// component the files' stem).
pub fn map_dir(map_path: &str) -> Option<String> {
    let parts: Vec<&str> = map_path
        .split(['\\', '/'])
        .filter(|p| !p.is_empty())
        .collect();
    let (_, dirs) = parts.split_last()?;
    let dirs = match dirs.first() {
        Some(d) if d.eq_ignore_ascii_case("data") => &dirs[1..],
        _ => dirs,
    };
    Some(dirs.join("\\"))
}

/// The Type word of a hero (mission-notes §2.5: the `.dat`'s second
/// `u32`, also its locked `Type` property).
pub const HERO_TYPE: u32 = 0x0102_0000;
/// The folder of the shipped heroes' unit files (§5.5:
/// `UNITS\UNITS\HERO\tut1_p.dat`), matched without case.
pub const HERO_FOLDER: &str = "UNITS\\UNITS\\HERO\\";

/// True when `o` is a hero (§5.5): a unit (kind 1) whose path is under
/// [`HERO_FOLDER`] (either slash, any case), or whose `.dat` in `game`
/// has the Type word [`HERO_TYPE`].
pub fn is_hero(o: &PlacedObject, game: &Path) -> bool {
    if o.kind != 1 {
        return false;
    }
    let path = o.path_text().replace('/', "\\").to_ascii_uppercase();
    if path.starts_with(HERO_FOLDER) {
        return true;
    }
    find_in_game(game, &o.path_text())
        .and_then(|p| crate::source::read_regular(&p, crate::output::MAX_UPDATE_BYTES).ok())
        .and_then(|b| Some(u32::from_le_bytes(b.get(4..8)?.try_into().ok()?)))
        == Some(HERO_TYPE)
}

/// The hero rule of a new mission (mission-notes §5.5: the player starts
/// where the player clan's hero stands; there is no other start record):
/// one `mission.hero` error for each player clan (type 1) of `m` that owns
/// no hero ([`is_hero`]), naming the clan and how to add one.
pub fn hero(m: &Mission, game: &Path) -> Vec<MissionError> {
    let mut out = Vec::new();
    for (i, c) in m.clans.iter().enumerate().filter(|(_, c)| c.kind == 1) {
        let owns = m
            .objects
            .iter()
            .any(|o| usize::try_from(o.clan).ok() == Some(i) && is_hero(o, game));
        if !owns {
            let name = crate::source::decode_name(&c.name);
            out.push(MissionError::new(
                "mission.hero",
                Some(format!("clan {i} ({name})")),
                format!(
                    "the player's clan {name:?} owns no hero (a unit under {HERO_FOLDER} or whose .dat Type is {HERO_TYPE:#010x}): the game starts the player at the hero (mission-notes §5.5); place one from the asset library (Units, a hero) in the clan {name:?} and export again"
                ),
            ));
        }
    }
    out
}
