//! The base, ready before the agent asks: while no request runs, the daemon applies the
//! file-system events it has received (outside writes; its own writes update the index and
//! the server as they are made, [`crate::workspace::Workspace::wrote`]), tells its server,
//! and pulls the diagnostics of the files a next `check --patch` or verified write
//! would pull in the view before its change — the changed Python files, the documents the
//! session has open (the files earlier checks touched) and the importers of both — so that
//! check finds them already computed by the server and memoized under the current view
//! ([`crate::lsp::view`]), and pays only for the changed view.
//!
//! The Python file a request's selector resolved in (`source`, `hover`, `def`, … — an agent
//! reads a file before it edits it) is queued too, then its importers when there are at most
//! [`READ_IMPORTERS`] (once the scan of the workspace's imports, off the daemon's thread, has
//! found them): its first check by the server, and the importers' diagnostics in the view
//! before a change, which a verified write of it would pay when it re-checks them, are made
//! while the agent thinks. (The refresh after that write pulls the same importers, the file
//! being open then.)
//!
//! A refresh is only a head start: every request still syncs the index and tells the server
//! before it answers ([`super::Daemon::prepare`]), and a pull asks the server the question a
//! check would ask of the same view, so the answers are the bytes they would be without it.
//! It pulls one file at a time and gives way as soon as a request arrives: the pull in flight
//! is cancelled (`$/cancelRequest`) and queued again first. A Python file the server does not
//! have open is opened, with its text on disk, as a check of it would open it.
//! `LANSER_DAEMON_REFRESH=off` (when the daemon starts) turns it off, for measuring.

use super::{Daemon, Engine};
use crate::workspace::index::Changes;
use crate::workspace::path_to_uri;
use std::cell::{Cell, RefCell};
use std::collections::{BTreeSet, VecDeque};
use std::time::{Duration, Instant};

/// The environment variable that turns the background refresh off (`off` or `0`).
pub const REFRESH_ENV: &str = "LANSER_DAEMON_REFRESH";
/// How often an idle daemon looks for events.
const TICK: Duration = Duration::from_millis(200);
/// The most importers of a file read that the refresh pulls: a module imported more widely
/// (Django's busiest have hundreds) is read far more often than written, and its importers
/// are pulled by the refresh after a write of it.
const READ_IMPORTERS: usize = 64;

/// What is left to pull, and what was done.
pub(super) struct Refresh {
    on: bool,
    queue: RefCell<VecDeque<String>>,
    pulled: Cell<u64>,
    /// A pull is in flight.
    busy: Cell<bool>,
    rounds: Cell<u64>,
    last_ms: Cell<Option<u64>>,
    started: Cell<Option<Instant>>,
    /// What the refresh told the server since the last request (that request's `synced`).
    absorbed: RefCell<Changes>,
    /// Rung when a connection ends: its write's events are applied at once.
    woken: tokio::sync::Notify,
    /// Rung when a request needs the server: the pull in flight gives way.
    arrived: tokio::sync::Notify,
    /// The Python files requests' selectors resolved in since the last step.
    looked_at: RefCell<BTreeSet<String>>,
    /// The scans for the importers of files looked at, not yet queued.
    scans: RefCell<Vec<tokio::task::JoinHandle<Vec<String>>>>,
}

impl Refresh {
    pub(super) fn from_env() -> Refresh {
        Refresh {
            on: std::env::var(REFRESH_ENV).map_or(true, |v| v != "off" && v != "0"),
            queue: RefCell::default(),
            pulled: Cell::new(0),
            busy: Cell::new(false),
            rounds: Cell::new(0),
            last_ms: Cell::new(None),
            started: Cell::new(None),
            absorbed: RefCell::default(),
            woken: tokio::sync::Notify::new(),
            arrived: tokio::sync::Notify::new(),
            looked_at: RefCell::default(),
            scans: RefCell::default(),
        }
    }

    /// What `lanser daemon status` shows.
    pub(super) fn status(&self) -> serde_json::Value {
        serde_json::json!({
            "on": self.on,
            "pending": self.queue.borrow().len()
                + self.scans.borrow().len()
                + usize::from(self.busy.get()),
            "pulled": self.pulled.get(),
            "rounds": self.rounds.get(),
            "lastRoundMs": self.last_ms.get(),
        })
    }

