//! BindingSession: the JavaScript class over one core session handle.

use std::sync::Arc;

use napi::bindgen_prelude::{Buffer, PromiseRaw};
use napi::Env;
use napi_derive::napi;

use super::cancel::{token_of, CancelToken};
use super::errors::js;
use super::files::{BindingFileReader, BindingFileWriter};
use super::metrics::{BindingMetrics, BindingMetricsOptions};
use super::peek_options::{owner_js, BindingOwner};
use super::process::BindingExecProcess;
use super::recovery::{BindingReplaced, BindingVerification};
use super::session_options::{
    BindingExecOptions, BindingExecResult, BindingExecTextResult, BindingReleaseResult,
    BindingRemoveOptions, BindingRemoveResult, BindingStopOptions, BindingStopResult,
    BindingWriteFileOptions,
};
use berth_core::NetworkPolicy;
use berth_core::Session;
use berth_core::{js_integer, js_integer_opt};
use berth_core::{normalize_path, Data, FileAccess};

/// One session's container, as created or resumed. The TypeScript `Session` wraps it.
#[napi]
pub struct BindingSession {
    inner: Arc<Session>,
}

impl BindingSession {
    /// Wraps a core handle.
    pub fn new(s: Session) -> Self {
        BindingSession { inner: Arc::new(s) }
    }
}

impl BindingSession {
    /// The core's buffered exec of `argv`, for [`Self::exec`] and [`Self::exec_text`] (which
    /// differ only in how the result crosses into JavaScript).
    fn run_exec(
        &self,
        argv: Vec<String>,
        options: Option<BindingExecOptions>,
        token: Option<&CancelToken>,
    ) -> impl std::future::Future<Output = napi::Result<berth_core::ExecOutput>> + Send + 'static
    {
        let inner = self.inner.clone();
        let opts = options.map(BindingExecOptions::into_core).transpose();
        let cancel = token_of(token);
        async move {
            let opts = js(opts)?.unwrap_or_default();
            js(inner.exec(&argv, &opts, &cancel).await)
        }
    }
}

#[napi]
impl BindingSession {
    /// The full 64-hex container id.
    #[napi(getter)]
    pub fn id(&self) -> String {
        self.inner.id.clone()
    }

    /// The container name.
    #[napi(getter)]
    pub fn name(&self) -> String {
        self.inner.name.clone()
    }

    /// The session id.
    #[napi(getter)]
    pub fn session_id(&self) -> String {
        self.inner.session_id.clone()
    }

    /// `created`, `adopted` or `inherited`.
    #[napi(getter)]
    pub fn ownership(&self) -> String {
        self.inner.ownership.as_str().to_string()
    }

    /// The recorded creator, with its liveness now; absent when unreadable.
    #[napi(getter)]
    pub fn owner(&self) -> Option<BindingOwner> {
        self.inner.owner.as_ref().map(owner_js)
    }

    /// Spec fields that differ from creation.
    #[napi(getter)]
    pub fn drift(&self) -> Vec<String> {
        self.inner.drift.clone()
    }

    /// The verification `resumeSession({ verify })` or `recreateSession` ran; absent otherwise.
    #[napi(getter)]
    pub fn verification(&self) -> Option<BindingVerification> {
        self.inner.verification.clone().map(Into::into)
    }

    /// What `recreateSession` lost and kept; absent for other handles.
    #[napi(getter)]
    pub fn replaced(&self) -> Option<BindingReplaced> {
        self.inner.replaced.clone().map(Into::into)
    }

    /// When the session expires, in milliseconds since the epoch, as read when this handle was
    /// made; absent: never. `setTimeout` resolves the new value.
    #[napi(getter)]
    pub fn expires_at(&self) -> Option<f64> {
        self.inner.expires_at.map(|ms| ms as f64)
    }

