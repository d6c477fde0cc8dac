//! New placed objects (mission-notes §8.7): a node carrying
//! `extras.parkan_asset` ([`ASSET_KEY`], and no `parkan_object`) is a
//! building, unit, tree or rock the mission does not have yet, dragged in
//! from the game's asset library ([`super::library`]) or made by hand.
//!
//! ```json
//! "extras": {"parkan_asset": {
//!   "kind": 0, "path": "UNITS\\BUILDS\\BUNKER\\mbunk01.dat",
//!   "instance_name": "mbunk01", "start_flag": 0,
//!   "properties": [{"name": "LogicalID", "type": 1, "words": [0, 0, 0]}, ...]},
//!  "parkan_owner": "Clan name"}
//! ```
//!
//! `path` is, for kinds 0/1, the game-relative `.dat` path (backslashes),
//! for kinds 2/3 the `objects.rlb` record name (either as text or raw in
//! `path_b64`, as `parkan_object`'s strings, §8.3). `instance_name` and
//! `start_flag` may be absent (empty, 0); `properties` is required (the
//! library's template; [`template_properties`]). Other members (display
//! fields of the library) are not read.
//!
//! Each is appended after the base's objects and the copies, in node
//! order: marker 0x80000002, property word 1, host and vertex −1; its
//! place, turn and scale from the node's world matrix by the rules of
//! moved objects ([`super::back`]); owned kinds (0/1) get a fresh logical
//! id unique in the mission (the `LogicalID` property locked to it) and
//! the clan [`super::owners::OWNER_KEY`] names (refused without one:
//! `mission.clan`); scenery takes a named owner's clan word, else −1.
//! Whether the path resolves is checked against the game folder by
//! [`refuse_unresolved`] before anything is written (§9 error 6).

use std::collections::HashSet;
use std::path::Path;

use glam::{DMat4, DQuat, DVec3};
use serde_json::Value;

use super::back::{self, Field, Origin, Shown, Written};
use super::extras::{ASSET_KEY, OBJECT_KEY};
use super::ir::{Mission, PlacedObject, Property};
use super::tma::MARKER;
use super::{owners, MissionError};
use crate::convention::Up;

/// The kind names of §2.4, by kind.
pub const KIND_NAMES: [&str; 4] = ["building", "unit", "vegetation", "rock"];

/// An f32 property word.
fn f(x: f32) -> u32 {
    x.to_bits()
}

fn prop(name: &str, kind: u32, words: [u32; 3]) -> Property {
    Property {
        kind,
        value: words[0],
        minimum: words[1],
        maximum: words[2],
        name: name.as_bytes().to_vec(),
    }
}

/// The minimal property set of a new object of `kind` (mission-notes
/// §8.7, the values every shipped placement of the corpus holds):
/// scenery `Invulnerability` 0 (0..1) and `Life state` 1 (0..1); owned
/// kinds also `LogicalID` (locked; the writer sets it), `ClanID` (0..none;
/// the writer sets it) and `Type` locked to `type_word` (the `.dat` class
/// word, §2.5), and buildings `ChargeRadius` 10000 (locked).
pub fn minimal_properties(kind: u32, type_word: u32) -> Vec<Property> {
    let mut out = vec![
        prop("Invulnerability", 0, [0, 0, f(1.0)]),
        prop("Life state", 0, [f(1.0), 0, f(1.0)]),
    ];
    if kind <= 1 {
        out.push(prop("LogicalID", 1, [0, 0, 0]));
        out.push(prop("ClanID", 1, [0, 0, u32::MAX]));
        out.push(prop("Type", 1, [type_word; 3]));
    }
    if kind == 0 {
        out.push(prop("ChargeRadius", 0, [f(10000.0); 3]));
    }
    out
}

/// Where a template came from ([`template_properties`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplateSource {
    /// An existing placement of the same path (case-insensitive): mission
    /// `mission` (its index in the list given), object `object`.
    SamePath {
        /// Index of the mission in the list.
        mission: usize,
        /// Object index in that mission.
        object: usize,
    },
    /// A placement of another path with the same `Type` property.
    SameType {
        /// Index of the mission in the list.
        mission: usize,
        /// Object index in that mission.
        object: usize,
    },
    /// None found: [`minimal_properties`].
    Minimal,
}

