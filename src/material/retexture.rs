//! Texture edits of an existing `Textures.lib` entry (format-notes §4,
//! §6 R8; issue 23): new mip-0 pixels written **in the entry's own
//! format** — 565, 556, 4444, 88, 888, 8888 or a palette — with the
//! header's `flags4`, `flags5`, `unk6` and the `Page` chunk kept and the
//! mips regenerated (triangle filter, as [`super::texm::encode`]).
//!
//! A palette entry keeps its palette when every colour of the new mip 0 is
//! in it; new colours take the slots no pixel uses any more; when they do
//! not fit, a new 256-colour palette is made by median cut. Every level's
//! pixels then take the nearest palette colour. [`same_pixels`] tells an
//! edited image from the entry's own decoded mip 0, compared as the game
//! would show it (after quantisation to the entry's format).

use std::collections::HashMap;

use image::RgbaImage;

use super::texm::{
    bytes_pixel, encode, encode_level, get, mip_dims, Channel, ChannelOrder, TexFormat, Texm,
    HEADER_SIZE, MAGIC, PALETTE_SIZE,
};
use super::MaterialError;

/// True when `img` shows what the Texm payload `data` shows at mip 0: the
/// same size, and the same pixels once quantised to the entry's format
/// (palette: the same RGB, and alpha where the palette order has one).
///
/// # Errors
/// The Texm rules of `data` ([`Texm::parse`]).
pub fn same_pixels(
    data: &[u8],
    img: &RgbaImage,
    order: &ChannelOrder,
) -> Result<bool, MaterialError> {
    let old = Texm::parse(data)?;
    if img.dimensions() != (old.width, old.height) {
        return Ok(false);
    }
    let Some(was) = old.decode_with(order, 0) else {
        return Ok(false);
    };
    if old.format == TexFormat::Indexed8 {
        let alpha = order.palette.contains(&Channel::A);
        return Ok(was
            .as_raw()
            .chunks_exact(4)
            .zip(img.as_raw().chunks_exact(4))
            .all(|(a, b)| a[..3] == b[..3] && (!alpha || a[3] == b[3])));
    }
    let q = encode(img, old.format, order, 1, old.flags4)?;
    let now = Texm::parse(&q)?.decode_with(order, 0);
    Ok(now.as_ref() == Some(&was))
}

/// What [`reencode`] did besides the pixels.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reencoded {
    /// The new Texm payload.
    pub data: Vec<u8>,
    /// The palette was made anew (median cut): the new colours did not fit
    /// in the slots the old one had free.
    pub new_palette: bool,
    /// Notes for the user (alpha a format cannot hold, atlas rectangles of
    /// another size).
    pub warnings: Vec<String>,
}