    /// Moves the session's deadline to now + `ms` milliseconds and resolves the new deadline (ms
    /// since the epoch). Converts [`berth_core::Session::set_timeout`]: see it for the range, the
    /// engine calls and the errors. `ms` must be a whole number that fits a `u64`
    /// (`E_INVALID_ARGUMENT` otherwise); `token` aborts it (`E_ABORTED`).
    #[napi(ts_return_type = "Promise<number>")]
    pub fn set_timeout<'e>(
        &self,
        env: &'e Env,
        ms: f64,
        token: Option<&CancelToken>,
    ) -> napi::Result<PromiseRaw<'e, f64>> {
        let inner = self.inner.clone();
        let cancel = token_of(token);
        let ms = js(js_integer("ms", ms))?;
        env.spawn_future(async move { Ok(js(inner.set_timeout(ms, &cancel).await)? as f64) })
    }

    /// Runs `argv` (never a shell string) and buffers stdout and stderr as bytes. Converts
    /// [`berth_core::Session::exec`]: see it for the engine calls and errors. The options are
    /// converted by [`BindingExecOptions::into_core`]; `token` aborts it (`E_ABORTED`).
    #[napi(ts_return_type = "Promise<BindingExecResult>")]
    pub fn exec<'e>(
        &self,
        env: &'e Env,
        argv: Vec<String>,
        options: Option<BindingExecOptions>,
        token: Option<&CancelToken>,
    ) -> napi::Result<PromiseRaw<'e, BindingExecResult>> {
        let run = self.run_exec(argv, options, token);
        env.spawn_future(async move { run.await.map(Into::into) })
    }

    /// [`Self::exec`], with stdout and stderr answered as UTF-8 strings (see
    /// [`super::session_options::LossyText`]): the bytes are freed as the strings are made.
    /// Engine calls and errors: those of `exec`.
    #[napi(ts_return_type = "Promise<BindingExecTextResult>")]
    pub fn exec_text<'e>(
        &self,
        env: &'e Env,
        argv: Vec<String>,
        options: Option<BindingExecOptions>,
        token: Option<&CancelToken>,
    ) -> napi::Result<PromiseRaw<'e, BindingExecTextResult>> {
        let run = self.run_exec(argv, options, token);
        env.spawn_future(async move { run.await.map(Into::into) })
    }

    /// `"127.0.0.1:49153"` for a published container port (TCP). Converts
    /// [`berth_core::Session::host_address`]: see it for the range, the engine calls and errors.
    /// `port` must be a whole number (`E_INVALID_ARGUMENT` otherwise).
    #[napi(ts_return_type = "Promise<string>")]
    pub fn host_address<'e>(
        &self,
        env: &'e Env,
        port: f64,
        token: Option<&CancelToken>,
    ) -> napi::Result<PromiseRaw<'e, String>> {
        let inner = self.inner.clone();
        let cancel = token_of(token);
        env.spawn_future(async move {
            let port = js(js_integer("port", port))?;
            js(inner.host_address(port, &cancel).await)
        })
    }

    /// Stops the container by id when this handle owns it (or `force`). Converts
    /// [`berth_core::Session::stop`]: see it for the engine calls, the outcomes and errors.
    /// `timeoutMs` must be a whole number that fits a `u64` (`E_INVALID_ARGUMENT` otherwise).
    #[napi(ts_return_type = "Promise<BindingStopResult>")]
    pub fn stop<'e>(
        &self,
        env: &'e Env,
        options: Option<BindingStopOptions>,
        token: Option<&CancelToken>,
    ) -> napi::Result<PromiseRaw<'e, BindingStopResult>> {
        let inner = self.inner.clone();
        let cancel = token_of(token);
        let force = options.as_ref().and_then(|o| o.force).unwrap_or(false);
        let timeout = options.and_then(|o| o.timeout_ms);
        env.spawn_future(async move {
            let timeout_ms = js(js_integer_opt("timeoutMs", timeout))?;
            let out = js(inner.stop(force, timeout_ms, &cancel).await)?;
            Ok(BindingStopResult {
                stopped: out.stopped,
                reason: out.reason.map(str::to_string),
            })
        })
    }

    /// Drops this adopted handle's holder record; the container is never touched. Converts
    /// [`berth_core::Session::release`]: see it for the engine calls, the outcomes and errors.
    #[napi(ts_return_type = "Promise<BindingReleaseResult>")]
    pub fn release<'e>(
        &self,
        env: &'e Env,
        token: Option<&CancelToken>,
    ) -> napi::Result<PromiseRaw<'e, BindingReleaseResult>> {
        let inner = self.inner.clone();
        let cancel = token_of(token);
        env.spawn_future(async move {
            let out = js(inner.release(&cancel).await)?;
            Ok(BindingReleaseResult {
                released: out.released,
                reason: out.reason.map(str::to_string),
            })
        })
    }

    /// One usage sample of the container. Converts [`berth_core::Session::metrics`]: see it for
    /// the figures, the engine calls and errors.
    #[napi(ts_return_type = "Promise<BindingMetrics>")]
    pub fn metrics<'e>(
        &self,
        env: &'e Env,
        options: Option<BindingMetricsOptions>,
        token: Option<&CancelToken>,
    ) -> napi::Result<PromiseRaw<'e, BindingMetrics>> {
        let inner = self.inner.clone();
        let cancel = token_of(token);
        let timeout = options.and_then(|o| o.timeout_ms);
        env.spawn_future(async move {
            let timeout_ms = js(berth_core::js_integer_opt::<u64>("timeoutMs", timeout))?;
            js(inner.metrics(timeout_ms, &cancel).await).map(Into::into)
        })
    }

    /// The container's working directory (where an exec without `cwd` starts). Converts
    /// [`berth_core::Session::working_directory`]: see it for the engine calls and errors.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn working_directory<'e>(
        &self,
        env: &'e Env,
        token: Option<&CancelToken>,
    ) -> napi::Result<PromiseRaw<'e, String>> {
        let inner = self.inner.clone();
        let cancel = token_of(token);
        env.spawn_future(async move { js(inner.working_directory(&cancel).await) })
    }

    /// Sets the container's outbound network access (`mode` `'deny-all'` or `'allow-all'`,
    /// parsed by [`berth_core::NetworkPolicy::parse`]). Converts
    /// [`berth_core::Session::set_network_policy`]: see it for the engine calls and errors.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn set_network_policy<'e>(
        &self,
        env: &'e Env,
        mode: String,
        token: Option<&CancelToken>,
    ) -> napi::Result<PromiseRaw<'e, ()>> {
        let inner = self.inner.clone();
        let cancel = token_of(token);
        env.spawn_future(async move {
            let policy = js(NetworkPolicy::parse(&mode))?;
            js(inner.set_network_policy(policy, &cancel).await)
        })
    }

    /// Removes the container by id when this handle owns it (or `force`). Converts
    /// [`berth_core::Session::remove`]: see it for the engine calls, the outcomes and errors.
    #[napi(ts_return_type = "Promise<BindingRemoveResult>")]
    pub fn remove<'e>(
        &self,
        env: &'e Env,
        options: Option<BindingRemoveOptions>,
        token: Option<&CancelToken>,
    ) -> napi::Result<PromiseRaw<'e, BindingRemoveResult>> {
        let inner = self.inner.clone();
        let cancel = token_of(token);
        let force = options.and_then(|o| o.force).unwrap_or(false);
        env.spawn_future(async move {
            let out = js(inner.remove(force, &cancel).await)?;
            Ok(BindingRemoveResult {
                removed: out.removed,
                reason: out.reason.map(str::to_string),
            })
        })
    }

    /// Starts `argv` and streams its output: pull chunks from the returned process. Options as
    /// for `exec` (`maxBufferBytes` is ignored: nothing is buffered). Resolves once the command
    /// started. Converts [`berth_core::Session::spawn`]: see it for the engine calls and errors
    /// (later ones come through the process, see [`berth_core::ExecProcess::wait`]).
    #[napi(ts_return_type = "Promise<BindingExecProcess>")]
    pub fn spawn<'e>(
        &self,
        env: &'e Env,
        argv: Vec<String>,
        options: Option<BindingExecOptions>,
        token: Option<&CancelToken>,
    ) -> napi::Result<PromiseRaw<'e, BindingExecProcess>> {
        let inner = self.inner.clone();
        let opts = options.map(BindingExecOptions::into_core).transpose();
        let cancel = token_of(token);
        env.spawn_future(async move {
            let opts = js(opts)?.unwrap_or_default();
            let p = js(inner.spawn(&argv, &opts, cancel).await)?;
            Ok(BindingExecProcess::new(p, inner))
        })
    }

    /// Sets who file calls act as: `'user'` (the session's user, the default) or `'engine'`
    /// (the engine's privileges). No engine call. Errors: `E_INVALID_ARGUMENT` (another value).
    #[napi]
    pub fn set_file_access(&self, files: String) -> napi::Result<()> {
        let access = match files.as_str() {
            "user" => FileAccess::User,
            "engine" => FileAccess::Engine,
            _ => {
                return js(Err(berth_core::Error::invalid(
                    "files",
                    "expected 'user' or 'engine'",
                )))
            }
        };
        self.inner.set_file_access(access);
        Ok(())
    }

    /// Reads a whole file; `null` when nothing is at `path`. Converts
    /// [`berth_core::Session::read_file`]: see it for the engine calls and errors. `maxBytes` must
    /// be a whole number that fits a `u64` (`E_INVALID_ARGUMENT` otherwise).
    #[napi(ts_return_type = "Promise<Buffer | null>")]
    pub fn read_file<'e>(
        &self,
        env: &'e Env,
        path: String,
        max_bytes: Option<f64>,
        token: Option<&CancelToken>,
    ) -> napi::Result<PromiseRaw<'e, Option<Buffer>>> {
        let max_bytes = js(max_bytes_of(max_bytes))?;
        let inner = self.inner.clone();
        let cancel = token_of(token);
        env.spawn_future(async move {
            Ok(js(inner.read_file(&path, max_bytes, &cancel).await)?.map(Buffer::from))
        })
    }

    /// Opens a file for reading in 64 KiB chunks; `null` when nothing is at `path`. Converts
    /// [`berth_core::Session::open_file`]: see it for the engine calls and errors (`maxBytes` as
    /// for `readFile`).
    #[napi(ts_return_type = "Promise<BindingFileReader | null>")]
    pub fn open_file<'e>(
        &self,
        env: &'e Env,
        path: String,
        max_bytes: Option<f64>,
        token: Option<&CancelToken>,
    ) -> napi::Result<PromiseRaw<'e, Option<BindingFileReader>>> {
        let max_bytes = js(max_bytes_of(max_bytes))?;
        let inner = self.inner.clone();
        let cancel = token_of(token);
        env.spawn_future(async move {
            Ok(js(inner.open_file(&path, max_bytes, &cancel).await)?.map(BindingFileReader::new))
        })
    }

    /// Writes `data` to `path` atomically. Converts [`berth_core::Session::write_file`]: see it
    /// for the engine calls, the mode rules and errors. `options.mode` must be a whole number that
    /// fits a `u32` (`E_INVALID_ARGUMENT` otherwise).
    #[napi(ts_return_type = "Promise<void>")]
    pub fn write_file<'e>(
        &self,
        env: &'e Env,
        path: String,
        data: Buffer,
        options: Option<BindingWriteFileOptions>,
        token: Option<&CancelToken>,
    ) -> napi::Result<PromiseRaw<'e, ()>> {
        let inner = self.inner.clone();
        let bytes = data.to_vec();
        let mode = js(BindingWriteFileOptions::mode_of(options))?;
        let cancel = token_of(token);
        env.spawn_future(async move {
            js(inner
                .write_file(&path, Data::Bytes(bytes.into()), mode, &cancel)
                .await)
        })
    }

    /// A writer for a file of unknown length: its chunks are spooled to an unlinked host temp
    /// file (never held in memory) and `close()` uploads them as `writeFile` does. Errors:
    /// `E_INVALID_ARGUMENT` (a bad path, or a mode as for `writeFile`), at once.
    #[napi]
    pub fn create_file_writer(
        &self,
        path: String,
        options: Option<BindingWriteFileOptions>,
    ) -> napi::Result<BindingFileWriter> {
        js(normalize_path("path", &path))?;
        let mode = js(BindingWriteFileOptions::mode_of(options))?;
        Ok(BindingFileWriter::new(self.inner.clone(), path, mode))
    }

    /// Commits this container to the local template image `berth-template:<key>`; resolves the
    /// image id. Converts [`berth_core::Session::commit_template`]: see it for the engine calls and
    /// errors.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn commit_template<'e>(
        &self,
        env: &'e Env,
        key: String,
        token: Option<&CancelToken>,
    ) -> napi::Result<PromiseRaw<'e, String>> {
        let inner = self.inner.clone();
        let cancel = token_of(token);
        env.spawn_future(async move { js(inner.commit_template(&key, &cancel).await) })
    }
}

/// A read's `maxBytes` (whole bytes, 0 or more); `E_INVALID_ARGUMENT` otherwise.
fn max_bytes_of(max_bytes: Option<f64>) -> berth_core::Result<Option<u64>> {
    js_integer_opt("maxBytes", max_bytes)
}
