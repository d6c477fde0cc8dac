//! Control points and clips end to end on the committed sample
//! `samples/anim_rotor.msh` (no ../shared): a `.cpt` and a `.ctl` written
//! beside a copy of it by the test; `msh2gltf` adds the empty under its
//! node and one clip animation over the channel's frames; `gltf2msh
//! --base` gives the model back byte for byte; a broken `.ctl` is a
//! warning and the model still converts with its control points.

use std::path::Path;
use std::process::Command;

use mshgltf::msh::{self, Nodes};
use mshgltf::unit::{cpt, ctl};
use serde_json::Value;

mod common;

/// The BIN chunk of a GLB.
fn glb_bin(path: &Path) -> Vec<u8> {
    let d = std::fs::read(path).unwrap();
    let n = u32::from_le_bytes(d[12..16].try_into().unwrap()) as usize;
    let at = 20 + n;
    let len = u32::from_le_bytes(d[at..at + 4].try_into().unwrap()) as usize;
    d[at + 8..at + 8 + len].to_vec()
}

fn glb_json(path: &Path) -> Value {
    let d = std::fs::read(path).unwrap();
    let n = u32::from_le_bytes(d[12..16].try_into().unwrap()) as usize;
    serde_json::from_slice(&d[20..20 + n]).unwrap()
}

fn controller(node: i32, first: f32, last: f32) -> ctl::Controller {
    let mut fixed = vec![0u8; ctl::COMPONENT_FIXED];
    fixed[0..4].copy_from_slice(&3i32.to_le_bytes());
    fixed[0xAC..0xB0].copy_from_slice(&1u32.to_le_bytes());
    let mut state = [0u8; ctl::STATE_FIXED];
    state[0x14..0x18].copy_from_slice(&0f32.to_le_bytes());
    ctl::Controller {
        contacts_per_state: 0,
        params: vec![0; ctl::PARAMS],
        states: vec![ctl::State {
            raw: state,
            contacts: vec![],
        }],
        costs: vec![ctl::NO_EDGE],
        channels: vec![ctl::Channel {
            node,
            first,
            last,
            initial: 0.0,
            second_point: -1,
            point: 0,
            rate: 2.0,
            span: 6.283_185_5,
            flags: 1,
        }],
        components: vec![ctl::Component {
            fixed,
            channels: vec![0],
            label: None,
        }],
        group_block: vec![-1; ctl::GROUP_BLOCK],
        groups: vec![],
    }
}

#[test]
fn sample_model_gets_control_points_and_a_clip_and_round_trips() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(root.join("samples/anim_rotor.msh")).unwrap();
    let model = msh::decode(&bytes, msh::Mode::Strict).unwrap().model;
    let Nodes::Node38(nodes) = &model.nodes else {
        panic!("38-byte nodes")
    };
    let animated = nodes
        .iter()
        .position(|n| n.map_start != 0xFFFF)
        .expect("an animated node") as i32;
    let last = (model.frame_count - 1) as f32;
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("anim_rotor.msh");
    std::fs::write(&m, &bytes).unwrap();
    let points = cpt::ControlPoints {
        points: vec![cpt::ControlPoint {
            word0: 0x8000_0000,
            node: animated,
            carrier: animated,
            position: [0.5, 0.25, 1.0],
            direction: [0.0, 0.0, 2.0],
            name_field: cpt::name_field(b"Dir_1"),
        }],
    };
    std::fs::write(tmp.path().join("anim_rotor.cpt"), cpt::write(&points)).unwrap();
    std::fs::write(
        tmp.path().join("ANIM_ROTOR.CTL"),
        ctl::write(&controller(animated, 0.0, last)),
    )
    .unwrap();
    let glb = tmp.path().join("out.glb");
    let o = Command::new(env!("CARGO_BIN_EXE_msh2gltf"))
        .arg(&m)
        .arg(&glb)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j = glb_json(&glb);
    let gn = j["nodes"].as_array().unwrap();
    let e = gn
        .iter()
        .position(|n| n["name"] == "Dir_1")
        .expect("the empty");
    assert!(gn[animated as usize]["children"]
        .as_array()
        .unwrap()
        .contains(&Value::from(e)));
    // glTF (x, y, z) = game (x, z, -y).
    assert_eq!(gn[e]["translation"], serde_json::json!([0.5, 1.0, -0.25]));
    assert_eq!(
        gn[e]["extras"]["msh"]["control_point"]["magnitude"],
        serde_json::json!(2.0)
    );
    let anims = j["animations"].as_array().unwrap();
    assert_eq!(anims.len(), 2, "timeline + one clip");
    let clip = &anims[1];
    assert_eq!(clip["extras"]["msh"]["clip"]["kind"], "channel");
    assert_eq!(
        clip["extras"]["msh"]["clip"]["last"],
        serde_json::json!(last)
    );
    for ch in clip["channels"].as_array().unwrap() {
        assert_eq!(ch["target"]["node"], serde_json::json!(animated));
    }
    assert_eq!(
        j["scenes"][0]["extras"]["msh"]["clips"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let back = tmp.path().join("back.msh");
    let o = Command::new(env!("CARGO_BIN_EXE_gltf2msh"))
        .arg(&glb)
        .arg("-o")
        .arg(&back)
        .arg("--base")
        .arg(&m)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(&back).unwrap(), bytes, "unedited round trip");
    assert!(
        !tmp.path().join("back.cpt").exists(),
        "unedited points write no .cpt"
    );

    moved_point_writes_the_cpt_beside(tmp.path(), &glb, &m, &bytes, &points, e);

    // A broken .ctl: a warning naming it; the points still come out.
    std::fs::write(tmp.path().join("ANIM_ROTOR.CTL"), [0u8; 7]).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_msh2gltf"))
        .arg(&m)
        .arg(&glb)
        .arg("--force")
        .output()
        .unwrap();
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("ANIM_ROTOR.CTL: ctl.size"), "{err}");
    let j = glb_json(&glb);
    assert_eq!(j["animations"].as_array().unwrap().len(), 1);
    assert!(j["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n["name"] == "Dir_1"));
}

/// Dir_1 (glTF node `e`) moved in the glTF of the bare model `m`: the
/// model comes back unchanged and `back.cpt` beside it holds the move.
fn moved_point_writes_the_cpt_beside(
    dir: &Path,
    glb: &Path,
    m: &Path,
    bytes: &[u8],
    points: &cpt::ControlPoints,
    e: usize,
) {
    let back = dir.join("back.msh");
    // Dir_1 moved in the glTF: the model unchanged, back.cpt beside it.
    let mut j = glb_json(glb);
    j["nodes"][e]["translation"] = serde_json::json!([0.75, 1.0, -0.25]);
    let bin = glb_bin(glb);
    let edited = dir.join("edited.glb");
    std::fs::write(&edited, common::glb(&j, &bin)).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_gltf2msh"))
        .arg(&edited)
        .arg("-o")
        .arg(&back)
        .arg("--force")
        .arg("--base")
        .arg(m)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("control point Dir_1: moved to [0.75, 0.25, 1.0]"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&back).unwrap(),
        bytes,
        "the model is unchanged"
    );
    let written = cpt::read(&std::fs::read(dir.join("back.cpt")).unwrap()).unwrap();
    let mut want = points.clone();
    want.points[0].position = [0.75, 0.25, 1.0];
    assert_eq!(written, want);
}
