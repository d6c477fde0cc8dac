//! Helpers shared by the integration tests: the `shared_*` ones read
//! `../shared` through [`corpus`] and skip themselves when it is absent;
//! the others use the binaries, the committed samples and the GLB framing.
#![allow(dead_code)]

pub mod unit_file;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mshgltf::convert::{self, ConvertOptions, ModelRef};
use mshgltf::gltf_export::{CellChoice, Exported};
use mshgltf::gltf_import::GltfFile;
use mshgltf::msh::{self, Model};
use mshgltf::{nres, source};

/// The Blender to run headless: `$BLENDER`, else `blender` on PATH, else
/// `/usr/bin/blender` (Debian's); `None` when there is none (a panic
/// instead when [`blenders_required`]).
pub fn blender() -> Option<PathBuf> {
    if let Some(b) = std::env::var_os("BLENDER") {
        return Some(PathBuf::from(b));
    }
    let on_path = std::process::Command::new("blender")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if on_path {
        return Some(PathBuf::from("blender"));
    }
    let debian = PathBuf::from("/usr/bin/blender");
    assert!(
        debian.is_file() || !blenders_required(),
        "MSHGLTF_REQUIRE_BLENDERS=1 but no Blender binary (set BLENDER=/path/to/blender)"
    );
    debian.is_file().then_some(debian)
}

/// `../shared/corpus`, or `None` (after printing a SKIP line) when absent.
pub fn corpus() -> Option<PathBuf> {
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus"));
    if p.is_dir() {
        Some(p)
    } else {
        println!("SKIP: shared corpus not found at {}", p.display());
        None
    }
}

/// The shared corpus and a Blender, or `None` (with a SKIP line naming what
/// is missing) for the tests that need both.
pub fn corpus_and_blender() -> Option<(PathBuf, PathBuf)> {
    let corpus = corpus()?;
    let Some(blender) = blender() else {
        println!("SKIP: Blender not found (set BLENDER=/path/to/blender)");
        return None;
    };
    Some((corpus, blender))
}

/// The corpus `manifest.json`.
pub fn manifest(root: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(root.join("manifest.json")).expect("manifest"))
        .expect("manifest is JSON")
}

/// The manifest's `bad` records of one content kind: `None` for the
/// model-level files (records without a `kind`: broken models, archives,
/// libraries), `Some("terrain")`, `Some("mission")`, … for the others,
/// which their own pipeline's tests check.
pub fn bad_records<'a>(
    m: &'a serde_json::Value,
    kind: Option<&'a str>,
) -> impl Iterator<Item = &'a serde_json::Value> + 'a {
    m["bad"]
        .as_array()
        .expect("bad[]")
        .iter()
        .filter(move |b| b.get("kind").and_then(serde_json::Value::as_str) == kind)
}

/// Every assembly of the manifest: its `units` (warriors, `kind` of the
/// unit) then its `buildings` (`kind: "building"`, a `FORT` root reached
/// through its agent record, mission-notes §4.3).
pub fn assemblies(m: &serde_json::Value) -> impl Iterator<Item = &serde_json::Value> {
    ["units", "buildings"]
        .into_iter()
        .flat_map(move |k| m[k].as_array().into_iter().flatten())
}

/// One valid corpus model.
pub struct CorpusModel {
    /// The manifest's `file`: `models/<name>.msh` or `<archive>.rlb`.
    pub file: String,
    /// The archive entry name, for nested models.
    pub entry: Option<String>,
    /// Display name: the path, or `path:ENTRY`.
    pub display: String,
    /// Model stem.
    pub stem: String,
    /// The model NRes bytes.
    pub bytes: Vec<u8>,
}

/// Every valid corpus model: `models/*.msh` and the `.msh` entries of the
/// top-level `*.rlb` archives, in a stable order (`bad/` and `MAPS/` are
/// left out).
pub fn corpus_models(root: &Path) -> Vec<CorpusModel> {
    let sorted = |dir: &Path| {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        v.sort();
        v
    };
    let mut out = Vec::new();
    for p in sorted(&root.join("models")) {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if !source::is_msh_name(name.as_bytes()) {
            continue;
        }
        out.push(CorpusModel {
            file: format!("models/{name}"),
            entry: None,
            display: p.display().to_string(),
            stem: source::stem_of(&name).to_string(),
            bytes: std::fs::read(&p).expect("read model"),
        });
    }
    for p in sorted(root) {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if !name.to_ascii_lowercase().ends_with(".rlb") {
            continue;
        }
        let data = std::fs::read(&p).expect("read archive");
        let Ok(a) = nres::read(&data, nres::Mode::Strict) else {
            continue; // gamefont.rlb is RsLi
        };
        for i in source::model_entries(&a) {
            let e = &a.entries[i];
            let entry = source::decode_name(e.name);
            out.push(CorpusModel {
                file: name.clone(),
                display: format!("{}:{entry}", p.display()),
                stem: source::stem_of(&entry).to_string(),
                entry: Some(entry),
                bytes: e.data.to_vec(),
            });
        }
    }
    out
}

