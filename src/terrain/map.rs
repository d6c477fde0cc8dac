//! Land.map (ArealMap, NRes entry type 12; terrain-notes §2): the
//! navigation polygons with twin edge links, and the 128×128 lookup grid.
//!
//! [`decode`] → [`ArealMap`] → [`encode`] gives the bytes back for every
//! canonical file. The areal count is the entry's attr1; the payload is
//! consumed exactly. Sub-blocks (B > 0) are unsupported (framing disputed).
//! What the areals hold (ground heights, winding, twin links, the lookup
//! grid) and the reader's warning checks of it are [`super::areals`].

use super::TerrainError;
use crate::nres;

/// NRes type id of the ArealMap entry.
pub const TYPE_AREAL_MAP: u32 = 12;
/// Size of the fixed areal header.
pub const AREAL_HEADER: usize = 0x38;

/// One areal (terrain-notes §2.2).
#[derive(Debug, Clone, PartialEq)]
pub struct Areal {
    /// +0x00: centre x, y, then +0x08 z and +0x0C reserved.
    pub anchor: [f32; 4],
    /// +0x10 polygon area.
    pub area: f32,
    /// +0x14 normal ((0, 0, 1) in retail).
    pub normal: [f32; 3],
    /// +0x20..+0x2F: word0 (walkable), word1, word2 (class; 0xF0 bits = lake), word3.
    pub words: [u32; 4],
    /// Polygon vertices, counter-clockwise.
    pub vertices: Vec<[f32; 3]>,
    /// Edge links `(area_ref, edge_ref)`; `(-1, -1)` = outside edge.
    pub links: Vec<[i32; 2]>,
}

/// A decoded Land.map.
#[derive(Debug, Clone, PartialEq)]
pub struct ArealMap {
    /// Entry name bytes.
    pub name: Vec<u8>,
    /// Entry attr2 and attr3 as stored.
    pub attr23: [u32; 2],
    /// The areals.
    pub areals: Vec<Areal>,
    /// Grid cells along X and Y.
    pub cells_xy: [u32; 2],
    /// Per cell (x outer), the areals overlapping it.
    pub cells: Vec<Vec<u16>>,
}

struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize, what: &str) -> Result<&[u8], TerrainError> {
        if self.b.len() - self.at < n {
            return Err(TerrainError::stream(
                "map.size",
                TYPE_AREAL_MAP,
                format!(
                    "{what} at byte {} needs {n} bytes, {} left",
                    self.at,
                    self.b.len() - self.at
                ),
            ));
        }
        self.at += n;
        Ok(&self.b[self.at - n..self.at])
    }
    fn u32(&mut self, what: &str) -> Result<u32, TerrainError> {
        Ok(u32::from_le_bytes(
            self.take(4, what)?.try_into().expect("4"),
        ))
    }
    fn u16(&mut self, what: &str) -> Result<u16, TerrainError> {
        Ok(u16::from_le_bytes(
            self.take(2, what)?.try_into().expect("2"),
        ))
    }
}

fn f32s<const N: usize>(b: &[u8]) -> [f32; N] {
    std::array::from_fn(|k| f32::from_le_bytes(b[4 * k..4 * k + 4].try_into().expect("4")))
}

fn areal(c: &mut Cursor<'_>, i: usize, count: usize) -> Result<Areal, TerrainError> {
    let h = c.take(AREAL_HEADER, "areal header")?;
    let head: [f32; 8] = f32s(h);
    let words: [u32; 6] = std::array::from_fn(|k| {
        u32::from_le_bytes(h[0x20 + 4 * k..0x24 + 4 * k].try_into().expect("4"))
    });
    let (nv, nb) = (words[4] as usize, words[5] as usize);
    if nb > 0 {
        return Err(TerrainError::record(
            "map.subblocks",
            TYPE_AREAL_MAP,
            i,
            format!("{nb} sub-blocks: framing disputed, unsupported"),
        ));
    }
    let vb = c.take(nv.saturating_mul(12), "areal vertices")?;
    let vertices = vb.chunks_exact(12).map(f32s::<3>).collect();
    let lb = c.take(nv * 8, "areal links")?;
    let links: Vec<[i32; 2]> = lb
        .chunks_exact(8)
        .map(|r| [0, 4].map(|o| i32::from_le_bytes(r[o..o + 4].try_into().expect("4"))))
        .collect();
    if let Some(l) = links
        .iter()
        .find(|l| !(l[0] == -1 && l[1] == -1) && (l[0] < 0 || l[0] as usize >= count || l[1] < 0))
    {
        return Err(TerrainError::record(
            "map.area_ref",
            TYPE_AREAL_MAP,
            i,
            format!("edge link {l:?} out of range ({count} areals)"),
        ));
    }
    Ok(Areal {
        anchor: [head[0], head[1], head[2], head[3]],
        area: head[4],
        normal: [head[5], head[6], head[7]],
        words: [words[0], words[1], words[2], words[3]],
        vertices,
        links,
    })
}

