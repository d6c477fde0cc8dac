//! Fitting an authored model under the MSH triangle limit (issue 9): Res7
//! links and the Slot68 triangle ranges are u16, so a model holds at most
//! [`MAX_TRIANGLES`] triangles. Without `--simplify` a larger scene is
//! refused (`gltf.limits`); with it, every primitive is simplified by
//! meshoptimizer (`meshopt::simplify`, edge collapses that keep attribute
//! seams and borders) to the same fraction of its triangles, repeated with
//! a smaller fraction until the model fits (falling back to
//! `meshopt::simplify_sloppy` when edge collapses stall), and the largest
//! geometric error meshoptimizer reports is returned in model units.

use meshopt::{SimplifyOptions, VertexDataAdapter};

use super::ImportError;
use crate::msh::build::Vertex;

/// Most triangles one model can hold (u16 Res7 links and Slot68 ranges).
pub const MAX_TRIANGLES: usize = u16::MAX as usize;

/// One primitive before it is split into batches.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RawPrim {
    /// WEAR row.
    pub material: u16,
    /// Vertices (game axes, node-local).
    pub vertices: Vec<Vertex>,
    /// Triangle list into `vertices`.
    pub indices: Vec<u32>,
    /// Lit with the model's lightmap (Batch20 lightmap byte 0x00).
    pub lit: bool,
}

/// What [`fit`] did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Simplified {
    /// Triangles before.
    pub from: usize,
    /// Triangles after.
    pub to: usize,
    /// Largest error over the primitives, in model units (meshoptimizer's
    /// relative error times the primitive's extent).
    pub max_error: f32,
    /// Primitives simplified with the sloppy (topology-ignoring) fallback.
    pub sloppy: usize,
}

fn total(prims: &[Vec<RawPrim>]) -> usize {
    prims.iter().flatten().map(|p| p.indices.len() / 3).sum()
}

fn positions(p: &RawPrim) -> Vec<u8> {
    p.vertices
        .iter()
        .flat_map(|v| v.pos.iter().flat_map(|x| x.to_le_bytes()))
        .collect()
}

/// Simplifies `slots` (the primitives of every slot) so that they hold at
/// most `limit` triangles in all (see the module docs).
///
/// # Errors
/// `gltf.limits` when even the sloppy simplifier cannot reach the limit
/// (e.g. more primitives than triangles allowed).
pub fn fit(slots: &mut [Vec<RawPrim>], limit: usize) -> Result<Simplified, ImportError> {
    let from = total(slots);
    let mut out = Simplified {
        from,
        to: from,
        ..Simplified::default()
    };
    if from <= limit {
        return Ok(out);
    }
    let orig: Vec<Vec<RawPrim>> = slots.to_vec();
    let mut ratio = limit as f64 * 0.98 / from as f64;
    for round in 0..12 {
        let sloppy = round >= 8;
        out.max_error = 0.0;
        out.sloppy = 0;
        for (s, o) in slots.iter_mut().zip(&orig) {
            for (p, op) in s.iter_mut().zip(o) {
                let tris = op.indices.len() / 3;
                let target = ((tris as f64 * ratio).floor() as usize).max(1) * 3;
                if target >= op.indices.len() {
                    *p = op.clone();
                    continue;
                }
                let bytes = positions(op);
                let adapter = VertexDataAdapter::new(&bytes, 12, 0)
                    .map_err(|e| ImportError::new("gltf.limits", format!("meshopt: {e}")))?;
                let mut e = 0.0f32;
                let idx = if sloppy {
                    out.sloppy += 1;
                    meshopt::simplify_sloppy(&op.indices, &adapter, target, f32::MAX, Some(&mut e))
                } else {
                    meshopt::simplify(
                        &op.indices,
                        &adapter,
                        target,
                        f32::MAX,
                        SimplifyOptions::None,
                        Some(&mut e),
                    )
                };
                let scale = meshopt::simplify_scale(&adapter);
                out.max_error = out.max_error.max(e * scale);
                p.indices = idx;
                p.vertices = op.vertices.clone();
            }
        }
        out.to = total(slots);
        if out.to <= limit {
            return Ok(out);
        }
        ratio *= limit as f64 * 0.98 / out.to as f64;
    }
    Err(ImportError::new(
        "gltf.limits",
        format!(
            "--simplify could not fit {from} triangles under {limit} (reached {}); reduce the scene in Blender (Decimate)",
            out.to
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An n x n heightfield (2 n² triangles) with a smooth bump.
    fn grid(n: usize) -> RawPrim {
        let mut vertices = Vec::new();
        for y in 0..=n {
            for x in 0..=n {
                let (u, v) = (x as f32 / n as f32, y as f32 / n as f32);
                let h = 0.2 * ((u * 6.0).sin() * (v * 5.0).cos());
                vertices.push(Vertex {
                    pos: [u * 10.0, v * 10.0, h],
                    normal: [0.0, 0.0, 1.0],
                    uv: [u, v],
                    ..Vertex::default()
                });
            }
        }
        let mut indices = Vec::new();
        let w = n as u32 + 1;
        for y in 0..n as u32 {
            for x in 0..n as u32 {
                let a = y * w + x;
                indices.extend_from_slice(&[a, a + 1, a + w, a + 1, a + w + 1, a + w]);
            }
        }
        RawPrim {
            material: 0,
            vertices,
            indices,
            lit: false,
        }
    }

    #[test]
    fn fits_under_the_limit_and_reports_the_error() {
        let mut slots = vec![vec![grid(100)], vec![grid(40)]];
        let before = total(&slots);
        assert_eq!(before, 2 * 100 * 100 + 2 * 40 * 40);
        let r = fit(&mut slots, 5000).unwrap();
        assert_eq!(r.from, before);
        assert!(r.to <= 5000 && r.to > 2500, "{r:?}");
        assert!(r.max_error > 0.0 && r.max_error < 0.5, "{r:?}");
        assert_eq!(r.to, total(&slots));
        // Nothing to do under the limit.
        let mut small = vec![vec![grid(4)]];
        assert_eq!(fit(&mut small, 5000).unwrap().to, 32);
        assert_eq!(small[0][0], grid(4));
    }
}
