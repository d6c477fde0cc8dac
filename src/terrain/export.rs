//! Terrain → glTF 2.0 (terrain-notes §4; contract of issue 17).
//!
//! - One shared set of vertex accessors over all V vertices in file order:
//!   `POSITION` (axis change of [`crate::convention::axes`]), `NORMAL`
//!   (Res4 i8 ÷ 127, normalised; zero → up), `TEXCOORD_0` = Res5 ÷ 1024,
//!   `TEXCOORD_1` = Res18 ÷ 1024, `COLOR_0` = (1, 1, 1, Res14) FLOAT,
//!   `_VERTEX_ID` (FLOAT, the file's vertex index) and the same index as
//!   `TEXCOORD_2` = (id, Res14), which survives Blender (it drops `_`
//!   attributes and COLOR_0's alpha).
//! - One node and mesh per exported LOD (`Land.L0`, `Land.L1`), one primitive
//!   and material per face class `(tex1, tex2, flags, surface, word3)`,
//!   indices = the raw Res21 vertex indices in file order.
//! - Material `<first>` or `<first>+<second>` (Land1 row names; `#class`
//!   suffix only when two classes share the names), base texture = track 0
//!   of `Land1[tex1]` on TEXCOORD_0; microtexture = track 1 of
//!   `Land2[tex1]` on TEXCOORD_1, embedded and referenced from
//!   `extras.parkan_terrain`; water / bed / lava flags in extras.
//! - `--areals`: Land.map's polygons as a `LINES` mesh on node `Land.areals`.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::ir::*;
use super::source::{MaterialRow, TerrainSource};
use crate::convention::{axes, Up};
use crate::material::Libraries;

/// An f32 as a JSON number (its exact f64 widening; non-finite → null),
/// as the model exporter writes them.
fn json_f32(x: f32) -> Value {
    serde_json::Number::from_f64(f64::from(x)).map_or(Value::Null, Value::Number)
}

/// Options of a terrain export.
#[derive(Debug, Clone, PartialEq)]
pub struct TerrainExportOptions {
    /// Axis convention (as for models).
    pub up: Up,
    /// LOD exported (0 default, 1 with `--lod 1`).
    pub lod: u8,
    /// `--all-cells`: both LODs, one node each.
    pub all_lods: bool,
    /// `--areals`: Land.map outlines as a separate node.
    pub areals: bool,
    /// Embed textures.
    pub textures: bool,
    /// The work budget (`--max-work`, units of [`crate::limits`]): a map
    /// over it is refused before it is exported
    /// ([`super::convert::check_work`]).
    pub max_work: u64,
}

impl Default for TerrainExportOptions {
    fn default() -> Self {
        TerrainExportOptions {
            up: Up::Y,
            lod: 0,
            all_lods: false,
            areals: false,
            textures: true,
            max_work: crate::limits::DEFAULT_MAX_WORK,
        }
    }
}

/// An exported terrain: glTF JSON, its binary buffer and warnings.
#[derive(Debug, Clone)]
pub struct TerrainGltf {
    /// The glTF document (buffer 0 has no URI yet).
    pub json: Value,
    /// Buffer 0 (length a multiple of 4).
    pub bin: Vec<u8>,
    /// Warnings (validation findings, skipped faces, missing textures).
    pub warnings: Vec<String>,
    /// Triangles exported.
    pub triangles: usize,
    /// Materials written.
    pub materials: usize,
    /// Images embedded.
    pub textures: usize,
}

struct Builder {
    bin: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
    images: Vec<Value>,
    textures: Vec<Value>,
    texture_of: BTreeMap<String, Option<usize>>,
    warnings: Vec<String>,
}

impl Builder {
    fn view(&mut self, bytes: &[u8], target: Option<u32>) -> usize {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        let mut v = json!({"buffer": 0, "byteOffset": self.bin.len(), "byteLength": bytes.len()});
        if let Some(t) = target {
            v["target"] = json!(t);
        }
        self.bin.extend_from_slice(bytes);
        self.views.push(v);
        self.views.len() - 1
    }

