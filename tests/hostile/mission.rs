//! Issue 36 item 5: hostile missions whose tables are counted before they
//! are read (`limits.work`), each run in a game folder of its own (an
//! empty `objects.rlb` marks it; nothing else is needed, since the
//! refusal comes before the map or any model is looked up). Built as raw
//! bytes (mission-notes §2), large cases generated here, never committed;
//! `MSHGLTF_HOSTILE_FULL=1` builds them at the sizes of the issue (up to
//! 80 MB each) instead of the default, smaller ones (each still several
//! times over the default budget). Measured by `scripts/bench_hostile.sh`.

use super::{args, sparse, Case, Tool};

/// Where the cases put their mission.
pub const TMA: &str = "MISSIONS/M/data.tma";

/// Little-endian writer of `data.tma` fields.
#[derive(Default)]
pub struct Tma(pub Vec<u8>);

impl Tma {
    /// A `u32`.
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// An `f32`.
    pub fn f32(&mut self, v: f32) -> &mut Self {
        self.u32(v.to_bits())
    }
    /// An `lp` string.
    pub fn lp(&mut self, s: &[u8]) -> &mut Self {
        self.u32(s.len() as u32);
        self.0.extend_from_slice(s);
        self
    }
    /// A version-6 clan with `relations` relations (empty names) and
    /// `zones` zones.
    pub fn clan(&mut self, name: &[u8], relations: usize, zones: usize) -> &mut Self {
        self.lp(name).u32(u32::MAX).f32(1.0).f32(2.0).u32(0);
        self.lp(b"MISSIONS\\SCRIPTS\\scr").u32(zones as u32);
        for _ in 0..zones {
            self.u32(1).f32(5.0).f32(5.0).f32(5.0).f32(10.0).f32(20.0);
        }
        self.lp(b"").u32(5).u32(relations as u32);
        for _ in 0..relations {
            self.lp(b"").u32(1);
        }
        self
    }
    /// A version-10 object of `kind` at `path` with `properties`
    /// properties (empty names).
    pub fn object(&mut self, kind: u32, path: &[u8], properties: usize) -> &mut Self {
        self.u32(kind).u32(0x8000_0002).lp(path).u32(0).u32(7);
        for v in [1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0] {
            self.f32(v);
        }
        self.lp(b"").u32(0).u32(u32::MAX).u32(u32::MAX).u32(1);
        self.u32(properties as u32);
        for _ in 0..properties {
            self.u32(1).u32(0).u32(0).u32(0).lp(b"");
        }
        self
    }
}

/// The tables of a hostile mission.
#[derive(Default)]
pub struct Tables {
    /// Points of its one route (no route when 0).
    pub route_points: usize,
    /// Clans (name, relations, zones); one player clan when empty.
    pub clans: Vec<(Vec<u8>, usize, usize)>,
    /// Objects (kind, path, properties).
    pub objects: Vec<(u32, Vec<u8>, usize)>,
    /// Copies of `objects` (1 when 0).
    pub copies: usize,
    /// The map path (`DATA\MAPS\m\land` when empty).
    pub map_path: Vec<u8>,
    /// Description bytes.
    pub description: usize,
    /// Lodes.
    pub lodes: usize,
    /// The format word (1 when 0).
    pub format: u32,
}

