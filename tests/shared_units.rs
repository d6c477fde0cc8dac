//! Units against `../shared/corpus` (unit-files-notes; manifest
//! `control_points`, `clips`, `units`): every `.cpt`, `.ctl` and `.dat`
//! reads to its last byte and writes back identically; every model's
//! control points and clips come out as the manifest says (names,
//! parents, rest positions within 1e-3; clip nodes, and clip start/end
//! samples equal to the timeline and to the engine poses within 1e-3);
//! outputs are validator-clean; unedited round trips stay byte-identical.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use mshgltf::convert::{self, ConvertOptions, ModelRef};
use mshgltf::gltf_export::{self, Up};
use mshgltf::gltf_import::{self, ImportOptions};
use mshgltf::unit::{clips, cpt, ctl, dat, pipeline, siblings};
use mshgltf::{msh, nres, source};
use serde_json::Value;

mod common;

const TOL: f64 = 1e-3;
const FPS: f32 = 24.0;

/// Every NRes archive of the corpus top level: (file name, bytes).
fn archives(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("rlb")))
        .collect();
    v.sort();
    v.into_iter()
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .filter(|(_, d)| nres::read(d, nres::Mode::Strict).is_ok())
        .collect()
}

fn unit_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.join("UNITS")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x.eq_ignore_ascii_case("dat")) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn manifest_models(m: &Value) -> impl Iterator<Item = &Value> {
    m["models"].as_array().unwrap().iter()
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn every_corpus_sibling_reads_exactly() {
    let Some(root) = common::corpus() else { return };
    let m = common::manifest(&root);
    let (mut n_cpt, mut n_ctl) = (0, 0);
    let mut by_name: HashMap<String, (Option<cpt::ControlPoints>, Option<ctl::Controller>)> =
        HashMap::new();
    for (file, data) in archives(&root) {
        let a = nres::read(&data, nres::Mode::Strict).unwrap();
        for e in &a.entries {
            let name = source::decode_name(e.name).to_lowercase();
            let key = format!("{file}:{}", source::stem_of(&name));
            if name.ends_with(".cpt") {
                let c = cpt::read(e.data).unwrap_or_else(|e| panic!("{file}:{name}: {e}"));
                assert_eq!(cpt::write(&c), e.data, "{file}:{name}");
                by_name.entry(key).or_default().0 = Some(c);
                n_cpt += 1;
            } else if name.ends_with(".ctl") {
                let c = ctl::read(e.data).unwrap_or_else(|e| panic!("{file}:{name}: {e}"));
                assert_eq!(ctl::write(&c), e.data, "{file}:{name}");
                by_name.entry(key).or_default().1 = Some(c);
                n_ctl += 1;
            }
        }
    }
    let mut checked = 0;
    for model in manifest_models(&m) {
        let Some(entry) = model["entry"].as_str() else {
            continue;
        };
        let key = format!(
            "{}:{}",
            model["file"].as_str().unwrap(),
            source::stem_of(&entry.to_lowercase())
        );
        let (c, k) = by_name.get(&key).cloned().unwrap_or_default();
        if let Some(points) = model["control_points"].as_array().filter(|p| !p.is_empty()) {
            let c = c.unwrap_or_else(|| panic!("{key}: no .cpt"));
            let names: Vec<String> = c.points.iter().map(|p| p.name()).collect();
            let want: Vec<&str> = points.iter().map(|p| p["name"].as_str().unwrap()).collect();
            assert_eq!(names, want, "{key}");
            for (p, w) in c.points.iter().zip(points) {
                assert_eq!(i64::from(p.node), w["node"].as_i64().unwrap(), "{key}");
                assert_eq!(
                    i64::from(p.carrier),
                    w["carrier"].as_i64().unwrap(),
                    "{key}"
                );
            }
            checked += 1;
        }
        if let Some(counts) = model["controller"]["counts"].as_array() {
            let k = k.unwrap_or_else(|| panic!("{key}: no .ctl"));
            let got = [
                k.states.len(),
                k.contacts_per_state,
                k.channels.len(),
                k.components.len(),
                k.groups.len(),
            ];
            let want: Vec<usize> = counts
                .iter()
                .map(|v| v.as_u64().unwrap() as usize)
                .collect();
            assert_eq!(got.to_vec(), want, "{key}");
        }
    }
    let units = unit_files(&root);
    for p in &units {
        let u = dat::read(&std::fs::read(p).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let rel = p
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let mu = common::assemblies(&m)
            .find(|x| x["path"] == rel.as_str())
            .unwrap_or_else(|| panic!("{rel}: not in the manifest's units or buildings"));
        let comps = mu["components"].as_array().unwrap();
        assert_eq!(u.components.len(), comps.len(), "{rel}");
        for (c, w) in u.components.iter().zip(comps) {
            assert_eq!(c.record_name(), w["record"].as_str().unwrap());
            assert_eq!(i64::from(c.attach), w["attach"].as_i64().unwrap());
            assert_eq!(c.parent.map(|p| p as u64), w["parent"].as_u64());
            assert_eq!(
                c.is_mounted(),
                w["mounted"].as_bool().unwrap(),
                "{rel} {}",
                c.record_name()
            );
        }
    }
    assert!(n_cpt > 0 && n_ctl > 0 && checked > 0 && !units.is_empty());
    println!(
        "{n_cpt} .cpt, {n_ctl} .ctl, {} .dat read exactly; {checked} models' points checked",
        units.len()
    );
}

/// The converted glTF (JSON, bin) of a manifest model with its siblings.
fn convert_model(root: &Path, model: &Value) -> Option<(Value, Vec<u8>, Vec<u8>)> {
    let file = model["file"].as_str()?;
    let entry = model["entry"].as_str()?;
    let data = std::fs::read(root.join(file)).ok()?;
    let a = nres::read(&data, nres::Mode::Strict).ok()?;
    let i = source::find_entry(&a, entry).ok()?;
    let bytes = a.entries[i].data.to_vec();
    let m = ModelRef {
        source: format!("{file}:{entry}"),
        stem: source::stem_of(entry).into(),
        bytes: &bytes,
        wear: source::find_wear(&a, a.entries[i].name),
    };
    let opts = ConvertOptions {
        textures: false,
        ..Default::default()
    };
    let mut c = convert::convert(&m, None, &opts).unwrap();
    let sib = siblings::in_archive(&a, file, a.entries[i].name);
    pipeline::decorate(&mut c, &sib, FPS, Up::Y, mshgltf::limits::DEFAULT_MAX_WORK).unwrap();
    let glb = gltf_export::to_glb(&c.exported).unwrap();
    let json = serde_json::to_value(&c.exported.root).unwrap();
    Some((json, c.exported.bin, glb))
}

type M4 = [[f64; 4]; 4];

fn mul(a: &M4, b: &M4) -> M4 {
    let mut r = [[0.0; 4]; 4];
    for i in 0..4 {
        for j in 0..4 {
            r[i][j] = (0..4).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    r
}

fn rot3(q: &[f64]) -> [[f64; 3]; 3] {
    let (x, y, z, w) = (q[0], q[1], q[2], q[3]);
    [
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y - w * z),
            2.0 * (x * z + w * y),
        ],
        [
            2.0 * (x * y + w * z),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z - w * x),
        ],
        [
            2.0 * (x * z - w * y),
            2.0 * (y * z + w * x),
            1.0 - 2.0 * (x * x + y * y),
        ],
    ]
}

fn trs(t: &[f64], q: &[f64]) -> M4 {
    let r = rot3(q);
    let mut m = [[0.0; 4]; 4];
    for i in 0..3 {
        m[i][..3].copy_from_slice(&r[i]);
        m[i][3] = t[i];
    }
    m[3][3] = 1.0;
    m
}

fn fl(v: &Value) -> Vec<f64> {
    v.as_array()
        .map(|a| a.iter().map(|x| x.as_f64().unwrap()).collect())
        .unwrap_or_default()
}

/// Rest world matrices of every glTF node.
fn worlds(j: &Value) -> Vec<M4> {
    let nodes = j["nodes"].as_array().unwrap();
    let mut parent = vec![None; nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        for c in fl(&n["children"]) {
            parent[c as usize] = Some(i);
        }
    }
    let local: Vec<M4> = nodes
        .iter()
        .map(|n| {
            let t = if n["translation"].is_null() {
                vec![0.0; 3]
            } else {
                fl(&n["translation"])
            };
            let q = if n["rotation"].is_null() {
                vec![0.0, 0.0, 0.0, 1.0]
            } else {
                fl(&n["rotation"])
            };
            trs(&t, &q)
        })
        .collect();
    (0..nodes.len())
        .map(|i| {
            let mut m = local[i];
            let mut p = parent[i];
            while let Some(k) = p {
                m = mul(&local[k], &m);
                p = parent[k];
            }
            m
        })
        .collect()
}

fn accessor(j: &Value, bin: &[u8], a: u64) -> Vec<f64> {
    let acc = &j["accessors"][a as usize];
    let v = &j["bufferViews"][acc["bufferView"].as_u64().unwrap() as usize];
    let w = match acc["type"].as_str().unwrap() {
        "SCALAR" => 1,
        "VEC3" => 3,
        _ => 4,
    };
    let start =
        (v["byteOffset"].as_u64().unwrap_or(0) + acc["byteOffset"].as_u64().unwrap_or(0)) as usize;
    let n = acc["count"].as_u64().unwrap() as usize * w;
    bin[start..start + 4 * n]
        .chunks_exact(4)
        .map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])))
        .collect()
}

