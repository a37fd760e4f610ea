//! Channel slot: a session's file channel, opened on first use, reopened after a failure,
//! given up for good when the image cannot run it.

use tokio::sync::{Mutex, MutexGuard};
use tokio_util::sync::CancellationToken;

use crate::engine::connection::Engine;
use crate::files::channel::{Channel, OpenFailure, Outcome};
use crate::model::errors::{Error, Result};

enum Slot {
    /// Not open (yet, or since a failure).
    Closed,
    /// Open and idle.
    Open(Channel),
    /// The image cannot run the channel: every file call takes the archive path.
    Unsupported,
}

/// One session's channel. Requests take turns (the channel carries one at a time).
pub(crate) struct ChannelSlot(Mutex<Slot>);

impl Default for ChannelSlot {
    fn default() -> Self {
        ChannelSlot(Mutex::new(Slot::Closed))
    }
}

impl ChannelSlot {
    /// The slot, locked, with an open attempt made when it was closed. An engine failure to
    /// open leaves it closed (the archive path reports that failure).
    async fn locked(&self, engine: &Engine, id: &str) -> MutexGuard<'_, Slot> {
        let mut slot = self.0.lock().await;
        if matches!(*slot, Slot::Closed) {
            match Channel::open(engine, id).await {
                Ok(c) => *slot = Slot::Open(c),
                Err(OpenFailure::Unsupported) => *slot = Slot::Unsupported,
                Err(OpenFailure::Engine) => {}
            }
        }
        slot
    }

    /// Closes the channel if it is open (its exec ends with its stdin); the next request opens
    /// it again. No engine call.
    pub(crate) async fn close(&self) {
        let mut slot = self.0.lock().await;
        if matches!(*slot, Slot::Open(_)) {
            *slot = Slot::Closed;
        }
    }

    /// A failed request leaves the channel in an unknown state: drop it (its exec ends with
    /// its stdin). An abort is returned; anything else sends the caller to the archive path.
    fn failed<T>(slot: &mut Slot, e: Error, cancel: &CancellationToken) -> Result<Outcome<T>> {
        *slot = Slot::Closed;
        if cancel.is_cancelled() {
            Err(e)
        } else {
            Ok(Outcome::Fallback)
        }
    }

    /// Writes through the channel; see [`Channel::write`]. `Fallback` when the channel cannot
    /// be had or the request failed. Errors: `E_ABORTED`.
    pub(crate) async fn write(
        &self,
        engine: &Engine,
        id: &str,
        path: &str,
        mode: Option<u32>,
        data: &[u8],
        cancel: &CancellationToken,
    ) -> Result<Outcome<()>> {
        let mut slot = self.locked(engine, id).await;
        let Slot::Open(channel) = &mut *slot else {
            return Ok(Outcome::Fallback);
        };
        match channel.write(path, mode, data, cancel).await {
            Ok(outcome) => Ok(outcome),
            Err(e) => Self::failed(&mut slot, e, cancel),
        }
    }

    /// Reads through the channel; see [`Channel::read`]. `Fallback` when the channel cannot
    /// be had or the request failed. Errors: `E_ABORTED`.
    pub(crate) async fn read(
        &self,
        engine: &Engine,
        id: &str,
        path: &str,
        max_bytes: u64,
        cancel: &CancellationToken,
    ) -> Result<Outcome<Option<Vec<u8>>>> {
        let mut slot = self.locked(engine, id).await;
        let Slot::Open(channel) = &mut *slot else {
            return Ok(Outcome::Fallback);
        };
        match channel.read(path, max_bytes, cancel).await {
            Ok(outcome) => Ok(outcome),
            Err(e) => Self::failed(&mut slot, e, cancel),
        }
    }
}
