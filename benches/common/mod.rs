//! What every benchmark measures the same way: timings (best and median of
//! several rounds, on the calling thread's CPU clock so ratios stay
//! meaningful on a shared machine), peak RSS, and the files of a tree.
#![allow(dead_code)] // each bench uses a part

use std::path::{Path, PathBuf};
use std::time::Duration;

use mshgltf::convert::{convert, ConvertOptions, ModelRef};
use mshgltf::{nres, source};

/// CPU time of the calling thread (wall time where there is none).
#[cfg(unix)]
pub fn now() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec the call writes into.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// Wall time since the first call (no thread CPU clock here).
#[cfg(not(unix))]
pub fn now() -> Duration {
    use std::sync::OnceLock;
    static START: OnceLock<std::time::Instant> = OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed()
}

/// Best and median of `rounds` timings ([`now`]) of `f`; its result is
/// kept from the optimiser.
pub fn time<T>(rounds: usize, mut f: impl FnMut() -> T) -> (Duration, Duration) {
    let mut v: Vec<Duration> = (0..rounds.max(1))
        .map(|_| {
            let t = now();
            std::hint::black_box(f());
            now() - t
        })
        .collect();
    v.sort();
    (v[0], v[v.len() / 2])
}

/// Best and median of `rounds` timings of `a` and of `b`, run in turns
/// (a, b, a, b, …) so a burst of noise on a shared machine falls on both
/// sides, and the median of the per-round ratios `b / a` (the steadiest
/// figure of the three).
pub fn time_pair<S, T>(
    rounds: usize,
    mut a: impl FnMut() -> S,
    mut b: impl FnMut() -> T,
) -> ((Duration, Duration), (Duration, Duration), f64) {
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for _ in 0..rounds.max(1) {
        ta.push(time(1, &mut a).0);
        tb.push(time(1, &mut b).0);
    }
    let mut ratios: Vec<f64> = ta
        .iter()
        .zip(&tb)
        .map(|(x, y)| y.as_secs_f64() / x.as_secs_f64().max(1e-12))
        .collect();
    ratios.sort_by(f64::total_cmp);
    let (ratio, ta, tb) = (ratios[ratios.len() / 2], time_of(ta), time_of(tb));
    (ta, tb, ratio)
}

/// Best and median of timings.
fn time_of(mut v: Vec<Duration>) -> (Duration, Duration) {
    v.sort();
    (v[0], v[v.len() / 2])
}

/// Peak resident set of this process (`VmHWM`), in KiB; 0 where unknown.
pub fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// Every file under `dir` that `keep` accepts, in path order, not entering
/// folders named in `skip`; an unreadable folder is left out.
pub fn files_under(dir: &Path, skip: &[&str], keep: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for p in rd.flatten().map(|e| e.path()) {
            if p.is_dir() {
                if !p.file_name().is_some_and(|n| skip.iter().any(|s| n == *s)) {
                    todo.push(p);
                }
            } else if keep(&p) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Every valid model of the corpus at `root` (outside `bad/` and `MAPS/`):
/// (source name, MSH bytes, WEAR sibling), loose models and archive
/// entries alike, in path order.
pub fn models(root: &Path) -> Vec<(String, Vec<u8>, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    for f in files_under(root, &["bad", "MAPS"], &|_| true) {
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

/// msh2gltf of one model (no textures) to GLB bytes.
pub fn glb(source: &str, bytes: &[u8], wear: Option<&[u8]>, opts: &ConvertOptions) -> Vec<u8> {
    let m = ModelRef {
        source: source.to_string(),
        stem: "m".into(),
        bytes,
        wear,
    };
    let c = convert(&m, None, opts).unwrap();
    mshgltf::gltf_export::to_glb(&c.exported).unwrap()
}
