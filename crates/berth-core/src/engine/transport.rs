//! Unix transport: the engine's unix socket with keep-alive connections, for bollard.
//!
//! bollard's own unix client is built with `pool_max_idle_per_host(0)`: every request opens
//! a new connection to the socket (connect, then the engine's accept and a fresh HTTP/1.1
//! state). This transport is the same hyper client over the same connector (`hyperlocal`)
//! with an idle pool, so sequential requests reuse one connection. Hijacked connections (exec
//! attach) leave the pool as hyper upgrades them. Idle connections are dropped after
//! [`IDLE_TIMEOUT_MS`]; a request on a connection the engine closed meanwhile is retried by
//! hyper when nothing of it was sent.

use std::sync::Arc;
use std::time::Duration;

use bollard::{BollardRequest, ClientVersion, Docker};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};

/// How long an idle connection to the engine is kept for reuse, in milliseconds.
pub(crate) const IDLE_TIMEOUT_MS: u64 = 30_000;
/// Idle connections kept per engine socket.
pub(crate) const MAX_IDLE_CONNECTIONS: usize = 8;

/// A bollard client for the unix socket at `path` (no `unix://`), keeping connections alive.
///
/// `timeout_secs` is bollard's request timeout (send until response headers), in seconds.
/// No request is made here. Errors: bollard's, when the client cannot be set up.
pub(crate) fn connect(
    path: &str,
    timeout_secs: u64,
    version: &ClientVersion,
) -> Result<Docker, bollard::errors::Error> {
    let mut builder = Client::builder(TokioExecutor::new());
    builder
        .pool_idle_timeout(Duration::from_millis(IDLE_TIMEOUT_MS))
        .pool_timer(TokioTimer::new())
        .pool_max_idle_per_host(MAX_IDLE_CONNECTIONS);
    let client = Arc::new(builder.build(hyperlocal::UnixConnector));
    let transport = move |req: BollardRequest| {
        let client = Arc::clone(&client);
        async move {
            client
                .request(req)
                .await
                .map_err(bollard::errors::Error::from)
        }
    };
    // bollard writes `{scheme}://{address}/v1.xx/...`; hyperlocal reads the socket path from a
    // `unix://` URI whose host is the path in hex.
    let address = format!("unix://{}", hex::encode(path.as_bytes()));
    Docker::connect_with_custom_transport(transport, Some(address), timeout_secs, version)
}
