//! Bounded: every engine request raced against the caller's signal, the call's deadline and
//! a per-request timeout, in one place (`docs/design.md#engines`).
//!
//! A public call scopes its [`Engine`] with [`Engine::within`] (the caller's cancel token and
//! the operation an `E_ABORTED` names) and, for a call with its own deadline (exec's
//! `timeoutMs`), [`Engine::until`]. Every bollard future then goes through
//! [`Engine::call`], which is [`bounded`] with the scope's bounds: whichever of the signal,
//! the deadline or the per-request timeout comes first settles the request at once, whatever
//! the engine does. Cleanup of what a call created uses [`Engine::detached`]: it is bounded by
//! per-request timeouts only, never by the signal that aborted the call.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::engine::connection::{unavailable, Engine};
use crate::model::errors::{Error, Result};

/// Per-request timeout of an inspect, list, version or log read, in milliseconds.
pub(crate) const READ_TIMEOUT_MS: u64 = 10_000;
/// Per-request timeout of a change that the engine makes at once (create, start, unpause,
/// rename, remove, volume and network calls), in milliseconds.
pub(crate) const CHANGE_TIMEOUT_MS: u64 = 30_000;
/// Per-request timeout of exec create, exec start (until the stream is attached) and exec
/// inspect, in milliseconds.
pub(crate) const EXEC_CALL_TIMEOUT_MS: u64 = 15_000;
/// Added to a stop's grace period for `POST /containers/{id}/stop`, in milliseconds.
pub(crate) const STOP_EXTRA_MS: u64 = 15_000;
/// Longest wait for the next progress message of an image pull, in milliseconds (a pull has
/// no total bound: it is bounded by its progress).
pub(crate) const PULL_IDLE_TIMEOUT_MS: u64 = 60_000;
/// Longest wait for the next chunk of a download, in milliseconds.
pub(crate) const DOWNLOAD_IDLE_TIMEOUT_MS: u64 = 30_000;
/// Base timeout of an archive upload, in milliseconds; see [`upload_timeout`].
pub(crate) const UPLOAD_BASE_TIMEOUT_MS: u64 = 30_000;
/// The slowest upload rate berth waits for, in bytes per second; see [`upload_timeout`].
pub(crate) const UPLOAD_MIN_BYTES_PER_SEC: u64 = 1024 * 1024;
/// Per-request timeout of `POST /commit` (a commit copies the writable layer), in milliseconds.
pub(crate) const COMMIT_TIMEOUT_MS: u64 = 300_000;

/// Longest wait, after an abort or a deadline, for the cleanup a call owes (the removal of the
/// container an aborted create made) before the call settles anyway, in milliseconds. Only
/// while the engine is answering ([`Engine::answering`]); otherwise the call settles at once.
pub(crate) const CLEANUP_WAIT_MS: u64 = 5_000;

/// The per-request timeout of an upload of `bytes`: [`UPLOAD_BASE_TIMEOUT_MS`] plus the time
/// the bytes take at [`UPLOAD_MIN_BYTES_PER_SEC`].
pub(crate) fn upload_timeout(bytes: u64) -> Duration {
    let ms = UPLOAD_BASE_TIMEOUT_MS
        .saturating_add(bytes.saturating_mul(1000) / UPLOAD_MIN_BYTES_PER_SEC);
    Duration::from_millis(ms)
}

/// A call's own deadline and the error it settles with (exec: `E_EXEC_TIMEOUT`).
#[derive(Debug, Clone)]
pub(crate) struct Deadline {
    /// When the call's time is up.
    pub at: Instant,
    /// What the call rejects with then.
    pub error: Error,
}

/// What a call scope bounds every request by, besides the per-request timeout.
#[derive(Debug, Clone, Default)]
pub(crate) struct Bounds {
    /// The callers' signals: the call's own, and an enclosing call's (a setup exec inside
    /// `createSession`). Empty: no signal.
    pub cancel: Vec<CancellationToken>,
    /// The operation an `E_ABORTED` names.
    pub operation: Arc<str>,
    /// The call's own deadline, if it has one.
    pub deadline: Option<Deadline>,
    /// Set once a request of this call was cut short before the engine answered it (by the
    /// signal, the deadline or the per-request timeout): the engine is not answering, so what
    /// the call must clean up is left to the background (see [`Engine::answering`]).
    pub unanswered: Arc<AtomicBool>,
}

