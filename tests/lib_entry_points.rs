//! The tools' runs called as library functions, as the binaries call them
//! (issue 16: run planning, library updates and reports live in the
//! library where tests call them directly): `msh2gltf::run`,
//! `msh2gltf::list`, `gltf2msh::run`, on the committed samples.

mod common;

use clap::Parser;
use mshgltf::{gltf2msh, msh2gltf};

/// `msh2gltf::run` on the demo archive writes one GLB per model entry and a
/// report whose rows say so; `gltf2msh::run` sends one of them back with
/// `--base ARCHIVE:ENTRY` as a bare model equal to the entry's bytes.
#[test]
fn msh2gltf_then_gltf2msh_through_the_library() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("demo");
    let report = dir.path().join("report.json");
    let demo = common::sample("demo/demo.rlb");
    let args = msh2gltf::Args::try_parse_from([
        "msh2gltf".as_ref(),
        demo.as_os_str(),
        out.as_os_str(),
        "--report".as_ref(),
        report.as_os_str(),
        "-q".as_ref(),
    ])
    .unwrap();
    assert_eq!(msh2gltf::run(&args).unwrap(), 0);

    let msh2gltf::Listing::Models(listed) =
        msh2gltf::list(demo.to_str().unwrap(), mshgltf::limits::DEFAULT_MAX_WORK).unwrap()
    else {
        panic!("demo.rlb lists no models");
    };
    let names: Vec<String> = listed["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap().to_string())
        .collect();
    assert!(!names.is_empty());
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(r["converted"].as_u64(), Some(names.len() as u64));
    for n in &names {
        let glb = out.join(format!("{}.glb", n.trim_end_matches(".msh")));
        assert!(glb.is_file(), "{} missing", glb.display());
    }

    let entry = &names[0];
    let glb = out.join(format!("{}.glb", entry.trim_end_matches(".msh")));
    let back = dir.path().join("back.msh");
    let base = format!("{}:{entry}", demo.display());
    let args = gltf2msh::Args::try_parse_from([
        "gltf2msh".as_ref(),
        glb.as_os_str(),
        "--base".as_ref(),
        base.as_ref(),
        "-o".as_ref(),
        back.as_os_str(),
        "-q".as_ref(),
    ])
    .unwrap();
    gltf2msh::run(&args).unwrap();
    let archive = std::fs::read(&demo).unwrap();
    let a = mshgltf::nres::read(&archive, mshgltf::nres::Mode::Strict).unwrap();
    let i = mshgltf::source::find_entry(&a, entry).unwrap();
    assert_eq!(std::fs::read(&back).unwrap(), a.entries[i].data);
}

/// Usage errors come back as typed values with the binaries' exit codes:
/// a missing input is 2 for both tools, and nothing is written.
#[test]
fn run_errors_carry_the_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.msh");
    let args = msh2gltf::Args::try_parse_from(["msh2gltf".as_ref(), missing.as_os_str()]).unwrap();
    let e = msh2gltf::run(&args).unwrap_err();
    assert_eq!(msh2gltf::exit_code(&e), 2, "{e}");
    let args = gltf2msh::Args::try_parse_from([
        "gltf2msh".as_ref(),
        dir.path().join("none.glb").as_os_str(),
    ])
    .unwrap();
    let e = gltf2msh::run(&args).unwrap_err();
    assert_eq!(e.exit_code(), 2, "{e}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
