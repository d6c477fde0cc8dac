//! `cargo bench --bench terrain`: per map of `../shared/corpus/MAPS`, the
//! time of read (Land.msh + siblings, strict validation, material rows),
//! glTF export with embedded textures (GLB bytes), and the way back
//! (parse the GLB, import against the base, encode). Single thread; prints
//! the best and median of 15 runs and the peak RSS.

use std::path::Path;
mod common;

use std::time::{Duration, Instant};

use common::peak_rss_kb;

use mshgltf::material::Libraries;
use mshgltf::terrain::{export, import, read, source::TerrainSource, write, Mode};

fn stats(mut v: Vec<Duration>) -> (f64, f64) {
    v.sort();
    (v[0].as_secs_f64() * 1e3, v[v.len() / 2].as_secs_f64() * 1e3)
}

fn main() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus"));
    if !root.is_dir() {
        println!("SKIP: {} not found", root.display());
        return;
    }
    let libs = Libraries::load(root).expect("libraries");
    let mut maps: Vec<_> = std::fs::read_dir(root.join("MAPS"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    maps.sort();
    println!(
        "{:<8} {:>8} {:>7} {:>22} {:>22} {:>22} {:>22}",
        "map",
        "faces",
        "glb KB",
        "read best/med ms",
        "export best/med ms",
        "back best/med ms",
        "total best/med ms"
    );
    for dir in maps {
        let msh = dir.join("Land.msh");
        let base_bytes = std::fs::read(&msh).unwrap();
        let (mut tr, mut te, mut tb, mut tt) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut glb_len = 0;
        let mut faces = 0;
        for _ in 0..15 {
            let t0 = Instant::now();
            let src = TerrainSource::load(&msh, Mode::Strict, Some(&libs)).unwrap();
            let t1 = Instant::now();
            let glb =
                export::to_glb(&export::export(&src, Some(&libs), &Default::default())).unwrap();
            let t2 = Instant::now();
            let doc = mshgltf::gltf_import::parse(&glb, None).unwrap();
            let base = read::decode(&base_bytes).unwrap();
            let (land, _) = import::import_with_base(&doc, &base).unwrap();
            let back = write::encode(&land).unwrap();
            let t3 = Instant::now();
            assert!(back == base_bytes, "round trip not identical");
            glb_len = glb.len();
            faces = src.land.faces.len();
            tr.push(t1 - t0);
            te.push(t2 - t1);
            tb.push(t3 - t2);
            tt.push(t3 - t0);
        }
        let f = |v: Vec<Duration>| {
            let (b, m) = stats(v);
            format!("{b:.2} / {m:.2}")
        };
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        println!(
            "{name:<8} {faces:>8} {:>7} {:>22} {:>22} {:>22} {:>22}",
            glb_len / 1024,
            f(tr),
            f(te),
            f(tb),
            f(tt)
        );
    }
    println!("peak RSS {} MB", peak_rss_kb() / 1024);
}
