//! The stop watch of an engine exec whose output waits for its reader: a container stopped
//! outside berth (`docker stop`, its own exit) must not leave `wait()` waiting for a reader of
//! a process that is gone. (Over a command channel the helper dies with the container, so the
//! channel's reader sees it; a session's own `stop()`/`remove()` give their commands up.)
//!
//! Engine calls, each bounded as every request of the exec's engine (its signal, its
//! deadline, a per-request timeout), made only while the same chunk has waited for its reader
//! over [`STALL_CHECK_MS`], at most once per [`STALL_CHECK_MS`]: `GET /containers/{id}/json`,
//! then, for a container still reported running, `GET /exec/{id}/json` and, once the exec
//! ended, `GET /containers/{id}/top` (Docker keeps a container whose processes are all dead
//! "running" for about 10 s while an exec's output is unread: no process left means stopping).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::engine::bounded::READ_TIMEOUT_MS;
use crate::engine::connection::{status, Engine};

/// How long an engine exec's chunk waits for its reader before its container's state is
/// checked, and the interval of those checks while it keeps waiting, in ms.
pub(crate) const STALL_CHECK_MS: u64 = 1_000;

/// Until aborted (the pump aborts it when it ends): every [`STALL_CHECK_MS`], if `stall`
/// (the number of the chunk that waits for its reader, 0 when none does) holds the same
/// chunk as at the last look, checks whether the exec's container stopped ([`stopped`]), and
/// once it did cancels `gone` (the pump then settles without the reader) and returns. An
/// engine error is retried at the next look.
pub(crate) async fn watch_stopped(
    engine: Engine,
    id: String,
    exec_id: String,
    stall: Arc<AtomicU64>,
    gone: CancellationToken,
) {
    let mut last = 0;
    loop {
        tokio::time::sleep(Duration::from_millis(STALL_CHECK_MS)).await;
        let now = stall.load(Ordering::Acquire);
        let stalled = now != 0 && now == last;
        last = now;
        if stalled && stopped(&engine, &id, &exec_id).await {
            gone.cancel();
            return;
        }
    }
}

/// Whether container `id` is stopped or stopping as far as exec `exec_id` is concerned: gone
/// (404), neither running nor paused, or reported running with the exec ended and no process
/// left in it. `false` on any engine error (the caller looks again later).
async fn stopped(engine: &Engine, id: &str, exec_id: &str) -> bool {
    let state = match crate::engine::container::inspect(engine, id).await {
        Ok(None) => return true,
        Ok(Some(c)) => c.body.state,
        Err(_) => return false,
    };
    let Some(state) = state else { return false };
    if state.paused == Some(true) {
        return false;
    }
    if state.running != Some(true) {
        return true;
    }
    let exec = crate::engine::exec::inspect(engine, exec_id, READ_TIMEOUT_MS).await;
    match exec {
        Ok(Ok(info)) if info.running == Some(false) => {}
        _ => return false,
    }
    let top = crate::engine::top::list(engine, id).await;
    match top {
        Ok(Ok(top)) => top.processes.is_none_or(|p| p.is_empty()),
        Ok(Err(e)) => matches!(status(&e), Some(404 | 409)),
        Err(_) => false,
    }
}
