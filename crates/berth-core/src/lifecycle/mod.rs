//! Lifecycle: one file per public operation (create, resume, recreate, verify with repair,
//! peek, list, reap, templates, legacy adoption). The top layer: may import every other folder.

pub(crate) mod create;
pub(crate) mod create_failure;
pub(crate) mod expiry;
pub(crate) mod legacy;
pub(crate) mod list;
pub(crate) mod metrics;
pub(crate) mod opening;
pub(crate) mod peek;
pub(crate) mod reap;
pub(crate) mod reap_helpers;
pub(crate) mod recreate;
pub(crate) mod repair;
pub(crate) mod resume;
pub(crate) mod rollback;
pub(crate) mod running;
pub(crate) mod templates;
pub(crate) mod user_dirs;
pub(crate) mod verify;
