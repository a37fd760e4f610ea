//! As the user: file reads and writes run by an exec of `sh` as the session's user (the
//! container's `User`, with its supplementary groups), so the kernel decides what is allowed:
//! permission on the file and on every directory on the way, exactly as for `exec`.
//!
//! A read is `sh -c <READ_SCRIPT> berth-file <path>`: it tells absent / directory / denied /
//! special apart by its exit code, else opens the file once (descriptor 3), checks that what
//! it opened is a regular file, prints its size as a first line and then exactly that many
//! bytes of it (`head -c`): a sandbox that swaps the path for a link to `/dev/zero` after the
//! checks cannot change what is read. The host never accepts more than that size, nor more
//! than the read's cap ([`crate::files::FileReader`]). A write is
//! `sh -c <WRITE_SCRIPT> berth-file <path> <temp> <size> <mode|->` with the data on stdin: the
//! data goes to the temporary name `<temp>` in the target's directory, its size is checked
//! (short, or a tool that said ENOSPC: `E_NO_SPACE`, see [`crate::files::no_space`]),
//! and it is renamed over the target (atomic: an abort or failure leaves the old file or the
//! new one, never a mix; the temporary file is removed on any failure, and again by name by
//! berth after an abort). An existing file keeps its owner and mode unless a mode is given.
//! Where a rename would change what the user may not change (a file the user does not own or
//! whose group is not the user's, a directory the user may not write, a symbolic link), the
//! complete data is staged in `mktemp` and then copied over the file in place. A target that
//! is itself a mount point (a single-file bind mount) cannot be renamed over (`EBUSY`): the
//! staged temporary file is copied over it in place, as the user (not atomic: the one case).
//!
//! Engine calls: those of [`crate::exec::stream`]. Needs `sh`, `cat`, `wc`, `mv`, `chmod`,
//! `stat` (to keep a mode), `mktemp` (in-place case).

use bytes::Bytes;
use tokio_util::sync::CancellationToken;

use crate::engine::connection::Engine;
use crate::exec::stream::{self, ExecProcess, Stdin, Which};
use crate::exec::{self, ExecOptions};
use crate::files::fallback::{argv, failed};
use crate::files::no_space;
use crate::files::temp::TempFile;
use crate::model::errors::{Error, Result};

/// Exit codes the scripts use for their answers.
const ABSENT: i64 = 10;
pub(crate) const IS_DIR: i64 = 11;
const DENIED: i64 = 12;
const NOT_DIR: i64 = 13;
pub(crate) const SPECIAL: i64 = 14;
const SHORT: i64 = 15;

/// Checks `$1` as the user, opens it once on descriptor 3 and checks through the descriptor
/// (`/proc/self/fd/3`) that it is a regular file, then prints its size (`stat -L` of the
/// descriptor) on a line and `exec`s `head -c <size>` of the descriptor. Without `stat` or
/// `head` (or `/proc`), or when the size is 0 (procfs files such as `/proc/cpuinfo` have data
/// but no size), the line is `-` and the descriptor is `cat` (the host's cap bounds it).
/// Nothing there (the path, or the end of its link chain) is absent when the nearest ancestor
/// that exists is one the user may search (or not a directory): a missing parent directory or
/// a dangling link is absent too; an unsearchable one hides what is in it (denied), also
/// behind a link (`berth_hidden`).
pub(crate) const READ_SCRIPT: &str = concat!(
    crate::files::link_reach_sh!(),
    r#"p=$1
if [ -d "$p" ]; then exit 11; fi
if [ ! -e "$p" ]; then
  if berth_hidden "$p"; then exit 12; else exit 10; fi
fi
[ -f "$p" ] || exit 14
[ -r "$p" ] || exit 12
command exec 3<"$p" || exit 12
if [ -e /proc/self/fd/3 ]; then [ -f /proc/self/fd/3 ] || exit 14; fi
if s=$(stat -L -c %s /proc/self/fd/3 2>/dev/null) && [ "$s" != 0 ] && command -v head >/dev/null; then
  echo "$s"; exec head -c "$s" <&3
fi
echo -; exec cat <&3"#
);

