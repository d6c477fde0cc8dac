//! The `msh2gltf` command on the committed samples: exit codes, outputs,
//! refusal to overwrite, reports, and path safety of batch outputs.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use mshgltf::nres;

use common::sample;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_msh2gltf"))
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

#[test]
fn converts_a_sample_to_glb_and_refuses_to_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rotor.glb");
    let st = bin()
        .arg(sample("anim_rotor.msh"))
        .arg(&out)
        .status()
        .unwrap();
    assert_eq!(st.code(), Some(0));
    let glb = std::fs::read(&out).unwrap();
    assert_eq!(&glb[..4], b"glTF");
    assert_eq!(
        u32::from_le_bytes(glb[8..12].try_into().unwrap()) as usize,
        glb.len()
    );
    // A second run without --force keeps the file and exits 2.
    let st = bin()
        .arg(sample("anim_rotor.msh"))
        .arg(&out)
        .status()
        .unwrap();
    assert_eq!(st.code(), Some(2));
    let st = bin()
        .arg(sample("anim_rotor.msh"))
        .arg(&out)
        .arg("--force")
        .status()
        .unwrap();
    assert_eq!(st.code(), Some(0));
    // No temporary files are left behind.
    assert_eq!(files_under(dir.path()), vec![out]);
}

#[test]
fn never_overwrites_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("box.msh");
    std::fs::copy(sample("static_box.msh"), &input).unwrap();
    let before = std::fs::read(&input).unwrap();
    let st = bin()
        .arg(&input)
        .arg(&input)
        .arg("--force")
        .status()
        .unwrap();
    assert_eq!(st.code(), Some(2));
    assert_eq!(std::fs::read(&input).unwrap(), before);
}

#[test]
fn gltf_output_writes_a_bin_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tower.gltf");
    let st = bin()
        .arg(sample("lod_tower.msh"))
        .arg(&out)
        .arg("--all-cells")
        .status()
        .unwrap();
    assert_eq!(st.code(), Some(0));
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(json["buffers"][0]["uri"], "tower.bin");
    assert!(dir.path().join("tower.bin").is_file());
    let names: Vec<&str> = json["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n["name"].as_str())
        .collect();
    // Cell children of the turret: cells 0, 1 and 5 = state 0 lod 0,
    // state 0 lod 1, state 1 lod 0.
    for n in [
        "turret.S0L0",
        "turret.S0L1",
        "turret.S1L0",
        "base",
        "gun",
        "дуло",
    ] {
        assert!(names.contains(&n), "{n} missing from {names:?}");
    }
}

#[test]
fn broken_model_exits_1_naming_the_rule_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("broken.msh");
    let mut bytes = std::fs::read(sample("static_box.msh")).unwrap();
    bytes.truncate(bytes.len() - 1);
    std::fs::write(&input, &bytes).unwrap();
    let out = dir.path().join("broken.glb");
    let o = bin().arg(&input).arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("nres.total_size"), "{err}");
    assert!(err.contains("broken.msh"), "{err}");
    assert!(!out.exists());
}

#[test]
fn archive_input_converts_every_entry_with_textures_and_report() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let report = dir.path().join("report.json");
    let st = bin()
        .arg(sample("demo/demo.rlb"))
        .arg(&out)
        .arg("--report")
        .arg(&report)
        .arg("--textures-out")
        .arg(dir.path().join("png"))
        .status()
        .unwrap();
    assert_eq!(st.code(), Some(0));
    assert!(out.join("TOWER.glb").is_file());
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(r["converted"], 1);
    assert_eq!(r["failed"], 0);
    assert_eq!(r["models"][0]["counts"]["textures"], 2);
    assert!(dir.path().join("png/STEEL_TX.0.png").is_file());
    assert!(dir.path().join("png/GLASS_TX.0.png").is_file());
    // The GLB embeds both textures as PNG images, materials named from the WEAR rows.
    let glb = std::fs::read(out.join("TOWER.glb")).unwrap();
    let json_len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    let json: serde_json::Value = serde_json::from_slice(&glb[20..20 + json_len]).unwrap();
    assert_eq!(json["images"].as_array().unwrap().len(), 2);
    let mats: Vec<&str> = json["materials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(mats, vec!["STEEL.0", "GLASS.1"]);
}

