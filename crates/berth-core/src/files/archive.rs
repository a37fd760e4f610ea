//! Archive: one file in or out of a container through the engine's archive API, streamed as tar.
//!
//! Engine calls: `GET /containers/{id}/archive?path=` (download), `HEAD /containers/{id}/archive?path=`
//! (stat), `PUT /containers/{id}/archive?path=/&noOverwriteDirNonDir=true` (upload, extracted at
//! `/` with the full relative path). Downloads are parsed with the `tar` crate on a blocking
//! thread and handed out in [`READ_CHUNK_BYTES`] chunks through a bounded channel, so a large
//! file is never held in memory; uploads are a header prefix, the data stream, and the tar
//! trailer.

use std::io::Read;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use futures_util::{stream, Stream, StreamExt, TryStreamExt};
use tokio::sync::{mpsc, oneshot};
use tokio_util::io::{StreamReader, SyncIoBridge};

use crate::engine::bounded::upload_timeout;
use crate::engine::connection::{status, Engine};
use crate::model::errors::{Error, Result};

/// Size of the chunks a download is handed out in, in bytes (64 KiB).
pub(crate) const READ_CHUNK_BYTES: usize = 64 * 1024;
/// Capacity of a download's channel, in chunks.
pub(crate) const READ_CHANNEL_CHUNKS: usize = 4;
const TAR_BLOCK_BYTES: usize = 512;
const TAR_TRAILER_BYTES: usize = 2 * TAR_BLOCK_BYTES;
/// Go's `os.ModeDir` and `os.ModeSymlink` bits in the engine's path stat.
const GO_MODE_DIR: u32 = 1 << 31;
const GO_MODE_SYMLINK: u32 = 1 << 27;
/// Go's `ModeDevice | ModeNamedPipe | ModeSocket | ModeCharDevice | ModeIrregular`: not a
/// regular file.
const GO_MODE_SPECIAL: u32 = (1 << 26) | (1 << 25) | (1 << 24) | (1 << 21) | (1 << 19);

/// What the first tar entry of a download is.
#[derive(Debug)]
pub(crate) enum Head {
    /// A regular file of `size` bytes; its chunks follow on the channel.
    File {
        /// Size in bytes.
        size: u64,
    },
    /// A directory.
    Dir,
    /// A symbolic link to this target (as stored: relative or absolute).
    Symlink(String),
    /// Another kind of entry (device, fifo, ...).
    Other,
    /// No entry at all: Podman answers so for a link into a mount it cannot archive (a link
    /// to `/dev/zero`); the caller reads the path through an exec instead.
    Empty,
}

/// A download in progress: its first entry, and its data chunks when it is a file.
pub(crate) struct Download {
    /// What the path is.
    pub head: Head,
    /// The file's bytes, in order; an `Err` ends it.
    pub chunks: mpsc::Receiver<Result<Bytes>>,
}

/// `GET /containers/{id}/archive?path=<path>` and the first entry of the tar it returns.
///
/// `Ok(None)` on 404 (the path, or the container, is absent: the caller tells which by
/// inspecting the container). Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn download(engine: &Engine, id: &str, path: &str) -> Result<Option<Download>> {
    let mut body = Box::pin(crate::engine::archive::get(engine, id, path));
    let first = match body.next().await {
        Some(Err(e)) if status(&e) == Some(404) => return Ok(None),
        Some(Err(e)) => return Err(engine.error("read file", e)),
        Some(Ok(b)) => b,
        None => Bytes::new(),
    };
    let whole = stream::iter([Ok(first)])
        .chain(body)
        .map_err(std::io::Error::other);
    let bridge = SyncIoBridge::new(StreamReader::new(whole));
    let (head_tx, head_rx) = oneshot::channel();
    let (tx, rx) = mpsc::channel(READ_CHANNEL_CHUNKS);
    tokio::task::spawn_blocking(move || read_first_entry(bridge, head_tx, tx));
    let head = head_rx
        .await
        .map_err(|_| broken("the tar reader stopped"))??;
    Ok(Some(Download { head, chunks: rx }))
}

fn broken(message: impl Into<String>) -> Error {
    Error::Engine {
        operation: "read file".into(),
        status: None,
        message: message.into(),
    }
}

