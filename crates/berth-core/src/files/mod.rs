//! Files: read and write files in a session's container, streamed, owned by the container's user.
//!
//! Reads (past the session's file channel) are an exec of `sh` that opens the file once and
//! reads what it checked ([`crate::files::as_user`], as root for a root session), and go
//! through the engine's archive API only where the image has no `sh` or the container is
//! stopped. Writes go through the archive API ([`crate::files::archive`]) and fall back to
//! an exec of `sh` ([`crate::files::fallback`]) where the archive API cannot reach the path (a
//! tmpfs mount: found in the container's `/proc/mounts`) or refuses to write (read-only root
//! filesystem: the engine's refusal, confirmed by inspecting the container). Once per session
//! berth learns the container user's numeric uid and gid and its mount table with one exec of
//! `sh -c 'id -u; id -g; cat /proc/mounts'` (falling back to the inspected `User` and `Tmpfs`).
//!
//! A 404 from the archive API means either a missing path or a missing container: berth
//! inspects the container id to tell them apart (`E_SESSION_NOT_FOUND` for the latter), never
//! the message text.

/// A POSIX `sh` function for the as-the-user scripts: `berth_hidden <path>` succeeds when
/// the path, or the end of its symbolic-link chain (at most 8 links, relative targets taken
/// from the link's directory), cannot be looked at by the user: the nearest ancestor of it
/// that exists is a directory the user may not search. A path whose nearest existing
/// ancestor is searchable (or not a directory) is simply absent; a link into `/root` of a
/// non-root user is hidden, so it reads and writes as denied, like the path itself. Sets
/// `_r` to the chain's end; its variables start with `_`; needs `readlink`.
macro_rules! link_reach_sh {
    () => {
        r#"berth_hidden() {
  _r=$1; _h=0
  while [ -L "$_r" ] && [ $_h -lt 8 ]; do
    _l=$(readlink -- "$_r") || return 0
    case $_l in /*) _r=$_l ;; *) _r=${_r%/*}/$_l ;; esac; _h=$((_h+1))
  done
  _q=${_r%/*}; while [ -n "$_q" ] && [ ! -e "$_q" ]; do _q=${_q%/*}; done
  [ -d "${_q:-/}" ] && [ ! -x "${_q:-/}" ]
}
"#
    };
}
pub(crate) use link_reach_sh;

/// The `sh` function `berth_mnt PATH`: true when `PATH` (a regular file, not a symbolic link)
/// is itself a mount point, as the kernel reports it: its device differs from its directory's
/// (`stat -c %d`), or its physical path (directory resolved with `pwd -P`) is a mount point in
/// `/proc/self/mountinfo` (field 5, with the kernel's octal escapes `\040`, `\011`, `\012`,
/// `\134` applied to the path before comparing). A rename over such a file fails (`EBUSY`), so
/// a write copies its complete temporary file over it in place: the only write that is not
/// atomic. Its variables start with `_`; needs `stat`, `pwd`.
macro_rules! mount_point_sh {
    () => {
        r#"berth_mnt() {
  [ -f "$1" ] && [ ! -L "$1" ] || return 1
  _q=${1%/*}; _q=${_q:-/}
  _a=$(stat -c %d "$1" 2>/dev/null) && _b=$(stat -L -c %d "$_q" 2>/dev/null) || _a=
  if [ -n "$_a" ] && [ -n "$_b" ] && [ "$_a" != "$_b" ]; then return 0; fi
  _x=$(cd -P -- "$_q" 2>/dev/null && pwd -P) || return 1
  _x=${_x%/}/${1##*/}; _e=; _t=$(printf '\t'); _n='
'
  while [ -n "$_x" ]; do
    _r=${_x#?}; _c=${_x%"$_r"}; _x=$_r
    case $_c in
    ' ') _e="$_e\\040" ;;
    "$_t") _e="$_e\\011" ;;
    "$_n") _e="$_e\\012" ;;
    '\') _e="$_e\\134" ;;
    *) _e="$_e$_c" ;;
    esac
  done
  while IFS=' ' read -r _g _h _i _j _y _k; do
    [ "$_y" = "$_e" ] && return 0
  done < /proc/self/mountinfo
  return 1
}
"#
    };
}
pub(crate) use mount_point_sh;

