//! Upload of a temporary file that outlives its caller: the archive upload of an atomic write
//! runs in a task of its own, so that a caller's abort or deadline settles the call at once
//! while the temporary file is removed only after the engine has answered the upload.
//!
//! Removing the temporary file at the abort would race the engine: the engine extracts an
//! archive while its body arrives, so a removal made before the engine's answer can run
//! before the file exists, and the file then stays behind (`docs/design.md#files`).

use bytes::Bytes;
use futures_util::Stream;
use tokio::sync::oneshot;

use crate::files::archive;
use crate::files::as_user;
use crate::files::context::Target;
use crate::model::errors::{Error, Result};

/// What the engine answered to the upload (the inner result is its own).
pub(crate) type Answer = std::result::Result<(), bollard::errors::Error>;

/// Uploads `prefix` + `body` + the archive's end (`size` file bytes) to container `t.id`
/// through [`archive::upload`], bounded by the caller's scope (`t.engine`: signal and
/// deadline) for the caller only. When the caller stops waiting, the upload carries on,
/// bounded by its per-request timeout alone, and `temp` (the temporary file the archive
/// writes; `None` when the upload goes straight to its path) is then removed as root.
///
/// `PUT /containers/{id}/archive?path=/`; the removal is one exec as root. Errors: those of
/// [`archive::upload`] (`E_ABORTED`, the call's deadline error, `E_ENGINE_UNAVAILABLE`), and
/// `E_ENGINE` when the upload task ended without an answer.
pub(crate) async fn upload(
    t: Target<'_>,
    prefix: Vec<u8>,
    size: u64,
    body: impl Stream<Item = std::io::Result<Bytes>> + Send + 'static,
    temp: Option<String>,
) -> Result<Answer> {
    let engine = t.engine.detached();
    let (id, name) = (t.id.to_string(), t.name.to_string());
    let (tx, rx) = oneshot::channel();
    tokio::spawn(async move {
        let answer = archive::upload(&engine, &id, prefix, size, body).await;
        // Nobody waits any more (the caller was aborted or timed out): the temporary file,
        // complete or not, is never renamed into place; remove it now that the engine is done.
        if tx.send(answer).is_err() {
            if let Some(temp) = temp {
                as_user::cleanup(&engine, &id, &name, temp, Some("0"));
            }
        }
    });
    t.engine
        .step(async {
            rx.await.unwrap_or_else(|_| {
                Err(Error::Engine {
                    operation: "write file".into(),
                    status: None,
                    message: "the archive upload ended without an answer".into(),
                })
            })
        })
        .await
}
