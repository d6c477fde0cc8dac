//! Strict validation of a model IR (msh-core §7, msh-animation §9) and the
//! tolerant repairs (msh-core §7.3).
//!
//! Both share one list of checks, run in a fixed order; the first broken
//! rule decides the error of [`validate`]. Rule ids (the corpus manifest's
//! `check` vocabulary):
//!
//! | rule | what | tolerant repair |
//! |---|---|---|
//! | `msh.missing_stream` | no entry for Res1, 2, 3, 6 or 13 | error |
//! | `msh.duplicate_stream` | two entries of one decoded type | error |
//! | `msh.ir_entry` | entries and typed fields disagree (an optional stream without its entry or the reverse, `raw` on a decoded type) | error |
//! | `msh.vertex_stream_count` | Res4/5/15/16/18 count != Res3 count | stream dropped (entry removed) |
//! | `msh.res10` | name count != node count | error |
//! | `msh.index_count` | `indexCount % 3 != 0` | trailing indices dropped from the batch |
//! | `msh.index_range` | `indexStart + indexCount > Res6 count`, or `baseVertex + index >= vertex count` | error |
//! | `msh.batch_range` | `batchStart + batchCount > Res13 count` | error |
//! | `msh.tri_range` | `triStart + triCount > Res7 count` (0 without Res7) | slot range clamped to Res7 |
//! | `msh.slot_index` | a Res1 cell is neither NONE nor `< slot count` | cell set to NONE |
//! | `msh.res7_link` | a Res7 link is neither NONE nor `< Res7 count` | link set to NONE |
//! | `msh.float.non_finite` | NaN/Inf in Res3, Res2 header, slot bounds, key positions | Res3 vertex set to (0,0,0); others error |
//! | `msh.bounds` | slot `aabbMin > aabbMax`, negative sphere/capsule radius | error |
//! | `msh.hierarchy.parent_range` | parent neither NONE nor an existing node | node becomes a root |
//! | `msh.hierarchy.cycle` | a node is its own ancestor | the cycle's lowest node becomes a root |
//! | `msh.anim.fallback_key` | fallback `>= key count`, fallbacks not strictly increasing, a mapped node with a 1-key track | Res8 rebuilt: the broken node gets one identity key (see [`repair`]) |
//! | `msh.anim.frame_count` | `frame_count == 0`, or a node has a map and `frame_count > Res19 word count` | frame count = largest value all maps fit (1 if none) |
//! | `msh.anim.map_range` | `mapStart + frame_count > Res19 word count` (u64 math) | map dropped (`mapStart = NONE`, fallback pose) |
//! | `msh.anim.key_time` | non-finite key time; times not strictly increasing within a track | error |
//! | `msh.anim.map_value` | a map word `< fallback` with `word + 1 >= key count` | word set to the fallback |
//!
//! Node-based checks (slot cells, hierarchy, animation tracks and maps) are
//! skipped for the legacy 24-byte node table (format-notes §2).

use super::error::MshError;
use super::ir::*;
use super::read::{DECODED_TYPES, REQUIRED_TYPES};

/// Checks every strict rule on `model` (msh-core §7, msh-animation §9).
///
/// Returns the warnings (canonical-form findings that do not break a rule;
/// currently none are produced at the IR level) or the first broken rule.
///
/// # Errors
/// [`MshError`] with one of the rule ids listed in the module docs.
pub fn validate(model: &Model) -> Result<Vec<MshError>, MshError> {
    validate_known(model, Known::default())
}

/// [`validate`] with the facts the decoder established (`known`): the same
/// rules in the same order, the same first error; passes whose fact is
/// known are skipped.
pub(crate) fn validate_known(model: &Model, known: Known) -> Result<Vec<MshError>, MshError> {
    let cx = Cx { all: false, known };
    for check in CHECKS {
        let mut found = Vec::new();
        check(model, &cx, &mut found);
        if let Some(f) = found.into_iter().next() {
            return Err(f.err);
        }
    }
    Ok(Vec::new())
}

