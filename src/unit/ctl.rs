//! `.ctl` (NRes tag `CTLD`): a part's controller (unit-files-notes §5.2,
//! §1.3, §1.4). Only the fields a viewer needs are named; every byte is
//! kept so [`write`](fn@write) gives the file back.
//!
//! ```text
//! 0x00 i32 counts[5]: A states, B contacts per state, C channels,
//!      D components, E action groups
//! 0x14 27 dwords parameter block
//! 0x80 A × (156 + 16·B) states, then A×A f32 costs table[to][from]
//!      C × 36-byte channels
//!      D components: 0xB0 fixed bytes (i32 N at +0xAC), i32[N] channel
//!        indices, i32 L, L+1 label bytes when L ≠ 0
//!      84-byte block of 21 i32 group indices
//!      E groups: i32 n, n × 100-byte actions
//! ```

use super::bytes::Cursor;
use super::UnitError;

/// Fixed bytes of a state record before its contacts (§1.3).
pub const STATE_FIXED: usize = 156;
/// Bytes of one contact of a state.
pub const CONTACT_SIZE: usize = 16;
/// Bytes of one channel record (§1.4; OP's 36, not PP's 48: §1.6).
pub const CHANNEL_SIZE: usize = 36;
/// Fixed bytes of a component record (§5.2; OP's 0xB0).
pub const COMPONENT_FIXED: usize = 0xB0;
/// Bytes of one action record (§5.2).
pub const ACTION_SIZE: usize = 100;
/// Parameter dwords after the counts.
pub const PARAMS: usize = 27;
/// Group indices in the block between components and actions.
pub const GROUP_BLOCK: usize = 21;
/// Cost at or above which a transition does not exist (§1.3).
pub const NO_EDGE: f32 = 1_000_000.0;

/// One body state (§1.3). `raw` holds the 156 fixed bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct State {
    /// The fixed part as stored.
    pub raw: [u8; STATE_FIXED],
    /// Contacts `{i32 cpt point, u32 flags, i32 group, i32 0}` as stored.
    pub contacts: Vec<[i32; 4]>,
}

fn f32_at(b: &[u8], o: usize) -> f32 {
    f32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}

fn vec3_at(b: &[u8], o: usize) -> [f32; 3] {
    [f32_at(b, o), f32_at(b, o + 4), f32_at(b, o + 8)]
}

impl State {
    /// +0x00 box switches: bits 0–2 velocity box per axis, bits 4–6 spin box.
    pub fn switches(&self) -> u32 {
        u32_at(&self.raw, 0)
    }
    /// +0x04 mode bits (`0x1` anchor, `0x10000` moved by velocity, ...).
    pub fn mode(&self) -> u32 {
        u32_at(&self.raw, 4)
    }
    /// +0x0C frame pair A `[first, last]` (a secondary, blended pose).
    pub fn frames_a(&self) -> [f32; 2] {
        [f32_at(&self.raw, 0x0C), f32_at(&self.raw, 0x10)]
    }
    /// +0x14 frame pair B `[first, last]` (what normally plays; first >
    /// last plays backwards).
    pub fn frames_b(&self) -> [f32; 2] {
        [f32_at(&self.raw, 0x14), f32_at(&self.raw, 0x18)]
    }
    /// +0x1C blend base toward B.
    pub fn blend_base(&self) -> f32 {
        f32_at(&self.raw, 0x1C)
    }
    /// +0x20 fixed step length in ms (0: derived from stride ÷ speed).
    pub fn step_ms(&self) -> f32 {
        f32_at(&self.raw, 0x20)
    }
    /// +0x24/+0x30 velocity box `[min, max]`, m/s, machine frame (y forward).
    pub fn velocity_box(&self) -> [[f32; 3]; 2] {
        [vec3_at(&self.raw, 0x24), vec3_at(&self.raw, 0x30)]
    }
    /// +0x3C/+0x48 spin box `[min, max]`, rad/s (z = yaw).
    pub fn spin_box(&self) -> [[f32; 3]; 2] {
        [vec3_at(&self.raw, 0x3C), vec3_at(&self.raw, 0x48)]
    }
}

/// One channel: a node's own frame segment driven by a 0..1 value (§1.4).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Channel {
    /// +0x00 node animated (this part's mesh).
    pub node: i32,
    /// +0x04 first frame.
    pub first: f32,
    /// +0x08 last frame.
    pub last: f32,
    /// +0x0C initial value 0..1.
    pub initial: f32,
    /// +0x10 second control point or −1.
    pub second_point: i32,
    /// +0x14 control point in the `.cpt`.
    pub point: i32,
    /// +0x18 rate, value per second.
    pub rate: f32,
    /// +0x1C span, radians from value 0 to 1.
    pub span: f32,
    /// +0x20 flags: 1 wrap, 2 invert, 4 undriven, 8 follower, 0x40 previous value.
    pub flags: u32,
}

