//! MAT0 material records of `Material.lib` (format-notes §4).
//!
//! ```text
//! (entry attr2 = version; 6 in all retail data)
//! u16 phase_count; u16 anim_block_count (< 20)
//! if v >= 2: u8 a, u8 b      if v >= 3: u32 c      if v >= 4: u32 d
//! phase_count x { u8 p[18]; char texture[16] }          34 bytes each
//! anim_block_count x { u32 header; u16 n; n x u16[3] }
//! ```
//!
//! The runtime maps `p[4..=7] / 255` to its first colour (most likely
//! diffuse RGBA) and `p[0..=2] / 255` to the second (ambient). The other
//! phase bytes, `a`..`d` and the animation blocks are kept raw.

use super::{decode_name, MaterialError};

/// Size of one phase record in bytes.
pub const PHASE_SIZE: usize = 34;
/// The engine accepts fewer than this many animation blocks.
pub const MAX_ANIM_BLOCKS: u16 = 20;

/// One 34-byte MAT0 phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phase {
    /// The 18 parameter bytes: `p[0..=2]` ambient RGB, `p[4..=7]` diffuse
    /// RGBA (each /255); the rest is not interpreted.
    pub params: [u8; 18],
    /// The raw 16-byte texture name field.
    pub texture_raw: [u8; 16],
}

impl Phase {
    /// The texture name (a `Textures.lib` entry) decoded from Windows-1251 up
    /// to the first NUL; `None` when empty (untextured phase).
    pub fn texture(&self) -> Option<String> {
        let s = decode_name(&self.texture_raw);
        (!s.is_empty()).then_some(s)
    }

    /// Diffuse RGBA in 0..=1 (format-notes §6 R9): RGB `p[4..=6] / 255`,
    /// alpha = the opacity `p[3] / 100` (clamped to 1).
    pub fn diffuse(&self) -> [f32; 4] {
        let p = &self.params;
        let [r, g, b] = [p[4], p[5], p[6]].map(|v| f32::from(v) / 255.0);
        [r, g, b, self.opacity()]
    }

    /// Opacity in 0..=1: `p[3] / 100`, clamped (format-notes §6 R9).
    pub fn opacity(&self) -> f32 {
        (f32::from(self.params[3]) / 100.0).min(1.0)
    }

    /// Ambient RGB in 0..=1: `p[0..=2] / 255`.
    pub fn ambient(&self) -> [f32; 3] {
        let p = &self.params;
        [p[0], p[1], p[2]].map(|v| f32::from(v) / 255.0)
    }
}

/// One animation block: `u32 header; u16 n; n x u16[3]`, kept raw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnimBlock {
    /// The leading u32 (meaning unknown).
    pub header: u32,
    /// The `n` triples of u16 (meaning unknown).
    pub keys: Vec<[u16; 3]>,
}

/// A parsed MAT0 payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mat0 {
    /// Format version (the NRes entry's attr2).
    pub version: u32,
    /// `u8 a` (version >= 2), else 0.
    pub a: u8,
    /// `u8 b` (version >= 2), else 0.
    pub b: u8,
    /// `u32 c` (version >= 3), else 0.
    pub c: u32,
    /// `u32 d` (version >= 4), else 0.
    pub d: u32,
    /// The phases in file order.
    pub phases: Vec<Phase>,
    /// The animation blocks in file order.
    pub anim_blocks: Vec<AnimBlock>,
    /// Bytes after the last animation block (empty in retail data).
    pub trailing: Vec<u8>,
}

fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}

fn short(what: &str, need: usize, have: usize) -> MaterialError {
    MaterialError::new(
        "mat0.size",
        format!("{what} needs bytes up to {need}, the payload has {have}"),
    )
}

