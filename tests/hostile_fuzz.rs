//! Property-based fuzzing of both directions (issue 11): random glTF JSON
//! (accessors, views, sparse data, offsets and counts up to `u64::MAX`,
//! animations, non-finite numbers) through the importer with and without a
//! base, and random edits of MSH bytes through decode and export. The
//! properties: no panic, every error carries a rule id. (Memory and time
//! per case are bounded by the limits; `scripts/bench_hostile.sh` measures
//! the hand-made worst cases.)

mod hostile;

use mshgltf::gltf_export::{self, ExportOptions};
use mshgltf::gltf_import::{self, AuthorOptions, ImportOptions};
use mshgltf::msh;
use proptest::prelude::*;
use serde_json::{json, Value};

/// Numbers that stress offset arithmetic.
fn number() -> impl Strategy<Value = u64> {
    prop_oneof![
        8 => 0u64..8,
        8 => 0u64..200,
        1 => Just(u32::MAX as u64),
        1 => Just(u64::MAX),
        1 => Just(u64::MAX / 2),
        1 => Just(1u64 << 30),
        1 => any::<u64>(),
    ]
}

fn small() -> impl Strategy<Value = u64> {
    prop_oneof![16 => 0u64..4, 1 => Just(u64::MAX), 1 => Just(1u64 << 31)]
}

fn accessor() -> impl Strategy<Value = Value> {
    (
        prop::option::of(small()),
        prop::sample::select(vec![5120u64, 5121, 5122, 5123, 5125, 5126, 1]),
        prop::sample::select(vec!["SCALAR", "VEC2", "VEC3", "VEC4", "MAT4", "X"]),
        number(),
        prop::option::of(number()),
        any::<bool>(),
        prop::option::of((number(), small(), small(), number(), number())),
    )
        .prop_map(|(view, ct, ty, count, off, norm, sparse)| {
            let mut a =
                json!({"componentType": ct, "type": ty, "count": count, "normalized": norm});
            if let Some(v) = view {
                a["bufferView"] = json!(v);
            }
            if let Some(o) = off {
                a["byteOffset"] = json!(o);
            }
            if let Some((n, iv, vv, io, vo)) = sparse {
                a["sparse"] = json!({"count": n,
                    "indices": {"bufferView": iv, "componentType": 5123, "byteOffset": io},
                    "values": {"bufferView": vv, "byteOffset": vo}});
            }
            a
        })
}

fn view() -> impl Strategy<Value = Value> {
    (number(), number(), prop::option::of(number())).prop_map(|(o, l, s)| {
        let mut v = json!({"buffer": 0, "byteOffset": o, "byteLength": l});
        if let Some(s) = s {
            v["byteStride"] = json!(s);
        }
        v
    })
}

fn float() -> impl Strategy<Value = Value> {
    prop_oneof![
        12 => (-10.0f64..10.0).prop_map(|x| json!(x)),
        1 => Just(json!(1e39)),
        2 => Just(json!(-3.4e38)),
        2 => Just(json!(0.0)),
    ]
}

fn document() -> impl Strategy<Value = Value> {
    (
        prop::collection::vec(accessor(), 1..6),
        prop::collection::vec(view(), 1..4),
        prop::collection::vec(any::<u8>(), 0..256),
        prop::collection::vec((small(), small(), small()), 1..4),
        prop::collection::vec(float(), 3),
        prop::option::of((small(), small(), prop::sample::select(vec!["translation", "rotation", "scale", "weights"]))),
        prop::option::of(float()),
    )
        .prop_map(|(accessors, views, bin, prims, t, anim, fps)| {
            let primitives: Vec<Value> = prims
                .iter()
                .map(|(p, i, uv)| json!({"attributes": {"POSITION": p, "TEXCOORD_0": uv}, "indices": i}))
                .collect();
            let mut d = json!({
                "asset": {"version": "2.0"},
                "scene": 0,
                "scenes": [{"nodes": [0], "extras": {"msh": {"fps": fps.unwrap_or(json!(24))}}}],
                "nodes": [{"name": "a", "mesh": 0, "children": [1]}, {"name": "b", "translation": t}],
                "meshes": [{"primitives": primitives}],
                "accessors": accessors,
                "bufferViews": views,
                "buffers": [{"uri": format!("data:application/octet-stream;base64,{}", hostile::b64(&bin)), "byteLength": bin.len()}]
            });
            if let Some((i, o, path)) = anim {
                d["animations"] = json!([{"samplers": [{"input": i, "output": o}],
                    "channels": [{"sampler": 0, "target": {"node": 1, "path": path}}]}]);
            }
            d
        })
}

