//! File fallback: read and write a file through an exec of `sh` where the archive API cannot.
//!
//! The engine's archive API works on the container's root filesystem and its volumes and
//! bind mounts, seen from the host. It cannot reach a tmpfs mount (Docker answers 200 to an
//! upload there and the file lands, invisible, under the mount), and it refuses to write
//! when the root filesystem is read-only (Docker 20.10 answers 500). There berth runs, as
//! user 0, `sh -c <script> berth-file <path> ...`: the path is an argument, never
//! interpolated, and data goes through stdin. Needs `sh`, `cat`, `mkdir`, `chown`, `chmod`.
//!
//! Engine calls: those of [`crate::exec::stream`].

use bytes::Bytes;
use tokio_util::sync::CancellationToken;

use crate::engine::connection::Engine;
use crate::exec::stream::{self, ExecProcess, Stdin, Which};
use crate::exec::{self, ExecOptions};
use crate::model::errors::{Error, Result};

/// Prints `dir`, `file` or `none` for `$1`.
const STAT_SCRIPT: &str = r#"if [ -d "$1" ]; then echo dir; elif [ -f "$1" ]; then echo file; elif [ -e "$1" ]; then echo special; else echo none; fi"#;
/// Creates the missing parents of `$1` (mode 0755, owned by `$2`), then writes stdin to `$1`,
/// owned by `$2` with mode `$3`. Existing parents are not touched.
const WRITE_SCRIPT: &str = r#"p=$1; o=$2; m=$3
d=${p%/*}
set --
while [ -n "$d" ] && [ ! -e "$d" ]; do set -- "$d" "$@"; d=${d%/*}; done
for x in "$@"; do mkdir -m 755 "$x" && chown "$o" "$x" || exit 1; done
cat > "$p" && chown "$o" "$p" && chmod "$m" "$p""#;
const STDERR_TAIL_BYTES: usize = 4096;

/// What `$1` is, seen from inside the container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Nothing there.
    Absent,
    /// A directory.
    Dir,
    /// A regular file (symbolic links followed).
    File,
    /// A device, FIFO or socket (`/dev/zero` on the `/dev` tmpfs): never read, it may not end.
    Special,
}

fn argv(script: &str, args: &[&str]) -> Vec<String> {
    let mut v = vec![
        "sh".to_string(),
        "-c".into(),
        script.into(),
        "berth-file".into(),
    ];
    v.extend(args.iter().map(|a| a.to_string()));
    v
}

fn as_root() -> ExecOptions {
    ExecOptions {
        user: Some("0".into()),
        ..Default::default()
    }
}

fn failed(what: &str, path: &str, code: i64, stderr: &[u8]) -> Error {
    Error::Engine {
        operation: what.into(),
        status: None,
        message: format!(
            "{what} `{path}` through `sh` exited with {code}: {}",
            String::from_utf8_lossy(stderr).trim()
        ),
    }
}

/// What `path` is. Errors: `E_ENGINE` (the script failed, or the container is not running).
pub(crate) async fn kind(engine: &Engine, id: &str, name: &str, path: &str) -> Result<Kind> {
    let out = exec::exec(
        engine,
        id,
        name,
        &argv(STAT_SCRIPT, &[path]),
        &as_root(),
        &CancellationToken::new(),
    )
    .await?;
    match (out.exit_code, out.stdout.as_slice()) {
        (0, b"dir\n") => Ok(Kind::Dir),
        (0, b"file\n") => Ok(Kind::File),
        (0, b"special\n") => Ok(Kind::Special),
        (0, b"none\n") => Ok(Kind::Absent),
        (code, _) => Err(failed("stat", path, code, &out.stderr)),
    }
}

/// Starts `cat -- <path>` as user 0; its stdout is the file. The caller checks the exit code
/// at the end (see [`finish_read`]).
pub(crate) async fn open(engine: &Engine, id: &str, name: &str, path: &str) -> Result<ExecProcess> {
    let p = stream::spawn(
        engine,
        id,
        name,
        &["cat".to_string(), "--".into(), path.into()],
        &as_root(),
        Stdin::None,
        CancellationToken::new(),
    )
    .await?;
    Ok(p)
}

/// After a read's stdout ended: `Ok` when `cat` exited 0, else `E_ENGINE` with its stderr.
pub(crate) async fn finish_read(p: &ExecProcess, path: &str) -> Result<()> {
    let stderr = drain_stderr(p).await;
    match p.wait().await? {
        0 => Ok(()),
        code => Err(failed("read file", path, code, &stderr)),
    }
}

async fn drain_stderr(p: &ExecProcess) -> Vec<u8> {
    let mut tail = Vec::new();
    while let Ok(Some(chunk)) = p.next(Which::Stderr).await {
        tail.extend_from_slice(&chunk);
        if tail.len() > STDERR_TAIL_BYTES {
            tail.drain(..tail.len() - STDERR_TAIL_BYTES);
        }
    }
    tail
}

/// Where a fallback write reads its data from.
pub(crate) enum Source {
    /// Bytes in memory.
    Bytes(Bytes),
    /// A spooled file, from its current position.
    File(tokio::fs::File),
}

/// Writes `data` to `path` as described in the module docs, owned by `uid:gid` with `mode`.
/// `cancel` aborts it (`E_ABORTED`). Errors: `E_ENGINE` (the script failed: its stderr in the
/// message), `E_ABORTED`, `E_ENGINE_UNAVAILABLE`.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn write(
    engine: &Engine,
    id: &str,
    name: &str,
    path: &str,
    data: Source,
    uid: u64,
    gid: u64,
    mode: u32,
    cancel: CancellationToken,
) -> Result<()> {
    let owner = format!("{uid}:{gid}");
    let mode = format!("{mode:o}");
    let stdin = match data {
        Source::Bytes(b) => Stdin::Bytes(b),
        Source::File(f) => Stdin::File(f),
    };
    let p = stream::spawn(
        engine,
        id,
        name,
        &argv(WRITE_SCRIPT, &[path, &owner, &mode]),
        &as_root(),
        stdin,
        cancel,
    )
    .await?;
    p.close(Which::Stdout).await;
    let stderr = drain_stderr(&p).await;
    match p.wait().await? {
        0 => Ok(()),
        code => Err(failed("write file", path, code, &stderr)),
    }
}
