//! Lifecycle: one file per public operation (create, resume, recreate, verify with repair,
//! peek, list, reap, templates, legacy adoption). The top layer: may import every other folder.

pub mod create;
pub mod create_failure;
pub mod expiry;
pub mod legacy;
pub mod list;
pub mod opening;
pub mod peek;
pub mod reap;
pub mod reap_helpers;
pub mod recreate;
pub mod repair;
pub mod resume;
pub mod rollback;
pub mod running;
pub mod templates;
pub mod user_dirs;
pub mod verify;