/// The bytes of a version 1/6/10 mission holding `t`.
pub fn mission(t: &Tables) -> Vec<u8> {
    let mut w = Tma::default();
    w.u32(if t.format == 0 { 1 } else { t.format });
    if t.route_points > 0 {
        w.u32(1).u32(0).u32(t.route_points as u32);
        for _ in 0..t.route_points * 3 {
            w.f32(1.0);
        }
    } else {
        w.u32(0);
    }
    w.u32(6);
    if t.clans.is_empty() {
        w.u32(1).clan(b"Player", 1, 0);
    } else {
        w.u32(t.clans.len() as u32);
        for (name, relations, zones) in &t.clans {
            w.clan(name, *relations, *zones);
        }
    }
    let copies = t.copies.max(1);
    w.u32(10).u32((t.objects.len() * copies) as u32);
    for _ in 0..copies {
        for (kind, path, properties) in &t.objects {
            w.object(*kind, path, *properties);
        }
    }
    let map: &[u8] = if t.map_path.is_empty() {
        b"DATA\\MAPS\\m\\land"
    } else {
        &t.map_path
    };
    w.lp(map).u32(0).lp(&vec![b'x'; t.description]);
    w.u32(1).u32(t.lodes as u32);
    for _ in 0..t.lodes {
        w.f32(1.0).f32(1.0).f32(1.0).u32(1).u32(0x1000_1000);
        w.f32(1e4).u32(0);
    }
    w.0
}

/// The files of a case: the game folder's marker and the mission, plus
/// `more`.
pub fn game_with(tma: Vec<u8>, more: Vec<(String, Vec<u8>)>) -> Vec<(String, Vec<u8>)> {
    let mut files = vec![("objects.rlb".into(), Vec::new()), (TMA.into(), tma)];
    files.extend(more);
    files
}

fn convert(name: &'static str, t: &Tables) -> Case {
    Case {
        name,
        files: game_with(mission(t), vec![]),
        tool: Tool::Msh2gltf,
        args: args(&[TMA, "out.glb"]),
        exit: 1,
        rule: "limits.work",
    }
}

/// The mission cases of issue 36 item 5 (default sizes; the with
/// `MSHGLTF_HOSTILE_FULL`).
pub fn cases(v: &mut Vec<Case>) {
    let full = std::env::var_os("MSHGLTF_HOSTILE_FULL").is_some();
    let pick = |small: usize, big: usize| if full { big } else { small };
    let clans = (0..20).map(|i| (format!("Clan {i}").into_bytes(), 100_000, 0));
    v.push(convert(
        "mission_20_clans_100000_relations",
        &Tables {
            clans: clans.collect(),
            ..Default::default()
        },
    ));
    v.push(convert(
        "mission_1000000_properties",
        &Tables {
            objects: vec![(3, b"st_s_rock_75".to_vec(), 1_000_000)],
            ..Default::default()
        },
    ));
    v.push(convert(
        "mission_100000_placements",
        &Tables {
            objects: vec![(3, b"st_s_rock_75".to_vec(), 2)],
            copies: 100_000,
            ..Default::default()
        },
    ));
    let listed = Tables {
        objects: vec![(3, b"st_s_rock_75".to_vec(), 0)],
        copies: pick(100_000, 1_000_000),
        ..Default::default()
    };
    v.push(Case {
        name: "mission_list_objects",
        files: game_with(mission(&listed), vec![]),
        tool: Tool::Msh2gltf,
        args: args(&["--list", TMA]),
        exit: 2,
        rule: "limits.work",
    });
    v.push(convert(
        "mission_route_points",
        &Tables {
            route_points: pick(1_000_000, 4_000_000),
            ..Default::default()
        },
    ));
    v.push(convert(
        "mission_description",
        &Tables {
            description: pick(8 << 20, 50 << 20),
            ..Default::default()
        },
    ));
    v.push(convert(
        "mission_zones",
        &Tables {
            clans: vec![(b"Natur".to_vec(), 1, pick(250_000, 1_000_000))],
            ..Default::default()
        },
    ));
    v.push(convert(
        "mission_lodes",
        &Tables {
            lodes: pick(250_000, 1_000_000),
            ..Default::default()
        },
    ));
    // A 50 MB mission.cfg (sparse: counted from its size, never read).
    let cfg = ("MISSIONS/M/mission.cfg".to_string(), sparse(50 << 20));
    v.push(Case {
        name: "mission_50mb_cfg",
        files: game_with(mission(&Tables::default()), vec![cfg]),
        tool: Tool::Msh2gltf,
        args: args(&[TMA, "out.glb"]),
        exit: 1,
        rule: "limits.work",
    });
}
