//! Ownership: who holds a session and what the engine records about it (provenance,
//! readiness and holder records, holds, deferred cleanup, replacement records).
//! Imports [`crate::model`] and [`crate::engine`].

pub(crate) mod cleanup;
pub(crate) mod deadlines;
pub(crate) mod hold;
pub(crate) mod holders;
pub(crate) mod provenance;
pub(crate) mod records;
pub(crate) mod removal;
pub(crate) mod replaced;
pub(crate) mod replacement;
pub(crate) mod settled;
pub(crate) mod stops;