/// One component record (§5.2).
#[derive(Debug, Clone, PartialEq)]
pub struct Component {
    /// The 0xB0 fixed bytes as stored (class at +0, node at +4, N at +0xAC).
    pub fixed: Vec<u8>,
    /// Channel indices it drives.
    pub channels: Vec<i32>,
    /// The `L + 1` label bytes when `L ≠ 0` (slot label such as `i_eng_b`).
    pub label: Option<Vec<u8>>,
}

impl Component {
    /// +0x00 class (1 turret, 2 gun, 3 device, 4 camera, 24 arm, ...).
    pub fn class(&self) -> i32 {
        u32_at(&self.fixed, 0) as i32
    }
    /// +0x04 node.
    pub fn node(&self) -> i32 {
        u32_at(&self.fixed, 4) as i32
    }
    /// +0x08 flags.
    pub fn flags(&self) -> u32 {
        u32_at(&self.fixed, 8)
    }
}

/// A whole `.ctl` file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Controller {
    /// B, the contacts per state (A, C, D, E are the lengths below).
    pub contacts_per_state: usize,
    /// The 27 parameter dwords (§5.2).
    pub params: Vec<u32>,
    /// Section 1 states.
    pub states: Vec<State>,
    /// A×A transition costs, `costs[to * A + from]`.
    pub costs: Vec<f32>,
    /// Section 2 channels.
    pub channels: Vec<Channel>,
    /// Section 4 components.
    pub components: Vec<Component>,
    /// The 21 group indices after the components.
    pub group_block: Vec<i32>,
    /// Section 5 action groups, each a list of 100-byte actions.
    pub groups: Vec<Vec<Vec<u8>>>,
}

impl Controller {
    /// The cost of going `from` → `to` (§1.3: ≥ [`NO_EDGE`] means no edge).
    pub fn cost(&self, from: usize, to: usize) -> f32 {
        self.costs[to * self.states.len() + from]
    }
}

fn count(c: &mut Cursor<'_>, what: &str) -> Result<usize, UnitError> {
    let v = c.i32(what)?;
    usize::try_from(v).map_err(|_| UnitError::new("ctl.counts", format!("{what} is {v}")))
}

/// Reads a `.ctl` payload (unit-files-notes §5.2).
///
/// # Errors
/// `ctl.counts` for a negative count; `ctl.size` when a section runs past
/// the end of the file or the file has bytes left after section 5. Every
/// count is checked against the bytes left before anything is allocated.
pub fn read(data: &[u8]) -> Result<Controller, UnitError> {
    let mut c = Cursor::new(data, "ctl.size");
    let a = count(&mut c, "counts[0] (states)")?;
    let b = count(&mut c, "counts[1] (contacts per state)")?;
    let n_ch = count(&mut c, "counts[2] (channels)")?;
    let n_comp = count(&mut c, "counts[3] (components)")?;
    let n_groups = count(&mut c, "counts[4] (action groups)")?;
    let params = (0..PARAMS)
        .map(|_| c.u32("parameter block"))
        .collect::<Result<Vec<_>, _>>()?;
    let state_size = b
        .checked_mul(CONTACT_SIZE)
        .and_then(|x| x.checked_add(STATE_FIXED))
        .ok_or_else(|| UnitError::new("ctl.counts", format!("{b} contacts per state")))?;
    c.check_fits(a, state_size, "states")?;
    let mut states = Vec::with_capacity(a);
    for i in 0..a {
        let mut raw = [0u8; STATE_FIXED];
        raw.copy_from_slice(c.take(STATE_FIXED, &format!("state {i}"))?);
        let contacts = (0..b)
            .map(|_| {
                Ok([
                    c.i32("contact")?,
                    c.i32("contact")?,
                    c.i32("contact")?,
                    c.i32("contact")?,
                ])
            })
            .collect::<Result<Vec<_>, UnitError>>()?;
        states.push(State { raw, contacts });
    }
    c.check_fits(a.saturating_mul(a), 4, "transition costs")?;
    let costs = (0..a * a)
        .map(|_| c.f32("transition cost"))
        .collect::<Result<Vec<_>, _>>()?;
    c.check_fits(n_ch, CHANNEL_SIZE, "channels")?;
    let channels = (0..n_ch)
        .map(|i| read_channel(&mut c, i))
        .collect::<Result<Vec<_>, _>>()?;
    c.check_fits(n_comp, COMPONENT_FIXED + 4, "components")?;
    let components = (0..n_comp)
        .map(|i| read_component(&mut c, i))
        .collect::<Result<Vec<_>, _>>()?;
    let group_block = (0..GROUP_BLOCK)
        .map(|_| c.i32("group block"))
        .collect::<Result<Vec<_>, _>>()?;
    c.check_fits(n_groups, 4, "action groups")?;
    let mut groups = Vec::with_capacity(n_groups);
    for g in 0..n_groups {
        let n = count(&mut c, &format!("action group {g} size"))?;
        c.check_fits(n, ACTION_SIZE, "actions")?;
        let actions = (0..n)
            .map(|k| {
                Ok(c.take(ACTION_SIZE, &format!("group {g} action {k}"))?
                    .to_vec())
            })
            .collect::<Result<Vec<_>, UnitError>>()?;
        groups.push(actions);
    }
    c.finish("section 5")?;
    Ok(Controller {
        contacts_per_state: b,
        params,
        states,
        costs,
        channels,
        components,
        group_block,
        groups,
    })
}

