//! Ownership: who holds a session and what the engine records about it (provenance,
//! readiness and holder records, holds, deferred cleanup, replacement records).
//! Imports [`crate::model`] and [`crate::engine`].

pub mod cleanup;
pub mod deadlines;
pub mod hold;
pub mod holders;
pub mod provenance;
pub mod records;
pub mod removal;
pub mod replaced;
pub mod replacement;
pub mod settled;
pub mod stops;
