//! Codec robustness without the shared corpus: a small valid model built in
//! code (3 nodes, one animated, 2 slots, 2 batches, Res7, Res10 names), its
//! exact round trip, and a proptest that corrupts the encoded bytes and
//! checks that decoding never panics and tolerant results are valid.

use mshgltf::msh::{self, *};
use mshgltf::nres;
use proptest::prelude::*;

fn entry(type_id: u32, name: &str, attr2: u32, raw: Option<Vec<u8>>) -> StreamEntry {
    StreamEntry {
        type_id,
        name: name.as_bytes().to_vec(),
        attr1: 0,
        attr2,
        attr3: 0,
        raw,
    }
}

fn key(pos: [f32; 3], time: f32, q: [i16; 4]) -> AnimKey24 {
    AnimKey24 { pos, time, q }
}

/// The sample's stream entries in file order: decoded streams with no raw
/// bytes, Res9 and Res17 kept opaque.
fn sample_entries() -> Vec<StreamEntry> {
    vec![
        entry(1, "nodes", 1, None),
        entry(2, "slots", 0, None),
        entry(3, "pos", 0, None),
        entry(4, "nrm", 0, None),
        entry(5, "uv", 0, None),
        entry(15, "x15", 0, None),
        entry(13, "batches", 0, None),
        entry(6, "idx", 0, None),
        entry(7, "tris", 0, None),
        entry(8, "keys", 0, None),
        entry(19, "map", 0, None),
        entry(9, "nine", 5, Some(b"opaque res9".to_vec())),
        entry(10, "names", 0, None),
        entry(17, "seventeen", 0, Some(Vec::new())),
    ]
}

/// The sample's Node38 records: root (slot 0), animated child (slots 0 and
/// 5, map start 0, fallback key 3), static grandchild with no slot.
fn sample_nodes() -> Vec<Node38> {
    let mut n0 = Node38 {
        flags: 0,
        parent: NONE16,
        map_start: NONE16,
        fallback_key: 0,
        slots: [NONE16; CELLS],
    };
    n0.slots[0] = 0;
    let mut n1 = Node38 {
        flags: 1,
        parent: 0,
        map_start: 0,
        fallback_key: 3,
        slots: [NONE16; CELLS],
    };
    n1.slots[0] = 1;
    n1.slots[5] = 1;
    let n2 = Node38 {
        flags: 0x100,
        parent: 1,
        map_start: NONE16,
        fallback_key: 4,
        slots: [NONE16; CELLS],
    };
    vec![n0, n1, n2]
}

/// The sample's AnimKey24 records: node 0's static key, node 1's three
/// keys at times 0, 1, 2, node 2's static key.
fn sample_keys() -> Vec<AnimKey24> {
    vec![
        key([0.0; 3], 0.0, [0, 0, 0, 32767]),
        key([0.0, 0.0, 1.0], 0.0, [0, 0, 0, 32767]),
        key([0.0, 0.0, 1.5], 1.0, [0, 0, 23170, 23170]),
        key([0.0, 0.0, 2.0], 2.0, [0, 0, 32767, 0]),
        key([0.5, 0.0, 0.0], 0.0, [0, 0, 0, 32767]),
    ]
}

