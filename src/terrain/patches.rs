//! Two-material patch borders (terrain-notes §1.7 "Vertices along the
//! border of a two-material patch are stored twice", §5.1 "Border vertices
//! of a patch are duplicated"; corpus convention `vertices`: one copy per
//! (lattice point, face class)).
//!
//! A face with a second material (`tex2 != 0xFF`) blends it in by the
//! Res14 alpha of its vertices, so a vertex it shares with a face of
//! another (tex1, tex2) pair would carry one alpha for two sides: the
//! format stores such a vertex once per side. [`shared_vertices`] finds the
//! vertices that break this (rule `terrain.patch_vertices`, checked by
//! [`super::validate`]); [`split_borders`] gives each pair its own copy
//! with the alpha of terrain-notes §5.1 (0 next to first-material ground,
//! 1 next to second-material ground). Neighbours and edge codes are
//! geometric (terrain-notes §1.9) and positions are copied, so they stay
//! valid; nothing else depends on vertex identity.

use std::collections::{BTreeMap, BTreeSet};

use super::ir::*;
use super::TerrainError;

/// The (tex1, tex2) pair of a face: the class a patch vertex belongs to.
fn pair(f: &Face) -> (u8, u8) {
    (f.tex1, f.tex2)
}

/// Per vertex, the pairs of the faces using it, each with its faces (in
/// Res21 order). Faces with an index past Res3 are skipped (a rule of
/// their own).
fn users(land: &Land) -> Vec<BTreeMap<(u8, u8), Vec<usize>>> {
    let nv = land.positions.len();
    let mut out: Vec<BTreeMap<(u8, u8), Vec<usize>>> = vec![BTreeMap::new(); nv];
    for (i, f) in land.faces.iter().enumerate() {
        for &v in &f.v {
            if let Some(u) = out.get_mut(usize::from(v)) {
                let list = u.entry(pair(f)).or_default();
                if list.last() != Some(&i) {
                    list.push(i);
                }
            }
        }
    }
    out
}

/// One vertex a two-material face shares with a face of another pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedVertex {
    /// Res3 index.
    pub vertex: usize,
    /// A two-material face using it.
    pub patch_face: usize,
    /// A face of another (tex1, tex2) pair using it.
    pub other_face: usize,
}

/// The vertices used by a two-material face and by a face of another
/// (tex1, tex2) pair (both LODs), in Res3 order.
pub fn shared_vertices(land: &Land) -> Vec<SharedVertex> {
    let mut out = Vec::new();
    for (v, u) in users(land).iter().enumerate() {
        if u.len() < 2 {
            continue;
        }
        let Some((_, patch)) = u.iter().find(|(p, _)| p.1 != NO_TEX2) else {
            continue;
        };
        let patch_face = patch[0];
        let pf = pair(&land.faces[patch_face]);
        let other = u.iter().find(|(p, _)| **p != pf).map(|(_, f)| f[0]);
        if let Some(other_face) = other {
            out.push(SharedVertex {
                vertex: v,
                patch_face,
                other_face,
            });
        }
    }
    out
}

/// The `terrain.patch_vertices` findings of `land` (terrain-notes §5.2,
/// an error: the engine reads one alpha per vertex), one per shared
/// vertex, naming the vertex and both faces.
pub fn check(land: &Land) -> Vec<TerrainError> {
    shared_vertices(land)
        .into_iter()
        .map(|s| {
            let (a, b) = (&land.faces[s.patch_face], &land.faces[s.other_face]);
            TerrainError::record(
                "terrain.patch_vertices",
                3,
                s.vertex,
                format!(
                    "shared by two-material face {} (tex {}/{}) and face {} of another pair (tex {}/{}): a patch border vertex is stored once per side (terrain-notes §1.7)",
                    s.patch_face, a.tex1, a.tex2, s.other_face, b.tex1, b.tex2
                ),
            )
        })
        .collect()
}

/// What [`split_borders`] did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct SplitReport {
    /// Base vertices that were shared across a patch border.
    pub split_vertices: usize,
    /// New vertices appended to Res3/4/5/18/14 (one per extra side).
    pub new_vertices: usize,
    /// New copies whose Res14 alpha was set by the border rule (0 next to
    /// first-material ground, 1 next to second-material ground, 1 on a
    /// one-material side).
    pub alpha_set: usize,
}

