//! Engine: the connection to a Docker Engine API socket and the calls berth makes on it
//! (discovery, transport, engine info, container inspect and facts, calls by id, images,
//! networks, ports, bind sources, host escape, process counts). Imports only [`crate::model`].

pub mod archive;
pub mod bind_source;
pub mod bounded;
pub mod calls;
pub mod cancel;
pub mod connection;
pub mod container;
pub mod discovery;
pub mod exec;
pub mod host_escape;
pub mod images;
pub mod info;
pub mod logs;
pub mod netguard;
pub mod networks;
pub mod ports;
pub mod templates;
pub mod top;
#[cfg(unix)]
pub mod transport;
pub mod volumes;

/// An engine's own answer to one request: its value, or bollard's error (with the HTTP status
/// when the engine answered). Endpoint functions return it inside berth's `Result`, whose error
/// is the request's bound (no answer in time, the caller's abort or deadline).
pub(crate) type Answer<T> = std::result::Result<T, bollard::errors::Error>;
