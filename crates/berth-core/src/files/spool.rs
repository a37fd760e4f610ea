//! Spool: a host temp file that holds a write of unknown length until it is complete.

use std::io::SeekFrom;

use tokio::io::{AsyncSeekExt, AsyncWriteExt};

use crate::model::errors::{Error, Result};

/// A temporary host file that holds a write of unknown length until it is complete. It is
/// unlinked as soon as it is created, so nothing is left behind even after a crash.
pub struct Spool {
    file: tokio::fs::File,
    len: u64,
}

impl Spool {
    /// Creates the spool in the host's temp directory (mode 0600, unlinked at once; on
    /// Windows deleted when closed). Errors: `E_ENGINE` (I/O).
    pub async fn new() -> Result<Spool> {
        let path = std::env::temp_dir().join(format!(
            "berth-spool-{}-{}",
            std::process::id(),
            hex::encode(rand::random::<[u8; 8]>())
        ));
        let mut options = std::fs::OpenOptions::new();
        options.read(true).write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        // Windows cannot unlink an open file: the system deletes it when the last handle
        // closes (FILE_FLAG_DELETE_ON_CLOSE), crash included.
        #[cfg(windows)]
        std::os::windows::fs::OpenOptionsExt::custom_flags(&mut options, 0x0400_0000);
        let std_file = options
            .open(&path)
            .map_err(|e| io_error("create spool file", e))?;
        let _ = std::fs::remove_file(&path);
        Ok(Spool {
            file: tokio::fs::File::from_std(std_file),
            len: 0,
        })
    }

    /// Appends `bytes`. Errors: `E_NO_SPACE` (the host's temporary directory is full:
    /// `details.path` names the spool, nothing reached the container), `E_ENGINE` (other I/O).
    pub async fn write(&mut self, bytes: &[u8]) -> Result<()> {
        let total = self.len + bytes.len() as u64;
        self.file.write_all(bytes).await.map_err(|e| {
            if e.raw_os_error() == Some(28) {
                crate::files::no_space::error("(host spool file)", total, e.to_string())
            } else {
                io_error("write spool file", e)
            }
        })?;
        self.len += bytes.len() as u64;
        Ok(())
    }

    /// Bytes written so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A reader of the whole content, from the start.
    pub(crate) async fn reader(&mut self) -> Result<tokio::fs::File> {
        self.file
            .flush()
            .await
            .map_err(|e| io_error("flush spool file", e))?;
        let mut f = self
            .file
            .try_clone()
            .await
            .map_err(|e| io_error("reopen spool file", e))?;
        f.seek(SeekFrom::Start(0))
            .await
            .map_err(|e| io_error("rewind spool file", e))?;
        Ok(f)
    }
}

fn io_error(operation: &str, e: std::io::Error) -> Error {
    Error::Engine {
        operation: operation.into(),
        status: None,
        message: e.to_string(),
    }
}
