//! Writer: a write of unknown length to a container file, spooled to an unlinked host temp
//! file chunk by chunk, then handed over whole to `Session::write_file`.

use tokio::sync::Mutex;

use crate::files::spool::Spool;
use crate::files::Data;
use crate::model::errors::{Error, Result};

/// A writer's state: open (with its spool once the first chunk came) or finished.
enum State {
    Open(Option<Spool>),
    Finished,
}

/// The state machine of a streamed file write: `write` appends, `finish` hands the data over
/// once (then the writer is finished), `abort` drops the spool. Safe to share across tasks.
pub struct FileWriter {
    state: Mutex<State>,
}

impl Default for FileWriter {
    fn default() -> Self {
        FileWriter {
            state: Mutex::new(State::Open(None)),
        }
    }
}

fn finished() -> Error {
    Error::invalid("writer", "is already closed or aborted")
}

impl FileWriter {
    /// An open writer with nothing written yet (no temp file until the first chunk).
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends `chunk` to the spool (created on the first chunk).
    /// Errors: `E_INVALID_ARGUMENT` after `finish`/`abort`, `E_ENGINE` (host I/O).
    pub async fn write(&self, chunk: &[u8]) -> Result<()> {
        let mut guard = self.state.lock().await;
        let State::Open(open) = &mut *guard else {
            return Err(finished());
        };
        if open.is_none() {
            *open = Some(Spool::new().await?);
        }
        open.as_mut().expect("set above").write(chunk).await
    }

    /// What was written (empty bytes when nothing was), to pass to `Session::write_file`; the
    /// writer is finished from now on. Errors: `E_INVALID_ARGUMENT` when already finished or aborted.
    pub async fn finish(&self) -> Result<Data> {
        let taken = std::mem::replace(&mut *self.state.lock().await, State::Finished);
        match taken {
            State::Finished => Err(finished()),
            State::Open(Some(spool)) => Ok(Data::Spool(spool)),
            State::Open(None) => Ok(Data::Bytes(Default::default())),
        }
    }

    /// Drops the spool without writing anything. Idempotent.
    pub async fn abort(&self) {
        *self.state.lock().await = State::Finished;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn finishes_once_and_refuses_after() {
        let w = FileWriter::new();
        assert!(matches!(w.finish().await, Ok(Data::Bytes(b)) if b.is_empty()));
        assert_eq!(
            w.finish().await.err().map(|e| e.code()),
            Some("E_INVALID_ARGUMENT")
        );
        assert_eq!(
            w.write(b"x").await.unwrap_err().code(),
            "E_INVALID_ARGUMENT"
        );
        let a = FileWriter::new();
        a.write(b"abc").await.unwrap();
        a.abort().await;
        a.abort().await;
        assert_eq!(
            a.finish().await.err().map(|e| e.code()),
            Some("E_INVALID_ARGUMENT")
        );
    }
}
