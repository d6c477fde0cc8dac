//! Issue 26 item 5, the rest of the work budget: hostile maps, units,
//! siblings, textures and archives whose cost is counted before the work
//! (`limits.work`). Built in code, small on disk where the format allows;
//! run by `scripts/bench_hostile.sh` through [`super::cases`].

use mshgltf::nres;
use mshgltf::unit::{cpt, ctl};

pub use super::unit_file::{dat, name32, objects_rlb};
use super::{args, base_model, encode, Case, Tool};

/// A `.ctl` with `channels` looping channels on node 0 and no states
/// (unit-files-notes §1.7): 36 bytes per channel.
pub fn ctl_channels(channels: usize) -> Vec<u8> {
    let ch = ctl::Channel {
        node: 0,
        first: 0.0,
        last: 1.0,
        initial: 0.0,
        second_point: -1,
        point: 0,
        rate: 2.0,
        span: 6.283_185_5,
        flags: 1,
    };
    ctl::write(&ctl::Controller {
        contacts_per_state: 0,
        params: vec![0; ctl::PARAMS],
        states: vec![],
        costs: vec![],
        channels: vec![ch; channels],
        components: vec![],
        group_block: vec![-1; ctl::GROUP_BLOCK],
        groups: vec![],
    })
}

/// A `.cpt` with `points` control points on node 0 (68 bytes each).
pub fn cpt_points(points: usize) -> Vec<u8> {
    let p = cpt::ControlPoint {
        word0: 0,
        node: 0,
        carrier: -1,
        position: [0.0, 0.0, 1.0],
        direction: [0.0, 0.0, 1.0],
        name_field: name32("p"),
    };
    cpt::write(&cpt::ControlPoints {
        points: vec![p; points],
    })
}

fn sample(name: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("samples")
            .join(name),
    )
    .unwrap()
}

/// The files of a game folder (`objects.rlb` with records chassis, turret
/// and gun; `parts.rlb` holding `samples/demo/demo.rlb`'s TOWER as chassis
/// and turret and `samples/anim_rotor.msh` as gun) and `UNITS/u.dat`
/// holding `components`.
pub fn unit_game(components: &[(&str, i32, u32, i32)]) -> Vec<(String, Vec<u8>)> {
    let demo = sample("demo/demo.rlb");
    let a = nres::read(&demo, nres::Mode::Strict).unwrap();
    let tower = mshgltf::source::find_entry(&a, "TOWER.msh").unwrap();
    let rotor = sample("anim_rotor.msh");
    let mut entries = vec![a.entries[tower].clone(); 3];
    entries[0].name = b"chassis.msh";
    entries[1].name = b"turret.msh";
    entries[2].name = b"gun.msh";
    entries[2].data = &rotor;
    let parts = nres::write(&entries).unwrap();
    vec![
        ("parts.rlb".into(), parts),
        (
            "objects.rlb".into(),
            objects_rlb("parts.rlb", &["chassis", "turret", "gun"]),
        ),
        ("UNITS/u.dat".into(), dat(components)),
    ]
}

/// A chassis carrying `guns` guns on its node 1.
pub fn many_guns(guns: usize) -> Vec<(&'static str, i32, u32, i32)> {
    let mut v = vec![("chassis", -1, 0, guns as i32)];
    v.extend(std::iter::repeat_n(("gun", 1, 4, 0), guns));
    v
}

/// A chassis and a chain of `depth` turrets, each on node 1 of the one
/// before.
pub fn deep_turrets(depth: usize) -> Vec<(&'static str, i32, u32, i32)> {
    let mut v = vec![("chassis", -1, 0, 1)];
    v.extend((0..depth).map(|i| ("turret", 1, 1, i32::from(i + 1 < depth))));
    v
}

/// A bare model `m.msh` (one triangle, one node) with `sibling` beside it.
fn model_with(name: &'static str, sibling: (&str, Vec<u8>), exit: i32, rule: &'static str) -> Case {
    Case {
        name,
        files: vec![
            ("m.msh".into(), encode(base_model(1))),
            (sibling.0.into(), sibling.1),
        ],
        tool: Tool::Msh2gltf,
        args: args(&["m.msh", "out.glb"]),
        exit,
        rule,
    }
}

