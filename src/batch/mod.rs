//! `lanser batch --in F --out F [--jobs N] [--servers K]` (docs/batch.md): JSONL requests
//! in, one bundle per request out, in input order.
//!
//! A request line is `{"id"?, "cmd", "selector"?, "args"?}`: `cmd` is a subcommand name and
//! `args` its own flags by long name (positionals by name: `file`, `targets`), so every
//! subcommand the CLI has is batchable without a table here; the line is turned into the
//! subcommand's argv and parsed by clap. A line that is not a request becomes an error bundle
//! (E/USAGE) naming its line number, and the batch goes on. Blank lines are skipped.
//!
//! Up to `--jobs` requests are in flight at once, spread over `--servers` independent server
//! sessions (default 1: on 2 cores a second session measured slower; see `pool`), each request on a fork of its
//! session's orchestrator. The bytes do not depend on either number. Requests that change what
//! a server sees (speculative edits, `--apply`, `reload`) wait for everything in flight and
//! run alone on the first session; the others are then told what changed. A `diag` runs alone
//! on every session (checking a file changes some later answers). With
//! `--trace-file` there is one session: a trace records, and its replay serves, the frames of
//! one server. A request identical to one in flight is coalesced with it
//! (single-flight); a repeat of a finished one is served from the memo only when the workspace
//! digest (the content hashes of the files the server reads) has not changed since the answer:
//! the digest is taken once up front and again at each repeat, and any change it shows
//! invalidates every answer given before it, so an edit between lines is never answered from
//! the memo and lines that repeat nothing cost no scan.
//!
//! Unless `--no-daemon` or `--trace-file`, [`crate::daemon::batch`] answers the batch instead,
//! through the workspace's warm daemon, which parses each line with the same [`LineParser`]
//! and writes the same bytes through the same [`Output`]. [`run_lines`] is the in-process
//! path: opted out, traced, or no daemon to be had.

mod io;
mod line;
pub mod pool;

pub use io::{py_modules, Output, Source};
pub use line::{request_line, BadLine, LineParser};

use crate::batch::pool::{Pool, Worker};
use crate::bundle::{Bundle, RequestEcho};
use crate::cli::Cli;
use crate::commands::Request;
use crate::error::{LanserError, Result};
use crate::exit::ExitStatus;
use crate::orchestrator::Orchestrator;
use crate::workspace::watch::Watch;
use serde_json::Map;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// One answered line.
pub struct Answer {
    /// 1-based line number in the input.
    pub line: usize,
    pub input: String,
    pub bundle: Bundle,
    /// Served by single-flight or the memo.
    pub memo: bool,
}

type Cell = Arc<Mutex<Option<Bundle>>>;

enum Work {
    Done(Box<Bundle>),
    Running(tokio::task::JoinHandle<(Worker, Bundle)>),
    /// The answer of an earlier line with the same request.
    Same(Cell),
    /// Only while [`settle`] swaps a running request for its answer.
    Settling,
}

struct Slot {
    line: usize,
    input: String,
    work: Work,
    /// Where this line's answer is shared with later identical lines.
    cell: Option<Cell>,
}

struct MemoEntry {
    /// [`Changes::seen`] when the request was taken.
    epoch: u64,
    cell: Cell,
}

/// The workspace index's generation, brought up to date before a repeat is served (and before
/// a line that reads the file set) and taken as each new entry's epoch. The tree is scanned
/// once; file-system events are watched from the first such look on (a batch of distinct
/// lines never pays for watching), which walks the tree again first. A repeat is served only
/// when the generation has not moved since its entry was taken — an edit undone between two
/// lines included, since the index saw the edit. Entries taken before the watch started have
/// no epoch the index can vouch for (an edit and its undo both fall between two scans), so
/// they are never served: [`UNWATCHED`].
#[derive(Default)]
struct Changes {
    watch: Option<Watch>,
}

