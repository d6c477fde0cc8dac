//! Terrain maps of the shared corpus (issue 17): codec, validation, export
//! and the way back, against `manifest.json` → `terrains` and the `bad`
//! records with `kind: "terrain"`.

mod common;

use std::path::Path;

use mshgltf::terrain::{self, areals, map, read, validate, write, Mode};

fn terrains(root: &std::path::Path) -> Vec<serde_json::Value> {
    common::manifest(root)["terrains"]
        .as_array()
        .expect("terrains")
        .clone()
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn maps_decode_validate_and_encode_byte_identical() {
    let Some(root) = common::corpus() else { return };
    for t in terrains(&root) {
        let dir = root.join(t["dir"].as_str().unwrap());
        let bytes = std::fs::read(dir.join("Land.msh")).unwrap();
        let land = read::decode(&bytes).unwrap();
        let f = validate::validate(&land, Mode::Strict).unwrap();
        assert!(f.warnings.is_empty(), "{}: {:?}", t["map"], f.warnings);
        let c = &t["counts"];
        assert_eq!(land.positions.len() as u64, c["vertices"].as_u64().unwrap());
        assert_eq!(land.faces.len() as u64, c["faces"].as_u64().unwrap());
        assert_eq!(
            land.lod_range(0).len() as u64,
            c["faces_lod0"].as_u64().unwrap()
        );
        assert_eq!(
            write::encode(&land).unwrap(),
            bytes,
            "{}: Land.msh round trip",
            t["map"]
        );
        let mbytes = std::fs::read(dir.join("Land.map")).unwrap();
        let m = map::decode(&mbytes).unwrap();
        assert_eq!(
            m.areals.len() as u64,
            t["land_map"]["areals"].as_u64().unwrap()
        );
        assert!(areals::check(&m).is_empty(), "{:?}", areals::check(&m));
        assert_eq!(
            map::encode(&m).unwrap(),
            mbytes,
            "{}: Land.map round trip",
            t["map"]
        );
        let _ = terrain::STREAM_ORDER;
    }
}

fn bad_terrain(root: &std::path::Path) -> Vec<serde_json::Value> {
    common::manifest(root)["bad"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["kind"] == "terrain")
        .cloned()
        .collect()
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn bad_terrain_files_fail_strict_with_the_manifest_rule() {
    let Some(root) = common::corpus() else { return };
    let bad = bad_terrain(&root);
    assert!(!bad.is_empty());
    for b in bad {
        let bytes = std::fs::read(root.join(b["file"].as_str().unwrap())).unwrap();
        let want = b["check"].as_str().unwrap();
        let got =
            read::decode(&bytes).and_then(|l| validate::validate(&l, Mode::Strict).map(|_| ()));
        let e = got.expect_err(b["file"].as_str().unwrap());
        assert_eq!(e.rule, want, "{}: {e}", b["file"]);
        assert!(e.stream.is_some(), "{}: names no stream: {e}", b["file"]);
        let tolerant =
            read::decode(&bytes).and_then(|l| validate::validate(&l, Mode::Tolerant).map(|_| ()));
        assert_eq!(
            tolerant.is_ok(),
            b["tolerant_may_convert"].as_bool().unwrap(),
            "{}: {tolerant:?}",
            b["file"]
        );
    }
}

/// A GLB split into its JSON and BIN chunks.
struct Glb {
    json: serde_json::Value,
    bin: Vec<u8>,
}

impl Glb {
    fn parse(d: &[u8]) -> Glb {
        let n = u32::from_le_bytes(d[12..16].try_into().unwrap()) as usize;
        let json = serde_json::from_slice(&d[20..20 + n]).unwrap();
        Glb {
            json,
            bin: d[28 + n..].to_vec(),
        }
    }

    fn view(&self, v: usize) -> &[u8] {
        let v = &self.json["bufferViews"][v];
        let off = v["byteOffset"].as_u64().unwrap_or(0) as usize;
        &self.bin[off..off + v["byteLength"].as_u64().unwrap() as usize]
    }

    /// Accessor `a` as f64 components (FLOAT, UNSIGNED_SHORT or UNSIGNED_INT).
    fn read(&self, a: usize) -> (Vec<f64>, usize) {
        let acc = &self.json["accessors"][a];
        let n = match acc["type"].as_str().unwrap() {
            "SCALAR" => 1,
            "VEC2" => 2,
            "VEC3" => 3,
            _ => 4,
        };
        let d = self.view(acc["bufferView"].as_u64().unwrap() as usize);
        let count = acc["count"].as_u64().unwrap() as usize * n;
        let v = match acc["componentType"].as_u64().unwrap() {
            5126 => d
                .chunks_exact(4)
                .take(count)
                .map(|c| f64::from(f32::from_le_bytes(c.try_into().unwrap())))
                .collect(),
            5123 => d
                .chunks_exact(2)
                .take(count)
                .map(|c| f64::from(u16::from_le_bytes(c.try_into().unwrap())))
                .collect(),
            _ => d
                .chunks_exact(4)
                .take(count)
                .map(|c| f64::from(u32::from_le_bytes(c.try_into().unwrap())))
                .collect(),
        };
        (v, n)
    }
}

/// Topmost LOD0 hit under game (x, y): (height, material name, alpha).
fn surface_at(g: &Glb, x: f64, y: f64) -> Option<(f64, String, f64)> {
    let mesh = &g.json["meshes"][0];
    let mut best: Option<(f64, String, f64)> = None;
    for p in mesh["primitives"].as_array().unwrap() {
        let at = &p["attributes"];
        assert!(at.get("TEXCOORD_1").is_some(), "TEXCOORD_1 missing");
        let (pos, _) = g.read(at["POSITION"].as_u64().unwrap() as usize);
        let (col, _) = g.read(at["COLOR_0"].as_u64().unwrap() as usize);
        let (idx, _) = g.read(p["indices"].as_u64().unwrap() as usize);
        let name = g.json["materials"][p["material"].as_u64().unwrap() as usize]["name"]
            .as_str()
            .unwrap();
        let name = name.split('#').next().unwrap().to_string();
        for t in idx.chunks_exact(3) {
            let v = [t[0] as usize, t[1] as usize, t[2] as usize];
            // glTF (x, y, z) = game (x, z, -y)
            let q = v.map(|i| (pos[3 * i], -pos[3 * i + 2], pos[3 * i + 1]));
            let d = (q[1].1 - q[2].1) * (q[0].0 - q[2].0) + (q[2].0 - q[1].0) * (q[0].1 - q[2].1);
            if d.abs() < 1e-12 {
                continue;
            }
            let a = ((q[1].1 - q[2].1) * (x - q[2].0) + (q[2].0 - q[1].0) * (y - q[2].1)) / d;
            let b = ((q[2].1 - q[0].1) * (x - q[2].0) + (q[0].0 - q[2].0) * (y - q[2].1)) / d;
            let c = 1.0 - a - b;
            if a < -1e-6 || b < -1e-6 || c < -1e-6 {
                continue;
            }
            let z = a * q[0].2 + b * q[1].2 + c * q[2].2;
            let alpha = a * col[4 * v[0] + 3] + b * col[4 * v[1] + 3] + c * col[4 * v[2] + 3];
            if best.as_ref().is_none_or(|bst| z > bst.0 + 1e-6) {
                best = Some((z, name.clone(), alpha));
            }
        }
    }
    best
}

fn export_map(root: &std::path::Path, dir: &str) -> Vec<u8> {
    use mshgltf::terrain::{export, source::TerrainSource};
    let msh = root.join(dir).join("Land.msh");
    let libs = mshgltf::material::Libraries::load(root).unwrap();
    let src = TerrainSource::load(&msh, Mode::Strict, Some(&libs)).unwrap();
    let g = export::export(&src, Some(&libs), &Default::default());
    export::to_glb(&g).unwrap()
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn maps_export_heights_materials_and_alpha_at_every_sample_point() {
    let Some(root) = common::corpus() else { return };
    for t in terrains(&root) {
        let glb = export_map(&root, t["dir"].as_str().unwrap());
        let g = Glb::parse(&glb);
        let mut names: Vec<String> = g.json["materials"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                m["name"]
                    .as_str()
                    .unwrap()
                    .split('#')
                    .next()
                    .unwrap()
                    .to_string()
            })
            .collect();
        names.sort();
        names.dedup();
        let want: Vec<String> =
            serde_json::from_value(t["expected_gltf"]["material_names"].clone()).unwrap();
        assert_eq!(names, want, "{}", t["map"]);
        let tris: usize = g.json["meshes"][0]["primitives"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                g.json["accessors"][p["indices"].as_u64().unwrap() as usize]["count"]
                    .as_u64()
                    .unwrap() as usize
                    / 3
            })
            .sum();
        assert_eq!(
            tris as u64,
            t["expected_gltf"]["triangles"].as_u64().unwrap()
        );
        for s in t["samples"].as_array().unwrap() {
            let (x, y) = (s["x"].as_f64().unwrap(), s["y"].as_f64().unwrap());
            let (z, name, alpha) =
                surface_at(&g, x, y).unwrap_or_else(|| panic!("{}: no face under {s}", t["map"]));
            assert!(
                (z - s["z"].as_f64().unwrap()).abs() < 1e-3,
                "{}: height {z} at {s}",
                t["map"]
            );
            let want = match s["second"].as_str() {
                Some(sec) => format!("{}+{sec}", s["material"].as_str().unwrap()),
                None => s["material"].as_str().unwrap().to_string(),
            };
            assert_eq!(name, want, "{}: material at {s}", t["map"]);
            assert!(
                (alpha - s["alpha"].as_f64().unwrap()).abs() < 1e-3,
                "{}: alpha {alpha} at {s}",
                t["map"]
            );
        }
    }
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn terrain_and_microtexture_pixels_equal_the_manifest() {
    use sha2::{Digest, Sha256};
    let Some(root) = common::corpus() else { return };
    let m = common::manifest(&root);
    let by_name = |n: &str| {
        m["textures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == n)
            .cloned()
    };
    for t in terrains(&root) {
        let g = Glb::parse(&export_map(&root, t["dir"].as_str().unwrap()));
        let mut want: Vec<String> = Vec::new();
        for r in t["land1"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["used_lod0"].as_u64() > Some(0))
        {
            want.push(r["texture"].as_str().unwrap().into());
            want.push(r["micro"].as_str().unwrap().into());
        }
        for name in want {
            let img = g.json["images"]
                .as_array()
                .unwrap()
                .iter()
                .position(|i| i["name"] == name.as_str())
                .unwrap_or_else(|| panic!("{name} not embedded"));
            let png = g.view(g.json["images"][img]["bufferView"].as_u64().unwrap() as usize);
            let rgba = image::load_from_memory(png).unwrap().to_rgba8();
            let mt = by_name(&name).unwrap_or_else(|| panic!("{name} not in manifest"));
            let sha: String = Sha256::digest(rgba.as_raw())
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            assert_eq!(sha, mt["mip0_rgba8_sha256"].as_str().unwrap(), "{name}");
            for p in mt["pixels_mip0"].as_array().unwrap() {
                let px = rgba.get_pixel(
                    p["x"].as_u64().unwrap() as u32,
                    p["y"].as_u64().unwrap() as u32,
                );
                assert_eq!(serde_json::json!(px.0), p["rgba"], "{name} pixel {p}");
            }
        }
        // Every material references its microtexture from the extras.
        for mat in g.json["materials"].as_array().unwrap() {
            assert!(
                mat["extras"]["parkan_terrain"]["micro"]["texture"].is_u64(),
                "{}",
                mat["name"]
            );
        }
    }
}

/// Runs this build's `msh2gltf` with `args`.
fn msh2gltf(args: &[&std::ffi::OsStr]) -> std::process::Output {
    common::msh2gltf().args(args).output().unwrap()
}

fn validate_clean(files: &[std::path::PathBuf]) {
    let tool = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/tools/gltf-validate"
    ));
    let out = std::process::Command::new(tool)
        .arg("--strict")
        .args(files)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn every_map_converts_validator_clean_with_each_option() {
    let Some(root) = common::corpus() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for t in terrains(&root) {
        let msh = root.join(t["dir"].as_str().unwrap()).join("Land.msh");
        for (k, extra) in [vec![], vec!["--lod", "1"], vec!["--all-cells", "--areals"]]
            .iter()
            .enumerate()
        {
            let out = tmp
                .path()
                .join(format!("{}_{k}.glb", t["map"].as_str().unwrap()));
            let mut args = vec![msh.as_os_str(), out.as_os_str()];
            args.extend(extra.iter().map(std::ffi::OsStr::new));
            let o = msh2gltf(&args);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            files.push(out);
        }
        let g = Glb::parse(&std::fs::read(&files[files.len() - 1]).unwrap());
        let names: Vec<&str> = g.json["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["Land", "Land.L0", "Land.L1", "Land.areals"]);
        let lod1 = Glb::parse(&std::fs::read(&files[files.len() - 2]).unwrap());
        assert_eq!(
            lod1.json["meshes"][0]["extras"]["faces"].as_u64(),
            t["counts"]["faces_lod1"].as_u64()
        );
    }
    validate_clean(&files);
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn bad_terrain_files_exit_1_naming_the_rule_and_tolerant_lists_skips() {
    let Some(root) = common::corpus() else { return };
    let tmp = tempfile::tempdir().unwrap();
    for b in bad_terrain(&root) {
        let msh = root.join(b["file"].as_str().unwrap());
        let out = tmp
            .path()
            .join(format!("{}.glb", b["check"].as_str().unwrap()));
        let o = msh2gltf(&[msh.as_os_str(), out.as_os_str()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{}: {err}", b["file"]);
        assert!(
            err.contains(b["check"].as_str().unwrap()) && err.contains("Res"),
            "{}: {err}",
            b["file"]
        );
        let o = msh2gltf(&[
            msh.as_os_str(),
            out.as_os_str(),
            "--tolerant".as_ref(),
            "--force".as_ref(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        if b["tolerant_may_convert"].as_bool().unwrap() {
            assert!(o.status.success(), "{}: {err}", b["file"]);
            assert!(
                err.contains(b["check"].as_str().unwrap()),
                "{}: tolerant does not list {}: {err}",
                b["file"],
                b["check"]
            );
            validate_clean(std::slice::from_ref(&out));
        } else {
            assert_eq!(o.status.code(), Some(1), "{}: {err}", b["file"]);
        }
    }
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn batch_converts_every_map_into_out_maps() {
    let Some(root) = common::corpus() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let report = tmp.path().join("report.json");
    let out = tmp.path().join("out");
    let o = msh2gltf(&[
        root.join("MAPS").as_os_str(),
        out.as_os_str(),
        "--report".as_ref(),
        report.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let rows = r["models"].as_array().unwrap();
    for t in terrains(&root) {
        let name = t["map"].as_str().unwrap();
        assert!(out.join(format!("{name}.glb")).is_file(), "{name}");
        assert!(rows.iter().any(|x| x["kind"] == "terrain"
            && x["status"] == "converted"
            && x["output"]
                .as_str()
                .unwrap()
                .ends_with(&format!("{name}.glb"))));
    }
}

/// How many records differ between `a` and `b` (compared pairwise).
fn differing<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    a.iter().zip(b).filter(|(a, b)| a != b).count()
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn derived_values_recomputed_from_scratch_equal_the_corpus() {
    use mshgltf::terrain::derive;
    use std::collections::BTreeSet;
    let Some(root) = common::corpus() else { return };
    for t in terrains(&root) {
        let bytes = std::fs::read(root.join(t["dir"].as_str().unwrap()).join("Land.msh")).unwrap();
        let base = read::decode(&bytes).unwrap();
        let mut l = base.clone();
        let all_faces: BTreeSet<usize> = (0..l.faces.len()).collect();
        let all_vertices: BTreeSet<usize> = (0..l.positions.len()).collect();
        let all_squares: BTreeSet<usize> = (0..l.squares.len()).collect();
        derive::face_normals(&mut l, &all_faces);
        derive::vertex_normals(&mut l, &all_vertices);
        derive::cell_boxes(&mut l, &all_squares);
        l.corners = derive::header_corners(&l);
        for s in 0..l.slots.len() {
            derive::draw_order(&mut l, s);
        }
        let diff = |a: usize, b: usize, what: &str| assert_eq!(a, b, "{}: {what}", t["map"]);
        diff(differing(&l.faces, &base.faces), 0, "face normals");
        diff(differing(&l.normals, &base.normals), 0, "vertex normals");
        diff(differing(&l.slots, &base.slots), 0, "cell boxes");
        assert_eq!(l.corners, base.corners, "{}: header", t["map"]);
        diff(differing(&l.order, &base.order), 0, "Res11");
    }
}

impl Glb {
    fn write(&self) -> Vec<u8> {
        common::glb(&self.json, &self.bin)
    }

    /// Replaces the indices of mesh 0's primitive `p` (u32, new view).
    fn set_indices(&mut self, p: usize, idx: &[u32]) {
        let off = self.bin.len();
        self.bin.extend(idx.iter().flat_map(|x| x.to_le_bytes()));
        let views = self.json["bufferViews"].as_array_mut().unwrap();
        views
            .push(serde_json::json!({"buffer": 0, "byteOffset": off, "byteLength": idx.len() * 4}));
        let v = views.len() - 1;
        let accs = self.json["accessors"].as_array_mut().unwrap();
        accs.push(serde_json::json!({"bufferView": v, "componentType": 5125, "count": idx.len(), "type": "SCALAR"}));
        let a = accs.len() - 1;
        self.json["meshes"][0]["primitives"][p]["indices"] = a.into();
        self.json["buffers"][0]["byteLength"] = self.bin.len().into();
    }
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn unedited_maps_come_back_byte_identical_through_glb_and_gltf() {
    let Some(root) = common::corpus() else { return };
    let tmp = tempfile::tempdir().unwrap();
    for t in terrains(&root) {
        let msh = root.join(t["dir"].as_str().unwrap()).join("Land.msh");
        for ext in ["glb", "gltf"] {
            let g = tmp.path().join(format!("m.{ext}"));
            let back = tmp.path().join(format!("m_{ext}.msh"));
            assert!(
                msh2gltf(&[msh.as_os_str(), g.as_os_str(), "--force".as_ref()])
                    .status
                    .success()
            );
            let o = gltf2msh(&[
                g.as_os_str(),
                "--base".as_ref(),
                msh.as_os_str(),
                "-o".as_ref(),
                back.as_os_str(),
                "--force".as_ref(),
            ]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            assert!(
                std::fs::read(&back).unwrap() == std::fs::read(&msh).unwrap(),
                "{} via .{ext}",
                t["map"]
            );
        }
    }
}

/// Runs this build's `gltf2msh` with `args`.
fn gltf2msh(args: &[&std::ffi::OsStr]) -> std::process::Output {
    common::gltf2msh().args(args).output().unwrap()
}

/// Raises every vertex within 40 units of (`hx`, `hy`) (game axes) by 8
/// units (glTF +Y) and the POSITION max with them; returns the POSITION
/// accessor.
fn raise_hill(g: &mut Glb, hx: f64, hy: f64) -> usize {
    // Raise every vertex within 40 units of the hill sample by 8 units (glTF +Y).
    let pos_acc = g.json["meshes"][0]["primitives"][0]["attributes"]["POSITION"]
        .as_u64()
        .unwrap() as usize;
    let view = g.json["accessors"][pos_acc]["bufferView"].as_u64().unwrap() as usize;
    let off = g.json["bufferViews"][view]["byteOffset"].as_u64().unwrap() as usize;
    let count = g.json["accessors"][pos_acc]["count"].as_u64().unwrap() as usize;
    let mut raised = 0;
    for i in 0..count {
        let f = |k: usize| {
            f32::from_le_bytes(
                g.bin[off + 12 * i + 4 * k..off + 12 * i + 4 * k + 4]
                    .try_into()
                    .unwrap(),
            )
        };
        let (x, y, z) = (f64::from(f(0)), -f64::from(f(2)), f(1));
        if ((x - hx).powi(2) + (y - hy).powi(2)).sqrt() < 40.0 {
            g.bin[off + 12 * i + 4..off + 12 * i + 8].copy_from_slice(&(z + 8.0).to_le_bytes());
            raised += 1;
        }
    }
    assert!(raised > 0);
    let max_acc = &mut g.json["accessors"][pos_acc]["max"];
    max_acc[1] = (max_acc[1].as_f64().unwrap() + 8.0).into();
    pos_acc
}

/// Moves the LOD0 faces within 25 units of (`px`, `py`) (game axes) from
/// their primitives (water excepted) to the primitive of material "L24".
fn repaint_patch(g: &mut Glb, pos_acc: usize, px: f64, py: f64) {
    // Repaint the LOD0 faces within 25 units of the patch sample with material "L24".
    let prims = g.json["meshes"][0]["primitives"]
        .as_array()
        .unwrap()
        .clone();
    let target = prims
        .iter()
        .position(|p| {
            g.json["materials"][p["material"].as_u64().unwrap() as usize]["name"] == "L24"
        })
        .unwrap();
    let (pos, _) = g.read(pos_acc);
    let mut moved: Vec<u32> = Vec::new();
    for (k, p) in prims.iter().enumerate() {
        let name = g.json["materials"][p["material"].as_u64().unwrap() as usize]["name"]
            .as_str()
            .unwrap()
            .to_string();
        if name.contains("WATER") || k == target {
            continue;
        }
        let (idx, _) = g.read(p["indices"].as_u64().unwrap() as usize);
        let (mut keep, mut take) = (Vec::new(), Vec::new());
        for tri in idx.chunks_exact(3) {
            let c = tri.iter().fold((0.0, 0.0), |a, &i| {
                (
                    a.0 + pos[3 * i as usize] / 3.0,
                    a.1 - pos[3 * i as usize + 2] / 3.0,
                )
            });
            let dst = if ((c.0 - px).powi(2) + (c.1 - py).powi(2)).sqrt() < 25.0 {
                &mut take
            } else {
                &mut keep
            };
            dst.extend(tri.iter().map(|&i| i as u32));
        }
        if !take.is_empty() {
            moved.extend(take);
            g.set_indices(k, &keep);
        }
    }
    assert!(!moved.is_empty());
    let (mut t_idx, _) = g.read(prims[target]["indices"].as_u64().unwrap() as usize);
    t_idx.extend(moved.iter().map(|&i| f64::from(i)));
    g.set_indices(target, &t_idx.iter().map(|&i| i as u32).collect::<Vec<_>>());
}

/// `gltf2msh glb --base msh -o back`, which must succeed with a Land.msh
/// the strict validator accepts.
fn back_validated(glb: &Path, msh: &Path, back: &Path) {
    let o = gltf2msh(&[
        glb.as_os_str(),
        "--base".as_ref(),
        msh.as_os_str(),
        "-o".as_ref(),
        back.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let land = read::decode(&std::fs::read(back).unwrap()).unwrap();
    validate::validate(&land, Mode::Strict).unwrap();
}

/// Converts the edited `g` back with `gltf2msh --base msh` into `dir`,
/// checks the result passes the strict validator, and re-exports it (with
/// the map's Land.map and WEAR files beside it).
fn convert_back_and_re_export(root: &Path, dir: &Path, msh: &Path, g: &Glb) -> Glb {
    let edited = dir.join("edited.glb");
    std::fs::write(&edited, g.write()).unwrap();
    let back = dir.join("Land.msh");
    // The written file passes the strict validator; re-export shows the edits.
    back_validated(&edited, msh, &back);
    for f in ["Land.map", "Land1.wea", "Land2.wea"] {
        std::fs::copy(msh.with_file_name(f), dir.join(f)).unwrap();
    }
    let libs = mshgltf::material::Libraries::load(root).unwrap();
    let src = terrain::source::TerrainSource::load(&back, Mode::Strict, Some(&libs)).unwrap();
    Glb::parse(
        &terrain::export::to_glb(&terrain::export::export(
            &src,
            Some(&libs),
            &Default::default(),
        ))
        .unwrap(),
    )
}

/// A sample's (x, y) in game axes.
fn sample_xy(s: &serde_json::Value) -> (f64, f64) {
    (s["x"].as_f64().unwrap(), s["y"].as_f64().unwrap())
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn raised_hill_and_repainted_patch_convert_back_and_re_export() {
    let Some(root) = common::corpus() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let t = &terrains(&root)[0];
    let msh = root.join(t["dir"].as_str().unwrap()).join("Land.msh");
    let mut g = Glb::parse(&export_map(&root, t["dir"].as_str().unwrap()));
    let samples: Vec<&serde_json::Value> = t["samples"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["kind"] == "land")
        .collect();
    let hill = samples[0];
    let patch = samples
        .iter()
        .copied()
        .find(|s| s["material"] != "L24" && s["material"] != hill["material"])
        .unwrap();
    let (hx, hy) = sample_xy(hill);
    let pos_acc = raise_hill(&mut g, hx, hy);
    let (px, py) = sample_xy(patch);
    repaint_patch(&mut g, pos_acc, px, py);
    let re = convert_back_and_re_export(&root, tmp.path(), &msh, &g);
    let (z, _, _) = surface_at(&re, hx, hy).unwrap();
    assert!(
        (z - (hill["z"].as_f64().unwrap() + 8.0)).abs() < 1e-3,
        "hill: {z} vs {}",
        hill["z"]
    );
    let (_, name, alpha) = surface_at(&re, px, py).unwrap();
    assert_eq!(name, "L24");
    assert!((alpha - 1.0).abs() < 1e-3 || patch["alpha"].as_f64().unwrap() != 1.0);
    for s in t["samples"].as_array().unwrap() {
        let (x, y) = sample_xy(s);
        let far = ((x - hx).powi(2) + (y - hy).powi(2)).sqrt() > 45.0
            && ((x - px).powi(2) + (y - py).powi(2)).sqrt() > 30.0;
        if far {
            let (z, name, _) = surface_at(&re, x, y).unwrap();
            assert!((z - s["z"].as_f64().unwrap()).abs() < 1e-3, "{s}");
            assert_eq!(
                name.split('+').next().unwrap(),
                s["material"].as_str().unwrap(),
                "{s}"
            );
        }
    }
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn tolerant_export_of_a_broken_res11_comes_back_repaired() {
    let Some(root) = common::corpus() else { return };
    let tmp = tempfile::tempdir().unwrap();
    for b in bad_terrain(&root)
        .iter()
        .filter(|b| b["check"] == "terrain.res11_permutation")
    {
        let msh = root.join(b["file"].as_str().unwrap());
        let glb = tmp.path().join("r.glb");
        let back = tmp.path().join("r.msh");
        assert!(msh2gltf(&[
            msh.as_os_str(),
            glb.as_os_str(),
            "--tolerant".as_ref(),
            "-q".as_ref()
        ])
        .status
        .success());
        back_validated(&glb, &msh, &back);
        // The corpus breaks one entry of its base map; regenerating Res11 gives that map back.
        let base = root.join(b["base_map"].as_str().unwrap()).join("Land.msh");
        assert!(std::fs::read(&back).unwrap() == std::fs::read(&base).unwrap());
    }
}
