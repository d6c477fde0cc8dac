//! The mission's own layers written back from their nodes (mission-notes
//! §8.4, §8.7; issue 36 item 6): lodes (their position), clan bases (x and
//! y: `data.tma` stores no height, so a vertical move is a warning), the
//! clans' zones (their centre) and the routes (their points, from the
//! route mesh in the node's world space). Each node is compared with the
//! scene msh2gltf makes of the base (the reference): what did not move
//! keeps its bits.

use glam::{DMat4, DVec3};
use serde_json::Value;

use super::back::{keep_or, node_err, to_game, Field, Written};
use super::extras;
use super::MissionError;
use crate::convention::Up;
use crate::gltf_import::GltfFile;

/// A scene to read: its JSON, the file (accessors), the reachable nodes
/// with their world matrices, and its up axis.
pub struct Scene<'a> {
    /// The document.
    pub doc: &'a Value,
    /// The file (for accessors).
    pub file: &'a GltfFile,
    /// Reachable nodes, world matrices.
    pub nodes: &'a [(usize, DMat4)],
    /// The up axis of the export.
    pub up: Up,
}

impl<'a> Scene<'a> {
    /// Node `i`'s name.
    pub fn name(&self, i: usize) -> &'a str {
        self.doc["nodes"][i]["name"].as_str().unwrap_or("")
    }

    /// The reachable nodes whose extras hold `key`, with their world
    /// matrices and their extras as a [`Field`].
    pub fn keyed(&self, key: &str) -> Vec<(usize, DMat4, Field<'a>)> {
        self.nodes
            .iter()
            .filter_map(|(i, w)| {
                let v = self.doc["nodes"][*i]["extras"].get(key)?;
                Some((
                    *i,
                    *w,
                    Field::new(v, format!("/nodes/{i}/extras/{key}"), self.name(*i)),
                ))
            })
            .collect()
    }

    /// The world matrix of the node whose `key` extras have `index`
    /// (`clan` too, for zones), read leniently (the reference is ours).
    fn world_of(&self, key: &str, clan: Option<u64>, index: u64) -> Option<DMat4> {
        self.nodes.iter().find_map(|(i, w)| {
            let x = &self.doc["nodes"][*i]["extras"][key];
            (x["index"].as_u64() == Some(index)
                && clan.is_none_or(|c| x["clan"].as_u64() == Some(c)))
            .then_some(*w)
        })
    }
}

/// Lodes, clan bases, zones and routes of `user` into `w` (module docs).
///
/// # Errors
/// `mission.node` naming the node and pointer of an index or a route mesh
/// that cannot be read.
pub fn apply(user: &Scene<'_>, shown: &Scene<'_>, w: &mut Written) -> Result<(), MissionError> {
    lodes(user, w)?;
    clans(user, shown, w)?;
    zones(user, shown, w)?;
    routes(user, w)
}

fn copy_warning(w: &mut Written, name: &str, what: &str) {
    w.warnings.push(format!(
        "{name}: a second node of {what}: not written (data.tma holds each once; the first node's place is written)"
    ));
}

fn lodes(user: &Scene<'_>, w: &mut Written) -> Result<(), MissionError> {
    let n = w.mission.lodes.len();
    let mut seen = vec![false; n];
    for (i, world, x) in user.keyed(extras::LODE_KEY) {
        let k = x
            .at("index")
            .index(n, &format!("of the base's {n} lodes"))?;
        if std::mem::replace(&mut seen[k], true) {
            copy_warning(w, user.name(i), &format!("lode {k}"));
            continue;
        }
        let t = to_game(user.up, world.w_axis.truncate());
        let l = &mut w.mission.lodes[k];
        let new = [0, 1, 2].map(|a| keep_or(l.position[a], t[a], 1e-6));
        if new != l.position {
            l.position = new;
            w.layers += 1;
        }
    }
    Ok(())
}

