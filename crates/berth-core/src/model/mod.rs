//! Model: berth's data and rules (errors, specs, naming, labels, identity, findings, drift,
//! the embedded helper binary).
//! Never an engine call; imports nothing from the other folders.

pub(crate) mod agent_binary;
pub(crate) mod convert;
pub(crate) mod death;
pub(crate) mod drift;
pub(crate) mod errors;
pub(crate) mod findings;
pub(crate) mod identity;
pub(crate) mod labels;
pub(crate) mod lifetime;
pub(crate) mod metrics;
pub(crate) mod naming;
pub(crate) mod pull;
pub(crate) mod spec;
pub(crate) mod verification;