/// The cases of this module, largest memory first (issue 26 item 5).
pub fn cases(v: &mut Vec<Case>) {
    v.push(model_with(
        "unit_ctl_50000_channels",
        ("m.ctl", ctl_channels(50_000)),
        1,
        "limits.work",
    ));
    v.push(model_with(
        "unit_cpt_100000_points",
        ("m.cpt", cpt_points(100_000)),
        1,
        "limits.work",
    ));
    v.push(Case {
        name: "unit_dat_2000_guns",
        files: unit_game(&many_guns(2000)),
        tool: Tool::Msh2gltf,
        args: args(&["UNITS/u.dat", "out.glb"]),
        exit: 1,
        rule: "limits.work",
    });
    v.push(Case {
        name: "unit_dat_3000_deep",
        files: unit_game(&deep_turrets(3000)),
        tool: Tool::Msh2gltf,
        args: args(&["UNITS/u.dat", "out.glb"]),
        exit: 1,
        rule: "limits.work",
    });
    map_cases(v);
    texture_and_archive_cases(v);
    base_map_cases(v);
    unit_budget_cases(v);
    journal_cases(v);
}

/// The four files of the tiny 2 x 2 map (`tests/land`), with `replace`
/// substituted for the file of that name.
fn map_files(replace: (&str, Vec<u8>)) -> Vec<(String, Vec<u8>)> {
    use super::land;
    use mshgltf::terrain::{map, write};
    let mut files = vec![
        (
            "Land.msh".to_string(),
            write::encode(&land::tiny_land(2)).unwrap(),
        ),
        ("Land.map".into(), map::encode(&land::tiny_map()).unwrap()),
        ("Land1.wea".into(), land::wear(&["B_S0", "GRASS", "ROCK"])),
        (
            "Land2.wea".into(),
            land::wear(&["DEFAULT", "GRASSM", "ROCKM"]),
        ),
    ];
    for f in &mut files {
        if f.0 == replace.0 {
            f.1 = replace.1.clone();
        }
    }
    files
}

/// A Land.map (terrain-notes §2) with the tiny map's one areal and a grid
/// of 128 x `rows` cells each listing areal 0: 4 bytes per cell.
pub fn big_areal_map(rows: u32) -> Vec<u8> {
    use mshgltf::terrain::map;
    let tiny = map::encode(&super::land::tiny_map()).unwrap();
    let a = nres::read(&tiny, nres::Mode::Strict).unwrap();
    let e = a.entries[0].clone();
    let mut data = e.data[..e.data.len() - 8 - 128 * 128 * 4].to_vec();
    data.extend_from_slice(&128u32.to_le_bytes());
    data.extend_from_slice(&rows.to_le_bytes());
    for _ in 0..128 * rows {
        data.extend_from_slice(&[1, 0, 0, 0]);
    }
    nres::write(&[nres::Entry { data: &data, ..e }]).unwrap()
}

/// A WEAR table of `rows` rows `i GRASS` (CRLF).
pub fn long_wear(rows: usize) -> Vec<u8> {
    let mut s = format!("{rows}\r\n");
    for i in 0..rows {
        s.push_str(&format!("{i} GRASS\r\n"));
    }
    s.into_bytes()
}

/// Hostile maps: an 18 MB Land.map, a Land1.wea of 10^6 rows.
pub fn map_cases(v: &mut Vec<Case>) {
    for (name, file) in [
        ("map_land_map_18mb", ("Land.map", big_areal_map(36_864))),
        ("map_wea_1000000_rows", ("Land1.wea", long_wear(1_000_000))),
    ] {
        v.push(Case {
            name,
            files: map_files(file),
            tool: Tool::Msh2gltf,
            args: args(&["Land.msh", "out.glb"]),
            exit: 1,
            rule: "limits.work",
        });
    }
}

