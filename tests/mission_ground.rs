//! The ground rule of mission-notes §5.4 ([`mshgltf::mission::ground`],
//! issue 37 item 2) on a generated map (`tests/land`: 4 × 4 squares of 10
//! units; over x, y ≥ 10 the ground is the plane `0.1 x + 0.05 y + 1`, so
//! every expected height below is exact arithmetic): a unit's lowest
//! vertex (turned as placed) on the ground, scenery keeping its offset, a
//! building on the mean ground of its outer ring (turned and moved), a
//! flagged building and a hosted unit kept, off the map; and
//! [`ground::settle`] over a write-back: the warning naming each moved or
//! new object off the ground, `drop` setting it down, unmoved objects
//! left alone.
//!
//! Tolerance: 1e-4 (f32 sums of a few dozen samples of heights near 5).

mod land;

use glam::DVec3;
use mshgltf::convention::Up;
use mshgltf::gltf_import::GltfFile;
use mshgltf::mission::back::{Origin, Written};
use mshgltf::mission::ground::{self, Footing, Footings, Height, Rule};
use mshgltf::mission::ir::{Mission, PlacedObject};
use mshgltf::terrain::ground::Ground;
use serde_json::json;

const TOL: f32 = 1e-4;

/// The plane of the map over x, y ≥ 10.
fn plane(x: f32, y: f32) -> f32 {
    0.1 * x + 0.05 * y + 1.0
}

fn object(kind: u32, p: [f32; 3], rz: f32) -> PlacedObject {
    PlacedObject {
        kind,
        marker: 0x8000_0002,
        path: b"thing".to_vec(),
        position: p,
        rotation: [0.0, 0.0, rz],
        scale: [1.0; 3],
        host: -1,
        vertex: -1,
        property_word: 1,
        ..Default::default()
    }
}

fn ground_of(h: Height) -> (f32, Rule) {
    match h {
        Height::Ground { z, rule } => (z, rule),
        other => panic!("not on the ground: {other:?}"),
    }
}

#[test]
fn a_unit_stands_on_its_lowest_vertex_turned_as_placed() {
    let l = land::tiny_land(4);
    let g = Ground::new(&l);
    let footing = Footing {
        points: vec![[1.0, 1.0, -0.5], [-1.0, 2.0, 2.0], [2.0, -1.5, -0.8]],
        ..Default::default()
    };
    // A turn about z leaves every z: the lowest is -0.8.
    let u = object(1, [25.0, 25.0, 0.0], 0.7);
    let (z, rule) = ground_of(ground::grounded_z(&g, &u, &footing, 0.0));
    assert_eq!(rule, Rule::Unit);
    assert!((z - (plane(25.0, 25.0) + 0.8)).abs() < TOL, "{z}");
    // Rx(π/2) maps y to z: the lowest is then min y = -1.5.
    let mut tipped = u.clone();
    tipped.rotation = [std::f32::consts::FRAC_PI_2, 0.0, 0.0];
    let (z, _) = ground_of(ground::grounded_z(&g, &tipped, &footing, 0.0));
    assert!((z - (plane(25.0, 25.0) + 1.5)).abs() < TOL, "{z}");
    // No vertices: the origin on the ground.
    let (z, _) = ground_of(ground::grounded_z(&g, &u, &Footing::default(), 0.0));
    assert!((z - plane(25.0, 25.0)).abs() < TOL);
    // Inside a building: kept.
    let mut hosted = u.clone();
    hosted.host = 4;
    hosted.vertex = 0;
    assert!(matches!(
        ground::grounded_z(&g, &hosted, &footing, 0.0),
        Height::Kept(_)
    ));
    // Off the map.
    let off = object(1, [55.0, 25.0, 0.0], 0.0);
    assert_eq!(ground::grounded_z(&g, &off, &footing, 0.0), Height::OffMap);
}

