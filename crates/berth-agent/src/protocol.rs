//! Frames: `[u32 stream id][u8 kind][u32 payload length][payload]`, integers little-endian.
//! Stream id 0 is the channel itself (`HELLO`, fatal `ERROR`); every command gets a fresh
//! non-zero id from the host.
//!
//! Host to helper: `START` (payload: [`Request::encode`]), `STDIN` (bytes for the command's
//! stdin), `STDIN_END` (close it), `CREDIT` (`[u8 which][u32 bytes]`: the host took that many
//! bytes of the stream, the helper may read that many more), `KILL` (SIGKILL to the command's
//! process group; its later output is read and dropped), `WRITE` (payload:
//! [`WriteRequest::encode`]: write a file atomically, see [`WriteRequest`]).
//!
//! Helper to host: `HELLO` (payload [`MAGIC`]), `STARTED`, `FALLBACK` (the helper could not
//! start the command, the payload says why: the host runs it through the engine instead),
//! `STDOUT`/`STDERR` (output bytes, never more than the stream's credit), `END` (`[u8 which]`:
//! that stream ended), `EXIT` (`[i32 code]`, after both `END`s: the exit status, or 128 + the
//! signal number), `WRITTEN` (the one answer to a `WRITE`: `[u8 status][u64 bytes written]`,
//! see [`WriteReply`]), `ERROR` (a protocol error; on id 0 the helper exits).

/// Payload of the helper's `HELLO`: names the protocol and its version.
pub const MAGIC: &[u8] = b"berth-agent/1";
/// Bytes of a frame header.
pub const HEADER_BYTES: usize = 9;
/// Largest payload accepted in either direction (8 MiB: a `START` carries argv and env).
pub const MAX_PAYLOAD_BYTES: usize = 8 * 1024 * 1024;
/// Credit each output stream starts with, in bytes (256 KiB); the host grants more as its
/// reader takes chunks, so at most this much of a stream is ever in flight or queued.
pub const INITIAL_CREDIT: u32 = 256 * 1024;
/// Largest output chunk the helper sends in one frame, in bytes.
pub const CHUNK_BYTES: usize = 64 * 1024;

/// Host to helper: start a command.
pub const START: u8 = 1;
/// Host to helper: bytes for the command's stdin.
pub const STDIN: u8 = 2;
/// Host to helper: close the command's stdin.
pub const STDIN_END: u8 = 3;
/// Host to helper: more credit for one output stream.
pub const CREDIT: u8 = 4;
/// Host to helper: kill the command's process group and drop its output.
pub const KILL: u8 = 5;
/// Host to helper: write a file atomically ([`WriteRequest`]).
pub const WRITE: u8 = 6;

/// Helper to host: the helper runs and speaks this protocol.
pub const HELLO: u8 = 16;
/// Helper to host: the command was started.
pub const STARTED: u8 = 17;
/// Helper to host: the command could not be started; run it through the engine.
pub const FALLBACK: u8 = 18;
/// Helper to host: stdout bytes.
pub const STDOUT: u8 = 19;
/// Helper to host: stderr bytes.
pub const STDERR: u8 = 20;
/// Helper to host: one output stream ended.
pub const END: u8 = 21;
/// Helper to host: the command's exit code.
pub const EXIT: u8 = 22;
/// Helper to host: a protocol error.
pub const ERROR: u8 = 23;
/// Helper to host: the answer to a `WRITE` ([`WriteReply`]).
pub const WRITTEN: u8 = 24;

/// Largest file a `WRITE` carries, in bytes (1 MiB): larger writes take the engine's archive
/// path, which streams.
pub const MAX_WRITE_BYTES: usize = 1024 * 1024;
/// Bytes of a `WRITTEN` payload: `[u8 status][u64 bytes written]`.
pub const WRITTEN_BYTES: usize = 9;

/// `which` byte of `CREDIT` and `END`: stdout.
pub const WHICH_STDOUT: u8 = 1;
/// `which` byte of `CREDIT` and `END`: stderr.
pub const WHICH_STDERR: u8 = 2;

/// Appends one frame to `out`.
pub fn frame(out: &mut Vec<u8>, id: u32, kind: u8, payload: &[u8]) {
    out.extend_from_slice(&id.to_le_bytes());
    out.push(kind);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(payload);
}

/// One frame taken off a buffer by [`next_frame`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Stream id (0: the channel).
    pub id: u32,
    /// One of the kind constants.
    pub kind: u8,
    /// The payload.
    pub payload: Vec<u8>,
}

/// Takes the next complete frame off the front of `buf`: `Ok(None)` until enough bytes came;
/// `Err` for a payload over [`MAX_PAYLOAD_BYTES`] (the stream cannot be trusted any more).
pub fn next_frame(buf: &mut Vec<u8>) -> Result<Option<Frame>, String> {
    let Some((id, kind, len)) = header(buf)? else {
        return Ok(None);
    };
    if buf.len() < HEADER_BYTES + len {
        return Ok(None);
    }
    let payload = buf[HEADER_BYTES..HEADER_BYTES + len].to_vec();
    buf.drain(..HEADER_BYTES + len);
    Ok(Some(Frame { id, kind, payload }))
}