/// A Texm (format-notes §4) of `w` x `h` palette pixels (format 0)
/// declaring `mips` levels, with every level's bytes present (zeros).
pub fn texm(w: u32, h: u32, mips: u32) -> Vec<u8> {
    let mut b = b"Texm".to_vec();
    for x in [w, h, mips, 0, 0, 0, 0] {
        b.extend_from_slice(&x.to_le_bytes());
    }
    b.resize(32 + 1024, 0);
    let mut len = b.len();
    for l in 0..mips {
        let (lw, lh) = ((w >> l.min(31)).max(1), (h >> l.min(31)).max(1));
        len += (lw * lh) as usize;
    }
    b.resize(len, 0);
    b
}

/// A game folder (`game/`: the demo's Material.lib, its Textures.lib with
/// `extra` added as `BIG`, and a model) for `--textures-out`.
pub fn texture_game(extra: Vec<u8>) -> Vec<(String, Vec<u8>)> {
    let lib = sample("demo/Textures.lib");
    let a = nres::read(&lib, nres::Mode::Strict).unwrap();
    let mut entries = a.entries.clone();
    let mut big = entries[0].clone();
    big.name = b"BIG";
    big.data = &extra;
    entries.push(big);
    vec![
        ("game/Material.lib".into(), sample("demo/Material.lib")),
        ("game/Textures.lib".into(), nres::write(&entries).unwrap()),
        ("game/m.msh".into(), encode(base_model(1))),
    ]
}

/// An archive of `n` empty entries `Ei.msh`.
pub fn empty_entries(n: usize) -> Vec<u8> {
    let names: Vec<Vec<u8>> = (0..n).map(|i| format!("E{i}.msh").into_bytes()).collect();
    let entries: Vec<nres::Entry> = names
        .iter()
        .map(|name| nres::Entry {
            type_id: 0,
            attr1: 0,
            attr2: 0,
            attr3: 0,
            name,
            data: &[],
        })
        .collect();
    nres::write(&entries).unwrap()
}

/// `--textures-out` of an 8192² texture, a 1 x 1 texture declaring 10^7
/// mip levels, and an archive of 160 000 empty entries (given alone, and
/// met by a batch's walk of a folder), and a folder of 100 000 files.
pub fn texture_and_archive_cases(v: &mut Vec<Case>) {
    for (name, t, rule) in [
        ("texture_out_8192", texm(8192, 8192, 1), "limits.work"),
        (
            "texture_mips_10000000",
            texm(1, 1, 10_000_000),
            "texm.mip_count",
        ),
    ] {
        v.push(Case {
            name,
            files: texture_game(t),
            tool: Tool::Msh2gltf,
            args: args(&["-q", "game", "out", "--textures-out", "tex"]),
            exit: 1,
            rule,
        });
    }
    v.push(Case {
        name: "archive_160000_empty_entries",
        files: vec![("a.rlb".into(), empty_entries(160_000))],
        tool: Tool::Msh2gltf,
        args: args(&["-q", "a.rlb", "out", "--report", "report.json"]),
        exit: 1,
        rule: "limits.work",
    });
    v.push(Case {
        name: "batch_100000_tiny_files",
        files: tiny_files(100_000),
        tool: Tool::Msh2gltf,
        args: args(&["-q", "game", "out", "--report", "report.json"]),
        exit: 1,
        rule: "limits.work",
    });
    v.push(Case {
        name: "batch_archive_160000_empty_entries",
        files: batch_with_archive(160_000),
        tool: Tool::Msh2gltf,
        args: args(&["-q", "game", "out", "--report", "report.json"]),
        exit: 1,
        rule: "limits.work",
    });
}

/// A game folder of `n` empty files `game/fN`: the batch's walk is over
/// the default budget (64 units per file, 15 625 files) before it ends.
pub fn tiny_files(n: usize) -> Vec<(String, Vec<u8>)> {
    (0..n).map(|i| (format!("game/f{i}"), Vec::new())).collect()
}

/// A game folder for a batch: `game/a.rlb`, an archive of `entries` empty
/// entries ([`empty_entries`]), and a model `game/m.msh` after it.
pub fn batch_with_archive(entries: usize) -> Vec<(String, Vec<u8>)> {
    vec![
        ("game/a.rlb".into(), empty_entries(entries)),
        ("game/m.msh".into(), encode(base_model(1))),
    ]
}

