//! The typed check of a glTF document (issue 36 item 3): the JSON text is
//! deserialised into gltf-json's typed [`gltf_json::Root`] (every core
//! property typed by the library, `extras` kept raw), so a property of the
//! wrong type is refused with its JSON pointer (RFC 6901) and what the
//! glTF 2.0 schema expects, never read as absent.
//!
//! Two readings of the schema the library does not make are added by
//! `Lax`, a wrapper of the JSON deserializer:
//! - an integral number such as `504.0` is an integer (JSON Schema
//!   2020-12 §6.1.1 "type": "integer" matches any number with a zero
//!   fractional part), so it reads where the schema says integer;
//! - `null` is no glTF property's type: serde reads it as an absent
//!   `Option`, the schema refuses it. Only an `extras` (application data,
//!   any JSON value) may be `null`.
//!
//! Then the library's [`Validate`] finds the enumerated values the schema
//! does not allow (`alphaMode "GARBAGE"`, an unknown `componentType`, a
//! `byteStride` outside 4..=252, ...), and `check_ranges` the numbers
//! outside the schema's `minimum`/`maximum` the library does not check
//! (material factors in [0, 1]). Index ranges stay with the readers
//! (`gltf.index`, `gltf.accessor`), which name the array.
//!
//! The pointer is found by a second, slower deserialisation through
//! `serde_path_to_error`, only when the first one failed.

use std::cell::Cell;
use std::fmt;

use gltf_json::validation::{Error as Invalid, Validate};
use gltf_json::{Path, Root};
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};

use super::{err, GltfFile};
use crate::gltf_import::ImportError;

/// serde_json's name of its raw value type: passed through untouched
/// (an `extras`, kept as text).
const RAW_TOKEN: &str = "$serde_json::private::RawValue";

/// Checks the glTF JSON text `text` (already parsed into `doc`, so it is
/// valid JSON) against the glTF 2.0 schema's types, enumerations and the
/// ranges of [`check_ranges`].
///
/// # Errors
/// `gltf.json`, naming the JSON pointer of the first value refused and
/// what the schema expects there.
pub(super) fn check(text: &[u8], doc: &GltfFile) -> Result<(), ImportError> {
    let root = match std::str::from_utf8(text) {
        Ok(s) => typed(serde_json::Deserializer::from_str(s)),
        Err(_) => typed(serde_json::Deserializer::from_slice(text)),
    };
    let root = root.map_err(|_| match std::str::from_utf8(text) {
        Ok(s) => located(serde_json::Deserializer::from_str(s)),
        Err(_) => located(serde_json::Deserializer::from_slice(text)),
    })?;
    check_values(&root, doc)?;
    check_ranges(&root)
}

/// The typed document of `de`'s text, without a path (the fast way).
fn typed<'de, R: serde_json::de::Read<'de>>(
    mut de: serde_json::Deserializer<R>,
) -> Result<Root, serde_json::Error> {
    let extras = Cell::new(false);
    serde::Deserialize::deserialize(Lax {
        d: &mut de,
        extras: &extras,
        key: false,
    })
}

/// The `gltf.json` error of a text [`typed`] refused: the same
/// deserialisation, with the path of the value that failed.
fn located<'de, R: serde_json::de::Read<'de>>(mut de: serde_json::Deserializer<R>) -> ImportError {
    let extras = Cell::new(false);
    let lax = Lax {
        d: &mut de,
        extras: &extras,
        key: false,
    };
    match serde_path_to_error::deserialize::<_, Root>(lax) {
        Ok(_) => err(
            "gltf.json",
            "the document does not match the glTF 2.0 schema",
        ),
        Err(e) => {
            let mut at = String::new();
            for s in e.path().iter() {
                match s {
                    serde_path_to_error::Segment::Seq { index } => {
                        at.push_str(&format!("/{index}"));
                    }
                    serde_path_to_error::Segment::Map { key }
                    | serde_path_to_error::Segment::Enum { variant: key } => {
                        at.push('/');
                        at.push_str(&key.replace('~', "~0").replace('/', "~1"));
                    }
                    serde_path_to_error::Segment::Unknown => at.push_str("/?"),
                }
            }
            let what = e
                .inner()
                .to_string()
                .replace("index into child of root", "an index (an integer >= 0)");
            err(
                "gltf.json",
                format!("{}: {what} (glTF 2.0 schema)", pointer_name(&at)),
            )
        }
    }
}

