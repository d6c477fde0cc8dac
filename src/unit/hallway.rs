//! Res17 "hall way": a building's interior path graph
//! (unit-files-notes §4.1). The counts come from the stream's directory
//! entry — vertices = attr1, links = attr2 — and `size = 20·V + 40·L`.
//!
//! ```text
//! V × 20 bytes: f32[3] position in the frame of the joint node, u32 flags, u32 joint node
//! L × 40 bytes: u32 start, u32 end, u32 tail[8]
//! ```
//!
//! The model keeps the stream's raw bytes for its round trip; this reader
//! gives the graph to the assembled building's extras (mission-notes §5.5:
//! a hosted unit stands at a hall-way vertex).

use serde_json::{json, Value};

use super::bytes::Cursor;
use super::UnitError;

/// Res17's stream type id.
pub const STREAM: u32 = 17;
/// Bytes of one vertex.
pub const VERTEX_SIZE: usize = 20;
/// Bytes of one link.
pub const LINK_SIZE: usize = 40;

/// One hall-way vertex (§4.1).
#[derive(Debug, Clone, PartialEq)]
pub struct Vertex {
    /// Position in the frame of [`Vertex::node`], game axes.
    pub position: [f32; 3],
    /// Flags (`0x800` factory creation place, `0x40` control pod, ...).
    pub flags: u32,
    /// The joint node (Res1 index) the position is in.
    pub node: u32,
}

/// One link: start and end vertex, then eight tail words (§4.1: words 1
/// and 5 gate the link).
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    /// Start vertex.
    pub start: u32,
    /// End vertex.
    pub end: u32,
    /// The eight tail words as stored.
    pub tail: [u32; 8],
}

/// A whole Res17 stream.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Hallway {
    /// Vertices in stream order.
    pub vertices: Vec<Vertex>,
    /// Links in stream order.
    pub links: Vec<Link>,
}

/// Reads a Res17 payload of `vertices` vertices and `links` links (its
/// directory entry's attr1 and attr2).
///
/// # Errors
/// `res17.size` when the payload is not exactly `20·V + 40·L` bytes (the
/// counts are checked against the size before anything is allocated).
pub fn read(data: &[u8], vertices: u32, links: u32) -> Result<Hallway, UnitError> {
    let mut c = Cursor::new(data, "res17.size");
    let (nv, nl) = (vertices as usize, links as usize);
    c.check_fits(nv, VERTEX_SIZE, "vertices")?;
    let mut h = Hallway {
        vertices: Vec::with_capacity(nv),
        links: Vec::new(),
    };
    for i in 0..nv {
        let what = format!("vertex {i}");
        h.vertices.push(Vertex {
            position: c.f32x3(&what)?,
            flags: c.u32(&what)?,
            node: c.u32(&what)?,
        });
    }
    c.check_fits(nl, LINK_SIZE, "links")?;
    h.links.reserve_exact(nl);
    for i in 0..nl {
        let what = format!("link {i}");
        let (start, end) = (c.u32(&what)?, c.u32(&what)?);
        let mut tail = [0u32; 8];
        for t in &mut tail {
            *t = c.u32(&what)?;
        }
        h.links.push(Link { start, end, tail });
    }
    c.finish("20·V + 40·L")?;
    Ok(h)
}

impl Hallway {
    /// The graph as an extras object: `{"vertices": [{"index", "node",
    /// "position" (game axes, in the node's frame), "flags"}], "links":
    /// [{"start", "end", "tail"}]}`.
    pub fn to_extras(&self) -> Value {
        let v: Vec<Value> = self
            .vertices
            .iter()
            .enumerate()
            .map(|(i, v)| json!({"index": i, "node": v.node, "position": v.position, "flags": v.flags}))
            .collect();
        let l: Vec<Value> = self
            .links
            .iter()
            .map(|l| json!({"start": l.start, "end": l.end, "tail": l.tail}))
            .collect();
        json!({"vertices": v, "links": l})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(v: &[([f32; 3], u32, u32)], l: &[(u32, u32)]) -> Vec<u8> {
        let mut b = Vec::new();
        for (p, f, n) in v {
            p.iter().for_each(|x| b.extend(x.to_le_bytes()));
            b.extend(f.to_le_bytes());
            b.extend(n.to_le_bytes());
        }
        for (s, e) in l {
            b.extend(s.to_le_bytes());
            b.extend(e.to_le_bytes());
            (0..8).for_each(|k| b.extend((if k == 1 { 1u32 } else { u32::MAX }).to_le_bytes()));
        }
        b
    }

    #[test]
    fn reads_vertices_and_links_exactly() {
        let b = stream(
            &[([1.0, 2.0, 3.0], 0x800, 2), ([0.5, 0.0, -1.0], 0x40, 0)],
            &[(0, 1)],
        );
        let h = read(&b, 2, 1).unwrap();
        assert_eq!(
            h.vertices[0],
            Vertex {
                position: [1.0, 2.0, 3.0],
                flags: 0x800,
                node: 2
            }
        );
        assert_eq!(h.vertices[1].node, 0);
        assert_eq!(
            (h.links[0].start, h.links[0].end, h.links[0].tail[1]),
            (0, 1, 1)
        );
        let x = h.to_extras();
        assert_eq!(x["vertices"][1]["flags"], 0x40);
        assert_eq!(x["links"][0]["tail"][0], u32::MAX);
    }

    #[test]
    fn wrong_sizes_are_refused_before_allocating() {
        let b = stream(&[([0.0; 3], 0, 0)], &[]);
        for (v, l) in [(2, 0), (1, 1), (0, 0), (u32::MAX, u32::MAX)] {
            assert_eq!(read(&b, v, l).unwrap_err().rule, "res17.size", "{v} {l}");
        }
    }
}