#[test]
fn scenery_keeps_its_offset_above_the_ground() {
    let l = land::tiny_land(4);
    let g = Ground::new(&l);
    let old = [15.0, 15.0, plane(15.0, 15.0) + 3.0];
    let offset = ground::scenery_offset(&g, old).unwrap();
    assert!((offset - 3.0).abs() < TOL);
    for kind in [2, 3] {
        let t = object(kind, [30.0, 20.0, 0.0], 1.0);
        let (z, rule) = ground_of(ground::grounded_z(&g, &t, &Footing::default(), offset));
        assert_eq!(rule, Rule::Scenery);
        assert!((z - (plane(30.0, 20.0) + 3.0)).abs() < TOL, "{z}");
    }
    // A new object of a record: the median offset of its placements.
    let mut m = Mission::default();
    for (k, off) in [1.0f32, 5.0, 2.0].into_iter().enumerate() {
        let (x, y) = (12.0 + 5.0 * k as f32, 30.0);
        m.objects.push(object(2, [x, y, plane(x, y) + off], 0.0));
    }
    m.objects.push(object(0, [20.0, 20.0, 99.0], 0.0));
    assert!((ground::record_offset(&g, &m, b"THING") - 2.0).abs() < TOL);
    assert_eq!(ground::record_offset(&g, &m, b"other"), 0.0);
}

#[test]
fn a_building_sits_on_the_mean_ground_of_its_ring_unless_flagged() {
    let l = land::tiny_land(4);
    let g = Ground::new(&l);
    // A square ring of side 8 centred 3 units along the model's +x.
    let ring = vec![[7.0, -4.0], [7.0, 4.0], [-1.0, 4.0], [-1.0, -4.0]];
    let footing = Footing {
        outer_ring: Some(ring),
        ..Default::default()
    };
    // Turned by π/2, the ring's centre is 3 units along world +y: on a
    // plane the mean of the evenly sampled square is the plane at its centre.
    let b = object(0, [25.0, 22.0, 0.0], std::f32::consts::FRAC_PI_2);
    let (z, rule) = ground_of(ground::grounded_z(&g, &b, &footing, 0.0));
    assert_eq!(rule, Rule::BuildingRing);
    assert!(
        (z - plane(25.0, 25.0)).abs() < TOL,
        "{z} {}",
        plane(25.0, 25.0)
    );
    // Unturned, the centre is 3 along +x.
    let b0 = object(0, [25.0, 22.0, 0.0], 0.0);
    let (z, _) = ground_of(ground::grounded_z(&g, &b0, &footing, 0.0));
    assert!((z - plane(28.0, 22.0)).abs() < TOL, "{z}");
    // No ring: the ground under its origin.
    let (z, rule) = ground_of(ground::grounded_z(&g, &b0, &Footing::default(), 0.0));
    assert_eq!(rule, Rule::BuildingOrigin);
    assert!((z - plane(25.0, 22.0)).abs() < TOL);
    // The start flag: the stored height is kept.
    let mut flagged = b0.clone();
    flagged.start_flag = 1;
    assert!(matches!(
        ground::grounded_z(&g, &flagged, &footing, 0.0),
        Height::Kept(_)
    ));
}

/// A reference scene with placed object 0 (a unit) whose model is one
/// triangle under a child node raised 0.25: its lowest vertex 1.0 below
/// the origin (glTF y = game z).
fn reference() -> GltfFile {
    let pts: [[f32; 3]; 3] = [[0.0, -1.25, 0.0], [1.0, 0.5, 0.0], [0.0, 2.0, -1.0]];
    let bin: Vec<u8> = pts.iter().flatten().flat_map(|v| v.to_le_bytes()).collect();
    GltfFile::new(
        json!({
            "asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
            "nodes": [
                {"name": "U0 tank", "translation": [20.0, 9.0, -20.0], "children": [1],
                 "extras": {"parkan_object": {"index": 0}}},
                {"name": "body", "translation": [0.0, 0.25, 0.0], "mesh": 0}],
            "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
            "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                           "min": [0.0, -1.25, -1.0], "max": [1.0, 2.0, 0.0]}],
            "bufferViews": [{"buffer": 0, "byteLength": 36}],
            "buffers": [{"byteLength": 36}],
        }),
        vec![bin],
    )
}

#[test]
fn model_points_are_in_the_objects_frame_in_game_axes() {
    let r = reference();
    let p = ground::model_points(&r, 0, Up::Y).unwrap();
    // The child's +0.25 (glTF y = game z) is kept, the placement left out.
    let want = [[0.0, 0.0, -1.0], [1.0, 0.0, 0.75], [0.0, 1.0, 2.25]];
    assert_eq!(p.len(), 3);
    for (a, b) in p.iter().zip(want) {
        assert!(
            (DVec3::from(a.map(f64::from)) - DVec3::from(b)).length() < 1e-6,
            "{a:?}"
        );
    }
}