/// The `Type` property of `o`, if any.
pub fn type_of(o: &PlacedObject) -> Option<u32> {
    o.properties
        .iter()
        .find(|p| p.name == b"Type")
        .map(|p| p.value)
}

/// The property list a new object of `kind` and `path` starts with
/// (mission-notes §8.7): copied from the first placement of the same path
/// among `missions` (same kind class: owned or scenery), else of the same
/// `Type` word (owned kinds), else [`minimal_properties`]; with where it
/// came from. Also the start flag of that placement (0 for the minimal
/// set).
pub fn template_properties(
    missions: &[&Mission],
    kind: u32,
    path: &str,
    type_word: u32,
) -> (Vec<Property>, u32, TemplateSource) {
    let owned = kind <= 1;
    let all = || {
        missions.iter().enumerate().flat_map(|(m, x)| {
            x.objects
                .iter()
                .enumerate()
                .map(move |(i, o)| (m, i, o))
                .filter(move |(_, _, o)| o.is_owned() == owned)
        })
    };
    if let Some((m, i, o)) = all().find(|(_, _, o)| o.path_text().eq_ignore_ascii_case(path)) {
        let s = TemplateSource::SamePath {
            mission: m,
            object: i,
        };
        return (o.properties.clone(), o.start_flag, s);
    }
    if owned {
        if let Some((m, i, o)) = all().find(|(_, _, o)| type_of(o) == Some(type_word)) {
            let s = TemplateSource::SameType {
                mission: m,
                object: i,
            };
            return (o.properties.clone(), o.start_flag, s);
        }
    }
    (
        minimal_properties(kind, type_word),
        0,
        TemplateSource::Minimal,
    )
}

/// A new object read from its extras `x` (module docs), not yet placed.
///
/// # Errors
/// `mission.node` naming the JSON pointer of a member missing or of the
/// wrong type (a kind past 3, a path that is not text).
fn asset_from_extras(x: &Field<'_>) -> Result<PlacedObject, MissionError> {
    x.object()?;
    let kind = x.at("kind").u32()?;
    if kind > 3 {
        return Err(x
            .at("kind")
            .wrong("a kind 0..3 (building, unit, vegetation, rock)"));
    }
    let instance_name = if x.at("instance_name").is_null() && x.at("instance_name_b64").is_null() {
        Vec::new()
    } else {
        x.string("instance_name")?
    };
    let start_flag = match x.at("start_flag") {
        s if s.is_null() => 0,
        s => s.u32()?,
    };
    Ok(PlacedObject {
        kind,
        marker: MARKER,
        path: x.string("path")?,
        clan: -1,
        logical_id: -1,
        position: [0.0; 3],
        rotation: [0.0; 3],
        scale: [1.0; 3],
        instance_name,
        start_flag,
        host: -1,
        vertex: -1,
        property_word: 1,
        properties: back::properties_from_extras(&x.at("properties"))?,
    })
}

/// Places `o` by the node's world matrix `world` with the rules of a moved
/// object ([`back::apply_transform`], against a node that showed nothing:
/// every axis is taken from the node).
///
/// The ground rule (mission-notes §5.4) is applied afterwards to every
/// new object by [`super::ground::settle`] (`w.origins`: `new`, no base).
fn place(
    o: &mut PlacedObject,
    world: &DMat4,
    up: Up,
    node: &str,
    warnings: &mut Vec<String>,
) -> Result<(), MissionError> {
    let (s, r, t) = world.to_scale_rotation_translation();
    // A "shown" that differs from the node on every axis: each is written.
    let shown = Shown {
        translation: t + DVec3::ONE,
        rotation: r * DQuat::from_rotation_x(1.0),
        scale: if o.kind >= 2 {
            s + DVec3::ONE
        } else {
            DVec3::ONE
        },
        hosted: false,
    };
    back::apply_transform(o, world, &shown, up, node, warnings)?;
    Ok(())
}

