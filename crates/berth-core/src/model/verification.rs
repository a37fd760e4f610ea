//! Verification: what a session's container is checked against, and what a check found.

use crate::model::findings::Finding;
use crate::model::spec::Mount;

/// What a container is checked against, beyond its creation record. Fields left `None` or
/// empty are not checked.
#[derive(Debug, Clone, Default)]
pub struct Expect {
    /// Bind mounts that must be present with this source and read-only flag.
    pub mounts: Option<Vec<Mount>>,
    /// Container TCP ports that must be published.
    pub ports: Option<Vec<u16>>,
    /// Container paths the session's user must be able to write.
    pub writable_paths: Vec<String>,
    /// The user the writable probes run as; the container's own when `None`.
    pub user: Option<String>,
}

/// The outcome of a verification.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verification {
    /// The container id verified.
    pub id: String,
    /// Whether nothing is left unrepaired.
    pub ok: bool,
    /// Findings: those repaired (`repaired: true`) and those left.
    pub findings: Vec<Finding>,
}
