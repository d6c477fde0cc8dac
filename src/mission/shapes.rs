//! What a mission scene shows that `data.tma` cannot hold (issue 36 item
//! 6; mission-notes §8.7: the file says where whole objects stand, by
//! name): the terrain moved, turned, scaled or reshaped, a piece moved
//! inside a placed model, a piece deleted or added there, a model's mesh
//! reshaped. Each is compared with the scene msh2gltf makes of the base
//! and, when it differs, is a warning naming it, saying that it is not
//! written, why, and where to edit it instead.
//!
//! Pieces are matched by name within their placed object (Blender's
//! `.001` suffix dropped), in order; a mesh is reshaped when it has a
//! vertex position the base's mesh has not (so a re-export that splits,
//! reorders or drops vertices is not an edit), each mesh once.

use std::collections::HashMap;

use glam::DMat4;

use super::back::Written;
use super::extras;
use super::layers::Scene;
use super::MissionError;
use crate::gltf_import::matching::local_matrix;

/// Where a placed model's pieces are edited instead.
const MODEL_FIX: &str = "data.tma places whole models by name; move the placed object itself, or edit the model (msh2gltf of its .dat or archive entry, gltf2msh --base)";
/// Where the terrain is edited instead.
const MAP_FIX: &str = "data.tma names its map by path only; edit the map itself: msh2gltf MAPS/<map>/Land.msh, then gltf2msh --base Land.msh";

/// The warnings of module docs into `w`.
///
/// # Errors
/// `mission.node` when a mesh's positions cannot be read.
pub fn compare(user: &Scene<'_>, shown: &Scene<'_>, w: &mut Written) -> Result<(), MissionError> {
    let mut meshes = Meshes::default();
    let terrain = |s: &Scene<'_>| {
        s.nodes
            .iter()
            .find(|(i, _)| {
                s.doc["nodes"][*i]["extras"]
                    .get(extras::TERRAIN_KEY)
                    .is_some()
            })
            .copied()
    };
    match (terrain(user), terrain(shown)) {
        (Some((u, uw)), Some((r, rw))) => {
            if differs(&uw, &rw) {
                w.warnings.push(format!(
                    "{}: the terrain was moved, turned or scaled: not written ({MAP_FIX})",
                    user.name(u)
                ));
            }
            let owner = format!("the terrain {}", user.name(u));
            pieces(user, u, shown, r, &owner, MAP_FIX, &mut meshes, w)?;
        }
        (None, Some(_)) => w.warnings.push(format!(
            "the terrain node was deleted: not written ({MAP_FIX})"
        )),
        _ => {}
    }
    for (u, _, x) in user.keyed(extras::OBJECT_KEY) {
        let Some(index) = x.v_index() else { continue };
        let r = shown.nodes.iter().find(|(i, _)| {
            shown.doc["nodes"][*i]["extras"][extras::OBJECT_KEY]["index"].as_u64() == Some(index)
        });
        if let Some((r, _)) = r {
            let owner = format!("placed object {}", user.name(u));
            pieces(user, u, shown, *r, &owner, MODEL_FIX, &mut meshes, w)?;
        }
    }
    Ok(())
}

/// True when two matrices differ past the write-back's tolerances
/// (1e-3 in translation, 1e-5 in rotation and scale).
fn differs(a: &DMat4, b: &DMat4) -> bool {
    let (s, r, t) = a.to_scale_rotation_translation();
    let (s0, r0, t0) = b.to_scale_rotation_translation();
    (t - t0).abs().max_element() > 1e-3
        || r.angle_between(r0) > 1e-5
        || (s - s0).abs().max_element() > 1e-5
}

/// A node's name without its numeric suffixes: the exporter's `.1` of a
/// repeated name and Blender's `.001` (each a dot and digits), which a
/// re-import renumbers.
fn stem(name: &str) -> &str {
    let mut s = name;
    while let Some((a, d)) = s.rsplit_once('.') {
        if d.is_empty() || !d.bytes().all(|b| b.is_ascii_digit()) {
            break;
        }
        s = a;
    }
    s
}

/// The nodes below `root` (not `root`), in pre-order.
///
/// # Errors
/// `gltf.json` naming a child that is not a node index
/// ([`super::back::node_children`]).
fn below(s: &Scene<'_>, root: usize) -> Result<Vec<usize>, MissionError> {
    let nodes = s.doc["nodes"].as_array().map_or(&[][..], Vec::as_slice);
    let kids = |i: usize| super::back::node_children(nodes, i);
    let mut out = Vec::new();
    let mut seen = vec![false; nodes.len()];
    let mut stack: Vec<usize> = kids(root)?.into_iter().rev().collect();
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        out.push(i);
        stack.extend(kids(i)?.into_iter().rev());
    }
    Ok(out)
}

