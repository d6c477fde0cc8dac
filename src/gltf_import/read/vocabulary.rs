//! The types of the `extras.msh` vocabulary, checked once when a document
//! is read (issue 36 item 3): extras are not in the glTF schema, so
//! [`super::schema`] keeps them raw; the keys the importers read back
//! ([`TYPED_KEYS`], [`TYPED_INNER_KEYS`], gltf-mapping.md "Extras") must
//! hold their type, or the document is refused naming the JSON pointer,
//! never read as absent.

use serde_json::{Map, Value};

use super::{err, extra_u64, GltfFile, TopArray};
use crate::gltf_export::msh_extras::{ExtraType, TYPED_INNER_KEYS, TYPED_KEYS};
use crate::gltf_import::ImportError;

/// Whether `v` is of type `t`.
fn holds(v: &Value, t: ExtraType) -> bool {
    match t {
        ExtraType::Index => extra_u64(v).is_some(),
        ExtraType::Number => v.as_f64().is_some_and(f64::is_finite),
        ExtraType::Text => v.is_string(),
        ExtraType::TextOrNull => v.is_string() || v.is_null(),
        ExtraType::Object => v.is_object(),
        ExtraType::Array => v.is_array(),
    }
}

/// What type `t` is, for a message.
fn expected(t: ExtraType) -> &'static str {
    match t {
        ExtraType::Index => "an integer >= 0",
        ExtraType::Number => "a number",
        ExtraType::Text => "a string",
        ExtraType::TextOrNull => "a string or null",
        ExtraType::Object => "an object",
        ExtraType::Array => "an array",
    }
}

fn refuse(at: &str, v: &Value, t: ExtraType) -> ImportError {
    err(
        "gltf.json",
        format!(
            "{at}: {v} is not {} (the extras.msh vocabulary, gltf-mapping.md \"Extras\")",
            expected(t)
        ),
    )
}

/// Checks one element's `extras.msh` against the keys of array `list`.
fn check_msh(list: &str, i: usize, msh: &Value) -> Result<(), ImportError> {
    let at = format!("/{list}/{i}/extras/msh");
    let Some(msh) = msh.as_object() else {
        return Err(refuse(&at, msh, ExtraType::Object));
    };
    for &(_, key, t) in TYPED_KEYS.iter().filter(|k| k.0 == list) {
        let Some(v) = msh.get(key) else { continue };
        if !holds(v, t) {
            return Err(refuse(&format!("{at}/{key}"), v, t));
        }
        if let Some(o) = v.as_object() {
            check_inner(&format!("{at}/{key}"), key, o)?;
        }
    }
    Ok(())
}

fn check_inner(at: &str, outer: &str, o: &Map<String, Value>) -> Result<(), ImportError> {
    for &(_, key, t) in TYPED_INNER_KEYS.iter().filter(|k| k.0 == outer) {
        if let Some(v) = o.get(key).filter(|v| !holds(v, t)) {
            return Err(refuse(&format!("{at}/{key}"), v, t));
        }
    }
    Ok(())
}

/// Checks the `extras.msh` of every element of the arrays the vocabulary
/// types (an element without one is not checked).
///
/// # Errors
/// `gltf.json` naming the pointer of the first value of the wrong type.
pub(super) fn check(doc: &GltfFile) -> Result<(), ImportError> {
    for t in [
        TopArray::Nodes,
        TopArray::Meshes,
        TopArray::Materials,
        TopArray::Scenes,
        TopArray::Animations,
    ] {
        for (i, e) in doc.list(t).iter().enumerate() {
            if let Some(msh) = e.get("extras").and_then(|x| x.get("msh")) {
                check_msh(t.name(), i, msh)?;
            }
        }
    }
    Ok(())
}
