//! `UNITS/**/*.dat` unit files: a depth-first component tree
//! (unit-files-notes §3.3).
//!
//! ```text
//! +0 u32 magic 0x0000F0F1   +4 u32 class word (0x1008000 warrior, ...)
//! N × 112 bytes: char[32] archive, char[32] record, u32 flags, i32 attach,
//!                char[32] display name, u32 class, i32 child count
//! ```

use super::bytes::{trim_name, Cursor};
use super::UnitError;

/// The unit file magic.
pub const MAGIC: u32 = crate::source::UNIT_MAGIC;
/// Bytes of one component.
pub const COMPONENT_SIZE: usize = 112;

/// One component of a unit (§3.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitComponent {
    /// Registry archive field (`objects.rlb`), as stored.
    pub archive: [u8; 32],
    /// Record name field (`e_tur_bt_96`), as stored.
    pub record: [u8; 32],
    /// +64 flags (1).
    pub flags: u32,
    /// +68 a node of the parent part's mesh (turret, gun), or a controller
    /// slot of the parent (internal parts); −1 on the root.
    pub attach: i32,
    /// +72 display name field, as stored.
    pub display: [u8; 32],
    /// +104 class: 0 chassis, 1 turret, 2 armour, 3 internal, 4 gun, 5 clip.
    pub class: u32,
    /// +108 child count.
    pub children: i32,
    /// The parent component (from the depth-first order); `None` on the root.
    pub parent: Option<usize>,
}

impl UnitComponent {
    /// The record name (Windows-1251 decoded).
    pub fn record_name(&self) -> String {
        crate::source::decode_name(trim_name(&self.record))
    }
    /// The registry archive name.
    pub fn archive_name(&self) -> String {
        crate::source::decode_name(trim_name(&self.archive))
    }
    /// The display name.
    pub fn display_name(&self) -> String {
        crate::source::decode_name(trim_name(&self.display))
    }
    /// True for parts that are drawn and mounted on a node: classes 0, 1,
    /// 4, and class-2 records named `e_gun_*` (§3.3, §3.5).
    pub fn is_mounted(&self) -> bool {
        match self.class {
            0 | 1 | 4 => true,
            2 => trim_name(&self.record)
                .to_ascii_lowercase()
                .starts_with(b"e_gun_"),
            _ => false,
        }
    }
}

/// A whole unit file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitFile {
    /// +4 class word.
    pub class_word: u32,
    /// Components in depth-first order; component 0 is the root.
    pub components: Vec<UnitComponent>,
}

/// Reads a unit file (unit-files-notes §3.3).
///
/// # Errors
/// `dat.magic` for a wrong magic; `dat.size` when the size is not
/// `8 + 112·N`; `dat.tree` when the child counts do not describe exactly
/// one depth-first tree over the N components.
pub fn read(data: &[u8]) -> Result<UnitFile, UnitError> {
    let mut c = Cursor::new(data, "dat.size");
    let magic = c.u32("magic")?;
    if magic != MAGIC {
        return Err(UnitError::new(
            "dat.magic",
            format!("magic {magic:#x}, expected {MAGIC:#x}"),
        ));
    }
    let class_word = c.u32("class word")?;
    if !c.left().is_multiple_of(COMPONENT_SIZE) || c.left() == 0 {
        return Err(UnitError::new(
            "dat.size",
            format!(
                "{} bytes after the header are not a positive multiple of {COMPONENT_SIZE}",
                c.left()
            ),
        ));
    }
    let n = c.left() / COMPONENT_SIZE;
    let mut components = Vec::with_capacity(n);
    for i in 0..n {
        let w = format!("component {i}");
        components.push(UnitComponent {
            archive: c.name32(&w)?,
            record: c.name32(&w)?,
            flags: c.u32(&w)?,
            attach: c.i32(&w)?,
            display: c.name32(&w)?,
            class: c.u32(&w)?,
            children: c.i32(&w)?,
            parent: None,
        });
    }
    c.finish("the component list")?;
    link_tree(&mut components)?;
    Ok(UnitFile {
        class_word,
        components,
    })
}

