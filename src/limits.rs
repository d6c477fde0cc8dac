//! Limits of both tools (docs/safety.md): the ranges of numeric options,
//! and the per-model work budget of the glTF export.
//!
//! The work of one export is counted in *units* of about 32 bytes of memory:
//!
//! | what | units |
//! |---|---|
//! | animation sample (one node at one time: time, translation, rotation) | 2 |
//! | glTF primitive (one batch of one slot mesh) | 16 |
//! | glTF node (name, extras, transform) | 32 |
//! | output buffer bytes | 1 per 32 bytes |
//! | pixel of a glTF image decoded by `gltf2msh --game-dir` (RGBA, 4 bytes; 7 while an RGB image is converted), summed over the model's images | 1 per 8 pixels |
//! | pixel of a library texture decoded by `msh2gltf` (summed over the model's textures; a texture over the rest of the budget is not embedded, with a warning) | 1 per 8 pixels |
//! | animation sample baked by `gltf2msh` authoring (nodes x frames, before baking) | 2 |
//! | glTF buffer bytes read by `gltf2msh` (external files and `data:` URIs, every reference) | 1 per 64 bytes, a separate allowance |
//! | Land.map bytes, before it is parsed (each map sibling alone; also beside a `gltf2msh --base` map) | 1 per 2 bytes |
//! | Land1/Land2.wea lines, before the file is parsed (each alone) | 32 |
//! | `.ctl` channel or state (a clip), from its header, with the model's glTF nodes (32 each) | 640 |
//! | `.cpt` control point (a node with extras), from its header | 160 |
//! | unit file component (from the file's size, before it is read) / mounted part / level of the part tree, before any part is read | 4 / 3072 / 32 |
//! | `objects.rlb` slot (from its records' sizes, before they are decoded) | 4 |
//! | clip animation key read by `gltf2msh --base` (each channel's input accessor `count`, before any is read) | 4 |
//! | `gltf2msh --base x.dat`: glTF node, once per mounted part (each part document starts from the whole unit), before any part is exported | 32 |
//! | each unit part's glTF as it is merged: nodes, primitives, buffer bytes | 32 / 16 / 1 per 32 bytes |
//! | `msh2gltf --textures-out`: pixels of each texture, from its Texm header (each alone) | 1 per 8 pixels |
//! | directory entry of an archive given to `msh2gltf`, or of an archive of models met by a batch's walk (from the walk's budget), from its NRes header | 64 |
//! | file or folder met by a batch's walk of a folder, counted as it is listed | 64 |
//! | `gltf2msh --base` of a map: terrain primitive / element of its accessors and indices, from the JSON | 64 / 1 |
//! | mission (`data.tma`, from each table's count or string's length before it is read; also `--list`): placed object / property / clan relation / route point / route, clan, zone or lode | 80 / 64 / 72 / 12 / 32 |
//! | mission text: string bytes of `data.tma` and each text file beside it (from its size, before it is read) | 1 per 3 bytes |
//!
//! A model above the budget fails with rule `limits.work` before the work is
//! done. The default, [`DEFAULT_MAX_WORK`], keeps one export under about
//! 64 MB; `--max-work` (both tools) changes it. The budget travels in the
//! options of each run (`ExportOptions::max_work`, `ConvertOptions::max_work`,
//! `ReadOptions::max_work`), never in process-wide state. `gltf2msh` spends
//! nodes and primitive instances the same way, and parses at most
//! [`max_json_bytes`] of glTF JSON.

/// Default work budget per model (units, see the module docs): about
/// one million units, 32 MB of export data (the largest shared-corpus
/// model needs 88 000).
pub const DEFAULT_MAX_WORK: u64 = 1_000_000;

/// Work units of one animation sample.
pub const UNITS_PER_SAMPLE: u64 = 2;
/// Work units of one glTF primitive.
pub const UNITS_PER_PRIMITIVE: u64 = 16;
/// Work units of one glTF node.
pub const UNITS_PER_NODE: u64 = 32;
/// Output bytes per work unit.
pub const BYTES_PER_UNIT: u64 = 32;
/// Decoded image pixels per work unit (an RGBA pixel takes 4 bytes, 7 while
/// an RGB image is converted). Each image is checked against the whole
/// budget, from its header, before it is decoded: the default budget takes
/// up to 8 million pixels (2828 x 2828, at most 56 MB while decoding).
pub const IMAGE_PIXELS_PER_UNIT: u64 = 8;

/// Bytes of glTF buffers read per work unit: external `.bin` files and
/// `data:` URIs together may hold `max_work x 64` bytes (64 MB by default;
/// the GLB's own BIN chunk is part of the file and not counted). Each byte
/// read counts, so 300 references to one 20 MB file cost 6 GB of budget.
pub const BUFFER_BYTES_PER_UNIT: u64 = 64;

