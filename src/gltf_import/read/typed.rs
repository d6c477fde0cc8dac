//! The top-level arrays of a glTF document (glTF 2.0 §5: `accessors`,
//! `bufferViews`, `nodes`, `meshes`, `materials`, `scenes`, `animations`),
//! deserialised straight from the JSON text into fixed slots instead of a
//! [`serde_json::Value`] tree (issue 28 item 5): no map and no key string
//! per element, and each element's `extras` kept as its JSON text until it
//! is read ([`Obj::get`] parses it then, once), as the `gltf` crate keeps
//! extras raw. Map keys and `extras` trees are most of the cost of a tree.
//!
//! Every property keeps the exact JSON value it had ([`Value`] scalars
//! cost no allocation), so the reader's rules read the same values as
//! from the tree: a wrong type is the same missing value, an unknown key
//! goes to [`Obj`]'s `rest`, an element that is not an object is kept as
//! its value, the last of duplicate keys wins (as in a `Value` map), the
//! numbers of a raw `extras` are checked for f32 overflow as they are
//! read, and [`Elem::to_value`] gives back the element's tree.

use std::cell::Cell;
use std::sync::OnceLock;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The value of one JSON node that is not what the seed wants, as a tree
/// (the same tree `Value`'s own deserialisation builds).
macro_rules! other_as_value {
    ($wrap:expr) => {
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
            Ok($wrap(Value::Bool(v)))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
            Ok($wrap(Value::from(v)))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
            Ok($wrap(Value::from(v)))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
            Ok($wrap(number(self.big(), v, self.ints())))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok($wrap(Value::String(v.to_owned())))
        }
        fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
            Ok($wrap(Value::String(v)))
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($wrap(Value::Null))
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($wrap(Value::Null))
        }
    };
}

/// A JSON float as a [`Value`] (as `Value`'s own deserialisation makes
/// it), setting `big` when it overflows f32. With `ints` (a core glTF
/// property, not an `extras`) an integral float (`504.0`) is the integer
/// it is (JSON Schema 2020-12 §6.1.1: a number with a zero fractional part
/// is an integer; issue 36 item 3), so a reader of an index or a count
/// reads it; `-0.0` stays a float (its sign is a value) and so does one
/// outside u64 and i64. Every f32 read of it is the same.
fn number(big: &Cell<bool>, v: f64, ints: bool) -> Value {
    if !(v as f32).is_finite() {
        big.set(true);
    }
    if ints && v.fract() == 0.0 && !(v == 0.0 && v.is_sign_negative()) {
        if (0.0..18_446_744_073_709_551_616.0).contains(&v) {
            return Value::from(v as u64);
        }
        if (-9_223_372_036_854_775_808.0..0.0).contains(&v) {
            return Value::from(v as i64);
        }
    }
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

/// Builds the same [`Value`] as `Value`'s own deserialisation and sets `.0`
/// when a number overflows f32 (so the tree needs no second walk); `.1`:
/// integral floats become integers ([`number`]: a core property, not an
/// `extras`).
struct ValueSeed<'f>(&'f Cell<bool>, bool);

impl ValueSeed<'_> {
    fn big(&self) -> &Cell<bool> {
        self.0
    }
    fn ints(&self) -> bool {
        self.1
    }
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any valid JSON value")
    }
    other_as_value!(std::convert::identity);
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(e) = seq.next_element_seed(ValueSeed(self.0, self.1))? {
            out.push(e);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut m = Map::new();
        while let Some(k) = map.next_key::<String>()? {
            // Application data stays as written.
            let ints = self.1 && k != "extras";
            m.insert(k, map.next_value_seed(ValueSeed(self.0, ints))?);
        }
        Ok(Value::Object(m))
    }
}

/// Properties of an accessor kept in slots (glTF 2.0 §5.1).
pub(super) const ACCESSOR_KEYS: &[&str] = &[
    "bufferView",
    "byteOffset",
    "componentType",
    "normalized",
    "count",
    "type",
    "max",
    "min",
    "sparse",
];

