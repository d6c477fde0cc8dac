//! Control points back from a glTF (issue 24 item 3; unit-files-notes
//! §5.1): the inverse of [`super::gltf::add_control_points`]. Each empty
//! carrying `extras.msh.control_point` stands for the `.cpt` point of its
//! `index`; its parent, translation, rotation, scale and name give the
//! point's node, position, direction and magnitude, and name. What the
//! glTF leaves as exported keeps the base's bytes, so an unedited document
//! gives the `.cpt` back byte for byte.
//!
//! - **moved / turned / scaled**: position = the inverse axis map of the
//!   translation; direction = the rotation applied to +Y, of length the
//!   stored magnitude times the empty's Y scale;
//! - **re-parented** to another Res1 node: the point's node (+4) is that
//!   node; the carrier (+8) and the first word are kept;
//! - **renamed**: the name field is the new name (Windows-1251, at most 31
//!   bytes);
//! - **deleted** (no empty for a point) and **added** (a second empty with
//!   the extras of a point: Blender's duplicate) change the list; the
//!   `.ctl` and unit files name points by index, so a warning says which
//!   indices moved.

use crate::gltf_import::read::Elem;
use serde_json::Value;

use super::cpt::{self, ControlPoint, ControlPoints};
use super::gltf::{point_turn, PointTurn, CONTROL_POINT_KEY};
use super::UnitError;
use crate::convention::encode_name;
use crate::gltf_export::{axes, Up};
use crate::gltf_import::matching::strip_blender_suffix;
use crate::gltf_import::GltfFile;

/// Largest difference (glTF units, quaternion components, scale) that is
/// not an edit: the `--base` edit tolerance.
pub const TOL: f32 = 1e-3;

/// The `.cpt` a document gives, and what changed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CptEdit {
    /// The points to write (the base's own records where nothing changed).
    pub cpt: ControlPoints,
    /// One line per change (`control point Dir_1: moved …`); empty when
    /// the document leaves every point as exported.
    pub changes: Vec<String>,
    /// What the game may read differently (point indices that moved).
    pub warnings: Vec<String>,
}

fn f3(v: &Value) -> Option<[f32; 3]> {
    let a = v.as_array().filter(|a| a.len() == 3)?;
    let f = |i: usize| a[i].as_f64().map(|x| x as f32).filter(|x| x.is_finite());
    Some([f(0)?, f(1)?, f(2)?])
}

fn f4(v: &Value) -> Option<[f32; 4]> {
    let a = v.as_array().filter(|a| a.len() == 4)?;
    let f = |i: usize| a[i].as_f64().map(|x| x as f32).filter(|x| x.is_finite());
    Some([f(0)?, f(1)?, f(2)?, f(3)?])
}

fn far(a: &[f32], b: &[f32]) -> bool {
    a.iter().zip(b).any(|(x, y)| (x - y).abs() > TOL)
}