/// Writes `img` as the new mip 0 of the Texm payload `data`, in its format
/// (see the module docs). The mip count is kept when the size is; a new
/// size gets a full chain when the entry had mips, else one level.
///
/// # Errors
/// The Texm rules of `data`; `texm.size` for an empty image.
pub fn reencode(
    data: &[u8],
    img: &RgbaImage,
    order: &ChannelOrder,
) -> Result<Reencoded, MaterialError> {
    let old = Texm::parse(data)?;
    let (w, h) = img.dimensions();
    if w == 0 || h == 0 {
        return Err(MaterialError::new("texm.size", "an empty image"));
    }
    let mips = if (w, h) == (old.width, old.height) {
        old.mip_count() as u32
    } else if old.mip_count() > 1 {
        super::texm::full_mip_count(w, h)
    } else {
        1
    };
    let mut rep = Reencoded::default();
    if (w, h) != (old.width, old.height) && old.page.is_some() {
        rep.warnings.push(format!(
            "the Page atlas rectangles are kept in pixels of the old {} x {} image (the new one is {w} x {h})",
            old.width, old.height
        ));
    }
    let holds_alpha = match old.format {
        TexFormat::Argb4444 | TexFormat::La88 | TexFormat::Argb8888 => true,
        TexFormat::Indexed8 => order.palette.contains(&Channel::A),
        _ => false,
    };
    if !holds_alpha && img.as_raw().chunks_exact(4).any(|p| p[3] != 255) {
        rep.warnings.push(format!(
            "format {} holds no alpha: the image's transparency is dropped",
            old.format.code()
        ));
    }
    let mut levels = vec![img.clone()];
    for l in 1..mips {
        let (a, b) = mip_dims(w, h, l);
        let prev = &levels[levels.len() - 1];
        levels.push(image::imageops::resize(
            prev,
            a,
            b,
            image::imageops::FilterType::Triangle,
        ));
    }
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    for v in [
        w,
        h,
        mips,
        old.flags4,
        old.flags5,
        old.unk6,
        old.format.code(),
    ] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    if old.format == TexFormat::Indexed8 {
        let pal_bytes = old.palette.unwrap_or(&[0; PALETTE_SIZE]);
        let (pal, fresh) = palette_for(pal_bytes, img, order);
        rep.new_palette = fresh;
        out.extend_from_slice(&pal);
        let lut: Vec<[u8; 4]> = pal
            .chunks_exact(4)
            .map(|p| bytes_pixel(p, &order.palette))
            .collect();
        let alpha = order.palette.contains(&Channel::A);
        let mut near: HashMap<[u8; 4], u8> = HashMap::new();
        for lv in &levels {
            for p in lv.as_raw().chunks_exact(4) {
                let c = key(p, alpha);
                let i = *near.entry(c).or_insert_with(|| nearest(&lut, c, alpha));
                out.push(i);
            }
        }
    } else {
        for lv in &levels {
            encode_level(lv.as_raw(), old.format, order, &mut out);
        }
    }
    // The Page chunk (and nothing else) follows the old mips.
    let mips_end = HEADER_SIZE
        + old.palette.map_or(0, <[u8]>::len)
        + old.mips.iter().map(|m| m.len()).sum::<usize>();
    out.extend_from_slice(&data[mips_end.min(data.len())..]);
    rep.data = out;
    Ok(rep)
}

/// A colour as compared with palette entries: RGBA, alpha 255 when the
/// palette holds none.
fn key(p: &[u8], alpha: bool) -> [u8; 4] {
    [p[0], p[1], p[2], if alpha { p[3] } else { 255 }]
}

/// The palette entry nearest to `c` (squared distance; the first of equals).
fn nearest(lut: &[[u8; 4]], c: [u8; 4], alpha: bool) -> u8 {
    let d = |e: &[u8; 4]| {
        (0..if alpha { 4 } else { 3 })
            .map(|k| {
                let x = i32::from(e[k]) - i32::from(c[k]);
                x * x
            })
            .sum::<i32>()
    };
    lut.iter()
        .enumerate()
        .min_by_key(|(_, e)| d(e))
        .map_or(0, |(i, _)| i as u8)
}

/// The palette bytes for mip 0 `img`: the old palette with new colours in
/// the slots no pixel uses (`false`), else a median-cut palette (`true`).
fn palette_for(old: &[u8], img: &RgbaImage, order: &ChannelOrder) -> (Vec<u8>, bool) {
    let alpha = order.palette.contains(&Channel::A);
    let lut: Vec<[u8; 4]> = old
        .chunks_exact(4)
        .map(|p| bytes_pixel(p, &order.palette))
        .collect();
    let mut counts: HashMap<[u8; 4], u32> = HashMap::new();
    for p in img.as_raw().chunks_exact(4) {
        *counts.entry(key(p, alpha)).or_default() += 1;
    }
    let mut used = vec![false; lut.len()];
    let mut new: Vec<[u8; 4]> = Vec::new();
    let mut colours: Vec<[u8; 4]> = counts.keys().copied().collect();
    colours.sort_unstable();
    for c in &colours {
        match lut.iter().position(|e| key(e, alpha) == *c) {
            Some(i) => used[i] = true,
            None => new.push(*c),
        }
    }
    let free: Vec<usize> = (0..lut.len()).filter(|&i| !used[i]).collect();
    let mut pal = old.to_vec();
    pal.resize(PALETTE_SIZE, 0);
    let fits = new.len() <= free.len();
    let slots: Vec<(usize, [u8; 4])> = if fits {
        free.into_iter().zip(new).collect()
    } else {
        median_cut(&counts, 256).into_iter().enumerate().collect()
    };
    for (slot, c) in slots {
        let bytes: Vec<u8> = order.palette.iter().map(|&ch| get(&c, ch)).collect();
        pal[slot * 4..slot * 4 + 4].copy_from_slice(&bytes);
    }
    (pal, !fits)
}

