//! `data.tma` bytes ⇄ [`Mission`] (mission-notes §2): a bounded reader that
//! consumes the file exactly, following the engine's version gates, and
//! the writer that gives the same bytes back.
//!
//! ```text
//! u32 format; u32 n; Route[n]; u32 clan_version; u32 n; Clan[n];
//! u32 object_version; u32 n; Object[n]; lp map_path;
//! [v>=2] u32 map_word; lp description; [v>=5] u32 lode_word; u32 n; Lode[n]
//! ```
//! (`lp`: `u32` length, then that many bytes.)

use super::ir::{gate, Clan, Lode, Mission, PlacedObject, Property, Route, Zone};
use super::validate;
use super::{MissionError, Mode};
use crate::limits::{self, Budget};

/// The smallest bytes of each record, for the count checks (§9 error 1).
mod min {
    /// A route: id, point count.
    pub const ROUTE: usize = 8;
    /// A point: three floats.
    pub const POINT: usize = 12;
    /// A clan: name length, raw id, base, type.
    pub const CLAN: usize = 20;
    /// A zone.
    pub const ZONE: usize = 24;
    /// A relation: name length, word.
    pub const RELATION: usize = 8;
    /// A version-10 object without strings or properties (§2.4: 80 bytes).
    pub const OBJECT: usize = 80;
    /// A property without its name.
    pub const PROPERTY: usize = 20;
    /// A lode.
    pub const LODE: usize = 28;
}

/// The largest version of each table the engine reads (§2.1).
pub const MAX_CLAN_VERSION: u32 = 6;
/// See [`MAX_CLAN_VERSION`].
pub const MAX_OBJECT_VERSION: u32 = 10;
/// The marker every object carries (§2.4).
pub const MARKER: u32 = 0x8000_0002;

struct Cursor<'a, 'b> {
    data: &'a [u8],
    pos: usize,
    record: Option<String>,
    budget: &'b mut Budget,
}