fn clans(user: &Scene<'_>, shown: &Scene<'_>, w: &mut Written) -> Result<(), MissionError> {
    let n = w.mission.clans.len();
    let mut seen = vec![false; n];
    for (i, world, x) in user.keyed(extras::CLAN_KEY) {
        let k = x
            .at("index")
            .index(n, &format!("of the base's {n} clans"))?;
        let name = user.name(i);
        if std::mem::replace(&mut seen[k], true) {
            copy_warning(w, name, &format!("clan {k}"));
            continue;
        }
        let t = to_game(user.up, world.w_axis.truncate());
        let c = &mut w.mission.clans[k];
        let new = [0, 1].map(|a| keep_or(c.base[a], t[a], 1e-6));
        if new != c.base {
            c.base = new;
            w.layers += 1;
        }
        if let Some(was) = shown.world_of(extras::CLAN_KEY, None, k as u64) {
            let h = to_game(user.up, was.w_axis.truncate())[2];
            if (t[2] - h).abs() > 1e-3 {
                w.warnings.push(format!(
                    "{name}: moved vertically by {:.3}: not written (data.tma stores a clan base as x and y only; the empty stands on the ground); move it across the map instead",
                    t[2] - h
                ));
            }
        }
    }
    Ok(())
}

fn zones(user: &Scene<'_>, shown: &Scene<'_>, w: &mut Written) -> Result<(), MissionError> {
    let mut seen = std::collections::HashSet::new();
    for (i, world, x) in user.keyed(extras::ZONE_KEY) {
        let n = w.mission.clans.len();
        let c = x.at("clan").index(n, &format!("of the base's {n} clans"))?;
        let nz = w.mission.clans[c].zones.len();
        let k = x
            .at("index")
            .index(nz, &format!("of clan {c}'s {nz} zones"))?;
        let name = user.name(i);
        if !seen.insert((c, k)) {
            copy_warning(w, name, &format!("clan {c} zone {k}"));
            continue;
        }
        let Some(was) = shown.world_of(extras::ZONE_KEY, Some(c as u64), k as u64) else {
            continue;
        };
        let (s, r, t) = world.to_scale_rotation_translation();
        let (s0, r0, t0) = was.to_scale_rotation_translation();
        if (s - s0).abs().max_element() > 1e-5 || r.angle_between(r0) > 1e-5 {
            w.warnings.push(format!(
                "{name}: turned or scaled: not written (a zone is a centre with an inner and an outer radius; only its move is written)"
            ));
        }
        if (t - t0).abs().max_element() <= 1e-3 {
            continue;
        }
        let g = to_game(user.up, t);
        let z = &mut w.mission.clans[c].zones[k];
        let new = [0, 1, 2].map(|a| keep_or(z.centre[a], g[a], 1e-6));
        if new != z.centre {
            z.centre = new;
            w.layers += 1;
        }
    }
    Ok(())
}

fn routes(user: &Scene<'_>, w: &mut Written) -> Result<(), MissionError> {
    let n = w.mission.routes.len();
    let mut seen = vec![false; n];
    let mut added = Vec::new();
    for (i, world, x) in user.keyed(extras::ROUTE_KEY) {
        if user.doc["nodes"][i]["extras"][extras::ROUTE_KEY]
            .get("index")
            .is_none()
        {
            added.push((i, world));
            continue;
        }
        let k = x
            .at("index")
            .index(n, &format!("of the base's {n} routes"))?;
        let name = user.name(i);
        if std::mem::replace(&mut seen[k], true) {
            copy_warning(w, name, &format!("route {k}"));
            continue;
        }
        let node = &user.doc["nodes"][i];
        let Some(mesh) = node.get("mesh") else {
            if !w.mission.routes[k].points.is_empty() {
                w.warnings.push(format!(
                    "{name}: the route has no mesh: its points are kept (delete a route's points in its mesh, not the mesh)"
                ));
            }
            continue;
        };
        let Some(points) = route_points(user, i, mesh, name, &mut w.warnings)? else {
            continue;
        };
        let pts: Vec<[f64; 3]> = points
            .iter()
            .map(|p| to_game(user.up, world.transform_point3(*p)))
            .collect();
        let old = &w.mission.routes[k].points;
        let pts = align(old, &pts);
        let new: Vec<[f32; 3]> = pts
            .iter()
            .enumerate()
            .map(|(j, p)| match old.get(j) {
                Some(o) => [0, 1, 2].map(|a| keep_or(o[a], p[a], 1e-6)),
                None => p.map(|v| v as f32),
            })
            .collect();
        if new != *old {
            w.mission.routes[k].points = new;
            w.layers += 1;
        }
    }
    for (i, world) in added {
        new_route(user, i, world, w)?;
    }
    Ok(())
}