/// Samples channel (node, path) of animation `a` at time `t` (lerp / slerp).
fn sample(j: &Value, bin: &[u8], a: usize, node: u64, path: &str, t: f64) -> Option<Vec<f64>> {
    let an = &j["animations"][a];
    let ch = an["channels"]
        .as_array()?
        .iter()
        .find(|c| c["target"]["node"] == node && c["target"]["path"] == path)?;
    let s = &an["samplers"][ch["sampler"].as_u64()? as usize];
    let times = accessor(j, bin, s["input"].as_u64()?);
    let vals = accessor(j, bin, s["output"].as_u64()?);
    let w = vals.len() / times.len();
    let at = |k: usize| vals[k * w..(k + 1) * w].to_vec();
    let t = t as f32 as f64;
    if t <= times[0] {
        return Some(at(0));
    }
    if t >= times[times.len() - 1] {
        return Some(at(times.len() - 1));
    }
    let k = times.partition_point(|&x| x <= t) - 1;
    let u = (t - times[k]) / (times[k + 1] - times[k]);
    let (p, mut q) = (at(k), at(k + 1));
    if w == 4 && (0..4).map(|i| p[i] * q[i]).sum::<f64>() < 0.0 {
        q.iter_mut().for_each(|x| *x = -*x);
    }
    let mut r: Vec<f64> = p.iter().zip(&q).map(|(a, b)| a + u * (b - a)).collect();
    if w == 4 {
        let n = r.iter().map(|x| x * x).sum::<f64>().sqrt();
        r.iter_mut().for_each(|x| *x /= n);
    }
    Some(r)
}

