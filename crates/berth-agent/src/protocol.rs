//! Frames: `[u32 stream id][u8 kind][u32 payload length][payload]`, integers little-endian.
//! Stream id 0 is the channel itself (`HELLO`, fatal `ERROR`); every command gets a fresh
//! non-zero id from the host.
//!
//! Host to helper: `START` (payload: [`Request::encode`]), `STDIN` (bytes for the command's
//! stdin), `STDIN_END` (close it), `CREDIT` (`[u8 which][u32 bytes]`: the host took that many
//! bytes of the stream, the helper may read that many more), `KILL` (SIGKILL to the command's
//! process group; its later output is read and dropped).
//!
//! Helper to host: `HELLO` (payload [`MAGIC`]), `STARTED`, `FALLBACK` (the helper could not
//! start the command, the payload says why: the host runs it through the engine instead),
//! `STDOUT`/`STDERR` (output bytes, never more than the stream's credit), `END` (`[u8 which]`:
//! that stream ended), `EXIT` (`[i32 code]`, after both `END`s: the exit status, or 128 + the
//! signal number), `ERROR` (a protocol error; on id 0 the helper exits).

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
