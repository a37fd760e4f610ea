//! BindingExecProcess: a streaming exec, read by pulling chunks (the TypeScript side wraps them in web streams).

use std::sync::Arc;

use napi::bindgen_prelude::{Buffer, PromiseRaw};
use napi::Env;
use napi_derive::napi;

use super::cancel::{token_of, CancelToken};
use super::errors::js;
use berth_core::Error;
use berth_core::{ExecProcess, Session, Which};
use tokio_util::sync::CancellationToken;

/// A running exec from `BindingSession.spawn`. Pull `stdout`/`stderr` chunks with `read`;
/// the process is held back (not buffered) while nobody reads.
#[napi]
pub struct BindingExecProcess {
    inner: Arc<ExecProcess>,
    /// The session it runs in: asked after an exit code 137 whether the OOM killer ended it.
    session: Arc<Session>,
}

impl BindingExecProcess {
    /// Wraps a core process of `session`.
    pub fn new(p: ExecProcess, session: Arc<Session>) -> Self {
        BindingExecProcess {
            inner: Arc::new(p),
            session,
        }
    }
}

/// How a spawned process ended (`BindingExecProcess.wait`).
#[napi(object, object_from_js = false)]
pub struct BindingExit {
    /// Exit code, as the engine reports it.
    pub exit_code: i64,
    /// Whether the memory limit's OOM killer ended it: exit code 137 and a new OOM kill in the
    /// container's cgroup (`Session::new_oom_kill` in the core: one more command, only after a 137).
    pub oom_killed: bool,
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

    /// The exit code as the engine reports it, and whether the OOM killer ended it, once the
    /// process ended. Errors: `ExecProcess::wait` in the core.
    #[napi(ts_return_type = "Promise<BindingExit>")]
    pub fn wait<'e>(&self, env: &'e Env) -> napi::Result<PromiseRaw<'e, BindingExit>> {
        let (inner, session) = (self.inner.clone(), self.session.clone());
        env.spawn_future(async move {
            let exit_code = js(inner.wait().await)?;
            let oom_killed =
                exit_code == 137 && session.new_oom_kill(&CancellationToken::new()).await;
            Ok(BindingExit {
                exit_code,
                oom_killed,
            })
        })
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
