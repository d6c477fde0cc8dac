//! `.bas` (tag BASE): a building's ground plan (unit-files-notes §5.4),
//! read for the placement rule of mission-notes §5.4 (a building is set
//! down on the mean ground of its outer ring).
//!
//! ```text
//! i32 1 | i32 n | (n+1) × f32[3] closed inner ring | n × i32 triangle | n × i32 corner
//! i32 1 | i32 m | (m+1) × f32[3] closed outer ring
//! ```
//!
//! The rings lie in the model frame (game axes, Z up) and wind
//! anticlockwise; the last point of each repeats the first. The reader
//! consumes the bytes exactly; anything else (the opaque `.bas` entries of
//! a generated game folder) is a `bas.layout` error naming the offset.

use super::UnitError;

/// A building's ground plan.
#[derive(Debug, Clone, PartialEq)]
pub struct GroundPlan {
    /// The inner ring (traced off the mesh), closing point dropped: x, y, z
    /// in the model frame.
    pub inner: Vec<[f32; 3]>,
    /// The outer (clearance) ring, closing point dropped: the contour the
    /// terrain is cut along.
    pub outer: Vec<[f32; 3]>,
}

/// At most this many points a ring (the shipped plans have a few dozen).
pub const MAX_RING: usize = 65_536;

fn i32_at(b: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn err(detail: String) -> UnitError {
    UnitError::new("bas.layout", detail)
}

/// One ring at `at`: marker 1, count `n`, `n + 1` points; returns the
/// points (closing one dropped) and the offset after them.
fn ring(b: &[u8], at: usize, what: &str) -> Result<(Vec<[f32; 3]>, usize), UnitError> {
    let marker = i32_at(b, at).ok_or_else(|| err(format!("{what} ring: no marker at {at}")))?;
    if marker != 1 {
        return Err(err(format!(
            "{what} ring: marker {marker} at {at}, not 1 (not a BASE ground plan)"
        )));
    }
    let n = i32_at(b, at + 4).ok_or_else(|| err(format!("{what} ring: no count at {}", at + 4)))?;
    let n = usize::try_from(n)
        .ok()
        .filter(|&n| (3..=MAX_RING).contains(&n))
        .ok_or_else(|| {
            err(format!(
                "{what} ring: count {n} at {} not in 3..={MAX_RING}",
                at + 4
            ))
        })?;
    let start = at + 8;
    let end = start + (n + 1) * 12;
    let bytes = b.get(start..end).ok_or_else(|| {
        err(format!(
            "{what} ring: {} points need bytes {start}..{end}, the plan has {}",
            n + 1,
            b.len()
        ))
    })?;
    let pts: Vec<[f32; 3]> = bytes
        .chunks_exact(12)
        .map(|c| [0, 4, 8].map(|k| f32::from_le_bytes(c[k..k + 4].try_into().unwrap_or([0; 4]))))
        .collect();
    if !pts.iter().flatten().all(|v| v.is_finite()) {
        return Err(err(format!("{what} ring: a point is not finite")));
    }
    Ok((pts[..n].to_vec(), end))
}

/// Reads a `.bas` payload (module docs).
///
/// # Errors
/// `bas.layout` naming the ring and the offset: a marker that is not 1, a
/// count out of range, points past the end, non-finite points, or bytes
/// after the outer ring.
pub fn read(b: &[u8]) -> Result<GroundPlan, UnitError> {
    let (inner, at) = ring(b, 0, "inner")?;
    // n triangle words and n corner words follow the inner ring.
    let at = at + inner.len() * 8;
    let (outer, end) = ring(b, at, "outer")?;
    if end != b.len() {
        return Err(err(format!(
            "{} bytes after the outer ring (ends at {end})",
            b.len().saturating_sub(end)
        )));
    }
    Ok(GroundPlan { inner, outer })
}

/// The bytes of a plan with rings `inner` and `outer` (zero triangle and
/// corner words): what [`read`] reads back; for tests and generated maps.
pub fn write(inner: &[[f32; 3]], outer: &[[f32; 3]]) -> Vec<u8> {
    let mut b = Vec::new();
    let put = |ring: &[[f32; 3]], extra: usize, b: &mut Vec<u8>| {
        b.extend_from_slice(&1i32.to_le_bytes());
        b.extend_from_slice(&(ring.len() as i32).to_le_bytes());
        for p in ring.iter().chain(ring.first()) {
            for v in p {
                b.extend_from_slice(&v.to_le_bytes());
            }
        }
        b.extend(std::iter::repeat_n(0u8, extra));
    };
    put(inner, inner.len() * 8, &mut b);
    put(outer, 0, &mut b);
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_reads_back_and_opaque_bytes_are_refused() {
        let sq = |r: f32| vec![[r, 0.0, 0.0], [0.0, r, 0.0], [-r, 0.0, 0.0], [0.0, -r, 0.0]];
        let b = write(&sq(1.0), &sq(2.0));
        let p = read(&b).unwrap();
        assert_eq!(p.inner, sq(1.0));
        assert_eq!(p.outer, sq(2.0));
        let e = read(&[7u8; 32]).unwrap_err();
        assert_eq!(e.rule, "bas.layout");
        let mut long = b.clone();
        long.push(0);
        assert!(read(&long).unwrap_err().detail.contains("1 bytes after"));
        assert!(read(&b[..b.len() - 1]).is_err());
    }
}