/// [`read`] under a work budget of `max_work` units: the components are
/// counted from the file's size ([`crate::limits::UNITS_PER_UNIT_COMPONENT`]
/// each) before any is read.
///
/// # Errors
/// `limits.work` naming the count and the budget; those of [`read`].
pub fn read_within(data: &[u8], max_work: u64) -> Result<UnitFile, UnitError> {
    let n = (data.len().saturating_sub(8) / COMPONENT_SIZE) as u64;
    let units = n.saturating_mul(crate::limits::UNITS_PER_UNIT_COMPONENT);
    if units > max_work {
        return Err(UnitError::new(
            "limits.work",
            format!(
                "{} bytes hold {n} components: {units} work units, over the budget of {max_work} (docs/safety.md \"Bounded work\"; raise it with --max-work)",
                data.len()
            ),
        ));
    }
    read(data)
}

/// Sets every component's parent from the depth-first child counts.
fn link_tree(cs: &mut [UnitComponent]) -> Result<(), UnitError> {
    // Stack of (component, children still to come).
    let mut stack: Vec<(usize, i32)> = Vec::new();
    for (i, c) in cs.iter_mut().enumerate() {
        while let Some(&(_, 0)) = stack.last() {
            stack.pop();
        }
        if i > 0 && stack.is_empty() {
            return Err(UnitError::new(
                "dat.tree",
                format!("component {i} comes after the root's tree is complete"),
            ));
        }
        if let Some(top) = stack.last_mut() {
            top.1 -= 1;
            c.parent = Some(top.0);
        }
        let k = c.children;
        if k < 0 {
            return Err(UnitError::new(
                "dat.tree",
                format!("component {i}: child count {k}"),
            ));
        }
        stack.push((i, k));
    }
    if let Some((p, k)) = stack.iter().find(|(_, k)| *k > 0) {
        return Err(UnitError::new(
            "dat.tree",
            format!("component {p} announces {k} more children than the file holds"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unit::cpt::name_field;

    pub(crate) fn comp(record: &str, attach: i32, class: u32, children: i32) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&name_field(b"objects.rlb"));
        v.extend_from_slice(&name_field(record.as_bytes()));
        v.extend_from_slice(&1u32.to_le_bytes());
        v.extend_from_slice(&attach.to_le_bytes());
        v.extend_from_slice(&name_field(b"Display"));
        v.extend_from_slice(&class.to_le_bytes());
        v.extend_from_slice(&children.to_le_bytes());
        v
    }

    fn file(comps: &[Vec<u8>]) -> Vec<u8> {
        let mut v = MAGIC.to_le_bytes().to_vec();
        v.extend_from_slice(&0x0100_8000u32.to_le_bytes());
        for c in comps {
            v.extend_from_slice(c);
        }
        v
    }

    #[test]
    fn tree_and_fields() {
        let d = file(&[
            comp("r_b_76", -1, 0, 2),
            comp("e_tur_bt_96", 9, 1, 1),
            comp("e_gun_bc_46", 3, 2, 0),
            comp("i_eng_b", 4, 3, 0),
        ]);
        let u = read(&d).unwrap();
        assert_eq!(u.class_word, 0x0100_8000);
        let parents: Vec<_> = u.components.iter().map(|c| c.parent).collect();
        assert_eq!(parents, vec![None, Some(0), Some(1), Some(0)]);
        assert_eq!(u.components[1].record_name(), "e_tur_bt_96");
        assert_eq!(u.components[1].attach, 9);
        let mounted: Vec<_> = u.components.iter().map(|c| c.is_mounted()).collect();
        assert_eq!(mounted, vec![true, true, true, false]);
    }

    #[test]
    fn bad_files_are_refused() {
        let good = file(&[comp("r", -1, 0, 1), comp("t", 2, 1, 0)]);
        assert!(read(&good).is_ok());
        let mut bad = good.clone();
        bad[0] = 0;
        assert_eq!(read(&bad).unwrap_err().rule, "dat.magic");
        assert_eq!(read(&good[..good.len() - 1]).unwrap_err().rule, "dat.size");
        assert_eq!(read(&good[..8]).unwrap_err().rule, "dat.size");
        let two_roots = file(&[comp("r", -1, 0, 0), comp("t", 2, 1, 0)]);
        assert_eq!(read(&two_roots).unwrap_err().rule, "dat.tree");
        let short = file(&[comp("r", -1, 0, 2), comp("t", 2, 1, 0)]);
        assert_eq!(read(&short).unwrap_err().rule, "dat.tree");
        let neg = file(&[comp("r", -1, 0, -1)]);
        assert_eq!(read(&neg).unwrap_err().rule, "dat.tree");
    }
}
