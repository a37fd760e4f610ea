//! Pull: the progress events of an image pull, their sink, and the platform rule.

use std::sync::Arc;

use crate::model::errors::{Error, Result};

/// One progress event of a pull, as the engine reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullProgress {
    /// The layer (or tag) the event is about, when the engine names one.
    pub layer: Option<String>,
    /// Bytes done so far for that layer, when reported.
    pub current: Option<i64>,
    /// The layer's size in bytes, when reported.
    pub total: Option<i64>,
    /// The engine's status word (`Downloading`, `Extracting`, `Pull complete`, ...).
    pub status: String,
}

/// Receives pull progress events; called on an engine thread, never blocks the pull for long.
#[derive(Clone)]
pub struct ProgressSink(pub Arc<dyn Fn(PullProgress) + Send + Sync>);

impl std::fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressSink")
    }
}

/// The architectures a Linux image is built for (the OCI image spec's `GOARCH` values).
const LINUX_ARCHES: [&str; 12] = [
    "386", "amd64", "arm", "arm64", "loong64", "mips", "mipsle", "mips64", "mips64le", "ppc64le",
    "riscv64", "s390x",
];

/// Checks a platform string: `linux/arch` or `linux/arch/variant` (berth runs Linux
/// containers), `arch` one of the OCI image spec's Linux architectures, the variant
/// `[a-z0-9_.-]+` (`v7`, `v8`).
pub fn validate_platform(p: &str) -> Result<()> {
    let parts: Vec<&str> = p.split('/').collect();
    let shape = (2..=3).contains(&parts.len())
        && parts.iter().all(|s| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_.-".contains(c))
        });
    if !shape {
        return Err(Error::invalid(
            "platform",
            "must be `os/arch` or `os/arch/variant`, e.g. `linux/amd64` or `linux/arm64/v8`",
        ));
    }
    if parts[0] != "linux" {
        return Err(Error::invalid(
            "platform",
            "must name the `linux` os: berth runs Linux containers",
        ));
    }
    if !LINUX_ARCHES.contains(&parts[1]) {
        return Err(Error::invalid(
            "platform",
            format!(
                "names an unknown architecture; expected one of {}",
                LINUX_ARCHES.join(", ")
            ),
        ));
    }
    Ok(())
}