pub(crate) mod archive;
pub(crate) mod as_user;
pub(crate) mod channel;
pub(crate) mod context;
pub(crate) mod fallback;
pub(crate) mod no_space;
pub(crate) mod spool;
pub(crate) mod temp;
pub(crate) mod upload;
pub(crate) mod writer;

use bytes::Bytes;
use futures_util::stream;
use tokio::sync::mpsc;
use tokio_util::io::ReaderStream;
use tokio_util::sync::CancellationToken;

use crate::engine::connection::status;
use crate::engine::container;
use crate::exec::stream::{ExecProcess, Which};
use crate::files::archive::{Head, Owner, Stat};
use crate::files::context::{gone, FsContext, Target};
use crate::files::fallback::Source;
pub use crate::files::spool::Spool;
use crate::files::temp::TempFile;
use crate::model::errors::{Error, Result};

/// Mode of a written file unless the caller gives one.
pub(crate) const DEFAULT_FILE_MODE: u32 = 0o644;
/// How many symbolic links a read follows before `E_INVALID_ARGUMENT`.
pub(crate) const MAX_SYMLINK_HOPS: usize = 8;
const MEMORY_CHUNK_BYTES: usize = 64 * 1024;
pub(crate) use crate::model::spec::{MAX_NAME_BYTES, MAX_PATH_BYTES};

/// Checks and normalises a file path: absolute, no NUL, no `.` or `..` component, not `/`,
/// no trailing `/` (a trailing slash names a directory, never a file), no name over
/// [`MAX_NAME_BYTES`] and at most [`MAX_PATH_BYTES`] in all (Linux's `NAME_MAX` and
/// `PATH_MAX` less its NUL); repeated slashes are dropped. `E_INVALID_ARGUMENT` naming `field`.
pub fn normalize_path(field: &str, path: &str) -> Result<String> {
    if !path.starts_with('/') || path.contains('\0') {
        return Err(Error::invalid(
            field,
            "must be an absolute path without NUL",
        ));
    }
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    if parts.iter().any(|p| *p == "." || *p == "..") {
        return Err(Error::invalid(
            field,
            "must not contain `.` or `..` components",
        ));
    }
    if parts.is_empty() {
        return Err(Error::invalid(field, "must name a file, not `/`"));
    }
    if path.ends_with('/') {
        return Err(Error::invalid(
            field,
            "must name a file: a trailing `/` names a directory",
        ));
    }
    if let Some(long) = parts.iter().find(|p| p.len() > MAX_NAME_BYTES) {
        return Err(Error::invalid(
            field,
            format!(
                "a name of {} bytes is longer than Linux allows ({MAX_NAME_BYTES})",
                long.len()
            ),
        ));
    }
    let normal = format!("/{}", parts.join("/"));
    if normal.len() > MAX_PATH_BYTES {
        return Err(Error::invalid(
            field,
            format!(
                "a path of {} bytes is longer than Linux allows ({MAX_PATH_BYTES})",
                normal.len()
            ),
        ));
    }
    Ok(normal)
}

/// Who file calls act as (`files` on `createSession` / `resumeSession`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FileAccess {
    /// `'user'` (the default): as the session's user; the kernel decides, as for `exec`.
    #[default]
    User,
    /// `'engine'`: with the engine's privileges (root over the whole filesystem), the
    /// behaviour before the `files` option; new files are still owned by the session's user.
    Engine,
}