/// A route drawn in the scene (issue 38 item 2): a node whose
/// `extras.parkan_route` has no `index`, its mesh one loop of lines of at
/// least 3 points, appended with the next id (ids run 0..n−1 in file
/// order, mission-notes §9 warning 1); otherwise a warning that it is not
/// written, saying why.
fn new_route(
    user: &Scene<'_>,
    i: usize,
    world: DMat4,
    w: &mut Written,
) -> Result<(), MissionError> {
    let name = user.name(i);
    let Some(mesh) = user.doc["nodes"][i].get("mesh") else {
        w.warnings.push(format!(
            "{name}: a new route without a mesh: not written (draw the route as a loop of at least 3 edges)"
        ));
        return Ok(());
    };
    let Some(points) = route_points(user, i, mesh, name, &mut w.warnings)? else {
        return Ok(());
    };
    if points.len() < 3 {
        w.warnings.push(format!(
            "{name}: a new route of {} points: not written (a route is a closed polygon on the ground, at least 3 points)",
            points.len()
        ));
        return Ok(());
    }
    let pts: Vec<[f32; 3]> = points
        .iter()
        .map(|p| to_game(user.up, world.transform_point3(*p)).map(|v| v as f32))
        .collect();
    if pts.iter().flatten().any(|v| !v.is_finite()) {
        return Err(node_err(name, "a new route's point is not finite"));
    }
    let k = w.mission.routes.len();
    // The next id, past any the base uses (0..n−1 on shipped missions).
    let id = w
        .mission
        .routes
        .iter()
        .map(|r| r.id.saturating_add(1))
        .max()
        .unwrap_or(0)
        .max(k as u32);
    w.warnings.push(format!(
        "{name}: a new route, added as route {k} with id {id} and {} points",
        pts.len()
    ));
    w.mission.routes.push(super::ir::Route { id, points: pts });
    w.layers += 1;
    Ok(())
}

/// `pts` turned and reversed to start where `old` starts, when it is the
/// same closed loop walked from another point (Blender's loose edges may
/// start anywhere): so an unedited loop keeps its points' order.
fn align(old: &[[f32; 3]], pts: &[[f64; 3]]) -> Vec<[f64; 3]> {
    let n = pts.len();
    if n < 2 || old.len() != n {
        return pts.to_vec();
    }
    let near = |a: &[f32; 3], b: &[f64; 3]| {
        (0..3).all(|k| (f64::from(a[k]) - b[k]).abs() <= 1e-4 * f64::from(a[k]).abs().max(1.0))
    };
    for start in 0..n {
        for dir in [1isize, -1] {
            let at = |j: usize| {
                let k = (start as isize + dir * j as isize).rem_euclid(n as isize) as usize;
                pts[k]
            };
            if (0..n).all(|j| near(&old[j], &at(j))) {
                return (0..n).map(at).collect();
            }
        }
    }
    pts.to_vec()
}

