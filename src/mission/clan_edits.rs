//! An existing clan's fields edited on its empty (issue 37 item 4;
//! mission-notes §2.3, §8.4, §8.7, §9). The clan empty's
//! `extras.parkan_clan` (with an `index`) carries every field of the clan
//! ([`super::extras::clan`]); each field that differs from the base is
//! written, or is a warning naming the clan, the field and why:
//!
//! - `name`: the clan is renamed, and every clan's relation list names it
//!   so (relations match clans by name, case-insensitively); objects whose
//!   `parkan_owner` names the old name keep their owner
//!   ([`super::owners::owner_of`] falls back on [`Written::renamed`]). An
//!   empty name, one with a NUL byte or over 64 KiB (FP's cap on
//!   `data.tma` strings, §2.7), one that is not Windows-1251 text, or one
//!   another clan has (whatever the case: §9 warning 11) is refused
//!   (`mission.clan`, naming the node and the JSON pointer).
//! - `type` (0..3): written; each relation word towards or from the clan
//!   that was the type default ([`relation_word`]) becomes the new types'
//!   default, words that were not stay (a warning lists the words set).
//! - `relations`: the words are written (0 or 1, as the files write); a
//!   list whose names were changed, added, removed or reordered is not
//!   (every clan lists every clan once, by name: §9 warning 2): a warning.
//! - `minds`, `raw_id`, `ai_script`, `tree`: written.
//! - `base` and `zones` in the extras are not read (the base is the
//!   empty's place, a zone's centre its circle's): an edit there is a
//!   warning saying where to make it.

use serde_json::Value;

use super::back::{Field, Written};
use super::extras::{self, CLAN_KEY};
use super::ir::Clan;
use super::layers::{relation_word, Scene, TYPE_NAMES};
use super::MissionError;

/// Longest clan name written (FP's cap on a `data.tma` string, §2.7).
const NAME_CAP: usize = 64 * 1024;

/// One base clan's fields as its empty's extras give them (a field absent
/// from the extras: the base's).
struct Edit {
    /// The clan's index.
    k: usize,
    /// The empty's node name.
    node: String,
    /// The JSON pointer of its `parkan_clan`.
    ptr: String,
    clan: Clan,
    /// The relation list, when the extras have one.
    relations: Option<Vec<(Vec<u8>, u32)>>,
}

fn text(b: &[u8]) -> String {
    encoding_rs::WINDOWS_1251.decode(b).0.into_owned()
}

fn clan_err(node: &str, detail: String) -> MissionError {
    MissionError::new("mission.clan", Some(format!("node {node:?}")), detail)
}

/// The base clans' fields edited on their empties into `w.mission.clans`
/// (module docs), with a note per change in `w.warnings`, `w.clans` the
/// clans edited and `w.renamed` the old names of the clans renamed. Runs
/// before the new clans and the owners (they see the names as written).
///
/// # Errors
/// `mission.node` naming the node and JSON pointer of a field of the
/// wrong type or range (an index the base does not have, a relation word
/// other than 0 or 1 that is not the base's); `mission.clan` for a name
/// the file cannot hold or another clan has.
pub fn apply(user: &Scene<'_>, w: &mut Written) -> Result<(), MissionError> {
    let base = w.mission.clans.clone();
    scene_copy(user.doc, &base, &mut w.warnings)?;
    let edits = read_edits(user, &base, &mut w.warnings)?;
    check_names(&edits, &base)?;
    let mut clans = base.clone();
    let mut notes: Vec<Vec<String>> = vec![Vec::new(); base.len()];
    for e in &edits {
        scalars(e, &base[e.k], &mut clans[e.k], &mut notes[e.k]);
    }
    let set = relation_words(&edits, &base, &mut clans, &mut notes, &mut w.warnings)?;
    type_defaults(&base, &set, &mut clans, &mut notes);
    renames(&base, &mut clans);
    for e in &edits {
        if notes[e.k].is_empty() {
            continue;
        }
        w.warnings.push(format!(
            "{}: clan {} {}",
            e.node,
            e.k,
            notes[e.k].join("; ")
        ));
        w.clans += 1;
    }
    w.renamed = (0..base.len())
        .filter(|&k| clans[k].name != base[k].name)
        .map(|k| (k, base[k].name.clone()))
        .collect();
    w.mission.clans = clans;
    Ok(())
}