/// Checks a file `mode`: at most 0o7777, and the setuid, setgid and sticky bits only for a
/// session running as root (`uid` 0) or with [`FileAccess::Engine`]. `E_INVALID_ARGUMENT`.
pub fn check_mode(mode: Option<u32>, uid: u64, access: FileAccess) -> Result<()> {
    let Some(mode) = mode else { return Ok(()) };
    if mode > 0o7777 {
        return Err(Error::invalid("mode", "must be a file mode in 0..0o7777"));
    }
    if mode & 0o7000 != 0 && uid != 0 && access == FileAccess::User {
        return Err(Error::invalid(
            "mode",
            format!(
                "{mode:o} sets setuid, setgid or sticky bits: only a session running as root may (or files: 'engine')"
            ),
        ));
    }
    Ok(())
}

fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

/// Resolves a symlink target found at `path` (relative targets are relative to its directory).
fn resolve_link(path: &str, target: &str) -> Option<String> {
    let joined = if target.starts_with('/') {
        target.to_string()
    } else {
        format!("{}/{target}", parent(path))
    };
    let mut out: Vec<&str> = Vec::new();
    for part in joined.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            p => out.push(p),
        }
    }
    (!out.is_empty()).then(|| format!("/{}", out.join("/")))
}

/// After a 404: `E_SESSION_NOT_FOUND` when the container is gone, else `Ok(())` (the path is).
async fn container_or_gone(t: Target<'_>) -> Result<()> {
    match container::inspect(t.engine, t.id).await? {
        Some(_) => Ok(()),
        None => Err(gone(t)),
    }
}

/// Default cap of a buffered read (`readFile`), in bytes (64 MiB): below V8's largest string
/// and Node's largest `Buffer`, so a read's result can always be made into either.
pub(crate) const DEFAULT_MAX_READ_BYTES: u64 = 64 * 1024 * 1024;

/// An open file being read, chunk by chunk. It never hands out more than the size it checked
/// when it opened the file (`E_ENGINE` past it: the container sent more than it said), nor
/// more than its cap (`E_FILE_TOO_LARGE`); either stops the read in the container.
pub struct FileReader {
    /// Size in bytes of the file that was opened, when known up front (archive reads, and the
    /// exec reads where the container has `stat` and `head`).
    pub size: Option<u64>,
    source: ReadSource,
    path: String,
    max_bytes: Option<u64>,
    received: u64,
    ended: bool,
}

enum ReadSource {
    Archive(mpsc::Receiver<Result<Bytes>>),
    Exec {
        process: ExecProcess,
        path: String,
        first: Option<Bytes>,
    },
}

impl FileReader {
    fn new(size: Option<u64>, source: ReadSource, path: &str, max_bytes: Option<u64>) -> Self {
        FileReader {
            size,
            source,
            path: path.to_string(),
            max_bytes,
            received: 0,
            ended: false,
        }
    }

    /// The next chunk, `Ok(None)` at the end. Errors: `E_FILE_TOO_LARGE` (past the cap),
    /// `E_ENGINE` (also: more or fewer bytes than the size it checked, when the file changed
    /// under the read), `E_ENGINE_UNAVAILABLE`. After an error it ends.
    pub async fn next(&mut self) -> Result<Option<Bytes>> {
        if self.ended {
            return Ok(None);
        }
        let chunk = self.next_chunk().await;
        if let (Ok(None), Some(size)) = (&chunk, self.size) {
            self.ended = true;
            if self.received != size {
                // The file changed under the read (a swap, a truncation): not the file it checked.
                return Err(Error::Engine {
                    operation: "read file".into(),
                    status: None,
                    message: format!(
                        "`{}` changed while it was read: {} of the {size} bytes it had when opened",
                        self.path, self.received
                    ),
                });
            }
        }
        let Ok(Some(bytes)) = &chunk else {
            self.ended = true;
            return chunk;
        };
        self.received += bytes.len() as u64;
        let over = match (self.size, self.max_bytes) {
            (_, Some(max)) if self.received > max => Some(Error::FileTooLarge {
                path: self.path.clone(),
                size: self.size,
                max_bytes: max,
            }),
            (Some(size), _) if self.received > size => Some(Error::Engine {
                operation: "read file".into(),
                status: None,
                message: format!(
                    "the container sent more than the {size} bytes `{}` had when it was opened",
                    self.path
                ),
            }),
            _ => None,
        };
        match over {
            Some(e) => {
                self.stop().await;
                Err(e)
            }
            None => chunk,
        }
    }

