//! Control points edited in Blender reach the game's `.cpt` (issue 24
//! item 3, unit-files-notes §5.1): `tests/blender/points_test.py` imports a
//! corpus gun through the add-on, exports it unedited (the archive comes
//! back byte for byte, its `.cpt` included), then moves its muzzle point
//! `Dir_1` by (+0.5, 0, +0.25) and turns it 90° about its node's z, and
//! exports again, then installs the same edit into the archive itself
//! (*Install into the game*, `gltf2msh --in-place`). Here the written archive is read with the project's own
//! decoder: that point's position and direction are the edit's within
//! 1e-3, every other point, the model and every other entry are the base's
//! bytes.
//!
//! Skips (passing) when `../shared/corpus` or Blender is absent.

mod common;

use std::path::Path;

use mshgltf::unit::cpt;
use mshgltf::{nres, source};

const POINT: &str = "Dir_1";
const TOL: f32 = 1e-3;

/// The first archive model of the manifest with exactly one point named
/// [`POINT`]: (archive, entry).
fn subject(m: &serde_json::Value) -> (String, String) {
    m["models"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["entry"].is_string())
        .find(|x| {
            x["control_points"]
                .as_array()
                .is_some_and(|p| p.iter().filter(|p| p["name"] == POINT).count() == 1)
        })
        .map(|x| {
            (
                x["file"].as_str().unwrap().to_string(),
                x["entry"].as_str().unwrap().to_string(),
            )
        })
        .expect("a model with a Dir_1 point")
}

/// The `.cpt` entry of `entry` in archive bytes `data`, and every entry's
/// (name, bytes).
fn cpt_of(data: &[u8], entry: &str) -> (cpt::ControlPoints, Vec<(String, Vec<u8>)>) {
    let a = nres::read(data, nres::Mode::Strict).unwrap();
    let want = format!("{}.cpt", source::stem_of(entry));
    let all: Vec<(String, Vec<u8>)> = a
        .entries
        .iter()
        .map(|e| (source::decode_name(e.name), e.data.to_vec()))
        .collect();
    let (_, b) = all
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(&want))
        .expect("the model's .cpt");
    (cpt::read(b).unwrap(), all)
}

/// Runs the script in Blender (`blender -b`) or, with `bpy`, in that
/// Python with PyPI's `bpy`.
fn run_blender(
    blender: &Path,
    bpy: Option<&Path>,
    zip: &Path,
    archive: &Path,
    entry: &str,
    work: &Path,
) -> serde_json::Value {
    let tmp = work.parent().unwrap();
    common::blender_report(
        common::blender_script(blender, bpy, "points_test.py", tmp)
            .arg("--")
            .arg(zip)
            .arg(archive)
            .arg(entry)
            .arg(POINT)
            .arg(work),
        "POINTS_TEST",
    )
}

#[test]
#[ignore = "needs ../shared and Blender: cargo test -- --include-ignored"]
fn a_muzzle_moved_and_turned_in_blender_reaches_the_cpt() {
    let Some((corpus, blender)) = common::corpus_and_blender() else {
        return;
    };
    muzzle_edit(&corpus, &blender, None);
}

/// The same in Blender 5.x (PyPI `bpy`, [`common::bpy_python`]); skips
/// (passing) without it.
#[test]
#[ignore = "needs ../shared and PyPI bpy (../shared/tools/blender-inspect --bpy): cargo test -- --include-ignored"]
fn a_muzzle_moved_and_turned_in_bpy_5_reaches_the_cpt() {
    let (Some((corpus, blender)), Some(py)) = (
        common::corpus_and_blender(),
        common::bpy_python(common::NEWEST_BPY),
    ) else {
        println!("SKIP: no ../shared, Blender or PyPI bpy");
        return;
    };
    muzzle_edit(&corpus, &blender, Some(&py));
}

/// The same in each Blender of the matrix (PyPI `bpy` 4.2 LTS, 4.5 LTS and
/// 5.0: [`common::matrix_bpys`]; README "Tested").
#[test]
#[ignore = "needs ../shared, Blender and the matrix's PyPI bpy (../shared/tools/blender-inspect --bpy=VERSION): cargo test -- --include-ignored"]
fn a_muzzle_moved_and_turned_in_each_matrix_bpy_reaches_the_cpt() {
    let Some((corpus, blender)) = common::corpus_and_blender() else {
        return;
    };
    common::for_each_matrix_bpy(|version, py| {
        println!("bpy {version}");
        muzzle_edit(&corpus, &blender, Some(py));
    });
}

/// Imports the subject, edits its muzzle point in `blender` (or `bpy`)
/// and checks the written archive.
fn muzzle_edit(corpus: &Path, blender: &Path, bpy: Option<&Path>) {
    let m = common::manifest(corpus);
    let (file, entry) = subject(&m);
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join(&file);
    std::fs::copy(corpus.join(&file), &archive).unwrap();
    let zip = tmp.path().join("addon.zip");
    common::package_addon(&zip);
    let work = tmp.path().join("work");
    let r = run_blender(blender, bpy, &zip, &archive, &entry, &work);
    assert_eq!(r["errors"], serde_json::json!([]), "{r}");
    let base = std::fs::read(corpus.join(&file)).unwrap();
    let unedited = std::fs::read(work.join("unedited.rlb")).unwrap();
    assert!(
        unedited == base,
        "{file}:{entry}: the unedited export differs from the base"
    );

    let (old, old_all) = cpt_of(&base, &entry);
    let (new, new_all) = cpt_of(&std::fs::read(work.join("edited.rlb")).unwrap(), &entry);
    assert_eq!(old.points.len(), new.points.len());
    let k = old.points.iter().position(|p| p.name() == POINT).unwrap();
    for (i, (o, n)) in old.points.iter().zip(&new.points).enumerate() {
        if i != k {
            assert_eq!(o, n, "point {i} {} changed", o.name());
        }
    }
    let (o, n) = (&old.points[k], &new.points[k]);
    let want_pos = [o.position[0] + 0.5, o.position[1], o.position[2] + 0.25];
    let d = o.direction;
    let want_dir = [-d[1], d[0], d[2]];
    let close = |a: [f32; 3], b: [f32; 3]| a.iter().zip(b).all(|(x, y)| (x - y).abs() <= TOL);
    assert!(
        close(n.position, want_pos),
        "position {:?}, want {want_pos:?}",
        n.position
    );
    assert!(
        close(n.direction, want_dir),
        "direction {:?}, want {want_dir:?}",
        n.direction
    );
    assert_eq!(
        (n.node, n.carrier, n.word0, n.name_field),
        (o.node, o.carrier, o.word0, o.name_field)
    );
    // Only the .cpt entry differs.
    let cpt_name = format!("{}.cpt", source::stem_of(&entry));
    for ((na, a), (nb, b)) in old_all.iter().zip(&new_all) {
        assert_eq!(na, nb);
        if !na.eq_ignore_ascii_case(&cpt_name) {
            assert!(a == b, "entry {na} changed");
        }
    }
    // Install into the game: ARCHIVE itself now holds the edited archive.
    assert_eq!(r["install_result"], serde_json::json!(["FINISHED"]), "{r}");
    let installed = std::fs::read(&archive).unwrap();
    assert!(
        installed == std::fs::read(work.join("edited.rlb")).unwrap(),
        "the installed archive is the edited one"
    );
    assert!(!work.join("unused.rlb").exists());
    println!(
        "{file}:{entry}: {POINT} moved to {:?}, direction {:?}; the rest byte-identical",
        n.position, n.direction
    );
}