/// The tiny map's files and a GLB of its export (every LOD) whose first
/// LOD mesh holds `prims` copies of its first primitive; with `vertices`,
/// each copy reads POSITION and `_VERTEX_ID` from one accessor of that many
/// vertices (the other attributes dropped).
pub fn base_map_edit(prims: usize, vertices: Option<usize>) -> Vec<(String, Vec<u8>)> {
    use mshgltf::terrain::{export, source::TerrainSource, Mode};
    let files = map_files(("", Vec::new()));
    let tmp = tempfile::tempdir().unwrap();
    for (n, b) in &files {
        std::fs::write(tmp.path().join(n), b).unwrap();
    }
    let src = TerrainSource::load(&tmp.path().join("Land.msh"), Mode::Strict, None).unwrap();
    let opts = export::TerrainExportOptions {
        all_lods: true,
        ..Default::default()
    };
    let mut g = export::export(&src, None, &opts);
    let j = &mut g.json;
    let mesh = j["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["extras"].get("lod").is_some() && n.get("mesh").is_some())
        .unwrap()["mesh"]
        .as_u64()
        .unwrap() as usize;
    let mut p0 = j["meshes"][mesh]["primitives"][0].clone();
    if let Some(n) = vertices {
        let at = g.bin.len();
        g.bin.resize(at + n * 16, 0);
        let views = j["bufferViews"].as_array_mut().unwrap();
        views.push(serde_json::json!({"buffer": 0, "byteOffset": at, "byteLength": n * 12}));
        views
            .push(serde_json::json!({"buffer": 0, "byteOffset": at + n * 12, "byteLength": n * 4}));
        let v = views.len();
        let accs = j["accessors"].as_array_mut().unwrap();
        accs.push(
            serde_json::json!({"bufferView": v - 2, "componentType": 5126, "count": n,
            "type": "VEC3", "min": [0.0, 0.0, 0.0], "max": [0.0, 0.0, 0.0]}),
        );
        accs.push(serde_json::json!({"bufferView": v - 1, "componentType": 5126, "count": n, "type": "SCALAR"}));
        let a = accs.len();
        p0["attributes"] = serde_json::json!({"POSITION": a - 2, "_VERTEX_ID": a - 1});
    }
    j["meshes"][mesh]["primitives"] = serde_json::Value::Array(vec![p0; prims]);
    j["buffers"][0]["byteLength"] = serde_json::json!(g.bin.len());
    let mut files = files;
    files.push(("edit.glb".into(), export::to_glb(&g).unwrap()));
    files
}

/// `gltf2msh --base` of a map: 12 000 one-triangle primitives; 1000
/// primitives on one 10^6-vertex accessor.
pub fn base_map_cases(v: &mut Vec<Case>) {
    for (name, prims, vertices) in [
        ("map_base_12000_primitives", 12_000, None),
        (
            "map_base_1000_primitives_1e6_vertices",
            1000,
            Some(1_000_000),
        ),
    ] {
        v.push(Case {
            name,
            files: base_map_edit(prims, vertices),
            tool: Tool::Gltf2msh,
            args: args(&["edit.glb", "--base", "Land.msh", "-o", "out.msh"]),
            exit: 1,
            rule: "limits.work",
        });
    }
}

/// Issue 36 items 9 and 12: unit files, registries and glTFs whose cost
/// is counted before the work (`limits.work`).
/// Issue 36 item 2, the commit journal met as a hostile file: a journal
/// beside a game file that is 50 MB (the reader stops at
/// `MAX_JOURNAL_BYTES`, 1 MiB) or garbled is refused by
/// `gltf2msh --recover .` with `output.journal`, exit 1, and nothing is
/// renamed or removed on its word.
pub fn journal_cases(v: &mut Vec<Case>) {
    let game = ("Material.lib".to_string(), b"NRes".to_vec());
    v.push(Case {
        name: "commit_journal_50mb",
        files: vec![
            game.clone(),
            (".mshgltf-journal-1-2-3".into(), vec![b'x'; 50 << 20]),
        ],
        tool: Tool::Gltf2msh,
        args: args(&["--recover", "."]),
        exit: 1,
        rule: "output.journal",
    });
    v.push(Case {
        name: "commit_journal_garbled",
        files: vec![
            game,
            (
                ".mshgltf-journal-1-2-4".into(),
                b"mshgltf-journal 1\ntarget\t/etc/passwd\n\x00\xff".to_vec(),
            ),
        ],
        tool: Tool::Gltf2msh,
        args: args(&["--recover", "."]),
        exit: 1,
        rule: "output.journal",
    });
}

pub fn unit_budget_cases(v: &mut Vec<Case>) {
    v.push(Case {
        name: "unit_dat_1000000_components",
        files: unit_game(&internal_components(1_000_000)),
        tool: Tool::Msh2gltf,
        args: args(&["UNITS/u.dat", "out.glb"]),
        exit: 1,
        rule: "limits.work",
    });
    let mut files = unit_game(&[("chassis", -1, 0, 0)]);
    for f in &mut files {
        if f.0 == "objects.rlb" {
            f.1 = wide_registry(1_000_000);
        }
    }
    v.push(Case {
        name: "unit_registry_1000000_slots",
        files,
        tool: Tool::Msh2gltf,
        args: args(&["UNITS/u.dat", "out.glb"]),
        exit: 1,
        rule: "limits.work",
    });
    v.push(Case {
        name: "gltf_clip_1000000_keys",
        files: vec![
            ("m.msh".into(), encode(base_model(1))),
            ("edit.glb".into(), clip_keys_glb(1_000_000)),
        ],
        tool: Tool::Gltf2msh,
        args: args(&["edit.glb", "--base", "m.msh", "-o", "out.msh"]),
        exit: 1,
        rule: "limits.work",
    });
    v.push(Case {
        name: "unit_base_10000_added_nodes",
        files: unit_with_added_nodes(10_000),
        tool: Tool::Gltf2msh,
        args: args(&["u.glb", "--base", "UNITS/u.dat", "-o", "."]),
        exit: 1,
        rule: "limits.work",
    });
    v.push(Case {
        name: "map_64800_distinct_pairs",
        files: map_files((
            "Land.msh",
            mshgltf::terrain::write::encode(&super::land::one_cell_pairs(64_800)).unwrap(),
        )),
        tool: Tool::Msh2gltf,
        args: args(&["Land.msh", "out.glb"]),
        exit: 1,
        rule: "limits.work",
    });
}

/// A chassis carrying `n - 1` internal components (class 3, not drawn):
/// 112 bytes each in the unit file.
pub fn internal_components(n: usize) -> Vec<(&'static str, i32, u32, i32)> {
    let mut v = vec![("chassis", -1, 0, (n - 1) as i32)];
    v.extend(std::iter::repeat_n(("engine", 0, 3, 0), n - 1));
    v
}

/// The `objects.rlb` of [`unit_game`] whose `chassis` record holds `slots`
/// 64-byte slots (each naming `parts.rlb` `chassis.msh`).
pub fn wide_registry(slots: usize) -> Vec<u8> {
    let mut slot = name32("parts.rlb").to_vec();
    slot.extend_from_slice(&name32("chassis.msh"));
    let chassis = slot.repeat(slots);
    let mut gun = name32("parts.rlb").to_vec();
    gun.extend_from_slice(&name32("gun.msh"));
    let entry = |name: &'static [u8]| nres::Entry {
        type_id: 0,
        attr1: 0,
        attr2: 0,
        attr3: 0,
        name,
        data: &[],
    };
    let entries = [
        nres::Entry {
            data: &chassis,
            ..entry(b"chassis")
        },
        nres::Entry {
            data: &gun,
            ..entry(b"gun")
        },
    ];
    nres::write(&entries).unwrap()
}

