//! The hot arrays of a glTF document, `accessors` and `bufferViews` (glTF
//! 2.0 §3.6), deserialised straight from the JSON text into fixed slots
//! instead of a [`serde_json::Value`] tree (issue 28 item 5): no map and no
//! key string per element, which is most of the cost of the tree.
//!
//! Every property keeps the exact JSON value it had ([`Value`] scalars
//! cost no allocation), so the reader's rules read the same values as
//! from the tree: a wrong type is the same missing value, an unknown key
//! goes to [`Obj`]'s `rest`, an element that is not an object is kept as
//! its value, the last of duplicate keys wins (as in a `Value` map), and
//! [`Obj::to_value`] gives back the element's tree.

use std::cell::Cell;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
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
            Ok($wrap(number(self.big(), v)))
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
/// it), setting `big` when it overflows f32.
fn number(big: &Cell<bool>, v: f64) -> Value {
    if !(v as f32).is_finite() {
        big.set(true);
    }
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

/// Builds the same [`Value`] as `Value`'s own deserialisation and sets `.0`
/// when a number overflows f32 (so the tree needs no second walk).
struct ValueSeed<'f>(&'f Cell<bool>);

impl ValueSeed<'_> {
    fn big(&self) -> &Cell<bool> {
        self.0
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
        while let Some(e) = seq.next_element_seed(ValueSeed(self.0))? {
            out.push(e);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut m = Map::new();
        while let Some(k) = map.next_key::<String>()? {
            m.insert(k, map.next_value_seed(ValueSeed(self.0))?);
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

/// Properties of a bufferView kept in slots (glTF 2.0 §5.11).
pub(super) const VIEW_KEYS: &[&str] = &[
    "buffer",
    "byteOffset",
    "byteLength",
    "byteStride",
    "target",
    "name",
];

/// Most slots of an element ([`ACCESSOR_KEYS`] has 9).
const SLOTS: usize = 9;

/// One JSON object of a hot array: the properties named by `keys` in
/// slots (`known[i]` is `keys[i]`'s value), every other one in `rest`.
#[derive(Debug, Clone)]
pub struct Obj {
    keys: &'static [&'static str],
    known: [Option<Value>; SLOTS],
    rest: Map<String, Value>,
}

impl Obj {
    /// A property's value (`None` when the object has no such key).
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self.keys.iter().position(|k| *k == key) {
            Some(i) => self.known[i].as_ref(),
            None => self.rest.get(key),
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
        Value::Object(m)
    }
}

/// An element of a hot array: an object in slots, or any other value kept
/// as it is (it has no properties).
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

impl Elem {
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
                let mut o = Obj {
                    keys,
                    known: Default::default(),
                    rest: Map::new(),
                };
                for (k, v) in m {
                    match keys.iter().position(|x| *x == k) {
                        Some(i) => o.known[i] = Some(v),
                        None => {
                            o.rest.insert(k, v);
                        }
                    }
                }
                Elem::Obj(o)
            }
            v => Elem::Other(v),
        }
    }
}

/// A hot array as read: a list of elements, or the value that stood where
/// the array should be (not an array: the reader sees no elements).
pub(super) enum List {
    Elems(Vec<Elem>),
    Other(Value),
}

/// A map key: the index of a slot key, or the key itself.
enum Key {
    Slot(usize),
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
        Ok(match self.0.iter().position(|k| *k == v) {
            Some(i) => Key::Slot(i),
            None => Key::Other(v.to_owned()),
        })
    }
}

/// Reads one element of a hot array whose slots are `.0`.
struct ElemSeed<'f>(&'static [&'static str], &'f Cell<bool>);

impl ElemSeed<'_> {
    fn big(&self) -> &Cell<bool> {
        self.1
    }
}

impl<'de> DeserializeSeed<'de> for ElemSeed<'_> {
    type Value = Elem;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Elem, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ElemSeed<'_> {
    type Value = Elem;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    other_as_value!(Elem::Other);
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Elem, A::Error> {
        Ok(Elem::Other(ValueSeed(self.1).visit_seq(seq)?))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Elem, A::Error> {
        let mut o = Obj {
            keys: self.0,
            known: Default::default(),
            rest: Map::new(),
        };
        while let Some(k) = map.next_key_seed(KeySeed(self.0))? {
            match k {
                Key::Slot(i) => o.known[i] = Some(map.next_value_seed(ValueSeed(self.1))?),
                Key::Other(k) => {
                    o.rest.insert(k, map.next_value_seed(ValueSeed(self.1))?);
                }
            }
        }
        Ok(Elem::Obj(o))
    }
}

/// Reads a hot array whose elements' slots are `.0`.
struct ListSeed<'f>(&'static [&'static str], &'f Cell<bool>);

impl ListSeed<'_> {
    fn big(&self) -> &Cell<bool> {
        self.1
    }
}

impl<'de> DeserializeSeed<'de> for ListSeed<'_> {
    type Value = List;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<List, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ListSeed<'_> {
    type Value = List;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    other_as_value!(List::Other);
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<List, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(e) = seq.next_element_seed(ElemSeed(self.0, self.1))? {
            out.push(e);
        }
        Ok(List::Elems(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<List, A::Error> {
        Ok(List::Other(ValueSeed(self.1).visit_map(map)?))
    }
}

/// The document as read by [`RootSeed`]: every top-level property but the
/// hot arrays as a tree, the hot arrays in slots (`None`: absent, or not
/// an array and then kept in `json`).
pub(super) struct Root {
    pub(super) json: Map<String, Value>,
    pub(super) accessors: Option<Vec<Elem>>,
    pub(super) views: Option<Vec<Elem>>,
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
        const HOT: &[&str] = &["accessors", "bufferViews"];
        let mut r = Root {
            json: Map::new(),
            accessors: None,
            views: None,
        };
        while let Some(k) = map.next_key_seed(KeySeed(HOT))? {
            let (name, keys, slot) = match k {
                Key::Other(k) => {
                    r.json.insert(k, map.next_value_seed(ValueSeed(self.0))?);
                    continue;
                }
                Key::Slot(0) => (HOT[0], ACCESSOR_KEYS, &mut r.accessors),
                Key::Slot(_) => (HOT[1], VIEW_KEYS, &mut r.views),
            };
            // The last of duplicate keys wins, as in a `Value` map.
            match map.next_value_seed(ListSeed(keys, self.0))? {
                List::Elems(e) => {
                    r.json.remove(name);
                    *slot = Some(e);
                }
                List::Other(v) => {
                    *slot = None;
                    r.json.insert(name.to_string(), v);
                }
            }
        }
        Ok(r)
    }
}