impl Changes {
    /// The index's generation, everything written before now seen (a cookie round trip, or
    /// the rescan that starts the watch).
    fn sync(&mut self, ws: &crate::workspace::Workspace) -> u64 {
        let mut index = ws.index();
        match self.watch.as_mut() {
            Some(w) => {
                w.sync(&mut index);
            }
            None => {
                index.rescan();
                self.watch = Some(Watch::start(&ws.root, &index));
            }
        }
        index.generation()
    }

    /// The index's generation as of the events received so far (no wait): an epoch for a
    /// new entry, which can only be older than the truth, so a repeat runs again rather
    /// than being served stale.
    fn seen(&mut self, ws: &crate::workspace::Workspace) -> u64 {
        let Some(w) = self.watch.as_mut() else {
            return UNWATCHED;
        };
        let mut index = ws.index();
        w.poll(&mut index);
        index.generation()
    }
}

/// The epoch of an entry taken while nothing watched the tree: equal to no generation.
const UNWATCHED: u64 = u64::MAX;

/// Wait for every running request of the window (their answers stay in order in the window).
async fn settle(window: &mut VecDeque<Slot>, pool: &mut Pool) -> Result<()> {
    for slot in window.iter_mut() {
        if matches!(slot.work, Work::Running(_)) {
            let Work::Running(handle) = std::mem::replace(&mut slot.work, Work::Settling) else {
                unreachable!("matched above");
            };
            let (worker, bundle) = handle
                .await
                .map_err(|e| LanserError::internal("a batch worker failed").with_source(e))?;
            pool.give(worker);
            slot.work = Work::Done(Box::new(bundle));
        }
    }
    Ok(())
}

enum Next {
    Line(Option<String>),
    /// The window's oldest answer is ready.
    Front,
}

/// The next input line, or [`Next::Front`] as soon as the window's oldest request (the window
/// is not empty) has its answer — whichever comes first. Nothing is lost either way: reading a
/// line is cancel-safe, and a finished request becomes `Work::Done` in its slot.
async fn next_or_front(
    window: &mut VecDeque<Slot>,
    pool: &mut Pool,
    source: &mut Source,
) -> Result<Next> {
    let Some(front) = window.front_mut() else {
        return Ok(Next::Line(source.next().await?));
    };
    let Work::Running(handle) = &mut front.work else {
        return Ok(Next::Front);
    };
    let finished = tokio::select! {
        line = source.next() => return Ok(Next::Line(line?)),
        done = handle => done.map_err(|e| LanserError::internal("a batch worker failed").with_source(e))?,
    };
    let (worker, bundle) = finished;
    pool.give(worker);
    front.work = Work::Done(Box::new(bundle));
    Ok(Next::Front)
}

/// Run every line of `source`, handing each answer to `sink` in input order, with up to
/// `jobs` requests in flight over up to `servers` server sessions (one while tracing or
/// replaying). Returns the exit status: success, or the first failing line's.
pub async fn run_lines(
    orch: &mut Orchestrator,
    source: Source,
    jobs: usize,
    servers: usize,
    sink: impl FnMut(Answer) -> Result<()>,
) -> Result<ExitStatus> {
    let jobs = jobs.max(1);
    // A trace records, and its replay serves, the frames of one session.
    let servers = if orch.opts().tap.is_some() || orch.replays() {
        1
    } else {
        servers
    };
    let mut pool = Pool::start(orch, jobs, servers).await;
    let outcome = run_pooled(orch, &mut pool, source, jobs, sink).await;
    pool.close().await;
    outcome
}