impl<'a> Cursor<'a, '_> {
    fn left(&self) -> usize {
        self.data.len() - self.pos
    }

    fn err(&self, rule: &'static str, detail: String) -> MissionError {
        MissionError::new(rule, self.record.clone(), detail)
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], MissionError> {
        if n > self.left() {
            return Err(self.err(
                "mission.exact_eof",
                format!(
                    "the file ends inside {what}: {n} bytes at offset {}, {} left",
                    self.pos,
                    self.left()
                ),
            ));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn u32(&mut self, what: &str) -> Result<u32, MissionError> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn i32(&mut self, what: &str) -> Result<i32, MissionError> {
        Ok(self.u32(what)? as i32)
    }

    fn f32(&mut self, what: &str) -> Result<f32, MissionError> {
        Ok(f32::from_bits(self.u32(what)?))
    }

    fn f32x3(&mut self, what: &str) -> Result<[f32; 3], MissionError> {
        Ok([self.f32(what)?, self.f32(what)?, self.f32(what)?])
    }

    /// A string: its length must fit in what is left (`mission.exact_eof`),
    /// then its bytes are counted against the budget
    /// ([`limits::MISSION_TEXT_BYTES_PER_UNIT`]) before they are copied.
    fn lp(&mut self, what: &str) -> Result<Vec<u8>, MissionError> {
        let n = self.u32(what)? as usize;
        let start = self.pos;
        let bytes = self.take(n, what)?;
        if n as u64 >= limits::MISSION_TEXT_BYTES_PER_UNIT {
            self.pos = start;
            self.spend(
                n as u64 / limits::MISSION_TEXT_BYTES_PER_UNIT,
                &format!("{what} of {n} bytes"),
            )?;
            self.pos += n;
        }
        Ok(bytes.to_vec())
    }

    /// Spends `units` of the mission's budget on `what`: `limits.work`
    /// naming the record and the offset.
    fn spend(&mut self, units: u64, what: &str) -> Result<(), MissionError> {
        let at = format!("{what} at offset {}", self.pos);
        match self.budget.spend_of(units, &at, "the mission's") {
            Ok(()) => Ok(()),
            Err(d) => Err(self.err("limits.work", d)),
        }
    }

    /// A table's count (routes, clans, objects, lodes) whose records of at
    /// least `size` bytes must fit in what is left: `mission.count_fits`;
    /// then `units` each against the budget (`limits.work`); both checked
    /// before anything is allocated.
    fn count(&mut self, size: usize, units: u64, what: &str) -> Result<usize, MissionError> {
        self.count_as(size, units, what, "mission.count_fits")
    }

    /// A count inside a record (points, zones, relations, properties): a
    /// list that runs past the end of the file is the record cut short,
    /// `mission.exact_eof`; then `units` each against the budget
    /// (`limits.work`); both checked before anything is allocated.
    fn inner_count(&mut self, size: usize, units: u64, what: &str) -> Result<usize, MissionError> {
        self.count_as(size, units, what, "mission.exact_eof")
    }

    fn count_as(
        &mut self,
        size: usize,
        units: u64,
        what: &str,
        rule: &'static str,
    ) -> Result<usize, MissionError> {
        let n = self.u32(what)? as usize;
        if n.checked_mul(size).is_none_or(|b| b > self.left()) {
            return Err(self.err(
                rule,
                format!(
                    "{n} {what} of at least {size} bytes do not fit in the {} bytes left at offset {}",
                    self.left(),
                    self.pos
                ),
            ));
        }
        self.spend(
            (n as u64).saturating_mul(units),
            &format!("{n} {what} ({units} units each)"),
        )?;
        Ok(n)
    }
}

/// Reads a `data.tma`, then checks it (mission-notes §9 errors 1–5:
/// [`validate::check`]). Strict: the first finding is the error, and the
/// versions must be the shipped ones. Tolerant: findings that leave the
/// layout intact (and bytes after the lode table, kept in
/// [`Mission::trailing`]) are returned as warnings. Unbounded work (the
/// codec of bytes already in hand): a file from a user goes through
/// [`read_counted`].
///
/// # Errors
/// `mission.exact_eof`, `mission.count_fits`, `mission.version` in both
/// modes; in strict mode also the first of [`validate::check`]'s findings.
pub fn read(data: &[u8], mode: Mode) -> Result<(Mission, Vec<MissionError>), MissionError> {
    read_counted(data, mode, &mut Budget::new(u64::MAX))
}

/// [`read`], counting every table against `budget` from its count before
/// its records are read, and every string from its length before it is
/// copied (issue 36 item 5; units in [`crate::limits`]: objects x 80,
/// properties x 64, relations x 72, route points x 12, routes, clans,
/// zones and lodes x 32, string bytes / 3). A table's count is first
/// checked against the bytes left, as [`read`] does, so a cut or forged
/// count keeps its `mission.count_fits` / `mission.exact_eof` rule.
///
/// # Errors
/// [`read`]'s, and `limits.work` naming the record, what was counted and
/// the budget.
pub fn read_counted(
    data: &[u8],
    mode: Mode,
    budget: &mut Budget,
) -> Result<(Mission, Vec<MissionError>), MissionError> {
    let mut c = Cursor {
        data,
        pos: 0,
        record: None,
        budget,
    };
    let mut m = Mission {
        format: c.u32("the format word")?,
        ..Default::default()
    };
    if m.format != 1 {
        return Err(c.err(
            "mission.version",
            format!("format word {}, not 1", m.format),
        ));
    }
    let n = c.count(min::ROUTE, limits::UNITS_PER_MISSION_RECORD, "routes")?;
    for i in 0..n {
        c.record = Some(format!("route {i}"));
        m.routes.push(read_route(&mut c)?);
    }
    c.record = None;
    m.clan_version = c.u32("the clan version")?;
    check_version(&c, "clan", m.clan_version, MAX_CLAN_VERSION, mode)?;
    let n = c.count(min::CLAN, limits::UNITS_PER_MISSION_RECORD, "clans")?;
    for i in 0..n {
        c.record = Some(format!("clan {i}"));
        m.clans.push(read_clan(&mut c, m.clan_version)?);
    }
    c.record = None;
    m.object_version = c.u32("the object version")?;
    check_version(&c, "object", m.object_version, MAX_OBJECT_VERSION, mode)?;
    let n = c.count(
        min_object(m.object_version),
        limits::UNITS_PER_MISSION_OBJECT,
        "objects",
    )?;
    for i in 0..n {
        c.record = Some(format!("object {i}"));
        m.objects.push(read_object(&mut c, m.object_version)?);
    }
    c.record = None;
    read_trailer(&mut c, &mut m, mode)?;
    let mut warnings = Vec::new();
    if !c.data[c.pos..].is_empty() {
        let e = c.err(
            "mission.exact_eof",
            format!("{} bytes after the lode table (offset {})", c.left(), c.pos),
        );
        match mode {
            Mode::Strict => return Err(e),
            Mode::Tolerant => {
                m.trailing = c.data[c.pos..].to_vec();
                warnings.push(e);
            }
        }
    }
    let findings = validate::check(&m);
    match (mode, findings.first()) {
        (Mode::Strict, Some(e)) => Err(e.clone()),
        _ => {
            warnings.extend(findings);
            Ok((m, warnings))
        }
    }
}

/// The smallest object record of `version` (the v10 size less the fields
/// it does not store).
fn min_object(version: u32) -> usize {
    let mut n = min::OBJECT;
    for (v, bytes) in [
        (gate::SCALE, 12),
        (gate::HOST, 8),
        (gate::START_FLAG, 4),
        (gate::INSTANCE_NAME, 4),
        (gate::PROPERTIES, 8),
        (gate::LOGICAL_ID, 4),
        (gate::CLAN, 4),
    ] {
        if version < v {
            n -= bytes;
        }
    }
    n
}

fn check_version(
    c: &Cursor<'_, '_>,
    table: &str,
    v: u32,
    max: u32,
    mode: Mode,
) -> Result<(), MissionError> {
    let ok = match mode {
        Mode::Strict => v == max,
        Mode::Tolerant => (1..=max).contains(&v),
    };
    if ok {
        return Ok(());
    }
    let want = match mode {
        Mode::Strict => format!("{max} (every shipped file; --tolerant reads 1..={max})"),
        Mode::Tolerant => format!("1..={max}"),
    };
    Err(c.err(
        "mission.version",
        format!("{table} version {v}, want {want}"),
    ))
}

fn read_route(c: &mut Cursor<'_, '_>) -> Result<Route, MissionError> {
    let id = c.u32("the route id")?;
    let n = c.inner_count(min::POINT, limits::UNITS_PER_ROUTE_POINT, "route points")?;
    let mut points = Vec::with_capacity(n);
    for _ in 0..n {
        points.push(c.f32x3("a route point")?);
    }
    Ok(Route { id, points })
}

fn read_clan(c: &mut Cursor<'_, '_>, v: u32) -> Result<Clan, MissionError> {
    let mut k = Clan {
        name: c.lp("the clan name")?,
        raw_id: c.i32("the clan's raw id")?,
        base: [c.f32("the clan base")?, c.f32("the clan base")?],
        kind: c.u32("the clan type")?,
        ..Default::default()
    };
    if v >= 2 {
        k.ai_script = c.lp("the AI script")?;
    }
    if v >= 3 {
        let n = c.inner_count(min::ZONE, limits::UNITS_PER_MISSION_RECORD, "zones")?;
        for _ in 0..n {
            k.zones.push(Zone {
                kind: c.u32("a zone")?,
                centre: c.f32x3("a zone")?,
                inner: c.f32("a zone")?,
                outer: c.f32("a zone")?,
            });
        }
    }
    if v >= 4 {
        k.tree = c.lp("the research tree")?;
    }
    if v >= 5 {
        k.minds = c.u32("the minds")?;
    }
    if v >= 6 {
        let n = c.inner_count(
            min::RELATION,
            limits::UNITS_PER_MISSION_RELATION,
            "relations",
        )?;
        for _ in 0..n {
            let name = c.lp("a relation's clan name")?;
            k.relations.push((name, c.u32("a relation word")?));
        }
    }
    Ok(k)
}

fn read_object(c: &mut Cursor<'_, '_>, v: u32) -> Result<PlacedObject, MissionError> {
    let mut o = PlacedObject {
        kind: c.u32("the object kind")?,
        marker: c.u32("the object marker")?,
        path: c.lp("the object path")?,
        logical_id: -1,
        scale: [1.0; 3],
        host: -1,
        vertex: -1,
        ..Default::default()
    };
    if let Some(r) = c.record.as_mut() {
        *r = format!("{r} ({})", crate::source::decode_name(&o.path));
    }
    if v >= gate::CLAN {
        o.clan = c.i32("the clan index")?;
    }
    if v >= gate::LOGICAL_ID {
        o.logical_id = c.i32("the logical id")?;
    }
    o.position = c.f32x3("the position")?;
    o.rotation = c.f32x3("the rotation")?;
    if v >= gate::SCALE {
        o.scale = c.f32x3("the scale")?;
    }
    if v >= gate::INSTANCE_NAME {
        o.instance_name = c.lp("the instance name")?;
    }
    if v >= gate::START_FLAG {
        o.start_flag = c.u32("the start flag")?;
    }
    if v >= gate::HOST {
        o.host = c.i32("the host")?;
        o.vertex = c.i32("the vertex")?;
    }
    if v >= gate::PROPERTIES {
        o.property_word = c.u32("the property word")?;
        let n = c.inner_count(
            min::PROPERTY,
            limits::UNITS_PER_MISSION_PROPERTY,
            "properties",
        )?;
        for _ in 0..n {
            o.properties.push(Property {
                kind: c.u32("a property")?,
                value: c.u32("a property")?,
                minimum: c.u32("a property")?,
                maximum: c.u32("a property")?,
                name: c.lp("a property name")?,
            });
        }
    }
    Ok(o)
}

fn read_trailer(c: &mut Cursor<'_, '_>, m: &mut Mission, mode: Mode) -> Result<(), MissionError> {
    m.map_path = c.lp("the map path")?;
    if m.object_version >= gate::DESCRIPTION {
        m.map_word = c.u32("the map word")?;
        m.description = c.lp("the description")?;
    }
    if m.object_version >= gate::LODES {
        m.lode_word = c.u32("the lode word")?;
        if mode == Mode::Strict && m.lode_word != 1 {
            return Err(c.err(
                "mission.version",
                format!("lode word {}, not 1", m.lode_word),
            ));
        }
        let n = c.count(min::LODE, limits::UNITS_PER_MISSION_RECORD, "lodes")?;
        for i in 0..n {
            c.record = Some(format!("lode {i}"));
            m.lodes.push(Lode {
                position: c.f32x3("a lode")?,
                found: c.u32("a lode")?,
                kind: c.u32("a lode")?,
                amount: c.f32("a lode")?,
                w4: c.u32("a lode")?,
            });
        }
        c.record = None;
    }
    Ok(())
}

/// The bytes of `m`: the inverse of [`read`] (every field as stored, the
/// gated ones by the tables' versions, then [`Mission::trailing`]).
pub fn write(m: &Mission) -> Vec<u8> {
    let mut w = Writer(Vec::new());
    w.u32(m.format);
    w.u32(m.routes.len() as u32);
    for r in &m.routes {
        w.u32(r.id);
        w.u32(r.points.len() as u32);
        r.points.iter().for_each(|p| w.f32x3(p));
    }
    w.u32(m.clan_version);
    w.u32(m.clans.len() as u32);
    m.clans
        .iter()
        .for_each(|k| write_clan(&mut w, k, m.clan_version));
    w.u32(m.object_version);
    w.u32(m.objects.len() as u32);
    m.objects
        .iter()
        .for_each(|o| write_object(&mut w, o, m.object_version));
    w.lp(&m.map_path);
    if m.object_version >= gate::DESCRIPTION {
        w.u32(m.map_word);
        w.lp(&m.description);
    }
    if m.object_version >= gate::LODES {
        w.u32(m.lode_word);
        w.u32(m.lodes.len() as u32);
        for l in &m.lodes {
            w.f32x3(&l.position);
            w.u32(l.found);
            w.u32(l.kind);
            w.f32(l.amount);
            w.u32(l.w4);
        }
    }
    w.0.extend_from_slice(&m.trailing);
    w.0
}

struct Writer(Vec<u8>);

impl Writer {
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn f32(&mut self, v: f32) {
        self.u32(v.to_bits());
    }
    fn f32x3(&mut self, v: &[f32; 3]) {
        v.iter().for_each(|&x| self.f32(x));
    }
    fn lp(&mut self, s: &[u8]) {
        self.u32(s.len() as u32);
        self.0.extend_from_slice(s);
    }
}

fn write_clan(w: &mut Writer, k: &Clan, v: u32) {
    w.lp(&k.name);
    w.u32(k.raw_id as u32);
    w.f32(k.base[0]);
    w.f32(k.base[1]);
    w.u32(k.kind);
    if v >= 2 {
        w.lp(&k.ai_script);
    }
    if v >= 3 {
        w.u32(k.zones.len() as u32);
        for z in &k.zones {
            w.u32(z.kind);
            w.f32x3(&z.centre);
            w.f32(z.inner);
            w.f32(z.outer);
        }
    }
    if v >= 4 {
        w.lp(&k.tree);
    }
    if v >= 5 {
        w.u32(k.minds);
    }
    if v >= 6 {
        w.u32(k.relations.len() as u32);
        for (name, word) in &k.relations {
            w.lp(name);
            w.u32(*word);
        }
    }
}

fn write_object(w: &mut Writer, o: &PlacedObject, v: u32) {
    w.u32(o.kind);
    w.u32(o.marker);
    w.lp(&o.path);
    if v >= gate::CLAN {
        w.u32(o.clan as u32);
    }
    if v >= gate::LOGICAL_ID {
        w.u32(o.logical_id as u32);
    }
    w.f32x3(&o.position);
    w.f32x3(&o.rotation);
    if v >= gate::SCALE {
        w.f32x3(&o.scale);
    }
    if v >= gate::INSTANCE_NAME {
        w.lp(&o.instance_name);
    }
    if v >= gate::START_FLAG {
        w.u32(o.start_flag);
    }
    if v >= gate::HOST {
        w.u32(o.host as u32);
        w.u32(o.vertex as u32);
    }
    if v >= gate::PROPERTIES {
        w.u32(o.property_word);
        w.u32(o.properties.len() as u32);
        for p in &o.properties {
            w.u32(p.kind);
            w.u32(p.value);
            w.u32(p.minimum);
            w.u32(p.maximum);
            w.lp(&p.name);
        }
    }
}
