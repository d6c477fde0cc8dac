//! Writing into the game (issue 15): one transaction per run. A rename
//! failure injected at every position of a multi-file commit leaves every
//! original intact; two concurrent in-place runs keep both entries (or one
//! fails "busy"); the libraries, the glTF's images and buffers are inputs
//! that are never written; image URIs are confined like buffer URIs;
//! existing library entries are replaced only with --replace-entries; an
//! untouched library is not rewritten; the smaller faults of item 9.

mod common;
mod hostile;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{glb, gltf2msh, msh2gltf, sample, stderr};

use mshgltf::material::texm;
use mshgltf::nres;
use serde_json::{json, Value};

fn code(o: &Output) -> Option<i32> {
    o.status.code()
}

/// Asserts the run exited with `exit` and its stderr contains `text`
/// (both failures print stderr).
#[track_caller]
fn exits_naming(o: &Output, exit: i32, text: &str) {
    assert_eq!(code(o), Some(exit), "{}", stderr(o));
    assert!(stderr(o).contains(text), "{}", stderr(o));
}

/// Entry names of an NRes file.
fn entry_names(path: &Path) -> Vec<String> {
    let b = std::fs::read(path).unwrap();
    let a = nres::read(&b, nres::Mode::Strict).unwrap();
    a.entries
        .iter()
        .map(|e| String::from_utf8_lossy(e.name).into_owned())
        .collect()
}

/// True when the NRes file has an entry whose name starts with `stem`.
fn has(path: &Path, stem: &str) -> bool {
    entry_names(path).iter().any(|n| n.starts_with(stem))
}

/// A one-triangle scene with material `mat` textured by an embedded PNG
/// named `image`: the JSON and its binary chunk.
fn scene(mat: &str, image: &str) -> (Value, Vec<u8>) {
    let f = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let mut bin = f(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
    bin.extend(f(&[0.0, 0.0, 1.0, 0.0, 0.0, 1.0]));
    let img = texm::encode_png(&image::RgbaImage::from_pixel(
        8,
        8,
        image::Rgba([200, 10, 10, 255]),
    ))
    .unwrap();
    let img_off = bin.len();
    bin.extend(&img);
    while bin.len() % 4 != 0 {
        bin.push(0);
    }
    let json = json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"name": "body", "mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "TEXCOORD_0": 1}, "material": 0}]}],
        "materials": [{"name": mat, "pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}],
        "textures": [{"source": 0}],
        "images": [{"bufferView": 2, "mimeType": "image/png", "name": image}],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
             "min": [0.0, 0.0, 0.0], "max": [1.0, 1.0, 0.0]},
            {"bufferView": 1, "componentType": 5126, "count": 3, "type": "VEC2"}
        ],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 36},
            {"buffer": 0, "byteOffset": 36, "byteLength": 24},
            {"buffer": 0, "byteOffset": img_off, "byteLength": img.len()}
        ],
        "buffers": [{"byteLength": bin.len()}],
    });
    (json, bin)
}

/// A game folder (the demo's libraries plus a LightMap.lib) and a textured
/// scene `scene.glb` beside it.
fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let game = dir.path().join("GAME");
    std::fs::create_dir(&game).unwrap();
    for f in ["Material.lib", "Textures.lib"] {
        std::fs::copy(sample("demo").join(f), game.join(f)).unwrap();
    }
    std::fs::copy(sample("demo/Textures.lib"), game.join("LightMap.lib")).unwrap();
    let (j, b) = scene("NEW_PAINT", "new paint");
    let input = dir.path().join("scene.glb");
    std::fs::write(&input, glb(&j, &b)).unwrap();
    (dir, game, input)
}

/// Every file of `dir` with its bytes, but the lock files
/// (`.NAME.mshgltf-lock`, empty, left in place by in-place runs: checked
/// empty here).
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_file())
        .filter(|e| {
            let lock = e.file_name().to_string_lossy().ends_with(".mshgltf-lock");
            assert!(!lock || std::fs::read(e.path()).unwrap().is_empty());
            !lock
        })
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn rename_failure_at_every_position_keeps_the_game_intact() {
    rename_failures(false);
}