/// The first (or last) key of a channel of animation `a`: (time, value).
fn end_key(
    j: &Value,
    bin: &[u8],
    a: usize,
    node: u64,
    path: &str,
    last: bool,
) -> Option<(f64, Vec<f64>)> {
    let an = &j["animations"][a];
    let ch = an["channels"]
        .as_array()?
        .iter()
        .find(|c| c["target"]["node"] == node && c["target"]["path"] == path)?;
    let s = &an["samplers"][ch["sampler"].as_u64()? as usize];
    let times = accessor(j, bin, s["input"].as_u64()?);
    let vals = accessor(j, bin, s["output"].as_u64()?);
    let w = vals.len() / times.len();
    let k = if last { times.len() - 1 } else { 0 };
    Some((times[k], vals[k * w..(k + 1) * w].to_vec()))
}

fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol)
}

/// A rotation quaternion's sign does not matter.
fn close_q(a: &[f64], b: &[f64]) -> bool {
    let d: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let b: Vec<f64> = b.iter().map(|x| x * d.signum()).collect();
    close(a, &b, TOL)
}

/// Game axes → glTF (Up::Y): (x, y, z) → (x, z, −y).
fn to_gltf(v: &[f64]) -> Vec<f64> {
    vec![v[0], v[2], -v[1]]
}

/// The engine local matrix (manifest `poses`, game axes, row-major) of a
/// glTF translation + rotation: R_game = Aᵀ R A, t_game = Aᵀ t.
fn game_matrix(t: &[f64], q: &[f64]) -> Vec<f64> {
    let r = rot3(q);
    let a = [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]];
    let mut g = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            g[i][j] = (0..3)
                .flat_map(|k| (0..3).map(move |l| (k, l)))
                .map(|(k, l)| a[k][i] * r[k][l] * a[l][j])
                .sum();
        }
    }
    let tg = [t[0], -t[2], t[1]];
    let mut m = Vec::with_capacity(16);
    for i in 0..3 {
        m.extend_from_slice(&g[i]);
        m.push(tg[i]);
    }
    m.extend_from_slice(&[0.0, 0.0, 0.0, 1.0]);
    m
}

fn check_points(name: &str, j: &Value, model: &Value, errs: &mut Vec<String>) -> usize {
    let nodes = j["nodes"].as_array().unwrap();
    let w = worlds(j);
    let mut n = 0;
    for p in model["control_points"].as_array().into_iter().flatten() {
        let pname = p["name"].as_str().unwrap();
        let Some(g) = nodes
            .iter()
            .position(|x| x["name"] == pname && !x["extras"]["msh"]["control_point"].is_null())
        else {
            errs.push(format!("{name}: no empty {pname}"));
            continue;
        };
        let parent = nodes
            .iter()
            .position(|x| fl(&x["children"]).contains(&(g as f64)));
        if parent.map(|p| p as i64) != p["node"].as_i64() {
            errs.push(format!(
                "{name}: {pname} parent {parent:?}, want {}",
                p["node"]
            ));
        }
        let got = [w[g][0][3], w[g][1][3], w[g][2][3]];
        let want = to_gltf(&fl(&p["world_t0"]));
        if !close(&got, &want, TOL) {
            errs.push(format!("{name}: {pname} at {got:?}, want {want:?}"));
        }
        n += 1;
    }
    n
}

/// The glTF animation made from manifest clip `c`.
fn find_clip(j: &Value, c: &Value) -> Option<usize> {
    j["animations"].as_array()?.iter().position(|a| {
        let s = &a["extras"]["msh"]["clip"];
        s["kind"] == c["kind"]
            && match c["kind"].as_str() {
                Some("channel") => s["channel"] == c["channel"],
                _ => s["states"] == c["states"],
            }
    })
}

