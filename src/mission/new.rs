//! A new mission from a template (mission-notes §8.7 "Without a base",
//! §1.1; issue 38 item 2): the starting mission a modder builds on.
//!
//! [`starting`] keeps the template's version words, map word and lode
//! word, sets the map path and the description (the mission's name), and
//! keeps two of its clans: the first player clan (type 1) and the first
//! enemy clan (type 2), each with its AI script, research tree and minds
//! as they are, their relation lists reduced to the two of them, their
//! bases placed on the new map (the player at the south-west quarter
//! point, the enemy at the north-east one) and no zones. It places no
//! objects, routes or lodes: those come from the modder's scene, written
//! over this mission by the same write-back as any edit
//! ([`super::back::apply`]), so a new mission is one more base.
//!
//! [`template_files`] names the text and sky files copied as they are;
//! [`next_free`] the `MISSIONS/Single.<n>` folder the game's menu lists
//! next (§1.1: it scans `single.<n>/descr` and stops at the first
//! missing one).

use std::path::{Path, PathBuf};

use super::ir::{Clan, Mission};
use super::validate::find_in_game;
use super::MissionError;

/// The template's text files copied as they are (§1.1); `descr` is
/// written from the name instead, and every `sky.*` file is copied too.
pub const COPIED: [&str; 4] = ["mission.cfg", "Mistips.mis", "messages.cfg", "briefing.cfg"];

/// The largest `Single.<n>` number looked at by [`next_free`].
pub const MAX_SINGLE: u32 = 99;

/// A map's XY extent in game units (`min` south-west corner, `max`
/// north-east), e.g. `[0, 0]`–`[960, 960]` for a 960-unit map.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Extent {
    /// The smallest x and y.
    pub min: [f32; 2],
    /// The largest x and y.
    pub max: [f32; 2],
}

impl Extent {
    /// The XY extent of a map's Land.msh: the bounds of its Res3
    /// positions; `None` for a map without positions or with a
    /// non-finite one.
    pub fn of_land(land: &crate::terrain::ir::Land) -> Option<Extent> {
        let mut e = Extent {
            min: [f32::INFINITY; 2],
            max: [f32::NEG_INFINITY; 2],
        };
        for p in &land.positions {
            for (a, v) in p[..2].iter().enumerate() {
                if !v.is_finite() {
                    return None;
                }
                e.min[a] = e.min[a].min(*v);
                e.max[a] = e.max[a].max(*v);
            }
        }
        (e.min[0] <= e.max[0] && e.min[1] <= e.max[1]).then_some(e)
    }

    /// The point a fraction `t` (0..1) of the way from `min` to `max` on
    /// both axes.
    pub fn at(&self, t: f32) -> [f32; 2] {
        [0, 1].map(|a| self.min[a] + t * (self.max[a] - self.min[a]))
    }
}

/// The player's base, as a fraction of the map's extent on both axes.
pub const PLAYER_BASE: f32 = 0.25;
/// The enemy's base, as a fraction of the map's extent on both axes.
pub const ENEMY_BASE: f32 = 0.75;

fn err(rule: &'static str, record: Option<String>, detail: impl Into<String>) -> MissionError {
    MissionError::new(rule, record, detail)
}

/// The map path a mission writes for the map folder `dirs` (game-relative
/// components, `["MAPS", "m01"]`): `DATA\MAPS\m01\land` (§2.1: the game
/// folder's `DATA\` in front unless given, the files' stem `land`).
pub fn map_path_of(dirs: &[&str]) -> String {
    let mut parts: Vec<&str> = Vec::with_capacity(dirs.len() + 2);
    if !dirs.first().is_some_and(|d| d.eq_ignore_ascii_case("data")) {
        parts.push("DATA");
    }
    parts.extend(dirs);
    parts.push("land");
    parts.join("\\")
}

/// The clan's relation word towards the clan named `other` in the
/// template (case-insensitive, §2.3), else `default`.
fn word_towards(c: &Clan, other: &[u8], default: u32) -> u32 {
    c.relations
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(other))
        .map_or(default, |(_, w)| *w)
}

/// The starting mission (module docs) of `template` on the map whose path
/// is `map_path` (`DATA\MAPS\m01\land`) and extent `extent`, named `name`
/// (the description, Windows-1251 with no padding: §8.7).
///
/// # Errors
/// `mission.template` naming the template's clans when it has no player
/// clan (type 1) or no enemy clan (type 2); `mission.name` for an empty
/// name, one with a line break or a character Windows-1251 cannot hold.
pub fn starting(
    template: &Mission,
    map_path: &str,
    extent: Extent,
    name: &str,
) -> Result<Mission, MissionError> {
    let description = name_bytes(name)?;
    let map = crate::convention::encode_name(map_path).ok_or_else(|| {
        err(
            "mission.name",
            Some("map path".into()),
            format!("{map_path:?}: a character Windows-1251 cannot hold"),
        )
    })?;
    let clans = starting_clans(template, extent)?;
    Ok(Mission {
        format: template.format,
        routes: Vec::new(),
        clan_version: template.clan_version,
        clans,
        object_version: template.object_version,
        objects: Vec::new(),
        map_path: map,
        map_word: template.map_word,
        description,
        lode_word: template.lode_word,
        lodes: Vec::new(),
        trailing: Vec::new(),
    })
}

