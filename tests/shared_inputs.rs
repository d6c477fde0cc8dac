//! Single-file map and unit runs never write a file they read (issue 26
//! item 1): the libraries a map reads and the registry and part archives a
//! unit reads are inputs, so naming one as the output or as `--report`
//! is refused with exit 2, `--force` or not, and the file is left as it
//! was. Run on a copy of `../shared/corpus`.

mod common;

use std::path::Path;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        let q = to.join(e.file_name());
        if p.is_dir() {
            copy_dir(&p, &q);
        } else {
            std::fs::copy(&p, &q).unwrap();
        }
    }
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn map_and_unit_runs_refuse_to_write_what_they_read() {
    let Some(root) = common::corpus() else { return };
    let m = common::manifest(&root);
    let tmp = tempfile::tempdir().unwrap();
    let g = tmp.path().join("game");
    copy_dir(&root, &g);
    let map = g
        .join(m["terrains"][0]["dir"].as_str().unwrap())
        .join("Land.msh");
    let unit = g.join(m["units"][0]["path"].as_str().unwrap());
    let part = m["units"][0]["parts"][0]["archive"].as_str().unwrap();
    let land = format!("{}/Land.msh", m["missions"][0]["map_dir"].as_str().unwrap());
    let mission = g
        .join(m["missions"][0]["dir"].as_str().unwrap())
        .join("data.tma");
    let cases: Vec<(&Path, String, bool)> = vec![
        (&map, "Material.lib".into(), false),
        (&map, "Textures.lib".into(), true),
        (&unit, part.into(), false),
        (&unit, "objects.rlb".into(), false),
        (&unit, "guns.rlb".into(), true),
        (&mission, "Material.lib".into(), true),
        (&mission, "objects.rlb".into(), true),
        (&mission, "static.rlb".into(), false),
        (&mission, land.clone(), true),
    ];
    for (input, target, as_report) in cases {
        let t = g.join(&target);
        let before = std::fs::read(&t).unwrap();
        let mut cmd = common::msh2gltf();
        cmd.arg(input);
        if as_report {
            cmd.arg(tmp.path().join("x.glb")).arg("--report").arg(&t);
        } else {
            cmd.arg(&t);
        }
        let o = cmd.arg("--force").output().unwrap();
        let err = common::stderr(&o);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{} -> {target}: {err}",
            input.display()
        );
        assert!(err.contains("refusing to overwrite the input"), "{err}");
        assert!(std::fs::read(&t).unwrap() == before, "{target} changed");
    }
}
