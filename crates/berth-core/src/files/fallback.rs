//! File fallback: read and write a file through an exec of `sh` where the archive API cannot.
//!
//! The engine's archive API works on the container's root filesystem and its volumes and
//! bind mounts, seen from the host. It cannot reach a tmpfs mount (Docker answers 200 to an
//! upload there and the file lands, invisible, under the mount), and it refuses to write
//! when the root filesystem is read-only (Docker 20.10 answers 500). There berth runs, as
//! user 0, `sh -c <script> berth-file <path> ...`: the path is an argument, never
//! interpolated, and data goes through stdin. Needs `sh`, `cat`, `mkdir`, `chown`, `chmod`. A
//! target that is itself a mount point (a single-file bind mount: `/etc/hosts`) cannot be
//! renamed over; it is written in place (`berth_mnt`, `files::mount_point_sh!`).
//!
//! Engine calls: those of [`crate::exec::stream`].

use bytes::Bytes;
use tokio_util::sync::CancellationToken;

use crate::engine::connection::Engine;
use crate::exec::stream::{self, ExecProcess, Stdin, Which};
use crate::exec::{self, ExecOptions};
use crate::files::as_user;
use crate::files::context::Target;
use crate::files::no_space;
use crate::files::temp::TempFile;
use crate::model::errors::{Error, Result};