/// Builds the add-on zip at `zip` with `scripts/package_addon.sh`, carrying
/// this build's `msh2gltf` and `gltf2msh`; panics when the script fails.
pub fn package_addon(zip: &Path) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_msh2gltf"))
        .parent()
        .expect("binary folder");
    let st = std::process::Command::new("bash")
        .arg(root.join("scripts/package_addon.sh"))
        .arg("--bin-dir")
        .arg(bin_dir)
        .arg(zip)
        .status()
        .expect("run package_addon.sh");
    assert!(st.success(), "package_addon.sh failed");
}

/// The retail lightmapped model of the manifest with the most lit batches
/// whose lightmap is present (the lightmap tests' subject).
pub fn most_lit_retail_model(man: &serde_json::Value) -> &serde_json::Value {
    man["models"]
        .as_array()
        .expect("models[]")
        .iter()
        .filter(|m| m["convention"] == "retail" && m["lightmap_model"] == true)
        .max_by_key(|m| {
            m["batches"].as_array().map_or(0, |b| {
                b.iter()
                    .filter(|b| b["lit"] == true && b["lightmap_present"] == true)
                    .count()
            })
        })
        .expect("a retail lightmapped model")
}

/// This build's `msh2gltf`, ready for arguments.
pub fn msh2gltf() -> Command {
    Command::new(env!("CARGO_BIN_EXE_msh2gltf"))
}

/// This build's `gltf2msh`, ready for arguments.
pub fn gltf2msh() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gltf2msh"))
}

/// A committed sample: `samples/<name>` (made by `scripts/make_samples.sh`).
pub fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(name)
}

/// A run's stderr as text (lossy UTF-8).
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A GLB of `json` and the binary chunk `bin` (glTF 2.0 §4.4): the JSON
/// chunk padded with spaces to 4 bytes, `bin` written as given.
pub fn glb(json: &serde_json::Value, bin: &[u8]) -> Vec<u8> {
    let mut j = serde_json::to_vec(json).unwrap();
    while !j.len().is_multiple_of(4) {
        j.push(b' ');
    }
    let total = 12 + 8 + j.len() + 8 + bin.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(j.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&j);
    out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(bin);
    out
}

/// msh2gltf's export of the model `bytes` (no WEAR, no textures, showing
/// `cells`) under the report name `source` and node-name stem `stem`.
pub fn export_untextured(bytes: &[u8], source: &str, stem: &str, cells: CellChoice) -> Exported {
    let opts = ConvertOptions {
        textures: false,
        cells,
        ..Default::default()
    };
    let m = ModelRef {
        source: source.into(),
        stem: stem.into(),
        bytes,
        wear: None,
    };
    convert::convert(&m, None, &opts).unwrap().exported
}

/// A committed sample as msh2gltf exports it (no textures, showing
/// `cells`): the decoded base model, its bytes and the glTF (JSON value +
/// the one buffer).
pub fn export_sample(name: &str, cells: CellChoice) -> (Model, Vec<u8>, GltfFile) {
    let bytes = std::fs::read(sample(name)).unwrap();
    let base = msh::decode(&bytes, msh::Mode::Strict).unwrap().model;
    let e = export_untextured(&bytes, name, "m", cells);
    let json = serde_json::to_value(&e.root).unwrap();
    (base, bytes, GltfFile::new(json, vec![e.bin]))
}

/// The `--texm-order` arguments of each side (gltf2msh's, msh2gltf's): when
/// msh2gltf takes `--texm-order` (after issue 8) both sides use the retail
/// order; before, gltf2msh writes the order msh2gltf reads.
pub fn order_args() -> (Vec<&'static str>, Vec<&'static str>) {
    let help = msh2gltf().arg("--help").output().unwrap();
    if String::from_utf8_lossy(&help.stdout).contains("--texm-order") {
        (vec![], vec!["--texm-order", "retail"])
    } else {
        (vec!["--texm-order", "argb"], vec![])
    }
}

/// The largest per-channel difference of two images of one size (panics
/// when the sizes differ).
pub fn max_diff(a: &image::RgbaImage, b: &image::RgbaImage) -> i32 {
    assert_eq!(a.dimensions(), b.dimensions());
    a.as_raw()
        .iter()
        .zip(b.as_raw())
        .map(|(x, y)| (i32::from(*x) - i32::from(*y)).abs())
        .max()
        .unwrap_or(0)
}

/// The newest Blender CI tests (PyPI `bpy`): the full Blender suite runs in
/// it and in Debian's Blender 3.4.1 (README "Tested").
pub const NEWEST_BPY: &str = "5.3.0";

/// The other Blenders CI tests (PyPI `bpy`: the LTS lines 4.2 and 4.5, and
/// 5.0): each runs the matrix subset (`tests/shared_blender_matrix.rs` and
/// the `*_in_bpy_matrix` tests), README "Tested".
pub const MATRIX_BPYS: [&str; 3] = ["4.2.23", "4.5.15", "5.0.1"];

