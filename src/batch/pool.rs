//! The server sessions behind `lanser batch --jobs N --servers K`
//! (docs/batch.md#concurrency-and-sessions): K independent
//! sessions ("lanes"), each a full [`Orchestrator`] with a server process of its own, and forks
//! of each so that several requests are in flight per session.
//!
//! Pyright answers one request at a time, so forks of one session only pipeline; separate
//! sessions answer in parallel. Lane 0 is the batch's own orchestrator, started before the
//! first request; the other lanes start in the background and join the pool as soon as their
//! handshake is done, so their project load overlaps the first answers (measured against
//! waiting for all of them up front on benches/bench_batch.sh: 13.7 and 14.9 s against 15.2
//! and 15.5 s). Every lane goes
//! through the orchestrator's own readiness wait (`wait_ready` on its own session) before
//! cross-file answers. A request goes to the lane with the fewest requests in flight.
//!
//! Every session analyses the project on its own, and one Pyright session already keeps more
//! than one core busy: more sessions pay only where cores are idle (on 2 shared cores,
//! benches/bench_batch.sh measured `--servers 2` slower than `--servers 1`).
//!
//! Requests that change what a server sees run alone on lane 0 (see `batch`). When one of them
//! writes files (`--apply`), every other lane is then told what changed on disk, the way the
//! daemon keeps its session fresh ([`crate::lsp::changes::apply`]); a `reload` hands its re-read
//! configuration to every lane.
//!
//! A session's answers can depend on what it did before: Pyright finds the type definition of
//! an imported module (`import tarfile`) only once the importing file has been checked, which
//! pulling its diagnostics does. So a `diag` runs alone on every lane at once, leaving every
//! session as far checked as one session running the whole batch would be. Not mirrored: the
//! files that speculative requests (`check`, rename previews) and `--prev-bundle` check on the
//! one lane they run on.

use crate::bundle::Bundle;
use crate::commands::Execute;
use crate::commands::Op;
use crate::commands::Request;
use crate::lsp::changes;
use crate::orchestrator::Orchestrator;
use crate::workspace::index::Changes;
use serde_json::{json, Value};
use tokio::task::JoinHandle;

/// An orchestrator taken from the pool for one request.
pub struct Worker {
    lane: usize,
    pid: Option<u32>,
    pub orch: Orchestrator,
}

impl Worker {
    /// Run `request`; with `--timing`, `meta.timing.batch` names the session that answered.
    pub async fn execute(&mut self, request: &Request) -> Bundle {
        let mut bundle = self.orch.execute(request).await;
        tag(&mut bundle, self.lane, self.pid);
        bundle
    }
}

struct Lane {
    /// The orchestrator that owns this lane's session; `None` for lane 0 (the batch's own).
    owner: Option<Orchestrator>,
    idle: Vec<Orchestrator>,
    in_flight: usize,
    pid: Option<u32>,
}

/// A started lane: its owner, its forks, its server's pid.
type Started = (Orchestrator, Vec<Orchestrator>, Option<u32>);

/// The lanes of one batch.
#[derive(Default)]
pub struct Pool {
    lanes: Vec<Lane>,
    starting: Vec<JoinHandle<Option<Started>>>,
}

impl Pool {
    /// With `jobs > 1`: start `orch`'s session (lane 0) and `servers - 1` more in the
    /// background, each with `jobs` forks. With `jobs == 1` the pool stays empty and every
    /// request runs on `orch` itself.
    pub async fn start(orch: &mut Orchestrator, jobs: usize, servers: usize) -> Pool {
        let mut pool = Pool::default();
        if jobs <= 1 || orch.ensure_session().await.is_err() {
            return pool;
        }
        let (idle, pid) = forks(orch, jobs).await;
        pool.lanes.push(Lane {
            owner: None,
            idle,
            in_flight: 0,
            pid,
        });
        for _ in 1..servers.clamp(1, jobs) {
            let mut sibling = orch.sibling().await;
            pool.starting.push(tokio::spawn(async move {
                sibling.ensure_session().await.ok()?;
                let (idle, pid) = forks(&mut sibling, jobs).await;
                Some((sibling, idle, pid))
            }));
        }
        pool
    }

    /// Whether a request with `op` must run alone, on every session (see [`broadcast`]).
    pub fn everywhere_op(&self, op: &Op) -> bool {
        self.sessions() > 1 && broadcast(op)
    }

    /// Sessions running or starting, lane 0 included.
    pub fn sessions(&self) -> usize {
        self.lanes.len() + self.starting.len()
    }

    /// An idle fork of the least busy lane; `None` when every fork is busy (or `jobs == 1`).
    pub async fn take(&mut self) -> Option<Worker> {
        self.poll_started().await;
        let (lane, l) = self
            .lanes
            .iter_mut()
            .enumerate()
            .filter(|(_, l)| !l.idle.is_empty())
            .min_by_key(|(i, l)| (l.in_flight, *i))?;
        l.in_flight += 1;
        let orch = l.idle.pop()?;
        Some(Worker {
            lane,
            pid: l.pid,
            orch,
        })
    }