async fn run_pooled(
    orch: &mut Orchestrator,
    pool: &mut Pool,
    mut source: Source,
    jobs: usize,
    mut sink: impl FnMut(Answer) -> Result<()>,
) -> Result<ExitStatus> {
    let mut parser = LineParser::default();
    let mut memo = Memo::default();
    let mut window: VecDeque<Slot> = VecDeque::new();
    let (mut line_no, mut eof, mut exit) = (0usize, false, ExitStatus::Success);
    loop {
        while !eof && window.len() < jobs {
            // A harness streaming over stdin may wait for an answer before writing its next
            // line: while waiting for input, hand over the oldest answer as soon as it is ready.
            let next = if source.streams() && !window.is_empty() {
                match next_or_front(&mut window, pool, &mut source).await? {
                    Next::Line(line) => line,
                    Next::Front => break,
                }
            } else {
                source.next().await?
            };
            let Some(text) = next else {
                eof = true;
                break;
            };
            line_no += 1;
            if text.trim().is_empty() {
                continue;
            }
            let (work, cell) = match parser.parse(&text) {
                Err(crate::batch::BadLine { cmd, why }) => {
                    let bundle = line_error(orch, line_no, cmd, &why).await;
                    (Work::Done(Box::new(bundle)), None)
                }
                Ok(request) => match memo.lookup(orch.ws(), &request) {
                    Lookup::Same(cell) => (Work::Same(cell), None),
                    Lookup::New(cell) => {
                        let work = dispatch(orch, pool, &mut window, request).await?;
                        (work, Some(cell))
                    }
                },
            };
            window.push_back(Slot {
                line: line_no,
                input: text,
                work,
                cell,
            });
        }
        let Some(slot) = window.pop_front() else {
            break;
        };
        let (bundle, memo_hit) = finish(slot.work, pool).await?;
        if let Some(cell) = slot.cell {
            *cell.lock().unwrap_or_else(|p| p.into_inner()) = Some(bundle.clone());
        }
        exit = exit.or(bundle.exit_status());
        sink(Answer {
            line: slot.line,
            input: slot.input,
            bundle,
            memo: memo_hit,
        })?;
    }
    Ok(exit)
}

/// The batch memo: a request's answer, shared with later identical lines while the index's
/// generation stays the entry's epoch, under the policy of [`crate::memo`]. An entry is taken
/// when its line starts, before its answer's size is known, so a batch's memo is bounded by
/// its number of entries.
#[derive(Default)]
struct Memo {
    entries: crate::memo::Store<Request, MemoEntry>,
    changes: Changes,
}

enum Lookup {
    /// An earlier identical line's answer (in flight or done) serves this one.
    Same(Cell),
    /// Run it; its answer goes into this cell for later repeats.
    New(Cell),
}

impl Memo {
    fn lookup(&mut self, ws: &crate::workspace::Workspace, request: &Request) -> Lookup {
        let key = request.clone();
        // A write or reload since the entry was made (even one still waiting for an answer
        // ahead in the window) means its answer may no longer hold.
        if request.op.writes_files() || request.op.reconfigures() {
            self.entries.clear();
        }
        // A repeat, and a line that reads the file set (`check`'s importers, `diag`,
        // `rename-file`), see the index as it is now; any other line takes the generation
        // of the events seen so far as its entry's epoch (no wait).
        let repeat = request.op.memoizable() && self.entries.contains(&key);
        let reads_files = request.op.reads_file_set();
        let epoch = match repeat || reads_files {
            true => self.changes.sync(ws),
            false => self.changes.seen(ws),
        };
        if let Some(entry) = self.entries.get(&key).filter(|_| request.op.memoizable()) {
            let reusable = entry.epoch == epoch
                && match &*entry.cell.lock().unwrap_or_else(|p| p.into_inner()) {
                    None => true,
                    Some(b) => crate::memo::keeps(&request.op, b),
                };
            if reusable {
                return Lookup::Same(entry.cell.clone());
            }
        }
        let cell: Cell = Arc::new(Mutex::new(None));
        let entry = MemoEntry {
            epoch,
            cell: cell.clone(),
        };
        self.entries.insert(key, entry, 0);
        Lookup::New(cell)
    }
}

