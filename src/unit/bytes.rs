//! A bounded little-endian cursor for the unit readers: every read checks
//! the bytes are there, and [`Cursor::finish`] checks the layout consumed
//! the file exactly (unit-files-notes §5: parsers that consume every file).

use super::UnitError;

/// Reads fields from `data` front to back; errors carry `rule`.
pub(crate) struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    rule: &'static str,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(data: &'a [u8], rule: &'static str) -> Self {
        Cursor { data, pos: 0, rule }
    }

    /// Bytes left.
    pub(crate) fn left(&self) -> usize {
        self.data.len() - self.pos
    }

    /// The next `n` bytes; `what` names the field in the error.
    pub(crate) fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], UnitError> {
        if n > self.left() {
            return Err(UnitError::new(
                self.rule,
                format!(
                    "{what} at offset {} needs {n} bytes, {} left",
                    self.pos,
                    self.left()
                ),
            ));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub(crate) fn u32(&mut self, what: &str) -> Result<u32, UnitError> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(crate) fn i32(&mut self, what: &str) -> Result<i32, UnitError> {
        Ok(self.u32(what)? as i32)
    }

    pub(crate) fn f32(&mut self, what: &str) -> Result<f32, UnitError> {
        Ok(f32::from_bits(self.u32(what)?))
    }

    pub(crate) fn f32x3(&mut self, what: &str) -> Result<[f32; 3], UnitError> {
        Ok([self.f32(what)?, self.f32(what)?, self.f32(what)?])
    }

    /// A 32-byte NUL-padded name field, kept whole.
    pub(crate) fn name32(&mut self, what: &str) -> Result<[u8; 32], UnitError> {
        let mut a = [0u8; 32];
        a.copy_from_slice(self.take(32, what)?);
        Ok(a)
    }

    /// Checks that `count` records of at least `min_size` bytes each can
    /// still fit (so no allocation is sized by an unchecked count).
    pub(crate) fn check_fits(
        &self,
        count: usize,
        min_size: usize,
        what: &str,
    ) -> Result<(), UnitError> {
        match count.checked_mul(min_size) {
            Some(n) if n <= self.left() => Ok(()),
            _ => Err(UnitError::new(
                self.rule,
                format!(
                    "{count} {what} of at least {min_size} bytes do not fit in the {} bytes left at offset {}",
                    self.left(),
                    self.pos
                ),
            )),
        }
    }

    /// The layout must end exactly at the end of the file.
    pub(crate) fn finish(&self, layout: &str) -> Result<(), UnitError> {
        if self.left() != 0 {
            return Err(UnitError::new(
                self.rule,
                format!(
                    "{layout} ends at offset {} but the file has {} bytes ({} left over)",
                    self.pos,
                    self.data.len(),
                    self.left()
                ),
            ));
        }
        Ok(())
    }
}

/// The bytes of a NUL-padded name field before the first NUL.
pub(crate) fn trim_name(field: &[u8]) -> &[u8] {
    let end = field.iter().position(|&c| c == 0).unwrap_or(field.len());
    &field[..end]
}
