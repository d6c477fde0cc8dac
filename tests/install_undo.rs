//! Installs into a game folder, undoable (issue 37 item 5; docs/safety.md
//! "An install keeps the game's originals"), on a game folder made from
//! `samples/demo` (an `objects.rlb` marks it a game folder):
//! `gltf2msh --base ARCHIVE:ENTRY --in-place` keeps the original archive
//! once in `GAME/.mshgltf-originals` (a second install keeps the first
//! backup); `--installed` lists it (`--report` JSON too); `--restore`
//! puts it back byte for byte and empties the store, twice in a row; a
//! file changed since its install is refused by name unless `--force`;
//! `--pack` makes a mod that `--apply` installs on a second copy and
//! refuses on a third whose original differs; hostile mod zips (a path
//! leaving the game, a drive, an absolute path, the store, an entry not in
//! the manifest, a wrong hash, too many entries, an oversized manifest) are
//! refused by name with nothing written; the batch skips the store.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};

use common::{gltf2msh, msh2gltf, sample, stderr};
use serde_json::json;

/// A game folder: the demo archive and libraries, and an `objects.rlb`.
fn game(dir: &Path, name: &str) -> PathBuf {
    let g = dir.join(name);
    std::fs::create_dir_all(&g).unwrap();
    for f in ["demo.rlb", "Material.lib", "Textures.lib"] {
        std::fs::copy(sample("demo").join(f), g.join(f)).unwrap();
    }
    std::fs::copy(sample("demo").join("demo.rlb"), g.join("objects.rlb")).unwrap();
    g
}

/// TOWER.msh of `g`'s demo.rlb exported, and an edit of it: its first mesh
/// node moved by `dx`.
fn edit(g: &Path, work: &Path, dx: f64) -> PathBuf {
    let base = format!("{}:TOWER.msh", g.join("demo.rlb").display());
    let gltf = work.join("t.gltf");
    if !gltf.exists() {
        let o = msh2gltf().arg(&base).arg(&gltf).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let mut j: serde_json::Value = serde_json::from_slice(&std::fs::read(&gltf).unwrap()).unwrap();
    let n = j["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .position(|n| n.get("mesh").is_some())
        .unwrap();
    let t = j["nodes"][n]
        .get("translation")
        .cloned()
        .unwrap_or(json!([0.0, 0.0, 0.0]));
    j["nodes"][n]["translation"] = json!([t[0].as_f64().unwrap() + dx, t[1], t[2]]);
    let out = work.join(format!("e{dx}.gltf"));
    std::fs::write(&out, serde_json::to_vec(&j).unwrap()).unwrap();
    out
}

fn install(g: &Path, gltf: &Path) -> std::process::Output {
    gltf2msh()
        .arg(gltf)
        .arg("--base")
        .arg(format!("{}:TOWER.msh", g.join("demo.rlb").display()))
        .arg("--in-place")
        .output()
        .unwrap()
}

fn store(args: &[&str]) -> std::process::Output {
    gltf2msh().args(args).output().unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn install_list_and_restore_byte_identical_twice_keeping_the_first_backup() {
    let t = tempfile::tempdir().unwrap();
    let g = game(t.path(), "game");
    let arch = g.join("demo.rlb");
    let original = std::fs::read(&arch).unwrap();
    let backup = g.join(".mshgltf-originals/files/demo.rlb");
    for round in 0..2 {
        let o = install(&g, &edit(&g, t.path(), 0.5));
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("installed into")
                && stderr(&o).contains("replaced demo.rlb")
                && stderr(&o).contains("--restore"),
            "{}",
            stderr(&o)
        );
        let first = std::fs::read(&arch).unwrap();
        assert!(first != original);
        assert!(std::fs::read(&backup).unwrap() == original);
        // A second install of the same file: the first backup stays.
        let o = install(&g, &edit(&g, t.path(), 1.5));
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(std::fs::read(&arch).unwrap() != first);
        assert!(std::fs::read(&backup).unwrap() == original, "round {round}");
        let rep = t.path().join(format!("installed{round}.json"));
        let o = store(&["--installed", s(&g), "--report", s(&rep)]);
        assert!(o.status.success(), "{}", stderr(&o));
        let sha = mshgltf::output::install::sha256_hex(&original);
        assert!(
            stderr(&o).contains(&format!("replaced demo.rlb (original sha256 {sha}")),
            "{}",
            stderr(&o)
        );
        let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&rep).unwrap()).unwrap();
        assert_eq!(r["files"][0]["path"], "demo.rlb", "{r:#}");
        assert_eq!(r["files"][0]["kind"], "replaced", "{r:#}");
        assert_eq!(r["files"][0]["original"]["sha256"], sha.as_str(), "{r:#}");
        assert_eq!(r["files"][0]["state"], "installed", "{r:#}");
        assert_eq!(r["files"].as_array().unwrap().len(), 1, "{r:#}");
        // Restored: byte for byte, the store emptied.
        let o = store(&["--restore", s(&g)]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stderr(&o).contains("restored (original"), "{}", stderr(&o));
        assert!(std::fs::read(&arch).unwrap() == original, "round {round}");
        assert!(!g.join(".mshgltf-originals").exists());
    }
    let o = store(&["--restore", s(&g)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("nothing to restore"), "{}", stderr(&o));
    // The batch skips the store, saying so.
    install(&g, &edit(&g, t.path(), 0.5));
    let rep = t.path().join("batch.json");
    let o = msh2gltf()
        .arg(&g)
        .arg(t.path().join("out"))
        .arg("--report")
        .arg(&rep)
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&rep).unwrap()).unwrap();
    let text = serde_json::to_string(&r).unwrap();
    assert!(
        text.contains(".mshgltf-originals") && text.contains("store of the game's originals"),
        "{}\n{text}",
        stderr(&o)
    );
    assert!(!text.contains("files/demo.rlb"), "{text}");
}

