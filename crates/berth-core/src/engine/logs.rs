//! Logs: the tail of a container's output, bounded in size and time, for error reports.

use bollard::container::LogOutput;
use bollard::query_parameters::LogsOptionsBuilder;
use futures_util::StreamExt;
use tokio::time::Instant;

use crate::engine::bounded::READ_TIMEOUT_MS;
use crate::engine::connection::Engine;

/// Lines asked of the engine for a log tail.
pub(crate) const LOG_TAIL_LINES: &str = "100";
/// At most this many bytes of a log tail are kept (the last ones).
pub(crate) const LOG_TAIL_BYTES: usize = 4096;

/// The last [`LOG_TAIL_BYTES`] of container `id`'s stdout and stderr, as lossy UTF-8.
///
/// `GET /containers/{id}/logs?stdout=1&stderr=1&tail=100`, the whole read bounded by
/// [`READ_TIMEOUT_MS`] and the caller's scope. Best effort: whatever was read when it failed
/// or ran out of time (an empty string when nothing was).
pub(crate) async fn tail(engine: &Engine, id: &str) -> String {
    let opts = LogsOptionsBuilder::default()
        .stdout(true)
        .stderr(true)
        .tail(LOG_TAIL_LINES)
        .build();
    let mut stream = engine.docker.logs(id, Some(opts));
    let mut buf: Vec<u8> = Vec::new();
    let end = Instant::now() + std::time::Duration::from_millis(READ_TIMEOUT_MS);
    loop {
        let left = end.saturating_duration_since(Instant::now());
        let left_ms = u64::try_from(left.as_millis()).unwrap_or(u64::MAX);
        if left_ms == 0 {
            break;
        }
        match engine
            .call("GET /containers/{id}/logs", left_ms, stream.next())
            .await
        {
            Ok(Some(Ok(LogOutput::StdOut { message })))
            | Ok(Some(Ok(LogOutput::StdErr { message })))
            | Ok(Some(Ok(LogOutput::Console { message }))) => {
                buf.extend_from_slice(&message);
                if buf.len() > 2 * LOG_TAIL_BYTES {
                    buf.drain(..buf.len() - LOG_TAIL_BYTES);
                }
            }
            Ok(Some(Ok(_))) => {}
            _ => break,
        }
    }
    let start = buf.len().saturating_sub(LOG_TAIL_BYTES);
    String::from_utf8_lossy(&buf[start..]).into_owned()
}
