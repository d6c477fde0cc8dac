//! `.cpt` (NRes tag `CTPT`): named control points (unit-files-notes §5.1).
//!
//! ```text
//! u32 count
//! count × 36 bytes: u32 word0, i32 node, i32 carrier node,
//!                   f32[3] position in the node's frame, f32[3] direction
//! count × char[32] names            (size = 4 + 68·count exactly)
//! ```

use super::bytes::{trim_name, Cursor};
use super::UnitError;

/// Bytes of one point record (without its name).
pub const RECORD_SIZE: usize = 36;
/// Bytes of one name field.
pub const NAME_SIZE: usize = 32;

/// One control point (unit-files-notes §5.1).
#[derive(Debug, Clone, PartialEq)]
pub struct ControlPoint {
    /// +0: 0 on most points, 0x80000000 on a few (meaning unknown; kept).
    pub word0: u32,
    /// +4: the node the point sits on (its position is in this node's frame).
    pub node: i32,
    /// +8: the carrier node (ground contact stops when it is destroyed).
    pub carrier: i32,
    /// +12: position in the node's frame, game axes.
    pub position: [f32; 3],
    /// +24: direction, game axes; its length is a magnitude (width, size...).
    pub direction: [f32; 3],
    /// The whole 32-byte name field (Windows-1251, NUL-padded), kept for a
    /// byte-exact write.
    pub name_field: [u8; 32],
}

impl ControlPoint {
    /// The name bytes before the NUL (Windows-1251).
    pub fn name_bytes(&self) -> &[u8] {
        trim_name(&self.name_field)
    }

    /// The name decoded from Windows-1251.
    pub fn name(&self) -> String {
        crate::source::decode_name(self.name_bytes())
    }

    /// Length of [`ControlPoint::direction`] (the point's magnitude).
    pub fn magnitude(&self) -> f32 {
        let d = self.direction.map(f64::from);
        (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt() as f32
    }
}

/// A whole `.cpt` file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ControlPoints {
    /// The points in file order (index = the point number `.ctl` refers to).
    pub points: Vec<ControlPoint>,
}

/// Reads a `.cpt` payload (unit-files-notes §5.1).
///
/// # Errors
/// `cpt.size` when the file is not exactly `4 + 68·count` bytes (the count
/// is checked against the size before anything is allocated).
pub fn read(data: &[u8]) -> Result<ControlPoints, UnitError> {
    let mut c = Cursor::new(data, "cpt.size");
    let count = c.u32("point count")? as usize;
    c.check_fits(count, RECORD_SIZE + NAME_SIZE, "points")?;
    let mut points = Vec::with_capacity(count);
    for i in 0..count {
        let what = format!("point {i}");
        points.push(ControlPoint {
            word0: c.u32(&what)?,
            node: c.i32(&what)?,
            carrier: c.i32(&what)?,
            position: c.f32x3(&what)?,
            direction: c.f32x3(&what)?,
            name_field: [0; 32],
        });
    }
    for (i, p) in points.iter_mut().enumerate() {
        p.name_field = c.name32(&format!("name of point {i}"))?;
    }
    c.finish("4 + 68 x count bytes")?;
    Ok(ControlPoints { points })
}

/// Writes a `.cpt` payload; [`read`] of the result gives `cpt` back.
pub fn write(cpt: &ControlPoints) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + cpt.points.len() * (RECORD_SIZE + NAME_SIZE));
    out.extend_from_slice(&(cpt.points.len() as u32).to_le_bytes());
    for p in &cpt.points {
        out.extend_from_slice(&p.word0.to_le_bytes());
        out.extend_from_slice(&p.node.to_le_bytes());
        out.extend_from_slice(&p.carrier.to_le_bytes());
        for v in p.position.iter().chain(&p.direction) {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    for p in &cpt.points {
        out.extend_from_slice(&p.name_field);
    }
    out
}

/// A 32-byte name field holding `name` (truncated to 31 bytes) and NULs.
pub fn name_field(name: &[u8]) -> [u8; 32] {
    let mut f = [0u8; 32];
    let n = name.len().min(31);
    f[..n].copy_from_slice(&name[..n]);
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ControlPoints {
        ControlPoints {
            points: vec![
                ControlPoint {
                    word0: 0,
                    node: 2,
                    carrier: 2,
                    position: [0.5, 0.0, 1.0],
                    direction: [0.0, 3.0, 4.0],
                    name_field: name_field(b"CameraCenter"),
                },
                ControlPoint {
                    word0: 0x8000_0000,
                    node: 0,
                    carrier: -1,
                    position: [-1.0, 2.0, 0.25],
                    direction: [1.0, 0.0, 0.0],
                    name_field: name_field(&[0xE3, 0xEE, 0xEB]),
                },
            ],
        }
    }

    #[test]
    fn round_trip_and_fields() {
        let c = sample();
        let bytes = write(&c);
        assert_eq!(bytes.len(), 4 + 68 * 2);
        let back = read(&bytes).unwrap();
        assert_eq!(back, c);
        assert_eq!(back.points[0].name(), "CameraCenter");
        assert_eq!(back.points[1].name(), "гол");
        assert_eq!(back.points[0].magnitude(), 5.0);
        assert_eq!(write(&back), bytes);
    }

    #[test]
    fn wrong_sizes_are_refused() {
        let bytes = write(&sample());
        let e = read(&bytes[..bytes.len() - 1]).unwrap_err();
        assert_eq!(e.rule, "cpt.size");
        let mut long = bytes.clone();
        long.push(0);
        let e = read(&long).unwrap_err();
        assert!(e.detail.contains("1 left over"), "{e}");
        let mut huge = bytes;
        huge[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        let e = read(&huge).unwrap_err();
        assert!(e.detail.contains("do not fit"), "{e}");
        assert_eq!(read(&[]).unwrap_err().rule, "cpt.size");
        assert_eq!(read(&0u32.to_le_bytes()).unwrap(), ControlPoints::default());
    }
}