#[test]
fn a_file_changed_since_its_install_is_not_overwritten_without_force() {
    let t = tempfile::tempdir().unwrap();
    let g = game(t.path(), "game");
    let arch = g.join("demo.rlb");
    let original = std::fs::read(&arch).unwrap();
    assert!(install(&g, &edit(&g, t.path(), 0.5)).status.success());
    let mut changed = std::fs::read(&arch).unwrap();
    changed.push(0);
    std::fs::write(&arch, &changed).unwrap();
    let o = store(&["--restore", s(&g)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("demo.rlb: changed since its install")
            && stderr(&o).contains("nothing was restored"),
        "{}",
        stderr(&o)
    );
    assert!(std::fs::read(&arch).unwrap() == changed);
    let o = store(&["--restore", s(&g), "--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(&arch).unwrap() == original);
}

#[test]
fn a_damaged_backup_is_named_and_nothing_is_restored() {
    let t = tempfile::tempdir().unwrap();
    let g = game(t.path(), "game");
    assert!(install(&g, &edit(&g, t.path(), 0.5)).status.success());
    let installed = std::fs::read(g.join("demo.rlb")).unwrap();
    std::fs::write(g.join(".mshgltf-originals/files/demo.rlb"), b"damaged").unwrap();
    let o = store(&["--restore", s(&g)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("is damaged"), "{}", stderr(&o));
    assert!(std::fs::read(g.join("demo.rlb")).unwrap() == installed);
}

#[test]
fn a_packed_mod_applies_to_a_second_copy_and_is_refused_on_a_third() {
    let t = tempfile::tempdir().unwrap();
    let g1 = game(t.path(), "g1");
    let g2 = game(t.path(), "g2");
    let g3 = game(t.path(), "g3");
    let original = std::fs::read(g1.join("demo.rlb")).unwrap();
    assert!(install(&g1, &edit(&g1, t.path(), 0.5)).status.success());
    let modded = std::fs::read(g1.join("demo.rlb")).unwrap();
    let zip = t.path().join("mod.zip");
    let o = store(&["--pack", s(&zip), s(&g1)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("packed demo.rlb"), "{}", stderr(&o));
    // A second pack without --force: refused (the zip exists).
    let o = store(&["--pack", s(&zip), s(&g1)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));

    let o = store(&["--apply", s(&zip), s(&g2)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(g2.join("demo.rlb")).unwrap() == modded);
    assert!(std::fs::read(g2.join(".mshgltf-originals/files/demo.rlb")).unwrap() == original);
    let o = store(&["--restore", s(&g2)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(g2.join("demo.rlb")).unwrap() == original);

    // A third copy whose original differs: refused, naming the file.
    let mut other = original.clone();
    other.push(0);
    std::fs::write(g3.join("demo.rlb"), &other).unwrap();
    let o = store(&["--apply", s(&zip), s(&g3)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("demo.rlb: the original here is sha256"),
        "{}",
        stderr(&o)
    );
    assert!(std::fs::read(g3.join("demo.rlb")).unwrap() == other);
    assert!(!g3.join(".mshgltf-originals").exists());
}

/// A mod zip of `entries` (name, bytes), the manifest among them when
/// given as `mshgltf-mod.json`.
fn zip_of(path: &Path, entries: &[(&str, Vec<u8>)]) {
    let mut z = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (n, b) in entries {
        z.start_file(*n, opts).unwrap();
        z.write_all(b).unwrap();
    }
    z.finish().unwrap();
}

fn manifest(path: &str, bytes: &[u8]) -> Vec<u8> {
    let d = mshgltf::output::install::Digest256::of(bytes);
    serde_json::to_vec(&json!({"format": "mshgltf-mod", "version": 1,
        "files": [{"path": path, "file": d, "original": null}]}))
    .unwrap()
}

/// A zip's entries: name, bytes.
type Entries = Vec<(String, Vec<u8>)>;

#[test]
fn hostile_mod_zips_are_refused_by_name_with_nothing_written() {
    let t = tempfile::tempdir().unwrap();
    let g = game(t.path(), "game");
    let evil = b"evil".to_vec();
    let cases: Vec<(&str, Entries, &str)> = vec![
        (
            "parent",
            vec![
                ("mshgltf-mod.json".into(), manifest("../evil.rlb", &evil)),
                ("files/../evil.rlb".into(), evil.clone()),
            ],
            "leaves the game folder",
        ),
        (
            "drive",
            vec![
                ("mshgltf-mod.json".into(), manifest("C:/evil.rlb", &evil)),
                ("files/C:/evil.rlb".into(), evil.clone()),
            ],
            "names a drive",
        ),
        (
            "absolute",
            vec![
                ("mshgltf-mod.json".into(), manifest("/tmp/evil.rlb", &evil)),
                ("files//tmp/evil.rlb".into(), evil.clone()),
            ],
            "not in the form",
        ),
        (
            "store",
            vec![
                (
                    "mshgltf-mod.json".into(),
                    manifest(".mshgltf-originals/manifest.json", &evil),
                ),
                (
                    "files/.mshgltf-originals/manifest.json".into(),
                    evil.clone(),
                ),
            ],
            "store of the game's originals",
        ),
        (
            "unlisted",
            vec![
                ("mshgltf-mod.json".into(), manifest("new.rlb", &evil)),
                ("files/new.rlb".into(), evil.clone()),
                ("files/other.rlb".into(), evil.clone()),
            ],
            "not one of the manifest's files",
        ),
        (
            "hash",
            vec![
                ("mshgltf-mod.json".into(), manifest("new.rlb", b"other")),
                ("files/new.rlb".into(), evil.clone()),
            ],
            "does not hold the recorded sha256",
        ),
        (
            "no manifest",
            vec![("files/new.rlb".into(), evil.clone())],
            "no mshgltf-mod.json",
        ),
        (
            "wrong type",
            vec![
                (
                    "mshgltf-mod.json".into(),
                    br#"{"format":"mshgltf-mod","version":1,"files":[{"path":7}]}"#.to_vec(),
                ),
                ("files/new.rlb".into(), evil.clone()),
            ],
            "at /files/0/path",
        ),
        (
            "manifest over its cap",
            vec![("mshgltf-mod.json".into(), vec![b' '; (16 << 20) + 1])],
            "over the budget",
        ),
    ];
    for (name, entries, why) in cases {
        let zip = t.path().join(format!("{name}.zip"));
        let e: Vec<(&str, Vec<u8>)> = entries
            .iter()
            .map(|(n, b)| (n.as_str(), b.clone()))
            .collect();
        zip_of(&zip, &e);
        let o = store(&["--apply", s(&zip), s(&g)]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        assert!(stderr(&o).contains(why), "{name}: {}", stderr(&o));
        assert!(!g.join("new.rlb").exists() && !t.path().join("evil.rlb").exists());
        assert!(!g.join(".mshgltf-originals").exists(), "{name}");
    }
    // Too many entries.
    let zip = t.path().join("many.zip");
    let many: Vec<(String, Vec<u8>)> = (0..10_001)
        .map(|i| (format!("files/{i}"), Vec::new()))
        .collect();
    let e: Vec<(&str, Vec<u8>)> = many.iter().map(|(n, b)| (n.as_str(), b.clone())).collect();
    zip_of(&zip, &e);
    let o = store(&["--apply", s(&zip), s(&g)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("over the limit of 10000"),
        "{}",
        stderr(&o)
    );
    // Not a zip at all.
    let zip = t.path().join("not.zip");
    std::fs::write(&zip, b"not a zip").unwrap();
    let o = store(&["--apply", s(&zip), s(&g)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not a zip"), "{}", stderr(&o));
}

#[test]
fn a_mod_adding_a_file_is_applied_and_its_file_removed_on_restore() {
    let t = tempfile::tempdir().unwrap();
    let g = game(t.path(), "game");
    let added = b"a new file".to_vec();
    let zip = t.path().join("add.zip");
    zip_of(
        &zip,
        &[
            ("mshgltf-mod.json", manifest("MAPS/new/extra.rlb", &added)),
            ("files/MAPS/new/extra.rlb", added.clone()),
        ],
    );
    let o = store(&["--apply", s(&zip), s(&g)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(g.join("MAPS/new/extra.rlb")).unwrap() == added);
    let o = store(&["--installed", s(&g)]);
    assert!(
        stderr(&o).contains("added MAPS/new/extra.rlb (installed)"),
        "{}",
        stderr(&o)
    );
    // Applied again: the same file is there, not an original that differs.
    let o = store(&["--apply", s(&zip), s(&g)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = store(&["--restore", s(&g)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("removed (added by an install): MAPS/new/extra.rlb"),
        "{}",
        stderr(&o)
    );
    assert!(!g.join("MAPS/new/extra.rlb").exists());
    assert!(!g.join(".mshgltf-originals").exists());
}

#[test]
fn store_commands_refuse_bad_usage() {
    let t = tempfile::tempdir().unwrap();
    let o = store(&["--restore", s(&t.path().join("nope"))]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = store(&["--pack", "x.zip"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = store(&["--restore", s(t.path()), "--installed", s(t.path())]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}