/// A JSON pointer as a message names it (`""` is the document).
fn pointer_name(at: &str) -> String {
    if at.is_empty() {
        "the document".into()
    } else {
        at.to_string()
    }
}

/// gltf-json's path (`meshes[0].primitives[1].attributes["POSITION"]`)
/// as a JSON pointer (`/meshes/0/primitives/1/attributes/POSITION`).
fn pointer_of(path: &str) -> String {
    // `path = "value"` (a value named after its path): the path.
    let path = path.split(" = ").next().unwrap_or(path);
    let mut out = String::new();
    let mut rest = path;
    while !rest.is_empty() {
        let (seg, next) = if let Some(r) = rest.strip_prefix("[\"") {
            let end = r.find("\"]").unwrap_or(r.len());
            (&r[..end], r.get(end + 2..).unwrap_or(""))
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']').unwrap_or(r.len());
            (&r[..end], r.get(end + 1..).unwrap_or(""))
        } else {
            let r = rest.strip_prefix('.').unwrap_or(rest);
            let end = r.find(['.', '[']).unwrap_or(r.len());
            (&r[..end], &r[end..])
        };
        out.push('/');
        out.push_str(&seg.replace('~', "~0").replace('/', "~1"));
        rest = next;
    }
    out
}

/// The enumerated values (and the few other values) gltf-json's
/// [`Validate`] finds invalid. Index ranges and missing properties are
/// left to the readers, which name them with their own rules.
///
/// # Errors
/// `gltf.json` naming the first invalid value's pointer and the value.
fn check_values(root: &Root, doc: &GltfFile) -> Result<(), ImportError> {
    let mut first: Option<String> = None;
    let mut report = |path: &dyn Fn() -> Path, e: Invalid| {
        if e == Invalid::Invalid && first.is_none() {
            first = Some(path().to_string());
        }
    };
    macro_rules! validate {
        ($($field:ident: $name:literal),*) => {$(
            root.$field.validate(root, || Path::new().field($name), &mut report);
        )*};
    }
    validate!(accessors: "accessors", animations: "animations", buffers: "buffers",
        buffer_views: "bufferViews", cameras: "cameras", images: "images",
        materials: "materials", nodes: "nodes", samplers: "samplers", scenes: "scenes",
        skins: "skins", textures: "textures");
    // A primitive's validation reads its POSITION accessor by index
    // without a bound check (gltf-json 1.4 `primitive_validate_hook`): a
    // mesh with one out of range is left to the readers (`gltf.index`).
    for (i, m) in root.meshes.iter().enumerate() {
        let in_range = m.primitives.iter().all(|p| {
            p.attributes
                .get(&gltf_json::validation::Checked::Valid(
                    gltf_json::mesh::Semantic::Positions,
                ))
                .is_none_or(|a| a.value() < root.accessors.len())
        });
        if in_range {
            m.validate(root, || Path::new().field("meshes").index(i), &mut report);
        }
    }
    let Some(path) = first else {
        return Ok(());
    };
    let at = pointer_of(&path);
    let value = doc
        .to_json()
        .pointer(&at)
        .map_or_else(String::new, |v| format!(" {v}"));
    Err(err(
        "gltf.json",
        format!(
            "{}: the value{value} is not one the glTF 2.0 schema allows there",
            pointer_name(&at)
        ),
    ))
}