/// The slots of [`ACCESSOR_KEYS`] and [`VIEW_KEYS`] the accessor reader
/// reads by position ([`Elem::slot`]); each checked against its name when
/// compiled.
pub(super) mod at {
    use super::{ACCESSOR_KEYS as A, VIEW_KEYS as V};
    pub const BUFFER_VIEW: usize = 0;
    pub const BYTE_OFFSET: usize = 1;
    pub const COMPONENT_TYPE: usize = 2;
    pub const NORMALIZED: usize = 3;
    pub const COUNT: usize = 4;
    pub const TYPE: usize = 5;
    pub const SPARSE: usize = 8;
    pub const VIEW_BUFFER: usize = 0;
    pub const VIEW_BYTE_OFFSET: usize = 1;
    pub const VIEW_BYTE_LENGTH: usize = 2;
    pub const VIEW_BYTE_STRIDE: usize = 3;

    const fn same(a: &str, b: &str) -> bool {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let mut i = 0;
        while i < a.len() {
            if a[i] != b[i] {
                return false;
            }
            i += 1;
        }
        true
    }
    const _: () = assert!(
        same(A[BUFFER_VIEW], "bufferView")
            && same(A[BYTE_OFFSET], "byteOffset")
            && same(A[COMPONENT_TYPE], "componentType")
            && same(A[NORMALIZED], "normalized")
            && same(A[COUNT], "count")
            && same(A[TYPE], "type")
            && same(A[SPARSE], "sparse")
            && same(V[VIEW_BUFFER], "buffer")
            && same(V[VIEW_BYTE_OFFSET], "byteOffset")
            && same(V[VIEW_BYTE_LENGTH], "byteLength")
            && same(V[VIEW_BYTE_STRIDE], "byteStride")
    );
}

/// Properties of a bufferView kept in slots (glTF 2.0 §5.11).
pub(super) const VIEW_KEYS: &[&str] = &[
    "buffer",
    "byteOffset",
    "byteLength",
    "byteStride",
    "target",
    "name",
];

/// Properties of a node kept in slots (glTF 2.0 §5.25).
pub(super) const NODE_KEYS: &[&str] = &[
    "name",
    "mesh",
    "children",
    "translation",
    "rotation",
    "scale",
    "matrix",
    "camera",
    "skin",
    "weights",
    "extensions",
];

/// Properties of a mesh kept in slots (glTF 2.0 §5.23).
pub(super) const MESH_KEYS: &[&str] = &["name", "primitives", "weights", "extensions"];

/// Properties of a material kept in slots (glTF 2.0 §5.19).
pub(super) const MATERIAL_KEYS: &[&str] = &[
    "name",
    "pbrMetallicRoughness",
    "normalTexture",
    "occlusionTexture",
    "emissiveTexture",
    "emissiveFactor",
    "alphaMode",
    "alphaCutoff",
    "doubleSided",
    "extensions",
];

/// Properties of a scene kept in slots (glTF 2.0 §5.27).
pub(super) const SCENE_KEYS: &[&str] = &["name", "nodes", "extensions"];

/// Properties of an animation kept in slots (glTF 2.0 §5.6).
pub(super) const ANIMATION_KEYS: &[&str] = &["name", "channels", "samplers", "extensions"];

/// Most slots of an element ([`NODE_KEYS`] has 11).
const SLOTS: usize = 11;

/// The slot of `key` in `keys`: length and first byte compared before the
/// bytes (most keys differ in one of them; this runs for every key read
/// and every property looked up).
fn slot_of(keys: &[&str], key: &str) -> Option<usize> {
    let (len, first) = (key.len(), key.as_bytes().first());
    keys.iter()
        .position(|k| k.len() == len && k.as_bytes().first() == first && *k == key)
}

/// An element's `extras` (glTF 2.0 §5.34 "extras"): the JSON text as read,
/// parsed into a tree the first time it is read; or a tree (made from one,
/// or edited).
#[derive(Debug, Clone)]
enum Extras {
    Raw(Box<RawValue>, OnceLock<Value>),
    Tree(Value),
}

impl Extras {
    fn get(&self) -> &Value {
        match self {
            Extras::Raw(r, t) => t.get_or_init(|| tree_of(r)),
            Extras::Tree(v) => v,
        }
    }

    fn get_mut(&mut self) -> &mut Value {
        if let Extras::Raw(..) = self {
            let raw = std::mem::replace(self, Extras::Tree(Value::Null));
            *self = Extras::Tree(raw.into_value());
        }
        match self {
            Extras::Tree(v) => v,
            Extras::Raw(..) => unreachable!("made a tree above"),
        }
    }

