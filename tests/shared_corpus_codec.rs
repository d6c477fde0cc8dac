//! MSH codec against the shared corpus: NRes byte-exact rewrite, strict
//! decode/encode round trip of every valid model, and the manifest's bad files.
//! Skips (prints a line) when ../shared/corpus is missing.

use std::path::{Path, PathBuf};

use mshgltf::msh::{self, Mode};
use mshgltf::nres;

mod common;
use common::{corpus, manifest};

/// Every file under `root` (recursively) except `bad/` and the manifest.
fn corpus_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir") {
            let p = e.expect("dir entry").path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n == "bad") {
                    continue;
                }
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n != "manifest.json") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn is_msh_name(name: &[u8]) -> bool {
    name.len() >= 4 && name[name.len() - 4..].eq_ignore_ascii_case(b".msh")
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn every_nres_file_and_nested_nres_rewrites_byte_for_byte() {
    let Some(root) = corpus() else { return };
    let mut outer = 0;
    let mut nested = 0;
    for path in corpus_files(&root) {
        let bytes = std::fs::read(&path).expect("read");
        if !nres::is_nres(&bytes) {
            continue;
        }
        let a =
            nres::read(&bytes, Mode::Strict).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            a.warnings.is_empty(),
            "{}: {:?}",
            path.display(),
            a.warnings
        );
        assert!(
            nres::write(&a.entries).expect("write") == bytes,
            "{}: rewrite differs",
            path.display()
        );
        outer += 1;
        for e in &a.entries {
            if !nres::is_nres(e.data) {
                continue;
            }
            let n = nres::read(e.data, Mode::Strict).unwrap_or_else(|err| {
                panic!(
                    "{}:{}: {err}",
                    path.display(),
                    String::from_utf8_lossy(e.name)
                )
            });
            assert!(
                nres::write(&n.entries).expect("write") == e.data,
                "{}:{}: nested rewrite differs",
                path.display(),
                String::from_utf8_lossy(e.name)
            );
            nested += 1;
        }
    }
    println!("{outer} NRes files, {nested} nested NRes rewritten byte for byte");
    // Every top-level NRes the manifest lists outside bad/ (archives,
    // libraries, MAPS files, bare models, objects.rlb, ...) was rewritten, and,
    // nested, every archive model of the manifest.
    let m = manifest(&root);
    let listed = m["files"]
        .as_array()
        .expect("files[]")
        .iter()
        .map(|f| f["path"].as_str().expect("files[].path"))
        .filter(|f| !f.starts_with("bad/"))
        .filter(|f| nres::is_nres(&std::fs::read(root.join(f)).expect("listed file")))
        .count();
    assert_eq!(outer, listed, "top-level NRes files");
    let in_archives = m["summary"]["models_in_archives"]
        .as_u64()
        .expect("summary.models_in_archives") as usize;
    assert_eq!(nested, in_archives, "nested NRes payloads");
}