/// Work units of one clip a `.ctl` channel or state chain adds to a
/// model's glTF (an animation with its samplers, accessors, buffer views
/// and extras: measured 19.5 KB per channel, 977 MB for 50 000).
/// Counted from the `.ctl`'s header before it is parsed.
pub const UNITS_PER_CLIP: u64 = 640;

/// Work units of one `.cpt` control point (a glTF node with its extras,
/// mirrored in the scene extras: measured 4.7 KB per point, 466 MB for
/// 100 000). Counted from the `.cpt`'s header before it is parsed.
pub const UNITS_PER_CONTROL_POINT: u64 = 160;

/// Work units of one mounted part of an assembled unit (the part's
/// converted glTF kept and merged into the unit's JSON document: measured
/// 90 to 94 KB for a small part; 2000 guns took 189 MB). Counted from the
/// unit file and `objects.rlb` before any part is read; each part's own
/// nodes, primitives and buffer bytes are added as it is converted.
pub const UNITS_PER_PART: u64 = 3072;

/// Work units of one unit file component (112 bytes read, about 150
/// decoded; 10^6 components took 350 MB). Counted from the file's size
/// before it is read.
pub const UNITS_PER_UNIT_COMPONENT: u64 = 4;

/// Work units of one 64-byte `objects.rlb` slot (an archive and a member
/// name decoded: about 175 bytes; 10^6 slots took 175 MB). Counted from
/// the records' sizes before they are decoded.
pub const UNITS_PER_REGISTRY_SLOT: u64 = 4;

/// Work units of one key of a clip animation that `gltf2msh --base` reads
/// and compares with the base (its frame, values, the timeline frame and
/// the base's pose there: about 113 bytes; 10^6 keys took 113 MB).
/// Counted from each clip channel's input accessor `count` before any is
/// read.
pub const UNITS_PER_CLIP_KEY: u64 = 4;

/// Bytes of a Land.map per work unit of its parse (a grid cell listing
/// one areal is 4 bytes on disk and about 56 bytes decoded): the default
/// budget reads a Land.map of up to 2 MB (retail maps: about 0.3 MB, at
/// most 1 MB).
pub const MAP_BYTES_PER_UNIT: u64 = 2;

/// Work units of one line of a WEAR table (`Land1.wea`, `Land2.wea`)
/// parsed beside a map: its row, resolved material and textures (about
/// 1 KB; 10^6 rows took 870 MB). Counted from the newlines before parsing.
pub const UNITS_PER_WEAR_ROW: u64 = 32;

/// Work units of one directory entry of an archive converted by
/// `msh2gltf` (its job, output name and report row: measured 2.2 KB per
/// entry, 356 MB for 160 000 empty entries). Counted from the NRes header
/// before the directory is read; an archive of models met by a batch's
/// walk of a folder is counted the same way from the walk's budget
/// ([`UNITS_PER_WALKED_FILE`]) before its entries become jobs, and one
/// that does not fit in what is left is its own failed row.
pub const UNITS_PER_ARCHIVE_ENTRY: u64 = 64;

/// Work units of one file or folder a batch's walk lists (its path, job or
/// report row: measured 1.5 KB per file, 144 MiB for 100 000 tiny files).
/// Counted as the folders are listed, before any file is read.
pub const UNITS_PER_WALKED_FILE: u64 = 64;

/// Work units of one placed object of a mission (its record, its node's
/// extras, its `--list` row: measured 2.4 KB per object listed, 2.4 GB for
/// 10^6). Counted from the object table's header before a record is read;
/// the scene's nodes are counted again as they are built.
pub const UNITS_PER_MISSION_OBJECT: u64 = 80;

/// Work units of one property of a placed object (a JSON object of the
/// extras: measured 1.9 KB, 1.9 GB for 10^6 on one object). Counted from
/// the object's property count before a property is read.
pub const UNITS_PER_MISSION_PROPERTY: u64 = 64;

/// Work units of one clan relation (kept in the clan's extras on its empty
/// and in the scene extras: measured 2.3 KB, 4.6 GB for 20 clans x 10^5).
/// Counted from the clan's relation count before a relation is read.
pub const UNITS_PER_MISSION_RELATION: u64 = 72;

/// Work units of one route point (the point, its bits in the extras, its
/// accessor element: measured 325 bytes, 1.3 GB for 4 x 10^6). Counted
/// from the route's point count before a point is read.
pub const UNITS_PER_ROUTE_POINT: u64 = 12;

/// Work units of one route, clan, zone or lode of a mission (a glTF node
/// with its extras: measured about 0.9 KB per zone or lode). Counted from
/// the table's (or the clan's zone) count before a record is read.
pub const UNITS_PER_MISSION_RECORD: u64 = 32;

/// Bytes of mission text per work unit: every string of `data.tma` (the
/// description, names, paths) from its length word before it is copied,
/// and each text file beside it (`mission.cfg`, `descr`, ...) from its
/// size before it is read; each is held raw, as base64 or escaped text in
/// the extras and in the JSON written (measured about 10 bytes of memory
/// per byte: a 50 MB description took 300 MB).
pub const MISSION_TEXT_BYTES_PER_UNIT: u64 = 3;

