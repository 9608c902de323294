//! The choice among servers: every server of one workspace, by name — the home server (`--server`,
//! lanser.toml's default, else Pyright) and those requests were routed to by their file's type
//! (`commands::route`) — each made on first need from the configuration, started when first
//! asked, and kept warm. Which server a request goes to depends on the request and the
//! configuration alone, never on which servers earlier requests started: the daemon, batch and
//! MCP answer it as a one-shot CLI call does.

use super::parts::{Ground, Server};
use crate::error::Result;
use crate::lsp::session::Session;
use std::collections::BTreeMap;

/// The servers of one workspace (see the module's documentation).
pub struct Router {
    /// The server a request goes to when its file's type names no other.
    home: String,
    servers: BTreeMap<String, Server>,
}

impl Router {
    /// A router whose home is `home`.
    pub(super) fn new(home: Server) -> Router {
        let name = home.def.name.clone();
        Router {
            home: name.clone(),
            servers: BTreeMap::from([(name, home)]),
        }
    }

    /// The home server's name.
    pub fn home(&self) -> &str {
        &self.home
    }

    /// A server already made.
    pub(super) fn get(&self, name: &str) -> Option<&Server> {
        self.servers.get(name)
    }

    /// A server already made, to start or ask.
    pub(super) fn get_mut(&mut self, name: &str) -> Option<&mut Server> {
        self.servers.get_mut(name)
    }

    /// The home server.
    pub(super) fn home_server(&self) -> &Server {
        &self.servers[&self.home]
    }

    /// The home server, to start or ask.
    pub(super) fn home_mut(&mut self) -> &mut Server {
        self.servers
            .get_mut(&self.home)
            .expect("the home server is made with the router")
    }

    /// Server `name`, made on first need from `ground`'s configuration (not started: its
    /// first request starts it). An unknown name is the configuration's error.
    pub(super) fn open(&mut self, ground: &Ground, name: &str) -> Result<&mut Server> {
        if !self.servers.contains_key(name) {
            let def = ground.config.select(Some(name))?.clone();
            self.servers
                .insert(name.to_string(), Server::new(&ground.ws, def));
        }
        Ok(self.servers.get_mut(name).expect("made above"))
    }

    /// Every running session: the home server's first, then the others by name.
    pub fn sessions(&self) -> Vec<&Session> {
        self.running().filter_map(Server::session).collect()
    }

    /// Every server with a session: the home server first, then the others by name.
    pub(super) fn running(&self) -> impl Iterator<Item = &Server> {
        let home = std::iter::once(self.home_server());
        let others = self
            .servers
            .iter()
            .filter(|(name, _)| **name != self.home)
            .map(|(_, s)| s);
        home.chain(others).filter(|s| s.session.is_some())
    }

    /// Every server made, to reconfigure or close.
    pub(super) fn servers_mut(&mut self) -> impl Iterator<Item = &mut Server> {
        self.servers.values_mut()
    }

    /// Take every server out (to close them), leaving none.
    pub(super) fn take_all(&mut self) -> Vec<Server> {
        std::mem::take(&mut self.servers).into_values().collect()
    }

    /// Another router over the same workspace `ws`, sharing every running session (batch
    /// `--jobs`: requests in flight side by side); a server not yet made there is made anew.
    pub(super) fn fork(&self, ws: &crate::workspace::Workspace) -> Router {
        let servers = self
            .servers
            .iter()
            .filter(|(name, s)| **name == self.home || s.session.is_some())
            .map(|(name, s)| (name.clone(), s.fork(ws)))
            .collect();
        Router {
            home: self.home.clone(),
            servers,
        }
    }
}
