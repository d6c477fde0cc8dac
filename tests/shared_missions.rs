//! Missions against `../shared/corpus` (mission-notes §2, §9; manifest
//! `missions` and the `bad` records of kind `mission`): every corpus
//! `data.tma` reads strictly to its last byte, writes back byte for byte,
//! and holds what the manifest says (versions, routes and their float bits,
//! clans, every placed object's fields and property list, lodes, the
//! description); every object resolves in the game folder; every bad
//! mission fails with its rule in strict mode and, where the manifest says
//! a tolerant reader may go on, reads tolerantly with that rule among the
//! warnings.

mod common;

use mshgltf::mission::{tma, validate, Mission, Mode};
use serde_json::Value;

fn u32s(v: &Value) -> Vec<u32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as u32)
        .collect()
}

/// Standard base64 (RFC 4648, with padding) decoded.
fn b64(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let digits: Vec<u8> = s.bytes().filter(|&c| c != b'=').map(val).collect();
    digits
        .chunks(4)
        .flat_map(|q| {
            let n = q.iter().fold(0u32, |a, &d| (a << 6) | u32::from(d)) << (6 * (4 - q.len()));
            let b = n.to_be_bytes();
            b[1..q.len()].to_vec()
        })
        .collect()
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|f| f.to_bits()).collect()
}

/// The manifest's mission `want` against the decoded `m`.
fn check_fields(m: &Mission, want: &Value) {
    let name = want["name"].as_str().unwrap();
    let ver = &want["versions"];
    assert_eq!(
        (m.format, m.clan_version, m.object_version, m.lode_word),
        (1, 6, 10, 1),
        "{name}: {ver}"
    );
    assert_eq!(m.map_path, want["map_path"].as_str().unwrap().as_bytes());
    assert_eq!(i64::from(m.map_word), want["map_word"].as_i64().unwrap());
    assert_eq!(
        m.description_text(),
        want["description_text"].as_str().unwrap()
    );
    assert_eq!(
        m.routes.len(),
        want["routes"].as_array().unwrap().len(),
        "{name}"
    );
    for (r, w) in m.routes.iter().zip(want["routes"].as_array().unwrap()) {
        assert_eq!(i64::from(r.id), w["id"].as_i64().unwrap());
        let wb: Vec<Vec<u32>> = w["points_f32_bits"]
            .as_array()
            .unwrap()
            .iter()
            .map(u32s)
            .collect();
        let gb: Vec<Vec<u32>> = r.points.iter().map(|p| bits(p)).collect();
        assert_eq!(gb, wb, "{name} route {}", r.id);
    }
    assert_eq!(m.clans.len(), want["clans"].as_array().unwrap().len());
    for (k, w) in m.clans.iter().zip(want["clans"].as_array().unwrap()) {
        assert_eq!(k.name, w["name"].as_str().unwrap().as_bytes());
        assert_eq!(bits(&k.base), u32s(&w["base_f32_bits"]));
        assert_eq!(i64::from(k.kind), w["type"].as_i64().unwrap());
        assert_eq!(k.zones.len(), w["zones"].as_array().unwrap().len());
        assert_eq!(i64::from(k.minds), w["minds"].as_i64().unwrap());
        let rel: Vec<(String, i64)> = k
            .relations
            .iter()
            .map(|(n, v)| (String::from_utf8_lossy(n).into_owned(), i64::from(*v)))
            .collect();
        let wrel: Vec<(String, i64)> = w["relations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r[0].as_str().unwrap().to_string(), r[1].as_i64().unwrap()))
            .collect();
        assert_eq!(rel, wrel);
    }
    check_objects(m, want);
    assert_eq!(m.lodes.len(), want["lodes"].as_array().unwrap().len());
    for (l, w) in m.lodes.iter().zip(want["lodes"].as_array().unwrap()) {
        assert_eq!(bits(&l.position), u32s(&w["position_f32_bits"]));
        assert_eq!(
            (
                i64::from(l.found),
                i64::from(l.kind),
                i64::from(l.w4),
                i64::from(l.amount.to_bits())
            ),
            (
                w["found"].as_i64().unwrap(),
                w["type"].as_i64().unwrap(),
                w["w4"].as_i64().unwrap(),
                w["amount_f32_bits"].as_i64().unwrap()
            )
        );
    }
}

fn check_objects(m: &Mission, want: &Value) {
    let objs = want["objects"].as_array().unwrap();
    assert_eq!(m.objects.len(), objs.len());
    for (o, w) in m.objects.iter().zip(objs) {
        let at = format!("{} object {}", want["name"], w["index"]);
        assert_eq!(i64::from(o.kind), w["kind"].as_i64().unwrap(), "{at}");
        assert_eq!(i64::from(o.marker), w["marker"].as_i64().unwrap(), "{at}");
        assert_eq!(o.path, w["path"].as_str().unwrap().as_bytes(), "{at}");
        assert_eq!(i64::from(o.clan), w["clan"].as_i64().unwrap(), "{at}");
        assert_eq!(
            i64::from(o.logical_id),
            w["logical_id"].as_i64().unwrap(),
            "{at}"
        );
        let fb = &w["f32_bits"];
        assert_eq!(bits(&o.position), u32s(&fb["position"]), "{at}");
        assert_eq!(bits(&o.rotation), u32s(&fb["rotation"]), "{at}");
        assert_eq!(bits(&o.scale), u32s(&fb["scale"]), "{at}");
        // A name that is not text is given as base64 (`instance_name_b64`).
        let want_name = match w["instance_name"].as_str() {
            Some(t) => t.as_bytes().to_vec(),
            None => b64(w["instance_name_b64"].as_str().unwrap()),
        };
        assert_eq!(o.instance_name, want_name, "{at}");
        assert_eq!(
            (
                i64::from(o.start_flag),
                i64::from(o.host),
                i64::from(o.vertex),
                i64::from(o.property_word)
            ),
            (
                w["start_flag"].as_i64().unwrap(),
                w["host"].as_i64().unwrap(),
                w["vertex"].as_i64().unwrap(),
                w["property_word"].as_i64().unwrap()
            ),
            "{at}"
        );
        let props: Vec<(String, u32, Vec<u32>)> = o
            .properties
            .iter()
            .map(|p| {
                (
                    String::from_utf8_lossy(&p.name).into_owned(),
                    p.kind,
                    vec![p.value, p.minimum, p.maximum],
                )
            })
            .collect();
        let wprops: Vec<(String, u32, Vec<u32>)> = w["properties"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["name"].as_str().unwrap().to_string(),
                    p["type"].as_u64().unwrap() as u32,
                    u32s(&p["words"]),
                )
            })
            .collect();
        assert_eq!(props, wprops, "{at}");
    }
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn every_corpus_mission_reads_exactly_and_writes_back() {
    let Some(root) = common::corpus() else { return };
    let man = common::manifest(&root);
    let missions = man["missions"].as_array().unwrap();
    assert!(!missions.is_empty());
    for want in missions {
        let rel = want["files"]["data.tma"]["path"].as_str().unwrap();
        let bytes = std::fs::read(root.join(rel)).unwrap();
        let (m, warnings) =
            tma::read(&bytes, Mode::Strict).unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert!(warnings.is_empty(), "{rel}: {warnings:?}");
        assert!(
            tma::write(&m) == bytes,
            "{rel}: not written back byte for byte"
        );
        check_fields(&m, want);
        let unresolved = validate::resolve(&m, &root);
        assert!(unresolved.is_empty(), "{rel}: {unresolved:?}");
    }
    println!("{} missions read, checked and written back", missions.len());
}

