//! `cargo bench --bench corpus`: decode+validate and glTF export throughput
//! over every valid model of `../shared/corpus` (single thread, thread CPU
//! time: `benches/common`), plus the
//! round trip (msh2gltf then gltf2msh --base when available).
//! Prints the best and median of several runs, MB/s, models/s and peak RSS.

mod common;

use std::path::Path;
use std::time::Duration;

use common::{glb, models, peak_rss_kb, time};

use mshgltf::convert::ConvertOptions;
use mshgltf::msh::read::{decode, Mode};

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    if !root.is_dir() {
        println!("no ../shared/corpus: nothing to benchmark");
        return;
    }
    let ms = models(&root);
    let bytes: usize = ms.iter().map(|m| m.1.len()).sum();
    let mb = bytes as f64 / 1e6;
    println!("{} models, {:.1} MB", ms.len(), mb);

    let (best, med) = time(15, || {
        for (_, b, _) in &ms {
            std::hint::black_box(decode(b, Mode::Strict).unwrap());
        }
    });
    report("decode+validate", best, med, mb, ms.len());

    // The SHA-256 msh2gltf writes into every GLB's scene extras
    // (gltf-mapping.md "Extras"), against the decode above (issue 28).
    let (best, med) = time(15, || {
        for (_, b, _) in &ms {
            std::hint::black_box(mshgltf::convert::sha256_hex(b));
        }
    });
    report("sha256 of the model bytes", best, med, mb, ms.len());

    let opts = ConvertOptions::default();
    let (best, med) = time(7, || {
        for (s, b, w) in &ms {
            std::hint::black_box(glb(s, b, w.as_deref(), &opts));
        }
    });
    report(
        "decode+export (GLB bytes, no textures)",
        best,
        med,
        mb,
        ms.len(),
    );

    // gltf2msh --base on the unedited GLBs: parse, match, rebuild, encode.
    let glbs: Vec<(Vec<u8>, mshgltf::msh::Model)> = ms
        .iter()
        .map(|(s, b, w)| {
            (
                glb(s, b, w.as_deref(), &opts),
                decode(b, Mode::Strict).unwrap().model,
            )
        })
        .collect();
    let iopts = mshgltf::gltf_import::ImportOptions::default();
    let (best, med) = time(5, || {
        for (glb, base) in &glbs {
            let doc = mshgltf::gltf_import::parse(glb, None).unwrap();
            let out = mshgltf::gltf_import::import_with_base(&doc, base, &iopts).unwrap();
            std::hint::black_box(mshgltf::msh::encode(&out.model).unwrap());
        }
    });
    report(
        "gltf2msh --base (GLB -> MSH bytes)",
        best,
        med,
        mb,
        ms.len(),
    );
    println!("peak RSS: {:.1} MB", peak_rss_kb() as f64 / 1024.0);
}

fn report(what: &str, best: Duration, med: Duration, mb: f64, n: usize) {
    println!(
        "{what}: best {:.1} ms, median {:.1} ms; {:.0} MB/s, {:.0} models/s (best)",
        best.as_secs_f64() * 1e3,
        med.as_secs_f64() * 1e3,
        mb / best.as_secs_f64(),
        n as f64 / best.as_secs_f64()
    );
}
