//! The add-on zip of `scripts/package_addon.sh` (README "Blender add-on"):
//! Blender's own extension validator accepts it, and it installs and
//! imports the committed samples headless, as a legacy add-on in Blender
//! 3.4 and as an extension in Blender 4.2+ (PyPI `bpy`), with no Python
//! warning while it is enabled (`tests/blender/extension_test.py` does the
//! Blender side, including the stepped import job behind the modal operator
//! and its cancel).
//!
//! Needs no `../shared`. Blenders: `$BLENDER`, else `blender` on PATH, else
//! `/usr/bin/blender`; and each PyPI `bpy` CI tests (Blender 4.2 LTS, 4.5
//! LTS, 5.0 and the newest, `common::bpy_python`): the venvs
//! `../shared/tools/blender-inspect --bpy=VERSION` leaves in
//! `${MSH_TOOLS_CACHE:-~/.cache/msh-tools}/bpy-VERSION`. Each one missing is
//! a printed SKIP line (a failure with `MSHGLTF_REQUIRE_BLENDERS=1`); with
//! none the test passes after saying so.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// A Blender to drive: a binary (`blender -b --python`) or a Python with `bpy`.
enum Runner {
    Binary(PathBuf),
    Bpy(PathBuf),
}

/// `(major, minor)` of a Blender binary (`blender --version`).
fn binary_version(blender: &Path) -> Option<(u32, u32)> {
    let o = Command::new(blender)
        .env_remove("PYTHONPATH")
        .env_remove("PYTHONHOME")
        .arg("--version")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&o.stdout);
    let v = text.lines().find_map(|l| l.strip_prefix("Blender "))?;
    let mut it = v.split(|c: char| !c.is_ascii_digit());
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

/// Blender's extension validator on the zip: `blender --command extension
/// validate` for a 4.2+ binary, the same script (`bl_pkg/cli/blender_ext.py`)
/// from the `bpy` package for a `bpy` Python.
fn validate(runner: &Runner, zip: &Path) {
    let out = match runner {
        Runner::Binary(b) => Command::new(b)
            .env_remove("PYTHONPATH")
            .args(["--factory-startup", "--command", "extension", "validate"])
            .arg(zip)
            .output()
            .unwrap(),
        Runner::Bpy(py) => {
            let o = Command::new(py)
                .args([
                    "-c",
                    "import bpy; print(bpy.utils.system_resource('SCRIPTS'))",
                ])
                .output()
                .unwrap();
            let scripts = String::from_utf8_lossy(&o.stdout).trim().to_owned();
            let cli = Path::new(&scripts).join("addons_core/bl_pkg/cli/blender_ext.py");
            assert!(cli.is_file(), "no extension validator at {}", cli.display());
            Command::new(py)
                .arg(cli)
                .arg("validate")
                .arg(zip)
                .output()
                .unwrap()
        }
    };
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && text.contains("Success"),
        "extension validate: {text}"
    );
}