    fn floats(&mut self, data: &[f32], ty: &str, n: usize, minmax: bool) -> usize {
        let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
        let view = self.view(&bytes, Some(34962));
        let mut a =
            json!({"bufferView": view, "componentType": 5126, "count": data.len() / n, "type": ty});
        if minmax {
            let (mut lo, mut hi) = (vec![f32::MAX; n], vec![f32::MIN; n]);
            for c in data.chunks_exact(n) {
                for k in 0..n {
                    lo[k] = lo[k].min(c[k]);
                    hi[k] = hi[k].max(c[k]);
                }
            }
            a["min"] = lo.into_iter().map(json_f32).collect();
            a["max"] = hi.into_iter().map(json_f32).collect();
        }
        self.accessors.push(a);
        self.accessors.len() - 1
    }

    fn indices(&mut self, idx: &[u32], wide: bool) -> usize {
        let bytes: Vec<u8> = if wide {
            idx.iter().flat_map(|x| x.to_le_bytes()).collect()
        } else {
            idx.iter().flat_map(|&x| (x as u16).to_le_bytes()).collect()
        };
        let view = self.view(&bytes, Some(34963));
        let ct = if wide { 5125 } else { 5123 };
        self.accessors.push(
            json!({"bufferView": view, "componentType": ct, "count": idx.len(), "type": "SCALAR"}),
        );
        self.accessors.len() - 1
    }

    /// The glTF texture of Textures.lib entry `name` (embedded once).
    fn texture(&mut self, libs: Option<&Libraries>, name: Option<&str>) -> Option<usize> {
        let (libs, name) = (libs?, name?);
        if let Some(t) = self.texture_of.get(name) {
            return *t;
        }
        let t = match libs.texture_png(name) {
            Ok(png) => {
                let view = self.view(&png.png, None);
                self.images
                    .push(json!({"name": name, "mimeType": "image/png", "bufferView": view}));
                self.textures
                    .push(json!({"name": name, "source": self.images.len() - 1, "sampler": 0}));
                Some(self.textures.len() - 1)
            }
            Err(e) => {
                self.warnings.push(format!("texture {name}: {e}"));
                None
            }
        };
        self.texture_of.insert(name.to_owned(), t);
        t
    }
}

/// Vertex attribute accessors (shared by every terrain primitive).
fn vertex_attributes(b: &mut Builder, land: &Land, up: Up) -> Value {
    let n = land.positions.len();
    let mut pos = Vec::with_capacity(3 * n);
    let mut nrm = Vec::with_capacity(3 * n);
    for v in 0..n {
        let p = land.positions[v];
        let p = if p.iter().all(|c| c.is_finite()) {
            p
        } else {
            [0.0; 3]
        };
        pos.extend(axes::vec3(up, p));
        nrm.extend(axes::vec3(up, unit_normal(land.normal_of(v))));
    }
    let uv = |s: &[[u16; 2]]| -> Vec<f32> {
        s.iter()
            .flat_map(|q| q.map(|c| f32::from(c) / 1024.0))
            .collect()
    };
    let colour: Vec<f32> = (0..n)
        .flat_map(|v| {
            let a = land.alpha_of(v);
            [
                1.0,
                1.0,
                1.0,
                if a.is_finite() {
                    a.clamp(0.0, 1.0)
                } else {
                    1.0
                },
            ]
        })
        .collect();
    let ids: Vec<f32> = (0..n).map(|v| v as f32).collect();
    // The id and Res14 as a UV map (u = id, v = Res14): Blender 3.x drops
    // custom attributes and COLOR_0's alpha on import but keeps UV maps, so
    // both survive a Blender round trip (ids exact in f32 below 2^24).
    let id_uv: Vec<f32> = (0..n).flat_map(|v| [v as f32, colour[4 * v + 3]]).collect();
    json!({
        "POSITION": b.floats(&pos, "VEC3", 3, true),
        "NORMAL": b.floats(&nrm, "VEC3", 3, false),
        "TEXCOORD_0": b.floats(&uv(&land.uv0), "VEC2", 2, false),
        "TEXCOORD_1": b.floats(&uv(&land.uv1), "VEC2", 2, false),
        "COLOR_0": b.floats(&colour, "VEC4", 4, false),
        "_VERTEX_ID": b.floats(&ids, "SCALAR", 1, false),
        "TEXCOORD_2": b.floats(&id_uv, "VEC2", 2, false),
    })
}