    /// Ends the read in the container (kills the exec, drops the download).
    async fn stop(&mut self) {
        self.ended = true;
        match &mut self.source {
            ReadSource::Archive(rx) => rx.close(),
            ReadSource::Exec { process, .. } => {
                // No signal: the kill is bounded by its own per-step timeouts.
                let _ = process.kill(&CancellationToken::new()).await;
            }
        }
    }

    async fn next_chunk(&mut self) -> Result<Option<Bytes>> {
        match &mut self.source {
            ReadSource::Archive(rx) => rx.recv().await.transpose(),
            ReadSource::Exec {
                first: first @ Some(_),
                ..
            } => Ok(first.take()),
            ReadSource::Exec { process, path, .. } => match process.next(Which::Stdout).await? {
                Some(b) => Ok(Some(b)),
                None => fallback::finish_read(process, path).await.map(|_| None),
            },
        }
    }

    /// Reads the rest into one buffer.
    pub async fn read_to_end(&mut self) -> Result<Vec<u8>> {
        let mut all = Vec::with_capacity(self.size.unwrap_or(0).min(1 << 30) as usize);
        while let Some(b) = self.next().await? {
            all.extend_from_slice(&b);
        }
        Ok(all)
    }
}

/// Opens `path` for reading; `Ok(None)` when nothing is there. Symbolic links are followed
/// (at most [`MAX_SYMLINK_HOPS`]). With [`FileAccess::User`] and a session user other than
/// root, the read is an exec as that user ([`crate::files::as_user`]) that opens the file once
/// and sends the size it checked, then that many bytes. `max_bytes` caps what the reader hands
/// out (`None`: only the checked size bounds it): a file whose size is known to be over it is
/// `E_FILE_TOO_LARGE` here, before any byte is read; one that turns out larger while read is
/// `E_FILE_TOO_LARGE` from [`FileReader::next`].
///
/// `GET /containers/{id}/archive?path=` (or an exec). Errors: `E_INVALID_ARGUMENT`
/// (a bad path, a directory, a special file, a symlink loop), `E_PERMISSION_DENIED` (the
/// session's user may not read it), `E_FILE_TOO_LARGE`, `E_SESSION_NOT_FOUND` (the container
/// is gone), `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn open(
    t: Target<'_>,
    ctx: &FsContext,
    path: &str,
    access: FileAccess,
    max_bytes: Option<u64>,
) -> Result<Option<FileReader>> {
    let mut path = normalize_path("path", path)?;
    if ctx.as_user(access)? {
        return exec_read(t, &path, &ctx.user(), None, max_bytes).await;
    }
    if ctx.shell {
        // As root too, the read opens the file once and reads what it checked (the archive
        // endpoint stats the path, then opens it again: a sandbox that swaps the file for a
        // link to `/dev/zero` in between gets NUL bytes of the old size read). A stopped
        // container (409: nothing in it runs, so nothing can swap) is read through the archive.
        match exec_read(t, &path, "0:0", Some("0"), max_bytes).await {
            Err(Error::Engine {
                status: Some(409), ..
            }) => {}
            Err(
                e @ Error::Engine {
                    status: Some(404), ..
                },
            ) => {
                container_or_gone(t).await?;
                return Err(e);
            }
            other => return other,
        }
    }
    for _ in 0..=MAX_SYMLINK_HOPS {
        if ctx.needs_exec(&path) {
            // A tmpfs the archive API cannot see: the same read, as root.
            return exec_read(t, &path, "0:0", Some("0"), max_bytes).await;
        }
        let Some(download) = archive::download(t.engine, t.id, &path).await? else {
            container_or_gone(t).await?;
            return Ok(None);
        };
        match download.head {
            Head::File { size } => {
                // Over the cap: the download is dropped here, before its body is read.
                too_large(&path, size, max_bytes)?;
                return Ok(Some(FileReader::new(
                    Some(size),
                    ReadSource::Archive(download.chunks),
                    &path,
                    max_bytes,
                )));
            }
            Head::Dir => return Err(Error::invalid("path", format!("`{path}` is a directory"))),
            // The engine could not archive what is there: the exec read (as root) says what it is.
            Head::Empty => return exec_read(t, &path, "0:0", Some("0"), max_bytes).await,
            Head::Other => {
                return Err(Error::invalid(
                    "path",
                    format!("`{path}` is not a regular file"),
                ))
            }
            Head::Symlink(target) => {
                path = resolve_link(&path, &target).ok_or_else(|| {
                    Error::invalid("path", format!("`{path}` links to `{target}`"))
                })?;
            }
        }
    }
    Err(Error::invalid(
        "path",
        format!("more than {MAX_SYMLINK_HOPS} symbolic links"),
    ))
}

