//! BindingFileReader and BindingFileWriter: streaming file reads and spooled writes.

use std::sync::Arc;

use napi::bindgen_prelude::{Buffer, PromiseRaw};
use napi::Env;
use napi_derive::napi;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use super::cancel::{token_of, CancelToken};
use super::errors::js;
use berth_core::Session;
use berth_core::{FileReader, FileWriter};

/// A file being read from a container, chunk by chunk (64 KiB), from `BindingSession.openFile`.
#[napi]
pub struct BindingFileReader {
    inner: Arc<Mutex<Option<FileReader>>>,
    size: Option<u64>,
    cancelled: CancellationToken,
}

impl BindingFileReader {
    /// Wraps a core reader.
    pub fn new(r: FileReader) -> Self {
        BindingFileReader {
            size: r.size,
            inner: Arc::new(Mutex::new(Some(r))),
            cancelled: CancellationToken::new(),
        }
    }
}

#[napi]
impl BindingFileReader {
    /// Size in bytes when known up front (null on the exec fallback).
    #[napi(getter)]
    pub fn size(&self) -> Option<f64> {
        self.size.map(|s| s as f64)
    }

    /// The next chunk, or `null` at the end (and after `cancel()`).
    /// Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
    #[napi(ts_return_type = "Promise<Buffer | null>")]
    pub fn read<'e>(&self, env: &'e Env) -> napi::Result<PromiseRaw<'e, Option<Buffer>>> {
        let inner = self.inner.clone();
        let cancelled = self.cancelled.clone();
        env.spawn_future(async move {
            let mut guard = inner.lock().await;
            let Some(reader) = guard.as_mut() else {
                return Ok(None);
            };
            let next = tokio::select! {
                n = reader.next() => n,
                _ = cancelled.cancelled() => Ok(None),
            };
            if !matches!(next, Ok(Some(_))) || cancelled.is_cancelled() {
                // The end, an error or a cancel: the download is dropped now.
                *guard = None;
            }
            Ok(js(next)?.map(|b| Buffer::from(b.to_vec())))
        })
    }

    /// Stops reading and drops the download now, closing its engine connection. Idempotent.
    ///
    /// This matters: while a download is open, Docker holds the container's lock, and other
    /// calls on that container (archive, inspect, exec) wait for it.
    #[napi]
    pub fn cancel(&self) {
        self.cancelled.cancel();
        // A read in progress holds the lock; it sees the token and drops the reader itself.
        if let Ok(mut guard) = self.inner.try_lock() {
            guard.take();
        }
    }
}

/// A write of unknown length to a container file: chunks are spooled to an unlinked host
/// temp file and uploaded by `close()`. From `BindingSession.createFileWriter`. The state
/// machine is the core's `FileWriter`.
#[napi]
pub struct BindingFileWriter {
    session: Arc<Session>,
    path: String,
    mode: Option<u32>,
    writer: Arc<FileWriter>,
}

impl BindingFileWriter {
    /// A writer for `path` in `session`'s container.
    pub fn new(session: Arc<Session>, path: String, mode: Option<u32>) -> Self {
        BindingFileWriter {
            session,
            path,
            mode,
            writer: Arc::new(FileWriter::new()),
        }
    }
}

#[napi]
impl BindingFileWriter {
    /// Appends `chunk` to the spool. Errors: `E_INVALID_ARGUMENT` after close/abort, `E_ENGINE` (host I/O).
    #[napi(ts_return_type = "Promise<void>")]
    pub fn write<'e>(&self, env: &'e Env, chunk: Buffer) -> napi::Result<PromiseRaw<'e, ()>> {
        let bytes = chunk.to_vec();
        let writer = self.writer.clone();
        env.spawn_future(async move { js(writer.write(&bytes).await) })
    }

    /// Uploads what was written (see `BindingSession.writeFile`) and drops the spool.
    /// Errors: as `writeFile`, and `E_INVALID_ARGUMENT` when already closed or aborted.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'e>(
        &self,
        env: &'e Env,
        token: Option<&CancelToken>,
    ) -> napi::Result<PromiseRaw<'e, ()>> {
        let writer = self.writer.clone();
        let session = self.session.clone();
        let (path, mode) = (self.path.clone(), self.mode);
        let cancel = token_of(token);
        env.spawn_future(async move {
            let data = js(writer.finish().await)?;
            js(session.write_file(&path, data, mode, &cancel).await)
        })
    }

    /// Drops the spool without writing anything. Idempotent.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn abort<'e>(&self, env: &'e Env) -> napi::Result<PromiseRaw<'e, ()>> {
        let writer = self.writer.clone();
        env.spawn_future(async move {
            writer.abort().await;
            Ok(())
        })
    }
}
