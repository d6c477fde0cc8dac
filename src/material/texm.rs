//! Texm images of `Textures.lib` and `LightMap.lib` (format-notes §4).
//!
//! ```text
//! u32 magic 'Texm'; u32 width, height, mip_count, flags4, flags5, unk6, format
//! if format == 0: 256 x 4-byte palette
//! mip_count levels, largest first; level i is max(1, w>>i) x max(1, h>>i) pixels
//! optional: "Page" u32 n; n x { i16 x, w, y, h }       (atlas rectangles)
//! the payload ends exactly there
//! ```
//!
//! Bytes per pixel: 1 for format 0 (palette index); 2 for 565, 556, 4444 and
//! 88; 4 for 888 and 8888. Pixel (x, y) with y = 0 is the first stored row.
//!
//! # Channel order
//!
//! The channel order of 888, 8888 and the palette cannot be told from a file
//! (format-notes §4, §6 R8). [`Texm::decode`] uses [`RETAIL_ORDER`], the
//! order of real game files (Direct3D memory order):
//! - 565: u16 LE, R in the 5 high bits, then G (6), B (5) — [`PACKED_565`];
//! - 556: R (5 high bits), G (5), B (6 low bits) — [`PACKED_556`];
//! - 4444: A in the high nibble, then R, G, B — [`PACKED_4444`];
//! - 88: luminance in the high byte, alpha in the low byte — [`PACKED_88`];
//! - 888: bytes B, G, R, X (X ignored, alpha 255) — [`D3D_BYTES_888`];
//! - 8888: bytes B, G, R, A — [`D3D_BYTES_8888`];
//! - palette entries: bytes B, G, R, X (opaque) — [`D3D_BYTES_PALETTE`].
//!
//! The other public reading is [`ARGB_ORDER`]: 888 = R, G, B, X; 8888 =
//! A, R, G, B; palette = R, G, B, A; 16-bit formats unchanged.
//! [`Texm::decode_with`] takes either; the choice is
//! [`crate::convention::TexmOrder`] (`--texm-order`).
//!
//! An n-bit channel value v expands to 8 bits as `(v*255 + max/2) / max` with
//! `max = 2^n - 1` (4-bit: `v*17`); decoders using bit replication may differ
//! by 1 on non-extreme 5/6-bit values.

use super::MaterialError;
use image::RgbaImage;

/// Size of the Texm header in bytes.
pub const HEADER_SIZE: usize = 32;
/// Size of the format-0 palette in bytes (256 entries x 4 bytes).
pub const PALETTE_SIZE: usize = 1024;
/// File magic (`'Texm'`, u32 LE 0x6D786554).
pub const MAGIC: &[u8; 4] = b"Texm";
/// Magic of the optional atlas chunk after the mips.
pub const PAGE_MAGIC: &[u8; 4] = b"Page";

/// A Texm pixel format (header field `format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TexFormat {
    /// Code 0: 1-byte palette index; a 256 x 4-byte palette follows the header.
    Indexed8,
    /// Code 565: u16, R5 G6 B5.
    Rgb565,
    /// Code 556: u16, R5 G5 B6.
    Rgb556,
    /// Code 4444: u16, A4 R4 G4 B4.
    Argb4444,
    /// Code 88: u16, luminance 8 (high byte) + alpha 8 (low byte).
    La88,
    /// Code 888: 4 bytes, three colour channels and an unused byte.
    Rgbx888,
    /// Code 8888: 4 bytes, alpha and three colour channels.
    Argb8888,
}

impl TexFormat {
    /// The format for a header code (0, 565, 556, 4444, 88, 888, 8888).
    pub fn from_code(code: u32) -> Option<TexFormat> {
        Some(match code {
            0 => TexFormat::Indexed8,
            565 => TexFormat::Rgb565,
            556 => TexFormat::Rgb556,
            4444 => TexFormat::Argb4444,
            88 => TexFormat::La88,
            888 => TexFormat::Rgbx888,
            8888 => TexFormat::Argb8888,
            _ => return None,
        })
    }

    /// The header code of this format.
    pub fn code(self) -> u32 {
        match self {
            TexFormat::Indexed8 => 0,
            TexFormat::Rgb565 => 565,
            TexFormat::Rgb556 => 556,
            TexFormat::Argb4444 => 4444,
            TexFormat::La88 => 88,
            TexFormat::Rgbx888 => 888,
            TexFormat::Argb8888 => 8888,
        }
    }

    /// Bytes per stored pixel: 1, 2 or 4.
    pub fn bytes_per_pixel(self) -> usize {
        match self {
            TexFormat::Indexed8 => 1,
            TexFormat::Rgb565 | TexFormat::Rgb556 | TexFormat::Argb4444 | TexFormat::La88 => 2,
            TexFormat::Rgbx888 | TexFormat::Argb8888 => 4,
        }
    }
}

/// One channel of a stored pixel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    /// Red.
    R,
    /// Green.
    G,
    /// Blue.
    B,
    /// Alpha.
    A,
    /// Luminance: written to R, G and B.
    L,
    /// Unused: ignored (alpha stays 255 unless an A channel sets it).
    X,
}

use Channel::{A, B, G, L, R, X};

/// Bit fields of a packed 16-bit (u16 LE) pixel: `(channel, bits)` from the
/// most significant bit down.
pub type PackedLayout = &'static [(Channel, u8)];

