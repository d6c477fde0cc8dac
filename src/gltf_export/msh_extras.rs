//! The `extras.msh` vocabulary of units, parts, control points and clips
//! (gltf-mapping.md; unit-files-notes §1.7, §3.5, §5.1), shared by both
//! directions: the exporters that write it (`crate::unit::gltf`,
//! `crate::unit::assemble`) and the importers that read it back
//! (`crate::gltf_import`, `crate::unit::split`). It sits below both so that
//! neither imports the other for it: each rule lives here once, its
//! forward form beside its inverse ([`rotation_to`] / [`direction_of`],
//! [`ClipTime::to_clip`] / [`ClipTime::to_timeline`]).

use super::axes;

/// Extras key of the scene of an assembled unit (`extras.msh.unit`).
pub const UNIT_KEY: &str = "unit";
/// The extras key naming the part a node of an assembled unit came from
/// (`extras.msh.part`: its index in the scene's `unit.parts`).
pub const PART_KEY: &str = "part";

/// The extras key of a control-point empty (`extras.msh.control_point`);
/// `gltf2msh` leaves such nodes out of the Res1 match.
pub const CONTROL_POINT_KEY: &str = "control_point";
/// The extras key of a clip animation (`extras.msh.clip`).
pub const CLIP_KEY: &str = "clip";

/// The JSON type a key of the `extras.msh` vocabulary holds, as the
/// readers read it back (issue 36 item 3: a wrong type is refused, never
/// read as absent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtraType {
    /// An integer >= 0 (an integral float such as `3.0` too: Blender may
    /// write integer custom properties as floats).
    Index,
    /// A finite number.
    Number,
    /// A string.
    Text,
    /// A string or `null` (none).
    TextOrNull,
    /// A JSON object.
    Object,
    /// A JSON array.
    Array,
}

/// The typed keys of the `extras.msh` vocabulary per glTF array
/// (gltf-mapping.md "Extras"; unit-files-notes §1.7, §3.5, §5.1): the
/// array's name, the key, its type. Keys not listed (flags Blender writes
/// as `1`/`true`/`"true"`, the scene's conventions) are read by their own
/// rules.
pub const TYPED_KEYS: &[(&str, &str, ExtraType)] = &[
    ("nodes", "node", ExtraType::Index),
    ("nodes", "cell", ExtraType::Index),
    ("nodes", PART_KEY, ExtraType::Index),
    ("nodes", "flags", ExtraType::Index),
    ("nodes", "label", ExtraType::Text),
    ("nodes", CONTROL_POINT_KEY, ExtraType::Object),
    ("meshes", "slot", ExtraType::Index),
    ("meshes", "batches", ExtraType::Array),
    ("materials", "material_index", ExtraType::Index),
    ("materials", "name", ExtraType::TextOrNull),
    ("materials", "lightmap", ExtraType::TextOrNull),
    ("materials", "exported", ExtraType::Object),
    ("scenes", UNIT_KEY, ExtraType::Object),
    ("scenes", "fps", ExtraType::Number),
    ("scenes", "frame_current", ExtraType::Number),
    ("animations", CLIP_KEY, ExtraType::Object),
    ("animations", "start", ExtraType::Number),
    ("animations", "end", ExtraType::Number),
];

/// The typed keys inside an object of [`TYPED_KEYS`]: the outer key, the
/// inner key, its type (`extras.msh.control_point.index`).
pub const TYPED_INNER_KEYS: &[(&str, &str, ExtraType)] = &[
    (CONTROL_POINT_KEY, "index", ExtraType::Index),
    ("exported", "color", ExtraType::Array),
    ("exported", "texture", ExtraType::TextOrNull),
    ("exported", "alpha_mode", ExtraType::Text),
];

/// The rotation turning glTF +Y onto `d` (glTF axes); identity for a zero
/// direction.
pub fn rotation_to(d: [f32; 3]) -> [f32; 4] {
    let Some(d) = axes::normalize3(d.map(f64::from)) else {
        return [0.0, 0.0, 0.0, 1.0];
    };
    let w = 1.0 + f64::from(d[1]);
    if w < 1e-6 {
        return [1.0, 0.0, 0.0, 0.0];
    }
    let (x, z) = (f64::from(d[2]), -f64::from(d[0]));
    let n = (x * x + z * z + w * w).sqrt();
    [(x / n) as f32, 0.0, (z / n) as f32, (w / n) as f32]
}

/// The inverse of `rotation_to`: the unit direction (glTF axes) that
/// rotation `q` (x, y, z, w) turns glTF +Y onto.
pub fn direction_of(q: [f32; 4]) -> [f32; 3] {
    let [x, y, z, w] = q.map(f64::from);
    let n = (x * x + y * y + z * z + w * w).sqrt();
    if n.is_nan() || n <= 0.0 {
        return [0.0, 1.0, 0.0];
    }
    let (x, y, z, w) = (x / n, y / n, z / n, w / n);
    [
        (2.0 * (x * y - w * z)) as f32,
        (1.0 - 2.0 * (x * x + z * z)) as f32,
        (2.0 * (y * z + w * x)) as f32,
    ]
}

