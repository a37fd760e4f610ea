//! The temporary file of an atomic write, removed unless the write put it in place.
//!
//! A write's future can end anywhere: an error, or the caller's abort or deadline, which drops
//! the whole call's future at its next await (`Engine::step` settles a call at once). A removal
//! written as an error branch runs only on the first; a [`TempFile`] runs it on both, from its
//! `Drop`: an abort that lands after the archive upload was answered and before the rename's
//! exec started used to leave `.berth-tmp-*` beside the file for good.

use crate::engine::connection::Engine;
use crate::files::as_user;

/// A temporary file `path` in container `id` (named `name`, for messages) that a write may
/// have made. Dropped while armed, it is removed in the background as `user`
/// ([`as_user::cleanup`]: an exec of `rm -f`, tried again on failure, bounded by per-request
/// timeouts only). [`TempFile::placed`] disarms it once the write's own script renamed or
/// removed it.
pub(crate) struct TempFile {
    engine: Engine,
    id: String,
    name: String,
    path: String,
    user: Option<String>,
    armed: bool,
}

impl TempFile {
    /// A temporary file at `path`, removed as `user` (`None`: the container's user) unless
    /// [`TempFile::placed`] is called.
    pub(crate) fn new(
        engine: &Engine,
        id: &str,
        name: &str,
        path: String,
        user: Option<&str>,
    ) -> Self {
        TempFile {
            engine: engine.detached(),
            id: id.to_string(),
            name: name.to_string(),
            path,
            user: user.map(str::to_string),
            armed: true,
        }
    }

    /// Its path in the container.
    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    /// The write is done with it (renamed into place, or removed by the script that made it):
    /// nothing to remove.
    pub(crate) fn placed(mut self) {
        self.armed = false;
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        // Outside a runtime (the process is shutting down) there is nothing to run it on.
        if self.armed && tokio::runtime::Handle::try_current().is_ok() {
            as_user::cleanup(
                &self.engine,
                &self.id,
                &self.name,
                std::mem::take(&mut self.path),
                self.user.as_deref(),
            );
        }
    }
}
