//! Where `msh2gltf` takes `Material.lib`/`Textures.lib` from (README
//! "What each command needs"): an explicit `--game-dir` wins over libraries
//! beside the archive; the report, the model line and the summary name the
//! libraries used; a model whose WEAR table names materials while no library
//! is found gets a warning that says where the lookup looked. The folders are
//! built in the test from `samples/demo`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn demo(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples/demo")
        .join(name)
}

fn copy(from: &str, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    std::fs::copy(demo(from), to.join(from)).unwrap();
}

/// Converts `archive` into `out` with `args`; returns (stderr, report row 0).
fn run(archive: &Path, out: &Path, args: &[&str]) -> (String, serde_json::Value) {
    let report = out.with_extension("json");
    let o: Output = Command::new(env!("CARGO_BIN_EXE_msh2gltf"))
        .arg(archive)
        .arg(out)
        .arg("--report")
        .arg(&report)
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(0), "{err}");
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    (err, r["models"][0].clone())
}

fn strings(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().map(|s| s.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default()
}

#[test]
fn game_dir_wins_over_libraries_beside_the_archive() {
    let t = tempfile::tempdir().unwrap();
    // Beside the archive: a Material.lib but no Textures.lib (a copy saved
    // outside the game folder with one library next to it).
    let copy_dir = t.path().join("copy");
    copy("demo.rlb", &copy_dir);
    copy("Material.lib", &copy_dir);
    let game = t.path().join("game");
    copy("Material.lib", &game);
    copy("Textures.lib", &game);
    let archive = copy_dir.join("demo.rlb");

    let (_, row) = run(&archive, &t.path().join("beside"), &["-q"]);
    assert_eq!(row["counts"]["textures"], 0, "{row}");
    assert_eq!(
        strings(&row["libraries"]),
        [copy_dir.join("Material.lib").display().to_string()]
    );

    let gd = game.to_str().unwrap();
    let (err, row) = run(
        &archive,
        &t.path().join("game_out"),
        &["-v", "--game-dir", gd],
    );
    assert_eq!(row["counts"]["textures"], 2, "{row}");
    assert_eq!(
        strings(&row["libraries"]),
        [
            game.join("Material.lib").display().to_string(),
            game.join("Textures.lib").display().to_string()
        ]
    );
    assert!(strings(&row["warnings"]).is_empty(), "{row}");
    let used = format!("libraries: {gd} (Material.lib, Textures.lib)");
    let model_line = err.lines().find(|l| l.starts_with("converted ")).unwrap();
    assert!(model_line.contains(&used), "{err}");
    let summary = err.lines().find(|l| l.starts_with("summary: ")).unwrap();
    assert!(summary.ends_with(&used), "{err}");
}

#[test]
fn no_libraries_found_warns_where_it_looked() {
    let t = tempfile::tempdir().unwrap();
    let alone = t.path().join("alone");
    copy("demo.rlb", &alone);
    let archive = alone.join("demo.rlb");
    let (err, row) = run(&archive, &t.path().join("out"), &["-v"]);
    let w = strings(&row["warnings"]);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("names 2 material(s) (GLASS.1, STEEL.0)")
            && w[0].contains("no Material.lib or Textures.lib was found")
            && w[0].contains(&format!("looked in {}", alone.display())),
        "{w:?}"
    );
    assert!(row.get("libraries").is_none(), "{row}");
    assert!(err.contains(&format!("warning: {}", w[0])), "{err}");
    assert!(err.contains("libraries: none found"), "{err}");

    // A --game-dir without libraries is named too, and looked in first.
    let empty = t.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let (_, row) = run(
        &archive,
        &t.path().join("out2"),
        &["-q", "--game-dir", empty.to_str().unwrap()],
    );
    let w = strings(&row["warnings"]);
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(w[0].starts_with(&format!(
        "--game-dir {}: no Material.lib or Textures.lib there",
        empty.display()
    )));
    assert!(w[1].contains(&format!(
        "looked in {}, {}",
        empty.display(),
        alone.display()
    )));
}

#[test]
fn bare_model_without_wear_does_not_warn() {
    let t = tempfile::tempdir().unwrap();
    let m = t.path().join("static_box.msh");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/static_box.msh"),
        &m,
    )
    .unwrap();
    let (_, row) = run(&m, &t.path().join("box.glb"), &["-q"]);
    assert!(strings(&row["warnings"]).is_empty(), "{row}");
}
