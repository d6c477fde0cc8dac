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

/// The owner a node's extras name (`extras[OWNER_KEY]`), as a clan index
/// into `clans`; `None` when the key is absent.
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
    clans: &[Clan],
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
    clan_named(clans, name).map(Some).ok_or_else(|| {
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