/// The points of a route mesh in loop order (node space): a `LINE_LOOP`,
/// `LINE_STRIP` or `POINTS` primitive in index (or vertex) order, or a
/// `LINES` primitive (Blender's loose edges) walked edge to edge. `None`
/// with a warning when the mesh is not one loop of lines.
///
/// # Errors
/// `mission.node` naming the node when the mesh or its accessors cannot be
/// read.
fn route_points(
    user: &Scene<'_>,
    node: usize,
    mesh: &Value,
    name: &str,
    warnings: &mut Vec<String>,
) -> Result<Option<Vec<DVec3>>, MissionError> {
    let f = Field::new(mesh, format!("/nodes/{node}/mesh"), name);
    let meshes = user.doc["meshes"].as_array().map_or(0, Vec::len);
    let m = f.index(meshes, &format!("of the glTF's {meshes} meshes"))?;
    let prims = user.doc["meshes"][m]["primitives"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    if prims.len() != 1 {
        warnings.push(format!(
            "{name}: the route mesh has {} primitives, not one loop of lines: its points are not written",
            prims.len()
        ));
        return Ok(None);
    }
    let p = &prims[0];
    let read_err =
        |e: crate::gltf_import::ImportError| node_err(name, format!("route mesh {m}: {e}"));
    let Some(pos) = p["attributes"]["POSITION"].as_u64() else {
        return Err(node_err(
            name,
            format!("/meshes/{m}/primitives/0/attributes/POSITION: not an accessor index"),
        ));
    };
    let xyz = user
        .file
        .floats(pos as usize, 3, "route points")
        .map_err(read_err)?;
    let verts: Vec<DVec3> = xyz
        .chunks_exact(3)
        .map(|c| DVec3::new(c[0].into(), c[1].into(), c[2].into()))
        .collect();
    let order: Vec<u32> = match p["indices"].as_u64() {
        Some(a) => user.file.indices(a as usize).map_err(read_err)?,
        None => (0..verts.len() as u32).collect(),
    };
    if order.iter().any(|&v| v as usize >= verts.len()) {
        return Err(node_err(
            name,
            format!("route mesh {m}: an index past its {} points", verts.len()),
        ));
    }
    let mode = p["mode"].as_u64().unwrap_or(4);
    let loop_order = match mode {
        0 | 2 | 3 => Some(order),
        1 => walk_lines(&order),
        _ => None,
    };
    let Some(loop_order) = loop_order else {
        warnings.push(format!(
            "{name}: the route mesh (mode {mode}) is not one loop of lines: its points are not written (edit the points, keep the edges one loop)"
        ));
        return Ok(None);
    };
    Ok(Some(
        loop_order.iter().map(|&v| verts[v as usize]).collect(),
    ))
}

/// The vertices of `LINES` index pairs `order` in walking order, when the
/// edges form one loop or one open path (each edge used once); `None`
/// otherwise.
fn walk_lines(order: &[u32]) -> Option<Vec<u32>> {
    use std::collections::HashMap;
    let edges: Vec<(u32, u32)> = order.chunks_exact(2).map(|e| (e[0], e[1])).collect();
    if edges.is_empty() {
        return Some(Vec::new());
    }
    let mut at: HashMap<u32, Vec<usize>> = HashMap::new();
    for (k, (a, b)) in edges.iter().enumerate() {
        at.entry(*a).or_default().push(k);
        at.entry(*b).or_default().push(k);
    }
    if at.values().any(|v| v.len() > 2) {
        return None;
    }
    // An open path starts at an end; a loop at the first edge's start.
    let start = at
        .iter()
        .filter(|(_, v)| v.len() == 1)
        .map(|(k, _)| *k)
        .min()
        .unwrap_or(edges[0].0);
    let mut used = vec![false; edges.len()];
    let (mut out, mut v) = (vec![start], start);
    while let Some(&e) = at[&v].iter().find(|&&e| !used[e]) {
        used[e] = true;
        v = if edges[e].0 == v {
            edges[e].1
        } else {
            edges[e].0
        };
        if v == start {
            break;
        }
        out.push(v);
    }
    used.iter().all(|&u| u).then_some(out)
}