/// `E_FILE_TOO_LARGE` when `size` is over `max_bytes`.
fn too_large(path: &str, size: u64, max_bytes: Option<u64>) -> Result<()> {
    match max_bytes {
        Some(max) if size > max => Err(Error::FileTooLarge {
            path: path.to_string(),
            size: Some(size),
            max_bytes: max,
        }),
        _ => Ok(()),
    }
}

/// A read through an exec ([`as_user::open`]) as the session's user (`run_as` `None`) or as
/// `run_as`; a checked size over `max_bytes` stops it at once (`E_FILE_TOO_LARGE`).
async fn exec_read(
    t: Target<'_>,
    path: &str,
    user: &str,
    run_as: Option<&str>,
    max_bytes: Option<u64>,
) -> Result<Option<FileReader>> {
    let Some(r) = as_user::open(t.engine, t.id, t.name, path, user, run_as).await? else {
        return Ok(None);
    };
    if let Some(size) = r.size {
        if let Err(e) = too_large(path, size, max_bytes) {
            let _ = r.process.kill(&CancellationToken::new()).await;
            return Err(e);
        }
    }
    let source = ReadSource::Exec {
        process: r.process,
        path: path.to_string(),
        first: r.first,
    };
    Ok(Some(FileReader::new(r.size, source, path, max_bytes)))
}

/// What to write.
pub enum Data {
    /// Bytes in memory.
    Bytes(Bytes),
    /// A complete spool.
    Spool(Spool),
}

impl Data {
    /// Size in bytes.
    pub fn len(&self) -> u64 {
        match self {
            Data::Bytes(b) => b.len() as u64,
            Data::Spool(s) => s.len(),
        }
    }

