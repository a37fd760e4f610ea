//! CancelToken: how an `AbortSignal` reaches the core (the TS entry calls `cancel()` on abort).

use napi_derive::napi;
use tokio_util::sync::CancellationToken;

/// A cancellation token shared with one native call. The TypeScript entry creates one per
/// call that takes an `AbortSignal` and calls `cancel()` when the signal aborts.
#[napi]
#[derive(Default)]
pub struct CancelToken {
    pub(crate) inner: CancellationToken,
}

#[napi]
impl CancelToken {
    /// A fresh, uncancelled token.
    #[napi(constructor)]
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels the call this token was given to. Idempotent.
    #[napi]
    pub fn cancel(&self) {
        self.inner.cancel();
    }

    /// Whether `cancel()` was called.
    #[napi(getter)]
    pub fn cancelled(&self) -> bool {
        self.inner.is_cancelled()
    }
}

/// The core token for an optional JS token (a fresh one that never fires when absent).
pub fn token_of(t: Option<&CancelToken>) -> CancellationToken {
    t.map(|t| t.inner.clone()).unwrap_or_default()
}
