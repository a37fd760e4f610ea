//! Cancellation: an engine call raced against the caller's signal.

use tokio_util::sync::CancellationToken;

use crate::model::errors::{Error, Result};

/// Runs `fut` unless `cancel` fires first (then `E_ABORTED`).
pub(crate) async fn guard<T>(
    cancel: &CancellationToken,
    operation: &str,
    fut: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    tokio::select! {
        r = fut => r,
        _ = cancel.cancelled() => Err(Error::aborted(operation)),
    }
}