    /// Hand a worker back after its request.
    pub fn give(&mut self, w: Worker) {
        let lane = &mut self.lanes[w.lane];
        lane.in_flight -= 1;
        lane.idle.push(w.orch);
    }

    /// Run a request that must not overlap with any other on `orch` (lane 0), once nothing is
    /// in flight; afterwards every other lane sees what it wrote and what it reloaded.
    pub async fn run_alone(&mut self, orch: &mut Orchestrator, request: &Request) -> Bundle {
        let writes = request.op.writes_files();
        let reload = request.op.reconfigures();
        let others = self.sessions() > 1;
        let everywhere = self.everywhere_op(&request.op);
        if others && (writes || reload || everywhere) {
            // A lane still starting could read the disk before the write and never hear of it,
            // or miss a broadcast request.
            self.join_all().await;
        }
        // What the write changes, for the other sessions: the index's hashes before and after
        // (the write itself brings the shared index up to date, so a rescan alone would find
        // nothing to tell them).
        let before = match others && writes {
            true => orch.ws().index().hashes(),
            false => Vec::new(),
        };
        let mut bundle = match everywhere {
            true => self.everywhere(orch, request).await,
            false => orch.execute(request).await,
        };
        if others && writes {
            let after = {
                let mut index = orch.ws().index();
                index.rescan();
                index.hashes()
            };
            let changes = Changes::between(&before, &after).sources();
            if !changes.is_empty() {
                for lane in &self.lanes {
                    for session in lane.owner.iter().flat_map(|o| o.sessions()) {
                        changes::apply(session, orch.ws(), &changes);
                    }
                }
            }
        }
        if reload {
            for lane in &mut self.lanes {
                if let Some(owner) = &mut lane.owner {
                    owner.adopt_config(orch, true);
                }
                for fork in &mut lane.idle {
                    fork.adopt_config(orch, false);
                }
            }
        }
        if bundle.meta.timing.is_some() {
            let pid = match orch.session() {
                Some(s) => s.server_pid().await,
                None => None,
            };
            tag(&mut bundle, 0, pid);
        }
        bundle
    }

    /// Run `request` on every lane at once; lane 0's answer is the one kept (they are equal).
    async fn everywhere(&mut self, orch: &mut Orchestrator, request: &Request) -> Bundle {
        let mut others = Vec::new();
        for (i, lane) in self.lanes.iter_mut().enumerate() {
            if let Some(mut owner) = lane.owner.take() {
                let request = request.clone();
                others.push((
                    i,
                    tokio::spawn(async move {
                        owner.execute(&request).await;
                        owner
                    }),
                ));
            }
        }
        let bundle = orch.execute(request).await;
        for (i, h) in others {
            // A lane whose task failed keeps no owner; its forks fail like its session did.
            self.lanes[i].owner = h.await.ok();
        }
        bundle
    }

    /// Stop every lane's server but lane 0's (its owner closes it).
    pub async fn close(mut self) {
        for h in &self.starting {
            h.abort();
        }
        self.join_all().await;
        for lane in self.lanes {
            drop(lane.idle);
            if let Some(owner) = lane.owner {
                owner.close().await;
            }
        }
    }

    async fn poll_started(&mut self) {
        let mut i = 0;
        while i < self.starting.len() {
            if self.starting[i].is_finished() {
                let h = self.starting.swap_remove(i);
                self.add(h.await.ok().flatten());
            } else {
                i += 1;
            }
        }
    }

    /// Wait until every lane has started (or failed to).
    async fn join_all(&mut self) {
        for h in std::mem::take(&mut self.starting) {
            self.add(h.await.ok().flatten());
        }
    }

    fn add(&mut self, started: Option<Started>) {
        if let Some((owner, idle, pid)) = started {
            self.lanes.push(Lane {
                owner: Some(owner),
                idle,
                in_flight: 0,
                pid,
            });
        }
    }
}

/// Requests whose effect on a session outlives them and changes later answers, so every
/// session runs them: pulling a file's diagnostics has Pyright check it, and some answers
/// depend on that (a type definition of an imported module is found only in a checked file).
fn broadcast(op: &Op) -> bool {
    op.every_session()
}

async fn forks(orch: &mut Orchestrator, n: usize) -> (Vec<Orchestrator>, Option<u32>) {
    let mut idle = Vec::with_capacity(n);
    for _ in 0..n {
        idle.push(orch.fork().await);
    }
    let pid = match orch.session() {
        Some(s) => s.server_pid().await,
        None => None,
    };
    (idle, pid)
}

/// With `--timing`: `meta.timing.batch` = the lane that answered and its server's pid
/// (volatile, outside the hash domain like the rest of `meta.timing`).
fn tag(bundle: &mut Bundle, lane: usize, pid: Option<u32>) {
    if let Some(Value::Object(t)) = bundle.meta.timing.as_mut() {
        t.insert("batch".into(), json!({"session": lane, "serverPid": pid}));
    }
}
