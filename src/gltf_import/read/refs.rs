//! References between glTF elements (glTF 2.0 §3.7: an index into a
//! top-level array) read strictly, once for every reader of a user's
//! document: a reference that is there but is not an index of its array
//! is `gltf.json` naming its JSON pointer, never read as absent (a mesh
//! read as "none", a child or a scene root skipped, `/scene` read as 0).
//! The schema check of [`super::parse`] refuses these already; a document
//! made with [`super::GltfFile::new`] is read by the same rule.
//!
//! An index is a JSON integer `>= 0`, or a number with an integral value
//! (`3.0`), as JSON Schema 2020-12 reads it ([`super::extra_u64`]).

use serde_json::Value;

use super::{err, extra_u64};
use crate::gltf_import::ImportError;

/// At most this many characters of a refused value go into a message.
const SHOWN: usize = 60;

/// `v` as JSON text, cut to [`SHOWN`] characters.
fn shown(v: &Value) -> String {
    let t = v.to_string();
    match t.char_indices().nth(SHOWN) {
        Some((k, _)) => format!("{}...", &t[..k]),
        None => t,
    }
}

/// The reference `v` (at JSON pointer `at`) into an array of `len`
/// elements named `of` (`"nodes"`, `"meshes"`): `None` when absent.
///
/// # Errors
/// `gltf.json`, `"{at}: {v} is not an index of the {len} {of}"`, when `v`
/// is present and is not an index `< len`.
pub fn index_at(
    v: Option<&Value>,
    at: &str,
    len: usize,
    of: &str,
) -> Result<Option<usize>, ImportError> {
    let Some(v) = v else { return Ok(None) };
    match extra_u64(v) {
        Some(i) if i < len as u64 => Ok(Some(i as usize)),
        _ => Err(err(
            "gltf.json",
            format!(
                "{at}: {} is not an index of the {len} {of} (an integer >= 0 and < {len})",
                shown(v)
            ),
        )),
    }
}

/// The node list `v` at JSON pointer `at` (a node's `children`, a scene's
/// `nodes`) as indices of the document's `nodes` nodes; empty when absent.
///
/// # Errors
/// `gltf.json` naming `at` when `v` is present and not an array, or
/// `{at}/{k}` for its first element that is not a node index.
pub fn node_list(v: Option<&Value>, at: &str, nodes: usize) -> Result<Vec<usize>, ImportError> {
    let Some(v) = v else { return Ok(Vec::new()) };
    let Some(a) = v.as_array() else {
        return Err(err(
            "gltf.json",
            format!("{at}: {} is not an array of node indices", shown(v)),
        ));
    };
    a.iter()
        .enumerate()
        .map(|(k, c)| {
            index_at(Some(c), &format!("{at}/{k}"), nodes, "nodes").map(|c| c.unwrap_or(0))
        })
        .collect()
}

/// The default scene of the document whose top-level object is `json`
/// with `scenes` scenes: `/scene` (glTF 2.0 §5.17), else 0 when absent
/// (whether scene 0 exists is the caller's to say).
///
/// # Errors
/// `gltf.json` naming `/scene` when it is present and is not an index of
/// the `scenes` scenes.
pub fn default_scene(json: &Value, scenes: usize) -> Result<usize, ImportError> {
    Ok(index_at(json.get("scene"), "/scene", scenes, "scenes")?.unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_present_reference_of_the_wrong_type_is_refused_naming_it() {
        let e = index_at(Some(&json!("1")), "/nodes/2/mesh", 3, "meshes").unwrap_err();
        assert_eq!(e.rule, "gltf.json");
        assert_eq!(
            e.detail,
            "/nodes/2/mesh: \"1\" is not an index of the 3 meshes (an integer >= 0 and < 3)"
        );
        assert!(index_at(Some(&json!(3)), "/x", 3, "meshes").is_err());
        assert!(index_at(Some(&json!(-1)), "/x", 3, "meshes").is_err());
        assert!(index_at(Some(&Value::Null), "/x", 3, "meshes").is_err());
        assert_eq!(
            index_at(Some(&json!(2.0)), "/x", 3, "meshes").unwrap(),
            Some(2)
        );
        assert_eq!(index_at(None, "/x", 3, "meshes").unwrap(), None);
    }

    #[test]
    fn node_lists_name_the_first_bad_element() {
        let at = "/nodes/3/children";
        assert_eq!(node_list(Some(&json!([0, 2])), at, 3).unwrap(), [0, 2]);
        assert_eq!(node_list(None, at, 3).unwrap(), Vec::<usize>::new());
        let e = node_list(Some(&json!([0, "2"])), at, 3).unwrap_err();
        assert!(e.detail.starts_with("/nodes/3/children/1: \"2\""), "{e}");
        let e = node_list(Some(&json!({})), at, 3).unwrap_err();
        assert!(e.detail.starts_with("/nodes/3/children: {}"), "{e}");
    }

    #[test]
    fn the_default_scene_is_0_only_when_absent() {
        assert_eq!(default_scene(&json!({}), 0).unwrap(), 0);
        assert_eq!(default_scene(&json!({"scene": 1}), 2).unwrap(), 1);
        let e = default_scene(&json!({"scene": "0"}), 1).unwrap_err();
        assert!(e.detail.starts_with("/scene: \"0\""), "{e}");
        assert!(default_scene(&json!({"scene": 1}), 1).is_err());
    }
}
