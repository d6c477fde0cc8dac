//! Ownership of placed objects (mission-notes §6, §8.7): the `clan` word
//! and the `ClanID` property move together, and in Blender an object's
//! owner is the clan collection it sits in. The add-on writes that clan's
//! name as the node extras [`OWNER_KEY`] when it exports; the writer
//! ([`super::back`]) resolves it against the clans it writes (new clans
//! included) with [`owner_of`] and applies it with [`set_owner`].

use serde_json::Value;

use super::ir::{Clan, PlacedObject};
use super::MissionError;

/// Node extras key: the name of the clan that owns the placed object (a
/// string; matched case-insensitively, as relations match clans:
/// mission-notes §2.3).
pub const OWNER_KEY: &str = "parkan_owner";

/// The index of the clan named `name` among `clans` (case-insensitive on
/// the Windows-1251 bytes, as the engine matches relation names), or
/// `None`.
pub fn clan_named(clans: &[Clan], name: &str) -> Option<usize> {
    let (bytes, _, _) = encoding_rs::WINDOWS_1251.encode(name);
    clans
        .iter()
        .position(|c| c.name.eq_ignore_ascii_case(&bytes))
}

/// The clans an owner is resolved against: the clans as written, and the
/// clans renamed as (index, the base's name) ([`super::back::Written`]).
pub type Clans<'a> = (&'a [Clan], &'a [(usize, Vec<u8>)]);

/// The owner a node's extras name (`extras[OWNER_KEY]`), as a clan index
/// into the clans as written (`clans.0`): the clan of that name, else the
/// clan renamed from that name (`clans.1`: its collection in Blender may
/// still carry the old name); `None` when the key is absent.
///
/// `pointer` is the JSON pointer of `extras` (`/nodes/12/extras`), `node`
/// its node's name, for the messages.
///
/// # Errors
/// `mission.node` when the value is not a string (naming its pointer);
/// `mission.clan` when no clan of that name is written, naming the clans
/// there are.
pub fn owner_of(
    extras: &Value,
    pointer: &str,
    node: &str,
    (clans, renamed): Clans<'_>,
) -> Result<Option<usize>, MissionError> {
    let Some(v) = extras.get(OWNER_KEY) else {
        return Ok(None);
    };
    let Some(name) = v.as_str() else {
        return Err(MissionError::new(
            "mission.node",
            Some(format!("node {node}")),
            format!("extras {pointer}/{OWNER_KEY}: {v} is not a clan name (text)"),
        ));
    };
    let (bytes, _, _) = encoding_rs::WINDOWS_1251.encode(name);
    let old = || {
        renamed
            .iter()
            .find(|(_, was)| was.eq_ignore_ascii_case(&bytes))
            .map(|(k, _)| *k)
    };
    clan_named(clans, name).or_else(old).map(Some).ok_or_else(|| {
        let names: Vec<String> = clans
            .iter()
            .map(|c| encoding_rs::WINDOWS_1251.decode(&c.name).0.into_owned())
            .collect();
        MissionError::new(
            "mission.clan",
            Some(format!("node {node}")),
            format!(
                "its owner {name:?} is not a clan of the mission (the clans are {}): move it into one of the clans' collections",
                names.join(", ")
            ),
        )
    })
}

/// Makes clan `clan` the owner of `o`: the `clan` word and every `ClanID`
/// property together (mission-notes §8.7, §9 warning 4). Returns whether
/// anything changed.
pub fn set_owner(o: &mut PlacedObject, clan: usize) -> bool {
    let clan = clan as i32;
    let mut changed = o.clan != clan;
    o.clan = clan;
    for p in o.properties.iter_mut().filter(|p| p.name == b"ClanID") {
        changed |= p.value != clan as u32;
        p.value = clan as u32;
    }
    changed
}

/// The clan's name as text (Windows-1251 decoded), for messages.
pub fn clan_text(clans: &[Clan], k: usize) -> String {
    clans.get(k).map_or_else(
        || format!("clan {k}"),
        |c| encoding_rs::WINDOWS_1251.decode(&c.name).0.into_owned(),
    )
}

/// Applies the owner a placed object's node names (`extras[OWNER_KEY]`,
/// the clan collection it sits in) to `o`, whose base record was owned by
/// `base_clan`: when the named clan differs from `base_clan` the `clan`
/// word and `ClanID` change together ([`set_owner`]) and `notes` gets
/// "`node`: owner Player → Clan I"; when it names `base_clan` the object
/// stayed in its collection and its extras' `clan` (a raw edit) stands.
/// Scenery (kinds 2, 3) has no owner (mission-notes §6): a note says the
/// collection is not written. Returns whether `o` changed.
///
/// # Errors
/// As [`owner_of`].
pub fn apply_owner(
    o: &mut PlacedObject,
    base_clan: i32,
    extras: &Value,
    pointer: &str,
    node: &str,
    all: Clans<'_>,
    notes: &mut Vec<String>,
) -> Result<bool, MissionError> {
    let clans = all.0;
    let Some(c) = owner_of(extras, pointer, node, all)? else {
        return Ok(false);
    };
    if !o.is_owned() {
        notes.push(format!(
            "{node}: in clan {:?}'s collection: not written (trees and rocks have no owner, mission-notes §6)",
            clan_text(clans, c)
        ));
        return Ok(false);
    }
    if c as i64 == i64::from(base_clan) {
        return Ok(false);
    }
    let was = if o.clan >= 0 {
        clan_text(clans, o.clan as usize)
    } else {
        format!("clan {}", o.clan)
    };
    let changed = set_owner(o, c);
    if changed {
        notes.push(format!("{node}: owner {was} → {}", clan_text(clans, c)));
    }
    Ok(changed)
}
