//! berth-core: lifecycle of sandbox containers for AI coding agents, over the Docker Engine API.
//!
//! This crate holds all lifecycle logic and has no napi dependency; the root crate `berth`
//! binds it to JavaScript.
#![deny(missing_docs)]
// Errors are the cold path and carry their details by value for the JS `details` object.
#![allow(clippy::result_large_err)]

pub mod engine;
pub mod exec;
pub mod files;
pub mod lifecycle;
pub mod model;
pub mod ownership;
pub mod session;