fn check_clip(name: &str, j: &Value, bin: &[u8], c: &Value, errs: &mut Vec<String>) -> usize {
    let mut poses = 0;
    let cname = c["name"].as_str().unwrap_or("?");
    let Some(a) = find_clip(j, c) else {
        errs.push(format!("{name}: no animation for clip {cname}"));
        return 0;
    };
    let an = &j["animations"][a];
    let mut targets: Vec<u64> = an["channels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["target"]["node"].as_u64().unwrap())
        .collect();
    targets.sort();
    targets.dedup();
    let want: Vec<u64> = c["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    if targets != want {
        errs.push(format!(
            "{name}: clip {cname} targets {targets:?}, want {want:?}"
        ));
    }
    // Clip time (issue 24 item 4): key 0 at the frame the game starts the
    // clip from (`first`; `last` for an inverting channel), the last key
    // `|last - first|` frames later.
    let ms = &an["extras"]["msh"];
    let (Some(start), Some(end)) = (ms["start"].as_f64(), ms["end"].as_f64()) else {
        errs.push(format!("{name}: clip {cname} without extras.msh.start/end"));
        return 0;
    };
    let (first, last) = (c["first"].as_f64().unwrap(), c["last"].as_f64().unwrap());
    let invert = c["kind"] == "channel" && c["invert"] == true;
    let want = if invert { (last, first) } else { (first, last) };
    if (start, end) != want {
        errs.push(format!(
            "{name}: clip {cname} runs {start} -> {end}, the game plays {want:?}"
        ));
    }
    let order = if invert {
        ["last", "first"]
    } else {
        ["first", "last"]
    };
    for (at_end, key) in [(false, order[0]), (true, order[1])] {
        let frame = c[key].as_f64().unwrap();
        let want_t = if at_end { (end - start).abs() } else { 0.0 } / f64::from(FPS);
        for &n in &targets {
            let (Some((tt_, ct)), Some((tr_, cr))) = (
                end_key(j, bin, a, n, "translation", at_end),
                end_key(j, bin, a, n, "rotation", at_end),
            ) else {
                errs.push(format!(
                    "{name}: clip {cname} node {n}: no translation/rotation"
                ));
                continue;
            };
            if (tt_ - want_t).abs() > 1e-5 || (tr_ - want_t).abs() > 1e-5 {
                errs.push(format!(
                    "{name}: clip {cname} node {n}: {key} key at {tt_}/{tr_} s, want {want_t} s"
                ));
            }
            let t = frame / f64::from(FPS);
            if let (Some(tt), Some(tr)) = (
                sample(j, bin, 0, n, "translation", t),
                sample(j, bin, 0, n, "rotation", t),
            ) {
                if !close(&ct, &tt, TOL) || !close_q(&cr, &tr) {
                    errs.push(format!(
                        "{name}: clip {cname} node {n} at {key} differs from the timeline"
                    ));
                }
            }
            let pose = c["poses"]
                .as_array()
                .and_then(|p| p.iter().find(|p| p["node"] == n));
            if let Some(pose) = pose {
                poses += 1;
                let got = game_matrix(&ct, &cr);
                if !close(&got, &fl(&pose[key]), TOL) {
                    errs.push(format!(
                        "{name}: clip {cname} node {n} at {key}: {got:?} vs engine {:?}",
                        fl(&pose[key])
                    ));
                }
            }
        }
    }
    poses
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn control_points_and_clips_as_the_manifest_says() {
    let Some(root) = common::corpus() else { return };
    let m = common::manifest(&root);
    let tmp = tempfile::tempdir().unwrap();
    let mut errs = Vec::new();
    let (mut models, mut points, mut clips, mut glbs, mut poses) = (0, 0, 0, Vec::new(), 0);
    let mut same_name = 0;
    for model in manifest_models(&m) {
        let has_points = model["control_points"]
            .as_array()
            .is_some_and(|p| !p.is_empty());
        let has_clips = model["clips"].as_array().is_some_and(|p| !p.is_empty());
        if !has_points && !has_clips {
            continue;
        }
        let name = format!(
            "{}:{}",
            model["file"].as_str().unwrap(),
            model["entry"].as_str().unwrap_or("")
        );
        let Some((j, bin, glb)) = convert_model(&root, model) else {
            errs.push(format!("{name}: not converted"));
            continue;
        };
        points += check_points(&name, &j, model, &mut errs);
        let want = model["clips"].as_array().map_or(0, Vec::len);
        let got = j["animations"].as_array().map_or(0, |a| {
            a.iter()
                .filter(|a| !a["extras"]["msh"]["clip"].is_null())
                .count()
        });
        if got != want {
            errs.push(format!(
                "{name}: {got} clip animations, manifest has {want}"
            ));
        }
        for c in model["clips"].as_array().into_iter().flatten() {
            poses += check_clip(&name, &j, &bin, c, &mut errs);
            // Names are suggestions (manifest): counted, not required.
            same_name += usize::from(
                find_clip(&j, c).is_some_and(|a| j["animations"][a]["name"] == c["name"]),
            );
            clips += 1;
        }
        if models % 5 == 0 {
            let p = tmp.path().join(format!("m{models}.glb"));
            std::fs::write(&p, glb).unwrap();
            glbs.push(p);
        }
        models += 1;
    }
    assert!(
        errs.is_empty(),
        "{} problems:\n{}",
        errs.len(),
        errs[..errs.len().min(30)].join("\n")
    );
    assert!(models > 0 && points > 0 && clips > 0 && poses > 0);
    println!("{models} models: {points} control points, {clips} clips ({poses} start/end poses vs the engine) as the manifest says; {same_name} clips named as the manifest suggests");
    validate(&glbs);
}

/// Runs ../shared/tools/gltf-validate on `files` when it is installed.
fn validate(files: &[PathBuf]) {
    let tool = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/tools/gltf-validate"
    ));
    if !tool.is_file() || files.is_empty() {
        println!("SKIP validator");
        return;
    }
    let out = std::process::Command::new(&tool)
        .args(files)
        .output()
        .expect("run gltf-validate");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "gltf-validate failed:\n{text}");
    println!("{} files validator-clean", files.len());
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn unedited_round_trip_with_units_is_byte_identical() {
    let Some(root) = common::corpus() else { return };
    let m = common::manifest(&root);
    let mut failures = Vec::new();
    let mut n = 0;
    for model in manifest_models(&m) {
        if model["clips"].as_array().is_none_or(|c| c.is_empty()) {
            continue;
        }
        let name = format!(
            "{}:{}",
            model["file"].as_str().unwrap(),
            model["entry"].as_str().unwrap_or("")
        );
        let Some((_, _, glb)) = convert_model(&root, model) else {
            continue;
        };
        let data = std::fs::read(root.join(model["file"].as_str().unwrap())).unwrap();
        let a = nres::read(&data, nres::Mode::Strict).unwrap();
        let i = source::find_entry(&a, model["entry"].as_str().unwrap()).unwrap();
        let bytes = a.entries[i].data;
        let base = msh::decode(bytes, msh::Mode::Strict).unwrap().model;
        let r = gltf_import::parse(&glb, None)
            .and_then(|d| gltf_import::import_with_base(&d, &base, &ImportOptions::default()));
        match r {
            Ok(imp) if msh::encode(&imp.model).unwrap() == bytes => {}
            Ok(imp) => failures.push(format!("{name}: bytes differ; {:?}", imp.report.warnings)),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
        n += 1;
    }
    assert!(
        failures.is_empty(),
        "{} of {n}:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n")
    );
    assert!(n > 0);
    println!("{n} models with clips and control points byte-identical");
}