/// 565: R in the 5 high bits, G 6, B 5.
pub const PACKED_565: PackedLayout = &[(R, 5), (G, 6), (B, 5)];
/// 556: R5 G5 B6 (R high, B in the 6 low bits).
pub const PACKED_556: PackedLayout = &[(R, 5), (G, 5), (B, 6)];
/// 4444: A in the high nibble, then R, G, B.
pub const PACKED_4444: PackedLayout = &[(A, 4), (R, 4), (G, 4), (B, 4)];
/// 88: luminance in the high byte, alpha in the low byte.
pub const PACKED_88: PackedLayout = &[(L, 8), (A, 8)];
/// 888, the other public reading (fparkan): bytes R, G, B, X.
pub const BYTES_888: [Channel; 4] = [R, G, B, X];
/// 8888, the other public reading (fparkan): bytes A, R, G, B.
pub const BYTES_8888: [Channel; 4] = [A, R, G, B];
/// Palette entries, the other public reading (fparkan): bytes R, G, B, A.
pub const BYTES_PALETTE: [Channel; 4] = [R, G, B, A];
/// 888 in retail files (Direct3D memory order, format-notes §6 R8): B, G, R, X.
pub const D3D_BYTES_888: [Channel; 4] = [B, G, R, X];
/// 8888 in retail files (Direct3D memory order, format-notes §6 R8): B, G, R, A.
pub const D3D_BYTES_8888: [Channel; 4] = [B, G, R, A];
/// Palette entries in retail files (format-notes §6 R8): B, G, R, X (opaque).
pub const D3D_BYTES_PALETTE: [Channel; 4] = [B, G, R, X];

/// The channel order of every format (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChannelOrder {
    /// Format 565.
    pub packed_565: PackedLayout,
    /// Format 556.
    pub packed_556: PackedLayout,
    /// Format 4444.
    pub packed_4444: PackedLayout,
    /// Format 88.
    pub packed_88: PackedLayout,
    /// Format 888, byte by byte.
    pub bytes_888: [Channel; 4],
    /// Format 8888, byte by byte.
    pub bytes_8888: [Channel; 4],
    /// Format-0 palette entries, byte by byte.
    pub palette: [Channel; 4],
}

/// The retail order (format-notes §6 R8, the default; `--texm-order
/// retail`): 16-bit formats as above, 888 B,G,R,X, 8888 B,G,R,A, palettes
/// B,G,R,X.
pub const RETAIL_ORDER: ChannelOrder = ChannelOrder {
    packed_565: PACKED_565,
    packed_556: PACKED_556,
    packed_4444: PACKED_4444,
    packed_88: PACKED_88,
    bytes_888: D3D_BYTES_888,
    bytes_8888: D3D_BYTES_8888,
    palette: D3D_BYTES_PALETTE,
};

/// The other public reading (`--texm-order argb`): 888 R,G,B,X, 8888
/// A,R,G,B, palettes R,G,B,A.
pub const ARGB_ORDER: ChannelOrder = ChannelOrder {
    bytes_888: BYTES_888,
    bytes_8888: BYTES_8888,
    palette: BYTES_PALETTE,
    ..RETAIL_ORDER
};

/// One atlas rectangle of the `Page` chunk, in pixels of mip 0, stored as
/// `i16 x, w, y, h`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRect {
    /// Left edge.
    pub x: i16,
    /// Width.
    pub w: i16,
    /// Top edge.
    pub y: i16,
    /// Height.
    pub h: i16,
}

/// A parsed Texm payload; pixel data is borrowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Texm<'a> {
    /// Mip 0 width in pixels (>= 1).
    pub width: u32,
    /// Mip 0 height in pixels (>= 1).
    pub height: u32,
    /// Header `flags4` (not interpreted).
    pub flags4: u32,
    /// Header `flags5` (not interpreted).
    pub flags5: u32,
    /// Header `unk6` (not interpreted).
    pub unk6: u32,
    /// Pixel format.
    pub format: TexFormat,
    /// The 1024-byte palette of format 0.
    pub palette: Option<&'a [u8]>,
    /// Stored bytes of each mip level, largest first (`mip_count` levels).
    pub mips: Vec<&'a [u8]>,
    /// The `Page` atlas rectangles; `None` when the chunk is absent.
    pub page: Option<Vec<PageRect>>,
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}

/// The image shape of a Texm header (format-notes §4): mip 0 size in
/// pixels, mip count and pixel format, for the mip size checks.
#[derive(Debug, Clone, Copy)]
struct Shape {
    /// Mip 0 width in pixels (>= 1).
    width: u32,
    /// Mip 0 height in pixels (>= 1).
    height: u32,
    /// The header's `mip_count` (>= 1).
    mip_count: u32,
    /// Pixel format.
    format: TexFormat,
}