/// Issue 26 item 2: where hard links fail (FAT/exFAT, network shares;
/// `MSHGLTF_TEST_NO_HARD_LINKS` makes the link step fail), originals are
/// kept aside as copies and every game file stays bound to its old bytes.
#[test]
fn without_hard_links_a_failure_at_every_rename_keeps_every_name_bound() {
    rename_failures(true);
}

fn rename_failures(no_links: bool) {
    let (dir, game, input) = setup();
    let before = snapshot(&game);
    let out = dir.path().join("out/NEW.msh");
    let args = |c: &mut Command| {
        c.arg(&input)
            .arg("-o")
            .arg(&out)
            .arg("--game-dir")
            .arg(&game)
            .arg("--in-place")
            .env(
                "MSHGLTF_TEST_NO_HARD_LINKS",
                if no_links { "1" } else { "0" },
            );
    };
    // NEW.msh, NEW.wea, Material.lib, Textures.lib (LightMap.lib gains
    // nothing and is not rewritten).
    for k in 0..4 {
        let mut c = gltf2msh();
        args(&mut c);
        let o = c
            .env("MSHGLTF_TEST_FAIL_RENAME_AT", k.to_string())
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(code(&o), Some(1), "k={k}: {err}");
        assert!(
            err.contains("injected") && err.contains("nothing was changed"),
            "k={k}: {err}"
        );
        assert_eq!(snapshot(&game), before, "k={k}: {err}");
        assert!(
            !out.exists() && !out.with_extension("wea").exists(),
            "k={k}"
        );
    }
    let mut c = gltf2msh();
    args(&mut c);
    let o = c.output().unwrap();
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    assert!(has(&game.join("Material.lib"), "NEW_PAINT"));
    let after = snapshot(&game);
    let lm = |s: &[(String, Vec<u8>)]| s.iter().find(|(n, _)| n == "LightMap.lib").cloned();
    assert_eq!(lm(&after), lm(&before));
    assert_eq!(after.len(), before.len(), "no kept or temporary file left");
}

#[cfg(unix)]
#[test]
fn untouched_library_is_not_rewritten() {
    use std::os::unix::fs::MetadataExt;
    let (dir, game, input) = setup();
    let ino = std::fs::metadata(game.join("LightMap.lib")).unwrap().ino();
    let o = gltf2msh()
        .arg(&input)
        .arg("-o")
        .arg(dir.path().join("NEW.msh"))
        .arg("--game-dir")
        .arg(&game)
        .arg("--in-place")
        .output()
        .unwrap();
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    assert_eq!(
        std::fs::metadata(game.join("LightMap.lib")).unwrap().ino(),
        ino
    );
}

#[test]
fn gltf_and_bin_are_committed_together() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m.msh");
    std::fs::copy(sample("anim_rotor.msh"), &m).unwrap();
    let g = dir.path().join("m.gltf");
    std::fs::write(&g, b"old gltf").unwrap();
    std::fs::write(g.with_extension("bin"), b"old bin").unwrap();
    for k in 0..2 {
        let o = msh2gltf()
            .arg(&m)
            .arg(&g)
            .arg("--force")
            .env("MSHGLTF_TEST_FAIL_RENAME_AT", k.to_string())
            .output()
            .unwrap();
        assert_eq!(code(&o), Some(1), "k={k}: {}", stderr(&o));
        assert_eq!(std::fs::read(&g).unwrap(), b"old gltf", "k={k}");
        assert_eq!(
            std::fs::read(g.with_extension("bin")).unwrap(),
            b"old bin",
            "k={k}"
        );
    }
}