/// A normal of unit length: `n` normalised, or +Z when it is zero.
pub fn unit_normal(n: [f32; 3]) -> [f32; 3] {
    let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    if len > 1e-6 && len.is_finite() {
        n.map(|c| c / len)
    } else {
        [0.0, 0.0, 1.0]
    }
}

/// The glTF material of one face class.
fn material(
    b: &mut Builder,
    src: &TerrainSource,
    libs: Option<&Libraries>,
    c: FaceClass,
    name: String,
) -> Value {
    let row = |i: u8| src.material_row(usize::from(i));
    let first = row(c.tex1);
    let base_tex = b.texture(libs, first.texture.as_deref());
    let micro_tex = b.texture(libs, first.micro.as_deref());
    let layer = |b: &mut Builder, r: &MaterialRow, t: Option<usize>| {
        let mt = b.texture(libs, r.micro.as_deref());
        json!({"material": r.resolved, "texture": t, "track": 0, "texcoord": 0,
               "micro": {"material": r.micro_material, "texture": mt, "track": 1, "texcoord": 1, "op": "modulate2x"}})
    };
    let overlay = (c.tex2 != NO_TEX2).then(|| {
        let second = row(c.tex2);
        let t = b.texture(libs, second.texture.as_deref());
        let mut o = layer(b, &second, t);
        o["alpha"] = json!("COLOR_0.a");
        o["blend"] = json!("src_alpha");
        o["land1"] = json!(second.name);
        o
    });
    let water = c.flags & FLAG_WATER != 0;
    let bed = c.flags & FLAG_BED != 0;
    let lava = (water || bed) && c.surface & SURFACE_NOT_LAVA == 0;
    let mut pbr = json!({"baseColorFactor": first.base_color.map(json_f32), "metallicFactor": 0.0, "roughnessFactor": 1.0});
    if let Some(t) = base_tex {
        pbr["baseColorTexture"] = json!({"index": t, "texCoord": 0});
    }
    // What was exported, as for a model's material (gltf-mapping.md
    // "Extras"): gltf2msh --base compares it and warns that a recolour or a
    // retexture of a map material is not written (Land1.wea rows name
    // library entries; a map edit writes Land.msh only).
    let exported = json!({
        "color": first.base_color.map(json_f32),
        "texture": base_tex.and(first.texture.as_deref()),
        "alpha_mode": "OPAQUE",
    });
    json!({
        "name": name,
        "pbrMetallicRoughness": pbr,
        "doubleSided": true,
        "extras": {"msh": {"exported": exported}, "parkan_terrain": {
            "tex1": c.tex1, "tex2": c.tex2, "flags": c.flags, "surface": c.surface, "word3": c.word3,
            "land1": first.name, "land2_micro": first.micro_material,
            "base": {"material": first.resolved, "texture": base_tex, "track": 0, "texcoord": 0},
            "micro": {"material": first.micro_material, "texture": micro_tex, "track": 1, "texcoord": 1, "op": "modulate2x"},
            "overlay": overlay,
            "water": water, "bed": bed, "lava": lava,
        }},
    })
}

/// Material names and classes of the exported faces, in class order.
fn class_names(src: &TerrainSource, classes: &[FaceClass]) -> Vec<String> {
    let mut used = std::collections::BTreeSet::new();
    classes
        .iter()
        .map(|c| {
            let first = src.material_row(usize::from(c.tex1)).name;
            let mut name = match c.tex2 {
                NO_TEX2 => first,
                t => format!("{first}+{}", src.material_row(usize::from(t)).name),
            };
            if !used.insert(name.clone()) {
                name = format!(
                    "{name}#f{:04x}.s{:04x}.w{:04x}",
                    c.flags, c.surface, c.word3
                );
                used.insert(name.clone());
            }
            name
        })
        .collect()
}