/// At most `n` colours standing for `counts` (colour → pixel count): the
/// box with the widest channel range is split at its weighted median until
/// there are `n` boxes; each box gives its weighted mean.
fn median_cut(counts: &HashMap<[u8; 4], u32>, n: usize) -> Vec<[u8; 4]> {
    let mut boxes: Vec<Vec<([u8; 4], u32)>> = vec![counts.iter().map(|(c, k)| (*c, *k)).collect()];
    let range = |b: &[([u8; 4], u32)], k: usize| {
        let lo = b.iter().map(|(c, _)| c[k]).min().unwrap_or(0);
        let hi = b.iter().map(|(c, _)| c[k]).max().unwrap_or(0);
        hi - lo
    };
    while boxes.len() < n {
        let Some((bi, ch, r)) = boxes
            .iter()
            .enumerate()
            .filter(|(_, b)| b.len() > 1)
            .flat_map(|(i, b)| (0..4).map(move |k| (i, k, range(b, k))))
            .max_by_key(|&(_, _, r)| r)
        else {
            break;
        };
        if r == 0 {
            break;
        }
        let mut b = boxes.swap_remove(bi);
        b.sort_unstable_by_key(|(c, _)| c[ch]);
        let total: u64 = b.iter().map(|(_, k)| u64::from(*k)).sum();
        let mut acc = 0u64;
        let mut cut = 1;
        for (i, (_, k)) in b.iter().enumerate() {
            acc += u64::from(*k);
            if acc * 2 >= total {
                cut = (i + 1).clamp(1, b.len() - 1);
                break;
            }
        }
        let rest = b.split_off(cut);
        boxes.push(b);
        boxes.push(rest);
    }
    boxes
        .iter()
        .map(|b| {
            let total: u64 = b.iter().map(|(_, k)| u64::from(*k)).sum::<u64>().max(1);
            let mut m = [0u8; 4];
            for (k, v) in m.iter_mut().enumerate() {
                let s: u64 = b.iter().map(|(c, n)| u64::from(c[k]) * u64::from(*n)).sum();
                *v = ((s + total / 2) / total) as u8;
            }
            m
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::material::texm::{RETAIL_ORDER, TEXTURE_FLAGS4};

    fn gradient(w: u32, h: u32, alpha: bool) -> RgbaImage {
        RgbaImage::from_fn(w, h, |x, y| {
            image::Rgba([
                (x * 255 / w.max(2)) as u8,
                (y * 255 / h.max(2)) as u8,
                ((x + y) * 20) as u8,
                if alpha { (x * 30) as u8 } else { 255 },
            ])
        })
    }

    /// A palette Texm (format 0): `colours` in the first slots, the
    /// pixels cycling through them, then a Page chunk.
    fn palette_texm(w: u32, h: u32, colours: &[[u8; 3]], mips: u32) -> Vec<u8> {
        let mut d = MAGIC.to_vec();
        for v in [w, h, mips, 32, 7, 9, 0] {
            d.extend_from_slice(&v.to_le_bytes());
        }
        let mut pal = vec![0u8; PALETTE_SIZE];
        for (i, c) in colours.iter().enumerate() {
            pal[i * 4..i * 4 + 4].copy_from_slice(&[c[2], c[1], c[0], 0]); // B, G, R, X
        }
        d.extend_from_slice(&pal);
        for l in 0..mips {
            let (a, b) = mip_dims(w, h, l);
            d.extend((0..a * b).map(|i| (i as usize % colours.len()) as u8));
        }
        d.extend_from_slice(b"Page");
        d.extend_from_slice(&1u32.to_le_bytes());
        for v in [0i16, 4, 0, 4] {
            d.extend_from_slice(&v.to_le_bytes());
        }
        d
    }

    #[test]
    fn each_format_comes_back_in_itself_with_header_and_page_kept() {
        for fmt in [
            TexFormat::Rgb565,
            TexFormat::Rgb556,
            TexFormat::Argb4444,
            TexFormat::La88,
            TexFormat::Rgbx888,
            TexFormat::Argb8888,
        ] {
            let old = encode(
                &gradient(8, 4, false),
                fmt,
                &RETAIL_ORDER,
                3,
                TEXTURE_FLAGS4,
            )
            .unwrap();
            let mut with_page = old.clone();
            with_page.extend_from_slice(b"Page\x00\x00\x00\x00");
            let edit = gradient(8, 4, true);
            assert!(same_pixels(&with_page, &gradient(8, 4, false), &RETAIL_ORDER).unwrap());
            let r = reencode(&with_page, &edit, &RETAIL_ORDER).unwrap();
            let t = Texm::parse(&r.data).unwrap();
            assert_eq!(t.format, fmt);
            assert_eq!((t.width, t.height, t.mip_count(), t.flags4), (8, 4, 3, 32));
            assert!(r.data.ends_with(b"Page\x00\x00\x00\x00"));
            // The stored pixels are the edit quantised to the format.
            let want = Texm::parse(&encode(&edit, fmt, &RETAIL_ORDER, 3, 32).unwrap())
                .unwrap()
                .decode_with(&RETAIL_ORDER, 0);
            assert_eq!(t.decode_with(&RETAIL_ORDER, 0), want, "{fmt:?}");
            assert!(
                same_pixels(&r.data, &edit, &RETAIL_ORDER).unwrap(),
                "{fmt:?}"
            );
        }
    }

    #[test]
    fn a_palette_keeps_its_colours_and_takes_new_ones_into_free_slots() {
        let cols = [[10, 20, 30], [200, 100, 50], [0, 0, 0]];
        let data = palette_texm(4, 4, &cols, 2);
        let t = Texm::parse(&data).unwrap();
        let mut img = t.decode_with(&RETAIL_ORDER, 0).unwrap();
        assert!(same_pixels(&data, &img, &RETAIL_ORDER).unwrap());
        img.put_pixel(1, 1, image::Rgba([255, 0, 0, 255]));
        assert!(!same_pixels(&data, &img, &RETAIL_ORDER).unwrap());
        let r = reencode(&data, &img, &RETAIL_ORDER).unwrap();
        assert!(!r.new_palette);
        let n = Texm::parse(&r.data).unwrap();
        assert_eq!(n.format, TexFormat::Indexed8);
        assert_eq!((n.flags4, n.flags5, n.unk6, n.mip_count()), (32, 7, 9, 2));
        assert_eq!(n.decode_with(&RETAIL_ORDER, 0).unwrap(), img);
        // The old colours keep their slots.
        assert_eq!(&n.palette.unwrap()[..12], &t.palette.unwrap()[..12]);
        assert!(r.data.ends_with(&data[data.len() - 16..]));
    }

    #[test]
    fn a_palette_over_256_colours_is_made_anew() {
        let data = palette_texm(32, 32, &[[1, 2, 3], [4, 5, 6]], 1);
        // 1024 colours on a smooth two-channel ramp.
        let img = RgbaImage::from_fn(32, 32, |x, y| {
            image::Rgba([(x * 8) as u8, (y * 8) as u8, 128, 255])
        });
        let r = reencode(&data, &img, &RETAIL_ORDER).unwrap();
        assert!(r.new_palette);
        let got = Texm::parse(&r.data)
            .unwrap()
            .decode_with(&RETAIL_ORDER, 0)
            .unwrap();
        let worst = got
            .as_raw()
            .iter()
            .zip(img.as_raw())
            .map(|(a, b)| (i32::from(*a) - i32::from(*b)).abs())
            .max()
            .unwrap();
        assert!(worst <= 12, "median cut error {worst}");
    }
}