/// The point empty `n` stands for, from base point `b`; `parent_res1` is
/// the Res1 node of its glTF parent (`Some(None)`: the scene root or
/// another node), `n_res1` the model's node count; `changes` gets a line
/// per changed field, `warnings` what cannot be written.
fn point_of(
    n: &Elem,
    b: &ControlPoint,
    (parent_res1, n_res1): (Option<Option<usize>>, usize),
    up: Up,
    (changes, warnings): (&mut Vec<String>, &mut Vec<String>),
) -> Result<ControlPoint, UnitError> {
    let mut p = b.clone();
    let label = b.name();
    let t = n.get("translation").map_or(Some([0.0; 3]), f3);
    let q = n.get("rotation").map_or(Some([0.0, 0.0, 0.0, 1.0]), f4);
    let s = n.get("scale").map_or(Some([1.0; 3]), f3);
    let (Some(t), Some(q), Some(s)) = (t, q, s) else {
        return Err(UnitError::new(
            "cpt.edit",
            format!("control point {label:?}: a translation, rotation or scale that is not finite numbers"),
        ));
    };
    if far(&t, &axes::vec3(up, b.position)) {
        p.position = axes::vec3_inv(up, t);
        changes.push(format!(
            "control point {label}: moved to {:?} (game axes, in its node's frame)",
            p.position
        ));
    }
    let stored = axes::vec3(up, b.direction);
    // A roll (same direction) is not written: differences warns about it.
    let turn = point_turn(q, stored);
    if matches!(turn, PointTurn::Turned(_)) || far(&s[1..2], &[1.0]) {
        let d = match turn {
            PointTurn::Turned(d) => d,
            _ => axes::normalize3(stored.map(f64::from)).unwrap_or([0.0, 1.0, 0.0]),
        };
        let m = b.magnitude() * s[1];
        p.direction = axes::vec3_inv(up, d.map(|x| x * m));
        changes.push(format!(
            "control point {label}: direction {:?} (length {m})",
            p.direction
        ));
    }
    match parent_res1 {
        Some(Some(r)) if i32::try_from(r).is_ok_and(|r| r != b.node) => {
            changes.push(format!(
                "control point {label}: now on node {r} (was {})",
                b.node
            ));
            p.node = r as i32;
        }
        Some(None) if usize::try_from(b.node).is_ok_and(|n| n < n_res1) => {
            warnings.push(format!(
                "control point {label}: moved out of its node to the scene root; a point sits on a node: kept on node {}",
                b.node
            ));
        }
        _ => {}
    }
    let name = n.get("name").and_then(Value::as_str).unwrap_or("");
    let plain = strip_blender_suffix(name);
    if !name.is_empty() && plain != label && !is_unique_variant(plain, &label) {
        let bytes = encode_name(plain).filter(|b| b.len() <= 31).ok_or_else(|| {
            UnitError::new(
                "cpt.name",
                format!("control point {label:?} renamed {plain:?}: not Windows-1251 or longer than 31 bytes"),
            )
        })?;
        p.name_field = cpt::name_field(&bytes);
        changes.push(format!("control point {label}: renamed {plain}"));
    }
    Ok(p)
}

/// True for the names the exporter's namer makes from `label` when two
/// points share it (`label.1`, `label.2`, …).
fn is_unique_variant(name: &str, label: &str) -> bool {
    name.strip_prefix(label)
        .and_then(|r| r.strip_prefix('.'))
        .is_some_and(|r| !r.is_empty() && r.bytes().all(|c| c.is_ascii_digit()))
}