/// Runs `tests/blender/extension_test.py` and checks its report.
fn install_and_import(runner: &Runner, zip: &Path, work: &Path) -> serde_json::Value {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cmd = match runner {
        Runner::Binary(b) => {
            let mut c = Command::new(b);
            c.env_remove("PYTHONPATH").env_remove("PYTHONHOME").args([
                "-b",
                "--factory-startup",
                "-noaudio",
                "--python",
            ]);
            c
        }
        Runner::Bpy(py) => Command::new(py),
    };
    let out = cmd
        .env("BLENDER_USER_SCRIPTS", work.join("scripts"))
        .env("BLENDER_USER_CONFIG", work.join("config"))
        .env("BLENDER_USER_EXTENSIONS", work.join("extensions"))
        .arg(root.join("tests/blender/extension_test.py"))
        .arg("--")
        .arg(zip)
        .arg(root.join("samples"))
        .arg(work.join("work"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let Some(line) = stdout
        .lines()
        .find_map(|l| l.find("EXTENSION_TEST {").map(|i| l[i + 15..].to_string()))
    else {
        panic!(
            "Blender printed no report:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let r: serde_json::Value = serde_json::from_str(&line).unwrap();
    println!(
        "Blender {}: installed as {}",
        r["blender"], r["installed_as"]
    );
    assert_eq!(r["errors"], serde_json::json!([]), "{r:#}");
    assert_eq!(r["enable_warnings"], serde_json::json!([]), "{r:#}");
    // Its own converters, from the zip's bin/.
    let file = r["msh2gltf"].as_str().unwrap();
    assert!(file.starts_with(work.to_str().unwrap()) && file.ends_with("/bin/msh2gltf"));
    // An archive: archive > model collections, textured from the libraries beside it.
    assert_eq!(r["archive_result"], serde_json::json!(["FINISHED"]));
    let tower = &r["archive_tree"]["demo"]["children"]["TOWER"];
    assert_eq!(tower["objects"], 4, "{r:#}");
    let demo = root.join("samples/demo/demo.rlb");
    assert_eq!(
        tower["msh"].as_str().unwrap(),
        format!("{}:TOWER.msh", demo.display())
    );
    assert_eq!(
        r["materials_with_image"],
        serde_json::json!(["GLASS.1", "STEEL.0"])
    );
    // A bare animated model: its animation sets the frame range (24 frames).
    assert_eq!(r["model_result"], serde_json::json!(["FINISHED"]));
    assert!(r["actions"].as_u64().unwrap() >= 1);
    assert_eq!(r["frame_end"], 24);
    // The stepped job, cancelled after its first model: that model stays,
    // nothing else is done, the temporary folder is gone.
    assert_eq!(r["job_models"], 1);
    assert_eq!(r["job_new_objects"], 4);
    assert_eq!(r["job_more_after_cancel"], false);
    assert_eq!(r["job_tmp_removed"], true);
    let summary = r["job_reports"].as_array().unwrap().last().unwrap()[1]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        summary.starts_with("Imported 1 model(s) (cancelled after 1 of 2)"),
        "{summary}"
    );
    // Cancelled while converting: the converter was stopped, nothing imported.
    assert!(r["early_cancel_exit"].is_i64(), "{r:#}");
    assert_eq!(r["early_cancel_models"], 0);
    r
}

#[test]
#[ignore = "needs Blender 3.4+ or PyPI bpy: cargo test -- --include-ignored"]
fn addon_zip_validates_installs_and_imports() {
    let mut runners: Vec<(String, Runner, bool)> = Vec::new();
    match common::blender() {
        Some(b) => match binary_version(&b) {
            Some(v) => runners.push((
                format!("{} {v:?}", b.display()),
                Runner::Binary(b),
                v >= (4, 2),
            )),
            None => println!("SKIP: {} --version printed no version", b.display()),
        },
        None => println!("SKIP: no Blender binary (set BLENDER=/path/to/blender)"),
    }
    // Every Blender 4.2+ CI tests: the newest and the matrix (README "Tested").
    for version in std::iter::once(common::NEWEST_BPY).chain(common::MATRIX_BPYS) {
        match common::bpy_python(version) {
            Some(py) => runners.push((
                format!("bpy {version} at {}", py.display()),
                Runner::Bpy(py),
                true,
            )),
            None => println!(
                "SKIP: no Python with PyPI bpy {version} (../shared/tools/blender-inspect --bpy={version})"
            ),
        }
    }
    if runners.is_empty() {
        println!("SKIP: no Blender at all: the add-on zip was not checked");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let zip = tmp.path().join("io_scene_parkan.zip");
    common::package_addon(&zip);
    if !runners.iter().any(|r| r.2) {
        println!("SKIP: no Blender 4.2+: the extension validator did not run");
    }
    for (i, (what, runner, modern)) in runners.iter().enumerate() {
        println!("checking with {what}");
        if *modern {
            validate(runner, &zip);
        }
        let work = tmp.path().join(format!("b{i}"));
        let r = install_and_import(runner, &zip, &work);
        let expect = if *modern { "extension" } else { "legacy" };
        assert_eq!(r["installed_as"], expect);
    }
}