/// Tolerance of "the empty points where the `.cpt` has it": per component
/// of the unit direction, and per quaternion component against the
/// rotation the export gave it.
pub const POINT_TURN_TOL: f32 = 1e-4;

/// How a control-point empty's rotation differs from the one the export
/// gave it (unit-files-notes §5.1): the one rule both the writer
/// (`crate::unit::cpt_back`) and the difference report use.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PointTurn {
    /// As exported (within [`POINT_TURN_TOL`], either quaternion sign).
    Same,
    /// Pointing elsewhere: the new unit direction (glTF axes).
    Turned([f32; 3]),
    /// Same direction, turned about it: a roll, which a `.cpt` cannot hold.
    Rolled,
}

/// Compares rotation `q` (glTF x, y, z, w) of an empty with the rotation
/// the export gives its stored direction `d` (glTF axes, any length).
pub fn point_turn(q: [f32; 4], d: [f32; 3]) -> PointTurn {
    let exported = rotation_to(d);
    let off = |s: f32| {
        (0..4)
            .map(|k| (q[k] - s * exported[k]).abs())
            .fold(0.0f32, f32::max)
    };
    if off(1.0).min(off(-1.0)) <= POINT_TURN_TOL {
        return PointTurn::Same;
    }
    let now = direction_of(q);
    let same_way = axes::normalize3(d.map(f64::from))
        .is_some_and(|w| (0..3).all(|k| (now[k] - w[k]).abs() <= POINT_TURN_TOL));
    if same_way {
        PointTurn::Rolled
    } else {
        PointTurn::Turned(now)
    }
}

/// How a clip animation's key times map onto the model's single timeline
/// (unit-files-notes §1.7.2–3; issue 24 item 4): keys are in **clip time**,
/// 0 at `start`, running toward `end`, so a clip plays in Blender in the
/// direction the game plays it. `start`/`end` are timeline frames: a
/// state chain's `first`/`last` (a reversed chain has `first > last`), a
/// channel's `first`/`last`, swapped when the channel inverts its value
/// (flag 2, `1 − v`). The forward rule ([`ClipTime::to_clip`]) and its
/// inverse ([`ClipTime::to_timeline`]) live here together; the glTF
/// animation's `extras.msh.start` / `extras.msh.end` carry them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClipTime {
    /// Timeline frame at clip time 0.
    pub start: f32,
    /// Timeline frame at the clip's last key.
    pub end: f32,
}

impl ClipTime {
    /// Clip animations written before clip time (no `extras.msh.start`):
    /// keyed at timeline frames.
    pub const TIMELINE: ClipTime = ClipTime {
        start: 0.0,
        end: f32::MAX,
    };

    /// The clip time of a glTF clip animation from its `extras.msh`
    /// (`start`, `end`), else [`ClipTime::TIMELINE`].
    pub fn from_extras(msh: &serde_json::Value) -> Self {
        match (msh["start"].as_f64(), msh["end"].as_f64()) {
            (Some(s), Some(e)) if s.is_finite() && e.is_finite() => ClipTime {
                start: s as f32,
                end: e as f32,
            },
            _ => ClipTime::TIMELINE,
        }
    }

    /// `-1` when the clip runs toward lower timeline frames, else `1`.
    pub fn dir(self) -> f32 {
        if self.end < self.start {
            -1.0
        } else {
            1.0
        }
    }

    /// Clip frames from the start to the end (`|end − start|`).
    pub fn length(self) -> f32 {
        (self.end - self.start).abs()
    }

    /// Timeline frame → clip frame.
    pub fn to_clip(self, frame: f32) -> f32 {
        (frame - self.start) * self.dir()
    }

    /// Clip frame → timeline frame (the inverse of [`ClipTime::to_clip`]).
    pub fn to_timeline(self, clip_frame: f32) -> f32 {
        self.start + self.dir() * clip_frame
    }
}

/// A clip of the base's `.ctl` as the way back needs it (unit-files-notes
/// §1.3, §1.4; made by `unit::clips::base_clips`): which clip it is, its
/// frames and its clip time. `gltf2msh --base` takes a clip's range and
/// clip time from it, never from the glTF's extras.
#[derive(Debug, Clone, PartialEq)]
pub struct BaseClip {
    /// A section-2 channel (`true`) or a chain of section-1 states.
    pub channel: bool,
    /// First frame as played.
    pub first: f32,
    /// Last frame as played (a reversed chain has `last < first`).
    pub last: f32,
    /// The Res1 nodes the clip animates (a channel: its `.ctl` node; a
    /// chain of states: the body nodes no channel drives), which identify
    /// it on the way back (issue 36 item 11).
    pub nodes: Vec<usize>,
    /// The clip's `extras.msh.clip` as exported (`kind`, `channel` or
    /// `states`, frames, flags).
    pub source: serde_json::Value,
    /// Its clip time (an inverting channel starts at `last`).
    pub time: ClipTime,
}

impl BaseClip {
    /// The frame range `[min, max]` the clip covers on the timeline.
    pub fn range(&self) -> [f32; 2] {
        [self.first.min(self.last), self.first.max(self.last)]
    }
}