    /// Whether there are no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Writes `data` to `path`, atomically: the data goes to a temporary name in the same
/// directory (`.berth-tmp-<16 hex>`), which is renamed over `path` once complete, so an abort
/// or a failure leaves the old file or the new one, never a mix, and no temporary file (it is
/// removed by name). A new file is owned by the session's user with `mode` (default 0644);
/// an existing file keeps its owner, and its mode unless `mode` is given. Missing parent
/// directories are created (0755, owned by the user); a symbolic link at `path` is written
/// through. A file that is itself a mount point (a single-file bind mount such as `/etc/hosts`)
/// cannot be renamed over: each path copies the complete temporary file over it in place
/// (`berth_mnt`, [`mount_point_sh`]), the one write that is not atomic.
///
/// With [`FileAccess::User`] and a session user other than root, an exec as that user does
/// it all ([`crate::files::as_user`]); otherwise `HEAD /containers/{id}/archive?path=` for the
/// path and each missing parent, `PUT /containers/{id}/archive?path=/` of the temporary file,
/// and one exec as root that renames it (images without `sh`: the upload goes to `path`
/// itself, not atomic), or the exec fallback. Every path checks what it wrote before the
/// rename: a full filesystem (a tool or the engine said ENOSPC, or the temporary file is short
/// of `size`) is `E_NO_SPACE`, the temporary file removed and the old file intact
/// ([`no_space`]). Errors: `E_INVALID_ARGUMENT` (a bad path or mode, a directory there, a
/// parent that is not a directory), `E_PERMISSION_DENIED`, `E_NO_SPACE`,
/// `E_SESSION_NOT_FOUND`, `E_ABORTED`, `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn write(
    t: Target<'_>,
    ctx: &FsContext,
    path: &str,
    mut data: Data,
    mode: Option<u32>,
    access: FileAccess,
    cancel: &CancellationToken,
) -> Result<()> {
    let mut path = normalize_path("path", path)?;
    check_mode(mode, ctx.uid, access)?;
    let size = data.len();
    if ctx.as_user(access)? {
        let source = match data {
            Data::Bytes(b) => as_user::Source::Bytes(b),
            Data::Spool(mut s) => as_user::Source::File(s.reader().await?),
        };
        let user = ctx.user();
        return as_user::write(
            t.engine, t.id, t.name, &path, source, size, mode, &user, cancel,
        )
        .await;
    }
    if !ctx.needs_exec(&path) {
        let mut stat = archive::stat(t.engine, t.id, &path).await?;
        if let Stat::Symlink(target) = &stat {
            if let Some(resolved) = resolve_link(&path, target) {
                path = resolved;
                // What the link points at is what gets replaced: looked at too.
                if !ctx.needs_exec(&path) {
                    stat = archive::stat(t.engine, t.id, &path).await?;
                }
            }
        }
        match stat {
            Stat::Dir => return Err(Error::invalid("path", format!("`{path}` is a directory"))),
            // A device, pipe or socket is never replaced by a regular file (as the user's
            // path refuses it too).
            Stat::Special => {
                return Err(Error::invalid(
                    "path",
                    format!("`{path}` is not a regular file"),
                ))
            }
            _ => {}
        }
    }
    if !ctx.needs_exec(&path) {
        let dirs = missing_parents(t, &path).await?;
        let owner = Owner {
            uid: ctx.uid,
            gid: ctx.gid,
        };
        // Removed on every way out but a rename into place: an error, or the caller's abort or
        // deadline dropping this future (the upload task also removes it once the engine has
        // answered an upload nobody waits for).
        let temp = ctx.shell.then(|| {
            let tp = as_user::temp_path(&path, &as_user::temp_name());
            TempFile::new(t.engine, t.id, t.name, tp, Some("0"))
        });
        let upload_path = temp
            .as_ref()
            .map_or_else(|| path.clone(), |tp| tp.path().to_string());
        let file_mode = mode.unwrap_or(DEFAULT_FILE_MODE);
        let prefix = archive::tar_prefix(&dirs, &upload_path, size, file_mode, owner)?;
        let temp_name = temp.as_ref().map(|tp| tp.path().to_string());
        let upload = match &mut data {
            Data::Bytes(b) => {
                let chunks: Vec<std::io::Result<Bytes>> = (0..b.len())
                    .step_by(MEMORY_CHUNK_BYTES)
                    .map(|i| Ok(b.slice(i..(i + MEMORY_CHUNK_BYTES).min(b.len()))))
                    .collect();
                let body = stream::iter(chunks);
                upload::upload(t, prefix, size, body, temp_name).await?
            }
            Data::Spool(s) => {
                let body = ReaderStream::new(s.reader().await?);
                upload::upload(t, prefix, size, body, temp_name).await?
            }
        };
        match upload {
            Ok(()) => {
                return match temp {
                    Some(tp) => {
                        fallback::rename(t.engine, t.id, t.name, tp, &path, size, mode.is_none())
                            .await
                    }
                    None => Ok(()),
                }
            }
            // The engine's extraction hit a full filesystem: its answer says so.
            Err(e) if no_space::says_no_space(&e.to_string()) => {
                return Err(no_space::error(&path, size, e.to_string()));
            }
            Err(e) if status(&e) == Some(404) => {
                container_or_gone(t).await?;
                return Err(t.engine.error("write file", e));
            }
            Err(e) if status(&e).is_some() => {
                drop(temp);
                // A refusal: fall back only when the root filesystem is read-only.
                let c = container::inspect(t.engine, t.id)
                    .await?
                    .ok_or_else(|| gone(t))?;
                let read_only = c
                    .host_config
                    .as_ref()
                    .and_then(|h| h.readonly_rootfs)
                    .unwrap_or(false);
                if !read_only {
                    return Err(t.engine.error("write file", e));
                }
            }
            Err(e) => {
                return Err(t.engine.error("write file", e));
            }
        }
    }
    let source = match data {
        Data::Bytes(b) => Source::Bytes(b),
        Data::Spool(mut s) => Source::File(s.reader().await?),
    };
    let owner = format!("{}:{}", ctx.uid, ctx.gid);
    fallback::write(t, &path, source, size, &owner, mode, cancel).await
}