#[test]
#[ignore = "needs ../shared: cargo test -- --include-ignored"]
fn every_bad_mission_fails_with_its_rule() {
    let Some(root) = common::corpus() else { return };
    let man = common::manifest(&root);
    let mut n = 0;
    for b in common::bad_records(&man, Some("mission")) {
        let file = b["file"].as_str().unwrap();
        let rule = b["check"].as_str().unwrap();
        let bytes = std::fs::read(root.join(file)).unwrap();
        // Resolution rules need the game folder: the corpus root.
        let strict = tma::read(&bytes, Mode::Strict).and_then(|(m, _)| {
            match validate::resolve(&m, &root).into_iter().next() {
                Some(e) => Err(e),
                None => Ok(m),
            }
        });
        let e = strict
            .err()
            .unwrap_or_else(|| panic!("{file}: read strictly"));
        assert_eq!(e.rule, rule, "{file}: {e}");
        let tolerant = tma::read(&bytes, Mode::Tolerant);
        if b["tolerant_may_convert"] == true {
            let (m, mut w) = tolerant.unwrap_or_else(|e| panic!("{file} tolerant: {e}"));
            w.extend(validate::resolve(&m, &root));
            assert!(w.iter().any(|x| x.rule == rule), "{file}: {w:?}");
            assert!(
                tma::write(&m) == bytes,
                "{file}: tolerant read not written back"
            );
        } else {
            assert_eq!(tolerant.unwrap_err().rule, rule, "{file}");
        }
        n += 1;
    }
    assert!(n > 0);
    println!("{n} bad missions fail with their rule");
}