/// Creates the missing parents of `$1` (mode 0755, owned by `$2`), then writes stdin (`$5`
/// bytes) to the temporary `$4` in the same directory and renames it over `$1`: a new file
/// owned by `$2` with mode `$3` (`-`: 0644), an existing one keeping its owner and (`-`) mode.
/// The temporary file is removed on any failure. Existing parents are not touched; a directory
/// at `$1` exits 11, a device, pipe or socket 14 (never replaced by a file). When the
/// rename fails and `$1` is itself a mount point (`berth_mnt`), the temporary file is copied
/// over it in place (its inode, owner and, unless `$3` gives one, mode kept).
const WRITE_SCRIPT: &str = concat!(
    crate::files::mount_point_sh!(),
    r#"p=$1; o=$2; m=$3; t=$4; n=$5; k=$3
trap 'rm -f "$t"' EXIT; trap 'exit 1' HUP INT TERM PIPE
if [ -L "$p" ]; then p=$(readlink -f "$p") || exit 1; fi
[ ! -d "$p" ] || exit 11
[ ! -e "$p" ] || [ -f "$p" ] || exit 14
d=${p%/*}
set --
while [ -n "$d" ] && [ ! -e "$d" ]; do set -- "$d" "$@"; d=${d%/*}; done
for x in "$@"; do mkdir -m 755 "$x" && chown "$o" "$x" || exit 1; done
if [ -f "$p" ]; then
  o=$(stat -c %u:%g "$p") || exit 1
  if [ "$m" = - ]; then m=$(stat -c %a "$p") || exit 1; fi
fi
[ "$m" != - ] || m=644
cat > "$t" || exit 1
z=$(wc -c < "$t") || exit 1
[ $z -eq $n ] || exit 15
chown "$o" "$t" && chmod "$m" "$t" || exit 1
mv -f "$t" "$p" && exit 0
berth_mnt "$p" || exit 1
cat -- "$t" > "$p" || exit 1
[ "$k" = - ] || chmod "$m" "$p""#
);
/// Renames the uploaded temporary `$1` over `$2` once its size is `$4` bytes (else exit 15:
/// the upload came out short); an existing `$2` keeps its owner, and its mode when `$3` is
/// `1`. The temporary file is removed on exit. When the rename fails and
/// `$2` is itself a mount point (`berth_mnt`), the temporary file is copied over it in place
/// (its inode and owner kept; its mode too when `$3` is `1`).
const RENAME_SCRIPT: &str = concat!(
    crate::files::mount_point_sh!(),
    r#"t=$1; p=$2
trap 'rm -f "$t"' EXIT
z=$(wc -c < "$t") || exit 1
[ $z -eq $4 ] || exit 15
if [ -f "$p" ] && [ ! -L "$p" ]; then
  o=$(stat -c %u:%g "$p") && chown "$o" "$t" || exit 1
  if [ "$3" = 1 ]; then m=$(stat -c %a "$p") && chmod "$m" "$t" || exit 1; fi
fi
mv -f "$t" "$p" && exit 0
berth_mnt "$p" || exit 1
cat -- "$t" > "$p" || exit 1
[ "$3" = 1 ] || { m=$(stat -c %a "$t") && chmod "$m" "$p"; }"#
);
const STDERR_TAIL_BYTES: usize = 4096;

/// The argv of a file script: `sh -c <script> berth-file <args...>` (the arguments arrive as
/// `$1`...; nothing is interpolated into the script).
pub(crate) fn argv(script: &str, args: &[&str]) -> Vec<String> {
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

/// `E_ENGINE` for a file script that exited with an unexpected `code` (its stderr in the
/// message).
pub(crate) fn failed(what: &str, path: &str, code: i64, stderr: &[u8]) -> Error {
    Error::Engine {
        operation: what.into(),
        status: None,
        message: format!(
            "{what} `{path}` through `sh` exited with {code}: {}",
            String::from_utf8_lossy(stderr).trim()
        ),
    }
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

/// Writes `size` bytes of `data` to `path` as described in [`WRITE_SCRIPT`], a new file owned
/// by `owner` (`uid:gid`); `mode` `None` keeps an existing file's. `cancel` aborts it
/// (`E_ABORTED`; the temporary file is removed by name). Errors: `E_NO_SPACE` (a tool said
/// ENOSPC, or the temporary file came out short), `E_ENGINE` (the script failed: its stderr
/// in the message), `E_ABORTED`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn write(
    t: Target<'_>,
    path: &str,
    data: Source,
    size: u64,
    owner: &str,
    mode: Option<u32>,
    cancel: &CancellationToken,
) -> Result<()> {
    let mode = mode.map(|m| format!("{m:o}")).unwrap_or_else(|| "-".into());
    let temp = TempFile::new(
        t.engine,
        t.id,
        t.name,
        as_user::temp_path(path, &as_user::temp_name()),
        Some("0"),
    );
    let stdin = match data {
        Source::Bytes(b) => Stdin::Bytes(b),
        Source::File(f) => Stdin::File(f),
    };
    let run = async {
        let p = stream::spawn(
            t.engine,
            t.id,
            t.name,
            &argv(
                WRITE_SCRIPT,
                &[path, owner, &mode, temp.path(), &size.to_string()],
            ),
            &as_root(),
            stdin,
            cancel.clone(),
        )
        .await?;
        p.close(Which::Stdout).await;
        let stderr = drain_stderr(&p).await;
        match p.wait().await? {
            0 => Ok(()),
            as_user::IS_DIR => Err(Error::invalid("path", format!("`{path}` is a directory"))),
            as_user::SPECIAL => Err(Error::invalid(
                "path",
                format!("`{path}` is not a regular file"),
            )),
            15 if cancel.is_cancelled() => Err(Error::aborted("writeFile")),
            15 => Err(no_space::short(path, size)),
            code => no_space::classify(Err(failed("write file", path, code, &stderr)), path, size),
        }
    };
    // A failure, or the caller's abort dropping this future, drops `temp` (removed by name).
    let r = run.await;
    if r.is_ok() {
        temp.placed();
    }
    r
}

/// Renames the uploaded `temp` (`size` bytes) over `path` as user 0 ([`RENAME_SCRIPT`]);
/// `keep_mode` keeps an existing file's mode. Errors: `E_NO_SPACE` (the temporary file is not
/// `size` bytes, or the in-place copy over a mount point said ENOSPC), `E_ENGINE` (the script
/// failed), `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn rename(
    engine: &Engine,
    id: &str,
    name: &str,
    temp: TempFile,
    path: &str,
    size: u64,
    keep_mode: bool,
) -> Result<()> {
    let keep = if keep_mode { "1" } else { "0" };
    let r = exec::exec(
        engine,
        id,
        name,
        &argv(RENAME_SCRIPT, &[temp.path(), path, keep, &size.to_string()]),
        &as_root(),
        &CancellationToken::new(),
    )
    .await;
    // Renamed into place: nothing left to remove. Any other way out (a failure, the caller's
    // abort or deadline dropping this future) drops `temp`, which removes it by name.
    match r {
        Ok(out) if out.exit_code == 0 => {
            temp.placed();
            Ok(())
        }
        Ok(out) if out.exit_code == 15 => Err(no_space::short(path, size)),
        Ok(out) => no_space::classify(
            Err(failed("write file", path, out.exit_code, &out.stderr)),
            path,
            size,
        ),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scripts parse (`sh -n`), and each that renames checks for a mount point after a
    /// failed rename.
    #[test]
    fn scripts_parse_and_handle_mount_points() {
        for script in [
            WRITE_SCRIPT,
            RENAME_SCRIPT,
            as_user::WRITE_SCRIPT,
            as_user::READ_SCRIPT,
        ] {
            let out = std::process::Command::new("sh")
                .args(["-n", "-c", script])
                .output()
                .expect("sh runs");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            if script == as_user::READ_SCRIPT {
                continue; // it renames nothing
            }
            assert!(script.starts_with("berth_mnt() {"), "{script}");
            assert!(script.contains(r#"berth_mnt "$p""#), "{script}");
        }
    }

    /// `berth_mnt` says no for a plain file, a missing one and a directory.
    #[test]
    fn a_plain_file_is_not_a_mount_point() {
        let dir = std::env::temp_dir().join(format!("berth-mnt-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("a b")).unwrap();
        let file = dir.join("a b").join("f");
        std::fs::write(&file, "x").unwrap();
        for path in [file.clone(), dir.join("missing"), dir.clone()] {
            let path = path.to_str().unwrap().to_string();
            let script = format!(r#"{}berth_mnt "$1""#, crate::files::mount_point_sh!());
            let code = std::process::Command::new("sh")
                .args(["-c", &script, "t", &path])
                .status()
                .unwrap()
                .code();
            assert_eq!(code, Some(1), "{path}");
        }
        std::fs::remove_dir_all(dir).unwrap();
    }
}