    /// `synced` and what the refresh told the server since the last call: what a request's
    /// `meta.timing.daemon.synced` names (everything synced since the answer before).
    pub(super) fn with_absorbed(&self, synced: Changes) -> Changes {
        let mut all = self.absorbed.take();
        if all.is_empty() {
            return synced;
        }
        all.created.extend(synced.created);
        all.changed.extend(synced.changed);
        all.deleted.extend(synced.deleted);
        for l in [&mut all.created, &mut all.changed, &mut all.deleted] {
            l.sort();
            l.dedup();
        }
        all
    }

    /// A connection ended.
    pub(super) fn wake(&self) {
        self.woken.notify_one();
    }

    /// A request is about to ask the server: a pull in flight is cancelled.
    pub(super) fn give_way(&self) {
        self.arrived.notify_waiters();
    }

    /// A request's selector resolved in `rel` (workspace-relative): a Python file is pulled
    /// in the next step, if the server has no answer for it in the current view.
    pub(super) fn looked_at(&self, rel: &str) {
        if self.on && (rel.ends_with(".py") || rel.ends_with(".pyi")) {
            self.looked_at.borrow_mut().insert(rel.to_string());
        }
    }

    /// Queue `files` (those not queued yet), in order.
    fn push(&self, files: impl IntoIterator<Item = String>) {
        let mut q = self.queue.borrow_mut();
        let queued: BTreeSet<String> = q.iter().cloned().collect();
        let mut seen = BTreeSet::new();
        for f in files {
            if !queued.contains(&f) && seen.insert(f.clone()) {
                q.push_back(f);
            }
        }
        if !q.is_empty() && self.started.get().is_none() {
            self.started.set(Some(Instant::now()));
        }
    }

    fn pop(&self) -> Option<String> {
        self.queue.borrow_mut().pop_front()
    }

    /// A round ended: the queue is empty.
    fn done(&self) {
        if let Some(t) = self.started.take() {
            self.rounds.set(self.rounds.get() + 1);
            self.last_ms.set(Some(t.elapsed().as_millis() as u64));
        }
    }
}

/// Refresh in the background until the daemon stops (the task is dropped with it).
pub(super) async fn run(d: std::rc::Rc<Daemon>) {
    if !d.refresh.on {
        return;
    }
    // Keep what lanser writes from now on.
    d.ws.take_written();
    loop {
        // After a request, wait for every event written before now (its own write's); on a
        // tick, take the events received.
        let woken = tokio::select! {
            _ = d.refresh.woken.notified() => true,
            _ = tokio::time::sleep(TICK) => false,
        };
        if d.active.get() > 0 {
            continue;
        }
        let Ok(mut engine) = d.engine.try_lock() else {
            continue;
        };
        d.refresh_step(&mut engine, woken).await;
    }
}

impl Daemon {
    /// Apply the events (all written before now, with `wait`), queue what they change, and pull
    /// queued files until a request arrives or none is left.
    async fn refresh_step(&self, engine: &mut Engine, wait: bool) {
        if engine.orch.is_none() {
            return;
        }
        let changes = match engine.watch.as_mut() {
            Some(w) if wait => w.sync(&mut self.ws.index()),
            Some(w) => w.poll(&mut self.ws.index()),
            None => return,
        };
        if !changes.is_empty() {
            let synced = self.absorb(engine, &changes);
            self.queue_after(engine, &synced);
            let mut a = self.refresh.absorbed.borrow_mut();
            a.created.extend(synced.created);
            a.changed.extend(synced.changed);
            a.deleted.extend(synced.deleted);
        }
        // lanser's own writes: the index and the server were brought up to date by the write.
        let written = self.ws.take_written().sources();
        self.queue_after(engine, &written);
        self.queue_looked_at(engine);
        self.queue_scanned().await;
        while self.active.get() == 0 {
            let Some(rel) = self.refresh.pop() else {
                self.refresh.done();
                return;
            };
            let Some(session) = engine.orch.as_ref().and_then(|o| o.session()) else {
                return;
            };
            if session.is_closed() || !session.pulls() {
                self.refresh.queue.borrow_mut().clear();
                return;
            }
            let uri = path_to_uri(&self.ws.root.join(&rel));
            // A failure (a file gone meanwhile, a timeout) is the next request's to meet; a
            // request arriving cancels the pull (dropping it tells the server).
            let arrived = self.refresh.arrived.notified();
            tokio::pin!(arrived);
            arrived.as_mut().enable();
            self.refresh.busy.set(true);
            let pulled = tokio::select! {
                r = session.pull_diagnostics(&uri) => Some(r.is_ok()),
                _ = &mut arrived => None,
            };
            self.refresh.busy.set(false);
            match pulled {
                Some(true) => self.refresh.pulled.set(self.refresh.pulled.get() + 1),
                Some(false) => {}
                None => {
                    self.refresh.queue.borrow_mut().push_front(rel);
                    return;
                }
            }
        }
    }