/// Runs on a blocking thread: parses the first entry and sends its data in chunks until the
/// receiver goes away (which drops the engine connection).
fn read_first_entry(
    bridge: impl Read,
    head_tx: oneshot::Sender<Result<Head>>,
    tx: mpsc::Sender<Result<Bytes>>,
) {
    let mut archive = tar::Archive::new(bridge);
    let mut entries = match archive.entries() {
        Ok(e) => e,
        Err(e) => {
            let _ = head_tx.send(Err(broken(format!("bad tar from the engine: {e}"))));
            return;
        }
    };
    let mut entry = match entries.next() {
        Some(Ok(entry)) => entry,
        Some(Err(e)) => {
            let _ = head_tx.send(Err(broken(format!("bad tar from the engine: {e}"))));
            return;
        }
        None => {
            let _ = head_tx.send(Ok(Head::Empty));
            return;
        }
    };
    let kind = entry.header().entry_type();
    let head = if kind.is_file() || kind.is_contiguous() {
        Head::File { size: entry.size() }
    } else if kind.is_dir() {
        Head::Dir
    } else if kind.is_symlink() {
        match entry.link_name() {
            Ok(Some(l)) => Head::Symlink(l.to_string_lossy().into_owned()),
            _ => Head::Other,
        }
    } else {
        Head::Other
    };
    let is_file = matches!(head, Head::File { .. });
    if head_tx.send(Ok(head)).is_err() || !is_file {
        return;
    }
    let mut buf = vec![0u8; READ_CHUNK_BYTES];
    loop {
        match entry.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                if tx
                    .blocking_send(Ok(Bytes::copy_from_slice(&buf[..n])))
                    .is_err()
                {
                    return;
                }
            }
            Err(e) => {
                let _ = tx.blocking_send(Err(broken(format!("reading the file failed: {e}"))));
                return;
            }
        }
    }
}

/// What a path is, from `HEAD /containers/{id}/archive?path=`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stat {
    /// Nothing there (or no such container: the engine answers 404 for both).
    Absent,
    /// A directory.
    Dir,
    /// A symbolic link; the engine's resolved target, when it gave one.
    Symlink(String),
    /// A device, a named pipe, a socket or another file that is not regular.
    Special,
    /// Anything else (a regular file).
    Other,
}

/// `HEAD /containers/{id}/archive?path=<path>`. Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn stat(engine: &Engine, id: &str, path: &str) -> Result<Stat> {
    Ok(stat_with_mode(engine, id, path).await?.0)
}

/// [`stat`] and the path's permission bits (`0o7777`; 0 when absent).
/// Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn stat_with_mode(engine: &Engine, id: &str, path: &str) -> Result<(Stat, u32)> {
    let stat = match crate::engine::archive::head(engine, id, path).await? {
        Ok(s) if s.file_mode & GO_MODE_SYMLINK != 0 => (Stat::Symlink(s.link_target), 0),
        Ok(s) if s.file_mode & GO_MODE_DIR != 0 => (Stat::Dir, go_permissions(s.file_mode)),
        Ok(s) if s.file_mode & GO_MODE_SPECIAL != 0 => (Stat::Special, go_permissions(s.file_mode)),
        Ok(s) => (Stat::Other, go_permissions(s.file_mode)),
        Err(e) if status(&e) == Some(404) => (Stat::Absent, 0),
        Err(e) => return Err(engine.error("stat path", e)),
    };
    Ok(stat)
}

/// The Unix permission bits (`0o7777`) of a Go `os.FileMode` as the engine reports it.
fn go_permissions(go_mode: u32) -> u32 {
    const GO_SETUID: u32 = 1 << 23;
    const GO_SETGID: u32 = 1 << 22;
    const GO_STICKY: u32 = 1 << 20;
    let mut mode = go_mode & 0o777;
    if go_mode & GO_SETUID != 0 {
        mode |= 0o4000;
    }
    if go_mode & GO_SETGID != 0 {
        mode |= 0o2000;
    }
    if go_mode & GO_STICKY != 0 {
        mode |= 0o1000;
    }
    mode
}

/// Ownership and mode of what an upload creates.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Owner {
    /// Numeric user id.
    pub uid: u64,
    /// Numeric group id.
    pub gid: u64,
}

/// The tar bytes before a file's data: one directory entry per path in `dirs` (mode 0755, in
/// order), then the file's header (`size` bytes, `mode`). Paths are absolute; entries are
/// relative to `/`. Long names use GNU long-name entries. Errors: `E_INVALID_ARGUMENT`.
pub(crate) fn tar_prefix(
    dirs: &[String],
    file: &str,
    size: u64,
    mode: u32,
    owner: Owner,
) -> Result<Vec<u8>> {
    let mtime = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let mut builder = tar::Builder::new(Vec::new());
    let header = |kind: tar::EntryType, mode: u32, size: u64| {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.set_mode(mode);
        h.set_uid(owner.uid);
        h.set_gid(owner.gid);
        h.set_mtime(mtime);
        h.set_size(size);
        h
    };
    let bad = |e: std::io::Error| Error::invalid("path", format!("cannot be put in a tar: {e}"));
    for d in dirs {
        let mut h = header(tar::EntryType::Directory, 0o755, 0);
        builder
            .append_data(&mut h, d.trim_start_matches('/'), std::io::empty())
            .map_err(bad)?;
    }
    let mut h = header(tar::EntryType::Regular, mode, size);
    // The data follows from the caller's stream: only the header(s) are written here.
    builder
        .append_data(&mut h, file.trim_start_matches('/'), std::io::empty())
        .map_err(bad)?;
    // Take the bytes before the builder finishes (its trailer would end the archive here).
    Ok(std::mem::take(builder.get_mut()))
}

