//! The extras a mission scene carries (mission-notes §8.3–§8.5): every raw
//! field of a placed object, route, clan and lode, and the mission's own
//! (versions, map path, description, object order, text files), so the
//! writer (`gltf2msh --base data.tma`) can tell an untouched field from an edited one
//! and give the untouched ones back from their bits.
//!
//! Strings are text when their Windows-1251 bytes decode and re-encode to
//! the same bytes; otherwise the text is `null` and `<field>_b64` holds the
//! raw bytes (standard base64, RFC 4648 with padding), which the writer
//! prefers. Floats are given as numbers and as their IEEE bits
//! (`f32_bits`).

use serde_json::{json, Map, Value};

use super::ir::{Clan, Lode, Mission, PlacedObject, Property, Route};

/// Extras key of a placed-object node.
pub const OBJECT_KEY: &str = "parkan_object";
/// Extras key of a new placed object from the game's asset library
/// ([`super::assets`]: kind, path, instance name, start flag, properties).
pub const ASSET_KEY: &str = "parkan_asset";
/// Extras key of a route node.
pub const ROUTE_KEY: &str = "parkan_route";
/// Extras key of a clan empty.
pub const CLAN_KEY: &str = "parkan_clan";
/// Extras key of a lode empty.
pub const LODE_KEY: &str = "parkan_lode";
/// Extras key of the scene.
pub const MISSION_KEY: &str = "parkan_mission";
/// Extras key of a clan's zone circle (under its clan empty).
pub const ZONE_KEY: &str = "parkan_zone";
/// Extras key of the terrain's root node (the map scene's extras).
pub const TERRAIN_KEY: &str = "parkan_terrain_scene";
/// Every extras key that makes a node part of the mission as exported
/// (§8.2): nodes carrying one, and what is under them, are the mission's;
/// any other node that draws something is an addition gltf2msh cannot
/// write ([`super::back`]).
pub const NODE_KEYS: [&str; 7] = [
    OBJECT_KEY,
    ASSET_KEY,
    ROUTE_KEY,
    CLAN_KEY,
    LODE_KEY,
    ZONE_KEY,
    TERRAIN_KEY,
];

/// An f32 as a JSON number (its exact f64 widening; non-finite → null).
pub fn num(x: f32) -> Value {
    serde_json::Number::from_f64(f64::from(x)).map_or(Value::Null, Value::Number)
}

/// A display number of the extras: `x` as a JSON number, or for a value
/// that is not finite the text `"NaN"`, `"inf"` or `"-inf"` (JSON has no
/// such number, and the GLB holds no `null`: issue 36 item 8). Display
/// only: the raw value is in the `f32_bits` beside it, which is what is
/// read back.
pub fn display_num(x: f32) -> Value {
    match serde_json::Number::from_f64(f64::from(x)) {
        Some(n) => Value::Number(n),
        None if x.is_nan() => Value::from("NaN"),
        None if x > 0.0 => Value::from("inf"),
        None => Value::from("-inf"),
    }
}

fn nums(v: &[f32]) -> Value {
    Value::from(v.iter().map(|&x| display_num(x)).collect::<Vec<_>>())
}

