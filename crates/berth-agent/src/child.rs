//! One command the helper runs: its process (a session and process group of its own, carrying
//! the `BERTH_EXEC_ID` marker), its pipes, the stdin bytes not written yet, and what it still
//! owes the host (its streams' `END`s and its `EXIT`).

use std::ffi::OsStr;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Instant;

use berth_agent::protocol::{Request, INITIAL_CREDIT};

/// One output pipe of a command and the bytes the host still lets the helper read from it.
pub struct Pipe {
    pub fd: OwnedFd,
    pub credit: u64,
}

/// A started command.
pub struct Child {
    pub pid: libc::pid_t,
    /// stdout and stderr, `None` once ended (an `END` was sent).
    pub out: [Option<Pipe>; 2],
    pub stdin: Option<OwnedFd>,
    /// stdin bytes not written yet, and how many of them were.
    pub pending: Vec<u8>,
    pub written: usize,
    /// Whether the host closed stdin (`STDIN_END`).
    pub stdin_end: bool,
    /// The exit code once reaped (128 + n for a signal).
    pub exit: Option<i32>,
    /// When the command exited: a pipe still open some time after (a background process
    /// keeps it) is cut, as an engine exec's streams end when its process does.
    pub exited_at: Option<Instant>,
    /// Killed by the host: output is read and dropped.
    pub discard: bool,
}

/// Starts `req` in a new session (so its process group is its own and the engine path's
/// tree kill finds it by its marker and session) with stdout and stderr on pipes and stdin on a
/// pipe or `/dev/null`. `Err`: it could not be started (no such program, a bad cwd, ...).
pub fn start(req: &Request) -> std::io::Result<Child> {
    let os = |b: &[u8]| OsStr::from_bytes(b).to_owned();
    let mut cmd = Command::new(os(&req.argv[0]));
    cmd.args(req.argv[1..].iter().map(|a| os(a)));
    for (k, v) in &req.env {
        cmd.env(os(k), os(v));
    }
    cmd.env("BERTH_EXEC_ID", os(&req.marker));
    if !req.cwd.is_empty() {
        cmd.current_dir(os(&req.cwd));
    }
    cmd.stdin(if req.stdin {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut child = cmd.spawn()?;
    let out = child.stdout.take().map(OwnedFd::from);
    let err = child.stderr.take().map(OwnedFd::from);
    let stdin = child.stdin.take().map(OwnedFd::from);
    for fd in out.iter().chain(err.iter()).chain(stdin.iter()) {
        nonblocking(fd);
    }
    let pipe = |fd: Option<OwnedFd>| {
        fd.map(|fd| Pipe {
            fd,
            credit: u64::from(INITIAL_CREDIT),
        })
    };
    Ok(Child {
        pid: child.id() as libc::pid_t,
        out: [pipe(out), pipe(err)],
        stdin,
        pending: Vec::new(),
        written: 0,
        stdin_end: false,
        exit: None,
        exited_at: None,
        discard: false,
    })
}

/// Sets `O_NONBLOCK` on `fd`.
pub fn nonblocking(fd: &OwnedFd) {
    // SAFETY: fcntl on an fd this process owns.
    unsafe {
        let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
}

impl Child {
    /// Writes as much pending stdin as the pipe takes; closes stdin when all was written and
    /// the host closed it, or when the command stopped reading (`EPIPE`).
    pub fn feed(&mut self) {
        let Some(fd) = &self.stdin else {
            self.pending.clear();
            return;
        };
        while self.written < self.pending.len() {
            let rest = &self.pending[self.written..];
            // SAFETY: writing from a live buffer to an fd this process owns.
            let n = unsafe { libc::write(fd.as_raw_fd(), rest.as_ptr().cast(), rest.len()) };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                match e.kind() {
                    std::io::ErrorKind::WouldBlock => return,
                    std::io::ErrorKind::Interrupted => continue,
                    _ => {
                        self.close_stdin();
                        return;
                    }
                }
            }
            self.written += n as usize;
        }
        self.pending.clear();
        self.written = 0;
        if self.stdin_end {
            self.stdin = None;
        }
    }

    /// Drops stdin and whatever was not written to it.
    pub fn close_stdin(&mut self) {
        self.stdin = None;
        self.pending = Vec::new();
        self.written = 0;
    }

    /// Whether the command is done: reaped and both streams ended.
    pub fn done(&self) -> bool {
        self.exit.is_some() && self.out.iter().all(Option::is_none)
    }

    /// Sends SIGKILL to the command's process group (its session, unless a child left it).
    pub fn kill(&mut self) {
        self.discard = true;
        if self.exit.is_none() {
            // SAFETY: signalling a process group this helper started.
            unsafe {
                libc::kill(-self.pid, libc::SIGKILL);
            }
        }
    }
}

/// The exit code of a `waitpid` status: the code, or 128 + the signal number.
pub fn exit_code(status: libc::c_int) -> i32 {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        -1
    }
}
