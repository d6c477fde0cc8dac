//! Hostile inputs built in code (no ../shared needed), shared by the
//! `hostile_*` tests and by `scripts/bench_hostile.sh` (through
//! `cargo test --test hostile_inputs -- --ignored dump_cases`), which
//! measures the time and peak RSS of every case.
//!
//! Each case is a folder of files and one command of `msh2gltf` or
//! `gltf2msh`, run inside that folder, with the exit code and the rule id
//! the command must print.
#![allow(dead_code)]

use std::path::Path;

#[path = "../land/mod.rs"]
pub mod land;
// Also `common::unit_file` in the test crates that have both modules: the
// hostile cases are built by crates without `common` too.
pub mod mission;
#[allow(clippy::duplicate_mod)]
#[path = "../common/unit_file.rs"]
pub mod unit_file;
pub mod work;

use mshgltf::msh::{AnimKey24, Batch20, Model, Node38, Nodes, Slot68, StreamEntry, NONE16};
use mshgltf::{msh, nres};

/// Which binary a case runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// `msh2gltf`.
    Msh2gltf,
    /// `gltf2msh`.
    Gltf2msh,
}

impl Tool {
    /// The binary name.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Msh2gltf => "msh2gltf",
            Tool::Gltf2msh => "gltf2msh",
        }
    }

    /// The path of this build's binary.
    pub fn exe(self) -> &'static str {
        match self {
            Tool::Msh2gltf => env!("CARGO_BIN_EXE_msh2gltf"),
            Tool::Gltf2msh => env!("CARGO_BIN_EXE_gltf2msh"),
        }
    }
}

/// One hostile case.
pub struct Case {
    /// Folder name.
    pub name: &'static str,
    /// Files to create in the folder (relative path, bytes).
    pub files: Vec<(String, Vec<u8>)>,
    /// The tool.
    pub tool: Tool,
    /// Arguments (paths relative to the folder).
    pub args: Vec<String>,
    /// Expected exit code.
    pub exit: i32,
    /// A rule id the tool must print on stderr (empty: none required).
    pub rule: &'static str,
}

impl Case {
    /// Writes the case's files under `dir/<name>`, returning the folder.
    pub fn materialize(&self, dir: &Path) -> std::path::PathBuf {
        let d = dir.join(self.name);
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        for (p, b) in &self.files {
            let f = d.join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            match sparse_len(b) {
                // A sparse file of that many zero bytes (no disk used).
                Some(len) => std::fs::File::create(f).unwrap().set_len(len).unwrap(),
                None => std::fs::write(f, b).unwrap(),
            }
        }
        d
    }

    /// Writes the case's files under `dir/<name>` and runs its command
    /// there; returns the folder and the run's output.
    pub fn run(&self, dir: &Path) -> (std::path::PathBuf, std::process::Output) {
        let d = self.materialize(dir);
        let mut cmd = std::process::Command::new(self.tool.exe());
        cmd.args(&self.args).current_dir(&d);
        (d, output_of(&mut cmd))
    }
}

/// Runs `cmd` to its end. Under Wine, starting a process now and then fails
/// under load (CreateProcess returns an error before the tool runs; seen
/// once in about a dozen runs of this suite on 2 busy cores): that start is
/// tried again, at most 5 times, each failure printed. A tool that started
/// is never run twice, so its exit code and output are the first run's.
pub fn output_of(cmd: &mut std::process::Command) -> std::process::Output {
    let mut tries = 0;
    loop {
        match cmd.output() {
            Ok(o) => return o,
            Err(e) if tries < 4 => {
                tries += 1;
                eprintln!("starting {cmd:?} failed ({e}); trying again ({tries} of 4)");
                std::thread::sleep(std::time::Duration::from_millis(250 * tries));
            }
            Err(e) => panic!("cannot start {cmd:?}: {e}"),
        }
    }
}

/// File content that [`Case::materialize`] turns into a sparse file of
/// `len` zero bytes.
pub fn sparse(len: u64) -> Vec<u8> {
    format!("\0SPARSE {len}").into_bytes()
}

fn sparse_len(b: &[u8]) -> Option<u64> {
    std::str::from_utf8(b.strip_prefix(b"\0SPARSE ")?)
        .ok()?
        .parse()
        .ok()
}