/// The tar header of one directory entry `path` with `mode`, owned by `owner`: upload it with
/// [`upload`] (`size` 0, no data) to create the directory, or to give an existing one that
/// owner and mode (the engine applies both to an existing directory too).
pub(crate) fn dir_header(path: &str, mode: u32, owner: Owner) -> Result<Vec<u8>> {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(tar::EntryType::Directory);
    h.set_mode(mode);
    h.set_uid(owner.uid);
    h.set_gid(owner.gid);
    h.set_mtime(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default(),
    );
    h.set_size(0);
    let mut builder = tar::Builder::new(Vec::new());
    builder
        .append_data(&mut h, path.trim_start_matches('/'), std::io::empty())
        .map_err(|e| Error::invalid("path", format!("cannot be put in a tar: {e}")))?;
    Ok(std::mem::take(builder.get_mut()))
}

/// The bytes after `size` bytes of file data: padding to a 512-byte block, then the trailer.
pub(crate) fn tar_suffix(size: u64) -> Vec<u8> {
    let rem = (size % TAR_BLOCK_BYTES as u64) as usize;
    let pad = if rem == 0 { 0 } else { TAR_BLOCK_BYTES - rem };
    vec![0u8; pad + TAR_TRAILER_BYTES]
}

/// `PUT /containers/{id}/archive?path=/&noOverwriteDirNonDir=true` with a tar made of `prefix`,
/// exactly `size` bytes from `data`, and the suffix. The request is bounded by the caller's
/// scope and by [`upload_timeout`] of `size` (a base plus time for the bytes).
///
/// Errors: `E_ABORTED`, `E_ENGINE_UNAVAILABLE` (no answer in time) as the outer error; the
/// engine's failure as is inside (the caller decides on 404 and on refusals).
pub(crate) async fn upload(
    engine: &Engine,
    id: &str,
    prefix: Vec<u8>,
    size: u64,
    data: impl Stream<Item = std::io::Result<Bytes>> + Send + 'static,
) -> Result<std::result::Result<(), bollard::errors::Error>> {
    let body = stream::iter([Ok(Bytes::from(prefix))])
        .chain(data)
        .chain(stream::iter([Ok(Bytes::from(tar_suffix(size)))]));
    crate::engine::archive::put_stream(engine, id, body, upload_timeout(size)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(tar_bytes: &[u8]) -> Vec<(String, tar::EntryType, u32, u64, u64, Vec<u8>)> {
        let mut a = tar::Archive::new(tar_bytes);
        a.entries()
            .unwrap()
            .map(|e| {
                let mut e = e.unwrap();
                let mut data = Vec::new();
                e.read_to_end(&mut data).unwrap();
                let h = e.header();
                (
                    e.path().unwrap().to_string_lossy().into_owned(),
                    h.entry_type(),
                    h.mode().unwrap(),
                    h.uid().unwrap(),
                    h.gid().unwrap(),
                    data,
                )
            })
            .collect()
    }

    #[test]
    fn prefix_data_and_suffix_make_one_valid_archive() {
        let owner = Owner {
            uid: 65534,
            gid: 65533,
        };
        let long = format!("/tmp/{}/ü file.bin", "d".repeat(120));
        let dirs = vec!["/tmp/a".to_string()];
        let data = b"hello, tar".to_vec();
        let mut tar_bytes = tar_prefix(&dirs, &long, data.len() as u64, 0o640, owner).unwrap();
        tar_bytes.extend_from_slice(&data);
        tar_bytes.extend_from_slice(&tar_suffix(data.len() as u64));
        assert_eq!(tar_bytes.len() % 512, 0);
        let got = entries(&tar_bytes);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].0, "tmp/a");
        assert!(got[0].1.is_dir());
        assert_eq!((got[0].2, got[0].3, got[0].4), (0o755, 65534, 65533));
        assert_eq!(got[1].0, long.trim_start_matches('/'));
        assert_eq!((got[1].2, got[1].3, got[1].4), (0o640, 65534, 65533));
        assert_eq!(got[1].5, data);
    }

    #[test]
    fn suffix_pads_to_a_block_then_adds_the_trailer() {
        assert_eq!(tar_suffix(0).len(), 1024);
        assert_eq!(tar_suffix(1).len(), 511 + 1024);
        assert_eq!(tar_suffix(512).len(), 1024);
        assert_eq!(tar_suffix(513).len(), 511 + 1024);
    }
}