impl Mat0 {
    /// Parses a MAT0 payload of the given version (entry attr2).
    ///
    /// # Errors
    /// `mat0.anim_count` when `anim_block_count >= 20`; `mat0.size` when the
    /// header, a phase or an animation block runs past the payload.
    pub fn parse(data: &[u8], version: u32) -> Result<Mat0, MaterialError> {
        if data.len() < 4 {
            return Err(short("header", 4, data.len()));
        }
        let phase_count = u16_at(data, 0);
        let anim_count = u16_at(data, 2);
        if anim_count >= MAX_ANIM_BLOCKS {
            return Err(MaterialError::new(
                "mat0.anim_count",
                format!("anim_block_count {anim_count}, the engine limit is < {MAX_ANIM_BLOCKS}"),
            ));
        }
        let head = 4
            + if version >= 2 { 2 } else { 0 }
            + if version >= 3 { 4 } else { 0 }
            + if version >= 4 { 4 } else { 0 };
        if data.len() < head {
            return Err(short(
                &format!("version {version} header"),
                head,
                data.len(),
            ));
        }
        let (a, b) = if version >= 2 {
            (data[4], data[5])
        } else {
            (0, 0)
        };
        let c = if version >= 3 { u32_at(data, 6) } else { 0 };
        let d = if version >= 4 { u32_at(data, 10) } else { 0 };
        let phases_end = head + usize::from(phase_count) * PHASE_SIZE;
        if data.len() < phases_end {
            return Err(short(
                &format!("{phase_count} phases"),
                phases_end,
                data.len(),
            ));
        }
        let phases = data[head..phases_end]
            .chunks_exact(PHASE_SIZE)
            .map(|p| {
                let mut params = [0u8; 18];
                params.copy_from_slice(&p[..18]);
                let mut texture_raw = [0u8; 16];
                texture_raw.copy_from_slice(&p[18..]);
                Phase {
                    params,
                    texture_raw,
                }
            })
            .collect();
        let mut off = phases_end;
        let mut anim_blocks = Vec::with_capacity(usize::from(anim_count));
        for i in 0..anim_count {
            if data.len() < off + 6 {
                return Err(short(
                    &format!("animation block {i} header"),
                    off + 6,
                    data.len(),
                ));
            }
            let header = u32_at(data, off);
            let n = usize::from(u16_at(data, off + 4));
            let end = off + 6 + n * 6;
            if data.len() < end {
                return Err(short(
                    &format!("animation block {i} with {n} keys"),
                    end,
                    data.len(),
                ));
            }
            let keys = data[off + 6..end]
                .chunks_exact(6)
                .map(|k| [u16_at(k, 0), u16_at(k, 2), u16_at(k, 4)])
                .collect();
            anim_blocks.push(AnimBlock { header, keys });
            off = end;
        }
        Ok(Mat0 {
            version,
            a,
            b,
            c,
            d,
            phases,
            anim_blocks,
            trailing: data[off..].to_vec(),
        })
    }

    /// Writes the payload for this version (the inverse of [`Mat0::parse`]:
    /// `parse(&m.to_bytes(), m.version) == m` for every `Mat0` whose
    /// `anim_blocks` fit the u16 counts and whose `a`..`d` are 0 where the
    /// version has no such field). `phase_count` and `anim_block_count` are
    /// written from the vectors' lengths, truncated to u16.
    pub fn to_bytes(&self) -> Vec<u8> {
        let v = self.version;
        let mut out = Vec::with_capacity(14 + self.phases.len() * PHASE_SIZE);
        out.extend_from_slice(&(self.phases.len() as u16).to_le_bytes());
        out.extend_from_slice(&(self.anim_blocks.len() as u16).to_le_bytes());
        if v >= 2 {
            out.extend_from_slice(&[self.a, self.b]);
        }
        if v >= 3 {
            out.extend_from_slice(&self.c.to_le_bytes());
        }
        if v >= 4 {
            out.extend_from_slice(&self.d.to_le_bytes());
        }
        for ph in &self.phases {
            out.extend_from_slice(&ph.params);
            out.extend_from_slice(&ph.texture_raw);
        }
        for b in &self.anim_blocks {
            out.extend_from_slice(&b.header.to_le_bytes());
            out.extend_from_slice(&(b.keys.len() as u16).to_le_bytes());
            for k in &b.keys {
                for x in k {
                    out.extend_from_slice(&x.to_le_bytes());
                }
            }
        }
        out.extend_from_slice(&self.trailing);
        out
    }

    /// A new one-phase version-6 material (format-notes §6 R9): diffuse
    /// `p[4..=6] = round(rgb * 255)`, opacity `p[3] = round(alpha * 100)`,
    /// `p[7] = round(alpha * 255)` (the seed reading of the same alpha),
    /// ambient (self-light) `p[0..=2] = 0`, specular exponent `p[16] = 0`,
    /// no atlas cell (`p[17] = 0xFF`), other bytes 0; header `a = 2, b = 2,
    /// c = 1.0f32, d = 0` (frequent retail values); `texture` (at most 15
    /// bytes, NUL-padded) names the `Textures.lib` entry.
    ///
    /// # Errors
    /// `mat0.texture_name` when `texture` is longer than 15 bytes.
    pub fn new_colour(rgba: [f32; 4], texture: Option<&[u8]>) -> Result<Mat0, MaterialError> {
        let q = |x: f32, s: f32| (x.clamp(0.0, 1.0) * s).round() as u8;
        let mut params = [0u8; 18];
        params[3] = q(rgba[3], 100.0);
        params[4] = q(rgba[0], 255.0);
        params[5] = q(rgba[1], 255.0);
        params[6] = q(rgba[2], 255.0);
        params[7] = q(rgba[3], 255.0);
        params[17] = 0xFF;
        let mut texture_raw = [0u8; 16];
        if let Some(t) = texture {
            if t.len() > 15 {
                return Err(MaterialError::new(
                    "mat0.texture_name",
                    format!(
                        "texture name {:?} is {} bytes; the 16-byte field holds at most 15 and a NUL",
                        String::from_utf8_lossy(t),
                        t.len()
                    ),
                ));
            }
            texture_raw[..t.len()].copy_from_slice(t);
        }
        Ok(Mat0 {
            version: 6,
            a: 2,
            b: 2,
            c: 1.0f32.to_bits(),
            d: 0,
            phases: vec![Phase {
                params,
                texture_raw,
            }],
            anim_blocks: Vec::new(),
            trailing: Vec::new(),
        })
    }