fn read_channel(c: &mut Cursor<'_>, i: usize) -> Result<Channel, UnitError> {
    let w = format!("channel {i}");
    Ok(Channel {
        node: c.i32(&w)?,
        first: c.f32(&w)?,
        last: c.f32(&w)?,
        initial: c.f32(&w)?,
        second_point: c.i32(&w)?,
        point: c.i32(&w)?,
        rate: c.f32(&w)?,
        span: c.f32(&w)?,
        flags: c.u32(&w)?,
    })
}

fn read_component(c: &mut Cursor<'_>, i: usize) -> Result<Component, UnitError> {
    let w = format!("component {i}");
    let fixed = c.take(COMPONENT_FIXED, &w)?.to_vec();
    let n = u32_at(&fixed, 0xAC) as i32;
    let n = usize::try_from(n)
        .map_err(|_| UnitError::new("ctl.counts", format!("{w}: channel count {n}")))?;
    c.check_fits(n, 4, "component channel indices")?;
    let channels = (0..n).map(|_| c.i32(&w)).collect::<Result<Vec<_>, _>>()?;
    let l = c.i32(&format!("{w} label length"))?;
    let label = match l {
        0 => None,
        l if l > 0 => Some(c.take(l as usize + 1, &format!("{w} label"))?.to_vec()),
        l => {
            return Err(UnitError::new(
                "ctl.counts",
                format!("{w}: label length {l}"),
            ))
        }
    };
    Ok(Component {
        fixed,
        channels,
        label,
    })
}