/// The header at the front of `buf` (`id`, `kind`, payload length), once all nine bytes came.
pub fn header(buf: &[u8]) -> Result<Option<(u32, u8, usize)>, String> {
    if buf.len() < HEADER_BYTES {
        return Ok(None);
    }
    let id = u32::from_le_bytes(buf[0..4].try_into().expect("4 bytes"));
    let len = u32::from_le_bytes(buf[5..9].try_into().expect("4 bytes")) as usize;
    if len > MAX_PAYLOAD_BYTES {
        return Err(format!("frame payload of {len} bytes is over the limit"));
    }
    Ok(Some((id, buf[4], len)))
}

/// A command to start: what the `START` payload carries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Request {
    /// The `BERTH_EXEC_ID` value the command and its children carry.
    pub marker: Vec<u8>,
    /// Working directory; empty: the helper's own (the container's).
    pub cwd: Vec<u8>,
    /// Extra environment variables, on top of the helper's.
    pub env: Vec<(Vec<u8>, Vec<u8>)>,
    /// Program and arguments (never empty).
    pub argv: Vec<Vec<u8>>,
    /// Whether stdin is a pipe fed by `STDIN` frames (else `/dev/null`).
    pub stdin: bool,
}

impl Request {
    /// The `START` payload: length-prefixed byte strings (`u32` lengths and counts).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put(&mut out, &self.marker);
        put(&mut out, &self.cwd);
        out.extend_from_slice(&(self.env.len() as u32).to_le_bytes());
        for (k, v) in &self.env {
            put(&mut out, k);
            put(&mut out, v);
        }
        out.extend_from_slice(&(self.argv.len() as u32).to_le_bytes());
        for a in &self.argv {
            put(&mut out, a);
        }
        out.push(u8::from(self.stdin));
        out
    }

    /// Reads a `START` payload; `None` when it is malformed.
    pub fn decode(mut b: &[u8]) -> Option<Request> {
        let marker = take(&mut b)?;
        let cwd = take(&mut b)?;
        let n = take_u32(&mut b)?;
        let mut env = Vec::new();
        for _ in 0..n {
            env.push((take(&mut b)?, take(&mut b)?));
        }
        let n = take_u32(&mut b)?;
        let mut argv = Vec::new();
        for _ in 0..n {
            argv.push(take(&mut b)?);
        }
        let (&stdin, rest) = b.split_first()?;
        if !rest.is_empty() || argv.is_empty() {
            return None;
        }
        Some(Request {
            marker,
            cwd,
            env,
            argv,
            stdin: stdin == 1,
        })
    }
}

/// `mode` of a [`WriteRequest`] that keeps an existing file's mode (0644 for a new file).
pub const KEEP_MODE: u32 = u32::MAX;

/// A file to write: what the `WRITE` payload carries. The helper writes `data` to a temporary
/// name beside `path` (`.berth-tmp-<pid>-<n>`, created exclusively), checks its size, sets its
/// mode and renames it over `path`, creating missing parents (0755). It runs as its channel's
/// user, so the kernel decides what that user may write; an existing file it does not own (or
/// whose group is not its own), a symbolic link, anything but a regular file, or a directory it
/// may not write is [`WriteStatus::Fail`]: the host's other paths keep owner and group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteRequest {
    /// Absolute, normalised path.
    pub path: Vec<u8>,
    /// Permission bits (at most 0o7777), or [`KEEP_MODE`].
    pub mode: u32,
    /// The file's bytes (at most [`MAX_WRITE_BYTES`]).
    pub data: Vec<u8>,
}

impl WriteRequest {
    /// The `WRITE` payload: path, `u32` mode, data (length-prefixed byte strings).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(12 + self.path.len() + self.data.len());
        put(&mut out, &self.path);
        out.extend_from_slice(&self.mode.to_le_bytes());
        put(&mut out, &self.data);
        out
    }

    /// Reads a `WRITE` payload; `None` when it is malformed (also: a relative or empty path,
    /// a NUL in it, a mode over 0o7777 other than [`KEEP_MODE`], data over the limit).
    pub fn decode(mut b: &[u8]) -> Option<WriteRequest> {
        let path = take(&mut b)?;
        let mode = take_u32(&mut b)?;
        let data = take(&mut b)?;
        let ok = b.is_empty()
            && path.first() == Some(&b'/')
            && path.len() > 1
            && !path.contains(&0)
            && (mode <= 0o7777 || mode == KEEP_MODE)
            && data.len() <= MAX_WRITE_BYTES;
        ok.then_some(WriteRequest { path, mode, data })
    }
}