/// A game-axes world matrix (row-major, column vectors) in glTF axes:
/// A·W·Aᵀ with A = (x, y, z) → (x, z, −y).
fn world_to_gltf(w: &[f64]) -> M4 {
    let g = |i: usize, j: usize| w[i * 4 + j];
    let a = [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]];
    let mut m = [[0.0; 4]; 4];
    for i in 0..3 {
        for j in 0..3 {
            m[i][j] = (0..3)
                .flat_map(|k| (0..3).map(move |l| (k, l)))
                .map(|(k, l)| a[i][k] * g(k, l) * a[j][l])
                .sum();
        }
        m[i][3] = (0..3).map(|k| a[i][k] * g(k, 3)).sum();
    }
    m[3][3] = 1.0;
    m
}

/// A building's `FORT` root reached through its agent record
/// (mission-notes §4.3: the unit table's `via` is the manifest's chain) and
/// its Res17 hall-way graph in the unit extras (unit-files-notes §4.1):
/// each vertex's node, flags and position, and the position through its
/// joint node's world matrix equal to the manifest's `model_position`
/// (within `TOL`).
fn check_building(mu: &Value, j: &Value, w: &[M4]) -> Vec<String> {
    let rel = mu["path"].as_str().unwrap();
    let unit = &j["scenes"][0]["extras"]["msh"]["unit"];
    let mut errs = Vec::new();
    if unit["parts"][0]["via"] != mu["fort"]["chain"] {
        errs.push(format!(
            "{rel}: via {} want {}",
            unit["parts"][0]["via"], mu["fort"]["chain"]
        ));
    }
    let Some(want) = mu["hallway"]["vertices"].as_array() else {
        if !unit["hallway"].is_null() {
            errs.push(format!("{rel}: a hall-way graph the manifest has not"));
        }
        return errs;
    };
    let got = unit["hallway"]["vertices"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if got.len() != want.len() {
        errs.push(format!(
            "{rel}: {} hall-way vertices, want {}",
            got.len(),
            want.len()
        ));
        return errs;
    }
    let nodes = j["nodes"].as_array().unwrap();
    for (g, v) in got.iter().zip(want) {
        let close =
            |a: &Value, b: &Value| fl(a).iter().zip(fl(b)).all(|(x, y)| (x - y).abs() <= TOL);
        if g["node"] != v["node"]
            || g["flags"] != v["flags"]
            || !close(&g["position"], &v["position"])
        {
            errs.push(format!("{rel}: hall-way vertex {g} want {v}"));
            continue;
        }
        let Some(n) = nodes.iter().position(|n| {
            n["extras"]["msh"]["part"] == 0 && n["extras"]["msh"]["node"] == v["node"]
        }) else {
            errs.push(format!("{rel}: no node for hall-way vertex {v}"));
            continue;
        };
        let p = fl(&v["position"]);
        let local = [p[0], p[2], -p[1]];
        let at: Vec<f64> = (0..3)
            .map(|i| (0..3).map(|k| w[n][i][k] * local[k]).sum::<f64>() + w[n][i][3])
            .collect();
        let mp = fl(&v["model_position"]);
        let want = [mp[0], mp[2], -mp[1]];
        if at.iter().zip(want).any(|(a, b)| (a - b).abs() > TOL) {
            errs.push(format!(
                "{rel}: hall-way vertex {} at {at:?}, want {want:?}",
                v["index"]
            ));
        }
    }
    errs
}

fn model_entry<'a>(m: &'a Value, archive: &str, entry: &str) -> Option<&'a Value> {
    manifest_models(m).find(|x| {
        x["file"] == archive
            && x["entry"]
                .as_str()
                .is_some_and(|e| e.eq_ignore_ascii_case(entry))
    })
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn every_unit_assembles_as_the_manifest_says() {
    use mshgltf::unit::assemble;
    let Some(root) = common::corpus() else { return };
    let m = common::manifest(&root);
    let tmp = tempfile::tempdir().unwrap();
    let opts = ConvertOptions {
        textures: false,
        ..Default::default()
    };
    let (mut checked, mut glbs, mut errs) = (0, Vec::new(), Vec::new());
    for mu in common::assemblies(&m) {
        let rel = mu["path"].as_str().unwrap();
        let path = root.join(rel);
        let c = assemble::convert_unit(&path, &std::fs::read(&path).unwrap(), None, &opts)
            .unwrap_or_else(|e| panic!("{rel}: {e}"));
        let j = serde_json::to_value(&c.exported.root).unwrap();
        let nodes = j["nodes"].as_array().unwrap();
        let w = worlds(&j);
        let at = |part: u64, node: u64| {
            nodes.iter().position(|n| {
                n["extras"]["msh"]["part"] == part && n["extras"]["msh"]["node"] == node
            })
        };
        for en in mu["expected"]["nodes"].as_array().unwrap() {
            let (part, node, name) = (
                en["part"].as_u64().unwrap(),
                en["node"].as_u64().unwrap(),
                en["name"].as_str().unwrap(),
            );
            let Some(g) = at(part, node) else {
                errs.push(format!("{rel}: no node for part {part} node {node} {name}"));
                continue;
            };
            let got = nodes[g]["name"].as_str().unwrap();
            if got != name && !got.strip_prefix(name).is_some_and(|r| r.starts_with('.')) {
                errs.push(format!(
                    "{rel}: part {part} node {node} named {got:?}, want {name:?}"
                ));
            }
            let want = world_to_gltf(&fl(&en["world"]));
            let ok = (0..3).all(|i| (0..4).all(|k| (w[g][i][k] - want[i][k]).abs() <= TOL));
            if !ok {
                errs.push(format!(
                    "{rel}: {name} (part {part} node {node}) world {:?}, want {want:?}",
                    w[g]
                ));
            }
            checked += 1;
        }
        for p in mu["parts"].as_array().unwrap().iter().skip(1) {
            if at(p["part"].as_u64().unwrap(), 0).is_some() {
                errs.push(format!("{rel}: part {} keeps its node 0", p["part"]));
            }
        }
        // Every part's clips and control points are there.
        let (mut want_clips, mut want_points) = (0, 0);
        for p in mu["parts"].as_array().unwrap() {
            let pm = model_entry(
                &m,
                p["archive"].as_str().unwrap(),
                p["mesh_entry"].as_str().unwrap(),
            )
            .expect("part model in manifest");
            want_clips += pm["clips"].as_array().map_or(0, Vec::len);
            want_points += pm["control_points"].as_array().map_or(0, Vec::len);
        }
        let clips = j["animations"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|a| !a["extras"]["msh"]["clip"].is_null())
            .count();
        let points = nodes
            .iter()
            .filter(|n| !n["extras"]["msh"]["control_point"].is_null())
            .count();
        assert_eq!(
            (clips, points),
            (want_clips, want_points),
            "{rel}: clips and control points"
        );
        if mu["kind"] == "building" {
            errs.extend(check_building(mu, &j, &w));
        }
        // Export only: gltf2msh names the parts.
        let glb = gltf_export::to_glb(&c.exported).unwrap();
        let doc = gltf_import::parse(&glb, None).unwrap();
        let Err(e) = gltf_import::author(&doc, &Default::default()) else {
            panic!("{rel}: gltf2msh accepted an assembled unit");
        };
        assert_eq!(e.rule, "gltf.unit");
        assert!(
            e.detail
                .contains(mu["parts"][0]["mesh_entry"].as_str().unwrap()),
            "{e}"
        );
        let p = tmp.path().join(format!("u{}.glb", glbs.len()));
        std::fs::write(&p, glb).unwrap();
        glbs.push(p);
    }
    assert!(
        errs.is_empty(),
        "{} problems:\n{}",
        errs.len(),
        errs[..errs.len().min(30)].join("\n")
    );
    let want: usize = common::assemblies(&m)
        .map(|u| u["expected"]["nodes"].as_array().unwrap().len())
        .sum();
    assert_eq!(checked, want);
    println!(
        "{} units: {checked} expected nodes at their frame-0 world matrix",
        glbs.len()
    );
    validate(&glbs);
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn batch_writes_every_unit_file() {
    let Some(root) = common::corpus() else { return };
    let m = common::manifest(&root);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let st = std::process::Command::new(env!("CARGO_BIN_EXE_msh2gltf"))
        .arg(root.join("UNITS"))
        .arg(&out)
        .arg("--no-textures")
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    for mu in common::assemblies(&m) {
        let rel = Path::new(mu["path"].as_str().unwrap())
            .strip_prefix("UNITS")
            .unwrap()
            .with_extension("glb");
        assert!(out.join(&rel).is_file(), "{} missing", rel.display());
    }
}

/// (view offset + accessor offset, count) of accessor `a` in the buffer.
fn acc_at(root: &gltf_json::Root, a: usize) -> (usize, usize) {
    let acc = &root.accessors[a];
    let v = &root.buffer_views[acc.buffer_view.unwrap().value()];
    let off =
        v.byte_offset.map_or(0, |o| o.0 as usize) + acc.byte_offset.map_or(0, |o| o.0 as usize);
    (off, acc.count.0 as usize)
}

fn add_f32(bin: &mut [u8], at: usize, d: f32) {
    let v = f32::from_le_bytes(bin[at..at + 4].try_into().unwrap()) + d;
    bin[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// Moves the interior translation keys of clip animation `a`'s first
/// channel up by `d` (glTF y); returns its target node.
fn edit_clip(e: &mut gltf_export::Exported, a: usize, d: f32) -> usize {
    let an = &e.root.animations[a];
    let ch = an
        .channels
        .iter()
        .find(|c| {
            c.target.path
                == gltf_json::validation::Checked::Valid(
                    gltf_json::animation::Property::Translation,
                )
                && acc_at(&e.root, an.samplers[c.sampler.value()].input.value()).1 >= 3
        })
        .unwrap();
    let out = an.samplers[ch.sampler.value()].output.value();
    let node = ch.target.node.value();
    let (off, n) = acc_at(&e.root, out);
    for k in 1..n - 1 {
        add_f32(&mut e.bin, off + 12 * k + 4, d);
    }
    node
}

/// A clip whose translation has interior keys and frames outside its range:
/// a channel clip, or (`reversed`) a state chain played backwards.
fn editable_clip(e: &gltf_export::Exported, frame_count: f32, reversed: bool) -> Option<usize> {
    let j = serde_json::to_value(&e.root).unwrap();
    j["animations"].as_array()?.iter().position(|a| {
        let c = &a["extras"]["msh"]["clip"];
        let (f0, f1) = (
            c["first"].as_f64().unwrap_or(0.0) as f32,
            c["last"].as_f64().unwrap_or(0.0) as f32,
        );
        (if reversed {
            c["kind"] == "state_chain" && f0 > f1
        } else {
            c["kind"] == "channel"
        }) && f0.min(f1) >= 2.0
            && (f1 - f0).abs() >= 2.0
            && f0.max(f1) <= frame_count - 3.0
            && a["channels"].as_array().is_some_and(|chs| {
                chs.iter().any(|ch| {
                    ch["target"]["path"] == "translation"
                        && j["accessors"][a["samplers"][ch["sampler"].as_u64().unwrap() as usize]
                            ["input"]
                            .as_u64()
                            .unwrap() as usize]["count"]
                            .as_u64()
                            .is_some_and(|n| n >= 3)
                })
            })
    })
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn a_clip_edit_reaches_res8_inside_its_range_only() {
    let Some(root) = common::corpus() else { return };
    let m = common::manifest(&root);
    let opts = ConvertOptions {
        textures: false,
        ..Default::default()
    };
    let (mut done, mut landed) = ([0, 0], [0, 0]);
    for model in manifest_models(&m) {
        if done[0] == 5 && done[1] == 5 || model["clips"].as_array().is_none_or(|c| c.is_empty()) {
            continue;
        }
        let file = model["file"].as_str().unwrap();
        let entry = model["entry"].as_str().unwrap();
        let data = std::fs::read(root.join(file)).unwrap();
        let a = nres::read(&data, nres::Mode::Strict).unwrap();
        let i = source::find_entry(&a, entry).unwrap();
        let bytes = a.entries[i].data;
        let mr = ModelRef {
            source: entry.into(),
            stem: source::stem_of(entry).into(),
            bytes,
            wear: None,
        };
        let mut c = convert::convert(&mr, None, &opts).unwrap();
        let sib = siblings::in_archive(&a, file, a.entries[i].name);
        // The base's .ctl: clip ranges come from it (issue 26 item 8).
        pipeline::decorate(&mut c, &sib, FPS, Up::Y, mshgltf::limits::DEFAULT_MAX_WORK).unwrap();
        let base = msh::decode(bytes, msh::Mode::Strict).unwrap().model;
        let iopts = ImportOptions {
            base_clips: sib.parse().ctl.map(|c| clips::base_clips(&c, &base)),
            ..Default::default()
        };
        for reversed in [false, true] {
            if done[usize::from(reversed)] == 5 {
                continue;
            }
            if let Some(clip) = editable_clip(&c.exported, base.frame_count as f32, reversed) {
                landed[usize::from(reversed)] +=
                    check_clip_edit(entry, &c.exported, &base, clip, &iopts);
                done[usize::from(reversed)] += 1;
            }
        }
    }
    assert_eq!(done[0], 5, "editable channel clips found");
    assert!(done[1] > 0, "no editable reversed clip");
    assert!(
        landed[0] > 0 && landed[1] > 0,
        "interior keys checked: {landed:?}"
    );
    println!(
        "clip edits written inside their range only: {} channel clips, {} reversed state chains; interior keys on their timeline frames: {landed:?}",
        done[0], done[1]
    );
}

/// Edits clip animation `clip` of `exported` (translation keys up 0.25)
/// and checks the edit reaches Res8 inside the clip's frames only, keys
/// outside the clip's range are refused, and a timeline edited
/// differently over the same frames is a conflict.
fn check_clip_edit(
    entry: &str,
    exported: &gltf_export::Exported,
    base: &msh::Model,
    clip: usize,
    iopts: &ImportOptions,
) -> usize {
    use mshgltf::anim::Sampler;
    use mshgltf::convention;
    let c = exported;

    let ex: Value =
        serde_json::from_str(c.root.animations[clip].extras.as_ref().unwrap().get()).unwrap();
    let (f0, f1) = (
        ex["msh"]["clip"]["first"].as_f64().unwrap() as f32,
        ex["msh"]["clip"]["last"].as_f64().unwrap() as f32,
    );
    let (lo, hi) = (f0.min(f1), f0.max(f1));
    let mut edited = c.clone();
    let node = edit_clip(&mut edited, clip, 0.25);
    let doc = gltf_import::parse(&gltf_export::to_glb(&edited).unwrap(), None).unwrap();
    let imp =
        gltf_import::import_with_base(&doc, base, iopts).unwrap_or_else(|e| panic!("{entry}: {e}"));
    let layout = convention::detect(base, None, &Default::default())
        .conventions
        .quat;
    let (sb, se) = (
        Sampler::new(base, layout).unwrap(),
        Sampler::new(&imp.model, layout).unwrap(),
    );
    let mut inside = 0.0f32;
    for f in 0..base.frame_count {
        let f = f as f32;
        for n in 0..sb.node_count() {
            let (pb, pe) = (sb.node_pose(n, f), se.node_pose(n, f));
            let d = (0..3)
                .map(|k| (pb.pos[k] - pe.pos[k]).abs())
                .fold(0.0f32, f32::max);
            if n == node && f > lo && f < hi {
                inside = inside.max(d);
            } else {
                assert!(d < 1e-4, "{entry}: node {n} frame {f} moved by {d} outside clip {lo}..{hi} of node {node}");
            }
        }
    }
    assert!(
        inside > 0.2,
        "{entry}: the clip edit did not reach Res8 ({inside})"
    );
    // Each interior key lands on its own timeline frame (clip time mapped
    // back: start + dir * clip frame), moved by the edit's 0.25.
    let (start, end) = (
        ex["msh"]["start"].as_f64().unwrap() as f32,
        ex["msh"]["end"].as_f64().unwrap() as f32,
    );
    let dir = if end < start { -1.0 } else { 1.0 };
    let an = &c.root.animations[clip];
    let ch = an
        .channels
        .iter()
        .find(|ch| {
            ch.target.node.value() == node
                && ch.target.path
                    == gltf_json::validation::Checked::Valid(
                        gltf_json::animation::Property::Translation,
                    )
        })
        .unwrap();
    let (off, n) = acc_at(&c.root, an.samplers[ch.sampler.value()].input.value());
    let mut landed = 0;
    for k in 1..n - 1 {
        let t = f32::from_le_bytes(c.bin[off + 4 * k..off + 4 * k + 4].try_into().unwrap());
        let f = start + dir * t * FPS;
        if (f - f.round()).abs() > 1e-3 {
            continue; // written at whole frames (with a warning)
        }
        let (pb, pe) = (sb.node_pose(node, f.round()), se.node_pose(node, f.round()));
        let d = (0..3)
            .map(|i| (pb.pos[i] - pe.pos[i]).abs())
            .fold(0.0f32, f32::max);
        assert!(
            (d - 0.25).abs() < 1e-3,
            "{entry}: clip key {k} (frame {f}) moved by {d}, not 0.25"
        );
        landed += 1;
    }
    assert!(
        imp.report
            .warnings
            .iter()
            .any(|w| w.contains("written into the timeline")),
        "{entry}"
    );
    // Keys outside the clip's range are refused.
    let mut out = c.clone();
    let an = &out.root.animations[clip];
    let inp = an.samplers[an.channels[0].sampler.value()].input.value();
    let (off, n) = acc_at(&out.root, inp);
    add_f32(&mut out.bin, off + 4 * (n - 1), 5.0 / FPS);
    let doc = gltf_import::parse(&gltf_export::to_glb(&out).unwrap(), None).unwrap();
    let e = gltf_import::import_with_base(&doc, base, iopts)
        .err()
        .map(|e| e.rule);
    assert_eq!(e, Some("gltf.clip.range"), "{entry}");
    // The timeline edited differently over the same frames: a clear error.
    let mut both = edited.clone();
    edit_timeline(&mut both, node, lo, hi, 0.5);
    let doc = gltf_import::parse(&gltf_export::to_glb(&both).unwrap(), None).unwrap();
    let e = gltf_import::import_with_base(&doc, base, iopts)
        .err()
        .map(|e| e.rule);
    assert_eq!(e, Some("gltf.clip.conflict"), "{entry}");
    landed
}

/// Moves the timeline's translation keys of `node` strictly inside
/// `(lo, hi)` frames up by `d`.
fn edit_timeline(e: &mut gltf_export::Exported, node: usize, lo: f32, hi: f32, d: f32) {
    let an = &e.root.animations[0];
    let ch = an
        .channels
        .iter()
        .find(|c| {
            c.target.node.value() == node
                && c.target.path
                    == gltf_json::validation::Checked::Valid(
                        gltf_json::animation::Property::Translation,
                    )
        })
        .unwrap();
    let s = &an.samplers[ch.sampler.value()];
    let (ti, n) = acc_at(&e.root, s.input.value());
    let (vo, _) = acc_at(&e.root, s.output.value());
    for k in 0..n {
        let t = f32::from_le_bytes(e.bin[ti + 4 * k..ti + 4 * k + 4].try_into().unwrap()) * FPS;
        if t > lo + 1e-3 && t < hi - 1e-3 {
            add_f32(&mut e.bin, vo + 12 * k + 4, d);
        }
    }
}
