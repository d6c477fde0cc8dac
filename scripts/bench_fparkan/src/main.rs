//! Decode + validate, mshgltf against fparkan, on the same pre-loaded bytes
//! of every model of a corpus (loose `.msh` files and the models inside
//! archives, collected as mshgltf's `benches/corpus.rs` does), in one
//! process, on the calling thread's CPU clock.
//!
//! - mshgltf: `msh::read::decode(bytes, Mode::Strict)`: NRes parse, typed
//!   decoding of every stream the IR knows (Res1/2/3/4/5/6/7/8/10/13/15/16/
//!   18/19, the rest kept as raw entries) and every strict rule
//!   (`msh::validate`).
//! - fparkan: `fparkan_nres::decode(Arc<[u8]>, ReadProfile::Strict)`, then
//!   `fparkan_msh::decode_msh` and `fparkan_msh::validate_msh` (Res1 raw,
//!   Res2/3/4/5/6/13 typed, Res10 decoded from Windows-1251; checks: sizes,
//!   slot batch ranges, batch index ranges, slot bounds, vertex indices).
//!
//! Usage: `bench-fparkan CORPUS [ROUNDS]`; prints a Markdown table.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use mshgltf::msh::read::{decode, Mode};
use mshgltf::{nres, source};

fn now() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec the call writes into.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for p in rd.flatten().map(|e| e.path()) {
            if p.is_dir() {
                if !p.file_name().is_some_and(|n| n == "bad" || n == "MAPS") {
                    todo.push(p);
                }
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Every model's bytes: loose models and archive entries alike.
fn models(root: &Path) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for f in files_under(root) {
        let bytes = std::fs::read(&f).unwrap();
        match source::classify(&bytes) {
            source::FileKind::Model => out.push(bytes),
            source::FileKind::ModelArchive => {
                let a = nres::read(&bytes, nres::Mode::Tolerant).unwrap();
                for i in source::model_entries(&a) {
                    out.push(a.entries[i].data.to_vec());
                }
            }
            _ => {}
        }
    }
    out
}

fn ours(ms: &[Vec<u8>]) -> usize {
    let mut ok = 0;
    for b in ms {
        ok += std::hint::black_box(decode(b, Mode::Strict)).is_ok() as usize;
    }
    ok
}

fn peer(ms: &[Arc<[u8]>]) -> usize {
    let mut ok = 0;
    for b in ms {
        let r = fparkan_nres::decode(b.clone(), fparkan_nres::ReadProfile::Strict)
            .map_err(fparkan_msh::MshError::from)
            .and_then(|d| fparkan_msh::decode_msh(&d))
            .and_then(|m| fparkan_msh::validate_msh(&m));
        ok += std::hint::black_box(r).is_ok() as usize;
    }
    ok
}

fn stats(mut v: Vec<Duration>) -> (f64, f64) {
    v.sort();
    (v[0].as_secs_f64() * 1e3, v[v.len() / 2].as_secs_f64() * 1e3)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let root = PathBuf::from(args.next().expect("usage: bench-fparkan CORPUS [ROUNDS]"));
    let rounds: usize = args.next().map_or(15, |r| r.parse().expect("ROUNDS"));
    let one = models(&root);
    let bytes: usize = one.iter().map(Vec::len).sum();
    let (a, b) = (ours(&one), peer(&to_arc(&one)));
    println!(
        "{} models, {:.1} MB; accepted: mshgltf {a}, fparkan {b}; {rounds} rounds, thread CPU",
        one.len(),
        bytes as f64 / 1e6
    );
    if std::env::var_os("BENCH_BREAKDOWN").is_some() {
        breakdown(&one, &to_arc(&one), rounds);
        return;
    }
    println!();
    println!("| corpus | fparkan best / median | mshgltf best / median | ratio best / median |");
    println!("|---|---|---|---|");
    for times in [1usize, 4] {
        let ms: Vec<Vec<u8>> = (0..times).flat_map(|_| one.iter().cloned()).collect();
        let arcs = to_arc(&ms);
        let (mut to, mut tp) = (Vec::new(), Vec::new());
        for r in 0..rounds {
            // Alternate which side runs first in a round.
            let mut run_ours = || {
                let t = now();
                std::hint::black_box(ours(&ms));
                to.push(now() - t);
            };
            let mut run_peer = || {
                let t = now();
                std::hint::black_box(peer(&arcs));
                tp.push(now() - t);
            };
            if r % 2 == 0 {
                run_ours();
                run_peer();
            } else {
                run_peer();
                run_ours();
            }
        }
        let (ob, om) = stats(to);
        let (pb, pm) = stats(tp);
        println!(
            "| {times}x ({} models, {:.1} MB) | {pb:.2} / {pm:.2} ms | {ob:.2} / {om:.2} ms | {:.2}x / {:.2}x |",
            ms.len(),
            (bytes * times) as f64 / 1e6,
            ob / pb,
            om / pm
        );
    }
}

/// Where our time goes: thread CPU of each stage over the corpus (median).
fn breakdown(ms: &[Vec<u8>], arcs: &[Arc<[u8]>], rounds: usize) {
    let med = |f: &mut dyn FnMut()| {
        let mut v: Vec<Duration> = (0..rounds)
            .map(|_| {
                let t = now();
                f();
                now() - t
            })
            .collect();
        v.sort();
        v[v.len() / 2].as_secs_f64() * 1e3
    };
    let models: Vec<mshgltf::msh::Model> = ms
        .iter()
        .map(|b| decode(b, Mode::Strict).unwrap().model)
        .collect();
    let rows: Vec<(&str, f64)> = vec![
        ("mshgltf nres::read", med(&mut || {
            for b in ms {
                std::hint::black_box(nres::read(b, nres::Mode::Strict).unwrap());
            }
        })),
        ("mshgltf decode (all)", med(&mut || {
            std::hint::black_box(ours(ms));
        })),
        ("mshgltf validate(model)", med(&mut || {
            for m in &models {
                std::hint::black_box(mshgltf::msh::validate(m).unwrap());
            }
        })),
        ("mshgltf Model clone", med(&mut || {
            for m in &models {
                std::hint::black_box(m.clone());
            }
        })),
        ("fparkan nres::decode", med(&mut || {
            for b in arcs {
                std::hint::black_box(
                    fparkan_nres::decode(b.clone(), fparkan_nres::ReadProfile::Strict).unwrap(),
                );
            }
        })),
        ("fparkan all", med(&mut || {
            std::hint::black_box(peer(arcs));
        })),
    ];
    for (what, ms) in rows {
        println!("{what}: {ms:.2} ms");
    }
}

fn to_arc(ms: &[Vec<u8>]) -> Vec<Arc<[u8]>> {
    ms.iter().map(|m| Arc::from(m.as_slice())).collect()
}