fn grid(c: &mut Cursor<'_>, count: usize) -> Result<([u32; 2], Vec<Vec<u16>>), TerrainError> {
    let xy = [c.u32("cellsX")?, c.u32("cellsY")?];
    let n = xy[0] as usize * xy[1] as usize;
    if n == 0 || n > (c.b.len() - c.at) / 2 {
        return Err(TerrainError::stream(
            "map.grid",
            TYPE_AREAL_MAP,
            format!("grid {}x{} does not fit the payload", xy[0], xy[1]),
        ));
    }
    let mut cells = Vec::with_capacity(n);
    for k in 0..n {
        let hits = c.u16("cell count")?;
        if hits >= 1024 {
            return Err(TerrainError::record(
                "map.hit_count",
                TYPE_AREAL_MAP,
                k,
                format!("cell lists {hits} areals (< 1024)"),
            ));
        }
        let b = c.take(usize::from(hits) * 2, "cell list")?;
        let ids: Vec<u16> = b
            .chunks_exact(2)
            .map(|r| u16::from_le_bytes([r[0], r[1]]))
            .collect();
        if let Some(id) = ids.iter().find(|&&id| usize::from(id) >= count) {
            return Err(TerrainError::record(
                "map.area_id",
                TYPE_AREAL_MAP,
                k,
                format!("areal {id} >= count {count}"),
            ));
        }
        cells.push(ids);
    }
    Ok((xy, cells))
}

/// Decodes Land.map bytes (terrain-notes §5.2 rule 7).
///
/// # Errors
/// `nres.*`; `map.entry` (not exactly one type-12 entry, attr1 = 0),
/// `map.size` (a record runs past the payload), `map.subblocks`,
/// `map.area_ref`, `map.grid`, `map.hit_count`, `map.area_id`,
/// `map.trailing` (payload not consumed exactly).
pub fn decode(bytes: &[u8]) -> Result<ArealMap, TerrainError> {
    let a = nres::read(bytes, nres::Mode::Tolerant)?;
    let [e] = a.entries.as_slice() else {
        return Err(TerrainError::file(
            "map.entry",
            format!("{} entries, expected one ArealMap", a.entries.len()),
        ));
    };
    if e.type_id != TYPE_AREAL_MAP || e.attr1 == 0 {
        return Err(TerrainError::file(
            "map.entry",
            format!(
                "entry type {} attr1 {}, expected type 12 with areals",
                e.type_id, e.attr1
            ),
        ));
    }
    let count = e.attr1 as usize;
    if count > e.data.len() / AREAL_HEADER {
        return Err(TerrainError::stream(
            "map.size",
            TYPE_AREAL_MAP,
            format!("{count} areals cannot fit {} bytes", e.data.len()),
        ));
    }
    let mut c = Cursor { b: e.data, at: 0 };
    let areals = (0..count)
        .map(|i| areal(&mut c, i, count))
        .collect::<Result<Vec<_>, _>>()?;
    let (cells_xy, cells) = grid(&mut c, count)?;
    if c.at != e.data.len() {
        return Err(TerrainError::stream(
            "map.trailing",
            TYPE_AREAL_MAP,
            format!("{} bytes after the grid", e.data.len() - c.at),
        ));
    }
    Ok(ArealMap {
        name: e.name.to_vec(),
        attr23: [e.attr2, e.attr3],
        areals,
        cells_xy,
        cells,
    })
}

/// Encodes the map as a canonical NRes file with one type-12 entry.
///
/// # Errors
/// `nres.name` / `nres.total_size` from the container writer.
pub fn encode(m: &ArealMap) -> Result<Vec<u8>, TerrainError> {
    let mut d = Vec::new();
    let f =
        |d: &mut Vec<u8>, v: &[f32]| v.iter().for_each(|x| d.extend_from_slice(&x.to_le_bytes()));
    for a in &m.areals {
        f(&mut d, &a.anchor);
        f(&mut d, &[a.area]);
        f(&mut d, &a.normal);
        let w = [
            a.words[0],
            a.words[1],
            a.words[2],
            a.words[3],
            a.vertices.len() as u32,
            0,
        ];
        w.iter().for_each(|x| d.extend_from_slice(&x.to_le_bytes()));
        a.vertices.iter().for_each(|v| f(&mut d, v));
        a.links
            .iter()
            .flatten()
            .for_each(|x| d.extend_from_slice(&x.to_le_bytes()));
    }
    m.cells_xy
        .iter()
        .for_each(|x| d.extend_from_slice(&x.to_le_bytes()));
    for c in &m.cells {
        d.extend_from_slice(&(c.len() as u16).to_le_bytes());
        c.iter().for_each(|x| d.extend_from_slice(&x.to_le_bytes()));
    }
    let e = nres::Entry {
        type_id: TYPE_AREAL_MAP,
        attr1: m.areals.len() as u32,
        attr2: m.attr23[0],
        attr3: m.attr23[1],
        name: &m.name,
        data: &d,
    };
    Ok(nres::write(&[e])?)
}