fn bits(v: &[f32]) -> Value {
    Value::from(v.iter().map(|x| x.to_bits()).collect::<Vec<_>>())
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding (RFC 4648 §4).
pub fn b64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for k in 0..4 {
            if k <= c.len() {
                out.push(B64[(n >> (18 - 6 * k)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes standard base64 (padding optional); `None` on any other
/// character.
pub fn b64_decode(s: &str) -> Option<Vec<u8>> {
    let mut digits = Vec::with_capacity(s.len());
    for c in s.bytes().filter(|&c| c != b'=') {
        digits.push(B64.iter().position(|&d| d == c)? as u32);
    }
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for q in digits.chunks(4) {
        let n = q.iter().fold(0u32, |a, &d| (a << 6) | d) << (6 * (4 - q.len()));
        let b = n.to_be_bytes();
        out.extend_from_slice(&b[1..q.len()]);
    }
    Some(out)
}

/// The text of Windows-1251 `bytes` when it re-encodes to the same bytes.
/// Byte 0x98, which Windows-1251 leaves undefined (WHATWG maps it to the
/// control U+0098), is never text.
pub fn exact_text(bytes: &[u8]) -> Option<String> {
    if bytes.contains(&0x98) {
        return None;
    }
    let (text, _, bad) = encoding_rs::WINDOWS_1251.decode(bytes);
    if bad {
        return None;
    }
    let (back, _, bad) = encoding_rs::WINDOWS_1251.encode(&text);
    (!bad && back.as_ref() == bytes).then(|| text.into_owned())
}

/// Puts `key` (text or null) and, when the bytes are not exact text,
/// `key_b64` into `m`.
fn put_string(m: &mut Map<String, Value>, key: &str, bytes: &[u8]) {
    match exact_text(bytes) {
        Some(t) => {
            m.insert(key.into(), Value::from(t));
        }
        None => {
            m.insert(key.into(), Value::Null);
            m.insert(format!("{key}_b64"), Value::from(b64_encode(bytes)));
        }
    }
}

/// The raw bytes of string field `key` of `v`: `key_b64` when present,
/// else the text encoded as Windows-1251; `None` when neither is usable.
pub fn get_string(v: &Value, key: &str) -> Option<Vec<u8>> {
    if let Some(b) = v.get(format!("{key}_b64")).and_then(Value::as_str) {
        return b64_decode(b);
    }
    let t = v.get(key)?.as_str()?;
    let (b, _, bad) = encoding_rs::WINDOWS_1251.encode(t);
    (!bad).then(|| b.into_owned())
}

/// A property as the extras hold it (§8.3): `{"name" (or null and
/// `name_b64`), "type", "words": [value, minimum, maximum]}`.
pub fn property(p: &Property) -> Value {
    let mut m = Map::new();
    put_string(&mut m, "name", &p.name);
    m.insert("type".into(), p.kind.into());
    m.insert("words".into(), json!([p.value, p.minimum, p.maximum]));
    Value::Object(m)
}

/// `extras.parkan_object` of placed object `index` (§8.3): every raw field;
/// `resolved` (what its model is) and `shown` (what the node shows) are
/// display only.
pub fn object(index: usize, o: &PlacedObject, resolved: Value, shown: Value) -> Value {
    let mut m = Map::new();
    m.insert("index".into(), index.into());
    m.insert("kind".into(), o.kind.into());
    m.insert("marker".into(), o.marker.into());
    put_string(&mut m, "path", &o.path);
    m.insert("clan".into(), o.clan.into());
    m.insert("logical_id".into(), o.logical_id.into());
    m.insert("position".into(), nums(&o.position));
    m.insert("rotation".into(), nums(&o.rotation));
    m.insert("scale".into(), nums(&o.scale));
    m.insert(
        "f32_bits".into(),
        json!({"position": bits(&o.position), "rotation": bits(&o.rotation), "scale": bits(&o.scale)}),
    );
    put_string(&mut m, "instance_name", &o.instance_name);
    m.insert("start_flag".into(), o.start_flag.into());
    m.insert("host".into(), o.host.into());
    m.insert("vertex".into(), o.vertex.into());
    m.insert("property_word".into(), o.property_word.into());
    m.insert(
        "properties".into(),
        o.properties.iter().map(property).collect(),
    );
    m.insert("resolved".into(), resolved);
    m.insert("shown".into(), shown);
    Value::Object(m)
}

/// `extras.parkan_route` (§8.4).
pub fn route(index: usize, r: &Route) -> Value {
    let pts: Vec<Value> = r.points.iter().map(|p| bits(p)).collect();
    json!({"index": index, "id": r.id, "points_f32_bits": pts})
}

/// `extras.parkan_clan` (§8.4): every field of the clan.
pub fn clan(index: usize, k: &Clan) -> Value {
    let mut m = Map::new();
    m.insert("index".into(), index.into());
    put_string(&mut m, "name", &k.name);
    m.insert("raw_id".into(), k.raw_id.into());
    m.insert("base".into(), nums(&k.base));
    m.insert("base_f32_bits".into(), bits(&k.base));
    m.insert("type".into(), k.kind.into());
    put_string(&mut m, "ai_script", &k.ai_script);
    let zones: Vec<Value> = k
        .zones
        .iter()
        .map(|z| {
            json!({"kind": z.kind, "centre": nums(&z.centre), "inner": display_num(z.inner), "outer": display_num(z.outer),
                   "f32_bits": {"centre": bits(&z.centre), "inner": z.inner.to_bits(), "outer": z.outer.to_bits()}})
        })
        .collect();
    m.insert("zones".into(), zones.into());
    put_string(&mut m, "tree", &k.tree);
    m.insert("minds".into(), k.minds.into());
    let rel: Vec<Value> = k
        .relations
        .iter()
        .map(|(n, w)| {
            let mut r = Map::new();
            put_string(&mut r, "name", n);
            r.insert("word".into(), (*w).into());
            Value::Object(r)
        })
        .collect();
    m.insert("relations".into(), rel.into());
    Value::Object(m)
}

/// `extras.parkan_lode` (§8.4): all five fields.
pub fn lode(index: usize, l: &Lode) -> Value {
    json!({"index": index, "position": nums(&l.position), "position_f32_bits": bits(&l.position),
           "found": l.found, "type": l.kind, "amount": display_num(l.amount),
           "amount_f32_bits": l.amount.to_bits(), "w4": l.w4})
}

/// The scene's `extras.parkan_mission` (§8.5). `source` is the file as
/// given, `sha256` its digest (hex), `descr` the menu title, `files` the
/// text files beside it (name → text; bytes that are not exact text as
/// `{"b64": ...}`).
pub fn mission(
    m: &Mission,
    source: &str,
    sha256: &str,
    descr: Option<&str>,
    files: &[(String, Vec<u8>)],
) -> Value {
    let mut x = Map::new();
    x.insert("source".into(), source.into());
    x.insert("sha256".into(), sha256.into());
    x.insert(
        "versions".into(),
        json!({"format": m.format, "clan": m.clan_version, "object": m.object_version, "lode_word": m.lode_word}),
    );
    put_string(&mut x, "map_path", &m.map_path);
    x.insert("map_word".into(), m.map_word.into());
    x.insert("description_b64".into(), b64_encode(&m.description).into());
    x.insert("description_text".into(), m.description_text().into());
    x.insert("descr".into(), descr.map_or(Value::Null, Value::from));
    x.insert(
        "object_order".into(),
        (0..m.objects.len()).collect::<Vec<_>>().into(),
    );
    let clans: Vec<Value> = m
        .clans
        .iter()
        .enumerate()
        .map(|(i, k)| clan(i, k))
        .collect();
    x.insert("clans".into(), clans.into());
    let lodes: Vec<Value> = m
        .lodes
        .iter()
        .enumerate()
        .map(|(i, l)| lode(i, l))
        .collect();
    x.insert("lodes".into(), lodes.into());
    let mut f = Map::new();
    for (name, bytes) in files {
        let v = exact_text(bytes).map_or_else(|| json!({"b64": b64_encode(bytes)}), Value::from);
        f.insert(name.clone(), v);
    }
    x.insert("files".into(), Value::Object(f));
    x.insert(
        "conventions".into(),
        json!({"up": "y", "rotation": "RzRyRx", "scale_kinds": [2, 3],
               "hosted": "hall-way vertex of the host building, no turn"}),
    );
    Value::Object(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips() {
        for s in [&b""[..], b"f", b"fo", b"foo", b"foob", b"\xcd\xcd\x00\xff"] {
            assert_eq!(b64_decode(&b64_encode(s)).unwrap(), s);
        }
        assert_eq!(b64_encode(b"Iron"), "SXJvbg==");
        assert!(b64_decode("a*b").is_none());
    }

    #[test]
    fn strings_are_text_only_when_exact() {
        let mut m = Map::new();
        put_string(&mut m, "a", "Танк".as_bytes());
        put_string(&mut m, "b", b"\x98x");
        let v = Value::Object(m);
        assert!(v["a"].is_string() && v.get("a_b64").is_none());
        assert!(v["b"].is_null());
        assert_eq!(get_string(&v, "b").unwrap(), b"\x98x");
        assert_eq!(get_string(&v, "a").unwrap(), "Танк".as_bytes());
    }
}
