//! How long a request waits before asking its server: for the server's "loaded" signal of its
//! [`Ready`] kind, and for a [`Ready::Settle`] server's first sign of having loaded a
//! document — noting when none came, so the bundle says `meta.readiness: "unknown"`.

use super::Cx;
use crate::config::Ready;
use crate::error::Result;

impl Cx<'_> {
    /// After a document (`uri`) was opened: wait (bounded) for servers that load the project
    /// on the first `didOpen` and answer partially until then (tsserver, clangd's index, gopls,
    /// rust-analyzer, bash-language-server), and for a [`Ready::Settle`] server's first sign of
    /// having loaded the document. Pyright answers single-file requests at once, and its
    /// commands wait where they need the whole project.
    pub async fn wait_opened(&mut self, uri: Option<&str>) -> Result<()> {
        match self.server.def.ready {
            Ready::Progress | Ready::ServerStatus | Ready::LogLine => {
                self.wait_ready().await?;
            }
            Ready::Settle => {
                self.wait_settled(uri).await?;
            }
            Ready::ProjectLog | Ready::Initialized => {}
        }
        Ok(())
    }

    /// Wait (bounded by the timeout) until the server has loaded the project.
    pub async fn wait_ready(&mut self) -> Result<bool> {
        if self.server.def.ready == Ready::Settle {
            return self.wait_settled(None).await;
        }
        let timeout = self.ground.opts.timeout;
        self.session().await?.wait_ready(timeout).await
    }

    /// A [`Ready::Settle`] server's first sign of having loaded `uri` (or anything), bounded by
    /// [`crate::languages::SETTLE_BOUND`]; without it the bundle is marked (`unsure`).
    async fn wait_settled(&mut self, uri: Option<&str>) -> Result<bool> {
        let bound = self.ground.opts.timeout.min(crate::languages::SETTLE_BOUND);
        let settled = self.session().await?.wait_settled(uri, bound).await?;
        self.server.unsure |= !settled;
        Ok(settled)
    }

    /// Whether a request on this server was answered without knowing it was ready (cleared):
    /// for a command that merges another server's answer into its own.
    pub fn take_unsure(&mut self) -> bool {
        std::mem::take(&mut self.server.unsure)
    }

    /// Mark the request being answered as given without knowing the server was ready.
    pub fn mark_unsure(&mut self, unsure: bool) {
        self.server.unsure |= unsure;
    }
}
