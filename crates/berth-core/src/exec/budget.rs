//! The process-wide budget of buffered output: how many bytes every buffered exec in flight
//! (`Session::exec`, setup commands, the harness's `run`) may hold together, whatever each
//! call's own cap.
//!
//! Each buffered call takes bytes from the budget as it keeps output and gives them back when
//! it returns (its result is then the caller's). A call that finds the budget spent keeps what
//! it already holds, drops further output and flags its result `truncated`, exactly as at its
//! own cap (so a writer that goes on is killed [`crate::exec::DISCARD_PAST_CAP_BYTES`] later):
//! it never waits for room and never fails for it. No engine call.

use std::sync::atomic::{AtomicU64, Ordering};

/// Default budget, in bytes (256 MiB): four calls at the default cap
/// ([`crate::exec::DEFAULT_MAX_BUFFER_BYTES`]) at once.
pub const DEFAULT_BUFFER_BUDGET_BYTES: u64 = 256 * 1024 * 1024;

static LIMIT: AtomicU64 = AtomicU64::new(DEFAULT_BUFFER_BUDGET_BYTES);
static HELD: AtomicU64 = AtomicU64::new(0);

/// Sets the process-wide budget, in bytes (0 is allowed: every buffered call is then
/// truncated at its first byte). Takes effect for the next bytes any call keeps; what calls
/// already hold is not taken back.
pub fn set_buffer_budget(bytes: u64) {
    LIMIT.store(bytes, Ordering::Relaxed);
}

/// The process-wide budget, in bytes.
pub fn buffer_budget() -> u64 {
    LIMIT.load(Ordering::Relaxed)
}

/// How many bytes buffered calls hold now.
pub fn buffered_bytes() -> u64 {
    HELD.load(Ordering::Relaxed)
}

/// The bytes one call holds from the budget; given back when dropped.
#[derive(Debug, Default)]
pub(crate) struct Share {
    held: u64,
}

impl Share {
    /// Takes up to `want` bytes from the budget; answers how many it got (fewer when the
    /// budget is short, 0 when it is spent).
    pub(crate) fn take(&mut self, want: u64) -> u64 {
        let limit = LIMIT.load(Ordering::Relaxed);
        let mut got = 0;
        let _ = HELD.fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
            got = grant(held, limit, want);
            (got > 0).then_some(held + got)
        });
        self.held += got;
        got
    }
}

/// What a call that wants `want` bytes gets when calls hold `held` of a `limit`.
fn grant(held: u64, limit: u64, want: u64) -> u64 {
    want.min(limit.saturating_sub(held))
}

impl Drop for Share {
    fn drop(&mut self) {
        if self.held > 0 {
            HELD.fetch_sub(self.held, Ordering::AcqRel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_gets_what_is_left_of_the_budget() {
        assert_eq!(grant(0, 100, 10), 10);
        assert_eq!(grant(95, 100, 10), 5);
        assert_eq!(grant(100, 100, 10), 0);
        // A budget lowered below what calls hold gives nothing more.
        assert_eq!(grant(150, 100, 10), 0);
    }

    #[test]
    fn a_share_gives_back_what_it_took() {
        let mut a = Share::default();
        let got = a.take(10);
        assert!(got <= 10);
        assert_eq!(a.held, got);
        // Dropping returns it (the counter is shared with tests running beside this one, so
        // only this share's own bookkeeping is checked).
        drop(a);
    }
}