impl Shape {
    /// Slices the `mip_count` levels, largest first, from byte `off` of
    /// `data` on; returns them and the offset after the last one. Sizes use
    /// saturating 64-bit arithmetic; nothing is allocated per level before
    /// its bytes are known present.
    ///
    /// # Errors
    /// `texm.size` when a level runs past the payload (the message gives the
    /// least total the levels need).
    fn slice_mips<'a>(
        &self,
        data: &'a [u8],
        mut off: u64,
    ) -> Result<(Vec<&'a [u8]>, u64), MaterialError> {
        let Shape {
            width,
            height,
            mip_count,
            format,
        } = *self;
        let code = format.code();
        let len = data.len() as u64;
        let bpp = format.bytes_per_pixel() as u64;
        let mut mips = Vec::new();
        for level in 0..mip_count {
            let (w, h) = mip_dims(width, height, level);
            let size = (u64::from(w) * u64::from(h)).saturating_mul(bpp);
            let end = off.saturating_add(size);
            if end > len {
                // Total expected size, for the message (saturating: mip_count may be huge).
                let mut need = off;
                for l in level..mip_count.min(level + 64) {
                    let (w, h) = mip_dims(width, height, l);
                    need = need.saturating_add((u64::from(w) * u64::from(h)).saturating_mul(bpp));
                }
                return Err(MaterialError::new(
                    "texm.size",
                    format!(
                        "{width} x {height} format {code} with {mip_count} mips: mip {level} ({w} x {h}) ends at {end}, \
                         the payload has {len} bytes (header + palette + mips need at least {need})"
                    ),
                ));
            }
            mips.push(&data[off as usize..end as usize]);
            off = end;
        }
        Ok((mips, off))
    }
}

/// The `Page` chunk after the mips (format-notes §4): `"Page"`, u32 rect
/// count, then `i16 x, w, y, h` per rect. `off` is the chunk's offset in the
/// payload, for the message.
///
/// # Errors
/// `texm.page` when the rect count does not match the bytes that follow.
fn parse_page(rest: &[u8], off: u64) -> Result<Vec<PageRect>, MaterialError> {
    let n = u64::from(u32_at(rest, 4));
    let have = rest.len() as u64 - 8;
    if n * 8 != have {
        return Err(MaterialError::new(
            "texm.page",
            format!(
                "Page chunk at {off} declares {n} rects ({} bytes), {have} bytes follow",
                n * 8
            ),
        ));
    }
    Ok(rest[8..]
        .chunks_exact(8)
        .map(|c| {
            let v = |i: usize| i16::from_le_bytes([c[i], c[i + 1]]);
            PageRect {
                x: v(0),
                w: v(2),
                y: v(4),
                h: v(6),
            }
        })
        .collect())
}

/// Levels of a full mip chain of a `w` x `h` image (`w`, `h` >= 1): from
/// `w` x `h` down to 1 x 1, `floor(log2(max(w, h))) + 1` (at most 32). A
/// Texm declaring more is refused (`texm.mip_count`) before any level is
/// sliced, so a tiny image cannot declare millions of levels.
pub fn max_mips(w: u32, h: u32) -> u32 {
    32 - w.max(h).max(1).leading_zeros()
}

/// Size of mip level `level` of a `w` x `h` image: `max(1, w >> level)` x
/// `max(1, h >> level)`.
pub fn mip_dims(w: u32, h: u32, level: u32) -> (u32, u32) {
    (
        w.checked_shr(level).unwrap_or(0).max(1),
        h.checked_shr(level).unwrap_or(0).max(1),
    )
}

/// `(v*255 + max/2) / max` for an n-bit value (format-notes §4, manifest
/// `channel_expansion`).
#[inline]
fn expand(v: u32, bits: u8) -> u8 {
    let max = (1u32 << bits) - 1;
    ((v * 255 + max / 2) / max) as u8
}

impl<'a> Texm<'a> {
    /// Refuses to decode this texture when its mip-0 pixels cost more than
    /// `max_work` units ([`crate::limits::IMAGE_PIXELS_PER_UNIT`] pixels
    /// per unit, from the header alone; issue 26 item 5: `--textures-out`
    /// of one 8192 x 8192 texture took 1 GB). The default budget decodes up
    /// to 8 million pixels (2828 x 2828).
    ///
    /// # Errors
    /// `limits.work` naming the size, the units and the budget.
    pub fn check_decode_work(&self, max_work: u64) -> Result<(), MaterialError> {
        let units = (u64::from(self.width) * u64::from(self.height))
            .div_ceil(crate::limits::IMAGE_PIXELS_PER_UNIT);
        if units > max_work {
            return Err(MaterialError::new(
                "limits.work",
                format!(
                    "{} x {}: decoding it needs {units} work units, over the budget of {max_work} (docs/safety.md \"Bounded work\"; raise it with --max-work)",
                    self.width, self.height
                ),
            ));
        }
        Ok(())
    }

