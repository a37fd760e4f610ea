//! The archive endpoints by container id: a tar out (`GET`), a path's stat (`HEAD`), a tar in
//! (`PUT`, extracted at `/`). What the tar holds, and what a stat means for a file call, live
//! in `crate::files::archive` and `crate::exec::channel::install`.

use std::time::Duration;

use bollard::container::PathStatResponse;
use bollard::query_parameters::{
    ContainerArchiveInfoOptions, DownloadFromContainerOptions, UploadToContainerOptions,
};
use bytes::Bytes;
use futures_util::{Stream, StreamExt};

use crate::engine::bounded::{DOWNLOAD_IDLE_TIMEOUT_MS, READ_TIMEOUT_MS};
use crate::engine::connection::Engine;
use crate::engine::Answer;
use crate::model::errors::Result;

/// How much longer than berth's own bound the HTTP client waits for an upload, so that berth's
/// bound (with its error) is always the one that ends a slow upload.
const CLIENT_EXTRA: Duration = Duration::from_secs(5);

/// `GET /containers/{id}/archive?path=<path>`: the tar's bytes as the engine sends them. Every
/// chunk must come within [`DOWNLOAD_IDLE_TIMEOUT_MS`] and the engine's scope (the caller's
/// signal and deadline); a chunk that does not ends the stream with an `IOError` of kind
/// `TimedOut` carrying the bound's message. A 404 (path or container absent) is the first item.
pub(crate) fn get(
    engine: &Engine,
    id: &str,
    path: &str,
) -> impl Stream<Item = Answer<Bytes>> + Send + 'static {
    let body = engine.docker.download_from_container(
        id,
        Some(DownloadFromContainerOptions {
            path: path.to_string(),
        }),
    );
    futures_util::stream::unfold((body, engine.clone()), |(mut body, engine)| async move {
        let item = match engine
            .call(
                "GET /containers/{id}/archive",
                DOWNLOAD_IDLE_TIMEOUT_MS,
                body.next(),
            )
            .await
        {
            Ok(item) => item?,
            Err(e) => Err(bollard::errors::Error::IOError {
                err: std::io::Error::new(std::io::ErrorKind::TimedOut, e.to_string()),
            }),
        };
        Some((item, (body, engine)))
    })
}

/// `HEAD /containers/{id}/archive?path=<path>`: the path's stat (decoded from the engine's
/// `X-Docker-Container-Path-Stat` header), bounded by [`READ_TIMEOUT_MS`]; 404 when the path or
/// the container is absent. Errors (outer): `E_ENGINE_UNAVAILABLE`, the scope's `E_ABORTED` or
/// deadline error.
pub(crate) async fn head(
    engine: &Engine,
    id: &str,
    path: &str,
) -> Result<Answer<PathStatResponse>> {
    engine
        .call(
            "HEAD /containers/{id}/archive",
            READ_TIMEOUT_MS,
            engine.docker.get_container_archive_info(
                id,
                Some(ContainerArchiveInfoOptions {
                    path: path.to_string(),
                }),
            ),
        )
        .await
}

/// [`put_stream`] of a tar held in memory (sent as one chunk).
pub(crate) async fn put_bytes(
    engine: &Engine,
    id: &str,
    tar: Vec<u8>,
    timeout: Duration,
) -> Result<Answer<()>> {
    let body = futures_util::stream::iter([Ok(Bytes::from(tar))]);
    put_stream(engine, id, body, timeout).await
}

/// `PUT /containers/{id}/archive?path=/&noOverwriteDirNonDir=true`: extracts the tar `body`
/// (paths relative to `/`) in container `id`, bounded by `timeout` from the first byte to the
/// engine's answer. Errors (outer): `E_ENGINE_UNAVAILABLE` (no answer in time), the scope's
/// `E_ABORTED` or deadline error; the engine's refusal is the inner error.
pub(crate) async fn put_stream(
    engine: &Engine,
    id: &str,
    body: impl Stream<Item = std::io::Result<Bytes>> + Send + 'static,
    timeout: Duration,
) -> Result<Answer<()>> {
    let docker = engine.docker.clone().with_timeout(timeout + CLIENT_EXTRA);
    let put = docker.upload_to_container(
        id,
        Some(UploadToContainerOptions {
            path: "/".into(),
            no_overwrite_dir_non_dir: Some("true".into()),
            copy_uidgid: None,
        }),
        bollard::body_try_stream(body),
    );
    engine
        .call_for("PUT /containers/{id}/archive", timeout, put)
        .await
}
