//! `cargo bench --bench new_map`: a new map of the game's largest size
//! (16×16 squares, map side 2490 units: the largest retail side) made from
//! its grid glTF (`gltf2msh --new-map`'s work without the file writes:
//! parse the GLB, read the grid, build every Land.msh stream and Land.map,
//! encode both and read them back strictly), beside a baseline in the same
//! run: reading that map back as msh2gltf does (decode + strict
//! validation of Land.msh, decode + check of Land.map). Two grid sizes:
//! 6×6 quads a square (9,409 vertices, about the largest retail map) and
//! 7×7 (12,769 vertices, 50,176 faces: the largest under the 65,535-face
//! limit with LOD 1 a copy). Single thread; best and median of 10 runs and
//! the peak RSS after each step.

mod common;

use common::{peak_rss_kb, time};

use mshgltf::terrain::author::{self, GridSpec, HeightGrid, Paint, Palette};
use mshgltf::terrain::ir::NO_TEX2;
use mshgltf::terrain::{areals, map, read, validate, Mode};

fn glb(json: &serde_json::Value, bin: &[u8]) -> Vec<u8> {
    let mut j = serde_json::to_vec(json).unwrap();
    while !j.len().is_multiple_of(4) {
        j.push(b' ');
    }
    let total = 28 + j.len() + bin.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(j.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&j);
    out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(bin);
    out
}

/// A sculpted and painted grid: rolling hills, three materials and a
/// two-material band.
fn grid(quads: usize) -> HeightGrid {
    let spec = GridSpec {
        squares: 16,
        quads,
        side: 2490.0,
    };
    let p = |tex1, tex2| Paint {
        tex1,
        tex2,
        water: false,
        bed: false,
    };
    let mut g = HeightGrid::flat(spec, 0.0, p(1, NO_TEX2));
    let n = spec.n();
    for i in 0..=n {
        for j in 0..=n {
            let (x, y) = (spec.coord(i), spec.coord(j));
            g.z[i * (n + 1) + j] = 40.0 + 30.0 * (x / 300.0).sin() * (y / 410.0).cos();
        }
    }
    for (q, f) in g.quads.iter_mut().enumerate() {
        let paint = match (q / n) % 12 {
            0..=3 => p(1, NO_TEX2),
            4 => p(1, 2),
            5..=8 => p(2, NO_TEX2),
            _ => p(3, NO_TEX2),
        };
        f.iter_mut().for_each(|t| t.1 = paint);
    }
    g
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let palette = Palette {
        rows: ["B_S0", "L02", "L04", "L33"].map(String::from).to_vec(),
    };
    println!(
        "{:<14} {:>8} {:>7} {:>8} {:>24} {:>24} {:>12}",
        "grid",
        "vertices",
        "faces",
        "glb KB",
        "new map best/med ms",
        "read back best/med ms",
        "peak RSS KB"
    );
    for quads in [6, 7] {
        let (json, bin) = author::to_gltf(&grid(quads), &palette);
        let bytes = glb(&json, &bin);
        let rss0 = peak_rss_kb();
        let make = || {
            let doc = mshgltf::gltf_import::parse(&bytes, None).unwrap();
            let g = author::read_grid(&doc, &palette).unwrap();
            author::make(g).unwrap()
        };
        let made = make();
        let (mb, mm) = time(10, make);
        let rss1 = peak_rss_kb();
        let back = || {
            let land = read::decode(&made.msh).unwrap();
            validate::validate(&land, Mode::Strict).unwrap();
            let m = map::decode(&made.map).unwrap();
            areals::check(&m).len()
        };
        let (rb, rm) = time(10, back);
        println!(
            "16x16 x {quads}x{quads:<4} {:>8} {:>7} {:>8} {:>11.1} / {:>9.1} {:>11.1} / {:>9.1} {:>12}",
            made.counts.0,
            made.counts.1,
            bytes.len() / 1024,
            ms(mb),
            ms(mm),
            ms(rb),
            ms(rm),
            format!("{rss0}->{rss1}")
        );
    }
}