/// The missing ancestors of `path`, outermost first; stops at the first that exists.
async fn missing_parents(t: Target<'_>, path: &str) -> Result<Vec<String>> {
    let mut dirs = Vec::new();
    let mut cur = parent(path);
    while cur != "/" {
        match archive::stat(t.engine, t.id, cur).await? {
            Stat::Absent => dirs.push(cur.to_string()),
            Stat::Dir | Stat::Symlink(_) => break,
            Stat::Other | Stat::Special => {
                return Err(Error::invalid(
                    "path",
                    format!("parent `{cur}` is not a directory"),
                ))
            }
        }
        cur = parent(cur);
    }
    dirs.reverse();
    Ok(dirs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_checked_and_normalised() {
        assert_eq!(normalize_path("p", "/tmp//a b/ü").unwrap(), "/tmp/a b/ü");
        let longest_name = format!("/tmp/{}", "n".repeat(255));
        assert_eq!(normalize_path("p", &longest_name).unwrap(), longest_name);
        let longest_path = format!("/{}", "d/".repeat(2046)) + "xy";
        assert_eq!(longest_path.len(), 4095);
        assert_eq!(normalize_path("p", &longest_path).unwrap(), longest_path);
        for bad in [
            "tmp/x",
            "/",
            "/a/../b",
            "/a/./b",
            "/a\0b",
            "",
            "/work/newdir/",
            "/etc/passwd//",
            &format!("/tmp/{}", "n".repeat(256)),
            &format!("/{}/x", "d/".repeat(2047)),
        ] {
            assert_eq!(
                normalize_path("p", bad).unwrap_err().code(),
                "E_INVALID_ARGUMENT",
                "{bad:?}"
            );
        }
    }

    #[test]
    fn special_mode_bits_need_root_or_engine_access() {
        assert!(check_mode(None, 1000, FileAccess::User).is_ok());
        assert!(check_mode(Some(0o755), 1000, FileAccess::User).is_ok());
        for bits in [0o4755, 0o2755, 0o1777] {
            let e = check_mode(Some(bits), 1000, FileAccess::User).unwrap_err();
            assert_eq!(e.code(), "E_INVALID_ARGUMENT", "{bits:o}");
            assert!(check_mode(Some(bits), 0, FileAccess::User).is_ok());
            assert!(check_mode(Some(bits), 1000, FileAccess::Engine).is_ok());
        }
        assert!(check_mode(Some(0o10000), 0, FileAccess::Engine).is_err());
    }

    #[test]
    fn links_resolve_relative_to_their_directory() {
        assert_eq!(resolve_link("/a/b/l", "c").as_deref(), Some("/a/b/c"));
        assert_eq!(resolve_link("/a/b/l", "../c").as_deref(), Some("/a/c"));
        assert_eq!(resolve_link("/a/b/l", "/etc/x").as_deref(), Some("/etc/x"));
        assert_eq!(resolve_link("/l", ".."), None);
    }
}
