//! The mission's own layers written back from their nodes (mission-notes
//! §8.4, §8.7; issue 36 item 6): lodes (their position), clan bases (x and
//! y: `data.tma` stores no height, so a vertical move is a warning), the
//! clans' zones (their centre) and the routes (their points, from the
//! route mesh in the node's world space). Each node is compared with the
//! scene msh2gltf makes of the base (the reference): what did not move
//! keeps its bits.
//!
//! Routes (issue 37 item 4): the route's point list is the mesh's loop in
//! loop order, points moved, added (extruded or inserted vertices) and
//! deleted; a point that did not move keeps its bits (its z too: what a
//! route point's z means is unknown, mission-notes §2.2). A route mesh that
//! is not one closed loop of at least 3 points is refused (`mission.route`).
//!
//! New clans (issue 37 item 4): a clan empty whose `extras.parkan_clan`
//! has no `index` ([`new_clans`]).

use glam::{DMat4, DVec3};
use serde_json::Value;

use super::back::{keep_or, node_err, to_game, Field, Written};
use super::extras;
use super::ir::Clan;
use super::{owners, MissionError};
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
        if !x.has("index") {
            continue; // a new clan: new_clans wrote it
        }
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
    for (k, _) in seen.iter().enumerate().filter(|(k, s)| !**s && *k < n) {
        if shown.world_of(extras::CLAN_KEY, None, k as u64).is_some() {
            w.warnings.push(format!(
                "clan {k} ({}): its empty was deleted: the clan is kept (placed objects name their owner by index and every clan lists it in its relations; a clan cannot be deleted here)",
                owners::clan_text(&w.mission.clans, k)
            ));
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

fn route_err(k: usize, name: &str, detail: impl Into<String>) -> MissionError {
    MissionError::new("mission.route", Some(format!("route {k} ({name})")), detail)
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
        let points = route_points(user, i, mesh, name).map_err(|e| match e {
            RouteMesh::Read(e) => e,
            RouteMesh::NotALoop(d) => route_err(k, name, d),
        })?;
        if points.len() < 3 {
            return Err(route_err(
                k,
                name,
                format!("its loop has {} points: a route is a closed polygon of at least 3 (mission-notes §2.2); add points or undo the deletion", points.len()),
            ));
        }
        let pts: Vec<[f64; 3]> = points
            .iter()
            .map(|p| to_game(user.up, world.transform_point3(*p)))
            .collect();
        let new = route_written(&w.mission.routes[k].points, &pts);
        if new != w.mission.routes[k].points {
            let was = w.mission.routes[k].points.len();
            if new.len() != was {
                w.warnings.push(format!(
                    "{name}: route {k} written with {} points (it had {was})",
                    new.len()
                ));
            }
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
    let points = match route_points(user, i, mesh, name) {
        Ok(p) => p,
        Err(RouteMesh::Read(e)) => return Err(e),
        Err(RouteMesh::NotALoop(d)) => {
            w.warnings
                .push(format!("{name}: a new route: not written ({d})"));
            return Ok(());
        }
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

/// The f32 bits of a point (−0 as 0), to find the points that did not
/// move.
fn point_key(p: [f64; 3]) -> [u32; 3] {
    p.map(|v| ((v as f32) + 0.0).to_bits())
}

/// The point list written for a route that had `old` and whose mesh loop
/// is `pts` (game axes, loop order from wherever Blender starts it): the
/// loop turned and walked so that the points that did not move come in
/// `old`'s order from `old`'s first kept point; a point equal to an old one
/// (as f32) keeps that one's bits; with as many points as before, a moved
/// point keeps the bits of each axis that did not change (`keep_or`).
fn route_written(old: &[[f32; 3]], pts: &[[f64; 3]]) -> Vec<[f32; 3]> {
    use std::collections::HashMap;
    let index: HashMap<[u32; 3], usize> = old
        .iter()
        .enumerate()
        .rev()
        .map(|(k, p)| (point_key(p.map(f64::from)), k))
        .collect();
    let matched: Vec<Option<usize>> = pts
        .iter()
        .map(|p| index.get(&point_key(*p)).copied())
        .collect();
    let order = loop_order(&matched);
    let same_count = old.len() == pts.len();
    order
        .iter()
        .enumerate()
        .map(|(j, &at)| match matched[at] {
            Some(k) => old[k],
            None if same_count => [0, 1, 2].map(|a| keep_or(old[j][a], pts[at][a], 1e-6)),
            None => pts[at].map(|v| v as f32),
        })
        .collect()
}

/// The walk over a loop of `matched.len()` points (each the old index it
/// equals, if any) that starts at the point matching the lowest old index
/// and goes the way the old indices ascend; the loop as is when no point
/// matches. O(n).
fn loop_order(matched: &[Option<usize>]) -> Vec<usize> {
    let n = matched.len();
    let Some(start) = (0..n)
        .filter(|&j| matched[j].is_some())
        .min_by_key(|&j| matched[j])
    else {
        return (0..n).collect();
    };
    let walk = |dir: isize| -> Vec<usize> {
        (0..n)
            .map(|j| (start as isize + dir * j as isize).rem_euclid(n as isize) as usize)
            .collect()
    };
    let ascending = |o: &[usize]| {
        let seq: Vec<usize> = o.iter().filter_map(|&j| matched[j]).collect();
        seq.windows(2).filter(|p| p[1] > p[0]).count()
    };
    let (fwd, back) = (walk(1), walk(-1));
    if ascending(&back) > ascending(&fwd) {
        back
    } else {
        fwd
    }
}

/// Why a route mesh gives no points.
enum RouteMesh {
    /// Its accessors cannot be read (`mission.node`).
    Read(MissionError),
    /// It is not one closed loop of lines (the text says why).
    NotALoop(String),
}

impl From<MissionError> for RouteMesh {
    fn from(e: MissionError) -> Self {
        RouteMesh::Read(e)
    }
}

/// The points of a route mesh in loop order (node space): a `LINE_LOOP`,
/// `LINE_STRIP` or `POINTS` primitive in index (or vertex) order, or a
/// `LINES` primitive (Blender's loose edges) walked edge to edge, which
/// must be one closed loop.
///
/// # Errors
/// [`RouteMesh::Read`] (`mission.node`, naming the node) when the mesh or
/// its accessors cannot be read; [`RouteMesh::NotALoop`] when it is not one
/// primitive of one closed loop of lines.
fn route_points(
    user: &Scene<'_>,
    node: usize,
    mesh: &Value,
    name: &str,
) -> Result<Vec<DVec3>, RouteMesh> {
    let f = Field::new(mesh, format!("/nodes/{node}/mesh"), name);
    let meshes = user.doc["meshes"].as_array().map_or(0, Vec::len);
    let m = f.index(meshes, &format!("of the glTF's {meshes} meshes"))?;
    let prims = user.doc["meshes"][m]["primitives"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    if prims.len() != 1 {
        return Err(RouteMesh::NotALoop(format!(
            "its mesh has {} primitives, not one loop of lines (a face or a second material in the route mesh?): keep the route's edges one closed loop, no faces",
            prims.len()
        )));
    }
    let p = &prims[0];
    let read_err =
        |e: crate::gltf_import::ImportError| node_err(name, format!("route mesh {m}: {e}"));
    let Some(pos) = p["attributes"]["POSITION"].as_u64() else {
        return Err(node_err(
            name,
            format!("/meshes/{m}/primitives/0/attributes/POSITION: not an accessor index"),
        )
        .into());
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
        )
        .into());
    }
    let mode = p["mode"].as_u64().unwrap_or(4);
    let loop_order = match mode {
        0 | 2 | 3 => order,
        1 => walk_lines(&order).map_err(RouteMesh::NotALoop)?,
        _ => {
            return Err(RouteMesh::NotALoop(format!(
                "its mesh is of primitive mode {mode} (faces), not one loop of lines: keep the route's edges one closed loop, no faces"
            )))
        }
    };
    Ok(loop_order.iter().map(|&v| verts[v as usize]).collect())
}

/// The vertices of `LINES` index pairs `order` in walking order, when the
/// edges form one closed loop (every vertex on two edges, one cycle);
/// otherwise the text saying how the loop is broken.
fn walk_lines(order: &[u32]) -> Result<Vec<u32>, String> {
    use std::collections::HashMap;
    let edges: Vec<(u32, u32)> = order.chunks_exact(2).map(|e| (e[0], e[1])).collect();
    if edges.is_empty() {
        return Ok(Vec::new());
    }
    let mut at: HashMap<u32, Vec<usize>> = HashMap::new();
    for (k, (a, b)) in edges.iter().enumerate() {
        at.entry(*a).or_default().push(k);
        at.entry(*b).or_default().push(k);
    }
    let ends = at.values().filter(|v| v.len() == 1).count();
    let forks = at.values().filter(|v| v.len() > 2).count();
    if ends > 0 || forks > 0 || edges.iter().any(|(a, b)| a == b) {
        return Err(format!(
            "its edges are not one closed loop ({} edges; {ends} points on one edge only, {forks} on more than two): the loop is broken; join the ends (select the two points, F) or undo the deletion (delete a route point with Dissolve Vertices, which keeps the loop)",
            edges.len()
        ));
    }
    let start = edges[0].0;
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
    if used.iter().all(|&u| u) {
        Ok(out)
    } else {
        Err("its edges are more than one loop: a route is one closed polygon (mission-notes §2.2); join the loops".to_string())
    }
}

/// The relation word clan type `a` writes towards clan type `b` (another
/// clan), as the shipped data does (measured on the corpus missions: 18
/// words of 6 clans): 1 when either is nature (0) or neutral (3), 0
/// between player (1) and enemy (2) clans. Two player clans or two enemy
/// clans are not in the corpus: 0 (hostile) is written. Towards itself a
/// clan writes 1 (mission-notes §2.3).
pub fn relation_word(a: u32, b: u32) -> u32 {
    u32::from(matches!(a, 0 | 3) || matches!(b, 0 | 3))
}

/// The clan types' names by type word (mission-notes §2.3).
pub(super) const TYPE_NAMES: [&str; 4] = ["nature", "player", "enemy", "neutral"];

/// New clans (issue 37 item 4): each clan empty whose `extras.parkan_clan`
/// has no `index` is appended to the clans, in node order. Its fields:
/// `name` (text, required, unique case-insensitively), `type` (0 nature, 1
/// player, 2 enemy, 3 neutral; required), and optionally `minds` (default
/// 5), `raw_id` (default −1), `ai_script` and `tree` (default: copied from
/// the first clan of the same type, else empty with a warning); the base
/// is the empty's x and y (game axes); no zones. Every clan's relation
/// list gets an entry for it and it lists every clan once
/// ([`relation_word`], 1 towards itself). A `zones` or `relations` list of
/// its own is not written (a warning).
///
/// # Errors
/// `mission.node` naming the node and JSON pointer of a field of the wrong
/// type or range; `mission.clan` for a name already used.
pub fn new_clans(user: &Scene<'_>, w: &mut Written) -> Result<(), MissionError> {
    for (i, world, x) in user.keyed(extras::CLAN_KEY) {
        if x.has("index") {
            continue;
        }
        let name = user.name(i);
        let c = new_clan(&x, name, world, user.up, w)?;
        if let Some(k) = w
            .mission
            .clans
            .iter()
            .position(|o| o.name.eq_ignore_ascii_case(&c.name))
        {
            return Err(MissionError::new(
                "mission.clan",
                Some(format!("node {name:?}")),
                format!(
                    "a new clan named {:?}: clan {k} is named {:?} (relations match clans by name, case-insensitively: mission-notes §9 warning 11); give the new clan another name",
                    encoding_rs::WINDOWS_1251.decode(&c.name).0,
                    owners::clan_text(&w.mission.clans, k)
                ),
            ));
        }
        add_clan(w, c, name);
    }
    Ok(())
}

/// Appends `c` with its relations both ways, and says what was added.
fn add_clan(w: &mut Written, mut c: Clan, node: &str) {
    let k = w.mission.clans.len();
    for o in &mut w.mission.clans {
        o.relations
            .push((c.name.clone(), relation_word(o.kind, c.kind)));
    }
    c.relations = w
        .mission
        .clans
        .iter()
        .map(|o| (o.name.clone(), relation_word(c.kind, o.kind)))
        .collect();
    c.relations.push((c.name.clone(), 1));
    let words: Vec<String> = c
        .relations
        .iter()
        .map(|(n, v)| format!("{} {v}", encoding_rs::WINDOWS_1251.decode(n).0))
        .collect();
    w.warnings.push(format!(
        "{node}: a new clan {:?} added as clan {k} ({}, base {:.3} {:.3}, minds {}, script {:?}, tree {:?}); relations {} (every clan lists it with the same word)",
        encoding_rs::WINDOWS_1251.decode(&c.name).0,
        TYPE_NAMES[c.kind as usize],
        c.base[0],
        c.base[1],
        c.minds,
        encoding_rs::WINDOWS_1251.decode(&c.ai_script).0,
        encoding_rs::WINDOWS_1251.decode(&c.tree).0,
        words.join(", ")
    ));
    w.mission.clans.push(c);
    w.layers += 1;
}

/// One new clan from its extras `x` and its empty's world matrix.
fn new_clan(
    x: &Field<'_>,
    node: &str,
    world: DMat4,
    up: Up,
    w: &mut Written,
) -> Result<Clan, MissionError> {
    let name = x.string("name")?;
    if name.is_empty() {
        return Err(x.at("name").wrong("a clan name (text, not empty)"));
    }
    let kind =
        x.at("type")
            .int_in(0, 3, "a clan type (0 nature, 1 player, 2 enemy, 3 neutral)")? as u32;
    let minds = if x.has("minds") {
        x.at("minds").u32()?
    } else {
        5
    };
    let raw_id = if x.has("raw_id") {
        x.at("raw_id").i32()?
    } else {
        -1
    };
    let like = w.mission.clans.iter().find(|c| c.kind == kind).cloned();
    let mut text = |key: &str| -> Result<Vec<u8>, MissionError> {
        if x.has(key) {
            return x.string(key);
        }
        match &like {
            Some(c) => Ok(if key == "tree" {
                c.tree.clone()
            } else {
                c.ai_script.clone()
            }),
            None => {
                w.warnings.push(format!(
                    "{node}: no {key} given and no {} clan to copy it from: written empty",
                    TYPE_NAMES[kind as usize]
                ));
                Ok(Vec::new())
            }
        }
    };
    let ai_script = text("ai_script")?;
    let tree = text("tree")?;
    for key in ["zones", "relations"] {
        if x.has(key) && !x.at(key).array(None)?.is_empty() {
            w.warnings.push(format!(
                "{node}: the {key} of a new clan are not written (a new clan has no zones; its relations follow the clan types)"
            ));
        }
    }
    let t = to_game(up, world.w_axis.truncate());
    Ok(Clan {
        name,
        raw_id,
        base: [t[0] as f32, t[1] as f32],
        kind,
        ai_script,
        zones: Vec::new(),
        tree,
        minds,
        relations: Vec::new(),
    })
}
