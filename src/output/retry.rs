//! Retries of file operations that Windows refuses while another process
//! briefly holds the file open.
//!
//! On Windows a rename over a file, a hard link to it or an open of it
//! fails with `Access denied` (os error 5) or a sharing violation (os error
//! 32) while any other process has the file open: another run reading its
//! metadata before it waits for the lock, Explorer, an indexer or an
//! anti-virus scanner. Those handles last milliseconds, so every such
//! operation of the commit is retried for a bounded time before the error
//! is reported; what is retried is the same operation on the same names,
//! so the transaction's guarantees (`txn.rs`) do not change. Elsewhere the
//! operation runs once: there the same errors are permanent.

use std::time::Duration;

/// The pauses between attempts on Windows: 10 attempts, 1.3 s in all.
#[cfg_attr(not(windows), allow(dead_code))]
const PAUSES_MS: [u64; 9] = [5, 10, 20, 40, 80, 160, 250, 350, 400];

/// Whether `e` is what Windows reports for a file another process holds
/// open: `ERROR_ACCESS_DENIED` (5) or `ERROR_SHARING_VIOLATION` (32).
#[cfg_attr(not(windows), allow(dead_code))]
fn held_open(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(5) | Some(32))
}

/// Runs `op` on `input`; on Windows, while it fails because the file is
/// held open by another process ([`held_open`]), runs it again after a
/// pause (at most 10 attempts, about 1.3 s). Returns the first success or
/// the last error. A failed attempt hands back its input with its error,
/// so an operation that consumes its input (a temporary file being
/// persisted) can try again with it.
pub(crate) fn when_held_open<T, K>(
    input: K,
    op: impl FnMut(K) -> Result<T, (std::io::Error, K)>,
) -> Result<T, (std::io::Error, K)> {
    when_held_open_in(pauses(), sleep, input, op)
}

/// The pauses (milliseconds) of [`when_held_open`] on this platform: none
/// off Windows.
pub(crate) fn pauses() -> &'static [u64] {
    if cfg!(windows) {
        &PAUSES_MS
    } else {
        &[]
    }
}

/// The pause of [`when_held_open`]: sleeps `ms` milliseconds.
pub(crate) fn sleep(ms: u64) {
    std::thread::sleep(Duration::from_millis(ms));
}

/// [`when_held_open`] with its `pauses` (milliseconds, one per retry, so
/// at most `pauses.len() + 1` attempts) and the `pause` run between two
/// attempts given: a caller that locks per attempt is seen not to hold its
/// lock during a pause (`temp.rs`).
pub(crate) fn when_held_open_in<T, K>(
    pauses: &[u64],
    mut pause: impl FnMut(u64),
    mut input: K,
    mut op: impl FnMut(K) -> Result<T, (std::io::Error, K)>,
) -> Result<T, (std::io::Error, K)> {
    for &ms in pauses {
        match op(input) {
            Err((e, k)) if held_open(&e) => {
                input = k;
                pause(ms);
            }
            done => return done,
        }
    }
    op(input)
}

/// [`when_held_open`] for an operation that consumes nothing.
pub(crate) fn io<T>(mut op: impl FnMut() -> std::io::Result<T>) -> std::io::Result<T> {
    when_held_open((), |()| op().map_err(|e| (e, ()))).map_err(|(e, ())| e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn denied() -> std::io::Error {
        std::io::Error::from_raw_os_error(5)
    }

    #[test]
    fn a_held_file_is_retried_on_windows_only() {
        let mut calls = 0;
        let r = io(|| {
            calls += 1;
            if calls < 3 {
                Err(denied())
            } else {
                Ok(calls)
            }
        });
        if cfg!(windows) {
            assert_eq!(r.unwrap(), 3);
        } else {
            assert_eq!(r.unwrap_err().raw_os_error(), Some(5));
            assert_eq!(calls, 1);
        }
    }

    #[test]
    fn other_errors_and_a_lasting_hold_end_with_the_error() {
        let mut calls = 0;
        let r: std::io::Result<()> = io(|| {
            calls += 1;
            Err(std::io::Error::from(std::io::ErrorKind::NotFound))
        });
        assert_eq!(r.unwrap_err().kind(), std::io::ErrorKind::NotFound);
        assert_eq!(calls, 1);
        let mut calls = 0;
        let r: std::io::Result<()> = io(|| {
            calls += 1;
            Err(denied())
        });
        assert_eq!(r.unwrap_err().raw_os_error(), Some(5));
        assert_eq!(calls, if cfg!(windows) { 10 } else { 1 });
    }

    #[test]
    fn a_consumed_input_is_handed_to_the_next_attempt() {
        let mut seen = Vec::new();
        let r = when_held_open(0u32, |k| {
            seen.push(k);
            if k < 2 && cfg!(windows) {
                Err((denied(), k + 1))
            } else {
                Ok(k)
            }
        });
        if cfg!(windows) {
            assert_eq!((r.ok(), seen), (Some(2), vec![0, 1, 2]));
        } else {
            assert_eq!((r.ok(), seen), (Some(0), vec![0]));
        }
    }
}
