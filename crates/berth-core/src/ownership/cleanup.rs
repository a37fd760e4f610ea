//! Cleanup: removals that failed after a failed create, retried by the next call in this process.

use std::sync::Mutex;

use crate::engine::connection::Engine;
use crate::ownership::removal::remove_by_id;

static PENDING: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// Remembers that container `id` on `engine` still has to be removed.
pub(crate) fn defer(engine: &Engine, id: &str) {
    let mut p = PENDING.lock().expect("cleanup list poisoned");
    if !p.iter().any(|(e, i)| e == &engine.endpoint && i == id) {
        p.push((engine.endpoint.clone(), id.to_string()));
    }
}

/// Retries every deferred removal on `engine`; those that fail again stay deferred.
pub(crate) async fn retry_pending(engine: &Engine) {
    let mine: Vec<String> = {
        let mut p = PENDING.lock().expect("cleanup list poisoned");
        let (mine, rest): (Vec<_>, Vec<_>) = p.drain(..).partition(|(e, _)| e == &engine.endpoint);
        *p = rest;
        mine.into_iter().map(|(_, id)| id).collect()
    };
    for id in mine {
        if remove_by_id(engine, &id).await.is_err() {
            defer(engine, &id);
        }
    }
}