/// Appends the scene's new objects (module docs) to `w.mission.objects`,
/// after the base's objects and the copies, in node order.
///
/// # Errors
/// `mission.node` (extras of the wrong type, naming the pointer; a
/// transform that is not finite); `mission.clan` for a building or unit
/// with no owner (its extras name none: "put it into a clan's
/// collection") or one that is not a clan of the mission.
pub fn add_assets(
    doc: &Value,
    nodes: &[(usize, DMat4)],
    up: Up,
    w: &mut Written,
) -> Result<(), MissionError> {
    let mut next = w
        .mission
        .objects
        .iter()
        .map(|o| o.logical_id)
        .max()
        .unwrap_or(0)
        .max(0);
    for (i, world) in nodes {
        let ex = &doc["nodes"][*i]["extras"];
        if ex.get(ASSET_KEY).is_none() || ex.get(OBJECT_KEY).is_some() {
            continue;
        }
        let name = doc["nodes"][*i]["name"].as_str().unwrap_or("");
        let ptr = format!("/nodes/{i}/extras");
        let x = Field::new(&ex[ASSET_KEY], format!("{ptr}/{ASSET_KEY}"), name);
        let mut o = asset_from_extras(&x)?;
        let owner = owners::owner_of(ex, &ptr, name, (&w.mission.clans[..], &w.renamed[..]))?;
        let what = KIND_NAMES[o.kind as usize];
        let mut said = format!(
            "{name}: a new {what} ({}) from the asset library, added as object {}",
            o.path_text(),
            w.mission.objects.len()
        );
        if o.is_owned() {
            let Some(clan) = owner else {
                return Err(MissionError::new(
                    "mission.clan",
                    Some(format!("node {name}")),
                    format!(
                        "a new {what} ({}) has no owner (no extras.{}): put it into a clan's collection; nothing written",
                        o.path_text(),
                        owners::OWNER_KEY
                    ),
                ));
            };
            owners::set_owner(&mut o, clan);
            next += 1;
            o.logical_id = next;
            for p in o.properties.iter_mut().filter(|p| p.name == b"LogicalID") {
                (p.value, p.minimum, p.maximum) = (next as u32, next as u32, next as u32);
            }
            said += &format!(" with the fresh logical id {next}, owned by clan {clan}");
        } else if let Some(clan) = owner {
            owners::set_owner(&mut o, clan);
        }
        place(&mut o, world, up, name, &mut w.warnings)?;
        w.warnings.push(said);
        w.added += 1;
        w.mission.objects.push(o);
        w.origins.push(Origin {
            node: name.to_string(),
            base: None,
            new: true,
        });
    }
    Ok(())
}

/// The §9 error 6 check of what `w` writes against the game folder
/// `game` ([`super::validate::resolve`]) for the objects whose model the
/// edit chose (new ones, and those whose kind and path no object of
/// `base` has), each named by its node (`w.origins`), its path and its
/// kind.
///
/// # Errors
/// The first `mission.resolve` finding: "node N: its model path P (kind
/// K: building) does not resolve: why; choose ...".
pub fn refuse_unresolved(w: &Written, base: &Mission, game: &Path) -> Result<(), MissionError> {
    let key = |o: &PlacedObject| (o.kind, o.path_text().to_lowercase());
    let known: HashSet<(u32, String)> = base.objects.iter().map(key).collect();
    for e in super::validate::resolve(&w.mission, game) {
        let index = e
            .record
            .as_deref()
            .and_then(|r| r.strip_prefix("object "))
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse::<usize>().ok());
        // The map path and the base's own models are the base's, not an edit.
        let Some(k) = index.filter(|&k| !known.contains(&key(&w.mission.objects[k]))) else {
            continue;
        };
        let o = &w.mission.objects[k];
        let node = w.origins.get(k).map(|o| &o.node).filter(|n| !n.is_empty());
        let what = KIND_NAMES.get(o.kind as usize).copied().unwrap_or("object");
        let choose = if o.is_owned() {
            "a .dat file of the game folder"
        } else {
            "a record of objects.rlb"
        };
        return Err(MissionError::new(
            "mission.resolve",
            Some(match node {
                Some(n) => format!("node {n}"),
                None => format!("object {k}"),
            }),
            format!(
                "its model path {:?} (kind {}: {what}) does not resolve: {}; choose {choose} (the asset library's records, or the object panel's model list); nothing written",
                o.path_text(),
                o.kind,
                e.detail
            ),
        ));
    }
    Ok(())
}