    /// Opacity `p[3] / 100` of phase 0 (format-notes §6 R9); 1 without phases.
    pub fn opacity(&self) -> f32 {
        self.phases
            .first()
            .map_or(1.0, |p| f32::from(p.params[3]) / 100.0)
    }

    /// Phase 0 diffuse RGB and opacity ([`Phase::diffuse`]); opaque white
    /// without phases.
    pub fn diffuse(&self) -> [f32; 4] {
        self.phases.first().map_or([1.0; 4], Phase::diffuse)
    }

    /// Phase 0 ambient RGB (`p[0..=2] / 255`); white without phases.
    pub fn ambient(&self) -> [f32; 3] {
        self.phases.first().map_or([1.0; 3], Phase::ambient)
    }

    /// The material's texture: the first phase with a non-empty texture name
    /// (the corpus manifest's `primary_texture`; phase 0 in almost all
    /// materials, but some start with an untextured phase, e.g. `['',
    /// 'TX13_565.0']`). `None` when every phase is untextured.
    pub fn primary_texture(&self) -> Option<String> {
        self.phases.iter().find_map(Phase::texture)
    }

    /// Phase 0's own texture name; `None` when there is no phase or its name
    /// is empty (see [`Mat0::primary_texture`] for the one to display).
    pub fn phase0_texture(&self) -> Option<String> {
        self.phases.first().and_then(Phase::texture)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// BODY_7.1 from the corpus Material.lib (version 6, one phase).
    const BODY: &str = "0100000005060000003f000000002ab6ed489826ab6db442d1a5daacfad81800545830325f383838382e300000000000";

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn writes_version_6_byte_for_byte() {
        let b = hex(BODY);
        assert_eq!(Mat0::parse(&b, 6).unwrap().to_bytes(), b);
    }

    #[test]
    fn new_colour_material() {
        let m = Mat0::new_colour([1.0, 0.5, 0.0, 0.25], Some(b"DUCK.0")).unwrap();
        let back = Mat0::parse(&m.to_bytes(), 6).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.primary_texture().as_deref(), Some("DUCK.0"));
        assert_eq!(back.phases[0].params[3..8], [25, 255, 128, 0, 64]);
        assert_eq!(back.opacity(), 0.25);
        let e = Mat0::new_colour([1.0; 4], Some(b"SIXTEEN_BYTES.00")).unwrap_err();
        assert_eq!(e.rule, "mat0.texture_name");
    }

    fn arb_mat0() -> impl Strategy<Value = Mat0> {
        let phase =
            (any::<[u8; 18]>(), any::<[u8; 16]>()).prop_map(|(params, texture_raw)| Phase {
                params,
                texture_raw,
            });
        let block = (any::<u32>(), prop::collection::vec(any::<[u16; 3]>(), 0..4))
            .prop_map(|(header, keys)| AnimBlock { header, keys });
        (
            0u32..8,
            any::<(u8, u8, u32, u32)>(),
            prop::collection::vec(phase, 0..5),
            prop::collection::vec(block, 0..(MAX_ANIM_BLOCKS as usize)),
            prop::collection::vec(any::<u8>(), 0..3),
        )
            .prop_map(
                |(version, (a, b, c, d), phases, anim_blocks, trailing)| Mat0 {
                    version,
                    a: if version >= 2 { a } else { 0 },
                    b: if version >= 2 { b } else { 0 },
                    c: if version >= 3 { c } else { 0 },
                    d: if version >= 4 { d } else { 0 },
                    phases,
                    anim_blocks,
                    trailing,
                },
            )
    }