/// Numbers outside the glTF 2.0 schema's `minimum`/`maximum` that the
/// library reads without a check: a material's `baseColorFactor`,
/// `metallicFactor`, `roughnessFactor`, `emissiveFactor` and occlusion
/// `strength` lie in [0, 1] (glTF 2.0 §5.19–§5.22), its `alphaCutoff` is
/// at least 0.
///
/// # Errors
/// `gltf.json` naming the number's pointer and the range.
fn check_ranges(root: &Root) -> Result<(), ImportError> {
    let out = |at: String, x: f32, range: &str| {
        err(
            "gltf.json",
            format!("{at}: {x} is out of the glTF 2.0 schema's range {range}"),
        )
    };
    let unit = |at: String, x: f32| {
        if (0.0..=1.0).contains(&x) {
            Ok(())
        } else {
            Err(out(at, x, "[0, 1]"))
        }
    };
    for (i, m) in root.materials.iter().enumerate() {
        let at = format!("/materials/{i}");
        let pbr = &m.pbr_metallic_roughness;
        for (k, &x) in pbr.base_color_factor.0.iter().enumerate() {
            unit(format!("{at}/pbrMetallicRoughness/baseColorFactor/{k}"), x)?;
        }
        unit(
            format!("{at}/pbrMetallicRoughness/metallicFactor"),
            pbr.metallic_factor.0,
        )?;
        unit(
            format!("{at}/pbrMetallicRoughness/roughnessFactor"),
            pbr.roughness_factor.0,
        )?;
        for (k, &x) in m.emissive_factor.0.iter().enumerate() {
            unit(format!("{at}/emissiveFactor/{k}"), x)?;
        }
        if let Some(o) = &m.occlusion_texture {
            unit(format!("{at}/occlusionTexture/strength"), o.strength.0)?;
        }
        if let Some(c) = m.alpha_cutoff.filter(|c| c.0 < 0.0) {
            return Err(out(format!("{at}/alphaCutoff"), c.0, "[0, ∞)"));
        }
    }
    Ok(())
}

/// The JSON deserializer `d` as the glTF schema reads it: an integral
/// float is given to the visitor as an integer, `null` is refused except
/// as an `extras` (`extras` is set while the last key read was
/// `"extras"`; `key` marks the deserializer of a map key).
struct Lax<'c, D> {
    d: D,
    extras: &'c Cell<bool>,
    key: bool,
}

/// [`Lax`]'s visitor around `v`.
struct Vis<'c, V> {
    v: V,
    extras: &'c Cell<bool>,
    key: bool,
}

/// [`Lax`]'s seed around `s` (for map keys, map values and elements).
struct Seed<'c, S> {
    s: S,
    extras: &'c Cell<bool>,
    key: bool,
}

/// [`Lax`]'s sequence, map, enum and variant access around `.a`.
struct Access<'c, A> {
    a: A,
    extras: &'c Cell<bool>,
}

impl<'c, D> Lax<'c, D> {
    fn vis<V>(&self, v: V) -> Vis<'c, V> {
        Vis {
            v,
            extras: self.extras,
            key: self.key,
        }
    }
}

