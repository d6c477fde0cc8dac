//! Property tests for the unit-file codecs (unit-files-notes §3.3, §5.1,
//! §5.2): any bytes read without a panic (an error names a rule), and
//! `.cpt` / `.ctl` values written then read come back identical.

use mshgltf::unit::{cpt, ctl, dat};
use proptest::prelude::*;

fn point() -> impl Strategy<Value = cpt::ControlPoint> {
    (
        any::<u32>(),
        -1i32..40,
        -1i32..40,
        prop::array::uniform3(-100f32..100.0),
        prop::array::uniform3(-5f32..5.0),
        "[A-Za-z_0-9]{1,31}",
    )
        .prop_map(
            |(word0, node, carrier, position, direction, name)| cpt::ControlPoint {
                word0,
                node,
                carrier,
                position,
                direction,
                name_field: cpt::name_field(name.as_bytes()),
            },
        )
}

fn channel() -> impl Strategy<Value = ctl::Channel> {
    (0i32..40, 0f32..300.0, 0f32..300.0, any::<u32>()).prop_map(|(node, first, last, flags)| {
        ctl::Channel {
            node,
            first,
            last,
            initial: 0.5,
            second_point: -1,
            point: 1,
            rate: 2.0,
            span: 1.5,
            flags,
        }
    })
}

proptest! {
    #[test]
    fn any_bytes_read_without_panic(data in prop::collection::vec(any::<u8>(), 0..600)) {
        for e in [cpt::read(&data).err(), ctl::read(&data).err()].into_iter().flatten() {
            prop_assert!(e.rule.starts_with("cpt.") || e.rule.starts_with("ctl."), "{e}");
        }
        if let Err(e) = dat::read(&data) {
            prop_assert!(e.rule.starts_with("dat."), "{e}");
        }
    }

    #[test]
    fn cpt_round_trips(points in prop::collection::vec(point(), 0..20)) {
        let c = cpt::ControlPoints { points };
        let bytes = cpt::write(&c);
        prop_assert_eq!(bytes.len(), 4 + 68 * c.points.len());
        prop_assert_eq!(cpt::read(&bytes).unwrap(), c);
    }

    #[test]
    fn ctl_round_trips(channels in prop::collection::vec(channel(), 0..10), groups in prop::collection::vec(0usize..3, 0..4)) {
        let mut comp = vec![0u8; ctl::COMPONENT_FIXED];
        comp[0] = 2;
        let k = channels.len() as i32;
        let c = ctl::Controller {
            contacts_per_state: 0,
            params: vec![7; ctl::PARAMS],
            states: Vec::new(),
            costs: Vec::new(),
            components: vec![ctl::Component { fixed: { let mut f = comp.clone(); f[0xAC..0xB0].copy_from_slice(&(k as u32).to_le_bytes()); f }, channels: (0..k).collect(), label: Some(b"i_eng_b\0".to_vec()) }],
            channels,
            group_block: vec![-1; ctl::GROUP_BLOCK],
            groups: groups.iter().map(|&n| vec![vec![9u8; ctl::ACTION_SIZE]; n]).collect(),
        };
        let bytes = ctl::write(&c);
        prop_assert_eq!(ctl::read(&bytes).unwrap(), c);
    }
}
