//! BindingExecProcess: a streaming exec, read by pulling chunks (the TypeScript side wraps them in web streams).

use std::sync::Arc;

use napi::bindgen_prelude::{Buffer, PromiseRaw};
use napi::Env;
use napi_derive::napi;

use super::cancel::{token_of, CancelToken};
use super::errors::js;
use berth_core::Error;
use berth_core::{ExecProcess, Which};

/// A running exec from `BindingSession.spawn`. Pull `stdout`/`stderr` chunks with `read`;
/// the process is held back (not buffered) while nobody reads.
#[napi]
pub struct BindingExecProcess {
    inner: Arc<ExecProcess>,
}

impl BindingExecProcess {
    /// Wraps a core process.
    pub fn new(p: ExecProcess) -> Self {
        BindingExecProcess { inner: Arc::new(p) }
    }
}

fn which(stream: &str) -> napi::Result<Which> {
    match stream {
        "stdout" => Ok(Which::Stdout),
        "stderr" => Ok(Which::Stderr),
        other => js(Err(Error::invalid(
            "stream",
            format!("expected 'stdout' or 'stderr', got {other:?}"),
        ))),
    }
}

#[napi]
impl BindingExecProcess {
    /// The next chunk of `stream` (`'stdout'` or `'stderr'`), or `null` at its end. After a
    /// timeout or abort the stream rejects once with `E_EXEC_TIMEOUT` / `E_ABORTED`.
    #[napi(ts_return_type = "Promise<Buffer | null>")]
    pub fn read<'e>(
        &self,
        env: &'e Env,
        stream: String,
    ) -> napi::Result<PromiseRaw<'e, Option<Buffer>>> {
        let which = which(&stream)?;
        let inner = self.inner.clone();
        env.spawn_future(async move {
            Ok(js(inner.next(which).await)?.map(|b| Buffer::from(b.to_vec())))
        })
    }

    /// Stops delivering `stream`; the rest of it is discarded. Idempotent.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'e>(&self, env: &'e Env, stream: String) -> napi::Result<PromiseRaw<'e, ()>> {
        let which = which(&stream)?;
        let inner = self.inner.clone();
        env.spawn_future(async move {
            inner.close(which).await;
            Ok(())
        })
    }

    /// The exit code as the engine reports it, once the process ended. Rejects with
    /// `E_EXEC_TIMEOUT`, `E_ABORTED` (output tails in `details`) or `E_ENGINE`.
    #[napi(ts_return_type = "Promise<number>")]
    pub fn wait<'e>(&self, env: &'e Env) -> napi::Result<PromiseRaw<'e, i64>> {
        let inner = self.inner.clone();
        env.spawn_future(async move { js(inner.wait().await) })
    }

    /// Kills the process and its children in the container, and resolves once it ended and
    /// its tree kill finished, never later than the process's own deadline or signal (see
    /// `ExecProcess::kill` in the core for the ceilings). Idempotent. `token` (the caller's `abortSignal`) rejects it with `E_ABORTED` at once;
    /// the kill goes on in the background and `wait()` still settles.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn kill<'e>(
        &self,
        env: &'e Env,
        token: Option<&CancelToken>,
    ) -> napi::Result<PromiseRaw<'e, ()>> {
        let inner = self.inner.clone();
        let cancel = token_of(token);
        env.spawn_future(async move { js(inner.kill(&cancel).await) })
    }
}