#[test]
fn concurrent_in_place_runs_keep_both_entries() {
    let (dir, game, _) = setup();
    let mut kids = Vec::new();
    for n in ["A", "B", "C"] {
        let (j, b) = scene(&format!("PAINT_{n}"), &format!("paint {n}"));
        let input = dir.path().join(format!("{n}.glb"));
        std::fs::write(&input, glb(&j, &b)).unwrap();
        kids.push(
            gltf2msh()
                .arg(&input)
                .arg("-o")
                .arg(dir.path().join(format!("{n}/{n}.msh")))
                .arg("--game-dir")
                .arg(&game)
                .arg("--in-place")
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        );
    }
    for (n, k) in ["A", "B", "C"].iter().zip(kids) {
        let o = k.wait_with_output().unwrap();
        match code(&o) {
            Some(0) => {}
            Some(1) => assert!(stderr(&o).contains("busy"), "{n}: {}", stderr(&o)),
            c => panic!("{n}: exit {c:?}: {}", stderr(&o)),
        }
    }
    let names = entry_names(&game.join("Material.lib"));
    for n in ["A", "B", "C"] {
        let ok = dir.path().join(format!("{n}/{n}.msh")).exists();
        assert_eq!(
            has(&game.join("Material.lib"), &format!("PAINT_{n}")),
            ok,
            "{n}: the library has the entry exactly when the run succeeded: {names:?}"
        );
    }
}

#[test]
fn a_held_lock_makes_a_clear_busy_failure() {
    let (dir, game, input) = setup();
    let before = snapshot(&game);
    // Runs lock a library through its lock file beside it (not the library:
    // Windows refuses a rename over a locked file).
    let lock_file = mshgltf::output::lock_file(&game.join("Material.lib"));
    assert_eq!(
        lock_file.file_name().unwrap().to_string_lossy(),
        ".Material.lib.mshgltf-lock"
    );
    let f = std::fs::File::create(&lock_file).unwrap();
    let mut lock = fd_lock::RwLock::new(f);
    let guard = lock.write().unwrap();
    let o = gltf2msh()
        .arg(&input)
        .arg("-o")
        .arg(dir.path().join("NEW.msh"))
        .arg("--game-dir")
        .arg(&game)
        .arg("--in-place")
        .env("MSHGLTF_LOCK_WAIT_MS", "300")
        .output()
        .unwrap();
    drop(guard);
    let err = stderr(&o);
    assert_eq!(code(&o), Some(1), "{err}");
    assert!(
        err.contains("Material.lib") && err.contains("busy"),
        "{err}"
    );
    assert_eq!(snapshot(&game), before);
    assert!(!dir.path().join("NEW.msh").exists());
}