/// What a `WRITE` came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteStatus {
    /// Written and renamed into place.
    Ok = 1,
    /// A directory is at the path; nothing written.
    IsDir = 2,
    /// The temporary file came out short (`ENOSPC`, `EDQUOT`, a short write): removed, the
    /// old file untouched.
    NoSpace = 3,
    /// Anything else (a path the user may not write, a file it does not own, a mount point the
    /// rename cannot replace): nothing changed; the host takes another path, which says why.
    Fail = 4,
}

/// The `WRITTEN` payload: a status and how many bytes the temporary file held when it was
/// checked (the host refuses an `Ok` whose count is not the size it sent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteReply {
    /// What happened.
    pub status: WriteStatus,
    /// Bytes in the temporary file when checked (0 when none was made).
    pub written: u64,
}

impl WriteReply {
    /// `[u8 status][u64 written]`.
    pub fn encode(&self) -> [u8; WRITTEN_BYTES] {
        let mut out = [0u8; WRITTEN_BYTES];
        out[0] = self.status as u8;
        out[1..].copy_from_slice(&self.written.to_le_bytes());
        out
    }

    /// Reads a `WRITTEN` payload; `None` unless it is exactly [`WRITTEN_BYTES`] with a known status.
    pub fn decode(b: &[u8]) -> Option<WriteReply> {
        if b.len() != WRITTEN_BYTES {
            return None;
        }
        let status = match b[0] {
            1 => WriteStatus::Ok,
            2 => WriteStatus::IsDir,
            3 => WriteStatus::NoSpace,
            4 => WriteStatus::Fail,
            _ => return None,
        };
        let written = u64::from_le_bytes(b[1..].try_into().ok()?);
        Some(WriteReply { status, written })
    }
}

fn put(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

fn take_u32(b: &mut &[u8]) -> Option<u32> {
    let (head, rest) = b.split_at_checked(4)?;
    *b = rest;
    Some(u32::from_le_bytes(head.try_into().ok()?))
}

fn take(b: &mut &[u8]) -> Option<Vec<u8>> {
    let n = take_u32(b)? as usize;
    let (head, rest) = b.split_at_checked(n)?;
    *b = rest;
    Some(head.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_trip_with_any_bytes() {
        let r = Request {
            marker: b"abc".to_vec(),
            cwd: b"/tmp".to_vec(),
            env: vec![(b"A".to_vec(), b"x\ny\0z".to_vec())],
            argv: vec![b"sh".to_vec(), b"-c".to_vec(), vec![0xff, b'\n', 0]],
            stdin: true,
        };
        assert_eq!(Request::decode(&r.encode()), Some(r.clone()));
        let bytes = r.encode();
        assert_eq!(Request::decode(&bytes[..bytes.len() - 1]), None);
        assert_eq!(Request::decode(&[bytes.clone(), vec![0]].concat()), None);
    }

    #[test]
    fn writes_round_trip_and_bad_ones_are_refused() {
        let w = WriteRequest {
            path: b"/tmp/a b".to_vec(),
            mode: 0o640,
            data: vec![0, b'\n', 0xff],
        };
        assert_eq!(WriteRequest::decode(&w.encode()), Some(w.clone()));
        for bad in [
            WriteRequest {
                path: b"tmp/x".to_vec(),
                ..w.clone()
            },
            WriteRequest {
                path: b"/".to_vec(),
                ..w.clone()
            },
            WriteRequest {
                path: b"/a\0b".to_vec(),
                ..w.clone()
            },
            WriteRequest {
                mode: 0o10000,
                ..w.clone()
            },
            WriteRequest {
                data: vec![0; MAX_WRITE_BYTES + 1],
                ..w.clone()
            },
        ] {
            assert_eq!(WriteRequest::decode(&bad.encode()), None, "{bad:?}");
        }
        let keep = WriteRequest {
            mode: KEEP_MODE,
            ..w.clone()
        };
        assert_eq!(WriteRequest::decode(&keep.encode()), Some(keep));
        let r = WriteReply {
            status: WriteStatus::NoSpace,
            written: 7,
        };
        assert_eq!(WriteReply::decode(&r.encode()), Some(r));
        assert_eq!(WriteReply::decode(&[9, 0, 0, 0, 0, 0, 0, 0, 0]), None);
        assert_eq!(WriteReply::decode(&r.encode()[..8]), None);
    }

    #[test]
    fn frames_come_whole_whatever_the_split() {
        let mut wire = Vec::new();
        frame(
            &mut wire,
            7,
            STDOUT,
            b"\x07\x00\x00\x00\x13\xff\xff\xff\xff",
        );
        frame(&mut wire, 0, HELLO, MAGIC);
        let mut buf = Vec::new();
        let mut got = Vec::new();
        for b in wire {
            buf.push(b);
            while let Some(f) = next_frame(&mut buf).unwrap() {
                got.push(f);
            }
        }
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].payload, b"\x07\x00\x00\x00\x13\xff\xff\xff\xff");
        assert_eq!((got[1].id, got[1].kind), (0, HELLO));
        let mut huge = Vec::new();
        huge.extend_from_slice(&1u32.to_le_bytes());
        huge.push(STDIN);
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(next_frame(&mut huge).is_err());
    }
}
