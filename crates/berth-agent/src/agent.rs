//! The helper's `poll` loop (see the crate's `main.rs`).

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use crate::child::{self, Child};
use berth_agent::protocol::{self as p, Request, WriteRequest};

/// How long a command's pipes may stay open after it exited (a background process holding
/// them): then they are cut and the command's `EXIT` sent.
const CUT_AFTER: Duration = Duration::from_secs(2);
/// Largest read from stdin at once, in bytes.
const READ_BYTES: usize = 256 * 1024;

static WAKE: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_sigchld(_: libc::c_int) {
    let fd = WAKE.load(Ordering::Relaxed);
    // SAFETY: write(2) is async-signal-safe; errno is saved and restored.
    unsafe {
        let saved = *libc::__errno_location();
        libc::write(fd, b"x".as_ptr().cast(), 1);
        *libc::__errno_location() = saved;
    }
}

struct Agent {
    out: BufWriter<File>,
    children: HashMap<u32, Child>,
    inbuf: Vec<u8>,
}

/// Runs the helper until berth closes its stdin.
pub fn main() {
    let mut fds = [0; 2];
    // SAFETY: plain syscalls on fds this process creates.
    let wake = unsafe {
        if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) != 0 {
            std::process::exit(3);
        }
        WAKE.store(fds[1], Ordering::Relaxed);
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_sigchld as *const () as usize;
        sa.sa_flags = libc::SA_RESTART | libc::SA_NOCLDSTOP;
        libc::sigaction(libc::SIGCHLD, &sa, std::ptr::null_mut());
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        OwnedFd::from_raw_fd(fds[0])
    };
    // SAFETY: fd 1 is this process's stdout, owned from here on by the writer.
    let stdout = unsafe { File::from_raw_fd(1) };
    let mut agent = Agent {
        out: BufWriter::with_capacity(256 * 1024, stdout),
        children: HashMap::new(),
        inbuf: Vec::new(),
    };
    agent.send(0, p::HELLO, p::MAGIC);
    agent.flush();
    loop {
        agent.turn(&wake);
    }
}

/// What one `pollfd` stands for.
#[derive(Clone, Copy)]
enum Slot {
    Input,
    Wake,
    Output(u32, usize),
    Stdin(u32),
}

impl Agent {
    fn send(&mut self, id: u32, kind: u8, payload: &[u8]) {
        let mut f = Vec::with_capacity(p::HEADER_BYTES + payload.len());
        p::frame(&mut f, id, kind, payload);
        if self.out.write_all(&f).is_err() {
            std::process::exit(0);
        }
    }

    fn flush(&mut self) {
        if self.out.flush().is_err() {
            std::process::exit(0);
        }
    }