    fn into_value(self) -> Value {
        match self {
            Extras::Raw(r, t) => t.into_inner().unwrap_or_else(|| tree_of(&r)),
            Extras::Tree(v) => v,
        }
    }
}

/// The tree of a raw `extras` (its text was read as JSON and its numbers
/// checked: it parses).
fn tree_of(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or_default()
}

/// One JSON object of a top-level array: the properties named by `keys`
/// in slots (`known[i]` is `keys[i]`'s value), `extras` apart (raw until
/// read), every other one in `rest`.
#[derive(Debug, Clone)]
pub struct Obj {
    keys: &'static [&'static str],
    known: [Option<Value>; SLOTS],
    extras: Option<Extras>,
    rest: Map<String, Value>,
}

impl Obj {
    fn empty(keys: &'static [&'static str]) -> Obj {
        Obj {
            keys,
            known: Default::default(),
            extras: None,
            rest: Map::new(),
        }
    }

    /// A property's value (`None` when the object has no such key).
    pub fn get(&self, key: &str) -> Option<&Value> {
        if key == "extras" {
            return self.extras.as_ref().map(Extras::get);
        }
        match slot_of(self.keys, key) {
            Some(i) => self.known[i].as_ref(),
            None => self.rest.get(key),
        }
    }

    /// A property's value to change (`None` when the object has no such
    /// key).
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        if key == "extras" {
            return self.extras.as_mut().map(Extras::get_mut);
        }
        match slot_of(self.keys, key) {
            Some(i) => self.known[i].as_mut(),
            None => self.rest.get_mut(key),
        }
    }

    /// Sets a property; returns the value it had.
    pub fn insert(&mut self, key: &str, v: Value) -> Option<Value> {
        if key == "extras" {
            return self.extras.replace(Extras::Tree(v)).map(Extras::into_value);
        }
        match slot_of(self.keys, key) {
            Some(i) => self.known[i].replace(v),
            None => self.rest.insert(key.to_string(), v),
        }
    }

    /// Removes a property; returns the value it had.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        if key == "extras" {
            return self.extras.take().map(Extras::into_value);
        }
        match slot_of(self.keys, key) {
            Some(i) => self.known[i].take(),
            None => self.rest.remove(key),
        }
    }

    /// The object as a JSON tree (the `Value` it was read from).
    pub fn to_value(&self) -> Value {
        let mut m = self.rest.clone();
        for (k, v) in self.keys.iter().zip(&self.known) {
            if let Some(v) = v {
                m.insert((*k).to_string(), v.clone());
            }
        }
        if let Some(e) = &self.extras {
            m.insert("extras".into(), e.get().clone());
        }
        Value::Object(m)
    }
}

/// An element of a top-level array: an object in slots, or any other value
/// kept as it is (it has no properties). Read it like a `Value` object:
/// [`Elem::get`], `elem["key"]` (`Null` when missing), `elem["key"] = v`.
// Nearly every element is an object: boxing it would cost the allocation
// the slots save.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Elem {
    /// A JSON object.
    Obj(Obj),
    /// Any other JSON value.
    Other(Value),
}

static NULL: Value = Value::Null;