/// The mesh of one LOD: one primitive per face class (skipped faces left out).
fn lod_mesh(
    b: &mut Builder,
    src: &TerrainSource,
    lod: usize,
    attrs: &Value,
    mats: &mut BTreeMap<FaceClass, usize>,
) -> (Value, usize) {
    let land = &src.land;
    let mut by_class: BTreeMap<FaceClass, Vec<u32>> = BTreeMap::new();
    let range = land.lod_range(lod);
    let mut faces = 0;
    for i in range.filter(|i| !src.skip_faces.contains(i)) {
        let f = &land.faces[i];
        by_class
            .entry(f.class())
            .or_default()
            .extend(f.v.map(u32::from));
        faces += 1;
    }
    let wide = land.positions.len() > 65_535;
    let prims: Vec<Value> = by_class
        .iter()
        .map(|(c, idx)| {
            let next = mats.len();
            let m = *mats.entry(*c).or_insert(next);
            json!({"attributes": attrs, "indices": b.indices(idx, wide), "material": m, "mode": 4})
        })
        .collect();
    let mesh = json!({"name": format!("Land.L{lod}"), "primitives": prims, "extras": {"lod": lod, "faces": faces}});
    (mesh, faces)
}

/// Land.map's polygons as one `LINES` primitive (edge k: vertex k → k+1).
fn areal_mesh(b: &mut Builder, m: &super::map::ArealMap, up: Up) -> Value {
    let mut pos = Vec::new();
    let mut idx = Vec::new();
    for a in &m.areals {
        let base = (pos.len() / 3) as u32;
        let n = a.vertices.len() as u32;
        for v in &a.vertices {
            let v = if v.iter().all(|c| c.is_finite()) {
                *v
            } else {
                [0.0; 3]
            };
            pos.extend(axes::vec3(up, v));
        }
        for k in 0..n {
            idx.extend([base + k, base + (k + 1) % n]);
        }
    }
    let p = b.floats(&pos, "VEC3", 3, true);
    let i = b.indices(&idx, true);
    json!({"name": "Land.areals", "primitives": [{"attributes": {"POSITION": p}, "indices": i, "mode": 1}],
           "extras": {"areals": m.areals.len()}})
}

/// Scene extras of terrain-notes §4.5 (the reverse path's contract).
fn scene_extras(src: &TerrainSource, opts: &TerrainExportOptions, lods: &[usize]) -> Value {
    let land = &src.land;
    let (across, down) = src.findings.grid.unwrap_or((0, 0));
    let s0 = land.slots.first();
    let cell = s0.map_or([0.0, 0.0], |s| [s.max[0] - s.min[0], s.max[1] - s.min[1]]);
    let rows = |w: &Option<crate::material::Wear>| -> Value {
        w.as_ref().map_or(Value::Null, |w| {
            w.materials
                .iter()
                .enumerate()
                .map(|(i, r)| json!([i, r.name]))
                .collect()
        })
    };
    let file = |p: &std::path::Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    json!({"parkan_terrain": {
        "source": file(&src.path), "sha256": src.sha256[0], "map_sha256": src.sha256[1],
        "land1_sha256": src.sha256[2], "land2_sha256": src.sha256[3],
        "up": match opts.up { Up::Y => "y", Up::Z => "z" }, "uv_unit": 1024, "uv_sign": "u16",
        "grid": {"across": across, "down": down, "origin": [json_f32(land.corners[0][0]), json_f32(land.corners[0][1])],
                 "cell": cell.map(json_f32), "record_order": "x-major"},
        "lods": lods, "material_layout": "land1-both",
        "wear": {"land1": rows(&src.land1), "land2": rows(&src.land2)},
        "nres": {"order": land.entries.iter().map(|e| e.type_id).collect::<Vec<_>>(), "names": "Land"},
        "skipped_faces": src.skip_faces.iter().collect::<Vec<_>>(),
    }})
}

