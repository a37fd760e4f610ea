//! The deadline file of berth's keep-alive: how a running container learns its current
//! deadline, so that it stops by itself with no berth process anywhere.
//!
//! A session created with `timeoutMs` and no custom entrypoint runs
//! [`crate::model::lifetime::KEEPALIVE_SCRIPT`] (label [`crate::model::labels::KEEP_ALIVE`]),
//! which exits once the deadline in [`crate::model::lifetime::DEADLINE_FILE`] has passed.
//! Create and every `setTimeout` write that file as root, atomically (a temporary file
//! renamed over it), before they record the deadline in the engine.

use std::collections::HashMap;

use tokio_util::sync::CancellationToken;

use crate::engine::connection::Engine;
use crate::exec::channel::CommandChannels;
use crate::exec::{self, ExecOptions};
use crate::model::errors::{Error, Result};
use crate::model::labels::KEEP_ALIVE;
use crate::model::lifetime::{deadline_secs, DEADLINE_DIR, DEADLINE_FILE};

/// How long writing the deadline file may take, in milliseconds.
const WRITE_TIMEOUT_MS: u64 = 30_000;

/// Writes `deadline_ms` (ms since the epoch) into the deadline file of container `id`
/// (`name` for errors) when its `labels` say it runs berth's deadline keep-alive; nothing
/// otherwise (a custom entrypoint is the user's). One command as root: over `root_channels`
/// (the session's command channels, given only when the container's own user is root, so its
/// channel is root's) when they can carry it, else one exec as user `0`:
/// `POST /containers/{id}/exec`, `POST /exec/{id}/start`, `GET /exec/{id}/json`.
/// Errors: `E_ENGINE` (the write failed: its exit code and stderr), `E_ENGINE_UNAVAILABLE`,
/// `E_EXEC_TIMEOUT`.
pub(crate) async fn write_deadline(
    engine: &Engine,
    id: &str,
    name: &str,
    labels: &HashMap<String, String>,
    deadline_ms: u64,
    root_channels: Option<&CommandChannels>,
) -> Result<()> {
    if labels.get(KEEP_ALIVE).map(String::as_str) != Some("deadline") {
        return Ok(());
    }
    let script = format!(
        "umask 022 && mkdir -p {DEADLINE_DIR} && chmod 755 {DEADLINE_DIR} && \
         printf '%s\\n' \"$1\" > {DEADLINE_FILE}.new && mv -f {DEADLINE_FILE}.new {DEADLINE_FILE}"
    );
    let argv = vec![
        "sh".to_string(),
        "-c".to_string(),
        script,
        "berth-deadline".to_string(),
        deadline_secs(deadline_ms).to_string(),
    ];
    let opts = ExecOptions {
        // The container's user (root) on its channel; root by number on the engine path.
        user: root_channels.is_none().then(|| "0".into()),
        timeout_ms: Some(WRITE_TIMEOUT_MS),
        ..Default::default()
    };
    let never = CancellationToken::new();
    let out = exec::exec_via(engine, id, name, &argv, &opts, &never, root_channels).await?;
    if out.exit_code != 0 {
        return Err(Error::Engine {
            operation: "write the keep-alive's deadline file".into(),
            status: None,
            message: format!(
                "exit code {}: {}",
                out.exit_code,
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        });
    }
    Ok(())
}