impl Elem {
    /// A property's value (`None` when missing, or not an object), as
    /// [`Value::get`].
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Elem::Obj(o) => o.get(key),
            Elem::Other(v) => v.get(key),
        }
    }

    /// A property's value to change (`None` when missing, or not an
    /// object), as [`Value::get_mut`].
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        match self {
            Elem::Obj(o) => o.get_mut(key),
            Elem::Other(v) => v.get_mut(key),
        }
    }

    /// Sets a property of an object element; returns the value it had
    /// (`None` also for an element that is not an object: it is left as
    /// it is).
    pub fn insert(&mut self, key: &str, v: Value) -> Option<Value> {
        match self {
            Elem::Obj(o) => o.insert(key, v),
            Elem::Other(Value::Object(m)) => m.insert(key.to_string(), v),
            Elem::Other(_) => None,
        }
    }

    /// Removes a property; returns the value it had.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        match self {
            Elem::Obj(o) => o.remove(key),
            Elem::Other(Value::Object(m)) => m.remove(key),
            Elem::Other(_) => None,
        }
    }

    /// Property `keys[i]` (as [`Elem::get`]`(keys[i])`); when `keys` are the
    /// slot keys the element was read with, the slot itself, without a
    /// search (the accessor reader's hot path).
    pub(super) fn slot(&self, keys: &'static [&'static str], i: usize) -> Option<&Value> {
        match self {
            // One name compared, not a search (a `const` list need not
            // keep one address).
            Elem::Obj(o) if o.keys.get(i).is_some_and(|k| Some(k) == keys.get(i)) => {
                o.known[i].as_ref()
            }
            _ => self.get(keys[i]),
        }
    }

    /// The value at a JSON pointer (RFC 6901) inside the element, as
    /// [`Value::pointer`] (`""` is not supported: `None`).
    pub fn pointer(&self, ptr: &str) -> Option<&Value> {
        let (key, rest) = split_pointer(ptr)?;
        // `Value::pointer("")` is the value itself.
        self.get(&key)?.pointer(rest)
    }

    /// Whether the element is a JSON object.
    pub fn is_object(&self) -> bool {
        matches!(self, Elem::Obj(_) | Elem::Other(Value::Object(_)))
    }

    /// The element as a JSON tree.
    pub fn to_value(&self) -> Value {
        match self {
            Elem::Obj(o) => o.to_value(),
            Elem::Other(v) => v.clone(),
        }
    }

    /// An element made from a JSON tree (an object goes to slots).
    pub(super) fn from_value(v: Value, keys: &'static [&'static str]) -> Elem {
        match v {
            Value::Object(m) => {
                let mut o = Obj::empty(keys);
                for (k, v) in m {
                    o.insert(&k, v);
                }
                Elem::Obj(o)
            }
            v => Elem::Other(v),
        }
    }
}

/// The first key of a JSON pointer (unescaped: `~1` is `/`, `~0` is `~`)
/// and the pointer after it (`""` or starting with `/`).
fn split_pointer(ptr: &str) -> Option<(String, &str)> {
    let p = ptr.strip_prefix('/')?;
    let (k, rest) = p.find('/').map_or((p, ""), |i| (&p[..i], &p[i..]));
    Some((k.replace("~1", "/").replace("~0", "~"), rest))
}

impl std::ops::Index<&str> for Elem {
    type Output = Value;
    /// `elem["key"]`: the property, `Null` when missing (as `Value`).
    fn index(&self, key: &str) -> &Value {
        self.get(key).unwrap_or(&NULL)
    }
}

impl std::ops::IndexMut<&str> for Elem {
    /// `elem["key"] = v`: the property, inserted as `Null` when missing;
    /// panics on an element that is not an object or `null` (as `Value`).
    fn index_mut(&mut self, key: &str) -> &mut Value {
        match self {
            Elem::Obj(o) => {
                if o.get(key).is_none() {
                    o.insert(key, Value::Null);
                }
                o.get_mut(key).expect("inserted above")
            }
            Elem::Other(v) => &mut v[key],
        }
    }
}

/// A hot array as read: a list of elements, or the value that stood where
/// the array should be (not an array: the reader sees no elements).
pub(super) enum ListRead {
    Elems(Vec<Elem>),
    Other(Value),
}

/// A map key: the index of a slot key, or the key itself.
enum Key {
    Slot(usize),
    /// `extras` (not a slot).
    Extras,
    Other(String),
}

struct KeySeed(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for KeySeed {
    type Value = Key;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
        Ok(match slot_of(self.0, v) {
            Some(i) => Key::Slot(i),
            None if v == "extras" => Key::Extras,
            None => Key::Other(v.to_owned()),
        })
    }
}

/// Reads one element of a hot array into `.0` (an empty object of the
/// array's slot keys, filled where it stands: an element is too big to
/// move cheaply).
struct ElemSeed<'e, 'f>(&'e mut Obj, &'f Cell<bool>);

impl ElemSeed<'_, '_> {
    fn big(&self) -> &Cell<bool> {
        self.1
    }
    fn ints(&self) -> bool {
        true
    }
}

