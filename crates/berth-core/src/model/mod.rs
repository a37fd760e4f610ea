//! Model: berth's data and rules (errors, specs, naming, labels, identity, findings, drift,
//! the embedded helper binary).
//! Never an engine call; imports nothing from the other folders.

pub(crate) mod agent_binary;
pub mod death;
pub mod drift;
pub mod errors;
pub mod findings;
pub mod identity;
pub mod labels;
pub mod lifetime;
pub mod naming;
pub mod pull;
pub mod spec;
pub mod verification;
