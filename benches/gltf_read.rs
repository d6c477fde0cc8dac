//! `cargo bench --bench gltf_read`: the project's glTF reader against the
//! `gltf` crate, side by side in one process, single thread (issue 28,
//! items 5 and 6; figures in docs/development.md "Benchmarks").
//!
//! 1. **Read**: every `*.glb` under `$MSH_BENCH_GLB_DIR` (default
//!    `/tmp/mshgltf-bench-export`, made by `msh2gltf ../shared/corpus DIR`):
//!    parse the GLB and read every mesh primitive's POSITION, NORMAL,
//!    TEXCOORD_0/1 and indices and every animation sampler's input and
//!    output as f32/u32, with [`mshgltf::gltf_import::parse`] +
//!    `GltfFile::floats`/`indices` and with `gltf::Gltf::from_slice` + the
//!    crate's primitive and channel readers. Both sides sum what they read
//!    and the sums must agree (same values, same count).
//! 2. **`gltf2msh --base`**: every valid model of `../shared/corpus`
//!    converted in memory to a GLB (no textures), then parse + import
//!    against its base + encode, per file, against the crate's read of the
//!    same GLB.
//!
//! Floors of the read: the JSON chunks into a `serde_json::Value`, into
//! gltf-json's typed `Root` (what a fully typed document costs), and
//! scanned without building anything.
//!
//! Prints the best and median thread CPU time of several rounds and the
//! ratios (project / crate, lower is faster). The two sides of each
//! comparison run in turns, round by round (`common::time_pair`), and the
//! median of the per-round ratios is printed too: on a shared machine it
//! moves least between runs.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{time, time_pair};

use mshgltf::convert::ConvertOptions;
use mshgltf::gltf_import::read::{arr, idx};
use mshgltf::msh::read::{decode, Mode};
use serde_json::Value;

/// What one side read: values, and their sum (f64) to compare the sides.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Sum {
    values: usize,
    total: f64,
}

impl Sum {
    fn f(&mut self, v: impl IntoIterator<Item = f32>) {
        for x in v {
            self.values += 1;
            self.total += f64::from(x);
        }
    }
    fn u(&mut self, v: impl IntoIterator<Item = u32>) {
        for x in v {
            self.values += 1;
            self.total += f64::from(x);
        }
    }
}

/// Components of an animation output accessor (VEC3, VEC4 or SCALAR).
fn ncomp(doc: &mshgltf::gltf_import::GltfFile, a: usize) -> usize {
    match doc.accessor_def(a).ok().and_then(|x| x.get("type")) {
        Some(Value::String(t)) if t == "VEC3" => 3,
        Some(Value::String(t)) if t == "VEC4" => 4,
        _ => 1,
    }
}

/// The project's reader: parse, then every value the import reads.
fn ours(glb: &[u8]) -> Sum {
    let doc = mshgltf::gltf_import::parse(glb, None).unwrap();
    let mut s = Sum::default();
    for m in doc.meshes() {
        for p in arr(m, "primitives") {
            let at = p.get("attributes").unwrap();
            for (k, n) in [
                ("POSITION", 3),
                ("NORMAL", 3),
                ("TEXCOORD_0", 2),
                ("TEXCOORD_1", 2),
            ] {
                if let Some(a) = idx(at, k) {
                    s.f(doc.floats(a, n, k).unwrap());
                }
            }
            if let Some(a) = idx(p, "indices") {
                s.u(doc.indices(a).unwrap());
            }
        }
    }
    for an in doc.animations() {
        for sm in arr(an, "samplers") {
            let (i, o) = (idx(sm, "input").unwrap(), idx(sm, "output").unwrap());
            s.f(doc.floats(i, 1, "input").unwrap());
            s.f(doc.floats(o, ncomp(&doc, o), "output").unwrap());
        }
    }
    s
}