/// A GLB of a one-triangle model (`base_model(1)`, as msh2gltf exports
/// it) with a clip animation (`extras.msh.clip`) of `keys` rotation keys
/// on node 0: 20 bytes per key in its BIN chunk.
pub fn clip_keys_glb(keys: usize) -> Vec<u8> {
    use mshgltf::convert::{self, ConvertOptions, ModelRef};
    let bytes = encode(base_model(1));
    let m = ModelRef {
        source: "m.msh".into(),
        stem: "m".into(),
        bytes: &bytes,
        wear: None,
    };
    let x = convert::convert(&m, None, &ConvertOptions::default())
        .unwrap()
        .exported;
    let mut j = serde_json::to_value(&x.root).unwrap();
    let mut bin = x.bin;
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
    let at = bin.len();
    for k in 0..keys {
        bin.extend_from_slice(&(k as f32 / 30.0).to_le_bytes());
    }
    for _ in 0..keys {
        for c in [0.0f32, 0.0, 0.0, 1.0] {
            bin.extend_from_slice(&c.to_le_bytes());
        }
    }
    let push = |j: &mut serde_json::Value, key: &str, v: serde_json::Value| -> usize {
        if !j[key].is_array() {
            j[key] = serde_json::json!([]);
        }
        let a = j[key].as_array_mut().unwrap();
        a.push(v);
        a.len() - 1
    };
    let tv = push(
        &mut j,
        "bufferViews",
        serde_json::json!({"buffer": 0, "byteOffset": at, "byteLength": keys * 4}),
    );
    let ov = push(
        &mut j,
        "bufferViews",
        serde_json::json!({"buffer": 0, "byteOffset": at + keys * 4, "byteLength": keys * 16}),
    );
    let last = (keys - 1) as f32 / 30.0;
    let ta = push(
        &mut j,
        "accessors",
        serde_json::json!({"bufferView": tv, "componentType": 5126, "count": keys, "type": "SCALAR", "min": [0.0], "max": [last]}),
    );
    let oa = push(
        &mut j,
        "accessors",
        serde_json::json!({"bufferView": ov, "componentType": 5126, "count": keys, "type": "VEC4"}),
    );
    push(
        &mut j,
        "animations",
        serde_json::json!({"name": "clip", "extras": {"msh": {"clip": {"channel": 0}}},
            "samplers": [{"input": ta, "output": oa}],
            "channels": [{"sampler": 0, "target": {"node": 0, "path": "rotation"}}]}),
    );
    j["buffers"][0]["byteLength"] = serde_json::json!(bin.len());
    glb(&j, &bin)
}

