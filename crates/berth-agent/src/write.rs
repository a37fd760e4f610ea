//! One atomic file write (`WRITE`, see `berth_agent::protocol::WriteRequest`), done in the
//! helper itself as its channel's user: the same rules as the shell file channel it replaces
//! (the kernel decides what the user may write; an existing file keeps its owner or the write
//! fails over to the host's other paths).

use std::ffi::{CStr, CString, OsStr};
use std::fs::File;
use std::io::Write;
use std::os::fd::FromRawFd;
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicU64, Ordering};

use berth_agent::protocol::{WriteReply, WriteRequest, WriteStatus, KEEP_MODE};

/// Mode of a new file unless the host gives one.
const NEW_FILE_MODE: u32 = 0o644;
/// Mode of a created parent directory (as `mkdir -p` under umask 022).
const DIR_MODE: u32 = 0o755;

static NEXT_TEMP: AtomicU64 = AtomicU64::new(0);

fn reply(status: WriteStatus, written: u64) -> WriteReply {
    WriteReply { status, written }
}

fn cstr(b: &[u8]) -> Option<CString> {
    CString::new(b).ok()
}

fn lstat(p: &CStr) -> Option<libc::stat> {
    // SAFETY: lstat into a zeroed struct from a valid C string.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        (libc::lstat(p.as_ptr(), &mut st) == 0).then_some(st)
    }
}

fn stat(p: &CStr) -> Option<libc::stat> {
    // SAFETY: stat into a zeroed struct from a valid C string.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        (libc::stat(p.as_ptr(), &mut st) == 0).then_some(st)
    }
}

fn is(st: &libc::stat, kind: libc::mode_t) -> bool {
    st.st_mode & libc::S_IFMT == kind
}

/// The parent directory of an absolute path (`/` for a top-level name).
fn parent(path: &[u8]) -> &[u8] {
    match path.iter().rposition(|b| *b == b'/') {
        Some(0) | None => b"/",
        Some(i) => &path[..i],
    }
}

/// Creates `dir` and its missing ancestors (0755); true when `dir` is a directory after.
fn make_dirs(dir: &[u8]) -> bool {
    let Some(c) = cstr(dir) else { return false };
    if let Some(st) = stat(&c) {
        return is(&st, libc::S_IFDIR);
    }
    if dir != b"/" && !make_dirs(parent(dir)) {
        return false;
    }
    // SAFETY: mkdir/chmod on a valid C string.
    unsafe {
        if libc::mkdir(c.as_ptr(), DIR_MODE) == 0 {
            // The umask may have narrowed it: 0755 exactly, as `mkdir -p` under umask 022.
            libc::chmod(c.as_ptr(), DIR_MODE);
            return true;
        }
    }
    stat(&c).is_some_and(|st| is(&st, libc::S_IFDIR))
}