/// Start `request`: on a free worker, or — a speculative or mutating request changes what the
/// server sees (in memory or on disk) while it runs, a reload reconfigures it, a diag is run
/// by every session (see `pool`), and a request for another server goes to its one session —
/// alone, once everything in flight has settled.
async fn dispatch(
    orch: &mut Orchestrator,
    pool: &mut Pool,
    window: &mut VecDeque<Slot>,
    request: Request,
) -> Result<Work> {
    // A line for another server's file type runs on the batch's own orchestrator, which
    // keeps that server's one warm session (`commands::route`), not on a fork of this one's.
    let exclusive = request.op.changes_server_view()
        || request.op.reconfigures()
        || pool.everywhere_op(&request.op)
        || (pool.sessions() > 0
            && crate::commands::route::server_for(&orch.home_ctx(), &request).is_some());
    if exclusive {
        settle(window, pool).await?;
    }
    let worker = match exclusive {
        true => None,
        false => pool.take().await,
    };
    Ok(match worker {
        Some(mut worker) => Work::Running(tokio::spawn(async move {
            let bundle = worker.execute(&request).await;
            (worker, bundle)
        })),
        None => Work::Done(Box::new(pool.run_alone(orch, &request).await)),
    })
}

/// The answer of a slot leaving the window, and whether the memo gave it.
async fn finish(work: Work, pool: &mut Pool) -> Result<(Bundle, bool)> {
    Ok(match work {
        Work::Done(b) => (*b, false),
        Work::Running(handle) => {
            let (worker, bundle) = handle
                .await
                .map_err(|e| LanserError::internal("a batch worker failed").with_source(e))?;
            pool.give(worker);
            (bundle, false)
        }
        Work::Settling => return Err(LanserError::internal("batch slot left settling")),
        Work::Same(cell) => {
            let b = cell.lock().unwrap_or_else(|p| p.into_inner()).clone();
            (
                b.ok_or_else(|| LanserError::internal("memo entry without an answer"))?,
                true,
            )
        }
    })
}

/// `lanser batch`: stream `--in` to `--out`, one bundle per request line.
/// `lanser batch` in this process (`lib.rs` first offers it to the workspace's daemon).
pub async fn main(cli: Cli) -> Result<ExitStatus> {
    run_cli(&cli).await
}

async fn run_cli(cli: &Cli) -> Result<ExitStatus> {
    let crate::cli::Command::Batch {
        input,
        out,
        jobs,
        servers,
    } = &cli.command
    else {
        return Err(LanserError::internal("not a batch command"));
    };
    let mut opts = cli.global.options()?;
    let recorder = crate::trace::recorder::begin(cli.global.trace_file.as_deref(), &mut opts)?;
    let mut orch = Orchestrator::new(opts)?;
    if let Some(r) = &recorder {
        r.header_for(&mut orch, cli.global.trace_sources).await;
    }
    let source = Source::open(input)?;
    let mut output = Output::open(out)?;
    let servers = servers.map_or(1, |k| usize::try_from(k).unwrap_or(usize::MAX));
    // An input file can be read ahead: the modules its py:// lines name are parsed on the
    // other core meanwhile (not while tracing or replaying: a trace is one sequence).
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    if input != "-" && orch.opts().tap.is_none() && !orch.replays() {
        orch.prefetch_parses(io::py_modules(std::path::Path::new(input)), stop.clone());
    }
    let outcome = run_lines(&mut orch, source, *jobs, servers, |a| {
        output.write(a.line, &a.bundle.to_jcs(), &a.bundle)?;
        if let Some(r) = &recorder {
            r.op(a.line, &a.input, a.memo, &a.bundle);
        }
        Ok(())
    })
    .await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    orch.close_at_exit().await;
    if let Some(r) = &recorder {
        r.finish()?;
    }
    let status = outcome?;
    output.report();
    Ok(status)
}