#[test]
fn libraries_and_images_are_inputs() {
    let (dir, game, input) = setup();
    let before = snapshot(&game);
    // The report onto a game library that is updated in place.
    let o = gltf2msh()
        .arg(&input)
        .arg("-o")
        .arg(dir.path().join("a/NEW.msh"))
        .arg("--game-dir")
        .arg(&game)
        .arg("--in-place")
        .arg("--force")
        .arg("--report")
        .arg(game.join("Material.lib"))
        .output()
        .unwrap();
    assert_eq!(code(&o), Some(2), "{}", stderr(&o));
    // -o naming a game library with --in-place.
    let o = gltf2msh()
        .arg(&input)
        .arg("-o")
        .arg(game.join("Textures.lib"))
        .arg("--game-dir")
        .arg(&game)
        .arg("--in-place")
        .arg("--force")
        .output()
        .unwrap();
    exits_naming(&o, 2, "input");
    assert_eq!(snapshot(&game), before);
    // Copies (no --in-place): the game's libraries are inputs.
    let o = gltf2msh()
        .arg(&input)
        .arg("-o")
        .arg(dir.path().join("b/NEW.msh"))
        .arg("--game-dir")
        .arg(&game)
        .arg("--report")
        .arg(game.join("Material.lib"))
        .arg("--force")
        .output()
        .unwrap();
    assert_ne!(code(&o), Some(0), "{}", stderr(&o));
    assert_eq!(snapshot(&game), before);
    // The glTF's own external image: neither the report nor -o replace it.
    let (mut j, mut b) = scene("IMG_MAT", "img");
    let png = texm::encode_png(&image::RgbaImage::from_pixel(
        4,
        4,
        image::Rgba([1, 2, 3, 255]),
    ))
    .unwrap();
    let img = dir.path().join("tex.png");
    std::fs::write(&img, &png).unwrap();
    j["images"] = json!([{"uri": "tex.png"}]);
    j["bufferViews"].as_array_mut().unwrap().truncate(2);
    b.truncate(60);
    j["buffers"] = json!([{"byteLength": 60, "uri": "scene.bin"}]);
    std::fs::write(dir.path().join("scene.bin"), &b).unwrap();
    let gltf = dir.path().join("ext.gltf");
    std::fs::write(&gltf, serde_json::to_vec(&j).unwrap()).unwrap();
    for (flag, target) in [("--report", &img), ("-o", &img)] {
        let o = gltf2msh()
            .arg(&gltf)
            .arg(flag)
            .arg(target)
            .arg("--force")
            .output()
            .unwrap();
        assert_ne!(code(&o), Some(0), "{flag}: {}", stderr(&o));
        assert!(stderr(&o).contains("input"), "{flag}: {}", stderr(&o));
        assert_eq!(std::fs::read(&img).unwrap(), png, "{flag}");
    }
}

/// A .gltf beside `scene.bin` whose one image has `uri` (for the Unix-only
/// confinement test: it makes a FIFO).
#[cfg(unix)]
fn gltf_with_image_uri(dir: &Path, uri: &str) -> PathBuf {
    let (mut j, mut b) = scene("URI_MAT", "uri");
    j["images"] = json!([{"uri": uri}]);
    j["bufferViews"].as_array_mut().unwrap().truncate(2);
    b.truncate(60);
    j["buffers"] = json!([{"byteLength": 60, "uri": "scene.bin"}]);
    std::fs::write(dir.join("scene.bin"), &b).unwrap();
    let p = dir.join("uri.gltf");
    std::fs::write(&p, serde_json::to_vec(&j).unwrap()).unwrap();
    p
}

#[cfg(unix)]
#[test]
fn image_uris_are_confined_like_buffer_uris() {
    let (dir, game, _) = setup();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let secret = texm::encode_png(&image::RgbaImage::from_pixel(
        4,
        4,
        image::Rgba([9, 9, 9, 255]),
    ))
    .unwrap();
    std::fs::write(dir.path().join("secret.png"), &secret).unwrap();
    let fifo = sub.join("fifo.png");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let abs = dir.path().join("secret.png");
    for (uri, allow, want) in [
        (abs.to_str().unwrap(), false, "only relative URIs"),
        ("../secret.png", false, "outside the glTF's folder"),
        ("%2E%2E/secret.png", false, "outside the glTF's folder"),
        ("fifo.png", false, "not a regular file"),
        ("/dev/zero", true, "not a regular file"),
    ] {
        let g = gltf_with_image_uri(&sub, uri);
        let mut c = gltf2msh();
        c.arg(&g)
            .arg("-o")
            .arg(dir.path().join("out/NEW.msh"))
            .arg("--game-dir")
            .arg(&game);
        if allow {
            c.arg("--allow-outside");
        }
        let o = c.output().unwrap();
        let err = stderr(&o);
        assert_eq!(code(&o), Some(1), "{uri}: {err}");
        assert!(
            err.contains("gltf.uri") && err.contains(want),
            "{uri}: {err}"
        );
        assert!(!dir.path().join("out/NEW.msh").exists(), "{uri}");
    }
    // --allow-outside reads the outside file.
    let g = gltf_with_image_uri(&sub, "../secret.png");
    let o = gltf2msh()
        .arg(&g)
        .arg("-o")
        .arg(dir.path().join("out/NEW.msh"))
        .arg("--game-dir")
        .arg(&game)
        .arg("--allow-outside")
        .output()
        .unwrap();
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
}