/// The name as the bytes of the mission's title, in `descr` and in
/// `data.tma` (Windows-1251, one line).
///
/// # Errors
/// `mission.name`: empty, a line break or NUL, or a character
/// Windows-1251 cannot hold.
pub fn name_bytes(name: &str) -> Result<Vec<u8>, MissionError> {
    let bad = |why: &str| {
        err(
            "mission.name",
            Some("name".into()),
            format!("{name:?}: {why}"),
        )
    };
    if name.trim().is_empty() {
        return Err(bad("empty: the game's menu shows it"));
    }
    if name.contains(['\n', '\r', '\0']) {
        return Err(bad("a line break or NUL: descr is one line"));
    }
    crate::convention::encode_name(name)
        .ok_or_else(|| bad("a character Windows-1251 cannot hold (the game's text encoding)"))
}

/// The player and enemy clans of `template`, their bases on `extent`,
/// their relations reduced to the two (module docs).
fn starting_clans(template: &Mission, extent: Extent) -> Result<Vec<Clan>, MissionError> {
    let first = |kind: u32| template.clans.iter().find(|c| c.kind == kind);
    let listed = || {
        template
            .clans
            .iter()
            .map(|c| format!("{} (type {})", crate::source::decode_name(&c.name), c.kind))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let missing = |what: &str| {
        err(
            "mission.template",
            Some("clans".into()),
            format!(
                "the template has no {what}; its clans: {}: choose a template with a player clan (type 1) and an enemy clan (type 2)",
                listed()
            ),
        )
    };
    let player = first(1).ok_or_else(|| missing("player clan (type 1)"))?;
    let enemy = first(2).ok_or_else(|| missing("enemy clan (type 2)"))?;
    let mut out = Vec::new();
    for (c, t) in [(player, PLAYER_BASE), (enemy, ENEMY_BASE)] {
        let mut k = c.clone();
        k.base = extent.at(t);
        k.zones.clear();
        if template.clan_version >= 6 {
            // 1 towards itself, 0 towards the other (hostile) unless the
            // template says otherwise.
            k.relations = [player, enemy]
                .iter()
                .map(|o| {
                    let own = u32::from(o.name.eq_ignore_ascii_case(&c.name));
                    (o.name.clone(), word_towards(c, &o.name, own))
                })
                .collect();
        }
        out.push(k);
    }
    Ok(out)
}

/// The files of the template folder `dir` copied into a new mission:
/// [`COPIED`] that exist and every `sky.*` file (any case), as (name as
/// found, path), in that order.
pub fn template_files(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = COPIED
        .iter()
        .filter_map(|n| find_in_game(dir, n))
        .filter(|p| p.is_file())
        .filter_map(|p| Some((p.file_name()?.to_string_lossy().into_owned(), p)))
        .collect();
    let mut sky: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter_map(|p| Some((p.file_name()?.to_string_lossy().into_owned(), p)))
        .filter(|(n, _)| n.to_ascii_lowercase().starts_with("sky."))
        .collect();
    sky.sort();
    out.append(&mut sky);
    out
}

/// The next `Single.<n>` folder (two digits, `Single.03`) of the missions
/// folder `missions`: the first number with no folder of that name (any
/// case), and a warning for each lower `Single.<n>` without `descr`
/// (the menu stops there, §1.1, so the new one would not be listed).
///
/// # Errors
/// `mission.new` when `Single.01` to `Single.99` all exist.
pub fn next_free(missions: &Path) -> Result<(PathBuf, Vec<String>), MissionError> {
    let mut warnings = Vec::new();
    for n in 1..=MAX_SINGLE {
        let name = format!("Single.{n:02}");
        match find_in_game(missions, &name) {
            None => return Ok((missions.join(name), warnings)),
            Some(d) if find_in_game(&d, "descr").is_none() => warnings.push(format!(
                "{}: no descr: the game's menu stops at the first Single.<n> without one (mission-notes §1.1), so it will not list the new mission until that folder has one",
                d.display()
            )),
            Some(_) => {}
        }
    }
    Err(err(
        "mission.new",
        None,
        format!(
            "{}: Single.01 to Single.{MAX_SINGLE} all exist: give the new mission's folder itself",
            missions.display()
        ),
    ))
}

/// True when `dir`'s name is `MISSIONS` (any case): the game's missions
/// folder, in which a new mission takes the next free `Single.<n>`.
pub fn is_missions_folder(dir: &Path) -> bool {
    dir.file_name()
        .is_some_and(|n| n.to_string_lossy().eq_ignore_ascii_case("missions"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_path_and_extent_points() {
        assert_eq!(map_path_of(&["MAPS", "m01"]), "DATA\\MAPS\\m01\\land");
        assert_eq!(map_path_of(&["data", "MAPS", "x"]), "data\\MAPS\\x\\land");
        let e = Extent {
            min: [0.0, 100.0],
            max: [960.0, 500.0],
        };
        assert_eq!(e.at(PLAYER_BASE), [240.0, 200.0]);
        assert_eq!(e.at(ENEMY_BASE), [720.0, 400.0]);
    }

    #[test]
    fn names_the_menu_cannot_show_are_refused() {
        for bad in ["", "  ", "a\nb", "日本"] {
            let e = name_bytes(bad).unwrap_err();
            assert_eq!(e.rule, "mission.name", "{bad:?}");
        }
        assert_eq!(name_bytes("Железо").unwrap().len(), 6);
    }
}