/// Tolerant repair (msh-core §7.3): runs the checks in order and repairs
/// what is locally repairable (see the module table), pushing one warning
/// per repair (at most [`MAX_WARNINGS_PER_RULE`] per check, then a summary).
/// After a successful repair the model passes [`validate`].
///
/// The identity pose of a node whose fallback key is unusable is one new
/// Res8 key with position 0, time 0 and an all-zero quaternion, which
/// format-notes §3 says to read as identity (independent of the quaternion
/// layout convention). The key pool is rebuilt in node order; the other
/// nodes keep their tracks and maps (map words re-pointed to the new key
/// indices). A node right after a broken one keeps the longest run of
/// strictly increasing times ending at its fallback key.
///
/// # Errors
/// The first finding that has no local repair.
pub fn repair(model: &mut Model, warnings: &mut Vec<MshError>) -> Result<(), MshError> {
    for check in CHECKS {
        let mut found = Vec::new();
        check(
            model,
            &Cx {
                all: true,
                known: Known::default(),
            },
            &mut found,
        );
        let total = found.len();
        let mut rebuilt = false;
        for (n, f) in found.into_iter().enumerate() {
            let Some(fix) = f.fix else { return Err(f.err) };
            if fix == Fix::RebuildAnim {
                if !rebuilt {
                    rebuild_anim(model)?;
                    rebuilt = true;
                }
            } else {
                apply(model, fix);
            }
            if n < MAX_WARNINGS_PER_RULE {
                warnings.push(f.err);
            } else if n == MAX_WARNINGS_PER_RULE {
                warnings.push(MshError::new(
                    f.err.rule,
                    format!(
                        "{} more findings of this rule repaired",
                        total - MAX_WARNINGS_PER_RULE
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Repairs listed one by one per check before a summary warning.
pub const MAX_WARNINGS_PER_RULE: usize = 32;

/// A local repair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fix {
    DropStream(u32),
    TruncBatch(usize),
    ClampTri(usize),
    DropCell(usize, usize),
    LinkNone(usize, usize),
    ZeroVertex(usize),
    Root(usize),
    RebuildAnim,
    FrameCount(u32),
    MapNone(usize),
    MapWord(usize, u16),
}

struct Finding {
    err: MshError,
    fix: Option<Fix>,
}

/// A check pushes findings; with `all == false` it may stop at the first.
type Check = fn(&Model, &Cx, &mut Vec<Finding>);

/// What a check is told: whether to collect every finding (`all`, for
/// [`repair`]) and what the decoder already established.
struct Cx {
    all: bool,
    known: Known,
}

/// Facts the decoder established while reading the streams (issue 28:
/// validation fused with decoding, so no second pass re-reads the same
/// values); a check whose fact is known skips its pass. The default knows
/// nothing.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Known {
    /// Every Res7 link is NONE or below the Res7 record count.
    pub res7_links_ok: bool,
    /// Every Res3 position is finite.
    pub positions_finite: bool,
}

const CHECKS: &[Check] = &[
    check_entries,
    check_vertex_streams,
    check_names,
    check_index_count,
    check_index_range,
    check_batch_range,
    check_tri_range,
    check_slot_index,
    check_res7_link,
    check_floats,
    check_bounds,
    check_hierarchy,
    check_fallback,
    check_frame_count,
    check_map_range,
    check_key_time,
    check_map_value,
];

fn push(out: &mut Vec<Finding>, err: MshError, fix: Option<Fix>) {
    out.push(Finding { err, fix });
}

/// [`push`]es the finding [`MshError::at`]`(rule, stream, record, detail)`
/// with no fix.
fn fail_at(
    out: &mut Vec<Finding>,
    rule: &'static str,
    stream: u32,
    record: usize,
    detail: impl Into<String>,
) {
    push(out, MshError::at(rule, stream, record, detail), None);
}

fn apply(m: &mut Model, fix: Fix) {
    match fix {
        Fix::DropStream(t) => {
            match t {
                res::NORMALS => m.normals = None,
                res::UVS => m.uvs = None,
                res::RES15 => m.res15 = None,
                res::RES16 => m.res16 = None,
                res::RES18 => m.res18 = None,
                _ => return,
            }
            m.entries.retain(|e| e.type_id != t);
        }
        Fix::TruncBatch(b) => {
            if let Some(b) = m.batches.get_mut(b) {
                b.index_count -= b.index_count % 3;
            }
        }
        Fix::ClampTri(s) => {
            let n = m.tris.as_ref().map_or(0, Vec::len);
            if let Some(s) = m.slots.get_mut(s) {
                let start = (s.tri_start as usize).min(n);
                let count = (s.tri_count as usize).min(n - start);
                s.tri_start = start as u16;
                s.tri_count = count as u16;
            }
        }
        Fix::DropCell(n, c) => {
            if let Nodes::Node38(v) = &mut m.nodes {
                if let Some(n) = v.get_mut(n) {
                    n.slots[c] = NONE16;
                }
            }
        }
        Fix::LinkNone(t, k) => {
            if let Some(t) = m.tris.as_mut().and_then(|v| v.get_mut(t)) {
                t.links[k] = NONE16;
            }
        }
        Fix::ZeroVertex(v) => {
            if let Some(p) = m.positions.get_mut(v) {
                *p = [0.0; 3];
            }
        }
        Fix::Root(n) => {
            if let Nodes::Node38(v) = &mut m.nodes {
                if let Some(n) = v.get_mut(n) {
                    n.parent = NONE16;
                }
            }
        }
        Fix::RebuildAnim => {}
        Fix::FrameCount(fc) => m.frame_count = fc,
        Fix::MapNone(n) => {
            if let Nodes::Node38(v) = &mut m.nodes {
                if let Some(n) = v.get_mut(n) {
                    n.map_start = NONE16;
                }
            }
        }
        Fix::MapWord(i, w) => {
            if let Some(x) = m.frame_map.as_mut().and_then(|v| v.get_mut(i)) {
                *x = w;
            }
        }
    }
}

/// Entries vs. typed fields (msh-core §3.1, §8.1).
fn check_entries(m: &Model, _cx: &Cx, out: &mut Vec<Finding>) {
    // Entries per type id, counted in one pass (every id the lists below
    // ask about is below 20).
    let mut per_type = [0usize; 20];
    for e in &m.entries {
        if let Some(c) = per_type.get_mut(e.type_id as usize) {
            *c += 1;
        }
    }
    let count = |t: u32| per_type[t as usize];
    for t in REQUIRED_TYPES {
        if count(t) == 0 {
            return push(
                out,
                MshError::at_stream(
                    "msh.missing_stream",
                    t,
                    format!("required stream Res{t} has no entry"),
                ),
                None,
            );
        }
    }
    for t in DECODED_TYPES {
        let n = count(t);
        if n > 1 {
            return push(
                out,
                MshError::at_stream(
                    "msh.duplicate_stream",
                    t,
                    format!("{n} entries of type {t}"),
                ),
                None,
            );
        }
    }
    for (i, e) in m.entries.iter().enumerate() {
        if e.raw.is_some() && DECODED_TYPES.contains(&e.type_id) {
            return push(
                out,
                MshError::at_stream(
                    "msh.ir_entry",
                    e.type_id,
                    format!("entry {i} carries a raw payload, but Res{} is encoded from the typed fields", e.type_id),
                ),
                None,
            );
        }
    }
    let optional = [
        (res::NORMALS, m.normals.is_some()),
        (res::UVS, m.uvs.is_some()),
        (res::TRIS, m.tris.is_some()),
        (res::KEYS, m.keys.is_some()),
        (res::NAMES, m.names.is_some()),
        (res::RES15, m.res15.is_some()),
        (res::RES16, m.res16.is_some()),
        (res::RES18, m.res18.is_some()),
        (res::FRAME_MAP, m.frame_map.is_some()),
    ];
    for (t, present) in optional {
        if present != (count(t) == 1) {
            return push(
                out,
                MshError::at_stream(
                    "msh.ir_entry",
                    t,
                    if present {
                        format!("the model has Res{t} data but no entry for it")
                    } else {
                        format!("an entry of type {t} exists but the model has no Res{t} data")
                    },
                ),
                None,
            );
        }
    }
}

/// Per-vertex streams have the Res3 count (msh-core §7.2).
fn check_vertex_streams(m: &Model, _cx: &Cx, out: &mut Vec<Finding>) {
    let n = m.positions.len();
    let streams = [
        (res::NORMALS, m.normals.as_ref().map(Vec::len)),
        (res::UVS, m.uvs.as_ref().map(Vec::len)),
        (res::RES15, m.res15.as_ref().map(Vec::len)),
        (res::RES16, m.res16.as_ref().map(Vec::len)),
        (res::RES18, m.res18.as_ref().map(Vec::len)),
    ];
    for (t, len) in streams {
        if let Some(len) = len {
            if len != n {
                push(
                    out,
                    MshError::at_stream(
                        "msh.vertex_stream_count",
                        t,
                        format!("{len} records, Res3 has {n} vertices"),
                    ),
                    Some(Fix::DropStream(t)),
                );
            }
        }
    }
}

/// Res10 has one record per node (msh-core §7.2).
fn check_names(m: &Model, _cx: &Cx, out: &mut Vec<Finding>) {
    if let Some(names) = &m.names {
        if names.len() != m.nodes.len() {
            push(
                out,
                MshError::at_stream(
                    "msh.res10",
                    10,
                    format!("{} name records for {} nodes", names.len(), m.nodes.len()),
                ),
                None,
            );
        }
    }
}

/// Batches draw whole triangles.
fn check_index_count(m: &Model, cx: &Cx, out: &mut Vec<Finding>) {
    for (i, b) in m.batches.iter().enumerate() {
        if b.index_count % 3 != 0 {
            push(
                out,
                MshError::at(
                    "msh.index_count",
                    13,
                    i,
                    format!("indexCount {} is not a multiple of 3", b.index_count),
                ),
                Some(Fix::TruncBatch(i)),
            );
            if !cx.all {
                return;
            }
        }
    }
}

/// Batch index ranges and vertex indices (msh-core §6.3, §7.2).
fn check_index_range(m: &Model, _cx: &Cx, out: &mut Vec<Finding>) {
    let n_idx = m.indices.len() as u64;
    let n_vtx = m.positions.len() as u64;
    for (i, b) in m.batches.iter().enumerate() {
        let start = b.index_start as u64;
        let end = start + b.index_count as u64;
        if end > n_idx {
            return fail_at(
                out,
                "msh.index_range",
                13,
                i,
                format!(
                    "indexStart {} + indexCount {} = {end} > Res6 count {n_idx}",
                    b.index_start, b.index_count
                ),
            );
        }
        let slice = &m.indices[start as usize..end as usize];
        // By value (a fold vectorises; `max()` over references does not).
        if let Some(max) = (!slice.is_empty()).then(|| slice.iter().fold(0, |a, &x| a.max(x))) {
            if b.base_vertex as u64 + max as u64 >= n_vtx {
                let at = slice.iter().position(|&x| x == max).unwrap_or(0);
                return fail_at(
                    out,
                    "msh.index_range",
                    13,
                    i,
                    format!(
                        "baseVertex {} + index {max} (Res6[{}]) >= vertex count {n_vtx}",
                        b.base_vertex,
                        start as usize + at
                    ),
                );
            }
        }
    }
}

/// Slot batch ranges (msh-core §7.2).
fn check_batch_range(m: &Model, _cx: &Cx, out: &mut Vec<Finding>) {
    let n = m.batches.len();
    for (i, s) in m.slots.iter().enumerate() {
        let end = s.batch_start as usize + s.batch_count as usize;
        if end > n {
            return fail_at(
                out,
                "msh.batch_range",
                2,
                i,
                format!(
                    "slot batchStart {} + batchCount {} = {end} > Res13 count {n}",
                    s.batch_start, s.batch_count
                ),
            );
        }
    }
}

/// Slot triangle ranges (msh-core §6.4, §7.2).
fn check_tri_range(m: &Model, cx: &Cx, out: &mut Vec<Finding>) {
    let n = m.tris.as_ref().map_or(0, Vec::len);
    for (i, s) in m.slots.iter().enumerate() {
        let end = s.tri_start as usize + s.tri_count as usize;
        if end > n {
            push(
                out,
                MshError::at(
                    "msh.tri_range",
                    2,
                    i,
                    format!(
                        "slot triStart {} + triCount {} = {end} > Res7 count {n}",
                        s.tri_start, s.tri_count
                    ),
                ),
                Some(Fix::ClampTri(i)),
            );
            if !cx.all {
                return;
            }
        }
    }
}

/// Res1 slot cells (msh-core §6.1, §7.2).
fn check_slot_index(m: &Model, cx: &Cx, out: &mut Vec<Finding>) {
    let n = m.slots.len();
    for (i, node) in m.nodes38().iter().enumerate() {
        for (c, &s) in node.slots.iter().enumerate() {
            if s != NONE16 && s as usize >= n {
                push(
                    out,
                    MshError::at(
                        "msh.slot_index",
                        1,
                        i,
                        format!(
                            "cell {c} (state {}, lod {}) = slot {s} >= slot count {n}",
                            c / 5,
                            c % 5
                        ),
                    ),
                    Some(Fix::DropCell(i, c)),
                );
                if !cx.all {
                    return;
                }
            }
        }
    }
}

/// Res7 neighbour links (msh-core §6.4, §7.2).
fn check_res7_link(m: &Model, cx: &Cx, out: &mut Vec<Finding>) {
    let Some(tris) = &m.tris else { return };
    let n = tris.len();
    if cx.known.res7_links_ok || !any_bad_link(tris) {
        return;
    }
    for (i, t) in tris.iter().enumerate() {
        for (k, &l) in t.links.iter().enumerate() {
            if l != NONE16 && l as usize >= n {
                push(
                    out,
                    MshError::at(
                        "msh.res7_link",
                        7,
                        i,
                        format!("link{k} = {l} >= triangle count {n}"),
                    ),
                    Some(Fix::LinkNone(i, k)),
                );
                if !cx.all {
                    return;
                }
            }
        }
    }
}

/// True when some Res7 link is neither [`NONE16`] nor below the triangle
/// count: one branch-free pass (`link + 1` wraps NONE to 0, so a link is
/// bad exactly when `link + 1 > count`); the caller then finds which.
fn any_bad_link(tris: &[TriDesc16]) -> bool {
    let top = tris.iter().fold(0u16, |top, t| {
        top.max(link_end(t.links[0]))
            .max(link_end(t.links[1]))
            .max(link_end(t.links[2]))
    });
    !links_in_range(top, tris.len())
}

/// `link + 1` of a Res7 link, [`NONE16`] wrapping to 0 (msh-core §6.4):
/// the largest over a stream is what [`links_in_range`] takes, so the
/// decoder (fused) and [`check_res7_link`] apply one rule.
pub(crate) fn link_end(link: u16) -> u16 {
    link.wrapping_add(1)
}

/// Whether every Res7 link is NONE or below `count` triangles, given the
/// largest [`link_end`] of the stream.
pub(crate) fn links_in_range(top_link_end: u16, count: usize) -> bool {
    top_link_end as usize <= count
}

/// Exponent bits of an `f32`: all set means NaN or an infinity.
const F32_EXP: u32 = 0x7F80_0000;

/// The exponent bits of `x` ([`F32_EXP`] exactly for NaN and
/// infinities): the largest over a stream is what [`finite_top`] takes,
/// so the decoder (fused) and [`check_floats`] apply one rule.
pub(crate) fn exp_bits(x: f32) -> u32 {
    x.to_bits() & F32_EXP
}

/// Whether every value was finite, given the largest [`exp_bits`].
pub(crate) fn finite_top(top_exp_bits: u32) -> bool {
    top_exp_bits != F32_EXP
}

/// True when every value is finite: one branch-free pass over the bits.
fn all_finite(v: &[f32]) -> bool {
    finite_top(v.iter().fold(0u32, |top, &x| top.max(exp_bits(x))))
}

fn finite3(v: &[f32; 3]) -> bool {
    v.iter().all(|c| c.is_finite())
}

/// NaN/Inf in positions, the Res2 header, slot bounds, key positions.
fn check_floats(m: &Model, cx: &Cx, out: &mut Vec<Finding>) {
    let positions = if cx.known.positions_finite || all_finite(m.positions.as_flattened()) {
        &[][..]
    } else {
        &m.positions[..]
    };
    for (i, p) in positions.iter().enumerate() {
        if !finite3(p) {
            push(
                out,
                MshError::at(
                    "msh.float.non_finite",
                    3,
                    i,
                    format!("position {p:?} is not finite"),
                ),
                Some(Fix::ZeroVertex(i)),
            );
            if !cx.all {
                return;
            }
        }
    }
    let h = &m.header;
    let header_ok = h.hull.iter().all(finite3)
        && finite3(&h.sphere_center)
        && h.sphere_radius.is_finite()
        && finite3(&h.capsule_a)
        && finite3(&h.capsule_b)
        && h.capsule_radius.is_finite();
    if !header_ok {
        return push(
            out,
            MshError::at_stream(
                "msh.float.non_finite",
                2,
                "the Res2 header (hull, sphere, capsule) holds NaN or Inf",
            ),
            None,
        );
    }
    for (i, s) in m.slots.iter().enumerate() {
        if !(finite3(&s.aabb_min)
            && finite3(&s.aabb_max)
            && finite3(&s.sphere_center)
            && s.sphere_radius.is_finite())
        {
            return fail_at(
                out,
                "msh.float.non_finite",
                2,
                i,
                format!(
                    "slot bounds min {:?} max {:?} sphere {:?} r {} are not finite",
                    s.aabb_min, s.aabb_max, s.sphere_center, s.sphere_radius
                ),
            );
        }
    }
    for (i, k) in m.keys.iter().flatten().enumerate() {
        if !finite3(&k.pos) {
            return fail_at(
                out,
                "msh.float.non_finite",
                8,
                i,
                format!("key position {:?} is not finite", k.pos),
            );
        }
    }
}

/// Bounds are well-formed (min <= max, radii >= 0).
fn check_bounds(m: &Model, _cx: &Cx, out: &mut Vec<Finding>) {
    for (i, s) in m.slots.iter().enumerate() {
        if (0..3).any(|k| s.aabb_min[k] > s.aabb_max[k]) {
            return fail_at(
                out,
                "msh.bounds",
                2,
                i,
                format!("slot aabbMin {:?} > aabbMax {:?}", s.aabb_min, s.aabb_max),
            );
        }
        if s.sphere_radius < 0.0 {
            return fail_at(
                out,
                "msh.bounds",
                2,
                i,
                format!("slot sphere radius {} < 0", s.sphere_radius),
            );
        }
    }
    let h = &m.header;
    if h.sphere_radius < 0.0 || h.capsule_radius < 0.0 {
        push(
            out,
            MshError::at_stream(
                "msh.bounds",
                2,
                format!(
                    "header sphere radius {} / capsule radius {} is negative",
                    h.sphere_radius, h.capsule_radius
                ),
            ),
            None,
        );
    }
}

/// Parents exist and no node is its own ancestor (O(n) walk).
fn check_hierarchy(m: &Model, cx: &Cx, out: &mut Vec<Finding>) {
    let nodes = m.nodes38();
    let n = nodes.len();
    // Parents listed before their children (the usual order) are in range
    // and cannot form a cycle: nothing to walk, nothing to allocate.
    let backward = |(i, x): (usize, &Node38)| x.parent == NONE16 || (x.parent as usize) < i;
    if nodes.iter().enumerate().all(backward) {
        return;
    }
    let mut parent: Vec<u16> = nodes.iter().map(|x| x.parent).collect();
    for (i, p) in parent.iter_mut().enumerate() {
        if *p != NONE16 && *p as usize >= n {
            push(
                out,
                MshError::at(
                    "msh.hierarchy.parent_range",
                    1,
                    i,
                    format!("parent {} >= node count {n}", *p),
                ),
                Some(Fix::Root(i)),
            );
            if !cx.all {
                return;
            }
            *p = NONE16;
        }
    }
    // 0 = unvisited, 1 = on the current path, 2 = done.
    let mut state = vec![0u8; n];
    let mut path: Vec<usize> = Vec::new();
    for start in 0..n {
        if state[start] != 0 {
            continue;
        }
        path.clear();
        let mut cur = start;
        loop {
            state[cur] = 1;
            path.push(cur);
            let p = parent[cur];
            if p == NONE16 {
                break;
            }
            let p = p as usize;
            if state[p] == 2 {
                break;
            }
            if state[p] == 1 {
                // Cycle: path from p to cur. Break it at its lowest node.
                let from = path.iter().rposition(|&x| x == p).unwrap_or(0);
                let cycle = &path[from..];
                let low = cycle.iter().copied().min().unwrap_or(p);
                push(
                    out,
                    MshError::at(
                        "msh.hierarchy.cycle",
                        1,
                        low,
                        if cycle.len() == 1 {
                            format!("node {low} is its own parent")
                        } else {
                            format!("nodes {cycle:?} form a parent cycle")
                        },
                    ),
                    Some(Fix::Root(low)),
                );
                if !cx.all {
                    return;
                }
                parent[low] = NONE16;
                break;
            }
            cur = p;
        }
        for &x in &path {
            state[x] = 2;
        }
    }
}

fn key_count(m: &Model) -> usize {
    m.keys.as_ref().map_or(0, Vec::len)
}

/// Fallback keys: in range, strictly increasing, >= 2 keys under a map
/// (msh-animation §5.1, §9.2, §9.5).
fn check_fallback(m: &Model, cx: &Cx, out: &mut Vec<Finding>) {
    let k = key_count(m);
    let mut prev: Option<u16> = None;
    for (i, node) in m.nodes38().iter().enumerate() {
        let f = node.fallback_key;
        let detail = if f as usize >= k {
            Some(format!("fallback key {f} >= key count {k}"))
        } else if prev.is_some_and(|p| f <= p) {
            Some(format!(
                "fallback key {f} does not follow the previous node's {} (tracks must increase)",
                prev.unwrap_or(0)
            ))
        } else if node.map_start != NONE16 && f as usize == prev.map_or(0, |p| p as usize + 1) {
            Some(format!(
                "node has a frame map but its track is the single key {f}"
            ))
        } else {
            None
        };
        if let Some(d) = detail {
            push(
                out,
                MshError::at("msh.anim.fallback_key", 1, i, d),
                Some(Fix::RebuildAnim),
            );
            if !cx.all {
                return;
            }
        }
        prev = Some(f);
    }
}

fn word_count(m: &Model) -> u64 {
    m.frame_map.as_ref().map_or(0, Vec::len) as u64
}

/// Frame count usable with the frame maps (msh-animation §2.2, §9.6).
fn check_frame_count(m: &Model, _cx: &Cx, out: &mut Vec<Finding>) {
    let nodes = m.nodes38();
    let words = word_count(m);
    let fc = m.frame_count as u64;
    let mapped = nodes.iter().filter(|n| n.map_start != NONE16);
    // Largest frame count that every map still starting inside Res19 fits.
    let fit = mapped
        .clone()
        .filter(|n| (n.map_start as u64) < words)
        .map(|n| words - n.map_start as u64)
        .min()
        .unwrap_or(1) as u32;
    if fc == 0 {
        push(
            out,
            MshError::at_stream("msh.anim.frame_count", 19, "frame count (Res19.attr2) is 0"),
            Some(Fix::FrameCount(fit)),
        );
    } else if mapped.count() > 0 && fc > words {
        push(
            out,
            MshError::at_stream(
                "msh.anim.frame_count",
                19,
                format!("frame count {fc} exceeds the whole frame map ({words} words) while nodes have maps"),
            ),
            Some(Fix::FrameCount(fit)),
        );
    }
}

/// Frame maps lie inside Res19 (msh-animation §9.3), u64 math.
fn check_map_range(m: &Model, cx: &Cx, out: &mut Vec<Finding>) {
    let words = word_count(m);
    let fc = m.frame_count as u64;
    for (i, node) in m.nodes38().iter().enumerate() {
        if node.map_start != NONE16 && node.map_start as u64 + fc > words {
            push(
                out,
                MshError::at(
                    "msh.anim.map_range",
                    1,
                    i,
                    format!(
                        "mapStart {} + frame count {fc} > Res19 word count {words}",
                        node.map_start
                    ),
                ),
                Some(Fix::MapNone(i)),
            );
            if !cx.all {
                return;
            }
        }
    }
}

/// Key times: finite, strictly increasing within each node's track
/// (msh-animation §5.1, §9.5). Tracks need valid fallbacks (checked before).
fn check_key_time(m: &Model, _cx: &Cx, out: &mut Vec<Finding>) {
    let keys = m.keys.as_deref().unwrap_or(&[]);
    for (i, k) in keys.iter().enumerate() {
        if !k.time.is_finite() {
            return fail_at(
                out,
                "msh.anim.key_time",
                8,
                i,
                format!("key time {} is not finite", k.time),
            );
        }
    }
    let mut first = 0usize;
    for (i, node) in m.nodes38().iter().enumerate() {
        let last = node.fallback_key as usize;
        if last < keys.len() && first <= last {
            if let Some(w) = keys[first..=last]
                .windows(2)
                .position(|w| w[1].time <= w[0].time)
            {
                return fail_at(
                    out,
                    "msh.anim.key_time",
                    8,
                    first + w + 1,
                    format!(
                        "node {i}: key time {} does not increase after {}",
                        keys[first + w + 1].time,
                        keys[first + w].time
                    ),
                );
            }
        }
        first = last + 1;
    }
}

/// Map words below the fallback point at a key with a successor
/// (msh-animation §9.4).
fn check_map_value(m: &Model, cx: &Cx, out: &mut Vec<Finding>) {
    let words = m.frame_map.as_deref().unwrap_or(&[]);
    let k = key_count(m) as u64;
    let fc = m.frame_count as u64;
    for (i, node) in m.nodes38().iter().enumerate() {
        if node.map_start == NONE16 {
            continue;
        }
        let start = node.map_start as u64;
        let end = (start + fc).min(words.len() as u64);
        if start >= end {
            continue;
        }
        for (j, &w) in words[start as usize..end as usize].iter().enumerate() {
            if w < node.fallback_key && w as u64 + 1 >= k {
                push(
                    out,
                    MshError::at(
                        "msh.anim.map_value",
                        19,
                        start as usize + j,
                        format!("node {i} frame {j}: key {w} has no successor in {k} keys"),
                    ),
                    Some(Fix::MapWord(start as usize + j, node.fallback_key)),
                );
                if !cx.all {
                    return;
                }
            }
        }
    }
}

/// The identity key of a repaired node (see [`repair`]).
const IDENTITY_KEY: AnimKey24 = AnimKey24 {
    pos: [0.0; 3],
    time: 0.0,
    q: [0; 4],
};

/// Rebuilds Res8 (and re-points Res19 words in place) so that every node
/// has a valid, strictly increasing fallback key; see [`repair`].
fn rebuild_anim(m: &mut Model) -> Result<(), MshError> {
    let Nodes::Node38(nodes) = &mut m.nodes else {
        return Ok(());
    };
    let old = m.keys.take().unwrap_or_default();
    let k = old.len();
    let fc = m.frame_count as u64;
    let mut words = m.frame_map.take();
    let n_words = words.as_ref().map_or(0, Vec::len);
    let mut translated = vec![false; n_words];
    let mut new_keys: Vec<AnimKey24> = Vec::with_capacity(k.min(0x1_0000) + nodes.len());
    let mut lo = 0usize;
    let mut prev_broken = false;
    for (i, node) in nodes.iter_mut().enumerate() {
        let f = node.fallback_key as usize;
        if f < k && f >= lo {
            let mut s = lo;
            if prev_broken {
                s = f;
                while s > lo && old[s - 1].time < old[s].time {
                    s -= 1;
                }
            }
            let new_s = new_keys.len();
            new_keys.extend_from_slice(&old[s..=f]);
            let new_f = new_keys.len() - 1;
            let new_f16 = u16::try_from(new_f).map_err(|_| {
                MshError::at(
                    "msh.anim.fallback_key",
                    1,
                    i,
                    "repaired key pool exceeds 65536 keys",
                )
            })?;
            if node.map_start != NONE16 {
                let ms = node.map_start as usize;
                let fits = fc > 0 && (ms as u64 + fc) <= n_words as u64;
                let block = ms..ms + if fits { fc as usize } else { 0 };
                let free = fits && !translated[block.clone()].iter().any(|&t| t);
                if s == f || !free {
                    node.map_start = NONE16;
                } else if let Some(words) = words.as_mut() {
                    for j in block {
                        let w = words[j] as usize;
                        words[j] = if w >= s && w < f {
                            (w - s + new_s) as u16
                        } else {
                            new_f16
                        };
                        translated[j] = true;
                    }
                }
            }
            node.fallback_key = new_f16;
            lo = f + 1;
            prev_broken = false;
        } else {
            new_keys.push(IDENTITY_KEY);
            node.fallback_key = u16::try_from(new_keys.len() - 1).map_err(|_| {
                MshError::at(
                    "msh.anim.fallback_key",
                    1,
                    i,
                    "repaired key pool exceeds 65536 keys",
                )
            })?;
            node.map_start = NONE16;
            prev_broken = true;
        }
    }
    m.keys = Some(new_keys);
    m.frame_map = words;
    if !m.entries.iter().any(|e| e.type_id == res::KEYS) {
        m.entries.push(StreamEntry {
            type_id: res::KEYS,
            name: b"Res8".to_vec(),
            attr1: 0,
            attr2: 0,
            attr3: 4,
            raw: None,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tri(links: [u16; 3]) -> TriDesc16 {
        TriDesc16 {
            links,
            ..TriDesc16::default()
        }
    }

    #[test]
    fn branch_free_link_pass_agrees_with_the_rule() {
        // Two triangles: links NONE, 0 and 1 are fine, 2 is not.
        let ok = [tri([NONE16, 0, 1]), tri([1, NONE16, NONE16])];
        assert!(!any_bad_link(&ok));
        let bad = [tri([NONE16, 0, 1]), tri([2, NONE16, NONE16])];
        assert!(any_bad_link(&bad));
        assert!(any_bad_link(&[tri([0xFFFE, NONE16, NONE16])]));
        assert!(!any_bad_link(&[]));
        // More triangles than a u16 can name: every link but NONE is in range.
        let many = vec![tri([0xFFFE, NONE16, 0]); 0x1_0000];
        assert!(!any_bad_link(&many));
    }

    #[test]
    fn branch_free_finite_pass_agrees_with_is_finite() {
        let finite = [0.0, -0.0, f32::MAX, f32::MIN, f32::MIN_POSITIVE, 1e-45];
        assert!(all_finite(&finite));
        assert!(all_finite(&[]));
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -f32::NAN] {
            let mut v = finite.to_vec();
            v.insert(3, bad);
            assert!(!all_finite(&v), "{bad}");
        }
    }

    #[test]
    fn hierarchy_fast_path_still_reports_forward_parents() {
        let node = |parent| Node38 {
            parent,
            slots: [NONE16; CELLS],
            ..Node38::default()
        };
        let mut m = Model {
            nodes: Nodes::Node38(vec![node(NONE16), node(0), node(1)]),
            ..Model::default()
        };
        let cx = Cx {
            all: false,
            known: Known::default(),
        };
        let mut out = Vec::new();
        check_hierarchy(&m, &cx, &mut out);
        assert!(out.is_empty());
        // A parent after its child is fine when there is no cycle ...
        m.nodes = Nodes::Node38(vec![node(2), node(0), node(NONE16)]);
        check_hierarchy(&m, &cx, &mut out);
        assert!(out.is_empty());
        // ... and a cycle through a forward parent is found.
        m.nodes = Nodes::Node38(vec![node(2), node(0), node(1)]);
        check_hierarchy(&m, &cx, &mut out);
        assert_eq!(out[0].err.rule, "msh.hierarchy.cycle");
    }
}
