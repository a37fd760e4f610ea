//! Engine: the connection to a Docker Engine API socket and the calls berth makes on it
//! (discovery, transport, engine info, container inspect and facts, calls by id, images,
//! networks, ports, bind sources, host escape, process counts). Imports only [`crate::model`].

pub mod bind_source;
pub mod bounded;
pub mod calls;
pub mod cancel;
pub mod connection;
pub mod container;
pub mod discovery;
pub mod host_escape;
pub mod images;
pub mod info;
pub mod logs;
pub mod netguard;
pub mod netguard_helper;
pub mod netguard_image;
pub mod networks;
pub mod ports;
pub mod templates;
pub mod top;
#[cfg(unix)]
pub mod transport;
pub mod volumes;