/// A warning per clan of the scene's `extras.parkan_mission.clans` (a
/// copy of the clans for display) that differs from the base: the writer
/// reads a clan's fields from its empty.
///
/// # Errors
/// `gltf.json` naming `/scene` when it is not an index of the scenes.
fn scene_copy(doc: &Value, base: &[Clan], warnings: &mut Vec<String>) -> Result<(), MissionError> {
    let scene = super::back::default_scene(doc)?;
    let at = format!("/scenes/{scene}/extras/{}/clans", extras::MISSION_KEY);
    let list = match doc.pointer(&at) {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Array(list)) => list,
        Some(_) => {
            return Err(MissionError::new(
                "gltf.json",
                Some(at),
                "the scene's copy of the clans is not a list",
            ))
        }
    };
    for (k, v) in list.iter().enumerate() {
        if base
            .get(k)
            .is_some_and(|b| !same_json(v, &extras::clan(k, b)))
        {
            warnings.push(format!(
                "scene extras {at}/{k}: clan {k} ({}) edited there: not written (the scene's copy is for display; edit the clan's empty, its extras.{CLAN_KEY})",
                text(&base[k].name)
            ));
        }
    }
    Ok(())
}

/// The first empty of each base clan, read (later ones are copies:
/// [`super::layers`] warns of them); edits of the unread `base` and
/// `zones` extras are warnings in `warnings`.
fn read_edits(
    user: &Scene<'_>,
    base: &[Clan],
    warnings: &mut Vec<String>,
) -> Result<Vec<Edit>, MissionError> {
    let n = base.len();
    let mut seen = vec![false; n];
    let mut out = Vec::new();
    for (i, _, x) in user.keyed(CLAN_KEY) {
        if !x.has("index") {
            continue;
        }
        let k = x
            .at("index")
            .index(n, &format!("of the base's {n} clans"))?;
        if std::mem::replace(&mut seen[k], true) {
            continue;
        }
        let node = user.name(i).to_string();
        let raw = &user.doc["nodes"][i]["extras"][CLAN_KEY];
        let shown = extras::clan(k, &base[k]);
        for (key, why) in [
            ("base", "the base is where the clan's empty stands: move the empty"),
            ("zones", "a zone's centre is its circle's place (move the circle); its kind and radii are kept"),
        ] {
            if raw.get(key).is_some_and(|v| !same_json(v, &shown[key])) {
                warnings.push(format!(
                    "{node}: clan {k} ({}): extras {}: edited: not written ({why})",
                    text(&base[k].name),
                    x.at(key).pointer()
                ));
            }
        }
        let clan = read_clan(&x, &base[k])?;
        let relations = if x.has("relations") {
            Some(read_relations(&x.at("relations"))?)
        } else {
            None
        };
        out.push(Edit {
            k,
            ptr: x.pointer().to_string(),
            node,
            clan,
            relations,
        });
    }
    Ok(out)
}

