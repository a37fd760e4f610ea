//! Engine: the connection to a Docker Engine API socket and the calls berth makes on it
//! (discovery, transport, engine info, container inspect and facts, calls by id, images,
//! networks, ports, bind sources, host escape, process counts). Imports only [`crate::model`].

pub(crate) mod archive;
pub(crate) mod bind_source;
pub(crate) mod bounded;
pub(crate) mod calls;
pub(crate) mod cancel;
pub(crate) mod connection;
pub(crate) mod container;
pub(crate) mod discovery;
pub(crate) mod exec;
pub(crate) mod host_escape;
pub(crate) mod images;
pub(crate) mod info;
pub(crate) mod logs;
pub(crate) mod netguard;
pub(crate) mod netguard_helper;
pub(crate) mod netguard_image;
pub(crate) mod netguard_record;
pub(crate) mod networks;
pub(crate) mod ports;
pub(crate) mod stats;
pub(crate) mod templates;
pub(crate) mod top;
#[cfg(unix)]
pub(crate) mod transport;
pub(crate) mod volumes;

/// An engine's own answer to one request: its value, or bollard's error (with the HTTP status
/// when the engine answered). Endpoint functions return it inside berth's `Result`, whose error
/// is the request's bound (no answer in time, the caller's abort or deadline).
pub(crate) type Answer<T> = std::result::Result<T, bollard::errors::Error>;