/// A base of a unit, a tree and a building; the write-back moved the unit
/// and the tree, copied the tree, left the building.
fn written() -> (Mission, Written) {
    let mut base = Mission::default();
    let mut unit = object(1, [20.0, 20.0, plane(20.0, 20.0) + 1.0], 0.0);
    unit.path = b"UNITS\\tank.dat".to_vec();
    base.objects.push(unit.clone());
    base.objects
        .push(object(2, [15.0, 15.0, plane(15.0, 15.0) + 3.0], 0.0));
    base.objects
        .push(object(0, [30.0, 30.0, plane(30.0, 30.0) + 7.0], 0.0));
    let mut w = Written {
        mission: base.clone(),
        ..Default::default()
    };
    // The unit moved onto a higher part of the plane, its z kept: the
    // ground rises by (35 - 20) * 0.1 + (30 - 20) * 0.05 = 2.0, so it is
    // 2.00 below where its lowest vertex (1.0 below its origin) touches.
    w.mission.objects[0].position = [35.0, 30.0, plane(20.0, 20.0) + 1.0];
    w.mission.objects[1].position = [30.0, 20.0, 0.0];
    let mut copy = base.objects[1].clone();
    copy.position = [12.0, 35.0, plane(15.0, 15.0) + 3.0];
    w.mission.objects.push(copy);
    w.origins = ["U0 tank", "V1 tree", "B2 bunker", "V1 tree.001"]
        .iter()
        .enumerate()
        .map(|(k, n)| Origin {
            node: n.to_string(),
            base: Some(if k == 3 { 1 } else { k }),
            new: k == 3,
        })
        .collect();
    (base, w)
}

#[test]
fn settle_warns_without_drop_and_sets_down_with_it() {
    let l = land::tiny_land(4);
    let r = reference();
    let game = std::path::Path::new("/nonexistent");
    let (base, mut w) = written();
    let mut f = Footings::new(&r, Up::Y, game);
    let rows = ground::settle(&mut w, &base, &l, &mut f, false).unwrap();
    // The building did not move: no row.
    let nodes: Vec<&str> = rows.iter().map(|r| r["node"].as_str().unwrap()).collect();
    assert_eq!(nodes, ["U0 tank", "V1 tree", "V1 tree.001"]);
    let unit_z = plane(35.0, 30.0) + 1.0;
    let tree_z = plane(30.0, 20.0) + 3.0;
    let copy_z = plane(12.0, 35.0) + 3.0;
    for (row, want) in rows.iter().zip([unit_z, tree_z, copy_z]) {
        let got = row["ground_z"].as_f64().unwrap() as f32;
        assert!((got - want).abs() < TOL, "{row}");
        assert_eq!(row["set"], false);
    }
    let below = unit_z - (plane(20.0, 20.0) + 1.0);
    let warned: Vec<&String> = w
        .warnings
        .iter()
        .filter(|t| t.starts_with("U0 tank:"))
        .collect();
    assert_eq!(warned.len(), 1, "{:?}", w.warnings);
    assert!(
        warned[0].starts_with(&format!(
            "U0 tank: {below:.2} below the ground at (35.00, 30.00)"
        )),
        "{}",
        warned[0]
    );
    assert!(warned[0].contains("--drop-to-ground or Blender's Drop to ground sets it down"));
    // The moved tree is far below (z 0), its copy stands at its offset
    // from the wrong place: both named.
    assert!(w
        .warnings
        .iter()
        .any(|t| t.starts_with("V1 tree: ") && t.contains("below the ground")));
    assert!(w.warnings.iter().any(|t| t.starts_with("V1 tree.001: ")));
    assert_eq!(w.mission.objects[0].position[2], plane(20.0, 20.0) + 1.0);

    // With drop: set down, no warning about heights.
    let (base, mut w) = written();
    let mut f = Footings::new(&r, Up::Y, game);
    let rows = ground::settle(&mut w, &base, &l, &mut f, true).unwrap();
    assert!(rows.iter().all(|r| r["set"] == true));
    assert!(w.warnings.is_empty(), "{:?}", w.warnings);
    for (k, want) in [(0, unit_z), (1, tree_z), (3, copy_z)] {
        assert!((w.mission.objects[k].position[2] - want).abs() < TOL);
    }
    assert_eq!(w.mission.objects[2], base.objects[2]);
}