/// Whether two JSON values are equal, numbers compared as numbers (an
/// integral float equals its integer: Blender may write either).
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_json(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

/// The clan's scalar fields and strings from its extras (each absent one
/// the base's).
fn read_clan(x: &Field<'_>, b: &Clan) -> Result<Clan, MissionError> {
    let mut c = b.clone();
    if x.has("name") || x.has("name_b64") {
        c.name = x.string("name").map_err(|_| {
            clan_err(
                x.node(),
                format!(
                    "extras {}/name: {} is not a clan name the file can hold (Windows-1251 text, or null with the bytes in name_b64: the game stores names in Windows-1251; use Latin or Cyrillic letters)",
                    x.pointer(),
                    x.at("name").json()
                ),
            )
        })?;
    }
    if x.has("type") {
        c.kind =
            x.at("type")
                .int_in(0, 3, "a clan type (0 nature, 1 player, 2 enemy, 3 neutral)")?
                as u32;
    }
    if x.has("minds") {
        c.minds = x.at("minds").u32()?;
    }
    if x.has("raw_id") {
        c.raw_id = x.at("raw_id").i32()?;
    }
    if x.has("ai_script") || x.has("ai_script_b64") {
        c.ai_script = x.string("ai_script")?;
    }
    if x.has("tree") || x.has("tree_b64") {
        c.tree = x.string("tree")?;
    }
    Ok(c)
}

/// A clan's relation list from its extras: `[{name (or name_b64), word}]`.
fn read_relations(list: &Field<'_>) -> Result<Vec<(Vec<u8>, u32)>, MissionError> {
    list.array(None)?
        .iter()
        .map(|r| {
            r.object()?;
            Ok((r.string("name")?, r.at("word").u32()?))
        })
        .collect()
}

/// Refuses a new name the file cannot hold or that two clans would share
/// (case-insensitively) after every rename.
fn check_names(edits: &[Edit], base: &[Clan]) -> Result<(), MissionError> {
    let mut names: Vec<Vec<u8>> = base.iter().map(|c| c.name.clone()).collect();
    for e in edits {
        names[e.k] = e.clan.name.clone();
    }
    for e in edits.iter().filter(|e| e.clan.name != base[e.k].name) {
        let at = format!("extras {}/name", e.ptr);
        let (new, old) = (text(&e.clan.name), text(&base[e.k].name));
        let bad = if e.clan.name.is_empty() {
            Some("is empty (a clan needs a name)".to_string())
        } else if e.clan.name.contains(&0) {
            Some("holds a NUL byte (readers that stop at NUL would see another name, and relations match by name)".to_string())
        } else if e.clan.name.len() > NAME_CAP {
            Some(format!(
                "is {} bytes long (over 64 KiB, FP's cap on a data.tma string: mission-notes §2.7)",
                e.clan.name.len()
            ))
        } else {
            None
        };
        if let Some(why) = bad {
            return Err(clan_err(
                &e.node,
                format!(
                    "{at}: clan {} ({old}) renamed {new:?}: the name {why}; nothing written",
                    e.k
                ),
            ));
        }
        if let Some(j) =
            (0..names.len()).find(|&j| j != e.k && names[j].eq_ignore_ascii_case(&e.clan.name))
        {
            return Err(clan_err(
                &e.node,
                format!(
                    "{at}: clan {} ({old}) renamed {new:?}: clan {j} is named {:?} (relations match clans by name, case-insensitively: mission-notes §9 warning 11); give it another name",
                    e.k,
                    text(&names[j])
                ),
            ));
        }
    }
    Ok(())
}

/// Type, minds, raw id, script, tree and name of one clan (its relations
/// follow in [`relation_words`], [`type_defaults`], [`renames`]).
fn scalars(e: &Edit, b: &Clan, c: &mut Clan, notes: &mut Vec<String>) {
    let n = &e.clan;
    if n.name != b.name {
        notes.push(format!(
            "renamed {} → {} (every clan's relations name it so; the objects it owns keep their owner)",
            text(&b.name),
            text(&n.name)
        ));
    }
    if n.kind != b.kind {
        let zones = if n.kind != 0 && !n.zones.is_empty() {
            " (its zones are kept: the shipped missions have zones on nature clans only, mission-notes §9 warning 2)"
        } else {
            ""
        };
        notes.push(format!(
            "type {} → {}{zones}; its script and research tree are kept unless edited",
            TYPE_NAMES[b.kind as usize], TYPE_NAMES[n.kind as usize]
        ));
    }
    if n.minds != b.minds {
        notes.push(format!("minds {} → {}", b.minds, n.minds));
    }
    if n.raw_id != b.raw_id {
        notes.push(format!("raw_id {} → {}", b.raw_id, n.raw_id));
    }
    for (what, old, new) in [
        ("ai_script", &b.ai_script, &n.ai_script),
        ("tree", &b.tree, &n.tree),
    ] {
        if old != new {
            notes.push(format!("{what} {:?} → {:?}", text(old), text(new)));
        }
    }
    let relations = std::mem::take(&mut c.relations);
    *c = n.clone();
    c.relations = relations;
}

/// The relation words edited in the extras, written; a list whose names
/// changed is a warning (module docs). Returns the (clan, entry) words the
/// user set, which the type defaults leave alone.
fn relation_words(
    edits: &[Edit],
    base: &[Clan],
    clans: &mut [Clan],
    notes: &mut [Vec<String>],
    warnings: &mut Vec<String>,
) -> Result<std::collections::HashSet<(usize, usize)>, MissionError> {
    let mut set = std::collections::HashSet::new();
    // An entry may name a renamed clan by its old name or its new one.
    let written: Vec<Vec<u8>> = clans.iter().map(|c| c.name.clone()).collect();
    let same = |a: &[u8], b: &[u8]| {
        a.eq_ignore_ascii_case(b)
            || named(base, b).is_some_and(|o| written[o].eq_ignore_ascii_case(a))
    };
    for e in edits {
        let Some(list) = &e.relations else { continue };
        let old = &base[e.k].relations;
        let same_names =
            list.len() == old.len() && list.iter().zip(old).all(|(a, b)| same(&a.0, &b.0));
        if !same_names {
            let names: Vec<String> = list.iter().map(|r| text(&r.0)).collect();
            let was: Vec<String> = old.iter().map(|r| text(&r.0)).collect();
            warnings.push(format!(
                "{}: clan {} ({}): extras {}/relations: its names were changed ({} → {}): not written (every clan lists every clan once, by name: mission-notes §9 warning 2; rename a clan by its name, edit only the words here)",
                e.node,
                e.k,
                text(&base[e.k].name),
                e.ptr,
                was.join(", "),
                names.join(", ")
            ));
            continue;
        }
        for (j, ((_, word), (name, was))) in list.iter().zip(old).enumerate() {
            if word == was {
                continue;
            }
            if *word > 1 {
                return Err(super::back::node_err(
                    &e.node,
                    format!(
                        "extras {}/relations/{j}/word: {word} is not a relation word (0 hostile, 1 allied or neutral, as the files write: mission-notes §2.3)",
                        e.ptr
                    ),
                ));
            }
            clans[e.k].relations[j].1 = *word;
            set.insert((e.k, j));
            notes[e.k].push(format!("relation towards {} {was} → {word}", text(name)));
        }
    }
    Ok(set)
}

/// The base clan a relation entry names (case-insensitively).
fn named(base: &[Clan], name: &[u8]) -> Option<usize> {
    base.iter().position(|c| c.name.eq_ignore_ascii_case(name))
}

/// After type changes: every relation word between a clan whose type
/// changed and another clan that was the old types' default
/// ([`relation_word`]) and that the user did not set becomes the new
/// types' default (towards itself a clan keeps its word).
fn type_defaults(
    base: &[Clan],
    set: &std::collections::HashSet<(usize, usize)>,
    clans: &mut [Clan],
    notes: &mut [Vec<String>],
) {
    let changed: Vec<bool> = (0..base.len())
        .map(|k| clans[k].kind != base[k].kind)
        .collect();
    if !changed.contains(&true) {
        return;
    }
    for k in 0..base.len() {
        for j in 0..base[k].relations.len() {
            let Some(o) = named(base, &base[k].relations[j].0) else {
                continue;
            };
            if o == k || !(changed[k] || changed[o]) || set.contains(&(k, j)) {
                continue;
            }
            let was = base[k].relations[j].1;
            let new = relation_word(clans[k].kind, clans[o].kind);
            if was != relation_word(base[k].kind, base[o].kind) || was == new {
                continue;
            }
            clans[k].relations[j].1 = new;
            let who = if changed[k] { k } else { o };
            notes[who].push(format!(
                "relation {} → {} set to the types' default {was} → {new}",
                text(&base[k].name),
                text(&base[o].name)
            ));
        }
    }
}

/// Every relation entry naming a renamed clan (by its base name,
/// case-insensitively) takes its new name.
fn renames(base: &[Clan], clans: &mut [Clan]) {
    let new: Vec<Vec<u8>> = clans.iter().map(|c| c.name.clone()).collect();
    for c in clans.iter_mut() {
        for r in &mut c.relations {
            if let Some(o) = named(base, &r.0).filter(|&o| new[o] != base[o].name) {
                r.0 = new[o].clone();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clan(name: &str, kind: u32, names: &[&str], words: &[u32]) -> Clan {
        Clan {
            name: name.as_bytes().to_vec(),
            kind,
            relations: names
                .iter()
                .zip(words)
                .map(|(n, w)| (n.as_bytes().to_vec(), *w))
                .collect(),
            ..Default::default()
        }
    }

    /// Player (1), Clan I (2), Natur (0), relations as the shipped rule.
    fn three() -> Vec<Clan> {
        let names = ["Player", "Clan I", "Natur"];
        vec![
            clan("Player", 1, &names, &[1, 0, 1]),
            clan("Clan I", 2, &["PLAYER", "clan i", "Natur"], &[0, 1, 1]),
            clan("Natur", 0, &names, &[1, 1, 1]),
        ]
    }

    #[test]
    fn a_rename_follows_into_every_relation_list_by_old_name() {
        let base = three();
        let mut clans = base.clone();
        clans[1].name = b"Raiders".to_vec();
        clans[0].name = b"Clan I".to_vec(); // a swap-like takeover
        renames(&base, &mut clans);
        let names =
            |c: &Clan| -> Vec<Vec<u8>> { c.relations.iter().map(|r| r.0.clone()).collect() };
        assert_eq!(
            names(&clans[2]),
            [b"Clan I".to_vec(), b"Raiders".to_vec(), b"Natur".to_vec()]
        );
        assert_eq!(
            names(&clans[1]),
            [b"Clan I".to_vec(), b"Raiders".to_vec(), b"Natur".to_vec()]
        );
        let words: Vec<u32> = clans[1].relations.iter().map(|r| r.1).collect();
        assert_eq!(words, [0, 1, 1]);
    }

    #[test]
    fn a_type_change_sets_default_words_but_not_custom_or_user_set_ones() {
        let mut base = three();
        base[2].relations[1].1 = 0; // Natur towards Clan I: not the default
        let mut clans = base.clone();
        clans[1].kind = 3; // Clan I made neutral
        let mut notes = vec![Vec::new(); 3];
        let set: std::collections::HashSet<_> = [(0, 1)].into_iter().collect();
        clans[0].relations[1].1 = 0; // the user kept Player → Clan I at 0
        type_defaults(&base, &set, &mut clans, &mut notes);
        let words = |c: &Clan| -> Vec<u32> { c.relations.iter().map(|r| r.1).collect() };
        assert_eq!(words(&clans[0]), [1, 0, 1], "user-set word kept");
        assert_eq!(words(&clans[1]), [1, 1, 1], "0 towards Player became 1");
        assert_eq!(words(&clans[2]), [1, 0, 1], "a custom word kept");
        assert_eq!(
            notes[1],
            ["relation Clan I → Player set to the types' default 0 → 1"]
        );
    }

    #[test]
    fn numbers_compare_as_numbers() {
        assert!(same_json(
            &serde_json::json!([20, {"a": 1.0}]),
            &serde_json::json!([20.0, {"a": 1}])
        ));
        assert!(!same_json(
            &serde_json::json!([20.5]),
            &serde_json::json!([20])
        ));
    }
}