impl<'de> DeserializeSeed<'de> for ElemSeed<'_, '_> {
    /// `Some` when the element is not an object (kept as it is).
    type Value = Option<Value>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<Value>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ElemSeed<'_, '_> {
    type Value = Option<Value>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    other_as_value!(Some);
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Option<Value>, A::Error> {
        Ok(Some(ValueSeed(self.1, true).visit_seq(seq)?))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<Value>, A::Error> {
        let o = self.0;
        while let Some(k) = map.next_key_seed(KeySeed(o.keys))? {
            match k {
                Key::Slot(i) => o.known[i] = Some(map.next_value_seed(ValueSeed(self.1, true))?),
                Key::Extras => {
                    let raw: Box<RawValue> = map.next_value()?;
                    check_raw_numbers(&raw, self.1).map_err(de::Error::custom)?;
                    check_raw_depth(&raw).map_err(de::Error::custom)?;
                    o.extras = Some(Extras::Raw(raw, OnceLock::new()));
                }
                Key::Other(k) => {
                    o.rest
                        .insert(k, map.next_value_seed(ValueSeed(self.1, true))?);
                }
            }
        }
        Ok(None)
    }
}

/// Deepest nesting of arrays and objects an `extras` may have: below
/// serde_json's recursion limit (128), so that the tree of every accepted
/// `extras` is made as read ([`tree_of`]), never a `null` in its place.
pub const MAX_EXTRAS_DEPTH: usize = 127;

/// Refuses an `extras` text nested deeper than [`MAX_EXTRAS_DEPTH`]
/// (one pass over the bytes, strings skipped).
fn check_raw_depth(raw: &RawValue) -> Result<(), String> {
    let (mut depth, mut deepest, mut in_str, mut esc) = (0usize, 0usize, false, false);
    for &b in raw.get().as_bytes() {
        if in_str {
            match (esc, b) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    if deepest > MAX_EXTRAS_DEPTH {
        return Err(format!(
            "extras nested {deepest} levels deep (at most {MAX_EXTRAS_DEPTH} are read)"
        ));
    }
    Ok(())
}

/// Sets `big` when a number of the JSON text `raw` overflows f32, as
/// [`ValueSeed`] does while it builds a tree. Only a number with an
/// exponent (a digit followed by `e`/`E`) or with 39 or more digits in a
/// row can (f32's largest is about 3.4e38): the full check runs only on a
/// text with one.
fn check_raw_numbers(raw: &RawValue, big: &Cell<bool>) -> Result<(), serde_json::Error> {
    let bytes = raw.get().as_bytes();
    // A digit then `e`/`E`: one pass without branches (it vectorises).
    let exponent = bytes
        .iter()
        .zip(&bytes[1.min(bytes.len())..])
        .fold(0u8, |a, (&d, &e)| {
            a | (u8::from(d.is_ascii_digit()) & u8::from(e | 0x20 == b'e'))
        });
    // 39 digits in a row hold one of the 20-byte blocks at multiples of 20
    // whole (a run of 2 × 20 − 1 does, wherever it starts).
    let long = bytes
        .chunks_exact(20)
        .any(|c| c.iter().all(u8::is_ascii_digit));
    if exponent != 0 || long {
        let mut de = serde_json::Deserializer::from_str(raw.get());
        ValueSeed(big, false).deserialize(&mut de)?;
    }
    Ok(())
}

/// Reads a hot array whose elements' slots are `.0`.
struct ListSeed<'f>(&'static [&'static str], &'f Cell<bool>);

impl ListSeed<'_> {
    fn big(&self) -> &Cell<bool> {
        self.1
    }
    fn ints(&self) -> bool {
        true
    }
}

impl<'de> DeserializeSeed<'de> for ListSeed<'_> {
    type Value = ListRead;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<ListRead, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ListSeed<'_> {
    type Value = ListRead;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    other_as_value!(ListRead::Other);
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ListRead, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        loop {
            out.push(Elem::Obj(Obj::empty(self.0)));
            let Some(Elem::Obj(o)) = out.last_mut() else {
                unreachable!("pushed above")
            };
            match seq.next_element_seed(ElemSeed(o, self.1))? {
                None => {
                    out.pop();
                    return Ok(ListRead::Elems(out));
                }
                Some(None) => {}
                Some(Some(v)) => *out.last_mut().expect("pushed above") = Elem::Other(v),
            }
        }
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ListRead, A::Error> {
        Ok(ListRead::Other(ValueSeed(self.1, true).visit_map(map)?))
    }
}

/// The top-level arrays kept in slots, in [`Root::lists`] order: name and
/// slot keys.
pub(super) const LISTS: [(&str, &[&str]); 7] = [
    ("accessors", ACCESSOR_KEYS),
    ("bufferViews", VIEW_KEYS),
    ("nodes", NODE_KEYS),
    ("meshes", MESH_KEYS),
    ("materials", MATERIAL_KEYS),
    ("scenes", SCENE_KEYS),
    ("animations", ANIMATION_KEYS),
];

/// The document as read by [`RootSeed`]: every top-level property but the
/// [`LISTS`] as a tree, those in slots (`None`: absent, or not an array
/// and then kept in `json`).
pub(super) struct Root {
    pub(super) json: Map<String, Value>,
    pub(super) lists: [Option<Vec<Elem>>; 7],
}

/// Reads a document that is a JSON object; sets `.0` when a number
/// overflows f32.
pub(super) struct RootSeed<'f>(pub(super) &'f Cell<bool>);

impl<'de> DeserializeSeed<'de> for RootSeed<'_> {
    type Value = Root;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Root, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for RootSeed<'_> {
    type Value = Root;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Root, A::Error> {
        const NAMES: [&str; 7] = {
            let mut n = [""; 7];
            let mut i = 0;
            while i < 7 {
                n[i] = LISTS[i].0;
                i += 1;
            }
            n
        };
        let mut r = Root {
            json: Map::new(),
            lists: Default::default(),
        };
        while let Some(k) = map.next_key_seed(KeySeed(&NAMES))? {
            let i = match k {
                Key::Slot(i) => i,
                Key::Extras => {
                    let v = map.next_value_seed(ValueSeed(self.0, false))?;
                    r.json.insert("extras".into(), v);
                    continue;
                }
                Key::Other(k) => {
                    r.json
                        .insert(k, map.next_value_seed(ValueSeed(self.0, true))?);
                    continue;
                }
            };
            let (name, keys) = LISTS[i];
            // The last of duplicate keys wins, as in a `Value` map.
            match map.next_value_seed(ListSeed(keys, self.0))? {
                ListRead::Elems(e) => {
                    r.json.remove(name);
                    r.lists[i] = Some(e);
                }
                ListRead::Other(v) => {
                    r.lists[i] = None;
                    r.json.insert(name.to_string(), v);
                }
            }
        }
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn big_in(text: &str) -> bool {
        let raw = RawValue::from_string(text.to_owned()).unwrap();
        let big = Cell::new(false);
        check_raw_numbers(&raw, &big).unwrap();
        big.get()
    }

    /// A slot read by position is the property read by name, whatever
    /// list the element was read with.
    #[test]
    fn a_slot_by_position_is_the_property_by_name() {
        let v = serde_json::json!({"bufferView": 2, "byteOffset": 8, "componentType": 5126,
            "count": 3, "type": "VEC3", "sparse": {"count": 1}, "buffer": 1, "byteLength": 4});
        let elems = [
            Elem::from_value(v.clone(), ACCESSOR_KEYS),
            Elem::from_value(v.clone(), VIEW_KEYS),
            Elem::from_value(v.clone(), NODE_KEYS),
            Elem::Other(v),
            Elem::Other(Value::from(7)),
        ];
        for e in &elems {
            for keys in [ACCESSOR_KEYS, VIEW_KEYS] {
                for (i, k) in keys.iter().enumerate() {
                    assert_eq!(e.slot(keys, i), e.get(k), "{k} of {e:?}");
                }
            }
        }
        assert_eq!(
            elems[0].slot(ACCESSOR_KEYS, at::TYPE),
            Some(&Value::from("VEC3"))
        );
        assert_eq!(
            elems[1].slot(VIEW_KEYS, at::VIEW_BYTE_LENGTH),
            Some(&Value::from(4))
        );
    }

    /// The pre-check lets no overflowing number of a raw `extras` through,
    /// wherever it stands (every offset against the 20-byte blocks).
    #[test]
    fn raw_number_check_finds_every_big_number_wherever_it_stands() {
        for pad in 0..45 {
            for digits in 36..42 {
                let text = format!(
                    "{{\"k\":\"{}\",\"n\":[{}]}}",
                    "x".repeat(pad),
                    "9".repeat(digits)
                );
                // 38 nines are below f32's largest (3.4e38), 39 are above.
                assert_eq!(big_in(&text), digits >= 39, "{text}");
            }
        }
        for (text, big) in [
            ("[1e39]", true),
            ("[1E39]", true),
            ("[-3.5E+38]", true),
            ("{\"e\":3.5e38}", true),
            ("[1e38]", false),
            ("[3.4e38]", false),
            ("{\"name\":\"e1e99\"}", false),
            ("9", false),
        ] {
            assert_eq!(big_in(text), big, "{text}");
        }
    }
}
