//! The mission IR (mission-notes §2): every field of `data.tma` as stored,
//! strings as raw bytes (Windows-1251), floats as read (their bits kept),
//! so [`super::tma::write`] gives the file back byte for byte. Fields a
//! lower version does not store hold their defaults and are not written.

/// The object version from which each gated field is stored (§2.4).
pub mod gate {
    /// `clan` index.
    pub const CLAN: u32 = 3;
    /// `logical_id`.
    pub const LOGICAL_ID: u32 = 4;
    /// Property word, count and list.
    pub const PROPERTIES: u32 = 6;
    /// `instance_name`.
    pub const INSTANCE_NAME: u32 = 7;
    /// `start_flag`.
    pub const START_FLAG: u32 = 8;
    /// `host` and `vertex`.
    pub const HOST: u32 = 9;
    /// `scale`.
    pub const SCALE: u32 = 10;
    /// The trailer's map word and description.
    pub const DESCRIPTION: u32 = 2;
    /// The lode word and lodes.
    pub const LODES: u32 = 5;
}

/// A whole `data.tma` (§2.1).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Mission {
    /// The first word (1 on every file).
    pub format: u32,
    /// Routes (tactical areals, §2.2).
    pub routes: Vec<Route>,
    /// The clan table's version (6 on every file; 1..=6 read).
    pub clan_version: u32,
    /// Clans (§2.3).
    pub clans: Vec<Clan>,
    /// The object table's version (10 on every file; 1..=10 read).
    pub object_version: u32,
    /// Placed objects (§2.4).
    pub objects: Vec<PlacedObject>,
    /// The map path, e.g. `DATA\MAPS\SC_3\land` (no extension).
    pub map_path: Vec<u8>,
    /// `object_version >= 2`: the map word (0 or 1).
    pub map_word: u32,
    /// `object_version >= 2`: the description buffer, fill included
    /// (§2.6: its length is a capacity; the real text ends at the first NUL
    /// or `0xCD`).
    pub description: Vec<u8>,
    /// `object_version >= 5`: the lode word (1 on every file).
    pub lode_word: u32,
    /// `object_version >= 5`: mineral lodes (§2.6).
    pub lodes: Vec<Lode>,
    /// Bytes after the lode table (none in a valid file; kept by a
    /// tolerant read so the file still writes back as it was).
    pub trailing: Vec<u8>,
}

/// A route: a closed polygon on the ground (§2.2).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Route {
    /// Its id (0..n-1 in file order on shipped missions).
    pub id: u32,
    /// Its points, world x, y, z (game axes).
    pub points: Vec<[f32; 3]>,
}

/// A clan (§2.3); fields of a higher clan version than the file's are
/// empty or 0.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Clan {
    /// Its name (`Player`, `Clan I`, `Natur`).
    pub name: Vec<u8>,
    /// −1 on every shipped clan.
    pub raw_id: i32,
    /// The base: a 2D start position (x, y).
    pub base: [f32; 2],
    /// 0 nature, 1 player, 2 enemy (AI), 3 neutral.
    pub kind: u32,
    /// `clan_version >= 2`: the AI script (`.scr` appended by the engine).
    pub ai_script: Vec<u8>,
    /// `clan_version >= 3`: migration zones.
    pub zones: Vec<Zone>,
    /// `clan_version >= 4`: the research tree.
    pub tree: Vec<u8>,
    /// `clan_version >= 5`: bots the clan may field at once.
    pub minds: u32,
    /// `clan_version >= 6`: one word towards each clan, by name.
    pub relations: Vec<(Vec<u8>, u32)>,
}

/// A clan's migration zone (24 bytes).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Zone {
    /// 1 in every shipped zone.
    pub kind: u32,
    /// Centre, world x, y, z.
    pub centre: [f32; 3],
    /// Inner radius.
    pub inner: f32,
    /// Outer radius.
    pub outer: f32,
}

/// A placed object (§2.4): a building (kind 0), a unit (1), vegetation (2)
/// or a rock (3).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlacedObject {
    /// 0 building, 1 unit, 2 vegetation, 3 rock.
    pub kind: u32,
    /// 0x80000002 on every record.
    pub marker: u32,
    /// Kinds 0/1: a `.dat` path (`UNITS\BUILDS\BUNKER\mbunk01.dat`); kinds
    /// 2/3: an `objects.rlb` record name.
    pub path: Vec<u8>,
    /// `v >= 3`: the owning clan's index (leftovers such as −1 on scenery).
    pub clan: i32,
    /// `v >= 4`: the id scripts use (−1 on scenery).
    pub logical_id: i32,
    /// World position x, y, z (game axes, §5).
    pub position: [f32; 3],
    /// Turns about x, y, z, radians (§5.2).
    pub rotation: [f32; 3],
    /// `v >= 10`: scale (applied to kinds 2/3 only, §5.3); 1 otherwise.
    pub scale: [f32; 3],
    /// `v >= 7`: free text, usually the `.dat` stem.
    pub instance_name: Vec<u8>,
    /// `v >= 8`: the building state flag (§5.4).
    pub start_flag: u32,
    /// `v >= 9`: the logical id of the building the unit starts in, or −1.
    pub host: i32,
    /// `v >= 9`: that building's hall-way vertex, or −1.
    pub vertex: i32,
    /// `v >= 6`: 1 on every record.
    pub property_word: u32,
    /// `v >= 6`: properties in file order, duplicates kept.
    pub properties: Vec<Property>,
}

/// A property of a placed object (§2.4 "Property").
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Property {
    /// 0 float, 1 int.
    pub kind: u32,
    /// The value's bits (a float or an int by `kind`).
    pub value: u32,
    /// The minimum's bits.
    pub minimum: u32,
    /// The maximum's bits (−1 on an int: none).
    pub maximum: u32,
    /// Its name (`LogicalID`, `ClanID`, `NOT USED`, ...).
    pub name: Vec<u8>,
}

/// A mineral lode (28 bytes, §2.6).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Lode {
    /// World x, y, z (z dropped by the engine).
    pub position: [f32; 3],
    /// 1 = already found.
    pub found: u32,
    /// 0x10001000 or 0.
    pub kind: u32,
    /// The amount of ore.
    pub amount: f32,
    /// 0, or 100.0's bits on type-0 lodes.
    pub w4: u32,
}

impl Mission {
    /// The description's text: the bytes before the first NUL or `0xCD`
    /// (§2.6), decoded from Windows-1251.
    pub fn description_text(&self) -> String {
        let end = self
            .description
            .iter()
            .position(|&b| b == 0 || b == 0xCD)
            .unwrap_or(self.description.len());
        crate::source::decode_name(&self.description[..end])
    }
}

impl PlacedObject {
    /// True for buildings and units (kinds 0 and 1: a `.dat` path, an
    /// owning clan).
    pub fn is_owned(&self) -> bool {
        self.kind <= 1
    }

    /// The path decoded from Windows-1251.
    pub fn path_text(&self) -> String {
        crate::source::decode_name(&self.path)
    }
}