/// The sorted, distinct vertex positions of each mesh, read once.
#[derive(Default)]
struct Meshes {
    user: HashMap<usize, Vec<[u32; 3]>>,
    shown: HashMap<usize, Vec<[u32; 3]>>,
    warned: std::collections::HashSet<usize>,
}

fn positions(s: &Scene<'_>, m: usize) -> Result<Vec<[u32; 3]>, MissionError> {
    let mut out = Vec::new();
    for (a, at) in super::back::mesh_positions(s.doc, m)? {
        let Some(a) = a else { continue };
        let xyz = s.file.floats(a, 3, "positions").map_err(|e| {
            MissionError::new(
                "mission.node",
                Some(format!("mesh {m}")),
                format!("{at}: {e}"),
            )
        })?;
        // +0.0: a sign flip of zero (an axis conversion) is no edit.
        out.extend(
            xyz.chunks_exact(3)
                .map(|c| [0, 1, 2].map(|a| (c[a] + 0.0).to_bits())),
        );
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Compares the pieces below `u` (user) with those below `r` (shown).
#[allow(clippy::too_many_arguments)]
fn pieces(
    user: &Scene<'_>,
    u: usize,
    shown: &Scene<'_>,
    r: usize,
    owner: &str,
    fix: &str,
    meshes: &mut Meshes,
    w: &mut Written,
) -> Result<(), MissionError> {
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
    for i in below(user, u)?.into_iter().rev() {
        by_name.entry(stem(user.name(i))).or_default().push(i);
    }
    for ri in below(shown, r)? {
        let rn = &shown.doc["nodes"][ri];
        // Of the pieces of one name (renumbered by a re-import), the first
        // standing where this one stood, else the first.
        let pick = by_name.get_mut(stem(shown.name(ri))).and_then(|c| {
            let at = c
                .iter()
                .rposition(|&ui| !differs(&local_matrix(&user.doc["nodes"][ui]), &local_matrix(rn)))
                .unwrap_or(c.len().checked_sub(1)?);
            Some(c.remove(at))
        });
        let Some(ui) = pick else {
            w.warnings.push(format!(
                "{}: deleted from {owner}: not written ({fix})",
                shown.name(ri)
            ));
            continue;
        };
        let un = &user.doc["nodes"][ui];
        if differs(&local_matrix(un), &local_matrix(rn)) {
            w.warnings.push(format!(
                "{}: moved, turned or scaled inside {owner}: not written ({fix})",
                user.name(ui)
            ));
        }
        match (
            super::back::node_mesh(user.doc, ui)?,
            super::back::node_mesh(shown.doc, ri)?,
        ) {
            (Some(um), Some(rm)) => {
                if meshes.warned.contains(&um) {
                    continue;
                }
                if let std::collections::hash_map::Entry::Vacant(e) = meshes.user.entry(um) {
                    e.insert(positions(user, um)?);
                }
                if let std::collections::hash_map::Entry::Vacant(e) = meshes.shown.entry(rm) {
                    e.insert(positions(shown, rm)?);
                }
                let was = &meshes.shown[&rm];
                // A vertex the base's mesh does not have (a re-export may
                // drop unused or degenerate ones: no edit).
                let new = meshes.user[&um]
                    .iter()
                    .any(|p| was.binary_search(p).is_err());
                if new {
                    meshes.warned.insert(um);
                    let mesh = user.doc["meshes"][um]["name"].as_str().unwrap_or("");
                    w.warnings.push(format!(
                        "mesh {mesh} ({}, in {owner}): its shape was edited (reshaped): not written ({fix})",
                        user.name(ui)
                    ));
                }
            }
            (None, Some(_)) => w.warnings.push(format!(
                "{}: its mesh was removed inside {owner}: not written ({fix})",
                user.name(ui)
            )),
            (Some(_), None) => w.warnings.push(format!(
                "{}: given a mesh inside {owner}: not written ({fix})",
                user.name(ui)
            )),
            (None, None) => {}
        }
    }
    let mut added: Vec<&str> = by_name.values().flatten().map(|&i| user.name(i)).collect();
    added.sort_unstable();
    for name in added {
        w.warnings
            .push(format!("{name}: added inside {owner}: not written ({fix})"));
    }
    Ok(())
}