/// A GLB: JSON chunk `j`, BIN chunk `bin` (glTF 2.0 §4.4).
pub fn glb(j: &serde_json::Value, bin: &[u8]) -> Vec<u8> {
    let mut js = serde_json::to_vec(j).unwrap();
    while !js.len().is_multiple_of(4) {
        js.push(b' ');
    }
    let total = 12 + 8 + js.len() + 8 + bin.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(js.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&js);
    out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(bin);
    out
}

/// The game of [`unit_game`] (a chassis carrying a turret and a gun on
/// its node 1, the turret a gun on its node 1: four parts) and `u.glb`,
/// its assembled export with `added` empties added under the chassis's
/// root (part 0 by inheritance).
pub fn unit_with_added_nodes(added: usize) -> Vec<(String, Vec<u8>)> {
    use mshgltf::unit::assemble;
    let mut files = unit_game(&[
        ("chassis", -1, 0, 2),
        ("turret", 1, 1, 1),
        ("gun", 1, 4, 0),
        ("gun", 1, 4, 0),
    ]);
    let tmp = tempfile::tempdir().unwrap();
    for (n, b) in &files {
        let p = tmp.path().join(n);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, b).unwrap();
    }
    let dat = tmp.path().join("UNITS/u.dat");
    let c = assemble::convert_unit(
        &dat,
        &std::fs::read(&dat).unwrap(),
        None,
        &Default::default(),
    )
    .unwrap();
    let mut j = serde_json::to_value(&c.exported.root).unwrap();
    let nodes = j["nodes"].as_array_mut().unwrap();
    let first = nodes.len();
    nodes.extend((0..added).map(|i| serde_json::json!({"name": format!("added{i}")})));
    let kids: Vec<serde_json::Value> = (first..first + added).map(Into::into).collect();
    match j["nodes"][0]["children"].as_array_mut() {
        Some(c) => c.extend(kids),
        None => j["nodes"][0]["children"] = kids.into(),
    }
    files.push(("u.glb".into(), glb(&j, &c.exported.bin)));
    files
}
