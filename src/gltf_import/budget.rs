//! The import's work budget (docs/safety.md): before any accessor is read,
//! the size of the scene is spent from the run's budget (`--max-work`) so that a
//! small glTF cannot make `gltf2msh` read the same data millions of times.
//! The JSON text itself is limited before it is parsed
//! ([`crate::limits::max_json_bytes`]).

use serde_json::Value;

use super::read::{arr, idx, GltfFile};
use super::ImportError;
use crate::limits::{Budget, UNITS_PER_CLIP_KEY, UNITS_PER_IMPORTED_PRIMITIVE, UNITS_PER_NODE};

/// Most triangles of one model (Res7 and Res13 counts are u16 in practice:
/// msh-core limits).
pub const MAX_TRIANGLES: u64 = 65_535;

/// Work units of one triangle that `--simplify` reads and reduces (its
/// corners, their attributes and meshoptimizer's copies: about 64 bytes).
pub const UNITS_PER_SIMPLIFIED_TRIANGLE: u64 = 2;

/// [`check_scene`] without `--simplify`.
///
/// # Errors
/// As [`check_scene`].
pub fn check(doc: &GltfFile, max_work: u64) -> Result<(), ImportError> {
    check_scene(doc, max_work, false)
}

/// Spends the scene of `doc`: its nodes, every primitive instance (a
/// primitive of a mesh counted once per node showing it), their
/// triangles and the keys of its clip animations ([`clip_keys`]; from the
/// accessors' `count`, nothing is read).
///
/// Without `simplify`, more than [`MAX_TRIANGLES`] triangles are refused
/// (the message suggests `--simplify`); with it, the triangle limit defers
/// to the simplifier and every triangle is spent instead
/// ([`UNITS_PER_SIMPLIFIED_TRIANGLE`]).
///
/// # Errors
/// `limits.work` over the budget of `max_work` units; `gltf.limits` for
/// more than [`MAX_TRIANGLES`] triangles without `simplify`.
pub fn check_scene(doc: &GltfFile, max_work: u64, simplify: bool) -> Result<(), ImportError> {
    let nodes = doc.nodes();
    let meshes = doc.meshes();
    let count = |a: Option<usize>| -> u64 {
        a.and_then(|a| doc.accessor_def(a).ok())
            .and_then(|x| x.get("count"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    let mut prims: u64 = 0;
    let mut tris: u64 = 0;
    for n in nodes {
        let Some(m) = idx(n, "mesh").and_then(|m| meshes.get(m)) else {
            continue;
        };
        for p in arr(m, "primitives") {
            prims = prims.saturating_add(1);
            let corners = match idx(p, "indices") {
                Some(i) => count(Some(i)),
                None => count(p.get("attributes").and_then(|a| idx(a, "POSITION"))),
            };
            tris = tris.saturating_add(corners / 3);
        }
    }
    if tris > MAX_TRIANGLES && !simplify {
        return Err(ImportError::new(
            "gltf.limits",
            format!("the scene shows {tris} triangles ({prims} primitive instances); a model holds at most {MAX_TRIANGLES}: reduce it (Blender: Decimate modifier) or pass --simplify"),
        ));
    }
    let mut b = Budget::new(max_work);
    if tris > MAX_TRIANGLES {
        b.spend(
            tris.saturating_mul(UNITS_PER_SIMPLIFIED_TRIANGLE),
            &format!("simplifying {tris} triangles"),
        )
        .map_err(|d| ImportError::new("limits.work", d))?;
    }
    let units = (nodes.len() as u64)
        .saturating_mul(UNITS_PER_NODE)
        .saturating_add(prims.saturating_mul(UNITS_PER_IMPORTED_PRIMITIVE));
    b.spend(
        units,
        &format!("{} nodes and {prims} primitive instances", nodes.len()),
    )
    .map_err(|d| ImportError::new("limits.work", d))?;
    let keys = clip_keys(doc);
    if keys > 0 {
        b.spend(
            keys.saturating_mul(UNITS_PER_CLIP_KEY),
            &format!("{keys} keys of clip animations"),
        )
        .map_err(|d| ImportError::new("limits.work", d))?;
    }
    Ok(())
}

/// The keys of every clip animation's channels (`extras.msh.clip`,
/// [`super::clips::is_clip`]), from each channel's sampler input accessor
/// `count` (nothing is read): every channel reads its keys whole and
/// compares them with the base ([`super::clips::fold_clips`]), so a
/// sampler shared by two channels counts twice.
pub fn clip_keys(doc: &GltfFile) -> u64 {
    let mut keys = 0u64;
    for a in doc
        .animations()
        .iter()
        .filter(|a| super::clips::is_clip(*a))
    {
        let samplers = arr(a, "samplers");
        for c in arr(a, "channels") {
            let n = idx(c, "sampler")
                .and_then(|s| samplers.get(s))
                .and_then(|s| idx(s, "input"))
                .and_then(|i| doc.accessor_def(i).ok())
                .and_then(|x| x.get("count"))
                .and_then(Value::as_u64)
                .unwrap_or(0);
            keys = keys.saturating_add(n);
        }
    }
    keys
}
