//! `cargo bench --bench author`: authoring throughput of `gltf2msh` without
//! a base (issue 9), single thread, best and median of several runs
//! (thread CPU time, `benches/common`):
//! - geometry: a 64 x 64-cell heightfield per node on 7 nodes (57 344
//!   triangles) under a scaled, animated hierarchy (rigid baking, 97
//!   frames), `author` + `msh::encode`: triangles/s;
//! - textures: 256 x 256 PNG decode, 565 / 8888 Texm encode with a full
//!   mip chain: textures/s;
//! - `--simplify`: a 200 978-triangle heightfield fitted under 65 535.

mod common;

use common::time;

use mshgltf::gltf_import::materials::{self, TextureOptions};
use mshgltf::gltf_import::{self, AuthorOptions, GltfFile};
use mshgltf::material::texm;
use mshgltf::msh;
use serde_json::{json, Value};

struct Doc {
    bin: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl Doc {
    fn view(&mut self, b: &[u8]) -> usize {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        self.views
            .push(json!({"buffer": 0, "byteOffset": self.bin.len(), "byteLength": b.len()}));
        self.bin.extend_from_slice(b);
        self.views.len() - 1
    }
    fn acc(&mut self, b: &[u8], comp: u32, count: usize, ty: &str) -> usize {
        let v = self.view(b);
        self.accessors
            .push(json!({"bufferView": v, "componentType": comp, "count": count, "type": ty}));
        self.accessors.len() - 1
    }
    /// An n x n heightfield primitive (2 n² triangles).
    fn grid(&mut self, n: usize) -> Value {
        let mut pos = Vec::new();
        let mut nrm = Vec::new();
        let mut uv = Vec::new();
        for y in 0..=n {
            for x in 0..=n {
                let (u, v) = (x as f32 / n as f32, y as f32 / n as f32);
                pos.extend([u * 4.0, 0.3 * (u * 9.0).sin() * (v * 7.0).cos(), v * 4.0]);
                nrm.extend([0.0f32, 1.0, 0.0]);
                uv.extend([u, v]);
            }
        }
        let w = n as u32 + 1;
        let mut idx = Vec::new();
        for y in 0..n as u32 {
            for x in 0..n as u32 {
                let a = y * w + x;
                idx.extend([a, a + w, a + 1, a + 1, a + w, a + w + 1]);
            }
        }
        let f = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let nv = (n + 1) * (n + 1);
        let p = self.acc(&f(&pos), 5126, nv, "VEC3");
        self.accessors[p]["min"] = json!([0.0, -0.3, 0.0]);
        self.accessors[p]["max"] = json!([4.0, 0.3, 4.0]);
        let nn = self.acc(&f(&nrm), 5126, nv, "VEC3");
        let t = self.acc(&f(&uv), 5126, nv, "VEC2");
        let ib: Vec<u8> = idx.iter().flat_map(|x| x.to_le_bytes()).collect();
        let i = self.acc(&ib, 5125, idx.len(), "SCALAR");
        json!({"attributes": {"POSITION": p, "NORMAL": nn, "TEXCOORD_0": t}, "indices": i})
    }
}

fn scene(n: usize, nodes: usize, animated: bool) -> GltfFile {
    let mut d = Doc {
        bin: Vec::new(),
        views: Vec::new(),
        accessors: Vec::new(),
    };
    let prim = d.grid(n);
    let mut nodes_j = Vec::new();
    for k in 0..nodes {
        let mut nd = json!({"name": format!("n{k}"), "mesh": 0,
            "translation": [1.0, 0.5, 0.0], "scale": [1.5, 1.0, 0.8]});
        if k + 1 < nodes {
            nd["children"] = json!([k + 1]);
        }
        nodes_j.push(nd);
    }
    let mut j = json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": nodes_j,
        "meshes": [{"primitives": [prim]}],
    });
    if animated {
        let times: Vec<f32> = (0..=4).map(|k| k as f32).collect();
        let rots: Vec<f32> = (0..=4)
            .flat_map(|k| {
                let a = k as f32 * 0.7;
                [0.0, (a / 2.0).sin(), 0.0, (a / 2.0).cos()]
            })
            .collect();
        let f = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let ti = d.acc(&f(&times), 5126, times.len(), "SCALAR");
        d.accessors[ti]["min"] = json!([0.0]);
        d.accessors[ti]["max"] = json!([4.0]);
        let ro = d.acc(&f(&rots), 5126, times.len(), "VEC4");
        let channels: Vec<Value> = (1..nodes)
            .map(|k| json!({"sampler": 0, "target": {"node": k, "path": "rotation"}}))
            .collect();
        j["animations"] = json!([{"channels": channels,
            "samplers": [{"input": ti, "output": ro}]}]);
    }
    j["accessors"] = json!(d.accessors);
    j["bufferViews"] = json!(d.views);
    j["buffers"] = json!([{"byteLength": d.bin.len()}]);
    GltfFile::new(j, vec![d.bin])
}

