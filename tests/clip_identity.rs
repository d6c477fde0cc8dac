//! Issue 36 item 11: which `.ctl` clip a glTF clip animation edits is the
//! base's `.ctl`'s answer (the channel driving the nodes it animates),
//! never the glTF's `extras.msh.clip.channel`: a forged index does not move
//! the edit into another channel's frames. Built from the committed
//! `samples/anim_rotor.msh` and a `.ctl` written here.

mod common;

use std::path::Path;

use common::{msh2gltf, sample, stderr};
use mshgltf::msh::{self, Nodes};
use mshgltf::unit::ctl;
use serde_json::Value;

fn glb_parts(path: &Path) -> (Value, Vec<u8>) {
    let d = std::fs::read(path).unwrap();
    let n = u32::from_le_bytes(d[12..16].try_into().unwrap()) as usize;
    let json = serde_json::from_slice(&d[20..20 + n]).unwrap();
    let at = 20 + n;
    let len = u32::from_le_bytes(d[at..at + 4].try_into().unwrap()) as usize;
    (json, d[at + 8..at + 8 + len].to_vec())
}

/// A `.ctl` with one looping channel per `(node, first, last)`, each in a
/// component of its own (unit-files-notes §1.7).
fn channels_ctl(channels: &[(i32, f32, f32)]) -> Vec<u8> {
    let mut fixed = vec![0u8; ctl::COMPONENT_FIXED];
    fixed[0..4].copy_from_slice(&3i32.to_le_bytes());
    fixed[0xAC..0xB0].copy_from_slice(&1u32.to_le_bytes());
    let c = ctl::Controller {
        contacts_per_state: 0,
        params: vec![0; ctl::PARAMS],
        states: vec![ctl::State {
            raw: [0u8; ctl::STATE_FIXED],
            contacts: vec![],
        }],
        costs: vec![ctl::NO_EDGE],
        channels: channels
            .iter()
            .map(|&(node, first, last)| ctl::Channel {
                node,
                first,
                last,
                initial: 0.0,
                second_point: -1,
                point: 0,
                rate: 2.0,
                span: 6.283_185_5,
                flags: 1,
            })
            .collect(),
        components: (0..channels.len())
            .map(|i| ctl::Component {
                fixed: fixed.clone(),
                channels: vec![i as i32],
                label: None,
            })
            .collect(),
        group_block: vec![-1; ctl::GROUP_BLOCK],
        groups: vec![],
    };
    ctl::write(&c)
}

/// The clip animation of `.ctl` channel `k`, by its exported extras.
fn clip_of(j: &Value, k: u64) -> usize {
    j["animations"]
        .as_array()
        .unwrap()
        .iter()
        .position(|a| a["extras"]["msh"]["clip"]["channel"].as_u64() == Some(k))
        .expect("the channel's clip")
}

/// An edit of clip `a`: every output value of its samplers moved by 0.25.
fn edit(j: &Value, bin: &mut [u8], a: usize) {
    for s in j["animations"][a]["samplers"].as_array().unwrap() {
        let ac = &j["accessors"][s["output"].as_u64().unwrap() as usize];
        let view = &j["bufferViews"][ac["bufferView"].as_u64().unwrap() as usize];
        let off = view["byteOffset"].as_u64().unwrap_or(0) + ac["byteOffset"].as_u64().unwrap_or(0);
        let n = ac["count"].as_u64().unwrap() * if ac["type"] == "VEC4" { 4 } else { 3 };
        for k in 0..n {
            let at = (off + 4 * k) as usize;
            let v = f32::from_le_bytes(bin[at..at + 4].try_into().unwrap()) + 0.25;
            bin[at..at + 4].copy_from_slice(&v.to_le_bytes());
        }
    }
}

#[test]
fn a_forged_clip_channel_does_not_move_the_edit() {
    let bytes = std::fs::read(sample("anim_rotor.msh")).unwrap();
    let model = msh::decode(&bytes, msh::Mode::Strict).unwrap().model;
    let Nodes::Node38(nodes) = &model.nodes else {
        panic!("38-byte nodes")
    };
    let animated = nodes.iter().position(|n| n.map_start != 0xFFFF).unwrap();
    let other = (0..nodes.len())
        .find(|&n| n != animated)
        .expect("two nodes");
    let full = (model.frame_count - 1) as f32;
    let half = (full / 2.0).floor();
    assert!(half >= 2.0, "frames {full}");
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("rotor.msh");
    std::fs::write(&m, &bytes).unwrap();
    // Channel 0 drives the animated node over the first half, channel 1
    // another node over the second.
    let ctl = channels_ctl(&[(animated as i32, 0.0, half), (other as i32, half, full)]);
    std::fs::write(tmp.path().join("rotor.ctl"), ctl).unwrap();
    let glb = tmp.path().join("rotor.glb");
    let o = msh2gltf().arg(&m).arg(&glb).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let (mut j, mut bin) = glb_parts(&glb);
    let a = clip_of(&j, 0);
    edit(&j, &mut bin, a);
    let honest = tmp.path().join("honest.glb");
    std::fs::write(&honest, common::glb(&j, &bin)).unwrap();
    j["animations"][a]["extras"]["msh"]["clip"]["channel"] = 1.into();
    let forged = tmp.path().join("forged.glb");
    std::fs::write(&forged, common::glb(&j, &bin)).unwrap();
    let write = |glb: &Path, out: &Path| {
        let o = common::gltf2msh()
            .arg(glb)
            .arg("--base")
            .arg(&m)
            .arg("-o")
            .arg(out)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        std::fs::read(out).unwrap()
    };
    let want = write(&honest, &tmp.path().join("honest.msh"));
    assert!(want != bytes, "the honest edit is written");
    let got = write(&forged, &tmp.path().join("forged.msh"));
    assert!(got == want, "the forged channel index moved the edit");
}