/// (label, payload) of every valid model: bare files in models/ and every
/// `.msh` entry of the top-level archives (bad/ and MAPS/ excluded).
fn valid_models(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut top: Vec<PathBuf> = std::fs::read_dir(root)
        .expect("read_dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "rlb"))
        .collect();
    top.sort();
    for path in top {
        let bytes = std::fs::read(&path).expect("read");
        if !nres::is_nres(&bytes) {
            continue; // RsLi (gamefont.rlb)
        }
        let a = nres::read(&bytes, Mode::Strict).expect("archive");
        for e in a.entries.iter().filter(|e| is_msh_name(e.name)) {
            out.push((
                format!(
                    "{}:{}",
                    path.file_name().unwrap_or_default().to_string_lossy(),
                    String::from_utf8_lossy(e.name)
                ),
                e.data.to_vec(),
            ));
        }
    }
    let mut bare: Vec<PathBuf> = std::fs::read_dir(root.join("models"))
        .expect("models/")
        .map(|e| e.expect("entry").path())
        .collect();
    bare.sort();
    for p in bare {
        out.push((
            p.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned(),
            std::fs::read(&p).expect("read"),
        ));
    }
    out
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn every_valid_model_decodes_strictly_and_encodes_to_the_same_bytes() {
    let Some(root) = corpus() else { return };
    let m = manifest(&root);
    let models = valid_models(&root);
    let expected = m["summary"]["models"].as_u64().expect("summary.models") as usize;
    let in_archives = m["summary"]["models_in_archives"]
        .as_u64()
        .expect("in archives") as usize;
    let bare = m["summary"]["direct_model_files"].as_u64().expect("direct") as usize;
    assert_eq!(models.len(), expected, "model count");
    assert_eq!(models.len(), in_archives + bare);

    let mut legacy = 0;
    let mut animated = 0;
    let start = std::time::Instant::now();
    let decoded: Vec<msh::Decoded> = models
        .iter()
        .map(|(label, bytes)| {
            msh::decode(bytes, Mode::Strict).unwrap_or_else(|e| panic!("{label}: {e}"))
        })
        .collect();
    let decode_time = start.elapsed();
    let start = std::time::Instant::now();
    for ((label, bytes), d) in models.iter().zip(&decoded) {
        assert!(d.warnings.is_empty(), "{label}: {:?}", d.warnings);
        if matches!(d.model.nodes, msh::Nodes::Legacy24 { .. }) {
            legacy += 1;
        }
        if d.model.nodes38().iter().any(|n| n.map_start != msh::NONE16) {
            animated += 1;
        }
        let enc = msh::encode(&d.model).unwrap_or_else(|e| panic!("{label}: encode: {e}"));
        assert!(enc == *bytes, "{label}: encode differs from the file");
    }
    println!(
        "{} models: decode+validate {decode_time:?}, validate+encode {:?}",
        models.len(),
        start.elapsed()
    );
    assert_eq!(
        legacy,
        m["summary"]["legacy_models"].as_u64().unwrap_or(1) as usize
    );
    assert_eq!(
        animated,
        m["summary"]["animated_models"].as_u64().expect("animated") as usize
    );
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn manifest_counts_match_the_decoded_models() {
    let Some(root) = corpus() else { return };
    let m = manifest(&root);
    let models = valid_models(&root);
    let find = |archive: &str, entry: &str| -> &[u8] {
        let label = format!("{archive}:{entry}");
        &models
            .iter()
            .find(|(l, _)| *l == label || (archive.is_empty() && l == entry))
            .unwrap_or_else(|| panic!("{label} not found"))
            .1
    };
    let list = m["models"].as_array().expect("models[]");
    for rec in list
        .iter()
        .chain(m["legacy_models"].as_array().expect("legacy[]"))
    {
        let archive = rec["archive"].as_str().unwrap_or("");
        let entry = rec["entry"]
            .as_str()
            .or_else(|| {
                rec["file"]
                    .as_str()
                    .map(|f| f.trim_start_matches("models/"))
            })
            .expect("entry");
        let bytes = find(archive, entry);
        let d = msh::decode(bytes, Mode::Strict).expect("decode");
        let md = &d.model;
        let c = &rec["counts"];
        let label = format!("{archive}:{entry}");
        let n = |k: &str| {
            c[k].as_u64()
                .unwrap_or_else(|| panic!("{label}: counts.{k}")) as usize
        };
        assert_eq!(md.nodes.len(), n("nodes"), "{label} nodes");
        assert_eq!(md.slots.len(), n("slots"), "{label} slots");
        assert_eq!(md.vertex_count(), n("vertices"), "{label} vertices");
        assert_eq!(md.indices.len(), n("indices"), "{label} indices");
        assert_eq!(md.batches.len(), n("batches"), "{label} batches");
        assert_eq!(
            md.tris.as_ref().map_or(0, Vec::len),
            n("triangles"),
            "{label} tris"
        );
        assert_eq!(
            md.keys.as_ref().map_or(0, Vec::len),
            n("keys"),
            "{label} keys"
        );
        assert_eq!(
            md.frame_count as usize,
            n("frame_count"),
            "{label} frame_count"
        );
        assert_eq!(
            md.frame_map.as_ref().map_or(0, Vec::len),
            n("map_words"),
            "{label} words"
        );
        if let Some(nodes) = rec["nodes"].as_array() {
            for (i, jn) in nodes.iter().enumerate() {
                let node = md.nodes38()[i];
                let parent = jn["parent"].as_u64().map_or(msh::NONE16, |p| p as u16);
                assert_eq!(node.parent, parent, "{label} node {i} parent");
                assert_eq!(
                    node.flags as u64,
                    jn["flags"].as_u64().expect("flags"),
                    "{label} node {i}"
                );
                if let Some(name) = jn["expected_name"].as_str() {
                    // Decided per model (format-notes §6 R1); the manifest's
                    // expected_name is that rule's result.
                    let names = mshgltf::convention::detect(md, None, &Default::default())
                        .conventions
                        .names;
                    let got = names
                        .node_name(md, i)
                        .map(mshgltf::convention::decode_name)
                        .unwrap_or_else(|| format!("node{i}"));
                    assert_eq!(got, name, "{label} node {i} name");
                }
                let cells = jn["slots"].as_array().expect("slots");
                for (c, v) in cells.iter().enumerate() {
                    let want = v.as_u64().map_or(msh::NONE16, |s| s as u16);
                    assert_eq!(node.slots[c], want, "{label} node {i} cell {c}");
                }
            }
        }
    }
}

fn entry_payload<'a>(a: &nres::Archive<'a>, name: &str) -> &'a [u8] {
    let i = a
        .find(name.as_bytes())
        .unwrap_or_else(|| panic!("entry {name} missing"));
    a.entries[i].data
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn bad_files_report_the_manifest_rule() {
    let Some(root) = corpus() else { return };
    let m = manifest(&root);
    let mut checked = 0;
    let mut problems: Vec<String> = Vec::new();
    // Terrain and mission files (a `kind`) are checked by their own tests.
    for b in common::bad_records(&m, None) {
        let file = b["file"].as_str().expect("file");
        if !file.ends_with(".msh") {
            continue;
        }
        let check = b["check"].as_str().expect("check");
        let strict = b["strict"].as_str().expect("strict");
        let tolerant_ok = b["tolerant_may_convert"].as_bool().expect("tolerant");
        let bytes = std::fs::read(root.join(file)).expect("read bad file");
        let s = msh::decode(&bytes, Mode::Strict);
        match (strict, s) {
            ("reject", Err(e)) if e.rule == check => {}
            ("warn", Ok(d)) if d.warnings.iter().any(|w| w.rule == check) => {}
            (_, r) => problems.push(format!(
                "{file}: strict ({strict} {check}) gave {:?}",
                r.map(|d| d.warnings)
            )),
        }
        match (tolerant_ok, msh::decode(&bytes, Mode::Tolerant)) {
            (true, Ok(d)) => {
                if !d.warnings.iter().any(|w| w.rule == check) {
                    problems.push(format!(
                        "{file}: tolerant warnings {:?} lack {check}",
                        d.warnings
                    ));
                }
                if let Err(e) = msh::validate(&d.model) {
                    problems.push(format!("{file}: tolerant model invalid: {e}"));
                }
                if let Err(e) = msh::encode(&d.model) {
                    problems.push(format!("{file}: tolerant model does not encode: {e}"));
                }
            }
            (false, Err(e)) if e.rule == check => {}
            (_, r) => problems.push(format!(
                "{file}: tolerant (may convert: {tolerant_ok}) gave {:?}",
                r.map(|d| d.warnings)
            )),
        }
        checked += 1;
    }
    for p in &problems {
        println!("{p}");
    }
    assert!(
        problems.is_empty(),
        "{} mismatches, first: {}",
        problems.len(),
        problems[0]
    );
    // Every broken model on disk (bad/*.msh) has its manifest record.
    let on_disk = std::fs::read_dir(root.join("bad"))
        .expect("bad/")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| is_msh_name(e.file_name().to_string_lossy().as_bytes()))
        })
        .count();
    assert!(checked > 0);
    assert_eq!(checked, on_disk, "bad model files checked");
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn bad_archive_nested_models() {
    let Some(root) = corpus() else { return };
    let bad = root.join("bad");

    let bytes = std::fs::read(bad.join("archive_one_broken.rlb")).expect("read");
    let a = nres::read(&bytes, Mode::Strict).expect("outer archive is valid");
    for name in ["bad_127.msh", "bad_897.msh", "bad_398.msh"] {
        let d = msh::decode(entry_payload(&a, name), Mode::Strict)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(d.warnings.is_empty());
        assert_eq!(
            msh::encode(&d.model).expect("encode"),
            entry_payload(&a, name)
        );
    }
    let broken = entry_payload(&a, "broken_01.msh");
    assert_eq!(
        msh::decode(broken, Mode::Strict).unwrap_err().rule,
        "msh.index_range"
    );
    assert_eq!(
        msh::decode(broken, Mode::Tolerant).unwrap_err().rule,
        "msh.index_range"
    );

    // Nested payloads that are not models: the container rule is reported
    // (the caller maps it to msh.nested_container).
    for (file, rule) in [
        ("archive_nested_not_nres.rlb", "nres.magic"),
        ("archive_nested_truncated.rlb", "nres.total_size"),
        ("archive_nested_count_huge.rlb", "nres.entry_count"),
    ] {
        let bytes = std::fs::read(bad.join(file)).expect("read");
        let a = nres::read(&bytes, Mode::Strict).expect("outer archive is valid");
        let e = a
            .entries
            .iter()
            .find(|e| is_msh_name(e.name))
            .expect("a .msh entry");
        for mode in [Mode::Strict, Mode::Tolerant] {
            let err = msh::decode(e.data, mode).unwrap_err();
            assert_eq!(err.rule, rule, "{file} ({mode:?}): {err}");
        }
    }
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn terrain_is_not_a_model_and_models_are() {
    let Some(root) = corpus() else { return };
    let land = std::fs::read(root.join("MAPS/m01/Land.msh")).expect("Land.msh");
    let a = nres::read(&land, Mode::Strict).expect("Land.msh is NRes");
    assert!(!msh::is_model(&a));
    let tank = std::fs::read(root.join("models/demo_tank_86.msh")).expect("tank");
    let a = nres::read(&tank, Mode::Strict).expect("tank is NRes");
    assert!(msh::is_model(&a));
    let d = msh::decode_entries(&a, Mode::Strict).expect("decode_entries");
    assert_eq!(msh::encode(&d.model).expect("encode"), tank);
}
