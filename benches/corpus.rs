//! `cargo bench --bench corpus`: decode+validate and glTF export throughput
//! over every valid model of `../shared/corpus` (single thread), plus the
//! round trip (msh2gltf then gltf2msh --base when available).
//! Prints the best and median of several runs, MB/s, models/s and peak RSS.

use std::path::Path;
use std::time::{Duration, Instant};

use mshgltf::convert::{convert, ConvertOptions, ModelRef};
use mshgltf::msh::read::{decode, Mode};
use mshgltf::{nres, source};

fn models(root: &Path) -> Vec<(String, Vec<u8>, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    let mut files = Vec::new();
    fn walk(d: &Path, f: &mut Vec<std::path::PathBuf>) {
        let mut es: Vec<_> = std::fs::read_dir(d).unwrap().flatten().collect();
        es.sort_by_key(|e| e.path());
        for e in es {
            if e.path().is_dir() {
                if e.file_name() != "bad" && e.file_name() != "MAPS" {
                    walk(&e.path(), f);
                }
            } else {
                f.push(e.path());
            }
        }
    }
    walk(root, &mut files);
    for f in files {
        let bytes = std::fs::read(&f).unwrap();
        match source::classify(&bytes) {
            source::FileKind::Model => out.push((f.display().to_string(), bytes, None)),
            source::FileKind::ModelArchive => {
                let a = nres::read(&bytes, nres::Mode::Tolerant).unwrap();
                for i in source::model_entries(&a) {
                    let e = &a.entries[i];
                    out.push((
                        format!("{}:{}", f.display(), source::decode_name(e.name)),
                        e.data.to_vec(),
                        source::find_wear(&a, e.name).map(|w| w.to_vec()),
                    ));
                }
            }
            _ => {}
        }
    }
    out
}

fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn time(runs: usize, mut f: impl FnMut()) -> (Duration, Duration) {
    let mut v: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    v.sort();
    (v[0], v[v.len() / 2])
}

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
    println!("peak RSS: {:.1} MB", peak_rss_mb());
}

/// msh2gltf of one model (no textures) to GLB bytes.
fn glb(source: &str, bytes: &[u8], wear: Option<&[u8]>, opts: &ConvertOptions) -> Vec<u8> {
    let m = ModelRef {
        source: source.to_string(),
        stem: "m".into(),
        bytes,
        wear,
    };
    let c = convert(&m, None, opts).unwrap();
    mshgltf::gltf_export::to_glb(&c.exported).unwrap()
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