/// The error bundle of line `line` that is not a request (`cmd`: the command it named, if
/// any): the bundle [`run_lines`] writes for it, for whoever else answers a batch line.
pub async fn line_error(orch: &mut Orchestrator, line: usize, cmd: String, why: &str) -> Bundle {
    let echo = RequestEcho {
        cmd,
        selector: None,
        args: Map::new(),
        index_io: orch.opts().index_io,
    };
    let err = LanserError::usage(format!("batch line {line}: {why}"));
    orch.error_bundle(echo, &err).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::Request;
    use clap::{CommandFactory, Parser};

    fn parse(text: &str) -> std::result::Result<Request, BadLine> {
        LineParser::default().parse(text)
    }

    #[test]
    fn positionals_go_in_their_order_whatever_the_key_order() {
        // `dst` sorts before `src` in a JSON object: the CLI's order must win.
        let r = parse(r#"{"cmd":"rename-file","args":{"src":"a/x.py","dst":"b/y.py"}}"#).unwrap();
        assert_eq!(r.op.name(), "rename-file");
        assert_eq!(
            (&r.op.args()["src"], &r.op.args()["dst"]),
            (&"a/x.py".into(), &"b/y.py".into())
        );
    }

    #[test]
    fn lines_become_requests_through_the_cli() {
        let r = parse(
            r#"{"id":7,"cmd":"refs","selector":"a.py@L1:x","args":{"exclude-declaration":true}}"#,
        )
        .unwrap();
        assert_eq!(r.op.name(), "refs");
        assert_eq!(r.op.args()["include-declaration"], false);
        assert_eq!(r.selector(), Some("a.py@L1:x"));
        let r = parse(r#"{"cmd":"diag","args":{"targets":["a.py","-b.py"]}}"#).unwrap();
        assert_eq!(r.op.args()["targets"], serde_json::json!(["a.py", "-b.py"]));
        let r = parse(r#"{"cmd":"symbols","args":{"query":"Circle"}}"#).unwrap();
        assert_eq!(r.op.name(), "symbols");
        assert_eq!(
            (&r.op.args()["file"], &r.op.args()["query"]),
            (&serde_json::Value::Null, &"Circle".into())
        );
    }

    #[test]
    fn command_lines_round_trip_through_request_lines() {
        for argv in [
            &[
                "lanser",
                "refs",
                "a.py@L1:x",
                "--exclude-declaration",
                "--json",
            ][..],
            &["lanser", "diag", "src/*.py", "b.py"],
            &["lanser", "diag"],
            &["lanser", "symbols", "a.py", "--query", "C"],
            &["lanser", "locate", "a.py@R(1,1->1,2)", "--preview"],
            &["lanser", "hover", "a.py@L3:C4"],
        ] {
            let cli = Cli::try_parse_from(argv).unwrap();
            let matches = Cli::command().try_get_matches_from(argv).unwrap();
            let line = request_line(&matches).unwrap();
            let back = parse(&line).unwrap();
            let want = cli.command.request().unwrap();
            assert_eq!(back, want, "{line}");
        }
    }

    #[test]
    fn bad_lines_say_why() {
        assert!(parse("{nope").unwrap_err().why.starts_with("not JSON"));
        assert_eq!(
            parse(r#"{"cmd":"fly"}"#).unwrap_err().why,
            "unknown cmd \"fly\""
        );
        assert_eq!(
            parse(r#"{"cmd":"def","args":{"workspace":"/"}}"#)
                .unwrap_err()
                .why,
            "def has no argument \"workspace\""
        );
        assert_eq!(
            parse(r#"{"cmd":"setup"}"#).unwrap_err().why,
            "setup cannot run inside a batch"
        );
        assert_eq!(
            parse(r#"{"cmd":"def"}"#).unwrap_err().why,
            "the following required arguments were not provided: <SELECTOR>"
        );
    }
}