fn main() {
    // Geometry + rigid baking.
    let doc = scene(64, 7, true);
    let opts = AuthorOptions::default();
    let a = gltf_import::author(&doc, &opts).unwrap();
    let tris = a.report.triangles;
    let (best, med) = time(5, || {
        let a = gltf_import::author(&doc, &opts).unwrap();
        msh::encode(&a.model).unwrap()
    });
    println!(
        "author + encode: {tris} triangles, {} nodes, {} frames, {} sheared: best {:.1} ms, median {:.1} ms = {:.2} M triangles/s",
        a.report.nodes,
        a.report.frame_count,
        a.report.sheared_nodes.len(),
        best.as_secs_f64() * 1e3,
        med.as_secs_f64() * 1e3,
        tris as f64 / med.as_secs_f64() / 1e6
    );
    // Textures.
    for (alpha, what) in [(false, "565"), (true, "8888")] {
        let img = image::RgbaImage::from_fn(256, 256, |x, y| {
            image::Rgba([
                x as u8,
                y as u8,
                (x ^ y) as u8,
                if alpha { (x + y) as u8 } else { 255 },
            ])
        });
        let png = texm::encode_png(&img).unwrap();
        let mut j = json!({"asset": {"version": "2.0"},
            "images": [{"bufferView": 0, "mimeType": "image/png"}],
            "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": png.len()}],
            "buffers": [{"byteLength": png.len()}]});
        j["images"][0]["name"] = json!("bench");
        let tdoc = GltfFile::new(j, vec![png]);
        let n = 20;
        let (best, med) = time(5, || {
            for _ in 0..n {
                materials::texture_from_image(
                    &tdoc,
                    None,
                    0,
                    "BENCH.0".into(),
                    &TextureOptions::default(),
                )
                .unwrap();
            }
        });
        println!(
            "texture 256 x 256 PNG -> Texm {what} + 9 mips: best {:.2} ms, median {:.2} ms per texture = {:.0} textures/s",
            best.as_secs_f64() * 1e3 / n as f64,
            med.as_secs_f64() * 1e3 / n as f64,
            n as f64 / med.as_secs_f64()
        );
    }
    // --simplify.
    let big = scene(317, 1, false);
    let sopts = AuthorOptions {
        simplify: true,
        ..Default::default()
    };
    let a = gltf_import::author(&big, &sopts).unwrap();
    let s = a.report.simplified.clone().unwrap();
    let (best, med) = time(3, || gltf_import::author(&big, &sopts).unwrap());
    println!(
        "--simplify {} -> {} triangles (error {:.4}): best {:.0} ms, median {:.0} ms = {:.2} M input triangles/s",
        s.from,
        s.to,
        s.max_error,
        best.as_secs_f64() * 1e3,
        med.as_secs_f64() * 1e3,
        s.from as f64 / med.as_secs_f64() / 1e6
    );
}
