//! The unit layer of one model's conversion: after
//! [`crate::convert::convert`], read the model's `.cpt`/`.ctl` siblings and
//! add control points and clips to its glTF (unit-files-notes §6 steps 1–2).

use serde_json::Value;

use super::siblings::Siblings;
use super::{clips, gltf};
use crate::convert::Converted;
use crate::gltf_export::{ExportError, Up};

/// What [`decorate`] added.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Added {
    /// Control-point empties.
    pub control_points: usize,
    /// Clip animations.
    pub clips: usize,
}

/// The `extras.msh` object of a glTF node, when it has one.
fn msh_extras(n: &gltf_json::Node) -> Option<Value> {
    let raw = n.extras.as_ref()?;
    let v: Value = serde_json::from_str(raw.get()).ok()?;
    v.get("msh").cloned()
}

/// The number of leading glTF nodes that are Res1 nodes (`extras.msh.node
/// == i`, no cell): 0 for a legacy 24-byte node table.
fn res1_nodes(root: &gltf_json::Root) -> usize {
    root.nodes
        .iter()
        .enumerate()
        .take_while(|(i, n)| {
            msh_extras(n).is_some_and(|m| {
                m.get("node").and_then(Value::as_u64) == Some(*i as u64) && m.get("cell").is_none()
            })
        })
        .count()
}

/// Adds `siblings`' control points and clips to `c` (exported with `fps`
/// and `up`). A sibling that breaks its layout, points or channels on
/// nodes the model does not have, and siblings of a legacy model are
/// reported in `c.warnings`; the model still converts.
///
/// # Errors
/// `limits.work` when the siblings' points and clips with the model's
/// nodes cost more than `max_work` units ([`Siblings::work`], counted from
/// their headers before they are parsed; docs/safety.md "Bounded work");
/// `gltf.json` when extras cannot be serialised.
pub fn decorate(
    c: &mut Converted,
    siblings: &Siblings,
    fps: f32,
    up: Up,
    max_work: u64,
) -> Result<Added, ExportError> {
    if siblings.cpt.is_some() || siblings.ctl.is_some() {
        let (units, what) = siblings.work(c.exported.root.nodes.len());
        if units > max_work {
            return Err(ExportError::Model {
                rule: "limits.work",
                detail: format!(
                    "{what} make {units} work units, over the budget of {max_work} (docs/safety.md \"Bounded work\"; raise it with --max-work)"
                ),
            });
        }
    }
    let parsed = siblings.parse();
    c.warnings.extend(parsed.warnings);
    if parsed.cpt.is_none() && parsed.ctl.is_none() {
        return Ok(Added::default());
    }
    let root = &mut c.exported.root;
    let n = res1_nodes(root);
    if n == 0 {
        c.warnings.push(
            "legacy node table: .cpt/.ctl siblings ignored (no Res1 nodes to hang them on)".into(),
        );
        return Ok(Added::default());
    }
    let mut added = Added::default();
    if let Some(cpt) = &parsed.cpt {
        added.control_points = gltf::add_control_points(root, cpt, n, up, &mut c.warnings)?.len();
    }
    let mut table = (Vec::new(), Vec::new());
    if let Some(ctl) = &parsed.ctl {
        let names: Vec<String> = root.nodes[..n]
            .iter()
            .enumerate()
            .map(|(i, nd)| nd.name.clone().unwrap_or_else(|| format!("node{i}")))
            .collect();
        let mut animated = vec![false; n];
        if let Some(a) = root.animations.first() {
            for ch in &a.channels {
                if let Some(x) = animated.get_mut(ch.target.node.value()) {
                    *x = true;
                }
            }
        }
        let list = clips::derive(ctl, &names, &animated, &mut c.warnings);
        let anims = gltf::add_clips(root, &mut c.exported.bin, &list, fps)?;
        added.clips = anims.iter().flatten().count();
        table = (list, anims);
    }
    gltf::mirror_in_scene(root, &table.0, &table.1, added.control_points)?;
    Ok(added)
}
