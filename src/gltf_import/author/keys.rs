//! The Res1 nodes and Res8 keys of an authored model (module docs of
//! [`super`], points 1, 2 and 5): the baked rigid keys in game axes,
//! reduced, with the node names and flags.

use serde_json::Value;

use super::bake::NodeInfo;
use super::names::cp1251_name;
use super::tree::Tree;
use super::{AuthorCx, AuthorReport};
use crate::gltf_export::axes;
use crate::gltf_import::animation::{self, quantize_gltf_rotation};
use crate::gltf_import::read::msh_u64;
use crate::msh::build::{ModelBuilder, NodeSpec};
use crate::msh::AnimKey24;

/// Nodes and keys: adds every Res1 node of `tree` to `b` with its cells,
/// its keys (game axes, the retail `wxyz` layout, reduced with
/// [`super::AuthorOptions::reduce_keys`], all-equal keys made one static
/// key), its Res10 name (renames reported) and its `hdr0` flags extra.
pub(super) fn add_nodes(
    b: &mut ModelBuilder,
    cx: &AuthorCx,
    tree: &Tree,
    info: &[NodeInfo],
    mut cells: Vec<Vec<(usize, u16)>>,
    report: &mut AuthorReport,
) {
    let nodes = cx.doc.nodes();
    for (r, &g) in tree.order.iter().enumerate() {
        let nd = &nodes[g];
        let keys = node_keys(cx, &info[r]);
        let name = nd
            .get("name")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let name = name.map(|s| {
            let (bytes, replaced) = cp1251_name(s);
            if replaced {
                report.renamed_nodes.push(r);
            }
            bytes
        });
        if keys.len() > 1 {
            report.animated_nodes.push(
                nd.get("name")
                    .and_then(Value::as_str)
                    .map_or_else(|| format!("node{r}"), str::to_string),
            );
        }
        let flags = msh_u64(nd, "flags")
            .filter(|&f| f <= u64::from(u16::MAX))
            .unwrap_or(0) as u16;
        b.add_node(NodeSpec {
            name,
            parent: tree.parent[g].and_then(|p| tree.res1_of[p]),
            flags,
            cells: std::mem::take(&mut cells[r]),
            animated: keys.len() > 1,
            keys,
        });
    }
}

/// The AnimKey24 keys of one node: its baked keys at frames `0..` in game
/// axes, quaternions in the retail layout (new models are written in the
/// retail convention, gltf-mapping.md "Reverse rules": w first), reduced
/// when asked, one key when all are equal ([`same_key`]).
fn node_keys(cx: &AuthorCx, ni: &NodeInfo) -> Vec<AnimKey24> {
    let (up, layout) = (cx.up, crate::convention::Conventions::RETAIL.quat);
    let mut keys: Vec<AnimKey24> = ni
        .keys
        .iter()
        .enumerate()
        .map(|(f, &(t, q))| AnimKey24 {
            pos: axes::vec3_inv(up, t),
            time: f as f32,
            q: quantize_gltf_rotation(up, layout, q),
        })
        .collect();
    if cx.opts.reduce_keys && keys.len() > 2 {
        let protect = vec![false; keys.len()];
        keys = animation::reduce(keys, &protect, layout);
    }
    if keys.iter().all(|k| same_key(k, &keys[0])) {
        keys.truncate(1);
    }
    keys
}

/// Keys equal up to float noise: positions by
/// [`crate::convention::quant::same_translation`] (the rule of
/// [`animation::KEY_POS_TOL`]) and stored quaternions within 1 (either
/// sign).
fn same_key(a: &AnimKey24, b: &AnimKey24) -> bool {
    let pos = crate::convention::quant::same_translation(a.pos, b.pos);
    let q = |s: i32| (0..4).all(|k| (i32::from(a.q[k]) - s * i32::from(b.q[k])).abs() <= 1);
    pos && (q(1) || q(-1))
}