fn put_i32(out: &mut Vec<u8>, v: i32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Writes a `.ctl` payload; [`read`] of the result gives `ctl` back.
/// `ctl.components[i].fixed` must be [`COMPONENT_FIXED`] bytes; its
/// +0xAC count is written from `channels.len()`.
pub fn write(ctl: &Controller) -> Vec<u8> {
    let mut out = Vec::new();
    for n in [
        ctl.states.len(),
        ctl.contacts_per_state,
        ctl.channels.len(),
        ctl.components.len(),
        ctl.groups.len(),
    ] {
        put_i32(&mut out, n as i32);
    }
    for p in &ctl.params {
        out.extend_from_slice(&p.to_le_bytes());
    }
    for s in &ctl.states {
        out.extend_from_slice(&s.raw);
        for k in s.contacts.iter().flatten() {
            put_i32(&mut out, *k);
        }
    }
    for x in &ctl.costs {
        out.extend_from_slice(&x.to_le_bytes());
    }
    for ch in &ctl.channels {
        for v in [ch.node, ch.first.to_bits() as i32, ch.last.to_bits() as i32] {
            put_i32(&mut out, v);
        }
        put_i32(&mut out, ch.initial.to_bits() as i32);
        put_i32(&mut out, ch.second_point);
        put_i32(&mut out, ch.point);
        put_i32(&mut out, ch.rate.to_bits() as i32);
        put_i32(&mut out, ch.span.to_bits() as i32);
        put_i32(&mut out, ch.flags as i32);
    }
    for comp in &ctl.components {
        let mut fixed = comp.fixed.clone();
        fixed.resize(COMPONENT_FIXED, 0);
        fixed[0xAC..0xB0].copy_from_slice(&(comp.channels.len() as u32).to_le_bytes());
        out.extend_from_slice(&fixed);
        for &ch in &comp.channels {
            put_i32(&mut out, ch);
        }
        match &comp.label {
            Some(l) if !l.is_empty() => {
                put_i32(&mut out, l.len() as i32 - 1);
                out.extend_from_slice(l);
            }
            _ => put_i32(&mut out, 0),
        }
    }
    for g in &ctl.group_block {
        put_i32(&mut out, *g);
    }
    for g in &ctl.groups {
        put_i32(&mut out, g.len() as i32);
        for a in g {
            out.extend_from_slice(a);
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A state with frame pair B = `b`, step `step_ms`, velocity box `vy`.
    pub(crate) fn state(b: [f32; 2], step_ms: f32, vy: [f32; 2], mode: u32) -> State {
        let mut raw = [0u8; STATE_FIXED];
        raw[4..8].copy_from_slice(&mode.to_le_bytes());
        for (o, v) in [
            (0x0C, -1.0f32),
            (0x10, -1.0),
            (0x14, b[0]),
            (0x18, b[1]),
            (0x20, step_ms),
        ] {
            raw[o..o + 4].copy_from_slice(&v.to_le_bytes());
        }
        raw[0x28..0x2C].copy_from_slice(&vy[0].to_le_bytes());
        raw[0x34..0x38].copy_from_slice(&vy[1].to_le_bytes());
        State {
            raw,
            contacts: vec![[3, 0x100, -1, 0]],
        }
    }

    /// A component of `class` on `node` driving `channels`.
    pub(crate) fn component(
        class: i32,
        node: i32,
        channels: Vec<i32>,
        label: Option<&[u8]>,
    ) -> Component {
        let mut fixed = vec![0u8; COMPONENT_FIXED];
        fixed[0..4].copy_from_slice(&class.to_le_bytes());
        fixed[4..8].copy_from_slice(&node.to_le_bytes());
        fixed[0xAC..0xB0].copy_from_slice(&(channels.len() as u32).to_le_bytes());
        Component {
            fixed,
            channels,
            label: label.map(|l| [l, b"\0"].concat()),
        }
    }

    pub(crate) fn channel(node: i32, first: f32, last: f32, flags: u32) -> Channel {
        Channel {
            node,
            first,
            last,
            initial: 0.5,
            second_point: -1,
            point: 0,
            rate: 4.0,
            span: 6.283_185_5,
            flags,
        }
    }

    /// A walker-like controller: stand (0), a two-state loop 1 → 2 → 1,
    /// one turret channel and one gun channel.
    pub(crate) fn sample() -> Controller {
        let states = vec![
            state([2.0, 2.0], 50.0, [-2.0, 2.0], 1),
            state([5.0, 9.0], 0.0, [2.0, 10.0], 1),
            state([9.0, 13.0], 0.0, [2.0, 10.0], 0),
        ];
        let mut costs = vec![NO_EDGE; 9];
        costs[0] = 0.0; // 0 -> 0
        costs[2 * 3 + 1] = 0.0; // 1 -> 2
        costs[3 + 2] = 0.0; // 2 -> 1
        costs[3] = 5.0; // 0 -> 1
        Controller {
            contacts_per_state: 1,
            params: (0..PARAMS as u32).collect(),
            states,
            costs,
            channels: vec![channel(1, 20.0, 24.0, 1), channel(2, 25.0, 27.0, 0)],
            components: vec![
                component(1, 1, vec![0], None),
                component(2, 2, vec![1], Some(b"i_eng_b")),
            ],
            group_block: vec![-1; GROUP_BLOCK],
            groups: vec![vec![vec![7u8; ACTION_SIZE]; 2], vec![]],
        }
    }

    #[test]
    fn round_trip_and_fields() {
        let c = sample();
        let bytes = write(&c);
        let back = read(&bytes).unwrap();
        assert_eq!(back, c);
        assert_eq!(write(&back), bytes);
        assert_eq!(back.states[1].frames_b(), [5.0, 9.0]);
        assert_eq!(back.states[0].step_ms(), 50.0);
        assert_eq!(back.states[1].velocity_box()[0][1], 2.0);
        assert_eq!(back.cost(1, 2), 0.0);
        assert_eq!(back.cost(0, 1), 5.0);
        assert_eq!(back.components[1].class(), 2);
        assert_eq!(back.components[1].label.as_deref(), Some(&b"i_eng_b\0"[..]));
        assert_eq!(back.channels[0].flags, 1);
    }

    #[test]
    fn every_truncation_and_extension_is_refused() {
        let bytes = write(&sample());
        for n in 0..bytes.len() {
            assert!(read(&bytes[..n]).is_err(), "prefix {n}");
        }
        let mut long = bytes.clone();
        long.extend_from_slice(&[0; 4]);
        assert_eq!(read(&long).unwrap_err().rule, "ctl.size");
        let mut neg = bytes.clone();
        neg[8..12].copy_from_slice(&(-1i32).to_le_bytes());
        assert_eq!(read(&neg).unwrap_err().rule, "ctl.counts");
        let mut huge = bytes;
        huge[0..4].copy_from_slice(&i32::MAX.to_le_bytes());
        assert!(read(&huge).unwrap_err().detail.contains("do not fit"));
    }
}