fn rule_like(s: &str) -> bool {
    s.split(|c: char| c.is_whitespace() || c == ':').any(|w| {
        w.contains('.')
            && w.chars()
                .all(|c| c.is_ascii_lowercase() || c == '.' || c == '_' || c.is_ascii_digit())
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

    #[test]
    fn crafted_gltf_never_panics(doc in document()) {
        let bytes = serde_json::to_vec(&doc).unwrap();
        let base = msh::decode(&std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/samples/anim_rotor.msh")).unwrap(), msh::Mode::Strict).unwrap().model;
        match gltf_import::parse(&bytes, None) {
            Err(e) => prop_assert!(!e.rule.is_empty()),
            Ok(f) => {
                if let Err(e) = gltf_import::author(&f, &AuthorOptions::default()) {
                    prop_assert!(!e.rule.is_empty(), "{e}");
                }
                if let Err(e) = gltf_import::import_with_base(&f, &base, &ImportOptions::default()) {
                    prop_assert!(!e.rule.is_empty(), "{e}");
                }
            }
        }
    }

    #[test]
    fn mutated_msh_never_panics_on_export(
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        cut in prop::option::weighted(0.05, any::<prop::sample::Index>()),
        tolerant in any::<bool>(),
    ) {
        let mut bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/samples/anim_rotor.msh")).unwrap();
        for (i, b) in &edits {
            let k = i.index(bytes.len());
            bytes[k] = *b;
        }
        if let Some(c) = cut {
            bytes.truncate(c.index(bytes.len()));
        }
        let mode = if tolerant { msh::Mode::Tolerant } else { msh::Mode::Strict };
        match msh::decode(&bytes, mode) {
            Err(e) => prop_assert!(!e.rule.is_empty()),
            Ok(d) => match gltf_export::export(&d.model, &[], &ExportOptions::default()) {
                Err(e) => prop_assert!(rule_like(&e.to_string()) || !e.rule().is_empty(), "{e}"),
                // A NaN or infinity is refused when the GLB is written
                // (`gltf.non_finite`, budget::check_finite): a rule, not a
                // panic.
                Ok(x) => if let Err(e) = gltf_export::to_glb(&x) {
                    prop_assert!(!e.rule().is_empty(), "{e}");
                },
            },
        }
    }
}

/// The case CI's proptest run found (stop 32): an accessor of no elements
/// whose byteOffset lies past the end of an empty bufferView was read as
/// `view[4..4]` and panicked. It is now a `gltf.accessor` error.
#[test]
fn an_empty_accessor_past_its_view_is_an_error_not_a_panic() {
    let doc = json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"name": "a", "mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
        "accessors": [{"bufferView": 0, "byteOffset": 4, "componentType": 5126,
                       "type": "VEC3", "count": 0}],
        "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": 0}],
        "buffers": [{"uri": "data:application/octet-stream;base64,", "byteLength": 0}]
    });
    let bytes = serde_json::to_vec(&doc).unwrap();
    let err = match gltf_import::parse(&bytes, None) {
        Err(e) => e,
        Ok(f) => gltf_import::author(&f, &AuthorOptions::default())
            .expect_err("an accessor outside its bufferView is refused"),
    };
    assert_eq!(err.rule, "gltf.accessor", "{err}");
    assert!(err.to_string().contains("offset 4"), "{err}");
}