/// Whether a missing Blender fails the test instead of skipping it:
/// `MSHGLTF_REQUIRE_BLENDERS=1` (`.ci/run` sets it after installing every
/// Blender of the matrix); unset, a fresh clone skips.
pub fn blenders_required() -> bool {
    std::env::var_os("MSHGLTF_REQUIRE_BLENDERS").is_some_and(|v| v == "1")
}

/// A Python with PyPI's `bpy==version` (Blender as a module): for
/// [`NEWEST_BPY`] `$BPY_PYTHON` when set, else the venv
/// `../shared/tools/blender-inspect --bpy=VERSION` leaves in its cache
/// (`$MSH_TOOLS_CACHE`, `$XDG_CACHE_HOME/msh-tools` or
/// `~/.cache/msh-tools`, then `bpy-VERSION/bin/python`). `None` when it is
/// not installed; panics instead when [`blenders_required`].
pub fn bpy_python(version: &str) -> Option<PathBuf> {
    let found = find_bpy_python(version);
    assert!(
        found.is_some() || !blenders_required(),
        "MSHGLTF_REQUIRE_BLENDERS=1 but PyPI bpy {version} is not installed \
         (../shared/tools/blender-inspect --bpy-python={version})"
    );
    found
}

fn find_bpy_python(version: &str) -> Option<PathBuf> {
    if version == NEWEST_BPY {
        if let Some(p) = std::env::var_os("BPY_PYTHON") {
            return Some(PathBuf::from(p));
        }
    }
    let cache = std::env::var_os("MSH_TOOLS_CACHE")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("XDG_CACHE_HOME")
                .map(|x| PathBuf::from(x).join("msh-tools"))
                .or_else(|| {
                    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/msh-tools"))
                })
        })?;
    let py = cache.join(format!("bpy-{version}/bin/python"));
    py.is_file().then_some(py)
}

/// The matrix Blenders ([`MATRIX_BPYS`]) that are installed, each with its
/// Python (a SKIP line for each one missing; a panic instead when
/// [`blenders_required`]).
pub fn matrix_bpys() -> Vec<(&'static str, PathBuf)> {
    MATRIX_BPYS
        .iter()
        .filter_map(|v| match bpy_python(v) {
            Some(py) => Some((*v, py)),
            None => {
                println!(
                    "SKIP: PyPI bpy {v} not installed (../shared/tools/blender-inspect --bpy={v})"
                );
                None
            }
        })
        .collect()
}

/// Runs `f(version, python)` for each installed matrix Blender
/// ([`matrix_bpys`]), the versions side by side, one thread each (a Blender
/// run mostly keeps one core busy and CI has two): the matrix costs about
/// its slowest version rather than the sum. A panic in any run fails the
/// caller once every run has ended.
pub fn for_each_matrix_bpy(f: impl Fn(&str, &Path) + Sync) {
    let bpys = matrix_bpys();
    std::thread::scope(|s| {
        for (version, py) in &bpys {
            let f = &f;
            s.spawn(move || f(version, py));
        }
    });
}

/// A command that runs `tests/blender/SCRIPT` in Blender with the user
/// scripts and config folders under `tmp` (so the add-on installs there):
/// `blender -b --factory-startup -noaudio --python SCRIPT` (PYTHONPATH and
/// PYTHONHOME removed), or with `bpy` that Python with PyPI's `bpy`
/// (Blender 5.x as a module). The caller adds `--` and the script's
/// arguments.
pub fn blender_script(blender: &Path, bpy: Option<&Path>, script: &str, tmp: &Path) -> Command {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut c = match bpy {
        Some(py) => Command::new(py),
        None => {
            let mut c = Command::new(blender);
            c.env_remove("PYTHONPATH").env_remove("PYTHONHOME").args([
                "-b",
                "--factory-startup",
                "-noaudio",
                "--python",
            ]);
            c
        }
    };
    c.env("BLENDER_USER_SCRIPTS", tmp.join("scripts"))
        .env("BLENDER_USER_CONFIG", tmp.join("config"))
        .arg(root.join("tests/blender").join(script));
    c
}

/// Runs a Blender test script (a [`blender_script`] command with its
/// arguments) and returns the JSON of its one report line `TAG {…}`
/// (the line may carry Blender's own prefix before `TAG`). Panics with
/// Blender's stdout and stderr when the script printed no such line.
pub fn blender_report(cmd: &mut Command, tag: &str) -> serde_json::Value {
    blender_output(cmd, tag).0
}

/// [`blender_report`] and Blender's whole stdout (for the add-on's
/// printed warnings).
pub fn blender_output(cmd: &mut Command, tag: &str) -> (serde_json::Value, String) {
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let prefix = format!("{tag} {{");
    let Some(line) = stdout
        .lines()
        .find_map(|l| l.find(&prefix).map(|i| &l[i + tag.len() + 1..]))
    else {
        panic!(
            "Blender printed no {tag} report:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let report = serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("{tag} report is not JSON ({e}): {line}"));
    (report, stdout)
}
