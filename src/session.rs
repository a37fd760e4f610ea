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
use berth_core::whole_number;
use berth_core::NetworkPolicy;
use berth_core::Session;
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

    /// Moves the session's deadline to now + `ms` milliseconds (whole, 0 to 30 days) and
    /// resolves the new deadline (ms since the epoch); owner or inheritor only.
    ///
    /// Engine API: `GET /containers/{id}/json`, `GET /volumes?filters=...`, an exec as root
    /// rewriting the keep-alive's deadline file (berth's deadline keep-alive, running),
    /// `POST /volumes/create` (the deadline record). Errors: `E_INVALID_ARGUMENT`,
    /// `E_SESSION_BUSY` (`reason: 'not-owner'`: an adopted handle, no engine call),
    /// `E_SESSION_NOT_FOUND` (removed; `details.reason: 'expired'` when it had expired),
    /// `E_ENGINE`, `E_ENGINE_UNAVAILABLE`, `E_EXEC_TIMEOUT`, `E_ABORTED` (`token`).
    #[napi(ts_return_type = "Promise<number>")]
    pub fn set_timeout<'e>(
        &self,
        env: &'e Env,
        ms: f64,
        token: Option<&CancelToken>,
    ) -> napi::Result<PromiseRaw<'e, f64>> {
        let inner = self.inner.clone();
        let cancel = token_of(token);
        let ms = js(whole_number(
            "ms",
            ms,
            0,
            berth_core::MAX_RETENTION_MS as i64,
        ))?;
        env.spawn_future(async move { Ok(js(inner.set_timeout(ms as u64, &cancel).await)? as f64) })
    }

    /// Runs `argv` (never a shell string) and buffers stdout and stderr as bytes.
    ///
    /// Engine API: `POST /containers/{id}/exec`, `POST /exec/{id}/start`, `GET /exec/{id}/json`.
    /// Errors: `E_INVALID_ARGUMENT`, `E_EXEC_TIMEOUT`, `E_ABORTED`, `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
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
    ///
    /// Engine API and errors: those of `exec`.
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

    /// `"127.0.0.1:49153"` for a published container port (TCP).
    ///
    /// Engine API: `GET /containers/{id}/json`. Errors: `E_INVALID_ARGUMENT` (not 1..65535, or not
    /// published), `E_SESSION_NOT_FOUND`, `E_ENGINE`.
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
            let port = js(whole_number("port", port, 1, 65535))?;
            js(inner.host_address(port, &cancel).await)
        })
    }

    /// Stops the container by id when this handle owns it (or `force`).
    ///
    /// Engine API: `POST /containers/{id}/stop`. Resolves `{ stopped: false, reason: 'not-owner' }`
    /// with no engine call for an adopted handle. Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
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
            let timeout_ms = js(timeout
                .map(|t| whole_number("timeoutMs", t, 0, i64::from(i32::MAX)).map(|t| t as u64))
                .transpose())?;
            let out = js(inner.stop(force, timeout_ms, &cancel).await)?;
            Ok(BindingStopResult {
                stopped: out.stopped,
                reason: out.reason.map(str::to_string),
            })
        })
    }

    /// Drops this adopted handle's holder record; the container is never touched.
    ///
    /// Engine API: `DELETE /volumes/{this handle's holder record}`. Resolves
    /// `{ released: false, reason: 'owner' }` for an owner (its duty is to remove) and
    /// `'already-released'` without an engine call later. Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
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

    /// One usage sample of the container: CPU share since this handle's previous sample
    /// (percent of one CPU), memory and its limit (bytes), processes and the pids limit,
    /// network and block I/O bytes; `running: false` and no figures when berth stopped it.
    ///
    /// Engine API: `GET /containers/{id}/stats?stream=false&one-shot=true` (and once per
    /// handle `GET /containers/{id}/json`). Errors: `E_INVALID_ARGUMENT` (`timeoutMs`),
    /// `E_SESSION_DEAD`, `E_SESSION_NOT_FOUND`, `E_ABORTED`, `E_ENGINE_UNAVAILABLE`, `E_ENGINE`.
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
            let timeout_ms = js(timeout
                .map(|t| whole_number("timeoutMs", t, 1, i64::from(i32::MAX)).map(|t| t as u64))
                .transpose())?;
            js(inner.metrics(timeout_ms, &cancel).await).map(Into::into)
        })
    }

    /// The container's working directory (where an exec without `cwd` starts): the create's
    /// `workDir`, else the image's, else `/`.
    ///
    /// Engine API: `GET /containers/{id}/json` (`Config.WorkingDir`). Errors:
    /// `E_SESSION_NOT_FOUND`, `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
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

    /// Sets the container's outbound network access: `mode` `'deny-all'` detaches it from
    /// every network (loopback only), `'allow-all'` attaches it to the network it was created
    /// on. Idempotent.
    ///
    /// Engine API: `GET /containers/{id}/json`, `POST /networks/{name}/disconnect`,
    /// `POST /networks/{name}/connect`. Errors: `E_INVALID_ARGUMENT` (`'custom'` or another
    /// mode; a container created with networkMode `none`, `host` or another container's
    /// network), `E_SESSION_BUSY` (`reason: 'not-owner'`: an adopted handle, no engine
    /// call), `E_SESSION_NOT_FOUND`, `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
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

    /// Removes the container by id when this handle owns it (or `force`).
    ///
    /// Engine API: `DELETE /containers/{id}?force=true&v=true`. Concurrent calls make one engine
    /// call; later calls resolve `already-removed`. A failure rejects and keeps the duty.
    /// Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
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
    /// for `exec` (`maxBufferBytes` is ignored: nothing is buffered). Resolves once the exec
    /// started.
    ///
    /// Engine API: `POST /containers/{id}/exec`, `POST /exec/{id}/start`, `GET /exec/{id}/json`.
    /// Errors: `E_INVALID_ARGUMENT`, `E_ENGINE`, `E_ENGINE_UNAVAILABLE`; later, through the
    /// process, `E_EXEC_TIMEOUT` and `E_ABORTED`.
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
            js(inner.spawn(&argv, &opts, cancel).await).map(BindingExecProcess::new)
        })
    }

    /// Sets who file calls act as: `'user'` (the session's user, the default) or `'engine'`
    /// (the engine's privileges). No engine call. Errors: `E_INVALID_ARGUMENT`.
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

    /// Reads a whole file; `null` when nothing is at `path`. Symbolic links are followed. Read
    /// as the session's user unless `setFileAccess('engine')`.
    ///
    /// Engine API: files up to 1 MiB over the session's file channel (one exec of `sh` as the
    /// user, opened on the first file call); otherwise, for a non-root user, an exec of `sh`
    /// (`cat`) as the user; for root or `'engine'`, `GET /containers/{id}/archive?path=` (exec of
    /// `cat` on tmpfs mounts). `maxBytes` caps it (bytes, whole, 0 or more; default 64 MiB):
    /// a larger file is `E_FILE_TOO_LARGE`. Errors: `Session::read_file` in the core.
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

    /// Opens a file for reading in 64 KiB chunks; `null` when nothing is at `path`.
    /// `maxBytes` (bytes; none by default) caps what the stream delivers
    /// (`E_FILE_TOO_LARGE`). Engine API and errors as `readFile`.
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

    /// Writes `data` to `path` atomically (a temporary name beside it, renamed over it), as
    /// the session's user unless `setFileAccess('engine')`: a new file is the user's with
    /// `options.mode` (default 0o644), an existing one keeps its owner and (without `mode`) its
    /// mode; missing parent directories are created (0755, the user's).
    ///
    /// Engine API: up to 16 KiB over the session's file channel; for a non-root user an exec of
    /// `sh` as the user; for root or `'engine'`, `HEAD /containers/{id}/archive?path=`,
    /// `PUT /containers/{id}/archive?path=/` and an exec of `sh` (the rename); an exec of `sh`
    /// on tmpfs mounts and read-only root filesystems. Errors: `Session::write_file` in the core.
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
        let mode = options.and_then(|o| o.mode);
        let cancel = token_of(token);
        env.spawn_future(async move {
            js(inner
                .write_file(&path, Data::Bytes(bytes.into()), mode, &cancel)
                .await)
        })
    }

    /// A writer for a file of unknown length: its chunks are spooled to an unlinked host temp
    /// file (never held in memory) and `close()` uploads them as `writeFile` does.
    /// Errors: `E_INVALID_ARGUMENT` (bad path).
    #[napi]
    pub fn create_file_writer(
        &self,
        path: String,
        options: Option<BindingWriteFileOptions>,
    ) -> napi::Result<BindingFileWriter> {
        js(normalize_path("path", &path))?;
        Ok(BindingFileWriter::new(
            self.inner.clone(),
            path,
            options.and_then(|o| o.mode),
        ))
    }

    /// Commits this container to the local template image `berth-template:<key>` (paused
    /// meanwhile). The image keeps the container's labels and env. Resolves the image id.
    ///
    /// Engine API: `POST /commit`. Errors: `E_INVALID_ARGUMENT` (key), `E_ENGINE`,
    /// `E_ENGINE_UNAVAILABLE`.
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
    max_bytes
        .map(|m| whole_number("maxBytes", m, 0, i64::MAX).map(|m| m as u64))
        .transpose()
}