#[test]
fn archive_entries_need_replace_entries() {
    let (dir, _, input) = setup();
    let arch = dir.path().join("units.rlb");
    std::fs::copy(sample("demo/demo.rlb"), &arch).unwrap();
    let run = |extra: &[&str]| {
        gltf2msh()
            .arg(&input)
            .args(["--into", arch.to_str().unwrap(), "--name", "NEW", "--force"])
            .args(extra)
            .output()
            .unwrap()
    };
    let o = run(&[]);
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    let once = std::fs::read(&arch).unwrap();
    // The same name again: --force alone does not replace entries.
    let o = run(&[]);
    assert_eq!(code(&o), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("NEW.msh") && err.contains("NEW.wea") && err.contains("--replace-entries"),
        "{err}"
    );
    assert_eq!(std::fs::read(&arch).unwrap(), once);
    // The report onto the archive changed in place: refused, archive kept.
    let o = run(&["--replace-entries", "--report", arch.to_str().unwrap()]);
    assert_eq!(code(&o), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read(&arch).unwrap(), once);
    let o = run(&["--replace-entries"]);
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    assert_eq!(
        entry_names(&arch).len(),
        nres::read(&once, nres::Mode::Strict).unwrap().entries.len()
    );
}

#[test]
fn smaller_faults_have_clear_messages_and_exit_codes() {
    let (dir, game, input) = setup();
    // --list into a closed pipe: no panic.
    let mut c = msh2gltf()
        .arg("--list")
        .arg(sample("demo/demo.rlb"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(c.stdout.take());
    let o = c.wait_with_output().unwrap();
    assert!(matches!(code(&o), Some(0) | Some(1)), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    // --game-dir that does not exist, or is a file: usage errors naming it.
    let file = dir.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    for g in [dir.path().join("nowhere"), file.clone()] {
        let o = msh2gltf()
            .arg(sample("static_box.msh"))
            .arg(dir.path().join("x.glb"))
            .arg("--game-dir")
            .arg(&g)
            .output()
            .unwrap();
        exits_naming(&o, 2, g.to_str().unwrap());
        let o = gltf2msh()
            .arg(&input)
            .arg("-o")
            .arg(dir.path().join("x.msh"))
            .arg("--game-dir")
            .arg(&g)
            .output()
            .unwrap();
        exits_naming(&o, 2, g.to_str().unwrap());
    }
    // /dev/zero as input: "not a regular file", not "not found". Unix only:
    // Windows has no /dev/zero (its devices, e.g. NUL, are not files a user
    // passes as a model).
    #[cfg(unix)]
    {
        let o = msh2gltf()
            .arg("/dev/zero")
            .arg(dir.path().join("z.glb"))
            .output()
            .unwrap();
        exits_naming(&o, 2, "not a regular file");
    }
    // --max-texture 0.
    let o = gltf2msh()
        .arg(&input)
        .args(["--max-texture", "0", "-o"])
        .arg(dir.path().join("t.msh"))
        .output()
        .unwrap();
    exits_naming(&o, 2, "--max-texture");
    // --into a material library.
    let o = gltf2msh()
        .arg(&input)
        .arg("--into")
        .arg(game.join("Material.lib"))
        .arg("-o")
        .arg(dir.path().join("m.rlb"))
        .output()
        .unwrap();
    exits_naming(&o, 2, "not an archive of models");
    // --textures-out that cannot be written: exit 1, on stderr.
    let o = msh2gltf()
        .arg(sample("demo/demo.rlb"))
        .arg(dir.path().join("conv"))
        .arg("--game-dir")
        .arg(sample("demo"))
        .arg("--textures-out")
        .arg(&file)
        .output()
        .unwrap();
    exits_naming(&o, 1, "--textures-out");
    // A file as the parent of an output names it.
    let o = msh2gltf()
        .arg(sample("static_box.msh"))
        .arg(file.join("x.glb"))
        .output()
        .unwrap();
    assert_ne!(code(&o), Some(0));
    assert!(
        stderr(&o).contains("is a file, not a folder"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn one_broken_library_leaves_the_others_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let game = dir.path().join("GAME");
    std::fs::create_dir(&game).unwrap();
    for f in ["Material.lib", "Textures.lib"] {
        std::fs::copy(sample("demo").join(f), game.join(f)).unwrap();
    }
    std::fs::write(game.join("LightMap.lib"), b"NRes broken").unwrap();
    let units = dir.path().join("units");
    std::fs::create_dir(&units).unwrap();
    std::fs::copy(sample("demo/demo.rlb"), units.join("demo.rlb")).unwrap();
    let rep = dir.path().join("r.json");
    let o = msh2gltf()
        .arg(units.join("demo.rlb"))
        .arg(dir.path().join("out"))
        .arg("--game-dir")
        .arg(&game)
        .arg("--report")
        .arg(&rep)
        .output()
        .unwrap();
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&std::fs::read(&rep).unwrap()).unwrap();
    let rows = r["models"].as_array().unwrap();
    assert!(rows
        .iter()
        .any(|m| m["textures"].as_array().is_some_and(|t| !t.is_empty())));
    assert!(rows.iter().all(|m| m["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().contains("LightMap.lib not loaded"))));
}

#[test]
fn concurrent_into_runs_keep_every_model() {
    let (dir, _, input) = setup();
    let arch = dir.path().join("units.rlb");
    std::fs::copy(sample("demo/demo.rlb"), &arch).unwrap();
    let names = ["N1", "N2", "N3"];
    let kids: Vec<_> = names
        .iter()
        .map(|n| {
            gltf2msh()
                .arg(&input)
                .args(["--into", arch.to_str().unwrap(), "--name", n, "--force"])
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut ok = Vec::new();
    for (n, k) in names.iter().zip(kids) {
        let o = k.wait_with_output().unwrap();
        match code(&o) {
            Some(0) => ok.push(*n),
            Some(1) => assert!(stderr(&o).contains("busy"), "{n}: {}", stderr(&o)),
            c => panic!("{n}: exit {c:?}: {}", stderr(&o)),
        }
    }
    let have = entry_names(&arch);
    for n in names {
        assert_eq!(
            have.contains(&format!("{n}.msh")) && have.contains(&format!("{n}.wea")),
            ok.contains(&n),
            "{n}: {have:?}"
        );
    }
}

/// Issue 26 item 4: the `.ctl` read beside a bare model base by `gltf2msh
/// --base X.msh` is an input of the run: an output naming it (`-o`, even
/// with `--force`) is refused, exit 2, and the `.ctl` keeps its bytes.
#[test]
fn the_ctl_beside_a_bare_base_is_an_input() {
    let tmp = tempfile::tempdir().unwrap();
    let msh = tmp.path().join("m.msh");
    std::fs::copy(sample("anim_rotor.msh"), &msh).unwrap();
    let ctl = tmp.path().join("m.ctl");
    let ctl_bytes = hostile::work::ctl_channels(1);
    std::fs::write(&ctl, &ctl_bytes).unwrap();
    let g = tmp.path().join("m.glb");
    let o = msh2gltf().arg(&msh).arg(&g).output().unwrap();
    assert_eq!(code(&o), Some(0), "{}", stderr(&o));
    let o = gltf2msh()
        .arg(&g)
        .arg("--base")
        .arg(&msh)
        .arg("-o")
        .arg(&ctl)
        .arg("--force")
        .output()
        .unwrap();
    exits_naming(&o, 2, "input");
    assert_eq!(std::fs::read(&ctl).unwrap(), ctl_bytes);
}