/// A small valid model: node 0 (root, static, slot 0), node 1 (child of 0,
/// animated over 3 frames, slot 1), node 2 (child of 1, static, no slot).
fn sample_model() -> Model {
    let positions: Vec<[f32; 3]> = vec![
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [1.0, 1.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
        [1.0, 0.0, 1.0],
        [1.0, 1.0, 1.0],
        [0.0, 1.0, 1.0],
    ];
    let n = positions.len();
    let slot = |tri_start, tri_count, batch_start, lo: [f32; 3], hi: [f32; 3]| Slot68 {
        tri_start,
        tri_count,
        batch_start,
        batch_count: 1,
        aabb_min: lo,
        aabb_max: hi,
        sphere_center: [0.5; 3],
        sphere_radius: 0.9,
        tail: [0x3F80_0000, 0x3F00_0000, 1, 2, 3],
    };
    let batch = |index_start, base_vertex, material_index| Batch20 {
        flags: 0,
        material_index,
        opaque4: material_index,
        opaque6: 0,
        index_count: 6,
        index_start,
        opaque14: 4,
        base_vertex,
    };
    let tri = |links: [u16; 3]| TriDesc16 {
        flags: 0x10,
        links,
        normal: [0, 0, 32767],
        sel: 0x3F,
    };
    let mut m = Model {
        entries: sample_entries(),
        nodes: Nodes::Node38(sample_nodes()),
        header: Res2Header {
            hull: [[0.0; 3]; 8],
            sphere_center: [0.5; 3],
            sphere_radius: 0.9,
            capsule_a: [0.5, 0.5, 0.0],
            capsule_b: [0.5, 0.5, 1.0],
            capsule_radius: 0.71,
        },
        slots: vec![
            slot(0, 2, 0, [0.0; 3], [1.0, 1.0, 0.0]),
            slot(2, 2, 1, [0.0, 0.0, 1.0], [1.0; 3]),
        ],
        normals: Some(
            (0..n)
                .map(|i| [0, 0, if i < 4 { -127 } else { 127 }, 0])
                .collect(),
        ),
        uvs: Some((0..n as i16).map(|i| [i * 128, 1024 - i * 128]).collect()),
        positions,
        indices: vec![0, 1, 2, 0, 2, 3, 0, 1, 2, 0, 2, 3],
        tris: Some(vec![
            tri([1, NONE16, NONE16]),
            tri([0, NONE16, NONE16]),
            tri([3, NONE16, 2]),
            tri([2, NONE16, NONE16]),
        ]),
        batches: vec![batch(0, 0, 0), batch(6, 4, 1)],
        names: Some(vec![
            Some(b"root".to_vec()),
            Some(b"\xF0\xF3\xEA\xE0".to_vec()),
            None,
        ]),
        res15: Some((0..n as u8).map(|i| [i; 8]).collect()),
        res16: None,
        res18: None,
        keys: Some(sample_keys()),
        // Frames 0, 1 use keys 1, 2; frame 2 is at the track's end: fallback.
        frame_map: Some(vec![1, 2, 3]),
        frame_count: 3,
    };
    // Stored attributes as the decoder would see them after encoding.
    for e in &mut m.entries {
        if e.raw.is_none() {
            e.attr3 = msh::read::expected_attr3(e.type_id).unwrap_or(0);
        }
    }
    m
}

/// The decoder fills attr1/attr3 of decoded streams from the file; align the
/// expected model with what encode writes.
fn with_written_attrs(mut m: Model, bytes: &[u8]) -> Model {
    let a = nres::read(bytes, nres::Mode::Strict).expect("encoded file parses");
    for (e, w) in m.entries.iter_mut().zip(&a.entries) {
        e.attr1 = w.attr1;
        e.attr2 = w.attr2;
        e.attr3 = w.attr3;
    }
    m
}

#[test]
fn sample_model_round_trips_exactly() {
    let m = sample_model();
    assert_eq!(msh::validate(&m), Ok(vec![]));
    let bytes = msh::encode(&m).expect("encode");
    let d = msh::decode(&bytes, Mode::Strict).expect("decode");
    assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    assert_eq!(d.model, with_written_attrs(m, &bytes));
    assert_eq!(msh::encode(&d.model).expect("re-encode"), bytes);
    // attr1 = counts, attr3 = format values, Res19.attr2 = frame count.
    let a = nres::read(&bytes, nres::Mode::Strict).expect("nres");
    let attrs: Vec<(u32, u32, u32, u32)> = a
        .entries
        .iter()
        .map(|e| (e.type_id, e.attr1, e.attr2, e.attr3))
        .collect();
    assert_eq!(
        attrs,
        vec![
            (1, 3, 1, 38),
            (2, 2, 0, 68),
            (3, 8, 0, 12),
            (4, 8, 0, 4),
            (5, 8, 0, 4),
            (15, 8, 0, 8),
            (13, 2, 0, 20),
            (6, 12, 0, 2),
            (7, 4, 0, 16),
            (8, 5, 0, 4),
            (19, 3, 3, 2),
            (9, 0, 5, 0),
            (10, 3, 0, 0),
            (17, 0, 0, 0),
        ]
    );
    // Res10: "root", 4 bytes cp1251, empty.
    let r10 = a.entries[12].data;
    assert_eq!(r10.len(), 4 + 5 + 4 + 5 + 4);
    assert_eq!(&r10[..9], b"\x04\0\0\0root\0");
}

/// (rule, edit of the sample model, tolerant repair exists).
type Case = (&'static str, Box<dyn Fn(&mut Model)>, bool);

/// One edit of the sample model per validation rule, with whether the
/// tolerant repair fixes it.
fn invalid_cases() -> Vec<Case> {
    vec![
        (
            "msh.index_range",
            Box::new(|m| m.batches[1].base_vertex = 6),
            false,
        ),
        (
            "msh.index_count",
            Box::new(|m| m.batches[0].index_count = 5),
            true,
        ),
        (
            "msh.batch_range",
            Box::new(|m| m.slots[1].batch_start = 2),
            false,
        ),
        (
            "msh.tri_range",
            Box::new(|m| m.slots[1].tri_count = 9),
            true,
        ),
        (
            "msh.res7_link",
            Box::new(|m| m.tris.as_mut().unwrap()[0].links[2] = 4),
            true,
        ),
        (
            "msh.float.non_finite",
            Box::new(|m| m.positions[3][1] = f32::NAN),
            true,
        ),
        (
            "msh.bounds",
            Box::new(|m| m.slots[0].sphere_radius = -1.0),
            false,
        ),
        (
            "msh.vertex_stream_count",
            Box::new(|m| {
                m.uvs.as_mut().unwrap().pop();
            }),
            true,
        ),
        (
            "msh.hierarchy.parent_range",
            Box::new(|m| set_node(m, 2, |n| n.parent = 3)),
            true,
        ),
        (
            "msh.hierarchy.cycle",
            Box::new(|m| set_node(m, 0, |n| n.parent = 2)),
            true,
        ),
        (
            "msh.slot_index",
            Box::new(|m| set_node(m, 2, |n| n.slots[14] = 2)),
            true,
        ),
        (
            "msh.anim.fallback_key",
            Box::new(|m| set_node(m, 1, |n| n.fallback_key = 9)),
            true,
        ),
        (
            "msh.anim.frame_count",
            Box::new(|m| m.frame_count = 0),
            true,
        ),
        (
            "msh.anim.frame_count",
            Box::new(|m| m.frame_count = u32::MAX),
            true,
        ),
        (
            "msh.anim.map_range",
            Box::new(|m| set_node(m, 1, |n| n.map_start = 1)),
            true,
        ),
        (
            "msh.anim.key_time",
            Box::new(|m| m.keys.as_mut().unwrap()[2].time = 0.0),
            false,
        ),
        (
            "msh.anim.key_time",
            Box::new(|m| m.keys.as_mut().unwrap()[4].time = f32::INFINITY),
            false,
        ),
        (
            "msh.res10",
            Box::new(|m| {
                m.names.as_mut().unwrap().pop();
            }),
            false,
        ),
        (
            "msh.missing_stream",
            Box::new(|m| m.entries.retain(|e| e.type_id != 13)),
            false,
        ),
        (
            "msh.ir_entry",
            Box::new(|m| m.res18 = Some(vec![[0; 4]; 8])),
            false,
        ),
    ]
}

/// Checks one case: validate and encode refuse with `rule`; the repair
/// fixes it (warning `rule`, round-tripping strictly) or refuses with `rule`.
fn check_case(base: &Model, rule: &str, edit: &dyn Fn(&mut Model), repairable: bool) {
    let mut m = base.clone();
    edit(&mut m);
    let e = msh::validate(&m).expect_err(rule);
    assert_eq!(e.rule, rule, "{e}");
    assert_eq!(msh::encode(&m).unwrap_err().rule, rule);
    let mut w = Vec::new();
    let r = msh::validate::repair(&mut m, &mut w);
    if repairable {
        r.unwrap_or_else(|e| panic!("{rule}: repair failed: {e}"));
        assert!(w.iter().any(|x| x.rule == rule), "{rule}: {w:?}");
        assert_eq!(msh::validate(&m), Ok(vec![]), "{rule}");
        let bytes = msh::encode(&m).expect("repaired model encodes");
        let d = msh::decode(&bytes, Mode::Strict).expect("and decodes strictly");
        assert_eq!(d.model, with_written_attrs(m, &bytes), "{rule}");
    } else {
        assert_eq!(r.unwrap_err().rule, rule);
    }
}

#[test]
fn strict_errors_name_the_rule_and_tolerant_repairs() {
    let base = sample_model();
    for (rule, edit, repairable) in invalid_cases() {
        check_case(&base, rule, &*edit, repairable);
    }
}

fn set_node(m: &mut Model, i: usize, f: impl FnOnce(&mut Node38)) {
    if let Nodes::Node38(v) = &mut m.nodes {
        f(&mut v[i]);
    }
}

#[test]
fn broken_fallback_gets_an_identity_key_and_neighbours_keep_their_tracks() {
    let mut m = sample_model();
    set_node(&mut m, 1, |n| n.fallback_key = 40);
    let mut w = Vec::new();
    msh::validate::repair(&mut m, &mut w).expect("repair");
    let nodes = m.nodes38();
    assert_eq!(nodes[1].map_start, NONE16);
    assert_eq!(
        nodes.iter().map(|n| n.fallback_key).collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
    let keys = m.keys.as_ref().unwrap();
    assert_eq!(keys.len(), 3);
    assert_eq!(
        keys[1],
        AnimKey24 {
            pos: [0.0; 3],
            time: 0.0,
            q: [0; 4]
        }
    );
    assert_eq!(keys[2].pos, [0.5, 0.0, 0.0]);
}

#[test]
fn truncated_and_garbage_inputs_are_errors() {
    let bytes = msh::encode(&sample_model()).unwrap();
    for len in 0..bytes.len() {
        for mode in [Mode::Strict, Mode::Tolerant] {
            assert!(msh::decode(&bytes[..len], mode).is_err(), "len {len}");
        }
    }
}

/// Corruptions: bit flips, overwrites with edge values, truncation.
#[derive(Debug, Clone)]
enum Edit {
    Flip(usize, u8),
    Put16(usize, u16),
    Put32(usize, u32),
    Truncate(usize),
}

fn edit_strategy() -> impl Strategy<Value = Edit> {
    let edge16 = prop_oneof![
        Just(0u16),
        Just(1),
        Just(2),
        Just(3),
        Just(0xFFFF),
        Just(0x7FFF),
        any::<u16>()
    ];
    let edge32 = prop_oneof![
        Just(0u32),
        Just(1),
        Just(0xFFFF_FFFF),
        Just(0x7FC0_0000),
        Just(0x7F80_0000),
        Just(0xBF80_0000),
        any::<u32>()
    ];
    prop_oneof![
        4 => (any::<usize>(), 0u8..8).prop_map(|(o, b)| Edit::Flip(o, b)),
        3 => (any::<usize>(), edge16).prop_map(|(o, v)| Edit::Put16(o, v)),
        3 => (any::<usize>(), edge32).prop_map(|(o, v)| Edit::Put32(o, v)),
        1 => any::<usize>().prop_map(Edit::Truncate),
    ]
}

fn apply_edit(b: &mut Vec<u8>, e: &Edit) {
    if b.is_empty() {
        return;
    }
    match *e {
        Edit::Flip(o, bit) => {
            let o = o % b.len();
            b[o] ^= 1 << bit;
        }
        Edit::Put16(o, v) => {
            let o = o % b.len();
            for (k, x) in v.to_le_bytes().iter().enumerate() {
                if let Some(y) = b.get_mut(o + k) {
                    *y = *x;
                }
            }
        }
        Edit::Put32(o, v) => {
            let o = o % b.len();
            for (k, x) in v.to_le_bytes().iter().enumerate() {
                if let Some(y) = b.get_mut(o + k) {
                    *y = *x;
                }
            }
        }
        Edit::Truncate(n) => {
            let n = n % (b.len() + 1);
            b.truncate(n);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    #[test]
    fn corrupted_models_never_panic_and_tolerant_results_are_valid(
        edits in proptest::collection::vec(edit_strategy(), 1..8)
    ) {
        let mut bytes = msh::encode(&sample_model()).unwrap();
        for e in &edits {
            apply_edit(&mut bytes, e);
        }
        let strict = msh::decode(&bytes, Mode::Strict);
        if let Ok(d) = &strict {
            prop_assert_eq!(msh::validate(&d.model), Ok(vec![]));
            let enc = msh::encode(&d.model).expect("strict model encodes");
            if d.warnings.is_empty() {
                // The codec must give exactly what the container writer gives
                // for the parsed entries (the container's own canonical form
                // is nres' business: e.g. the offset of an empty payload is
                // not checked there).
                let a = nres::read(&bytes, nres::Mode::Strict).expect("strict NRes");
                let canon = nres::write(&a.entries).expect("rewrite");
                prop_assert!(enc == canon, "a warning-free strict decode must re-encode exactly");
            }
        }
        if let Ok(d) = msh::decode(&bytes, Mode::Tolerant) {
            prop_assert_eq!(msh::validate(&d.model), Ok(vec![]));
            let enc = msh::encode(&d.model).expect("tolerant model encodes");
            let again = msh::decode(&enc, Mode::Strict).expect("re-encoded tolerant model decodes strictly");
            prop_assert!(again.warnings.is_empty());
            prop_assert_eq!(again.model, with_written_attrs(d.model.clone(), &enc));
        } else {
            prop_assert!(strict.is_err(), "tolerant must accept what strict accepts");
        }
    }
}

/// Field-level corruptions of the IR (what a byte flip inside a payload does).
#[derive(Debug, Clone)]
enum FieldEdit {
    Parent(usize, u16),
    MapStart(usize, u16),
    Fallback(usize, u16),
    Cell(usize, usize, u16),
    FrameCount(u32),
    KeyTime(usize, f32),
    Word(usize, u16),
    IndexCount(usize, u16),
    BaseVertex(usize, u32),
    TriRange(usize, u16, u16),
    Link(usize, usize, u16),
}

fn field_edit_strategy() -> impl Strategy<Value = FieldEdit> {
    let small16 = prop_oneof![0u16..8, Just(NONE16), any::<u16>()];
    prop_oneof![
        (0usize..3, small16.clone()).prop_map(|(n, v)| FieldEdit::Parent(n, v)),
        (0usize..3, small16.clone()).prop_map(|(n, v)| FieldEdit::MapStart(n, v)),
        (0usize..3, small16.clone()).prop_map(|(n, v)| FieldEdit::Fallback(n, v)),
        (0usize..3, 0usize..CELLS, small16.clone()).prop_map(|(n, c, v)| FieldEdit::Cell(n, c, v)),
        prop_oneof![0u32..8, Just(u32::MAX), any::<u32>()].prop_map(FieldEdit::FrameCount),
        (
            0usize..5,
            prop_oneof![(0i32..4).prop_map(|t| t as f32), Just(f32::NAN)]
        )
            .prop_map(|(k, t)| FieldEdit::KeyTime(k, t)),
        (0usize..3, small16.clone()).prop_map(|(i, v)| FieldEdit::Word(i, v)),
        (0usize..2, 0u16..14).prop_map(|(b, v)| FieldEdit::IndexCount(b, v)),
        (0usize..2, 0u32..6).prop_map(|(b, v)| FieldEdit::BaseVertex(b, v)),
        (0usize..2, 0u16..6, 0u16..6).prop_map(|(s, a, c)| FieldEdit::TriRange(s, a, c)),
        (0usize..4, 0usize..3, small16).prop_map(|(t, k, v)| FieldEdit::Link(t, k, v)),
    ]
}

fn apply_field_edit(m: &mut Model, e: &FieldEdit) {
    match *e {
        FieldEdit::Parent(n, v) => set_node(m, n, |x| x.parent = v),
        FieldEdit::MapStart(n, v) => set_node(m, n, |x| x.map_start = v),
        FieldEdit::Fallback(n, v) => set_node(m, n, |x| x.fallback_key = v),
        FieldEdit::Cell(n, c, v) => set_node(m, n, |x| x.slots[c] = v),
        FieldEdit::FrameCount(v) => m.frame_count = v,
        FieldEdit::KeyTime(k, t) => m.keys.as_mut().unwrap()[k].time = t,
        FieldEdit::Word(i, v) => m.frame_map.as_mut().unwrap()[i] = v,
        FieldEdit::IndexCount(b, v) => m.batches[b].index_count = v,
        FieldEdit::BaseVertex(b, v) => m.batches[b].base_vertex = v,
        FieldEdit::TriRange(s, a, c) => {
            m.slots[s].tri_start = a;
            m.slots[s].tri_count = c;
        }
        FieldEdit::Link(t, k, v) => m.tris.as_mut().unwrap()[t].links[k] = v,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    #[test]
    fn repaired_models_are_valid_and_round_trip(
        edits in proptest::collection::vec(field_edit_strategy(), 1..6)
    ) {
        let mut m = sample_model();
        for e in &edits {
            apply_field_edit(&mut m, e);
        }
        let strict = msh::validate(&m);
        let mut w = Vec::new();
        match msh::validate::repair(&mut m, &mut w) {
            Ok(()) => {
                prop_assert_eq!(msh::validate(&m), Ok(vec![]));
                if strict.is_err() {
                    prop_assert!(!w.is_empty(), "a repair must be reported");
                }
                let bytes = msh::encode(&m).expect("repaired model encodes");
                let d = msh::decode(&bytes, Mode::Strict).expect("and decodes strictly");
                prop_assert_eq!(d.model, with_written_attrs(m, &bytes));
            }
            Err(e) => {
                prop_assert!(strict.is_err());
                prop_assert!(
                    ["msh.index_range", "msh.anim.key_time", "msh.batch_range", "msh.anim.fallback_key"]
                        .contains(&e.rule),
                    "unexpected unrepairable rule {e}"
                );
            }
        }
    }
}