#[test]
fn archive_entry_spec_selects_one_model() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.glb");
    let spec = format!("{}:tower.MSH", sample("demo/demo.rlb").display());
    let st = bin().arg(&spec).arg(&out).status().unwrap();
    assert_eq!(st.code(), Some(0));
    assert!(out.is_file());
    let spec = format!("{}:nosuch.msh", sample("demo/demo.rlb").display());
    let st = bin().arg(&spec).arg(&out).arg("--force").status().unwrap();
    assert_eq!(st.code(), Some(2));
}

/// Entry names with `../`, `/`, `\`, `:` and `CON` must only ever write
/// inside OUT_DIR.
#[test]
fn hostile_entry_names_stay_inside_the_output_folder() {
    let dir = tempfile::tempdir().unwrap();
    let game = dir.path().join("game");
    std::fs::create_dir_all(&game).unwrap();
    let model = std::fs::read(sample("static_box.msh")).unwrap();
    let names: [&[u8]; 7] = [
        b"../../escape.msh",
        b"/abs/olute.msh",
        b"a\\b\\c.msh",
        b"C:evil.msh",
        b"CON.msh",
        b"con.msh",
        b"...msh",
    ];
    let entries: Vec<nres::Entry> = names
        .iter()
        .map(|n| nres::Entry {
            type_id: 0,
            attr1: 0,
            attr2: 0,
            attr3: 0,
            name: n,
            data: &model,
        })
        .collect();
    std::fs::write(game.join("evil.rlb"), nres::write(&entries).unwrap()).unwrap();
    let out = dir.path().join("out");
    let o = bin().arg(&game).arg(&out).arg("-q").output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let written = files_under(dir.path());
    let outputs: Vec<&PathBuf> = written.iter().filter(|p| !p.starts_with(&game)).collect();
    assert_eq!(outputs.len(), names.len(), "{outputs:?}");
    for p in &outputs {
        assert!(p.starts_with(out.join("evil")), "{} escaped", p.display());
        let stem = p.file_stem().unwrap().to_string_lossy().to_uppercase();
        assert_ne!(stem, "CON", "{}", p.display());
    }
}

/// `ARCHIVE:ENTRY` typed in UTF-8 finds a Windows-1251 (Cyrillic) entry,
/// case-insensitively; a miss names the closest entries (exit 2).
#[test]
fn cyrillic_entry_names_are_found() {
    let dir = tempfile::tempdir().unwrap();
    let model = std::fs::read(sample("static_box.msh")).unwrap();
    let name = mshgltf::convention::encode_name("Танк_Т34.msh").unwrap();
    let wea = mshgltf::convention::encode_name("Танк_Т34.wea").unwrap();
    let table = b"1\r\n0 DEFAULT.0\r\n";
    let entries = [
        nres::Entry {
            type_id: 0,
            attr1: 0,
            attr2: 0,
            attr3: 0,
            name: &name,
            data: &model,
        },
        nres::Entry {
            type_id: 0x5241_4557,
            attr1: 0,
            attr2: 0,
            attr3: 0,
            name: &wea,
            data: table,
        },
    ];
    let archive = dir.path().join("units.rlb");
    std::fs::write(&archive, nres::write(&entries).unwrap()).unwrap();
    for (i, typed) in ["Танк_Т34.msh", "танк_т34.MSH"].iter().enumerate() {
        let out = dir.path().join(format!("tank{i}.glb"));
        let o = bin()
            .arg(format!("{}:{typed}", archive.display()))
            .arg(&out)
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let doc = gltf::Gltf::open(&out).unwrap();
        // The WEAR sibling was found too: its row names the material.
        assert!(doc.materials().any(|m| m.name() == Some("DEFAULT.0")));
    }
    let o = bin()
        .arg(format!("{}:Танк_Т43.msh", archive.display()))
        .arg(dir.path().join("miss.glb"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("closest: \"Танк_Т34.msh\""), "{err}");
}

#[test]
fn max_work_reaches_both_tools() {
    // The work budget travels in each run's options (limits module docs):
    // a budget far below what the sample needs fails it with limits.work in
    // msh2gltf and in gltf2msh (on the JSON text), the default converts.
    let dir = tempfile::tempdir().unwrap();
    let glb = dir.path().join("rotor.glb");
    let o = bin()
        .arg(sample("anim_rotor.msh"))
        .arg(&glb)
        .args(["--max-work", "50"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("limits.work"));
    assert!(!glb.exists());
    assert!(bin()
        .arg(sample("anim_rotor.msh"))
        .arg(&glb)
        .status()
        .unwrap()
        .success());
    let g2m = || Command::new(env!("CARGO_BIN_EXE_gltf2msh"));
    let out = dir.path().join("rotor.msh");
    let o = g2m()
        .arg(&glb)
        .arg("--base")
        .arg(sample("anim_rotor.msh"))
        .arg("-o")
        .arg(&out)
        .args(["--max-work", "50"])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("limits.work"));
    assert!(!out.exists());
    let o = g2m()
        .arg(&glb)
        .arg("--base")
        .arg(sample("anim_rotor.msh"))
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(sample("anim_rotor.msh")).unwrap()
    );
}