/// A valid `w` x `h` RGBA PNG of one colour (a few KB for 1024²).
pub fn flat_png(w: u32, h: u32, rgba: [u8; 4]) -> Vec<u8> {
    let img = image::RgbaImage::from_pixel(w, h, image::Rgba(rgba));
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

/// The new memory and time cases of issue 15 (budgets cover everything a
/// model costs).
fn budget_cases(v: &mut Vec<Case>) {
    v.push(buffer_refs_case());
    v.push(images_case());
    bake_cases(v);
    // A game folder holding a 3 GiB file of another kind: the batch reads
    // its first 16 bytes, skips it, and converts the rest.
    v.push(Case {
        name: "msh_batch_3gib_file",
        files: vec![
            ("game/huge.dat".into(), sparse(3 << 30)),
            ("game/m.msh".into(), shared_map(1, 4, [0.0, 2.0])),
        ],
        tool: Tool::Msh2gltf,
        args: args(&["-q", "game", "out"]),
        exit: 0,
        rule: "",
    });
}

/// 300 buffers naming one 20 MB .bin: 6 GB of reads, refused from the
/// byteLengths before any is read.
fn buffer_refs_case() -> Case {
    let mut doc: serde_json::Value =
        serde_json::from_slice(&triangle_gltf("big.bin", 20 << 20, serde_json::json!({}))).unwrap();
    let b = doc["buffers"][0].clone();
    doc["buffers"] = serde_json::Value::Array(vec![b; 300]);
    let mut big = triangle_bin();
    big.resize(20 << 20, 0);
    Case {
        name: "gltf_buffer_refs_300x20mb",
        files: vec![
            ("in.gltf".into(), serde_json::to_vec(&doc).unwrap()),
            ("big.bin".into(), big),
        ],
        tool: Tool::Gltf2msh,
        args: args(&["in.gltf", "-o", "out.msh"]),
        exit: 1,
        rule: "limits.work",
    }
}

/// 256 materials with a 1024² image each, into a game folder: 268 million
/// pixels, refused from the headers before any is decoded.
fn images_case() -> Case {
    let mut doc = triangle_doc();
    doc["meshes"][0]["primitives"][0]["material"] = serde_json::json!(0);
    let n = 256;
    doc["materials"] = (0..n)
        .map(|i| serde_json::json!({"name": format!("M{i}"), "pbrMetallicRoughness": {"baseColorTexture": {"index": i}}}))
        .collect();
    doc["textures"] = (0..n).map(|i| serde_json::json!({"source": i})).collect();
    doc["images"] = (0..n)
        .map(|i| serde_json::json!({"uri": format!("img{i}.png")}))
        .collect();
    let png = flat_png(1024, 1024, [200, 100, 50, 255]);
    let mut files = vec![
        ("in.gltf".to_string(), serde_json::to_vec(&doc).unwrap()),
        ("game/README".into(), b"an empty game folder".to_vec()),
    ];
    files.extend((0..n).map(|i| (format!("img{i}.png"), png.clone())));
    Case {
        name: "gltf_images_256x1024",
        files,
        tool: Tool::Gltf2msh,
        args: args(&["in.gltf", "-o", "out.msh", "--game-dir", "game"]),
        exit: 1,
        rule: "limits.work",
    }
}

/// Animations too costly to bake: 100 nodes over 65 535 frames (work
/// budget), 3 nodes over 40 000 frames (frame map past hdr2's reach).
fn bake_cases(v: &mut Vec<Case>) {
    // 100 nodes turning over 65 535 frames: 6.5 million node-frames to
    // bake, refused before baking.
    let mut doc = triangle_doc();
    let mut bin = triangle_bin();
    let t_off = bin.len();
    for t in [0.0f32, 65_535.0 / 24.0] {
        bin.extend_from_slice(&t.to_le_bytes());
    }
    let q_off = bin.len();
    for q in [
        [0.0f32, 0.0, 0.0, 1.0],
        [
            0.0,
            std::f32::consts::FRAC_1_SQRT_2,
            0.0,
            std::f32::consts::FRAC_1_SQRT_2,
        ],
    ] {
        for x in q {
            bin.extend_from_slice(&x.to_le_bytes());
        }
    }
    doc["buffers"][0] = serde_json::json!({
        "uri": format!("data:application/octet-stream;base64,{}", b64(&bin)),
        "byteLength": bin.len()
    });
    doc["bufferViews"].as_array_mut().unwrap().extend([
        serde_json::json!({"buffer": 0, "byteOffset": t_off, "byteLength": 8}),
        serde_json::json!({"buffer": 0, "byteOffset": q_off, "byteLength": 32}),
    ]);
    doc["accessors"].as_array_mut().unwrap().extend([
        serde_json::json!({"bufferView": 2, "componentType": 5126, "count": 2, "type": "SCALAR",
            "min": [0.0], "max": [65_535.0 / 24.0]}),
        serde_json::json!({"bufferView": 3, "componentType": 5126, "count": 2, "type": "VEC4"}),
    ]);
    let nodes = 100;
    doc["nodes"] = (0..nodes)
        .map(|i| serde_json::json!({"name": format!("n{i}"), "mesh": 0}))
        .collect();
    doc["scenes"][0]["nodes"] = serde_json::json!((0..nodes).collect::<Vec<u32>>());
    doc["animations"] = serde_json::json!([{
        "samplers": [{"input": 2, "output": 3}],
        "channels": (0..nodes)
            .map(|i| serde_json::json!({"sampler": 0, "target": {"node": i, "path": "rotation"}}))
            .collect::<Vec<_>>()
    }]);
    v.push(doc_case(
        "gltf_bake_100_nodes_65535_frames",
        &doc,
        "limits.work",
    ));
    // The same with 3 nodes and 40 000 frames: within the work budget, but
    // its frame map (3 blocks of 40 001 words, the last starting at word
    // 80 002) cannot be addressed by hdr2: refused before baking.
    let mut d2 = doc.clone();
    d2["nodes"] = (0..3)
        .map(|i| serde_json::json!({"name": format!("n{i}"), "mesh": 0}))
        .collect();
    d2["scenes"][0]["nodes"] = serde_json::json!([0, 1, 2]);
    d2["animations"][0]["channels"] = (0..3)
        .map(|i| serde_json::json!({"sampler": 0, "target": {"node": i, "path": "rotation"}}))
        .collect();
    d2["accessors"][2]["max"] = serde_json::json!([40_000.0 / 24.0]);
    let mut bin2 = bin.clone();
    bin2[t_off + 4..t_off + 8].copy_from_slice(&(40_000.0f32 / 24.0).to_le_bytes());
    d2["buffers"][0]["uri"] = serde_json::json!(format!(
        "data:application/octet-stream;base64,{}",
        b64(&bin2)
    ));
    v.push(doc_case("gltf_bake_frame_map_over_u16", &d2, "gltf.limits"));
}

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

/// A key at `time` with identity rotation.
fn key(time: f32) -> AnimKey24 {
    AnimKey24 {
        pos: [0.0, 0.0, 0.0],
        time,
        q: [0, 0, 0, 32767],
    }
}

/// One triangle, one batch, one slot shown by node 0; `n` nodes.
fn base_model(n: usize) -> Model {
    let mut nodes = vec![
        Node38 {
            flags: 0,
            parent: NONE16,
            map_start: NONE16,
            fallback_key: 0,
            slots: [NONE16; 15],
        };
        n
    ];
    nodes[0].slots[0] = 0;
    for (i, nd) in nodes.iter_mut().enumerate() {
        nd.fallback_key = i as u16;
    }
    Model {
        nodes: Nodes::Node38(nodes),
        slots: vec![Slot68 {
            batch_start: 0,
            batch_count: 1,
            tri_start: 0,
            tri_count: 0,
            ..Default::default()
        }],
        positions: vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
        indices: vec![0, 1, 2],
        batches: vec![Batch20 {
            material_index: 0,
            index_count: 3,
            index_start: 0,
            base_vertex: 0,
            ..Default::default()
        }],
        keys: Some((0..n).map(|_| key(0.0)).collect()),
        frame_map: Some(vec![0]),
        frame_count: 1,
        ..Default::default()
    }
}

/// Encodes a model built here: the stream directory from its typed
/// fields, bounds recomputed.
fn encode(m: Model) -> Vec<u8> {
    encode_with(m, true)
}

/// [`encode`], optionally keeping the (zero) bounds.
fn encode_with(mut m: Model, bounds: bool) -> Vec<u8> {
    let mut types = vec![1u32, 2, 3, 6, 13];
    if m.keys.is_some() {
        types.push(8);
    }
    if m.frame_map.is_some() {
        types.push(19);
    }
    m.entries = types
        .iter()
        .map(|&t| StreamEntry {
            type_id: t,
            name: format!("Res{t}").into_bytes(),
            attr1: 0,
            attr2: 0,
            attr3: 0,
            raw: None,
        })
        .collect();
    if bounds {
        mshgltf::msh::build::recompute_bounds(&mut m, true);
    }
    msh::encode(&m).unwrap()
}

/// A parent chain `depth` nodes deep (node i's parent is i - 1).
pub fn deep_chain(depth: usize) -> Vec<u8> {
    let mut m = base_model(depth);
    if let Nodes::Node38(nodes) = &mut m.nodes {
        for (i, nd) in nodes.iter_mut().enumerate().skip(1) {
            nd.parent = (i - 1) as u16;
        }
    }
    encode(m)
}

/// `n` nodes sharing one Res19 map of `frames` frames whose keys (those of
/// the first track) have non-integer times (`key_times`): every node is
/// baked at every frame.
pub fn shared_map(n: usize, frames: u32, key_times: [f32; 2]) -> Vec<u8> {
    let mut m = base_model(n);
    // Node i owns keys 2i, 2i+1 (fallback 2i+1); every map word is 0, so
    // every node plays keys 0 and 1 (node 0's pair).
    let mut keys = Vec::with_capacity(2 * n);
    for _ in 0..n {
        let mut a = key(key_times[0]);
        let mut b = key(key_times[1]);
        a.pos = [0.5, 0.0, 0.0];
        b.q = [0, 23170, 0, 23170];
        b.pos = [1.0, 2.0, 3.0];
        keys.push(a);
        keys.push(b);
    }
    m.keys = Some(keys);
    if let Nodes::Node38(nodes) = &mut m.nodes {
        for (i, nd) in nodes.iter_mut().enumerate() {
            nd.map_start = 0;
            nd.fallback_key = (2 * i + 1) as u16;
        }
    }
    m.frame_map = Some(vec![0; frames as usize]);
    m.frame_count = frames;
    encode(m)
}

/// Node 1's map points at key 1 (node 0's fallback, time 1) so that the
/// engine interpolates from it to key 2 (node 1's first key, also time 1):
/// two keys with equal times through the map.
pub fn equal_key_times() -> Vec<u8> {
    let mut m = base_model(2);
    let t = [0.0, 1.0, 1.0, 2.0];
    let mut keys: Vec<AnimKey24> = t.iter().map(|&x| key(x)).collect();
    keys[2].pos = [1.0, 0.0, 0.0];
    m.keys = Some(keys);
    if let Nodes::Node38(nodes) = &mut m.nodes {
        nodes[0].map_start = NONE16;
        nodes[0].fallback_key = 1;
        nodes[1].map_start = 0;
        nodes[1].fallback_key = 3;
    }
    m.frame_map = Some(vec![1; 4]);
    m.frame_count = 4;
    encode_with(m, false)
}

/// `nodes` nodes each showing its own slot, every slot spanning all
/// `batches` batches: `nodes x batches` glTF primitives.
pub fn many_primitives(nodes: usize, batches: usize) -> Vec<u8> {
    let mut m = base_model(nodes);
    m.batches = vec![m.batches[0]; batches];
    m.slots = (0..nodes)
        .map(|_| Slot68 {
            batch_start: 0,
            batch_count: batches as u16,
            tri_start: 0,
            tri_count: 0,
            ..Default::default()
        })
        .collect();
    if let Nodes::Node38(ns) = &mut m.nodes {
        for (i, nd) in ns.iter_mut().enumerate() {
            nd.slots[0] = i as u16;
        }
    }
    encode(m)
}

/// A model whose vertex positions are `±3.4e38`.
pub fn huge_positions() -> Vec<u8> {
    let mut m = base_model(1);
    m.positions = vec![
        [3.4e38, -3.4e38, 0.0],
        [-3.4e38, 3.4e38, 0.0],
        [0.0, 0.0, 3.4e38],
    ];
    encode_with(m, false)
}

/// An archive of `models` entries `Mi.msh` (each a non-NRes payload, so
/// each fails fast) and as many `Mi.wea` WEAR tables.
pub fn wide_archive(models: usize) -> Vec<u8> {
    let names: Vec<(Vec<u8>, Vec<u8>)> = (0..models)
        .map(|i| {
            (
                format!("M{i}.msh").into_bytes(),
                format!("M{i}.wea").into_bytes(),
            )
        })
        .collect();
    let mut entries = Vec::with_capacity(models * 2);
    for (m, w) in &names {
        entries.push(nres::Entry {
            type_id: 0,
            attr1: 0,
            attr2: 0,
            attr3: 0,
            name: m,
            data: b"not a model",
        });
        entries.push(nres::Entry {
            type_id: mshgltf::source::WEAR_TYPE,
            attr1: 0,
            attr2: 0,
            attr3: 1,
            name: w,
            data: b"1\r\n0 A\r\n",
        });
    }
    nres::write(&entries).unwrap()
}

/// Standard base64 (for `data:` URIs).
pub fn b64(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for c in bytes.chunks(3) {
        let v = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for k in 0..4 {
            if k <= c.len() {
                s.push(T[(v >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

/// Positions of one triangle (36 bytes) then its u16 indices (6 bytes + 2 pad).
pub fn triangle_bin() -> Vec<u8> {
    let mut b = Vec::new();
    for v in [[0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]] {
        for x in v {
            b.extend_from_slice(&x.to_le_bytes());
        }
    }
    for i in [0u16, 1, 2, 0] {
        b.extend_from_slice(&i.to_le_bytes());
    }
    b
}

/// A one-triangle glTF whose buffer has `uri` and `byte_length`; the
/// position accessor is `pos_accessor` (merged over the default).
pub fn triangle_gltf(uri: &str, byte_length: u64, pos_accessor: serde_json::Value) -> Vec<u8> {
    let mut pos =
        serde_json::json!({"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3"});
    if let (Some(p), Some(o)) = (pos.as_object_mut(), pos_accessor.as_object()) {
        for (k, v) in o {
            if v.is_null() {
                p.remove(k);
            } else {
                p.insert(k.clone(), v.clone());
            }
        }
    }
    let doc = serde_json::json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"name": "tri", "mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 1}]}],
        "accessors": [
            pos,
            {"bufferView": 1, "componentType": 5123, "count": 3, "type": "SCALAR"}
        ],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 36},
            {"buffer": 0, "byteOffset": 36, "byteLength": 6}
        ],
        "buffers": [{"uri": uri, "byteLength": byte_length}]
    });
    serde_json::to_vec(&doc).unwrap()
}

fn data_uri() -> String {
    format!(
        "data:application/octet-stream;base64,{}",
        b64(&triangle_bin())
    )
}

fn gltf_case(name: &'static str, pos: serde_json::Value, rule: &'static str) -> Case {
    Case {
        name,
        files: vec![("in.gltf".into(), triangle_gltf(&data_uri(), 44, pos))],
        tool: Tool::Gltf2msh,
        args: args(&["in.gltf", "-o", "out.msh"]),
        exit: 1,
        rule,
    }
}

/// The one-triangle glTF (buffer in a `data:` URI) as JSON, for cases to
/// edit.
fn triangle_doc() -> serde_json::Value {
    serde_json::from_slice(&triangle_gltf(&data_uri(), 44, serde_json::json!({}))).unwrap()
}

/// [`triangle_doc`] with `n` nodes `n0`… sharing its mesh, all in the scene.
fn nodes_doc(n: u32) -> serde_json::Value {
    let mut doc = triangle_doc();
    doc["nodes"] = serde_json::Value::Array(
        (0..n)
            .map(|i| serde_json::json!({"name": format!("n{i}"), "mesh": 0}))
            .collect(),
    );
    doc["scenes"][0]["nodes"] = serde_json::json!((0..n).collect::<Vec<u32>>());
    doc
}

/// `gltf2msh in.gltf -o out.msh` of `doc`, failing (exit 1) with `rule`.
fn doc_case(name: &'static str, doc: &serde_json::Value, rule: &'static str) -> Case {
    Case {
        name,
        files: vec![("in.gltf".into(), serde_json::to_vec(doc).unwrap())],
        tool: Tool::Gltf2msh,
        args: args(&["in.gltf", "-o", "out.msh"]),
        exit: 1,
        rule,
    }
}

/// CRC-32 (ISO-HDLC, as PNG chunks use).
fn crc32(bytes: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in bytes {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// A PNG of 100 bytes whose header claims `w` x `h` RGBA pixels (the
/// image data is a stub: decoding it would allocate `w * h * 4` bytes first).
pub fn png_bomb(w: u32, h: u32) -> Vec<u8> {
    let chunk = |t: &[u8], d: &[u8]| {
        let mut c = (d.len() as u32).to_be_bytes().to_vec();
        c.extend_from_slice(t);
        c.extend_from_slice(d);
        let mut td = t.to_vec();
        td.extend_from_slice(d);
        c.extend_from_slice(&crc32(&td).to_be_bytes());
        c
    };
    let mut ihdr = w.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(chunk(b"IHDR", &ihdr));
    png.extend(chunk(
        b"IDAT",
        &[0x78, 0x01, 0x01, 0x00, 0x00, 0xFF, 0xFF, 0, 0, 0, 1],
    ));
    png.extend(chunk(b"IEND", &[]));
    png
}

/// Every hostile case of the suite (the filesystem ones that need FIFOs,
/// devices or signals live in `hostile_files.rs`).
pub fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    model_cases(&mut v);
    work::cases(&mut v);
    uri_cases(&mut v);
    accessor_cases(&mut v);
    gltf_size_cases(&mut v);
    v.push(Case {
        name: "gltf_fps_nan",
        files: vec![(
            "in.gltf".into(),
            triangle_gltf(&data_uri(), 44, serde_json::json!({})),
        )],
        tool: Tool::Gltf2msh,
        args: args(&["in.gltf", "-o", "out.msh", "--fps", "NaN"]),
        exit: 2,
        rule: "--fps",
    });
    budget_cases(&mut v);
    image_uri_cases(&mut v);
    mission::cases(&mut v);
    v
}

/// Models that explode or take quadratic time (points 4/5) and models
/// that would convert to a wrong success (point 6), with option limits.
fn model_cases(v: &mut Vec<Case>) {
    // --- 4/5: models that explode or take quadratic time ---
    // The hierarchy check runs first (linear), then the node budget
    // refuses 65 000 nodes (2.08 million units).
    v.push(Case {
        name: "msh_deep_chain_65000",
        files: vec![("chain.msh".into(), deep_chain(65_000))],
        tool: Tool::Msh2gltf,
        args: args(&["-q", "chain.msh", "out.glb"]),
        exit: 1,
        rule: "limits.work",
    });
    v.push(Case {
        name: "msh_deep_chain_30000",
        files: vec![("chain.msh".into(), deep_chain(30_000))],
        tool: Tool::Msh2gltf,
        args: args(&["-q", "chain.msh", "out.glb"]),
        exit: 0,
        rule: "",
    });
    v.push(Case {
        name: "msh_shared_map_fractional",
        files: vec![("shared.msh".into(), shared_map(2000, 60_000, [0.0, 0.5]))],
        tool: Tool::Msh2gltf,
        args: args(&["-q", "shared.msh", "out.glb"]),
        exit: 1,
        rule: "limits.work",
    });
    v.push(Case {
        name: "msh_many_primitives",
        files: vec![("prims.msh".into(), many_primitives(10_000, 431))],
        tool: Tool::Msh2gltf,
        args: args(&["-q", "prims.msh", "out.glb"]),
        exit: 1,
        rule: "limits.work",
    });
    // 15 000 directory entries (7500 models, each failing fast, and their
    // WEAR tables): 960 000 units, within the default budget.
    v.push(Case {
        name: "msh_wide_archive_15000",
        files: vec![("wide.rlb".into(), wide_archive(7500))],
        tool: Tool::Msh2gltf,
        args: args(&["-q", "wide.rlb", "out", "--report", "report.json"]),
        exit: 1,
        rule: "msh.nested_container",
    });
    // 40 000 entries cost 2 560 000 units to list: refused from the header
    // at the default budget, before the directory is listed.
    v.push(Case {
        name: "msh_wide_archive_40000",
        files: vec![("wide.rlb".into(), wide_archive(20_000))],
        tool: Tool::Msh2gltf,
        args: args(&["-q", "wide.rlb", "out", "--report", "report.json"]),
        exit: 1,
        rule: "limits.work",
    });
    // --- 6: wrong success ---
    v.push(Case {
        name: "msh_equal_key_times",
        files: vec![("eq.msh".into(), equal_key_times())],
        tool: Tool::Msh2gltf,
        args: args(&["-q", "eq.msh", "out.glb"]),
        exit: 1,
        rule: "gltf.non_finite",
    });
    v.push(Case {
        name: "msh_huge_positions",
        files: vec![("huge.msh".into(), huge_positions())],
        tool: Tool::Msh2gltf,
        // Finite everywhere (bounds are ±3.4e38): converted; any value
        // that overflowed would fail with gltf.non_finite instead.
        args: args(&["-q", "huge.msh", "out.glb"]),
        exit: 0,
        rule: "",
    });
    v.push(Case {
        name: "msh_fps_tiny",
        files: vec![("m.msh".into(), shared_map(1, 4, [0.0, 2.0]))],
        tool: Tool::Msh2gltf,
        args: args(&["m.msh", "out.glb", "--fps", "1e-40"]),
        exit: 2,
        rule: "--fps",
    });
    v.push(Case {
        name: "msh_jobs_huge",
        files: vec![("m.msh".into(), shared_map(1, 4, [0.0, 2.0]))],
        tool: Tool::Msh2gltf,
        args: args(&["m.msh", "out.glb", "--jobs", "100000"]),
        exit: 2,
        rule: "--jobs",
    });
}

/// Buffer URIs that leave the glTF's folder or name a device (point 2).
fn uri_cases(v: &mut Vec<Case>) {
    // --- 2: URIs ---
    for (name, uri) in [
        ("gltf_uri_absolute", "/etc/passwd"),
        ("gltf_uri_dotdot", "../secret.bin"),
        ("gltf_uri_percent_dotdot", "%2E%2E/secret.bin"),
        ("gltf_uri_dev_zero", "/dev/zero"),
        ("gltf_uri_file_scheme", "file:///etc/passwd"),
    ] {
        v.push(Case {
            name,
            files: vec![
                (
                    "g/in.gltf".into(),
                    triangle_gltf(uri, 44, serde_json::json!({})),
                ),
                ("secret.bin".into(), triangle_bin()),
            ],
            tool: Tool::Gltf2msh,
            args: args(&["g/in.gltf", "-o", "out.msh"]),
            exit: 1,
            rule: "gltf.uri",
        });
    }
}

/// Crafted accessors: overflowing offsets, strides and sparse counts,
/// non-finite values in the JSON and in the buffer (point 3).
fn accessor_cases(v: &mut Vec<Case>) {
    // --- 3: crafted accessors ---
    v.push(gltf_case(
        "gltf_stride_overflow",
        serde_json::json!({"count": u64::MAX / 2, "byteOffset": 8}),
        "gltf.accessor",
    ));
    v.push(gltf_case(
        "gltf_offset_overflow",
        serde_json::json!({"byteOffset": u64::MAX - 4}),
        "gltf.accessor",
    ));
    v.push(gltf_case(
        "gltf_zeros_gib",
        serde_json::json!({"bufferView": null, "count": 89_478_485}),
        "gltf.accessor",
    ));
    v.push(gltf_case(
        "gltf_sparse_overflow",
        serde_json::json!({"sparse": {"count": u64::MAX / 4,
            "indices": {"bufferView": 1, "componentType": 5123, "byteOffset": 2},
            "values": {"bufferView": 0, "byteOffset": 0}}}),
        "gltf.accessor",
    ));
    v.push(gltf_case(
        "gltf_sparse_index_past_count",
        serde_json::json!({"sparse": {"count": 1,
            "indices": {"bufferView": 1, "componentType": 5123, "byteOffset": 4},
            "values": {"bufferView": 0}}, "count": 2}),
        "gltf.accessor",
    ));
    v.push(gltf_case(
        "gltf_json_overflow",
        serde_json::json!({"max": [1e39, 0.0, 0.0]}),
        "gltf.non_finite",
    ));
    // A NaN position in the buffer.
    let mut bin = triangle_bin();
    bin[0..4].copy_from_slice(&f32::NAN.to_le_bytes());
    v.push(Case {
        name: "gltf_nan_position",
        files: vec![(
            "in.gltf".into(),
            triangle_gltf(
                &format!("data:application/octet-stream;base64,{}", b64(&bin)),
                44,
                serde_json::json!({}),
            ),
        )],
        tool: Tool::Gltf2msh,
        args: args(&["in.gltf", "-o", "out.msh"]),
        exit: 1,
        rule: "gltf.non_finite",
    });
}

/// glTF files too large in primitives, triangles, nodes, JSON or image
/// pixels, refused before the work; 10 000 nodes still convert.
fn gltf_size_cases(v: &mut Vec<Case>) {
    // One triangle referenced by 40 000 primitives: over the primitive
    // budget (2.6 million units) before any of them is read.
    let mut doc = triangle_doc();
    let prim = doc["meshes"][0]["primitives"][0].clone();
    doc["meshes"][0]["primitives"] = serde_json::Value::Array(vec![prim; 40_000]);
    v.push(doc_case("gltf_many_primitives", &doc, "limits.work"));
    // Indices that claim 100 000 triangles: refused by the triangle limit
    // before they are read.
    v.push(gltf_case(
        "gltf_claimed_triangles",
        serde_json::json!({}),
        "gltf.limits",
    ));
    if let Some(c) = v.last_mut() {
        let mut d: serde_json::Value = serde_json::from_slice(&c.files[0].1).unwrap();
        d["accessors"][1]["count"] = serde_json::json!(300_000);
        c.files[0].1 = serde_json::to_vec(&d).unwrap();
    }
    // 60 000 nodes sharing one mesh: over the node budget (1.9 million
    // units); 10 000 are converted.
    v.push(doc_case(
        "gltf_many_nodes",
        &nodes_doc(60_000),
        "limits.work",
    ));
    v.push(Case {
        name: "gltf_nodes_10000",
        files: vec![(
            "in.gltf".into(),
            serde_json::to_vec(&nodes_doc(10_000)).unwrap(),
        )],
        tool: Tool::Gltf2msh,
        args: args(&["-q", "in.gltf", "-o", "out.msh"]),
        exit: 0,
        rule: "",
    });
    // 5 MB of JSON: over the JSON budget before parsing.
    let mut doc = triangle_doc();
    doc["extras"] = serde_json::json!("x".repeat(5 << 20));
    v.push(doc_case("gltf_json_5mb", &doc, "limits.work"));
    // A 100-byte PNG claiming 100 000 x 100 000 pixels, authored into a
    // game folder: refused from its header, before any pixel is decoded.
    let mut doc = triangle_doc();
    doc["meshes"][0]["primitives"][0]["material"] = serde_json::json!(0);
    doc["materials"] = serde_json::json!([
        {"name": "bomb", "pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}
    ]);
    doc["textures"] = serde_json::json!([{"source": 0}]);
    doc["images"] = serde_json::json!([{"uri": "bomb.png"}]);
    v.push(Case {
        name: "gltf_png_bomb",
        files: vec![
            ("in.gltf".into(), serde_json::to_vec(&doc).unwrap()),
            ("bomb.png".into(), png_bomb(100_000, 100_000)),
            ("game/README".into(), b"an empty game folder".to_vec()),
        ],
        tool: Tool::Gltf2msh,
        args: args(&["in.gltf", "-o", "out.msh", "--game-dir", "game"]),
        exit: 1,
        rule: "limits.work",
    });
}

/// Issue 15: image URIs are confined like buffer URIs; /dev/zero is
/// refused before it is opened, even with --allow-outside.
fn image_uri_cases(v: &mut Vec<Case>) {
    for (name, allow) in [
        ("gltf_image_dev_zero", false),
        ("gltf_image_dev_zero_allowed", true),
    ] {
        let mut doc = triangle_doc();
        doc["materials"] =
            serde_json::json!([{"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}]);
        doc["meshes"][0]["primitives"][0]["material"] = serde_json::json!(0);
        doc["textures"] = serde_json::json!([{"source": 0}]);
        doc["images"] = serde_json::json!([{"uri": "/dev/zero"}]);
        let mut a = args(&["in.gltf", "-o", "out.msh", "--game-dir", "game"]);
        if allow {
            a.push("--allow-outside".into());
        }
        v.push(Case {
            name,
            files: vec![
                ("in.gltf".into(), serde_json::to_vec(&doc).unwrap()),
                ("game/README".into(), b"an empty game folder".to_vec()),
            ],
            tool: Tool::Gltf2msh,
            args: a,
            exit: 1,
            rule: "gltf.uri",
        });
    }
}

/// Runs `cmd`, failing the test when it has not finished within 30 s (a
/// FIFO input would block forever).
pub fn run_bounded(cmd: &mut std::process::Command) -> std::process::Output {
    use std::process::Stdio;
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(30) {
            child.kill().unwrap();
            panic!("{cmd:?} hangs");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Replaces `path` by a FIFO (`mkfifo`) or a symlink to `/dev/zero`;
/// `false` where the platform has neither.
pub fn make_hostile(path: &Path, fifo: bool) -> bool {
    let _ = std::fs::remove_file(path);
    if fifo {
        std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .is_ok_and(|s| s.success())
    } else {
        #[cfg(unix)]
        return std::os::unix::fs::symlink("/dev/zero", path).is_ok();
        #[cfg(not(unix))]
        false
    }
}