macro_rules! forward_de {
    ($($m:ident($($a:ident: $t:ty),*);)*) => {$(
        fn $m<V: Visitor<'de>>(self, $($a: $t,)* v: V) -> Result<V::Value, D::Error> {
            let v = self.vis(v);
            self.d.$m($($a,)* v)
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Lax<'_, D> {
    type Error = D::Error;
    forward_de! {
        deserialize_any(); deserialize_bool(); deserialize_i8(); deserialize_i16();
        deserialize_i32(); deserialize_i64(); deserialize_i128(); deserialize_u8();
        deserialize_u16(); deserialize_u32(); deserialize_u64(); deserialize_u128();
        deserialize_f32(); deserialize_f64(); deserialize_char(); deserialize_str();
        deserialize_string(); deserialize_bytes(); deserialize_byte_buf();
        deserialize_option(); deserialize_unit(); deserialize_unit_struct(name: &'static str);
        deserialize_seq(); deserialize_tuple(len: usize);
        deserialize_tuple_struct(name: &'static str, len: usize); deserialize_map();
        deserialize_struct(name: &'static str, fields: &'static [&'static str]);
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
        deserialize_identifier();
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        v: V,
    ) -> Result<V::Value, D::Error> {
        if name == RAW_TOKEN {
            // An `extras`: its text as it is.
            return self.d.deserialize_newtype_struct(name, v);
        }
        let v = self.vis(v);
        self.d.deserialize_newtype_struct(name, v)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, D::Error> {
        // A property the schema does not type here: skipped as it is.
        self.d.deserialize_ignored_any(v)
    }

    fn is_human_readable(&self) -> bool {
        self.d.is_human_readable()
    }
}

macro_rules! forward_vis {
    ($($m:ident($t:ty);)*) => {$(
        fn $m<E: de::Error>(self, x: $t) -> Result<Self::Value, E> {
            self.v.$m(x)
        }
    )*};
}

/// 2^64 and 2^63 as floats: the integral floats that are u64 / i64.
const TWO_64: f64 = 18_446_744_073_709_551_616.0;
const TWO_63: f64 = 9_223_372_036_854_775_808.0;

impl<V> Vis<'_, V> {
    fn null<E: de::Error>(&self) -> Result<(), E> {
        if self.extras.get() {
            Ok(())
        } else {
            Err(E::custom(
                "null, expected a value (no glTF property is null; leave it out instead)",
            ))
        }
    }

    fn saw_key(&self, k: &str) {
        if self.key {
            self.extras.set(k == "extras");
        }
    }
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Vis<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.v.expecting(f)
    }

    forward_vis! {
        visit_bool(bool); visit_i8(i8); visit_i16(i16); visit_i32(i32); visit_i64(i64);
        visit_i128(i128); visit_u8(u8); visit_u16(u16); visit_u32(u32); visit_u64(u64);
        visit_u128(u128); visit_f32(f32); visit_char(char); visit_bytes(&[u8]);
        visit_byte_buf(Vec<u8>);
    }

    fn visit_f64<E: de::Error>(self, x: f64) -> Result<Self::Value, E> {
        // JSON Schema: a number with a zero fractional part is an integer
        // (-0.0 stays a float: its sign is a value).
        if x.fract() == 0.0 && !(x == 0.0 && x.is_sign_negative()) {
            if (0.0..TWO_64).contains(&x) {
                return self.v.visit_u64(x as u64);
            }
            if (-TWO_63..0.0).contains(&x) {
                return self.v.visit_i64(x as i64);
            }
        }
        self.v.visit_f64(x)
    }

    fn visit_str<E: de::Error>(self, x: &str) -> Result<Self::Value, E> {
        self.saw_key(x);
        self.v.visit_str(x)
    }

    fn visit_borrowed_str<E: de::Error>(self, x: &'de str) -> Result<Self::Value, E> {
        self.saw_key(x);
        self.v.visit_borrowed_str(x)
    }

    fn visit_string<E: de::Error>(self, x: String) -> Result<Self::Value, E> {
        self.saw_key(&x);
        self.v.visit_string(x)
    }

    fn visit_borrowed_bytes<E: de::Error>(self, x: &'de [u8]) -> Result<Self::Value, E> {
        self.v.visit_borrowed_bytes(x)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.null()?;
        self.v.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.null()?;
        self.v.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.v.visit_some(Lax {
            d,
            extras: self.extras,
            key: false,
        })
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.v.visit_newtype_struct(Lax {
            d,
            extras: self.extras,
            key: false,
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<Self::Value, A::Error> {
        self.v.visit_seq(Access {
            a,
            extras: self.extras,
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<Self::Value, A::Error> {
        self.v.visit_map(Access {
            a,
            extras: self.extras,
        })
    }

    fn visit_enum<A: EnumAccess<'de>>(self, a: A) -> Result<Self::Value, A::Error> {
        self.v.visit_enum(Access {
            a,
            extras: self.extras,
        })
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Seed<'_, S> {
    type Value = S::Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.s.deserialize(Lax {
            d,
            extras: self.extras,
            key: self.key,
        })
    }
}

impl<'c, A> Access<'c, A> {
    fn seed<S>(&self, s: S, key: bool) -> Seed<'c, S> {
        Seed {
            s,
            extras: self.extras,
            key,
        }
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Access<'_, A> {
    type Error = A::Error;
    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        s: S,
    ) -> Result<Option<S::Value>, A::Error> {
        // An element is never an `extras`.
        self.extras.set(false);
        let s = self.seed(s, false);
        self.a.next_element_seed(s)
    }
    fn size_hint(&self) -> Option<usize> {
        self.a.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Access<'_, A> {
    type Error = A::Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        k: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.extras.set(false);
        let k = self.seed(k, true);
        self.a.next_key_seed(k)
    }
    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, s: S) -> Result<S::Value, A::Error> {
        let s = self.seed(s, false);
        self.a.next_value_seed(s)
    }
    fn size_hint(&self) -> Option<usize> {
        self.a.size_hint()
    }
}

impl<'de, 'c, A: EnumAccess<'de>> EnumAccess<'de> for Access<'c, A> {
    type Error = A::Error;
    type Variant = Access<'c, A::Variant>;
    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        s: S,
    ) -> Result<(S::Value, Self::Variant), A::Error> {
        let extras = self.extras;
        let s = self.seed(s, false);
        let (v, a) = self.a.variant_seed(s)?;
        Ok((v, Access { a, extras }))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Access<'_, A> {
    type Error = A::Error;
    fn unit_variant(self) -> Result<(), A::Error> {
        self.a.unit_variant()
    }
    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, s: S) -> Result<S::Value, A::Error> {
        let s = self.seed(s, false);
        self.a.newtype_variant_seed(s)
    }
    fn tuple_variant<V: Visitor<'de>>(self, len: usize, v: V) -> Result<V::Value, A::Error> {
        let v = Vis {
            v,
            extras: self.extras,
            key: false,
        };
        self.a.tuple_variant(len, v)
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, A::Error> {
        let v = Vis {
            v,
            extras: self.extras,
            key: false,
        };
        self.a.struct_variant(fields, v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn gltf_json_paths_become_json_pointers() {
        for (path, ptr) in [
            ("materials[0].alphaMode", "/materials/0/alphaMode"),
            (
                "meshes[2].primitives[1].attributes[\"TEXCOORD_x\"]",
                "/meshes/2/primitives/1/attributes/TEXCOORD_x",
            ),
            ("bufferViews[3].byteStride", "/bufferViews/3/byteStride"),
            ("extensionsRequired[0] = \"x\"", "/extensionsRequired/0"),
            ("a[\"b/c~d\"]", "/a/b~1c~0d"),
        ] {
            assert_eq!(pointer_of(path), ptr, "{path}");
        }
    }

    fn refused(json: &str) -> String {
        let v: Value = serde_json::from_str(json).unwrap();
        let doc = GltfFile::new(v, Vec::new());
        check(json.as_bytes(), &doc).unwrap_err().to_string()
    }

    fn passes(json: &str) {
        let v: Value = serde_json::from_str(json).unwrap();
        let doc = GltfFile::new(v, Vec::new());
        check(json.as_bytes(), &doc).unwrap();
    }

    /// Wrong types, null and values outside the schema are refused naming
    /// their pointer; integral floats are integers; extras may be null.
    #[test]
    fn the_schema_refuses_wrong_types_with_their_pointer() {
        let asset = r#""asset":{"version":"2.0"}"#;
        for (body, at) in [
            (
                r#""accessors":[{"bufferView":"0","componentType":5126,"count":1,"type":"SCALAR"}]"#,
                "/accessors/0/bufferView",
            ),
            (
                r#""accessors":[{"bufferView":null,"componentType":5126,"count":1,"type":"SCALAR"}]"#,
                "/accessors/0/bufferView",
            ),
            (
                r#""accessors":[{"bufferView":18446744073709551616,"componentType":5126,"count":1,"type":"SCALAR"}]"#,
                "/accessors/0/bufferView",
            ),
            (
                r#""nodes":[{},{"translation":["-1.1",0,0]}]"#,
                "/nodes/1/translation/0",
            ),
            (r#""meshes":[{"primitives":{}}]"#, "/meshes/0/primitives"),
            (r#""animations":{}"#, "/animations"),
            (
                r#""materials":[{"pbrMetallicRoughness":"red"}]"#,
                "/materials/0/pbrMetallicRoughness",
            ),
            (
                r#""materials":[{"alphaMode":"GARBAGE"}]"#,
                "/materials/0/alphaMode",
            ),
            (r#""materials":[{"alphaMode":7}]"#, "/materials/0/alphaMode"),
            (
                r#""materials":[{"pbrMetallicRoughness":{"baseColorFactor":[1,2,1,1]}}]"#,
                "/materials/0/pbrMetallicRoughness/baseColorFactor/1",
            ),
        ] {
            let e = refused(&format!("{{{asset},{body}}}"));
            assert!(e.starts_with(&format!("gltf.json: {at}: ")), "{body}: {e}");
        }
        passes(&format!(
            r#"{{{asset},"extras":null,"nodes":[{{"extras":null,"mesh":0.0,"translation":[1.0,-0.0,2]}}],
            "bufferViews":[{{"buffer":0,"byteLength":8.0,"byteOffset":504.0}}]}}"#
        ));
    }
}