/// Does the write `req` asks for; see `WriteRequest`.
pub fn write(req: &WriteRequest) -> WriteReply {
    let fail = reply(WriteStatus::Fail, 0);
    let Some(path) = cstr(&req.path) else {
        return fail;
    };
    if stat(&path).is_some_and(|st| is(&st, libc::S_IFDIR)) {
        return reply(WriteStatus::IsDir, 0);
    }
    let dir = parent(&req.path);
    let Some(dir_c) = cstr(dir) else { return fail };
    let mut mode = req.mode;
    if let Some(st) = lstat(&path) {
        // Keep owner and group: only a regular file the user owns, in a directory it may write.
        // SAFETY: plain syscalls.
        let (uid, gid, dir_ok) = unsafe {
            (
                libc::geteuid(),
                libc::getegid(),
                libc::access(dir_c.as_ptr(), libc::W_OK) == 0,
            )
        };
        if !is(&st, libc::S_IFREG) || st.st_uid != uid || st.st_gid != gid || !dir_ok {
            return fail;
        }
        if mode == KEEP_MODE {
            mode = st.st_mode & 0o7777;
        }
    } else if mode == KEEP_MODE {
        mode = NEW_FILE_MODE;
    }
    if !make_dirs(dir) {
        return fail;
    }
    let n = NEXT_TEMP.fetch_add(1, Ordering::Relaxed);
    let mut temp = if dir == b"/" {
        Vec::new()
    } else {
        dir.to_vec()
    };
    temp.extend_from_slice(format!("/.berth-tmp-{}-{n}", std::process::id()).as_bytes());
    let Some(temp_c) = cstr(&temp) else {
        return fail;
    };
    // SAFETY: open on a valid C string; the fd is owned by the File from here on.
    let fd = unsafe {
        libc::open(
            temp_c.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            0o600 as libc::c_uint,
        )
    };
    if fd < 0 {
        return fail;
    }
    // SAFETY: fd was just opened by this process.
    let mut file = unsafe { File::from_raw_fd(fd) };
    let remove = || {
        // SAFETY: unlink of the temporary file this call made.
        unsafe { libc::unlink(temp_c.as_ptr()) };
    };
    let wrote = file.write_all(&req.data);
    // The size written, checked on the descriptor before the rename.
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    if let Err(e) = wrote {
        remove();
        let full = matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT));
        return reply(
            if full {
                WriteStatus::NoSpace
            } else {
                WriteStatus::Fail
            },
            size,
        );
    }
    if size != req.data.len() as u64 {
        remove();
        return reply(WriteStatus::NoSpace, size);
    }
    // SAFETY: fchmod on the open descriptor.
    let chmod = unsafe { libc::fchmod(fd_of(&file), mode as libc::mode_t) };
    drop(file);
    let renamed = chmod == 0
        && std::fs::rename(OsStr::from_bytes(&temp), OsStr::from_bytes(&req.path)).is_ok();
    if !renamed {
        // A mount point (`EBUSY`), a directory swapped in meanwhile, ...: the host's other
        // paths handle it.
        remove();
        return fail;
    }
    reply(WriteStatus::Ok, size)
}

fn fd_of(f: &File) -> libc::c_int {
    use std::os::fd::AsRawFd;
    f.as_raw_fd()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(path: &std::path::Path, mode: u32, data: &[u8]) -> WriteRequest {
        WriteRequest {
            path: path.as_os_str().as_bytes().to_vec(),
            mode,
            data: data.to_vec(),
        }
    }

    #[test]
    fn writes_atomically_with_parents_and_modes() {
        use std::os::unix::fs::PermissionsExt;
        let root = std::env::temp_dir().join(format!("berth-agent-write-{}", std::process::id()));
        let f = root.join("a/b/file");
        assert_eq!(write(&req(&f, KEEP_MODE, b"one")).status, WriteStatus::Ok);
        assert_eq!(std::fs::read(&f).unwrap(), b"one");
        let mode =
            |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode(&f), 0o644);
        assert_eq!(mode(&root.join("a/b")), 0o755);
        assert_eq!(write(&req(&f, 0o600, b"two")), reply(WriteStatus::Ok, 3));
        assert_eq!(mode(&f), 0o600);
        assert_eq!(write(&req(&f, KEEP_MODE, b"three")).status, WriteStatus::Ok);
        assert_eq!(mode(&f), 0o600);
        assert_eq!(std::fs::read(&f).unwrap(), b"three");
        assert_eq!(
            write(&req(&root.join("a"), KEEP_MODE, b"x")).status,
            WriteStatus::IsDir
        );
        // A symbolic link is not written through here (the host's other path does it).
        let link = root.join("link");
        std::os::unix::fs::symlink(&f, &link).unwrap();
        assert_eq!(
            write(&req(&link, KEEP_MODE, b"x")).status,
            WriteStatus::Fail
        );
        // A parent that is a file.
        assert_eq!(
            write(&req(&f.join("x"), KEEP_MODE, b"x")).status,
            WriteStatus::Fail
        );
        let left: Vec<_> = std::fs::read_dir(root.join("a/b")).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file is left");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