/// Longest first line of a [`READ_SCRIPT`] read (a size in decimal), in bytes.
const SIZE_LINE_MAX_BYTES: usize = 24;

/// Writes stdin to `$1` through `$2` (a name in the same directory), `$3` bytes, mode `$4`
/// (`-`: keep an existing file's, 0644 for a new one). See the module docs.
pub(crate) const WRITE_SCRIPT: &str = concat!(
    crate::files::mount_point_sh!(),
    crate::files::link_reach_sh!(),
    r#"p=$1; n=$3; m=$4; k=$4
d=${p%/*}; d=${d:-/}; t=$d/$2; s=
trap 'rm -f "$t" ${s:+"$s"}' EXIT; trap 'exit 1' HUP INT TERM PIPE
if [ -d "$p" ]; then exit 11; fi
a=$d; set --
while [ ! -e "$a" ] && [ ! -L "$a" ]; do set -- "$a" "$@"; a=${a%/*}; a=${a:-/}; done
[ -d "$a" ] || exit 13
if [ $# -gt 0 ]; then
  [ -w "$a" ] && [ -x "$a" ] || exit 12
  for x; do mkdir -m 755 "$x" 2>/dev/null || exit 12; done
fi
i=0
if [ -L "$p" ] && [ ! -e "$p" ]; then
  # A link to nothing the user can see: hidden is denied; dangling is written through, into
  # a directory the user may write (the kernel decides, as for `echo > link`).
  berth_hidden "$p" && exit 12
  e=${_r%/*}; e=${e:-/}
  [ -d "$e" ] || exit 13
  [ -w "$e" ] && [ -x "$e" ] || exit 12
  [ "$m" != - ] || m=644
  k=$m; i=1
elif [ -e "$p" ] || [ -L "$p" ]; then
  [ -f "$p" ] || exit 14
  [ -w "$p" ] || exit 12
  [ "$k" = - ] || [ -O "$p" ] || exit 12
  if [ "$m" = - ]; then m=$(stat -L -c %a "$p") || exit 1; fi
  if [ -L "$p" ] || [ ! -O "$p" ] || [ ! -G "$p" ] || [ ! -w "$d" ]; then i=1; fi
else
  [ -w "$d" ] && [ -x "$d" ] || exit 12
  [ "$m" != - ] || m=644
fi
if [ $i = 1 ]; then s=$(mktemp) || exit 1; w=$s; else w=$t; fi
(umask 077; cat > "$w") || exit 1
z=$(wc -c < "$w") || exit 1
[ $z -eq $n ] || exit 15
if [ $i = 1 ]; then
  cat -- "$w" > "$p" || exit 1
  [ "$k" = - ] || chmod "$m" "$p" || exit 12
else
  chmod "$m" "$w" || exit 1
  mv -f "$w" "$p" && exit 0
  berth_mnt "$p" || exit 1
  cat -- "$w" > "$p" || exit 1
  [ "$k" = - ] || chmod "$m" "$p" || exit 12
fi"#
);

/// Removes a temporary file by name (twice, a second apart: the engine may still be
/// finishing the aborted write).
const CLEANUP_SCRIPT: &str = r#"rm -f -- "$1"; sleep 1; rm -f -- "$1""#;

/// How many times the removal of a temporary file is tried before it is given up.
const CLEANUP_ATTEMPTS: u32 = 3;

/// The temporary name a write uses in the target's directory: `.berth-tmp-<16 hex>`.
pub(crate) fn temp_name() -> String {
    format!(".berth-tmp-{}", hex::encode(rand::random::<[u8; 8]>()))
}

/// The temporary path for `path` (same directory) with name `name`.
pub(crate) fn temp_path(path: &str, name: &str) -> String {
    match path.rfind('/') {
        Some(0) | None => format!("/{name}"),
        Some(i) => format!("{}/{name}", &path[..i]),
    }
}

fn denied(operation: &str, path: &str, user: &str) -> Error {
    Error::PermissionDenied {
        operation: operation.into(),
        path: path.into(),
        user: user.into(),
    }
}

/// A read started as the user: the size it checked, the first data (already received) and the
/// process.
pub(crate) struct UserRead {
    /// The size of the file it opened, when the container could say (`stat`, `head`).
    pub size: Option<u64>,
    /// The first stdout bytes after the size line.
    pub first: Option<Bytes>,
    /// The `head` (or `cat`), still running.
    pub process: ExecProcess,
}

/// Starts a read of `path` ([`READ_SCRIPT`]) as the session's user, or as `run_as` (`"0"` for
/// the exec fallback of [`crate::files::open`]). `Ok(None)` when nothing is there.
/// Errors: `E_PERMISSION_DENIED`, `E_INVALID_ARGUMENT` (a directory, a special file),
/// `E_ENGINE` (also: a first line that is not a size), `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn open(
    engine: &Engine,
    id: &str,
    name: &str,
    path: &str,
    user: &str,
    run_as: Option<&str>,
) -> Result<Option<UserRead>> {
    let opts = ExecOptions {
        user: run_as.map(str::to_string),
        ..Default::default()
    };
    let p = stream::spawn(
        engine,
        id,
        name,
        &argv(READ_SCRIPT, &[path]),
        &opts,
        Stdin::None,
        CancellationToken::new(),
    )
    .await?;
    let mut head: Vec<u8> = Vec::new();
    loop {
        let Some(chunk) = p.next(Which::Stdout).await? else {
            break;
        };
        head.extend_from_slice(&chunk);
        if let Some(i) = head.iter().position(|b| *b == b'\n') {
            let size = match &head[..i] {
                b"-" => None,
                digits => match std::str::from_utf8(digits)
                    .ok()
                    .and_then(|d| d.parse::<u64>().ok())
                {
                    Some(n) => Some(n),
                    None => {
                        let _ = p.kill(&CancellationToken::new()).await;
                        return Err(failed("read file", path, -1, b"the read sent no size line"));
                    }
                },
            };
            let rest = Bytes::copy_from_slice(&head[i + 1..]);
            return Ok(Some(UserRead {
                size,
                first: (!rest.is_empty()).then_some(rest),
                process: p,
            }));
        }
        if head.len() > SIZE_LINE_MAX_BYTES {
            let _ = p.kill(&CancellationToken::new()).await;
            return Err(failed("read file", path, -1, b"the read sent no size line"));
        }
    }
    if !head.is_empty() {
        let _ = p.kill(&CancellationToken::new()).await;
        return Err(failed("read file", path, -1, b"the read sent no size line"));
    }
    let stderr = drain(&p).await;
    match p.wait().await? {
        ABSENT => Ok(None),
        IS_DIR => Err(Error::invalid("path", format!("`{path}` is a directory"))),
        SPECIAL => Err(Error::invalid(
            "path",
            format!("`{path}` is not a regular file"),
        )),
        DENIED => Err(denied("read", path, user)),
        code => Err(failed("read file", path, code, &stderr)),
    }
}

async fn drain(p: &ExecProcess) -> Vec<u8> {
    let mut tail = Vec::new();
    while let Ok(Some(chunk)) = p.next(Which::Stderr).await {
        tail.extend_from_slice(&chunk);
        if tail.len() > 4096 {
            tail.drain(..tail.len() - 4096);
        }
    }
    tail
}

/// Where a write's data comes from.
pub(crate) enum Source {
    /// Bytes in memory.
    Bytes(Bytes),
    /// A spooled file, from its start.
    File(tokio::fs::File),
}

/// Writes `size` bytes from `data` to `path` as the session's user (see the module docs);
/// `mode` `None` keeps an existing file's mode. `cancel` aborts it (`E_ABORTED`; the temporary
/// file is removed by name). Errors: `E_PERMISSION_DENIED`, `E_INVALID_ARGUMENT` (a directory
/// at `path`, a parent that is not a directory, a special file), `E_NO_SPACE` (a tool said
/// ENOSPC, or the temporary file came out short: removed, the old file untouched),
/// `E_ABORTED`, `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn write(
    engine: &Engine,
    id: &str,
    name: &str,
    path: &str,
    data: Source,
    size: u64,
    mode: Option<u32>,
    user: &str,
    cancel: &CancellationToken,
) -> Result<()> {
    let temp = temp_name();
    // A failure, or the caller's abort dropping this future, removes it by name; a script that
    // ran to its end removed it itself or renamed it into place.
    let guard = TempFile::new(engine, id, name, temp_path(path, &temp), None);
    let mode_arg = mode.map(|m| format!("{m:o}")).unwrap_or_else(|| "-".into());
    let stdin = match data {
        Source::Bytes(b) => Stdin::Bytes(b),
        Source::File(f) => Stdin::File(f),
    };
    let result = async {
        let p = stream::spawn(
            engine,
            id,
            name,
            &argv(WRITE_SCRIPT, &[path, &temp, &size.to_string(), &mode_arg]),
            &ExecOptions::default(),
            stdin,
            cancel.clone(),
        )
        .await?;
        p.close(Which::Stdout).await;
        let stderr = drain(&p).await;
        let code = p.wait().await?;
        Ok::<_, Error>((code, stderr))
    }
    .await;
    let (code, stderr) = result?;
    guard.placed();
    match code {
        0 => Ok(()),
        IS_DIR => Err(Error::invalid("path", format!("`{path}` is a directory"))),
        NOT_DIR => Err(Error::invalid(
            "path",
            format!("a parent of `{path}` is not a directory"),
        )),
        SPECIAL => Err(Error::invalid(
            "path",
            format!("`{path}` is not a regular file"),
        )),
        DENIED => Err(denied("write", path, user)),
        SHORT if cancel.is_cancelled() => Err(Error::aborted("writeFile")),
        SHORT => Err(no_space::short(path, size)),
        code => no_space::classify(Err(failed("write file", path, code, &stderr)), path, size),
    }
}

/// Removes the temporary file `temp` in the background, as `user` (`None`: the container's,
/// who made it on the as-the-user path; `Some("0")` after the root paths), so that the
/// removal needs no capability (a failed or aborted write settles at once; the removal
/// follows within about a second).
pub(crate) fn cleanup(engine: &Engine, id: &str, name: &str, temp: String, user: Option<&str>) {
    // Runs after the caller's abort or failure: bounded by per-request timeouts only.
    let (engine, id, name) = (engine.detached(), id.to_string(), name.to_string());
    let user = user.map(str::to_string);
    tokio::spawn(async move {
        let opts = ExecOptions {
            user,
            timeout_ms: Some(30_000),
            ..Default::default()
        };
        // A refused or broken exec (an engine under load) is tried again, a second apart; a
        // container that is gone has nothing left to clean.
        for attempt in 0..CLEANUP_ATTEMPTS {
            if attempt > 0 {
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            }
            let out = exec::exec(
                &engine,
                &id,
                &name,
                &argv(CLEANUP_SCRIPT, &[&temp]),
                &opts,
                &CancellationToken::new(),
            )
            .await;
            match out {
                Ok(o) if o.exit_code == 0 => return,
                Err(Error::SessionNotFound { .. }) => return,
                _ => {}
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dangling_link_is_not_hidden() {
        let dir = std::env::temp_dir().join(format!("berth-reach-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let link = dir.join("dangling");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink("nowhere/at/all", &link).unwrap();
        let script = format!(
            r#"{}berth_hidden "$1"; echo "$? $_r""#,
            crate::files::link_reach_sh!()
        );
        let out = std::process::Command::new("sh")
            .args(["-c", &script, "t", link.to_str().unwrap()])
            .output()
            .unwrap();
        let expected = format!("1 {}/nowhere/at/all\n", dir.display());
        assert_eq!(String::from_utf8_lossy(&out.stdout), expected);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn temp_files_sit_beside_their_target() {
        let n = temp_name();
        assert!(n.starts_with(".berth-tmp-") && n.len() == 11 + 16, "{n}");
        assert_eq!(temp_path("/work/a.txt", &n), format!("/work/{n}"));
        assert_eq!(temp_path("/a.txt", &n), format!("/{n}"));
        assert_ne!(temp_name(), temp_name());
    }
}