/// The `gltf` crate: `Gltf::from_slice`, then the same values through its
/// readers. Samplers are read through their first channel (the exports
/// give every sampler one channel).
fn theirs(glb: &[u8]) -> Sum {
    use gltf::animation::util::ReadOutputs;
    let g = gltf::Gltf::from_slice(glb).unwrap();
    let blob = g.blob.as_deref();
    let get = |b: gltf::Buffer<'_>| match b.source() {
        gltf::buffer::Source::Bin => blob,
        gltf::buffer::Source::Uri(_) => None,
    };
    let mut s = Sum::default();
    for m in g.meshes() {
        for p in m.primitives() {
            let r = p.reader(get);
            if let Some(v) = r.read_positions() {
                s.f(v.flatten());
            }
            if let Some(v) = r.read_normals() {
                s.f(v.flatten());
            }
            for set in 0..2 {
                if let Some(v) = r.read_tex_coords(set) {
                    s.f(v.into_f32().flatten());
                }
            }
            if let Some(v) = r.read_indices() {
                s.u(v.into_u32());
            }
        }
    }
    for an in g.animations() {
        for ch in an.channels() {
            let r = ch.reader(get);
            s.f(r.read_inputs().unwrap());
            match r.read_outputs().unwrap() {
                ReadOutputs::Translations(v) | ReadOutputs::Scales(v) => s.f(v.flatten()),
                ReadOutputs::Rotations(v) => s.f(v.into_f32().flatten()),
                ReadOutputs::MorphTargetWeights(v) => s.f(v.into_f32()),
            }
        }
    }
    s
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn line(what: &str, (best, med): (Duration, Duration), base: Option<(Duration, Duration)>) {
    let ratio = base.map_or(String::new(), |(b, m)| {
        format!(
            "; {:.2}x best, {:.2}x median",
            best.as_secs_f64() / b.as_secs_f64(),
            med.as_secs_f64() / m.as_secs_f64()
        )
    });
    println!(
        "{what:<44} best {:8.1} ms, median {:8.1} ms{ratio}",
        ms(best),
        ms(med)
    );
}

/// Part 1: the GLBs of a corpus export.
fn read_export(dir: &Path) {
    let files = common::files_under(dir, &[], &|p| p.extension().is_some_and(|e| e == "glb"));
    if files.is_empty() {
        println!(
            "read: no *.glb under {} (make it: msh2gltf ../shared/corpus {0}; or set MSH_BENCH_GLB_DIR)",
            dir.display()
        );
        return;
    }
    let data: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    let bytes: usize = data.iter().map(Vec::len).sum();
    let (a, b) = (data.iter().map(|g| ours(g)), data.iter().map(|g| theirs(g)));
    let (sa, sb) = a
        .zip(b)
        .fold((Sum::default(), Sum::default()), |(x, y), (p, q)| {
            (
                Sum {
                    values: x.values + p.values,
                    total: x.total + p.total,
                },
                Sum {
                    values: y.values + q.values,
                    total: y.total + q.total,
                },
            )
        });
    assert_eq!(sa.values, sb.values, "both sides read the same values");
    assert!(
        (sa.total - sb.total).abs() <= 1e-9 * sa.total.abs().max(1.0),
        "sums differ: {} vs {}",
        sa.total,
        sb.total
    );
    println!(
        "read: {} GLBs, {:.1} MB, {} values (sums agree) in {}",
        data.len(),
        bytes as f64 / 1e6,
        sa.values,
        dir.display()
    );
    let rounds = 15;
    let (crate_t, ours_t, read_ratio) = time_pair(
        rounds,
        || {
            for g in &data {
                std::hint::black_box(theirs(g));
            }
        },
        || {
            for g in &data {
                std::hint::black_box(ours(g));
            }
        },
    );
    let (crate_parse, parse_t, parse_ratio) = time_pair(
        rounds,
        || {
            for g in &data {
                std::hint::black_box(gltf::Gltf::from_slice(g).unwrap());
            }
        },
        || {
            for g in &data {
                std::hint::black_box(mshgltf::gltf_import::parse(g, None).unwrap());
            }
        },
    );
    // The floor of a reader that keeps the document as a serde_json::Value:
    // the JSON chunk alone parsed into the tree (and dropped).
    let json: Vec<&[u8]> = data.iter().map(|g| json_chunk(g)).collect();
    let value_t = time(rounds, || {
        for j in &json {
            std::hint::black_box(serde_json::from_slice::<Value>(j).unwrap());
        }
    });
    // The floor of a typed document: the same chunks deserialised into
    // gltf-json's `Root` (extras kept raw), and of any reader: a scan that
    // builds nothing.
    let typed_t = time(rounds, || {
        for j in &json {
            std::hint::black_box(serde_json::from_slice::<gltf_json::Root>(j).unwrap());
        }
    });
    let scan_t = time(rounds, || {
        for j in &json {
            std::hint::black_box(serde_json::from_slice::<serde::de::IgnoredAny>(j).unwrap());
        }
    });
    line("gltf crate: from_slice + readers", crate_t, None);
    line("project: parse + floats/indices", ours_t, Some(crate_t));
    paired(read_ratio);
    line("gltf crate: from_slice only", crate_parse, None);
    line("project: parse only", parse_t, Some(crate_parse));
    paired(parse_ratio);
    line(
        "serde_json::Value of the JSON chunk only",
        value_t,
        Some(crate_parse),
    );
    line(
        "gltf-json Root of the JSON chunk only",
        typed_t,
        Some(crate_parse),
    );
    line(
        "JSON chunk scanned only (IgnoredAny)",
        scan_t,
        Some(crate_parse),
    );
}