/// Windows only (the names are ordinary files elsewhere): an output or a
/// report named after a Windows device (`NUL`, `out\CON.glb`, `com1.json`)
/// is refused up front as "not a regular file" (exit 2), where before it was
/// taken for a new file and failed at the write ("Bad device type", exit 1);
/// `gltf2msh NUL` says the same of its input instead of an OS error.
#[cfg(windows)]
#[test]
fn windows_device_names_are_not_regular_files() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let m = sample("static_box.msh");
    for out in [Path::new("NUL").to_path_buf(), t.join("CON.glb")] {
        let o = bin().arg(&m).arg(&out).arg("--force").output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{}: {err}", out.display());
        assert!(err.contains("not a regular file"), "{err}");
    }
    let o = bin()
        .arg(&m)
        .arg(t.join("box.glb"))
        .arg("--report")
        .arg(t.join("com1.json"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("not a regular file"), "{err}");
    assert!(!t.join("box.glb").exists(), "nothing is written");
    let o = common::gltf2msh()
        .arg("NUL")
        .arg("-o")
        .arg(t.join("n.msh"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("not a regular file (a Windows device name)"),
        "{err}"
    );
}

/// A batch's walk spends [`mshgltf::limits::UNITS_PER_WALKED_FILE`] per
/// file or folder as it lists them (issue 26 item 5, "batch discovery"):
/// a folder listing more than `--max-work` allows fails `limits.work`
/// naming the folder, before any file is read, and writes nothing; one
/// unit more converts it.
#[test]
fn a_batch_walk_over_the_work_budget_fails_before_reading() {
    let tmp = tempfile::tempdir().unwrap();
    let game = tmp.path().join("game");
    let sub = game.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    for i in 0..9 {
        std::fs::write(sub.join(format!("f{i}.txt")), b"not a model").unwrap();
    }
    // 10 entries (the folder and its 9 files) fit in 10 x 64 units.
    let unit = mshgltf::limits::UNITS_PER_WALKED_FILE;
    let out = tmp.path().join("out");
    let o = bin()
        .arg(&game)
        .arg(&out)
        .arg("--max-work")
        .arg((10 * unit - 1).to_string())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("limits.work") && err.contains("--max-work"),
        "{err}"
    );
    assert!(!out.exists(), "written before the walk was bounded");
    let o = bin()
        .arg(&game)
        .arg(&out)
        .arg("--max-work")
        .arg((10 * unit).to_string())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
}

/// The commit's own lock file left beside a game file
/// (`.NAME.mshgltf-lock`, docs/safety.md) is not listed by a folder run;
/// any other file that holds no model still is, as skipped.
#[test]
fn a_folder_run_does_not_list_its_own_lock_files() {
    let dir = tempfile::tempdir().unwrap();
    let game = dir.path().join("game");
    std::fs::create_dir(&game).unwrap();
    std::fs::copy(sample("anim_rotor.msh"), game.join("anim_rotor.msh")).unwrap();
    std::fs::write(game.join(".anim_rotor.msh.mshgltf-lock"), b"").unwrap();
    std::fs::write(game.join("notes.txt"), b"not a model").unwrap();
    let report = dir.path().join("r.json");
    let o = bin()
        .arg(&game)
        .arg(dir.path().join("out"))
        .arg("--report")
        .arg(&report)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(!err.contains("mshgltf-lock"), "{err}");
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(
        (r["converted"].as_u64(), r["skipped"].as_u64()),
        (Some(1), Some(1)),
        "{r}"
    );
}