/// Marks the call's scope [`Bounds::unanswered`] when dropped before [`Pending::answered`]:
/// a request future dropped by any select (this module's or an enclosing one's) is a request
/// the engine did not answer.
struct Pending<'a>(Option<&'a AtomicBool>);

impl Pending<'_> {
    fn answered(mut self) {
        self.0 = None;
    }
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if let Some(flag) = self.0 {
            flag.store(true, Ordering::Relaxed);
        }
    }
}

/// Runs `fut` unless `cancel` fires (`E_ABORTED` naming `operation`), the `deadline` passes
/// (its error), or `per_request` passes (`E_ENGINE_UNAVAILABLE`: no answer to `what` from
/// `endpoint`) first. The future is dropped then: its connection is closed and nothing more
/// of it is awaited. The inner result is the engine's own.
pub(crate) async fn bounded<T>(
    bounds: &Bounds,
    per_request: Duration,
    endpoint: &str,
    what: &str,
    fut: impl Future<Output = T>,
) -> Result<T> {
    if bounds.is_cancelled() {
        return Err(Error::aborted(&*bounds.operation));
    }
    let deadline = bounds.deadline.as_ref();
    let pending = Pending(Some(&bounds.unanswered));
    let fut = async {
        let r = tokio::time::timeout(per_request, fut).await;
        if r.is_ok() {
            pending.answered();
        }
        r
    };
    let until = async {
        match deadline {
            Some(d) => tokio::time::sleep_until(d.at).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        biased;
        _ = bounds.cancelled() => Err(Error::aborted(&*bounds.operation)),
        _ = until => Err(deadline.map(|d| d.error.clone()).unwrap_or_else(|| Error::aborted(&*bounds.operation))),
        r = fut => r.map_err(|_| {
            unavailable::no_answer(endpoint, what, u64::try_from(per_request.as_millis()).unwrap_or(u64::MAX))
        }),
    }
}

impl Bounds {
    fn is_cancelled(&self) -> bool {
        self.cancel.iter().any(CancellationToken::is_cancelled)
    }

    /// Resolves when any of the signals fires (never without one).
    async fn cancelled(&self) {
        if self.cancel.is_empty() {
            return std::future::pending().await;
        }
        futures_util::future::select_all(self.cancel.iter().map(|t| Box::pin(t.cancelled()))).await;
    }
}

impl Engine {
    /// This engine, scoped to one call: every request is also bounded by `cancel`, and an
    /// abort is `E_ABORTED` naming `operation` (an enclosing call's name wins: its caller is
    /// the one told). Keeps the signals and the deadline already set.
    pub(crate) fn within(&self, cancel: &CancellationToken, operation: &str) -> Engine {
        let mut e = self.clone();
        let mut b = (*self.bounds).clone();
        if b.cancel.is_empty() {
            b.operation = operation.into();
            b.unanswered = Arc::default();
        }
        b.cancel.push(cancel.clone());
        e.bounds = Arc::new(b);
        e
    }

    /// This engine, with the call's own `deadline` added to its scope.
    pub(crate) fn until(&self, deadline: Deadline) -> Engine {
        let mut e = self.clone();
        let mut b = (*self.bounds).clone();
        b.deadline = Some(match &self.bounds.deadline {
            Some(d) if d.at <= deadline.at => d.clone(),
            _ => deadline,
        });
        e.bounds = Arc::new(b);
        e
    }

    /// This engine without a caller's bounds, for cleanup after a failed or aborted call:
    /// only per-request timeouts apply.
    pub(crate) fn detached(&self) -> Engine {
        let mut e = self.clone();
        e.bounds = Arc::default();
        e
    }

    /// Whether every request of this call so far got its answer (none was cut short by the
    /// signal, the deadline or a per-request timeout). After an abort or a deadline, a call
    /// whose engine is answering finishes the cleanup it owes before it settles; one whose
    /// engine is not leaves it to the background (`docs/design.md#engines`).
    pub(crate) fn answering(&self) -> bool {
        !self.bounds.unanswered.load(Ordering::Relaxed)
    }

    /// Runs the engine request `fut` (described as `what`, e.g. `GET /containers/{id}/json`)
    /// within this scope's bounds and the per-request timeout `timeout_ms`; see [`bounded`].
    pub(crate) async fn call<T>(
        &self,
        what: &str,
        timeout_ms: u64,
        fut: impl Future<Output = T>,
    ) -> Result<T> {
        bounded(
            &self.bounds,
            Duration::from_millis(timeout_ms),
            &self.endpoint,
            what,
            fut,
        )
        .await
    }

    /// [`Engine::call`] with a per-request timeout as a [`Duration`].
    pub(crate) async fn call_for<T>(
        &self,
        what: &str,
        timeout: Duration,
        fut: impl Future<Output = T>,
    ) -> Result<T> {
        bounded(&self.bounds, timeout, &self.endpoint, what, fut).await
    }

    /// Runs a composite step `fut` (several requests, each already bounded) so that the
    /// scope's signal and deadline also settle the time between requests.
    pub(crate) async fn step<T>(&self, fut: impl Future<Output = Result<T>>) -> Result<T> {
        let b = &self.bounds;
        let until = async {
            match &b.deadline {
                Some(d) => tokio::time::sleep_until(d.at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            _ = b.cancelled() => Err(Error::aborted(&*b.operation)),
            _ = until => Err(b.deadline.as_ref().map(|d| d.error.clone()).unwrap_or_else(|| Error::aborted(&*b.operation))),
            r = fut => r,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds(cancel: &CancellationToken, deadline: Option<Deadline>) -> Bounds {
        Bounds {
            cancel: vec![cancel.clone()],
            operation: "exec".into(),
            deadline,
            unanswered: Arc::default(),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn an_abort_settles_a_request_that_never_answers() {
        let cancel = CancellationToken::new();
        let b = bounds(&cancel, None);
        let c = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(500)).await;
            c.cancel();
        });
        let r = bounded(
            &b,
            Duration::from_secs(60),
            "unix:///x",
            "GET /x",
            std::future::pending::<std::result::Result<(), ()>>(),
        )
        .await;
        assert_eq!(r.unwrap_err().code(), "E_ABORTED");
        assert!(
            b.unanswered.load(Ordering::Relaxed),
            "the cut request is remembered"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_deadline_settles_with_its_own_error() {
        let cancel = CancellationToken::new();
        let d = Deadline {
            at: Instant::now() + Duration::from_millis(1000),
            error: Error::ExecTimeout {
                container: "c".into(),
                timeout_ms: 1000,
                stdout: Vec::new(),
                stderr: Vec::new(),
            },
        };
        let b = bounds(&cancel, Some(d));
        let r = bounded(
            &b,
            Duration::from_secs(60),
            "unix:///x",
            "GET /x",
            std::future::pending::<std::result::Result<(), ()>>(),
        )
        .await;
        assert_eq!(r.unwrap_err().code(), "E_EXEC_TIMEOUT");
    }

    #[tokio::test(start_paused = true)]
    async fn the_per_request_timeout_is_engine_unavailable() {
        let b = Bounds::default();
        let r = bounded(
            &b,
            Duration::from_millis(200),
            "unix:///x",
            "GET /x",
            std::future::pending::<std::result::Result<(), ()>>(),
        )
        .await;
        let e = r.unwrap_err();
        assert_eq!(e.code(), "E_ENGINE_UNAVAILABLE");
        assert!(
            e.to_string().contains("no answer to GET /x within 200 ms"),
            "{e}"
        );
    }

    #[tokio::test]
    async fn an_answer_passes_through() {
        let b = Bounds::default();
        let r = bounded(
            &b,
            Duration::from_millis(200),
            "unix:///x",
            "GET /x",
            async { Ok::<_, ()>(7) },
        )
        .await;
        assert_eq!(r.unwrap(), Ok(7));
        assert!(!b.unanswered.load(Ordering::Relaxed));
    }

    #[test]
    fn uploads_get_time_for_their_bytes() {
        assert_eq!(
            upload_timeout(0),
            Duration::from_millis(UPLOAD_BASE_TIMEOUT_MS)
        );
        assert_eq!(
            upload_timeout(50 * 1024 * 1024),
            Duration::from_millis(UPLOAD_BASE_TIMEOUT_MS + 50_000)
        );
    }
}
