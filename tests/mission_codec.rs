//! Property tests for the `data.tma` codec (mission-notes §2, §9): any
//! bytes read without a panic (an error names a rule, and never makes the
//! reader allocate past the file); a mission of every table version
//! written then read (tolerantly: versions below the shipped ones) comes
//! back identical, and its bytes are the writer's; a file cut anywhere is
//! refused with `mission.exact_eof` or `mission.count_fits`.

use mshgltf::mission::ir::{Clan, Lode, Mission, PlacedObject, Property, Route, Zone};
use mshgltf::mission::{tma, Mode};
use proptest::prelude::*;

fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..max)
}

fn f3() -> impl Strategy<Value = [f32; 3]> {
    prop::array::uniform3(-1000f32..1000.0)
}

fn clan() -> impl Strategy<Value = Clan> {
    (
        bytes(12),
        f3(),
        0u32..4,
        bytes(20),
        prop::collection::vec(f3(), 0..3),
        2u32..17,
    )
        .prop_map(|(name, b, kind, script, zones, minds)| Clan {
            relations: vec![(name.clone(), 1)],
            name,
            raw_id: -1,
            base: [b[0], b[1]],
            kind,
            ai_script: script.clone(),
            zones: zones
                .into_iter()
                .map(|c| Zone {
                    kind: 1,
                    centre: c,
                    inner: 10.0,
                    outer: 30.0,
                })
                .collect(),
            tree: script,
            minds,
        })
}

fn object(clans: i32) -> impl Strategy<Value = PlacedObject> {
    (
        0u32..4,
        bytes(30),
        f3(),
        -3.2f32..3.2,
        0.5f32..3.0,
        bytes(10),
        prop::collection::vec((0u32..2, any::<u32>(), bytes(12)), 0..4),
    )
        .prop_map(
            move |(kind, path, position, rz, s, inst, props)| PlacedObject {
                kind,
                marker: tma::MARKER,
                path,
                clan: if kind <= 1 { 0 } else { -1 }.min(clans - 1),
                logical_id: if kind <= 1 { 7 } else { -1 },
                position,
                rotation: [0.0, 0.0, rz],
                scale: [s; 3],
                instance_name: inst,
                start_flag: 0,
                host: -1,
                vertex: -1,
                property_word: 1,
                properties: props
                    .into_iter()
                    .map(|(kind, value, name)| Property {
                        kind,
                        value,
                        minimum: 0,
                        maximum: u32::MAX,
                        name,
                    })
                    .collect(),
            },
        )
}

fn mission() -> impl Strategy<Value = Mission> {
    (
        prop::collection::vec(prop::collection::vec(f3(), 0..5), 0..3),
        prop::collection::vec(clan(), 1..3),
        prop::collection::vec(object(1), 0..6),
        bytes(24),
        bytes(40),
        prop::collection::vec(
            (
                f3(),
                0u32..2,
                any::<f32>().prop_filter("finite", |f| f.is_finite()),
            ),
            0..3,
        ),
    )
        .prop_map(
            |(routes, clans, objects, map_path, description, lodes)| Mission {
                format: 1,
                routes: routes
                    .into_iter()
                    .enumerate()
                    .map(|(i, points)| Route {
                        id: i as u32,
                        points,
                    })
                    .collect(),
                clan_version: 6,
                clans,
                object_version: 10,
                objects,
                map_path,
                map_word: 1,
                description,
                lode_word: 1,
                lodes: lodes
                    .into_iter()
                    .map(|(position, found, amount)| Lode {
                        position,
                        found,
                        kind: 0x1000_1000,
                        amount,
                        w4: 0,
                    })
                    .collect(),
                trailing: Vec::new(),
            },
        )
}

/// `m` as a reader of its versions gives it back: the fields a version
/// does not store take the reader's defaults.
fn as_version(mut m: Mission, clan_v: u32, object_v: u32) -> Mission {
    m.clan_version = clan_v;
    m.object_version = object_v;
    for k in &mut m.clans {
        if clan_v < 2 {
            k.ai_script.clear()
        }
        if clan_v < 3 {
            k.zones.clear()
        }
        if clan_v < 4 {
            k.tree.clear()
        }
        if clan_v < 5 {
            k.minds = 0
        }
        if clan_v < 6 {
            k.relations.clear()
        }
    }
    for o in &mut m.objects {
        if object_v < 3 {
            o.clan = 0
        }
        if object_v < 4 {
            o.logical_id = -1
        }
        if object_v < 6 {
            o.property_word = 0;
            o.properties.clear()
        }
        if object_v < 7 {
            o.instance_name.clear()
        }
        if object_v < 8 {
            o.start_flag = 0
        }
        if object_v < 10 {
            o.scale = [1.0; 3]
        }
    }
    if object_v < 2 {
        m.map_word = 0;
        m.description.clear()
    }
    if object_v < 5 {
        m.lode_word = 0;
        m.lodes.clear()
    }
    m
}

proptest! {
    #[test]
    fn any_bytes_read_without_panic(data in bytes(600)) {
        for mode in [Mode::Strict, Mode::Tolerant] {
            if let Err(e) = tma::read(&data, mode) {
                prop_assert!(e.rule.starts_with("mission."), "{e}");
            }
        }
    }

    #[test]
    fn missions_write_then_read_identically(m in mission(), cv in 1u32..=6, ov in 1u32..=10) {
        let bytes = tma::write(&m);
        let (back, w) = tma::read(&bytes, Mode::Strict).unwrap();
        prop_assert!(w.is_empty());
        prop_assert_eq!(&back, &m);
        let old = as_version(m, cv, ov);
        let bytes = tma::write(&old);
        let (back, _) = tma::read(&bytes, Mode::Tolerant).unwrap();
        prop_assert_eq!(&back, &old);
        prop_assert_eq!(tma::write(&back), bytes);
    }

    #[test]
    fn a_cut_file_is_refused(m in mission(), cut in any::<prop::sample::Index>()) {
        let bytes = tma::write(&m);
        let n = cut.index(bytes.len());
        for mode in [Mode::Strict, Mode::Tolerant] {
            let e = tma::read(&bytes[..n], mode).unwrap_err();
            prop_assert!(matches!(e.rule, "mission.exact_eof" | "mission.count_fits"), "{}", e);
        }
    }
}

#[test]
fn trailing_bytes_are_an_error_strict_and_kept_tolerant() {
    let m = Mission {
        format: 1,
        clan_version: 6,
        object_version: 10,
        lode_word: 1,
        ..Default::default()
    };
    let mut bytes = tma::write(&m);
    bytes.extend_from_slice(b"junk");
    assert_eq!(
        tma::read(&bytes, Mode::Strict).unwrap_err().rule,
        "mission.exact_eof"
    );
    let (back, w) = tma::read(&bytes, Mode::Tolerant).unwrap();
    assert_eq!(w[0].rule, "mission.exact_eof");
    assert_eq!(back.trailing, b"junk");
    assert_eq!(tma::write(&back), bytes);
}
