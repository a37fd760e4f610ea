//! A channel command's output as the engine path's framed stream
//! ([`crate::exec::launch::ExecOutputStream`]), so the buffered exec and the streaming spawn
//! read it with the same code. Taking a chunk grants the helper that many bytes of credit
//! (`CREDIT`), so a reader that stops reading stops the command's output in the container
//! after [`berth_agent::protocol::INITIAL_CREDIT`] bytes per stream. Dropping the stream
//! before the command ended (a timeout, an abort) sends `KILL`: the helper kills the command's
//! process group and drops the rest of its output.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use berth_agent::protocol;
use bollard::container::LogOutput;
use futures_util::Stream;
use tokio::sync::mpsc;

use crate::exec::channel::conn::Credit;

/// One output item, as the engine path's stream yields it.
pub(crate) type Item = std::result::Result<LogOutput, bollard::errors::Error>;

/// The output of one command on a channel.
pub(crate) struct CommandOutput {
    id: u32,
    rx: mpsc::UnboundedReceiver<Item>,
    writer: mpsc::UnboundedSender<Vec<u8>>,
    credit: Arc<Credit>,
    ended: bool,
}

impl CommandOutput {
    /// The output of command `id`, whose frames arrive on `rx`; `writer` reaches the helper;
    /// `credit` is what the channel's reader lets the helper send (granted here, taken there).
    pub(crate) fn new(
        id: u32,
        rx: mpsc::UnboundedReceiver<Item>,
        writer: mpsc::UnboundedSender<Vec<u8>>,
        credit: Arc<Credit>,
    ) -> Self {
        CommandOutput {
            id,
            rx,
            writer,
            credit,
            ended: false,
        }
    }

    fn send(&self, kind: u8, payload: &[u8]) {
        let mut f = Vec::with_capacity(protocol::HEADER_BYTES + payload.len());
        protocol::frame(&mut f, self.id, kind, payload);
        let _ = self.writer.send(f);
    }
}

impl Stream for CommandOutput {
    type Item = Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Item>> {
        let item = match self.rx.poll_recv(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(item) => item,
        };
        match &item {
            Some(Ok(LogOutput::StdOut { message })) => {
                self.grant(protocol::WHICH_STDOUT, message.len())
            }
            Some(Ok(LogOutput::StdErr { message })) => {
                self.grant(protocol::WHICH_STDERR, message.len())
            }
            Some(_) => {}
            None => self.ended = true,
        }
        Poll::Ready(item)
    }
}

impl CommandOutput {
    fn grant(&self, which: u8, n: usize) {
        // Counted before it is sent, so the reader never refuses what the helper was allowed.
        self.credit.grant(which, n);
        let mut payload = vec![which];
        payload.extend_from_slice(&(n as u32).to_le_bytes());
        self.send(protocol::CREDIT, &payload);
    }
}

impl Drop for CommandOutput {
    fn drop(&mut self) {
        if !self.ended {
            self.send(protocol::KILL, &[]);
        }
    }
}
