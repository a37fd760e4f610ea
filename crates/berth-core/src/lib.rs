//! berth-core: lifecycle of sandbox containers for AI coding agents, over the Docker Engine API.
//!
//! This crate holds all lifecycle logic and has no napi dependency (the compiler keeps it
//! out); the root crate `berth` binds it to JavaScript and imports only the face below.
//! The design it implements is `docs/design.md` in the repository.
//!
//! # Layers
//!
//! The folders are layers, listed bottom first. A folder imports only folders listed before
//! it, never one after, so no import cycle runs between folders (checked in CI):
//!
//! 1. `model`: data and rules (errors, specs, naming, labels, identity and liveness,
//!    findings, drift, verification, pull progress). Never an engine call; imports nothing
//!    else. (Identity lives here, not in `ownership`: labels encode an owner, and the
//!    engine layer's container facts decode one.)
//! 2. `engine`: the connection and every Engine API call, one function per endpoint by
//!    resource (discovery, transport, engine info, containers, exec, archive, images,
//!    volumes, networks, top, logs, ports, bind sources, template commits, the network
//!    guard); the bollard client is private to it. Imports `model`.
//! 3. `exec` (imports `engine`, `model`); `files` (may also import `exec`); `ownership`
//!    (provenance, records, holders, holds, cleanup, removal with records, replacement
//!    records; imports `engine`, `model`). `files` and `ownership` never import each other.
//! 4. `session`: the handle of one session's container. Imports all of the above.
//! 5. `lifecycle`: one file per public operation, plus their shared opening. May import
//!    every other folder.
//!
//! Inside a folder, files may import each other. The test-only modules `engine_tests` and
//! `error_docs` sit on top and nothing imports them. Everything is crate-private except the
//! re-exports below.
#![deny(missing_docs)]
// An item marked `pub` is part of the face (re-exported below) or it is `pub(crate)`: a `pub`
// that the face does not reach is a lie about the API, and this lint names it.
#![warn(unreachable_pub)]
// Errors are the cold path and carry their details by value for the JS `details` object.
#![allow(clippy::result_large_err)]

mod engine;
mod exec;
mod files;
mod lifecycle;
mod model;
mod ownership;
mod session;

#[cfg(test)]
mod engine_tests;
#[cfg(test)]
mod error_docs;

// Entry points.
pub use engine::images::ensure_image_at;
pub use engine::info::engine_info;
pub use lifecycle::create::create_session;
pub use lifecycle::legacy::adopt_unlabelled;
pub use lifecycle::list::{list_sessions, list_unmanaged};
pub use lifecycle::metrics::container_metrics;
pub use lifecycle::peek::peek;
pub use lifecycle::reap::reap_orphans;
pub use lifecycle::recreate::recreate_session;
pub use lifecycle::resume::resume_session;
pub use lifecycle::templates::{
    image_id, list_templates, prune_templates, remove_template, template_exists, touch_template,
};
pub use lifecycle::verify::verify_session;

// The session handle and what its methods take and return.
pub use engine::networks::NetworkPolicy;
pub use exec::budget::{
    buffer_budget, buffered_bytes, set_buffer_budget, DEFAULT_BUFFER_BUDGET_BYTES,
};
pub use exec::stream::{ExecProcess, Which};
pub use exec::{ExecOptions, ExecOutput};
pub use files::writer::FileWriter;
pub use files::{check_mode, normalize_path, Data, FileAccess, FileReader, Spool};
pub use session::{Ownership, ReleaseOutcome, RemoveOutcome, Session, StopOutcome};

// Errors.
pub use model::errors::{Error, Holder, Result};

// Specs, options and results.
pub use engine::connection::EngineOptions;
pub use engine::discovery::{EngineKind, EngineSelector};
pub use engine::images::PullOptions;
pub use engine::info::EngineInfo;
pub use lifecycle::legacy::LegacyAdoptSpec;
pub use lifecycle::list::{Listing, Scope};
pub use lifecycle::peek::PeekResult;
pub use lifecycle::reap::{ReapEntry, ReapReport, SettledReplacement};
pub use lifecycle::recreate::RecreateSpec;
pub use lifecycle::resume::ResumeSpec;
pub use lifecycle::templates::{Prune as TemplatePrune, Removal as TemplateRemoval, Template};
pub use lifecycle::verify::VerifySpec;
pub use model::convert::{js_integer, js_integer_opt, JsInteger};
pub use model::death::Death;
pub use model::drift::{DriftSpec, OnDrift, ResumeFields};
pub use model::findings::{Finding, Kind as FindingKind};
pub use model::identity::{liveness, Liveness, Owner};
pub use model::lifetime::{validate_lifetime_ms, MAX_RETENTION_MS};
pub use model::metrics::{Configured as ConfiguredLimits, Metrics};
pub use model::naming::{container_name, DEFAULT_PREFIX};
pub use model::pull::{validate_platform, ProgressSink, PullProgress};
pub use model::spec::{pids_limit, validate_writable_paths, CreateSpec, Limits, Mount, Security};
pub use model::verification::{Expect, Verification};
pub use ownership::holders::{Hold, Record as HolderRecord, Role};
pub use ownership::replaced::{Item as ReplacedItem, Replaced};
