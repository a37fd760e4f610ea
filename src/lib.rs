//! berth: lifecycle of sandbox containers for AI coding agents, over the Docker Engine API.
//!
//! The core modules below hold all lifecycle logic and never import `napi`; the
//! `binding` module converts between them and JavaScript.
#![deny(missing_docs)]
// Errors are the cold path and carry their details by value for the JS `details` object.
#![allow(clippy::result_large_err)]

pub mod archive;
pub mod bind_source;
pub mod channel;
pub mod channel_protocol;
pub mod channel_slot;
pub mod cleanup;
pub mod container;
pub mod create;
pub mod discovery;
pub mod drift;
pub mod engine;
pub mod engine_info;
pub mod errors;
pub mod exec;
pub mod exec_launch;
pub mod exec_stream;
pub mod expiry;
pub mod file_context;
pub mod file_fallback;
pub mod files;
pub mod findings;
pub mod hold;
pub mod holders;
pub mod identity;
pub mod image;
pub mod labels;
pub mod legacy_adopt;
pub mod lifetime;
pub mod list;
pub mod naming;
pub mod network;
pub mod peek;
pub mod ports;
pub mod process_duty;
pub mod provenance;
pub mod reap;
pub mod records;
pub mod recreate;
pub mod remove;
pub mod repair;
pub mod replaced;
pub mod replacement;
pub mod resume;
pub mod session;
pub mod spec;
pub mod spool;
pub mod template;
#[cfg(unix)]
pub mod unix_transport;
pub mod verify;

// Under `cfg(test)` napi-derive registers nothing, so the exports look unused there.
#[cfg_attr(test, allow(dead_code))]
mod binding;
