//! Cleanup: removals a failed or interrupted call still owes, retried by the next call in this
//! process and, after an interruption, by a background task while the engine does not answer.
//!
//! Two kinds of duty: a container known by id (its create answered, a later step failed and
//! its removal failed or could not wait), and a create whose answer was lost (aborted, timed
//! out or cut off while `POST /containers/create` was in flight): that container is found by
//! its per-call creation nonce label (`dev.berth.create-nonce`) once the engine answers, and
//! removed by id. Nothing is ever removed by name.

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use crate::engine::connection::Engine;
use crate::engine::container::list_by_labels;
use crate::model::labels::CREATE_NONCE;
use crate::ownership::removal::remove_by_id;

/// How long a lost create's nonce is still looked for after no container carried it, in
/// milliseconds: the engine may carry out a create it received late.
pub(crate) const NONCE_WATCH_MS: u64 = 120_000;
/// How long the background task keeps retrying after an interruption, in milliseconds.
pub(crate) const BACKGROUND_RETRY_MS: u64 = 300_000;
/// Pause between two background retries, in milliseconds.
pub(crate) const BACKGROUND_RETRY_INTERVAL_MS: u64 = 1_000;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Duty {
    /// Remove this container id.
    Id(String),
    /// Find the container carrying this creation nonce and remove it; looked for until `until`.
    Nonce { nonce: String, until: Instant },
}

static PENDING: Mutex<Vec<(String, Duty)>> = Mutex::new(Vec::new());

fn push(endpoint: &str, duty: Duty) {
    let mut p = PENDING.lock().expect("cleanup list poisoned");
    if !p.iter().any(|(e, d)| e == endpoint && d == &duty) {
        p.push((endpoint.to_string(), duty));
    }
}

fn take(endpoint: &str, duty: &Duty) {
    let mut p = PENDING.lock().expect("cleanup list poisoned");
    p.retain(|(e, d)| !(e == endpoint && d == duty));
}

/// Remembers that container `id` on `engine` still has to be removed.
pub(crate) fn defer(engine: &Engine, id: &str) {
    push(&engine.endpoint, Duty::Id(id.to_string()));
}

/// Remembers that a create carrying `nonce` may have made a container on `engine` whose id
/// this process never learned.
pub(crate) fn defer_nonce(engine: &Engine, nonce: &str) {
    push(
        &engine.endpoint,
        Duty::Nonce {
            nonce: nonce.to_string(),
            until: Instant::now() + Duration::from_millis(NONCE_WATCH_MS),
        },
    );
}

/// Whether any duty on `engine`'s endpoint is still pending.
fn any_pending(endpoint: &str) -> bool {
    let p = PENDING.lock().expect("cleanup list poisoned");
    p.iter().any(|(e, _)| e == endpoint)
}

/// Retries every deferred duty on `engine`, within `engine`'s scope (a caller's abort stops
/// the retry; nothing is lost, since a duty leaves the list only once done). Duties that fail
/// again stay.
pub(crate) async fn retry_pending(engine: &Engine) {
    let mine: Vec<Duty> = {
        let p = PENDING.lock().expect("cleanup list poisoned");
        p.iter()
            .filter(|(e, _)| e == &engine.endpoint)
            .map(|(_, d)| d.clone())
            .collect()
    };
    for duty in mine {
        if done(engine, &duty).await {
            take(&engine.endpoint, &duty);
        }
    }
}

/// Carries out one duty; `true` when nothing of it is left.
async fn done(engine: &Engine, duty: &Duty) -> bool {
    match duty {
        Duty::Id(id) => remove_by_id(engine, id).await.is_ok(),
        Duty::Nonce { nonce, until } => {
            let Ok(found) = list_by_labels(engine, &[format!("{CREATE_NONCE}={nonce}")]).await
            else {
                return false;
            };
            let mut all_removed = true;
            for c in &found {
                if let Some(id) = &c.summary.id {
                    all_removed &= remove_by_id(engine, id).await.is_ok();
                }
            }
            // Found and removed: done. Not found: done only once the watch is over.
            all_removed && (!found.is_empty() || Instant::now() >= *until)
        }
    }
}

/// Retries `engine`'s deferred duties in the background, every
/// [`BACKGROUND_RETRY_INTERVAL_MS`] for up to [`BACKGROUND_RETRY_MS`], without any caller's
/// bounds (per-request timeouts only). Used after an interrupted call, which settles at once
/// and leaves its cleanup to this task; the next call in this process retries too.
pub(crate) fn retry_in_background(engine: &Engine) {
    let engine = engine.detached();
    tokio::spawn(async move {
        let end = Instant::now() + Duration::from_millis(BACKGROUND_RETRY_MS);
        while any_pending(&engine.endpoint) && Instant::now() < end {
            retry_pending(&engine).await;
            if !any_pending(&engine.endpoint) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(BACKGROUND_RETRY_INTERVAL_MS)).await;
        }
    });
}