    /// Queue the Python files requests looked at (opened as a check opens them), alone.
    fn queue_looked_at(&self, engine: &Engine) {
        let looked: Vec<String> = std::mem::take(&mut *self.refresh.looked_at.borrow_mut())
            .into_iter()
            .collect();
        if looked.is_empty() {
            return;
        }
        let Some(session) = engine.orch.as_ref().and_then(|o| o.session()) else {
            return;
        };
        if !session.pulls() {
            return;
        }
        // A workspace file only (a selector may resolve in typeshed or site-packages).
        let found: Vec<String> = looked
            .into_iter()
            .filter(|r| !r.contains("://") && self.open_on_disk(session, r))
            .collect();
        // A write of the file would ask who imports it: the workspace's imports are scanned
        // now, off the daemon's thread, and kept per file while unchanged (on Django, 0.35 s
        // the first write paid; later asks only look at each file's metadata). The importers
        // found are queued after the files, in a later step ([`Self::queue_scanned`]).
        let (ws, files) = (self.ws.clone(), found.clone());
        self.refresh.push(found);
        if !files.is_empty() {
            let scan = tokio::task::spawn_blocking(move || {
                crate::python::importers::importers(&ws, &files)
            });
            self.refresh.scans.borrow_mut().push(scan);
        }
    }

    /// Queue the importers the scans that have ended found.
    async fn queue_scanned(&self) {
        let ended: Vec<_> = {
            let mut scans = self.refresh.scans.borrow_mut();
            let (ended, running): (Vec<_>, Vec<_>) = std::mem::take(&mut *scans)
                .into_iter()
                .partition(|s| s.is_finished());
            *scans = running;
            ended
        };
        for scan in ended {
            match scan.await {
                Ok(importers) if importers.len() <= READ_IMPORTERS => self.refresh.push(importers),
                _ => {}
            }
        }
    }

    /// Open `rel` in `session` with its text on disk, as a check of it would, unless it is
    /// open already; whether it is open now.
    fn open_on_disk(&self, session: &crate::lsp::session::Session, rel: &str) -> bool {
        let abs = self.ws.root.join(rel);
        let uri = path_to_uri(&abs);
        if session.is_open(&uri) {
            return true;
        }
        match crate::document::Document::load(abs, rel.to_string()) {
            Ok(doc) => {
                session.sync_document(&uri, &doc);
                true
            }
            Err(_) => false,
        }
    }

    /// Queue the files a check would pull before its change, after `synced` (the sources a
    /// sync told the server about): the changed Python files (opened as a check opens them),
    /// the open documents, and the importers of both.
    pub(super) fn queue_after(&self, engine: &Engine, synced: &Changes) {
        if !self.refresh.on || synced.is_empty() {
            return;
        }
        let Some(session) = engine.orch.as_ref().and_then(|o| o.session()) else {
            return;
        };
        if !session.pulls() {
            return;
        }
        let python = |p: &&String| p.ends_with(".py") || p.ends_with(".pyi");
        let changed: Vec<String> = synced
            .created
            .iter()
            .chain(&synced.changed)
            .filter(python)
            .cloned()
            .collect();
        for rel in &changed {
            self.open_on_disk(session, rel);
        }
        let open: Vec<String> = session
            .open_documents()
            .iter()
            .filter_map(|u| crate::workspace::uri_to_path(u).and_then(|p| self.ws.relative(&p)))
            .filter(|p| python(&p))
            .collect();
        let mut targets: Vec<String> = changed.clone();
        targets.extend(synced.deleted.iter().filter(python).cloned());
        targets.extend(open.iter().cloned());
        targets.sort();
        targets.dedup();
        let importers = crate::python::importers::importers(&self.ws, &targets);
        self.refresh
            .push(changed.into_iter().chain(open).chain(importers));
    }
}
