//! berth's command helper, shared half: the wire protocol between berth (the host) and the
//! helper binary (`src/main.rs`) running inside a container as one long-lived engine exec.
//!
//! The host writes request frames on the helper's stdin; the helper writes reply frames on its
//! stdout. It never writes anything else there, and a command's own output reaches the host
//! only as the payload of a `STDOUT`/`STDERR` frame, so nothing a command prints can be taken
//! for framing. See [`protocol`].

pub mod netguard;
pub mod protocol;