/// Exports a checked map as glTF.
///
/// `libs` resolves Land1/Land2 names (Material.lib → Textures.lib); `None`
/// exports untextured white materials. Never fails: what cannot be
/// embedded is reported in [`TerrainGltf::warnings`].
pub fn export(
    src: &TerrainSource,
    libs: Option<&Libraries>,
    opts: &TerrainExportOptions,
) -> TerrainGltf {
    let libs = libs.filter(|_| opts.textures);
    let mut b = Builder {
        bin: Vec::new(),
        views: Vec::new(),
        accessors: Vec::new(),
        images: Vec::new(),
        textures: Vec::new(),
        texture_of: BTreeMap::new(),
        warnings: src.warnings.clone(),
    };
    let attrs = vertex_attributes(&mut b, &src.land, opts.up);
    let lods: Vec<usize> = if opts.all_lods {
        vec![0, 1]
    } else {
        vec![usize::from(opts.lod.min(1))]
    };
    let mut class_index = BTreeMap::new();
    let (mut meshes, mut nodes, mut triangles) = (Vec::new(), Vec::new(), 0);
    for &lod in &lods {
        let (mesh, n) = lod_mesh(&mut b, src, lod, &attrs, &mut class_index);
        triangles += n;
        nodes.push(
            json!({"name": format!("Land.L{lod}"), "mesh": meshes.len(), "extras": {"lod": lod}}),
        );
        meshes.push(mesh);
    }
    let mut classes: Vec<(FaceClass, usize)> = class_index.into_iter().collect();
    classes.sort_by_key(|c| c.1);
    let keys: Vec<FaceClass> = classes.iter().map(|c| c.0).collect();
    let names = class_names(src, &keys);
    let materials: Vec<Value> = keys
        .iter()
        .zip(names)
        .map(|(c, n)| material(&mut b, src, libs, *c, n))
        .collect();
    if opts.areals {
        if let Some(m) = &src.map {
            nodes.push(
                json!({"name": "Land.areals", "mesh": meshes.len(), "extras": {"areals": true}}),
            );
            meshes.push(areal_mesh(&mut b, m, opts.up));
        } else {
            b.warnings.push("--areals: no readable Land.map".into());
        }
    }
    while !b.bin.len().is_multiple_of(4) {
        b.bin.push(0);
    }
    let children: Vec<usize> = (1..=nodes.len()).collect();
    let mut all_nodes = vec![json!({"name": "Land", "children": children})];
    all_nodes.extend(nodes);
    let mut root = json!({
        "asset": {"version": "2.0", "generator": concat!("mshgltf ", env!("CARGO_PKG_VERSION"), " (terrain)")},
        "scene": 0,
        "scenes": [{"name": "Land", "nodes": [0], "extras": scene_extras(src, opts, &lods)}],
        "nodes": all_nodes, "meshes": meshes, "materials": materials,
        "buffers": [{"byteLength": b.bin.len()}], "bufferViews": b.views, "accessors": b.accessors,
    });
    if !b.textures.is_empty() {
        root["samplers"] = json!([{"wrapS": 10497, "wrapT": 10497}]);
        root["images"] = json!(b.images);
        root["textures"] = json!(b.textures);
    }
    let (materials, textures) = (keys.len(), b.textures.len());
    TerrainGltf {
        json: root,
        bin: b.bin,
        warnings: b.warnings,
        triangles,
        materials,
        textures,
    }
}

/// GLB 2.0 bytes of an export ([`crate::gltf_export::glb::frame`], the
/// framing every content kind shares).
///
/// # Errors
/// `gltf.json` when serialisation fails; `gltf.size` over 4 GiB.
pub fn to_glb(g: &TerrainGltf) -> Result<Vec<u8>, super::TerrainError> {
    let json = serde_json::to_vec(&g.json)
        .map_err(|e| super::TerrainError::file("gltf.json", e.to_string()))?;
    crate::gltf_export::glb::frame(&json, &g.bin).map_err(|total| {
        super::TerrainError::file("gltf.size", format!("GLB of {total} bytes exceeds 4 GiB"))
    })
}

/// `.gltf` JSON (pretty) whose buffer points at `bin_uri`, and the buffer.
///
/// # Errors
/// `gltf.json` when serialisation fails.
pub fn to_gltf(g: &TerrainGltf, bin_uri: &str) -> Result<(Vec<u8>, Vec<u8>), serde_json::Error> {
    let mut j = g.json.clone();
    j["buffers"][0]["uri"] = json!(bin_uri);
    Ok((serde_json::to_vec_pretty(&j)?, g.bin.clone()))
}
