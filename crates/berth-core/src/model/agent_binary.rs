//! berth's own static binary (`crates/berth-agent`, built by `build.rs` and embedded here):
//! the command helper installed into sandboxes (`exec::channel::install`) and the network
//! guard's image (`engine::netguard`). Data only: nothing here calls the engine.

use std::sync::OnceLock;

use sha2::{Digest, Sha256};

/// The binary, a static Linux executable; empty where it was not built (another host platform).
pub(crate) const AGENT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/berth-agent"));
/// The engine's name for the binary's architecture (`amd64`, `arm64`).
pub(crate) const AGENT_ARCH: &str = env!("BERTH_AGENT_ARCH");

/// The first 16 hex digits of the binary's SHA-256: names what one build installs or imports
/// (`/run/berth/agent-<hash>`, `berth-netguard:<hash>`), so builds never replace each other's.
pub(crate) fn short_hash() -> &'static str {
    static HASH: OnceLock<String> = OnceLock::new();
    HASH.get_or_init(|| hex::encode(Sha256::digest(AGENT))[..16].to_string())
}

/// A tar header for an entry root owns (`0:0`), mode `0755`, time 0, of `kind` and `size` bytes.
pub(crate) fn root_header(kind: tar::EntryType, size: u64) -> tar::Header {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(kind);
    h.set_mode(0o755);
    h.set_uid(0);
    h.set_gid(0);
    h.set_size(size);
    h.set_mtime(0);
    h
}

/// Appends the binary to `b` at `path` (relative, no leading `/`), root-owned `0755`.
pub(crate) fn append_to(b: &mut tar::Builder<Vec<u8>>, path: &str) -> std::io::Result<()> {
    let mut file = root_header(tar::EntryType::Regular, AGENT.len() as u64);
    b.append_data(&mut file, path, AGENT)
}