    /// One round: poll, then serve what is ready.
    fn turn(&mut self, wake: &OwnedFd) {
        let mut pfds = vec![
            pollfd(0, libc::POLLIN),
            pollfd(wake.as_raw_fd(), libc::POLLIN),
        ];
        let mut slots = vec![Slot::Input, Slot::Wake];
        let now = Instant::now();
        let mut timeout: Option<Duration> = None;
        for (&id, c) in &self.children {
            for (i, pipe) in c.out.iter().enumerate() {
                if let Some(pipe) = pipe.as_ref().filter(|pp| pp.credit > 0 || c.discard) {
                    pfds.push(pollfd(pipe.fd.as_raw_fd(), libc::POLLIN));
                    slots.push(Slot::Output(id, i));
                    if let Some(at) = c.exited_at {
                        let left = (at + CUT_AFTER).saturating_duration_since(now);
                        timeout = Some(timeout.map_or(left, |t| t.min(left)));
                    }
                }
            }
            if let Some(fd) = c.stdin.as_ref().filter(|_| !c.pending.is_empty()) {
                pfds.push(pollfd(fd.as_raw_fd(), libc::POLLOUT));
                slots.push(Slot::Stdin(id));
            }
        }
        let ms = timeout.map_or(-1, |t| t.as_millis().min(60_000) as libc::c_int);
        // SAFETY: pfds is a live, correctly sized array.
        let n = unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, ms) };
        if n < 0 {
            return; // EINTR: a SIGCHLD; the self-pipe says the rest
        }
        for (pfd, slot) in pfds.iter().zip(slots) {
            if pfd.revents == 0 {
                continue;
            }
            match slot {
                Slot::Input => self.read_input(),
                Slot::Wake => self.reap(wake),
                Slot::Output(id, i) => self.read_output(id, i),
                Slot::Stdin(id) => {
                    if let Some(c) = self.children.get_mut(&id) {
                        c.feed();
                    }
                }
            }
        }
        self.cut_and_finish();
        self.flush();
    }

    fn read_input(&mut self) {
        let start = self.inbuf.len();
        self.inbuf.resize(start + READ_BYTES, 0);
        // SAFETY: reading into the live tail of inbuf.
        let n = unsafe { libc::read(0, self.inbuf[start..].as_mut_ptr().cast(), READ_BYTES) };
        if n == 0 {
            // berth closed the channel: leave, the commands keep running.
            let _ = self.out.flush();
            std::process::exit(0);
        }
        self.inbuf.truncate(start + n.max(0) as usize);
        loop {
            match p::next_frame(&mut self.inbuf) {
                Ok(Some(f)) => self.handle(f),
                Ok(None) => break,
                Err(e) => {
                    self.send(0, p::ERROR, e.as_bytes());
                    self.flush();
                    std::process::exit(2);
                }
            }
        }
    }

    fn handle(&mut self, f: p::Frame) {
        match f.kind {
            p::START => {
                if self.children.contains_key(&f.id) || f.id == 0 {
                    return self.send(f.id, p::ERROR, b"stream id in use");
                }
                let Some(req) = Request::decode(&f.payload) else {
                    return self.send(f.id, p::ERROR, b"malformed START");
                };
                match child::start(&req) {
                    Ok(c) => {
                        self.children.insert(f.id, c);
                        self.send(f.id, p::STARTED, &[]);
                    }
                    Err(e) => self.send(f.id, p::FALLBACK, e.to_string().as_bytes()),
                }
            }
            p::STDIN => {
                if let Some(c) = self.children.get_mut(&f.id) {
                    if c.stdin.is_some() {
                        c.pending.extend_from_slice(&f.payload);
                        c.feed();
                    }
                }
            }
            p::STDIN_END => {
                if let Some(c) = self.children.get_mut(&f.id) {
                    c.stdin_end = true;
                    c.feed();
                }
            }
            p::CREDIT => {
                let c = self.children.get_mut(&f.id);
                if let (Some(c), [which, a, b, cc, d]) = (c, f.payload.as_slice()) {
                    let n = u64::from(u32::from_le_bytes([*a, *b, *cc, *d]));
                    let i = usize::from(*which == p::WHICH_STDERR);
                    if let Some(pipe) = c.out[i].as_mut() {
                        pipe.credit += n;
                    }
                }
            }
            p::WRITE => {
                if f.id == 0 || self.children.contains_key(&f.id) {
                    return self.send(f.id, p::ERROR, b"stream id in use");
                }
                let Some(req) = WriteRequest::decode(&f.payload) else {
                    return self.send(f.id, p::ERROR, b"malformed WRITE");
                };
                let done = crate::write::write(&req);
                self.send(f.id, p::WRITTEN, &done.encode());
            }
            p::KILL => {
                if let Some(c) = self.children.get_mut(&f.id) {
                    c.kill();
                }
            }
            _ => self.send(f.id, p::ERROR, b"unknown frame kind"),
        }
    }

    fn reap(&mut self, wake: &OwnedFd) {
        let mut sink = [0u8; 64];
        // SAFETY: draining the self-pipe (non-blocking).
        while unsafe { libc::read(wake.as_raw_fd(), sink.as_mut_ptr().cast(), sink.len()) } > 0 {}
        loop {
            let mut status = 0;
            // SAFETY: reaping this process's own children.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if pid <= 0 {
                break;
            }
            if let Some(c) = self.children.values_mut().find(|c| c.pid == pid) {
                c.exit = Some(child::exit_code(status));
                c.exited_at = Some(Instant::now());
                c.close_stdin();
            }
        }
    }

    /// Reads one chunk of output `i` of command `id` (at most its credit) and forwards it.
    fn read_output(&mut self, id: u32, i: usize) {
        let Some(c) = self.children.get_mut(&id) else {
            return;
        };
        let discard = c.discard;
        let Some(pipe) = c.out[i].as_mut() else {
            return;
        };
        let want = if discard {
            p::CHUNK_BYTES
        } else {
            (pipe.credit as usize).min(p::CHUNK_BYTES)
        };
        let mut buf = vec![0u8; want];
        // SAFETY: reading into a live buffer from an fd this process owns.
        let n = unsafe { libc::read(pipe.fd.as_raw_fd(), buf.as_mut_ptr().cast(), want) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
            ) {
                return;
            }
        }
        if n <= 0 {
            c.out[i] = None;
            return self.send(id, p::END, &[which(i)]);
        }
        let n = n as usize;
        pipe.credit = pipe.credit.saturating_sub(n as u64);
        if !discard {
            let kind = if i == 0 { p::STDOUT } else { p::STDERR };
            self.send(id, kind, &buf[..n]);
        }
    }

    /// Cuts pipes a background process kept open past [`CUT_AFTER`] (unless the host is
    /// still catching up: no credit left), then sends `EXIT` for every finished command.
    fn cut_and_finish(&mut self) {
        let now = Instant::now();
        let mut ends = Vec::new();
        let mut done = Vec::new();
        for (&id, c) in self.children.iter_mut() {
            if c.exited_at.is_some_and(|at| now >= at + CUT_AFTER) {
                for i in 0..2 {
                    if c.out[i]
                        .as_ref()
                        .is_some_and(|pp| pp.credit > 0 || c.discard)
                    {
                        c.out[i] = None;
                        ends.push((id, i));
                    }
                }
            }
            if c.done() {
                done.push((id, c.exit.unwrap_or(-1)));
            }
        }
        for (id, i) in ends {
            self.send(id, p::END, &[which(i)]);
        }
        for (id, code) in done {
            self.children.remove(&id);
            self.send(id, p::EXIT, &code.to_le_bytes());
        }
    }
}

fn which(i: usize) -> u8 {
    if i == 0 {
        p::WHICH_STDOUT
    } else {
        p::WHICH_STDERR
    }
}

fn pollfd(fd: libc::c_int, events: libc::c_short) -> libc::pollfd {
    libc::pollfd {
        fd,
        events,
        revents: 0,
    }
}