/// The Res14 alpha of the copy of a border vertex that pair `p` gets,
/// from the faces of the other pairs meeting it (terrain-notes §5.1, corpus
/// `res14`): a one-material side's copy 1.0; a pair copy 0.0 where
/// one-material ground of its first material meets it, 1.0 where its
/// second's does (first wins when both do), else `keep`.
fn border_alpha(p: (u8, u8), others: &[(u8, u8)], keep: f32) -> f32 {
    if p.1 == NO_TEX2 {
        return 1.0;
    }
    let one = |t: u8| others.iter().any(|o| o.1 == NO_TEX2 && o.0 == t);
    if one(p.0) {
        0.0
    } else if one(p.1) {
        1.0
    } else {
        keep
    }
}

/// Splits every vertex shared across a two-material patch border (the
/// [`shared_vertices`]): the pair of the first face not in `moved` (faces
/// whose class changed; all moved: the first face) keeps the vertex, every
/// other pair gets a copy appended to Res3, Res4, Res5, Res18 and Res14
/// (the same position, normal and UVs) and its faces are pointed at it. A
/// copy's Res14 alpha follows the border rule (terrain-notes §5.1: 0 next to first-material ground, 1 next to second-material ground, 1 on a one-material side); the vertex that stays
/// keeps its alpha unless `alpha_kept` (vertices whose alpha the user set)
/// lacks it and its pair is a two-material one, when the rule sets it too.
///
/// # Errors
/// `terrain.vertex_count` when the copies would take Res3 past 65,535
/// vertices (terrain-notes §5.2 rule 2); `land` is unchanged then.
pub fn split_borders(
    land: &mut Land,
    moved: &BTreeSet<usize>,
    alpha_kept: &BTreeSet<usize>,
) -> Result<SplitReport, TerrainError> {
    let shared = shared_vertices(land);
    if shared.is_empty() {
        return Ok(SplitReport::default());
    }
    let users = users(land);
    let extra: usize = shared.iter().map(|s| users[s.vertex].len() - 1).sum();
    let total = land.positions.len() + extra;
    if total > usize::from(u16::MAX) {
        return Err(TerrainError::stream(
            "terrain.vertex_count",
            3,
            format!("splitting {} patch border vertices needs {extra} copies: {total} vertices, over 65,535 (a face's u16 index)", shared.len()),
        ));
    }
    let mut rep = SplitReport {
        split_vertices: shared.len(),
        ..Default::default()
    };
    for s in &shared {
        let v = s.vertex;
        let groups = &users[v];
        let stay = groups
            .iter()
            .flat_map(|(p, fs)| fs.iter().map(move |&f| (f, *p)))
            .filter(|(f, _)| !moved.contains(f))
            .min()
            .or_else(|| groups.iter().map(|(p, fs)| (fs[0], *p)).min())
            .map(|(_, p)| p);
        // A shared vertex has faces of two pairs at least.
        let Some(stay) = stay else { continue };
        let pairs: Vec<(u8, u8)> = groups.keys().copied().collect();
        let keep = land.alpha_of(v);
        for (&p, faces) in groups {
            let others: Vec<(u8, u8)> = pairs.iter().copied().filter(|&o| o != p).collect();
            let a = border_alpha(p, &others, keep);
            if p == stay {
                if p.1 != NO_TEX2 && !alpha_kept.contains(&v) && a != keep {
                    set_alpha(land, v, a);
                    rep.alpha_set += 1;
                }
                continue;
            }
            let n = copy_vertex(land, v);
            if a != keep || p.1 == NO_TEX2 {
                set_alpha(
                    land,
                    n,
                    if alpha_kept.contains(&v) && p.1 != NO_TEX2 {
                        keep
                    } else {
                        a
                    },
                );
                rep.alpha_set += 1;
            }
            for &f in faces {
                for k in &mut land.faces[f].v {
                    if usize::from(*k) == v {
                        *k = n as u16;
                    }
                }
            }
            rep.new_vertices += 1;
        }
    }
    Ok(rep)
}

/// Appends a copy of vertex `v` to every per-vertex stream; returns its index.
fn copy_vertex(land: &mut Land, v: usize) -> usize {
    land.positions.push(land.positions[v]);
    land.normals.push(land.normals[v]);
    land.uv0.push(land.uv0[v]);
    land.uv1.push(land.uv1[v]);
    if let Some(a) = land.alpha.as_mut() {
        a.push(a[v]);
    }
    land.positions.len() - 1
}

fn set_alpha(land: &mut Land, v: usize, a: f32) {
    if let Some(al) = land.alpha.as_mut() {
        al[v] = a;
    }
}