    proptest! {
        /// to_bytes then parse gives the same material back, and parse then
        /// to_bytes gives the same bytes back.
        #[test]
        fn to_bytes_parse_round_trip(m in arb_mat0()) {
            let bytes = m.to_bytes();
            let back = Mat0::parse(&bytes, m.version).unwrap();
            prop_assert_eq!(&back, &m);
            prop_assert_eq!(back.to_bytes(), bytes);
        }
    }

    #[test]
    fn parses_version_6() {
        let m = Mat0::parse(&hex(BODY), 6).unwrap();
        assert_eq!((m.a, m.b, m.c, m.d), (5, 6, 0x3f00_0000, 0));
        assert_eq!(m.phases.len(), 1);
        assert!(m.anim_blocks.is_empty() && m.trailing.is_empty());
        assert_eq!(m.primary_texture().as_deref(), Some("TX02_8888.0"));
        assert_eq!(
            m.diffuse(),
            [
                0x98 as f32 / 255.0,
                0x26 as f32 / 255.0,
                0xab as f32 / 255.0,
                0.72 // p[3] = 0x48 = 72 %
            ]
        );
        assert_eq!(
            m.ambient(),
            [
                0x2a as f32 / 255.0,
                0xb6 as f32 / 255.0,
                0xed as f32 / 255.0
            ]
        );
    }

    #[test]
    fn parses_versions_and_anim_blocks() {
        // v1: no a/b/c/d; 1 phase without texture; 2 anim blocks (n = 1, n = 0), 1 trailing byte.
        let mut d = vec![1, 0, 2, 0];
        d.extend_from_slice(&[255; 18]);
        d.extend_from_slice(&[0; 16]);
        d.extend_from_slice(&7u32.to_le_bytes());
        d.extend_from_slice(&1u16.to_le_bytes());
        d.extend_from_slice(&[1, 0, 2, 0, 3, 0]);
        d.extend_from_slice(&9u32.to_le_bytes());
        d.extend_from_slice(&0u16.to_le_bytes());
        d.push(0xAA);
        let m = Mat0::parse(&d, 1).unwrap();
        assert_eq!(m.primary_texture(), None);
        assert_eq!(m.diffuse(), [1.0; 4]);
        assert_eq!(
            m.anim_blocks,
            vec![
                AnimBlock {
                    header: 7,
                    keys: vec![[1, 2, 3]]
                },
                AnimBlock {
                    header: 9,
                    keys: vec![]
                }
            ]
        );
        assert_eq!(m.trailing, vec![0xAA]);
        // v3 header is 10 bytes: a, b, c.
        let mut d = vec![0, 0, 0, 0, 1, 2];
        d.extend_from_slice(&0x1234_5678u32.to_le_bytes());
        let m = Mat0::parse(&d, 3).unwrap();
        assert_eq!((m.a, m.b, m.c, m.d), (1, 2, 0x1234_5678, 0));
        assert_eq!(m.diffuse(), [1.0; 4]);
    }

    #[test]
    fn primary_texture_skips_untextured_phases() {
        // Two phases: phase 0 untextured, phase 1 "TX13_565.0".
        let mut d = vec![2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        d.extend_from_slice(&[0; 34]);
        d.extend_from_slice(&[9; 18]);
        let mut name = [0u8; 16];
        name[..10].copy_from_slice(b"TX13_565.0");
        d.extend_from_slice(&name);
        let m = Mat0::parse(&d, 6).unwrap();
        assert_eq!(m.phase0_texture(), None);
        assert_eq!(m.primary_texture().as_deref(), Some("TX13_565.0"));
        assert_eq!(m.diffuse(), [0.0; 4]); // still phase 0's colour
    }

    #[test]
    fn error_rules() {
        let rule = |d: &[u8], v| Mat0::parse(d, v).unwrap_err().rule;
        assert_eq!(rule(&[1, 0], 6), "mat0.size");
        assert_eq!(rule(&[0, 0, 0, 0, 1], 6), "mat0.size");
        let body = hex(BODY);
        assert_eq!(rule(&body[..47], 6), "mat0.size");
        // The corpus bad file: 1 phase, anim_block_count 20.
        let mut bad = body.clone();
        bad[2] = 20;
        assert_eq!(rule(&bad, 6), "mat0.anim_count");
        bad[2] = 19; // allowed count, but the blocks are missing
        assert_eq!(rule(&bad, 6), "mat0.size");
        // A block whose key count runs past the end.
        let mut d = body.clone();
        d[2] = 1;
        d.extend_from_slice(&[0, 0, 0, 0, 0xFF, 0xFF]);
        let e = Mat0::parse(&d, 6).unwrap_err();
        assert_eq!(e.rule, "mat0.size");
        assert!(e.detail.contains("65535 keys"), "{e}");
    }
}