/// Rebuilds the base's `.cpt` from the control-point empties of `doc`.
/// `parent` is every glTF node's parent ([`crate::gltf_import::matching::parents`]),
/// `res1_of` every glTF node's Res1 node (`None`: not a Res1 node).
///
/// # Errors
/// `cpt.edit` (non-finite transforms, an index past the base's points),
/// `cpt.name` (a new name that is not Windows-1251 or over 31 bytes),
/// `gltf.json` naming a point's `index` that is not an integer >= 0.
pub fn read_points(
    doc: &GltfFile,
    parent: &[Option<usize>],
    res1_of: &[Option<usize>],
    base: &ControlPoints,
    up: Up,
) -> Result<CptEdit, UnitError> {
    let nodes = doc.nodes();
    let mut claims: Vec<Vec<usize>> = vec![Vec::new(); base.points.len()];
    for (g, n) in nodes.iter().enumerate() {
        let cp = &n["extras"]["msh"][CONTROL_POINT_KEY];
        let Some(v) = cp.get("index") else {
            continue;
        };
        // `3.0` is 3 (as the extras vocabulary reads it); a wrong type is
        // never read as "not a point", which would delete the base's.
        let i = crate::gltf_import::read::extra_u64(v).ok_or_else(|| {
            UnitError::new(
                "gltf.json",
                format!(
                    "/nodes/{g}/extras/msh/{CONTROL_POINT_KEY}/index: {v} is not an integer >= 0"
                ),
            )
        })?;
        let slot = usize::try_from(i)
            .ok()
            .and_then(|i| claims.get_mut(i))
            .ok_or_else(|| {
                UnitError::new(
                    "cpt.edit",
                    format!(
                        "node {g}: control point index {i}, the base has {} points",
                        base.points.len()
                    ),
                )
            })?;
        slot.push(g);
    }
    let n_res1 = res1_of.iter().flatten().max().map_or(0, |m| m + 1);
    let mut out = CptEdit::default();
    let mut added = Vec::new();
    let mut first_shift: Option<usize> = None;
    for (i, (b, gs)) in base.points.iter().zip(&claims).enumerate() {
        let Some((&g, copies)) = gs.split_first() else {
            out.changes
                .push(format!("control point {}: deleted", b.name()));
            first_shift.get_or_insert(i);
            continue;
        };
        let pr = |g: usize| {
            let r = parent
                .get(g)
                .map(|p| p.and_then(|p| res1_of.get(p).copied().flatten()));
            (r, n_res1)
        };
        let p = point_of(
            &nodes[g],
            b,
            pr(g),
            up,
            (&mut out.changes, &mut out.warnings),
        )?;
        out.cpt.points.push(p);
        for &c in copies {
            let mut ch = Vec::new();
            let p = point_of(&nodes[c], b, pr(c), up, (&mut ch, &mut out.warnings))?;
            out.changes.push(format!(
                "control point {}: added (a copy of {})",
                p.name(),
                b.name()
            ));
            added.push(p);
        }
    }
    if let Some(i) = first_shift {
        out.warnings.push(format!(
            "control points from index {i} on have new indices: a .ctl or unit file that names points by index may now name others"
        ));
    }
    out.cpt.points.extend(added);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::gltf::rotation_to;
    use super::*;
    use serde_json::json;

    fn base() -> ControlPoints {
        let pt = |name: &str, node: i32, pos: [f32; 3], dir: [f32; 3]| ControlPoint {
            word0: 0x8000_0000,
            node,
            carrier: 1,
            position: pos,
            direction: dir,
            name_field: cpt::name_field(name.as_bytes()),
        };
        ControlPoints {
            points: vec![
                pt("Dir_1", 1, [1.0, 2.0, 3.0], [0.0, 2.0, 0.0]),
                pt("foot", 0, [0.25, -0.5, 0.0], [0.0, 0.0, 1.0]),
                pt("foot", 7, [0.0; 3], [1.0, 0.0, 0.0]),
            ],
        }
    }

    /// The document msh2gltf writes: Res1 nodes 0 and 1, then one empty
    /// per point (the third, on a node outside the model, at the root).
    fn exported(b: &ControlPoints) -> Value {
        let up = Up::Y;
        let names = ["Dir_1", "foot", "foot.1"];
        let mut nodes = vec![
            json!({"name": "Body", "children": [1, 3]}),
            json!({"name": "Gun", "children": [2]}),
        ];
        for (i, p) in b.points.iter().enumerate() {
            nodes.push(
                json!({"name": names[i], "translation": axes::vec3(up, p.position),
                "rotation": rotation_to(axes::vec3(up, p.direction)),
                "extras": {"msh": {CONTROL_POINT_KEY: {"index": i, "name": p.name()}}}}),
            );
        }
        nodes.swap(3, 2);
        nodes[1]["children"] = json!([3]);
        nodes[0]["children"] = json!([1, 2]);
        json!({"scene": 0, "scenes": [{"nodes": [0, 4]}], "nodes": nodes})
    }

    fn run(doc: Value) -> Result<CptEdit, UnitError> {
        let doc = GltfFile::new(doc, Vec::new());
        let parent = crate::gltf_import::matching::parents(&doc).unwrap();
        let res1_of: Vec<Option<usize>> = (0..parent.len()).map(|g| (g < 2).then_some(g)).collect();
        read_points(&doc, &parent, &res1_of, &base(), Up::Y)
    }

    /// glTF node of point `i` in [`exported`].
    fn node(i: usize) -> usize {
        [3, 2, 4][i]
    }

    #[test]
    fn an_integral_float_index_is_the_point_and_a_wrong_type_is_refused() {
        let mut doc = exported(&base());
        doc["nodes"][node(1)]["extras"]["msh"][CONTROL_POINT_KEY]["index"] = json!(1.0);
        let e = run(doc.clone()).unwrap();
        assert_eq!(cpt::write(&e.cpt), cpt::write(&base()), "{:?}", e.changes);
        doc["nodes"][node(1)]["extras"]["msh"][CONTROL_POINT_KEY]["index"] = json!("1");
        let e = run(doc).unwrap_err();
        assert_eq!(e.rule, "gltf.json");
        assert!(
            e.detail.starts_with(&format!(
                "/nodes/{}/extras/msh/{CONTROL_POINT_KEY}/index: ",
                node(1)
            )),
            "{e}"
        );
    }

    #[test]
    fn unedited_points_keep_their_bytes() {
        let e = run(exported(&base())).unwrap();
        assert_eq!(cpt::write(&e.cpt), cpt::write(&base()));
        assert!(e.changes.is_empty() && e.warnings.is_empty(), "{e:?}");
    }

    #[test]
    fn moved_turned_scaled_renamed_and_reparented_points_are_written() {
        let mut d = exported(&base());
        let n = node(0);
        d["nodes"][n]["translation"] = json!([1.5, 3.0, -2.0]);
        d["nodes"][n]["rotation"] = json!(rotation_to([1.0, 0.0, 0.0]));
        d["nodes"][n]["scale"] = json!([1.0, 1.5, 1.0]);
        d["nodes"][n]["name"] = json!("Muzzle.001");
        // Point 1 re-parented from Body (0) to Gun (1).
        d["nodes"][0]["children"] = json!([1]);
        d["nodes"][1]["children"] = json!([3, 2]);
        let e = run(d).unwrap();
        let p = &e.cpt.points[0];
        assert_eq!(p.position, [1.5, 2.0, 3.0]);
        assert!(
            far(&p.direction, &[1.0, 0.0, 0.0]) && !far(&p.direction, &[3.0, 0.0, 0.0]),
            "{:?}",
            p.direction
        );
        assert_eq!(p.name(), "Muzzle");
        assert_eq!((p.word0, p.carrier, p.node), (0x8000_0000, 1, 1));
        assert_eq!(e.cpt.points[1].node, 1);
        assert_eq!(e.cpt.points[2], base().points[2]);
        assert_eq!(e.changes.len(), 4, "{:?}", e.changes);
    }

    #[test]
    fn deleted_and_copied_points_change_the_list_with_a_warning() {
        let mut d = exported(&base());
        let copy = d["nodes"][node(0)].clone();
        d["nodes"].as_array_mut().unwrap().push(copy);
        d["nodes"][1]["children"] = json!([3, 5]);
        // Delete point 1 (node 2): drop it from Body's children and its extras.
        d["nodes"][0]["children"] = json!([1]);
        d["nodes"][2]["extras"] = json!({});
        let e = run(d).unwrap();
        let names: Vec<String> = e.cpt.points.iter().map(ControlPoint::name).collect();
        assert_eq!(names, ["Dir_1", "foot", "Dir_1"]);
        assert_eq!(e.cpt.points[1], base().points[2]);
        assert!(e.warnings[0].contains("from index 1"), "{:?}", e.warnings);
        assert_eq!(e.changes.len(), 2, "{:?}", e.changes);
    }

    #[test]
    fn bad_points_are_refused() {
        let mut d = exported(&base());
        d["nodes"][node(0)]["name"] = json!("a name far longer than thirty-one bytes");
        assert_eq!(run(d).unwrap_err().rule, "cpt.name");
        let mut d = exported(&base());
        d["nodes"][node(1)]["extras"]["msh"][CONTROL_POINT_KEY]["index"] = json!(9);
        assert_eq!(run(d).unwrap_err().rule, "cpt.edit");
        let mut d = exported(&base());
        d["nodes"][node(1)]["translation"] = json!([1.0, "x", 0.0]);
        assert_eq!(run(d).unwrap_err().rule, "cpt.edit");
    }
}