/// Work units of one animation sample baked by `gltf2msh` authoring (one
/// node at one frame: world matrix, polar decomposition, key): counted for
/// every node and frame before baking.
pub const UNITS_PER_BAKED_SAMPLE: u64 = 2;

/// Largest total of glTF buffer bytes read under a budget of `max_work`
/// units ([`BUFFER_BYTES_PER_UNIT`]).
pub fn max_buffer_bytes(max_work: u64) -> u64 {
    max_work.saturating_mul(BUFFER_BYTES_PER_UNIT)
}

/// JSON bytes per work unit: the parsed document takes 16 to 35 bytes of
/// memory per byte of JSON text.
pub const JSON_BYTES_PER_UNIT: u64 = 2;

/// Work units of one primitive instance read by `gltf2msh` (its JSON
/// object, accessors and batch: about 2 KB).
pub const UNITS_PER_IMPORTED_PRIMITIVE: u64 = 64;

/// Largest glTF JSON text `gltf2msh` parses under a budget of `max_work`
/// units: `max_work` x [`JSON_BYTES_PER_UNIT`] (2 MB by default).
pub fn max_json_bytes(max_work: u64) -> u64 {
    max_work.saturating_mul(JSON_BYTES_PER_UNIT)
}

/// Smallest accepted `--fps`: a key at frame 65 535 then lies at
/// 6.6 million seconds, still exact enough in f32 to keep frames apart.
pub const MIN_FPS: f32 = 0.01;
/// Largest accepted `--fps`.
pub const MAX_FPS: f32 = 100_000.0;
/// Largest accepted `--jobs`.
pub const MAX_JOBS: usize = 256;

/// `--fps` must be a finite number in `MIN_FPS..=MAX_FPS`.
///
/// # Errors
/// A message naming the accepted range.
pub fn check_fps(fps: f32) -> Result<(), String> {
    if fps.is_finite() && (MIN_FPS..=MAX_FPS).contains(&fps) {
        Ok(())
    } else {
        Err(format!(
            "{fps} is outside {MIN_FPS}..={MAX_FPS} frames per second"
        ))
    }
}

/// `--jobs` must be in `1..=MAX_JOBS`.
///
/// # Errors
/// A message naming the accepted range.
pub fn check_jobs(jobs: usize) -> Result<(), String> {
    if (1..=MAX_JOBS).contains(&jobs) {
        Ok(())
    } else {
        Err(format!("{jobs} is outside 1..={MAX_JOBS}"))
    }
}

/// `--max-work` must be at least 1.
///
/// # Errors
/// A message naming the accepted range.
pub fn check_work(units: u64) -> Result<(), String> {
    if units >= 1 {
        Ok(())
    } else {
        Err("the work budget must be at least 1 unit".into())
    }
}

/// A running count of work units against a budget.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Units spent so far.
    pub used: u64,
    /// The budget.
    pub max: u64,
}

impl Budget {
    /// A budget of `max` units, nothing spent.
    pub fn new(max: u64) -> Self {
        Budget { used: 0, max }
    }

    /// Adds `units` for `what`; fails when the total exceeds the budget.
    ///
    /// # Errors
    /// The detail of a `limits.work` failure, naming what exceeded it.
    pub fn spend(&mut self, units: u64, what: &str) -> Result<(), String> {
        self.spend_of(units, what, "the model's")
    }

    /// [`Budget::spend`] for the work of `whose` (`"the mission's"`):
    /// the message names it instead of the model.
    ///
    /// # Errors
    /// The detail of a `limits.work` failure, naming what exceeded it.
    pub fn spend_of(&mut self, units: u64, what: &str, whose: &str) -> Result<(), String> {
        self.used = self.used.saturating_add(units);
        if self.used > self.max {
            Err(format!(
                "{what} brings {whose} work to {} units, over the budget of {} (see README \"Safety\"; raise it with --max-work)",
                self.used, self.max
            ))
        } else {
            Ok(())
        }
    }
}

impl Default for Budget {
    /// A budget of [`DEFAULT_MAX_WORK`] units.
    fn default() -> Self {
        Budget::new(DEFAULT_MAX_WORK)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_ranges() {
        assert!(check_fps(24.0).is_ok());
        for bad in [0.0, -1.0, 1e-40, f32::NAN, f32::INFINITY, 1e9] {
            assert!(check_fps(bad).is_err(), "{bad}");
        }
        assert!(check_jobs(2).is_ok());
        assert!(check_jobs(0).is_err());
        assert!(check_jobs(100_000).is_err());
        let mut b = Budget { used: 0, max: 10 };
        assert!(b.spend(10, "x").is_ok());
        assert!(b.spend(1, "y").unwrap_err().starts_with("y brings"));
    }
}