    /// Parses a Texm payload and checks that it ends exactly after the mips
    /// or the `Page` chunk. Sizes use checked 64-bit arithmetic; nothing is
    /// allocated from a header value before the bytes are known present.
    ///
    /// # Errors
    /// `texm.magic` (no `Texm` magic), `texm.format` (unknown format code),
    /// `texm.mip_count` (more levels than the chain to 1 x 1,
    /// [`max_mips`]); `texm.size` (zero width/height/mip_count, payload shorter than
    /// header + palette + mips, or bytes after the mips that are not a `Page`
    /// chunk), `texm.page` (the chunk's rect count does not match its bytes).
    pub fn parse(data: &'a [u8]) -> Result<Texm<'a>, MaterialError> {
        if data.len() < 4 || &data[..4] != MAGIC {
            return Err(MaterialError::new(
                "texm.magic",
                format!(
                    "payload does not start with \"Texm\" (first bytes {:02X?})",
                    &data[..data.len().min(4)]
                ),
            ));
        }
        if data.len() < HEADER_SIZE {
            return Err(MaterialError::new(
                "texm.size",
                format!(
                    "payload is {} bytes, shorter than the 32-byte header",
                    data.len()
                ),
            ));
        }
        let width = u32_at(data, 4);
        let height = u32_at(data, 8);
        let mip_count = u32_at(data, 12);
        let (flags4, flags5, unk6, code) = (
            u32_at(data, 16),
            u32_at(data, 20),
            u32_at(data, 24),
            u32_at(data, 28),
        );
        let format = TexFormat::from_code(code).ok_or_else(|| {
            MaterialError::new(
                "texm.format",
                format!("format {code} is not one of 0, 565, 556, 4444, 88, 888, 8888"),
            )
        })?;
        if width == 0 || height == 0 || mip_count == 0 {
            return Err(MaterialError::new(
                "texm.size",
                format!("{width} x {height} with {mip_count} mips: nothing to decode"),
            ));
        }
        let chain = max_mips(width, height);
        if mip_count > chain {
            return Err(MaterialError::new(
                "texm.mip_count",
                format!(
                    "{width} x {height} declares {mip_count} mips: its chain ends at 1 x 1 after {chain} (levels past it would only repeat 1 x 1)"
                ),
            ));
        }
        let len = data.len() as u64;
        let mut off = HEADER_SIZE as u64;
        let palette = if format == TexFormat::Indexed8 {
            if len < off + PALETTE_SIZE as u64 {
                return Err(MaterialError::new(
                    "texm.size",
                    format!("format 0 needs a 1024-byte palette after the header, the payload has {len} bytes"),
                ));
            }
            off += PALETTE_SIZE as u64;
            Some(&data[HEADER_SIZE..HEADER_SIZE + PALETTE_SIZE])
        } else {
            None
        };
        let shape = Shape {
            width,
            height,
            mip_count,
            format,
        };
        let (mips, off) = shape.slice_mips(data, off)?;
        let rest = &data[off as usize..];
        let page = if rest.is_empty() {
            None
        } else if rest.len() >= 8 && &rest[..4] == PAGE_MAGIC {
            Some(parse_page(rest, off)?)
        } else {
            return Err(MaterialError::new(
                "texm.size",
                format!(
                    "{width} x {height} format {code} with {mip_count} mips ends at {off}, \
                     {} more bytes follow that are not a Page chunk",
                    rest.len()
                ),
            ));
        };
        Ok(Texm {
            width,
            height,
            flags4,
            flags5,
            unk6,
            format,
            palette,
            mips,
            page,
        })
    }

    /// Number of mip levels (the header's `mip_count`).
    pub fn mip_count(&self) -> usize {
        self.mips.len()
    }

    /// Decodes mip 0 to RGBA8 with [`RETAIL_ORDER`].
    pub fn decode(&self) -> RgbaImage {
        self.decode_with(&RETAIL_ORDER, 0)
            .unwrap_or_else(|| RgbaImage::new(1, 1))
    }

    /// Decodes mip `level` to RGBA8 with the given channel order; `None`
    /// when the level does not exist.
    pub fn decode_with(&self, order: &ChannelOrder, level: usize) -> Option<RgbaImage> {
        let src = *self.mips.get(level)?;
        let (w, h) = mip_dims(self.width, self.height, level as u32);
        let mut out = vec![0u8; src.len() / self.format.bytes_per_pixel() * 4];
        match self.format {
            TexFormat::Indexed8 => {
                let pal = self.palette?;
                let mut lut = [[0u8; 4]; 256];
                for (e, p) in lut.iter_mut().zip(pal.chunks_exact(4)) {
                    *e = bytes_pixel(p, &order.palette);
                }
                for (o, &i) in out.chunks_exact_mut(4).zip(src) {
                    o.copy_from_slice(&lut[usize::from(i)]);
                }
            }
            TexFormat::Rgb565 => decode_packed(src, &mut out, order.packed_565),
            TexFormat::Rgb556 => decode_packed(src, &mut out, order.packed_556),
            TexFormat::Argb4444 => decode_packed(src, &mut out, order.packed_4444),
            TexFormat::La88 => decode_packed(src, &mut out, order.packed_88),
            TexFormat::Rgbx888 => {
                for (o, p) in out.chunks_exact_mut(4).zip(src.chunks_exact(4)) {
                    o.copy_from_slice(&bytes_pixel(p, &order.bytes_888));
                }
            }
            TexFormat::Argb8888 => {
                for (o, p) in out.chunks_exact_mut(4).zip(src.chunks_exact(4)) {
                    o.copy_from_slice(&bytes_pixel(p, &order.bytes_8888));
                }
            }
        }
        RgbaImage::from_raw(w, h, out)
    }
}

/// One 4-byte pixel in the given byte order.
#[inline]
pub(super) fn bytes_pixel(p: &[u8], order: &[Channel; 4]) -> [u8; 4] {
    let mut px = [0, 0, 0, 255];
    for (&v, &c) in p.iter().zip(order) {
        set(&mut px, c, v);
    }
    px
}

#[inline]
fn set(px: &mut [u8; 4], c: Channel, v: u8) {
    match c {
        R => px[0] = v,
        G => px[1] = v,
        B => px[2] = v,
        A => px[3] = v,
        L => {
            px[0] = v;
            px[1] = v;
            px[2] = v;
        }
        X => {}
    }
}

/// Decodes u16 LE pixels through a packed layout. Each field's expansion is
/// tabulated once (at most 256 entries).
fn decode_packed(src: &[u8], out: &mut [u8], layout: PackedLayout) {
    struct Field {
        channel: Channel,
        shift: u32,
        mask: u32,
        table: Vec<u8>,
    }
    let mut top = 16u32;
    let fields: Vec<Field> = layout
        .iter()
        .map(|&(channel, bits)| {
            let bits = bits.clamp(1, 8);
            top = top.saturating_sub(u32::from(bits));
            Field {
                channel,
                shift: top,
                mask: (1 << bits) - 1,
                table: (0..1u32 << bits).map(|v| expand(v, bits)).collect(),
            }
        })
        .collect();
    for (o, p) in out.chunks_exact_mut(4).zip(src.chunks_exact(2)) {
        let v = u32::from(u16::from_le_bytes([p[0], p[1]]));
        let mut px = [0, 0, 0, 255];
        for f in &fields {
            set(
                &mut px,
                f.channel,
                f.table[((v >> f.shift) & f.mask) as usize],
            );
        }
        o.copy_from_slice(&px);
    }
}

/// The Texm header `flags4` of retail `Textures.lib` entries (32; the
/// `LightMap.lib` entries have 0). Its meaning is unknown.
pub const TEXTURE_FLAGS4: u32 = 32;

/// Number of levels of a full mip chain down to 1 x 1:
/// `floor(log2(max(w, h))) + 1`.
pub fn full_mip_count(w: u32, h: u32) -> u32 {
    32 - w.max(h).max(1).leading_zeros()
}

/// `round(v * max / 255)`: the n-bit value whose expansion
/// (`(q*255 + max/2) / max`) is nearest to `v`.
#[inline]
fn quantize(v: u8, bits: u8) -> u32 {
    let max = (1u32 << bits) - 1;
    (u32::from(v) * max * 2 + 255) / (255 * 2)
}

/// Luminance of an RGB pixel, `round(0.299 R + 0.587 G + 0.114 B)` (88).
#[inline]
fn luminance(p: &[u8]) -> u8 {
    ((299 * u32::from(p[0]) + 587 * u32::from(p[1]) + 114 * u32::from(p[2]) + 500) / 1000) as u8
}

#[inline]
pub(super) fn get(p: &[u8], c: Channel) -> u8 {
    match c {
        R => p[0],
        G => p[1],
        B => p[2],
        A => p[3],
        L => luminance(p),
        X => 0,
    }
}

/// Encodes one level's RGBA8 pixels in `format` with the channel `order`
/// (inverse of [`Texm::decode_with`]: channels are rounded to the nearest
/// representable value; an unused `X` byte is 0).
pub(super) fn encode_level(px: &[u8], format: TexFormat, order: &ChannelOrder, out: &mut Vec<u8>) {
    let packed = |layout: PackedLayout, out: &mut Vec<u8>| {
        for p in px.chunks_exact(4) {
            let mut v = 0u32;
            let mut top = 16u32;
            for &(c, bits) in layout {
                let bits = bits.clamp(1, 8);
                top = top.saturating_sub(u32::from(bits));
                v |= quantize(get(p, c), bits) << top;
            }
            out.extend_from_slice(&(v as u16).to_le_bytes());
        }
    };
    let bytes = |o: &[Channel; 4], out: &mut Vec<u8>| {
        for p in px.chunks_exact(4) {
            out.extend(o.iter().map(|&c| get(p, c)));
        }
    };
    match format {
        TexFormat::Rgb565 => packed(order.packed_565, out),
        TexFormat::Rgb556 => packed(order.packed_556, out),
        TexFormat::Argb4444 => packed(order.packed_4444, out),
        TexFormat::La88 => packed(order.packed_88, out),
        TexFormat::Rgbx888 => bytes(&order.bytes_888, out),
        TexFormat::Argb8888 => bytes(&order.bytes_8888, out),
        TexFormat::Indexed8 => {}
    }
}

/// Encodes `img` as a Texm payload (format-notes §4): header (`flags4`,
/// `flags5 = 0`, `unk6 = 0`), then `mip_count` levels largest first; level
/// `i > 0` is level `i - 1` resized to [`mip_dims`] with a triangle
/// (bilinear) filter, i.e. a 2 x 2 average for power-of-two sizes.
/// `mip_count` 0 means a [`full_mip_count`] chain. Channels are written in
/// `order` ([`RETAIL_ORDER`] is the retail order, format-notes §6 R8).
///
/// # Errors
/// `texm.format` for [`TexFormat::Indexed8`] (no palette encoder);
/// `texm.size` for an empty image or more levels than a full chain.
pub fn encode(
    img: &RgbaImage,
    format: TexFormat,
    order: &ChannelOrder,
    mip_count: u32,
    flags4: u32,
) -> Result<Vec<u8>, MaterialError> {
    let (w, h) = img.dimensions();
    if format == TexFormat::Indexed8 {
        return Err(MaterialError::new(
            "texm.format",
            "format 0 (palette) is not written; use 565, 556, 4444, 88, 888 or 8888",
        ));
    }
    let full = full_mip_count(w, h);
    let mips = if mip_count == 0 { full } else { mip_count };
    if w == 0 || h == 0 || mips > full {
        return Err(MaterialError::new(
            "texm.size",
            format!("{w} x {h} image with {mips} mips (at most {full})"),
        ));
    }
    let bpp = format.bytes_per_pixel();
    let total: usize = (0..mips)
        .map(|l| {
            let (a, b) = mip_dims(w, h, l);
            a as usize * b as usize * bpp
        })
        .sum();
    let mut out = Vec::with_capacity(HEADER_SIZE + total);
    out.extend_from_slice(MAGIC);
    for v in [w, h, mips, flags4, 0, 0, format.code()] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    let mut level = img.clone();
    for l in 0..mips {
        if l > 0 {
            let (a, b) = mip_dims(w, h, l);
            level = image::imageops::resize(&level, a, b, image::imageops::FilterType::Triangle);
        }
        encode_level(level.as_raw(), format, order, &mut out);
    }
    Ok(out)
}

/// True when any pixel has alpha < 255.
pub fn has_alpha(img: &RgbaImage) -> bool {
    img.as_raw().chunks_exact(4).any(|p| p[3] != 255)
}

/// Encodes an image as PNG: 8-bit RGBA when [`has_alpha`], else 8-bit RGB
/// (same pixels, smaller file).
///
/// # Errors
/// `png.encode` when the encoder fails (not expected for a valid image).
pub fn encode_png(img: &RgbaImage) -> Result<Vec<u8>, MaterialError> {
    use image::{codecs::png::PngEncoder, ExtendedColorType, ImageEncoder};
    let mut out = Vec::new();
    let enc = PngEncoder::new(&mut out);
    let (w, h) = img.dimensions();
    let res = if has_alpha(img) {
        enc.write_image(img.as_raw(), w, h, ExtendedColorType::Rgba8)
    } else {
        let rgb: Vec<u8> = img
            .as_raw()
            .chunks_exact(4)
            .flat_map(|p| [p[0], p[1], p[2]])
            .collect();
        enc.write_image(&rgb, w, h, ExtendedColorType::Rgb8)
    };
    res.map_err(|e| MaterialError::new("png.encode", format!("{w} x {h} image: {e}")))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn texm(w: u32, h: u32, mips: u32, format: u32, body: &[u8]) -> Vec<u8> {
        let mut d = b"Texm".to_vec();
        for v in [w, h, mips, 32, 0, 0, format] {
            d.extend_from_slice(&v.to_le_bytes());
        }
        d.extend_from_slice(body);
        d
    }

    fn px(img: &RgbaImage, x: u32, y: u32) -> [u8; 4] {
        img.get_pixel(x, y).0
    }

    #[test]
    fn expansion_formula() {
        assert_eq!(expand(0, 5), 0);
        assert_eq!(expand(31, 5), 255);
        assert_eq!(expand(1, 5), 8); // (255 + 15) / 31
        assert_eq!(expand(16, 5), 132); // (4080 + 15) / 31; bit replication gives 132 too
        assert_eq!(expand(15, 5), 123); // replication gives 123
        assert_eq!(expand(1, 6), 4); // (255 + 31) / 63
        assert_eq!(expand(32, 6), 130); // replication gives 130
        assert_eq!(expand(7, 4), 119);
    }

    #[test]
    fn decodes_16_bit_formats() {
        // 2 x 1, one mip each.
        let v = |a: u16, b: u16| [a.to_le_bytes(), b.to_le_bytes()].concat();
        let t = texm(2, 1, 1, 565, &v(0xF800, 0x07E0 | 0x0001));
        let img = Texm::parse(&t).unwrap().decode();
        assert_eq!(px(&img, 0, 0), [255, 0, 0, 255]);
        assert_eq!(px(&img, 1, 0), [0, 255, 8, 255]);
        let t = texm(2, 1, 1, 556, &v(0x07C0, 0x003F | (1 << 11)));
        let img = Texm::parse(&t).unwrap().decode();
        assert_eq!(px(&img, 0, 0), [0, 255, 0, 255]);
        assert_eq!(px(&img, 1, 0), [8, 0, 255, 255]);
        let t = texm(2, 1, 1, 4444, &v(0x8F00, 0x1234));
        let img = Texm::parse(&t).unwrap().decode();
        assert_eq!(px(&img, 0, 0), [255, 0, 0, 136]);
        assert_eq!(px(&img, 1, 0), [34, 51, 68, 17]);
        let t = texm(2, 1, 1, 88, &v(0x80FF, 0x1020));
        let img = Texm::parse(&t).unwrap().decode();
        assert_eq!(px(&img, 0, 0), [128, 128, 128, 255]);
        assert_eq!(px(&img, 1, 0), [16, 16, 16, 32]);
    }

    #[test]
    fn decodes_32_bit_and_palette_formats_in_both_orders() {
        let t = texm(1, 1, 1, 8888, &[10, 20, 30, 40]);
        let tx = Texm::parse(&t).unwrap();
        assert_eq!(px(&tx.decode(), 0, 0), [30, 20, 10, 40]);
        assert_eq!(
            px(&tx.decode_with(&ARGB_ORDER, 0).unwrap(), 0, 0),
            [20, 30, 40, 10]
        );
        let t = texm(1, 1, 1, 888, &[10, 20, 30, 40]);
        let tx = Texm::parse(&t).unwrap();
        assert_eq!(px(&tx.decode(), 0, 0), [30, 20, 10, 255]);
        assert_eq!(
            px(&tx.decode_with(&ARGB_ORDER, 0).unwrap(), 0, 0),
            [10, 20, 30, 255]
        );
        let mut body = vec![0u8; 1024];
        body[4..8].copy_from_slice(&[1, 2, 3, 4]); // entry 1
        body.extend_from_slice(&[1, 0, 1, 1]); // 2 x 2 indices
        let t = texm(2, 2, 1, 0, &body);
        let tx = Texm::parse(&t).unwrap();
        let img = tx.decode_with(&ARGB_ORDER, 0).unwrap();
        assert_eq!(px(&img, 0, 0), [1, 2, 3, 4]);
        assert_eq!(px(&img, 1, 0), [0, 0, 0, 0]);
        assert_eq!(px(&img, 1, 1), [1, 2, 3, 4]);
        assert_eq!(px(&tx.decode(), 0, 0), [3, 2, 1, 255]);
        assert_eq!(px(&tx.decode(), 1, 0), [0, 0, 0, 255]);
    }

    #[test]
    fn mip_chain_and_page() {
        // 4 x 2 format 88, 3 mips: 4x2, 2x1, 1x1 -> (8 + 2 + 1) * 2 bytes.
        let mut body = vec![0u8; 22];
        body[16..18].copy_from_slice(&0xFF80u16.to_le_bytes()); // first pixel of mip 1
        body.extend_from_slice(b"Page");
        body.extend_from_slice(&1u32.to_le_bytes());
        for v in [1i16, 2, 3, 4] {
            body.extend_from_slice(&v.to_le_bytes());
        }
        let t = texm(4, 2, 3, 88, &body);
        let tx = Texm::parse(&t).unwrap();
        assert_eq!(tx.mip_count(), 3);
        assert_eq!(
            tx.mips.iter().map(|m| m.len()).collect::<Vec<_>>(),
            vec![16, 4, 2]
        );
        assert_eq!(
            tx.page,
            Some(vec![PageRect {
                x: 1,
                w: 2,
                y: 3,
                h: 4
            }])
        );
        let m1 = tx.decode_with(&RETAIL_ORDER, 1).unwrap();
        assert_eq!(m1.dimensions(), (2, 1));
        assert_eq!(px(&m1, 0, 0), [255, 255, 255, 128]);
        assert!(tx.decode_with(&RETAIL_ORDER, 3).is_none());
        assert_eq!(mip_dims(128, 64, 7), (1, 1));
        assert_eq!(mip_dims(128, 64, 40), (1, 1));
    }

    #[test]
    fn error_rules() {
        let rule = |d: &[u8]| Texm::parse(d).unwrap_err().rule;
        assert_eq!(rule(b"Tex"), "texm.magic");
        assert_eq!(rule(b"TEXM0000000000000000000000000000"), "texm.magic");
        assert_eq!(rule(&texm(1, 1, 1, 8888, &[])[..20]), "texm.size");
        assert_eq!(rule(&texm(1, 1, 1, 1555, &[0; 2])), "texm.format");
        assert_eq!(rule(&texm(0, 1, 1, 565, &[])), "texm.size");
        assert_eq!(rule(&texm(1, 1, 0, 565, &[])), "texm.size");
        assert_eq!(rule(&texm(2, 2, 2, 565, &[0; 9])), "texm.size"); // needs 10
        assert_eq!(rule(&texm(2, 2, 2, 565, &[0; 11])), "texm.size"); // 1 extra byte
        assert_eq!(rule(&texm(1, 1, 1, 0, &[0; 100])), "texm.size"); // palette cut
                                                                     // Huge dimensions and mip count: no overflow, no allocation.
                                                                     // More levels than the chain to 1 x 1 (32 and 1): refused first.
        assert_eq!(
            rule(&texm(u32::MAX, u32::MAX, u32::MAX, 8888, &[0; 8])),
            "texm.mip_count"
        );
        assert_eq!(rule(&texm(1, 1, u32::MAX, 8888, &[0; 8])), "texm.mip_count");
        assert_eq!(rule(&texm(1, 1, 2, 8888, &[0; 8])), "texm.mip_count");
        assert_eq!(
            rule(&texm(u32::MAX, u32::MAX, 32, 8888, &[0; 8])),
            "texm.size"
        );
        assert_eq!(max_mips(1, 1), 1);
        assert_eq!(max_mips(256, 64), 9);
        assert_eq!(max_mips(u32::MAX, 1), 32);
        // Page declares 3 rects but holds 2.
        let mut body = vec![0u8; 2];
        body.extend_from_slice(b"Page");
        body.extend_from_slice(&3u32.to_le_bytes());
        body.extend_from_slice(&[0; 16]);
        assert_eq!(rule(&texm(1, 1, 1, 565, &body)), "texm.page");
        let mut body = vec![0u8; 2];
        body.extend_from_slice(b"Page");
        body.extend_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(rule(&texm(1, 1, 1, 565, &body)), "texm.page");
    }

    /// Largest decode error of an n-bit channel after [`quantize`].
    fn step(bits: u8) -> i32 {
        (255 / ((1i32 << bits) - 1) + 1) / 2
    }

    fn arb_image() -> impl Strategy<Value = RgbaImage> {
        (1u32..9, 1u32..9).prop_flat_map(|(w, h)| {
            prop::collection::vec(any::<u8>(), (w * h * 4) as usize)
                .prop_map(move |v| RgbaImage::from_raw(w, h, v).unwrap())
        })
    }

    #[test]
    fn quantize_inverts_expand() {
        for bits in [4u8, 5, 6, 8] {
            let max = (1u32 << bits) - 1;
            for q in 0..=max {
                assert_eq!(quantize(expand(q, bits), bits), q, "{bits} bits, {q}");
            }
        }
        assert_eq!(full_mip_count(128, 64), 8);
        assert_eq!(full_mip_count(1, 1), 1);
        assert_eq!(full_mip_count(5, 3), 3);
    }

    #[test]
    fn encode_retail_8888_bytes() {
        let img = RgbaImage::from_raw(1, 1, vec![10, 20, 30, 40]).unwrap();
        let t = encode(&img, TexFormat::Argb8888, &RETAIL_ORDER, 1, TEXTURE_FLAGS4).unwrap();
        assert_eq!(t, texm(1, 1, 1, 8888, &[30, 20, 10, 40]));
        let t = encode(&img, TexFormat::Rgb565, &RETAIL_ORDER, 0, 0).unwrap();
        let v = (1u16 << 11) | (5 << 5) | 4; // round(10*31/255), round(20*63/255), round(30*31/255)
        assert_eq!(&t[32..], &v.to_le_bytes());
        assert_eq!(
            encode(&img, TexFormat::Indexed8, &RETAIL_ORDER, 1, 0)
                .unwrap_err()
                .rule,
            "texm.format"
        );
        assert_eq!(
            encode(&img, TexFormat::Rgb565, &RETAIL_ORDER, 2, 0)
                .unwrap_err()
                .rule,
            "texm.size"
        );
    }

    proptest! {
        /// encode → parse → decode gives every pixel back within the
        /// quantisation step of the format (exact for 8888, and for 888's
        /// colour), with a full mip chain of the right sizes.
        #[test]
        fn encode_decode_round_trip(img in arb_image(), fi in 0usize..6, retail in any::<bool>()) {
            let format = [TexFormat::Rgb565, TexFormat::Rgb556, TexFormat::Argb4444,
                TexFormat::La88, TexFormat::Rgbx888, TexFormat::Argb8888][fi];
            let order = if retail { RETAIL_ORDER } else { ARGB_ORDER };
            let bytes = encode(&img, format, &order, 0, TEXTURE_FLAGS4).unwrap();
            let t = Texm::parse(&bytes).unwrap();
            let (w, h) = img.dimensions();
            prop_assert_eq!((t.width, t.height, t.format), (w, h, format));
            prop_assert_eq!(t.mip_count() as u32, full_mip_count(w, h));
            let back = t.decode_with(&order, 0).unwrap();
            let tol: [i32; 4] = match format {
                TexFormat::Rgb565 => [step(5), step(6), step(5), 0],
                TexFormat::Rgb556 => [step(5), step(5), step(6), 0],
                TexFormat::Argb4444 => [step(4); 4],
                _ => [0; 4],
            };
            for (a, b) in img.pixels().zip(back.pixels()) {
                let want: [u8; 4] = match format {
                    TexFormat::La88 => { let l = luminance(&a.0); [l, l, l, a.0[3]] }
                    TexFormat::Rgb565 | TexFormat::Rgb556 | TexFormat::Rgbx888 => [a.0[0], a.0[1], a.0[2], 255],
                    _ => a.0,
                };
                for c in 0..4 {
                    prop_assert!((i32::from(want[c]) - i32::from(b.0[c])).abs() <= tol[c],
                        "{:?} channel {}: {} -> {}", format, c, want[c], b.0[c]);
                }
            }
            // Re-encoding the decoded pixels gives the same bytes.
            prop_assert_eq!(&encode(&back, format, &order, 1, TEXTURE_FLAGS4).unwrap()[32..],
                t.mips[0]);
        }
    }

    #[test]
    fn png_round_trip() {
        use image::GenericImageView;
        let mut img = RgbaImage::new(3, 2);
        for (i, p) in img.pixels_mut().enumerate() {
            p.0 = [i as u8 * 40, 255 - i as u8, 7, 255];
        }
        assert!(!has_alpha(&img));
        let png = encode_png(&img).unwrap();
        let back = image::load_from_memory_with_format(&png, image::ImageFormat::Png).unwrap();
        assert_eq!(back.color(), image::ColorType::Rgb8);
        assert_eq!(back.dimensions(), (3, 2));
        assert_eq!(back.to_rgba8(), img);
        img.get_pixel_mut(2, 1).0[3] = 254;
        assert!(has_alpha(&img));
        let png = encode_png(&img).unwrap();
        let back = image::load_from_memory_with_format(&png, image::ImageFormat::Png).unwrap();
        assert_eq!(back.color(), image::ColorType::Rgba8);
        assert_eq!(back.to_rgba8(), img);
    }
}