/// The JSON chunk of a GLB (glTF 2.0 §4.4: the first chunk).
fn json_chunk(glb: &[u8]) -> &[u8] {
    let len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    &glb[20..20 + len]
}

/// Part 2: `gltf2msh --base` per file against the crate's read.
fn base_path(root: &Path) {
    let opts = ConvertOptions::default();
    let pairs: Vec<(Vec<u8>, mshgltf::msh::Model)> = common::models(root)
        .iter()
        .map(|(s, b, w)| {
            (
                common::glb(s, b, w.as_deref(), &opts),
                decode(b, Mode::Strict).unwrap().model,
            )
        })
        .collect();
    let bytes: usize = pairs.iter().map(|p| p.0.len()).sum();
    println!(
        "--base: {} models as GLBs in memory, {:.1} MB",
        pairs.len(),
        bytes as f64 / 1e6
    );
    let iopts = mshgltf::gltf_import::ImportOptions::default();
    let (crate_t, base_t, ratio) = time_pair(
        7,
        || {
            for (g, _) in &pairs {
                std::hint::black_box(theirs(g));
            }
        },
        || {
            for (g, base) in &pairs {
                let doc = mshgltf::gltf_import::parse(g, None).unwrap();
                let out = mshgltf::gltf_import::import_with_base(&doc, base, &iopts).unwrap();
                std::hint::black_box(mshgltf::msh::encode(&out.model).unwrap());
            }
        },
    );
    line("gltf crate: from_slice + readers", crate_t, None);
    line(
        "project: gltf2msh --base (parse..encode)",
        base_t,
        Some(crate_t),
    );
    paired(ratio);
}

/// The median of the per-round ratios of a [`common::time_pair`].
fn paired(ratio: f64) {
    println!(
        "{:<44} {ratio:.2}x (median of per-round ratios)",
        "  paired rounds"
    );
}

fn main() {
    let dir = std::env::var_os("MSH_BENCH_GLB_DIR")
        .map_or_else(|| PathBuf::from("/tmp/mshgltf-bench-export"), PathBuf::from);
    read_export(&dir);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    if root.is_dir() {
        base_path(&root);
    } else {
        println!("--base: no ../shared/corpus, skipped");
    }
}
