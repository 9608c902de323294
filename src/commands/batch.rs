//! `lanser batch --in F --out F [--jobs N] [--servers K]` (DESIGN §9, paper §4): JSONL requests
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

use crate::bundle::{Bundle, RequestEcho};
use crate::cli::Cli;
use crate::commands::pool::{Pool, Worker};
use crate::commands::Op;
use crate::error::{LanserError, Result};
use crate::orchestrator::{Orchestrator, Request};
use crate::workspace::watch::Watch;
use clap::parser::ValueSource;
use clap::{ArgAction, ArgMatches, CommandFactory, FromArgMatches};
use serde_json::{Map, Value};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// Top-level keys of a request line.
const LINE_KEYS: &[&str] = &["id", "cmd", "selector", "args"];

/// Parses request lines with the CLI's own definitions.
pub struct LineParser {
    cli: clap::Command,
}

impl Default for LineParser {
    fn default() -> Self {
        LineParser {
            cli: Cli::command(),
        }
    }
}

impl LineParser {
    /// The request a line asks for; on failure the `cmd` it named (if any) and why.
    pub fn parse(&mut self, text: &str) -> std::result::Result<Request, (String, String)> {
        let v: Value =
            serde_json::from_str(text).map_err(|e| (String::new(), format!("not JSON: {e}")))?;
        let Value::Object(obj) = v else {
            return Err((String::new(), "not a JSON object".into()));
        };
        if let Some(k) = obj.keys().find(|k| !LINE_KEYS.contains(&k.as_str())) {
            return Err((
                String::new(),
                format!("unknown key {k:?} (use id, cmd, selector, args)"),
            ));
        }
        let cmd = match obj.get("cmd") {
            Some(Value::String(c)) => c.clone(),
            _ => return Err((String::new(), "no \"cmd\" string".into())),
        };
        let fail = |m: String| (cmd.clone(), m);
        let sub = self
            .cli
            .find_subcommand(&cmd)
            .ok_or_else(|| fail(format!("unknown cmd {cmd:?}")))?;
        let (mut flags, mut positionals) = (Vec::new(), Vec::<(usize, Vec<String>)>::new());
        let mut fields: Vec<(String, Value)> = Vec::new();
        match obj.get("selector") {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => fields.push(("selector".into(), Value::String(s.clone()))),
            // The JSON PositionSpec is accepted wherever a string is.
            Some(v @ Value::Object(_)) => {
                fields.push(("selector".into(), Value::String(v.to_string())))
            }
            Some(_) => {
                return Err(fail(
                    "\"selector\" must be a string or a PositionSpec object".into(),
                ))
            }
        }
        match obj.get("args") {
            None | Some(Value::Null) => {}
            Some(Value::Object(m)) => fields.extend(m.iter().map(|(k, v)| (k.clone(), v.clone()))),
            Some(_) => return Err(fail("\"args\" must be an object".into())),
        }
        for (key, value) in fields {
            let arg = sub
                .get_arguments()
                .find(|a| a.get_long() == Some(key.as_str()) || a.get_id() == key.as_str())
                .ok_or_else(|| fail(format!("{cmd} has no argument {key:?}")))?;
            let values: Vec<String> = match &value {
                Value::Array(items) => items.iter().map(scalar).collect::<Option<_>>(),
                v => scalar(v).map(|s| vec![s]),
            }
            .ok_or_else(|| {
                fail(format!(
                    "argument {key:?} must be a string, number, boolean or a list of them"
                ))
            })?;
            if arg.is_positional() {
                positionals.push((arg.get_index().unwrap_or(0), values));
            } else if matches!(arg.get_action(), ArgAction::SetTrue) {
                match value {
                    Value::Bool(true) => {
                        flags.push(format!("--{}", arg.get_long().unwrap_or(&key)))
                    }
                    Value::Bool(false) => {}
                    _ => return Err(fail(format!("flag {key:?} takes true or false"))),
                }
            } else {
                let long = arg.get_long().unwrap_or(&key).to_string();
                flags.extend(values.into_iter().map(|v| format!("--{long}={v}")));
            }
        }
        positionals.sort_by_key(|(i, _)| *i);
        let mut argv = vec!["lanser".to_string(), cmd.clone()];
        argv.extend(flags);
        argv.push("--".into());
        argv.extend(positionals.into_iter().flat_map(|(_, v)| v));
        let matches = self
            .cli
            .try_get_matches_from_mut(argv)
            .map_err(|e| fail(clap_message(&e)))?;
        let parsed = Cli::from_arg_matches(&matches).map_err(|e| fail(clap_message(&e)))?;
        parsed
            .command
            .request()
            .ok_or_else(|| fail(format!("{cmd} cannot run inside a batch")))
    }
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// clap's message on one line: its first paragraph, without the `error: ` prefix.
fn clap_message(e: &clap::Error) -> String {
    let text = e.to_string();
    let first = text.split("\n\n").next().unwrap_or_default();
    let line = first
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    line.strip_prefix("error: ").unwrap_or(&line).to_string()
}

/// The request line of a command given on the command line (the inverse of
/// [`LineParser::parse`]), for the trace.
pub fn request_line(matches: &ArgMatches) -> Option<String> {
    let (cmd, sub_m) = matches.subcommand()?;
    let cli = Cli::command();
    let sub = cli.find_subcommand(cmd)?;
    let mut line = Map::new();
    line.insert("cmd".into(), Value::String(cmd.to_string()));
    let mut args = Map::new();
    for arg in sub.get_arguments() {
        let id = arg.get_id().as_str();
        if sub_m.value_source(id) != Some(ValueSource::CommandLine) {
            continue;
        }
        let key = arg.get_long().unwrap_or(id).to_string();
        let value = if matches!(arg.get_action(), ArgAction::SetTrue) {
            Value::Bool(true)
        } else {
            let raw: Vec<Value> = sub_m
                .get_raw(id)
                .into_iter()
                .flatten()
                .map(|s| Value::String(s.to_string_lossy().into_owned()))
                .collect();
            let many = matches!(arg.get_action(), ArgAction::Append)
                || arg.get_num_args().is_some_and(|n| n.max_values() > 1);
            match (many, raw.len()) {
                (false, 1) => raw.into_iter().next().unwrap_or(Value::Null),
                _ => Value::Array(raw),
            }
        };
        if id == "selector" {
            line.insert("selector".into(), value);
        } else {
            args.insert(key, value);
        }
    }
    line.insert("args".into(), Value::Object(args));
    Some(Value::Object(line).to_string())
}

/// Where request lines come from.
pub enum Source {
    Reader(tokio::io::Lines<Box<dyn AsyncBufRead + Unpin + Send>>),
    File(std::io::Lines<std::io::BufReader<std::fs::File>>),
    List(VecDeque<String>),
}

impl Source {
    /// Whether reading the next line may wait on a writer (stdin, a pipe).
    fn streams(&self) -> bool {
        matches!(self, Source::Reader(_))
    }

    /// `--in`: a file, or `-` for stdin (read as it arrives).
    pub fn open(input: &str) -> Result<Source> {
        if input == "-" {
            let stdin: Box<dyn AsyncBufRead + Unpin + Send> =
                Box::new(tokio::io::BufReader::new(tokio::io::stdin()));
            return Ok(Source::Reader(stdin.lines()));
        }
        let file = std::fs::File::open(input)
            .map_err(|e| LanserError::not_found(format!("cannot read requests {input}: {e}")))?;
        // A regular file: blocking reads are short.
        Ok(Source::File(std::io::BufRead::lines(
            std::io::BufReader::new(file),
        )))
    }

    /// The next line; cancel-safe (a line is never half read).
    pub async fn next(&mut self) -> Result<Option<String>> {
        match self {
            Source::Reader(lines) => lines
                .next_line()
                .await
                .map_err(|e| LanserError::internal(format!("reading requests: {e}"))),
            Source::File(lines) => lines
                .next()
                .transpose()
                .map_err(|e| LanserError::internal(format!("reading requests: {e}"))),
            Source::List(items) => Ok(items.pop_front()),
        }
    }
}

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

/// The workspace index's generation, brought up to date before each request is sent (the
/// entry's epoch) and at each repeat: file-system events name what changed, so neither costs a
/// scan of the tree. A repeat is served only when the generation has not moved since its
/// entry was taken — an edit undone between two lines included, since the index saw the edit.
/// Without a watcher the index is rescanned instead.
#[derive(Default)]
struct Changes {
    watch: Option<Watch>,
}

impl Changes {
    /// The index's generation, everything written before now seen (a cookie round trip).
    fn sync(&mut self, ws: &crate::workspace::Workspace) -> u64 {
        let mut index = ws.index();
        match self.watch.as_mut() {
            Some(w) => {
                w.sync(&mut index);
            }
            None => self.watch = Some(Watch::start(&ws.root, &index)),
        }
        index.generation()
    }

    /// The index's generation as of the events received so far (no wait): an epoch for a
    /// new entry, which can only be older than the truth, so a repeat runs again rather
    /// than being served stale.
    fn seen(&mut self, ws: &crate::workspace::Workspace) -> u64 {
        let mut index = ws.index();
        match self.watch.as_mut() {
            Some(w) => {
                w.poll(&mut index);
            }
            None => self.watch = Some(Watch::start(&ws.root, &index)),
        }
        index.generation()
    }
}

/// Wait for every running request of the window (their answers stay in order in the window).
async fn settle(window: &mut VecDeque<Slot>, pool: &mut Pool) -> Result<()> {
    for slot in window.iter_mut() {
        if matches!(slot.work, Work::Running(_)) {
            let Work::Running(handle) = std::mem::replace(&mut slot.work, Work::Settling) else {
                unreachable!("matched above");
            };
            let (worker, bundle) = handle
                .await
                .map_err(|e| LanserError::internal(format!("batch worker: {e}")))?;
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
        done = handle => done.map_err(|e| LanserError::internal(format!("batch worker: {e}")))?,
    };
    let (worker, bundle) = finished;
    pool.give(worker);
    front.work = Work::Done(Box::new(bundle));
    Ok(Next::Front)
}

/// Run every line of `source`, handing each answer to `sink` in input order, with up to
/// `jobs` requests in flight over up to `servers` server sessions (one while tracing or
/// replaying). Returns the exit code: 0, or the first failing line's.
pub async fn run_lines(
    orch: &mut Orchestrator,
    source: Source,
    jobs: usize,
    servers: usize,
    sink: impl FnMut(Answer) -> Result<()>,
) -> Result<u8> {
    let jobs = jobs.max(1);
    // A trace records, and its replay serves, the frames of one session.
    let servers = if orch.opts.tap.is_some() || orch.replays() {
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
) -> Result<u8> {
    let mut parser = LineParser::default();
    let mut changes = Changes::default();
    let mut memo: HashMap<String, MemoEntry> = HashMap::new();
    let mut window: VecDeque<Slot> = VecDeque::new();
    let (mut line_no, mut eof, mut exit) = (0usize, false, 0u8);
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
            let request = match parser.parse(&text) {
                Ok(r) => r,
                Err((cmd, why)) => {
                    let bundle = line_error(orch, line_no, cmd, &why).await;
                    window.push_back(Slot {
                        line: line_no,
                        input: text,
                        work: Work::Done(Box::new(bundle)),
                        cell: None,
                    });
                    continue;
                }
            };
            let key = format!("{request:?}");
            // A write or reload since the entry was made (even one still waiting for an answer
            // ahead in the window) means its answer may no longer hold.
            if request.op.writes_files() || request.op == Op::Reload {
                memo.clear();
            }
            // A repeat, and a line that reads the file set (`check`'s importers, `diag`,
            // `rename-file`), see the index as it is now; any other line takes the generation
            // of the events seen so far as its entry's epoch (no wait).
            let repeat = request.op.memoizable() && memo.contains_key(&key);
            let reads_files = matches!(
                request.op,
                Op::Check { .. } | Op::Diag { .. } | Op::RenameFile { .. }
            );
            let epoch = match repeat || reads_files {
                true => changes.sync(&orch.ws),
                false => changes.seen(&orch.ws),
            };
            if let Some(entry) = memo.get(&key).filter(|_| request.op.memoizable()) {
                let reusable = entry.epoch == epoch
                    && match &*entry.cell.lock().unwrap_or_else(|p| p.into_inner()) {
                        None => true,
                        Some(b) => memoizable(b),
                    };
                if reusable {
                    window.push_back(Slot {
                        line: line_no,
                        input: text,
                        work: Work::Same(entry.cell.clone()),
                        cell: None,
                    });
                    continue;
                }
            }
            let cell: Cell = Arc::new(Mutex::new(None));
            memo.insert(
                key,
                MemoEntry {
                    epoch,
                    cell: cell.clone(),
                },
            );
            // A speculative or mutating request changes what the server sees (in memory or on
            // disk) while it runs, a reload reconfigures it, and a diag is run by every session
            // (see `pool`): it waits for everything in flight and runs alone.
            let exclusive = request.op.changes_server_view()
                || request.op == Op::Reload
                || pool.everywhere_op(&request.op);
            if exclusive {
                settle(&mut window, pool).await?;
            }
            let worker = match exclusive {
                true => None,
                false => pool.take().await,
            };
            let work = match worker {
                Some(mut worker) => Work::Running(tokio::spawn(async move {
                    let bundle = worker.execute(&request).await;
                    (worker, bundle)
                })),
                None => Work::Done(Box::new(pool.run_alone(orch, &request).await)),
            };
            window.push_back(Slot {
                line: line_no,
                input: text,
                work,
                cell: Some(cell),
            });
        }
        let Some(slot) = window.pop_front() else {
            break;
        };
        let (bundle, memo_hit) = match slot.work {
            Work::Done(b) => (*b, false),
            Work::Running(handle) => {
                let (worker, bundle) = handle
                    .await
                    .map_err(|e| LanserError::internal(format!("batch worker: {e}")))?;
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
        };
        if let Some(cell) = slot.cell {
            *cell.lock().unwrap_or_else(|p| p.into_inner()) = Some(bundle.clone());
        }
        if exit == 0 {
            exit = bundle.meta.exit_code;
        }
        sink(Answer {
            line: slot.line,
            input: slot.input,
            bundle,
            memo: memo_hit,
        })?;
    }
    Ok(exit)
}

/// `lanser batch`: stream `--in` to `--out`, one bundle per request line.
pub async fn main(cli: Cli) -> std::process::ExitCode {
    match run_cli(&cli).await {
        Ok(0) => std::process::ExitCode::SUCCESS,
        Ok(code) => std::process::ExitCode::from(code),
        Err(e) => crate::fail(&e),
    }
}

async fn run_cli(cli: &Cli) -> Result<u8> {
    let crate::cli::Command::Batch {
        input,
        out,
        jobs,
        servers,
    } = &cli.command
    else {
        return Err(LanserError::internal("not a batch command"));
    };
    // Through the workspace's warm daemon unless opted out, traced, or asked for several
    // server sessions of its own (the daemon has one).
    if servers.is_none_or(|k| k <= 1) {
        if let Some(answered) = crate::daemon::batch::run(cli).await {
            return answered;
        }
    }
    let mut opts = cli.global.options()?;
    let recorder = crate::trace::recorder::begin(&cli.global, &mut opts)?;
    let mut orch = Orchestrator::new(opts)?;
    if let Some(r) = &recorder {
        r.header_for(&mut orch, cli.global.trace_sources).await;
    }
    let source = Source::open(input)?;
    let mut output = Output::open(out)?;
    let servers = servers.map_or(1, |k| usize::try_from(k).unwrap_or(usize::MAX));
    let outcome = run_lines(&mut orch, source, *jobs, servers, |a| {
        output.write(a.line, &a.bundle.to_jcs(), &a.bundle)?;
        if let Some(r) = &recorder {
            r.op(a.line, &a.input, a.memo, &a.bundle);
        }
        Ok(())
    })
    .await;
    orch.close().await;
    if let Some(r) = &recorder {
        r.finish()?;
    }
    let code = outcome?;
    output.report();
    Ok(code)
}

/// `--out` (a file, or `-` for stdout) and the tally of failed lines for the summary.
pub struct Output {
    writer: Box<dyn std::io::Write>,
    out: String,
    failed: usize,
    first: Option<String>,
}

impl Output {
    pub fn open(out: &str) -> Result<Output> {
        let writer: Box<dyn std::io::Write> = if out == "-" {
            Box::new(std::io::stdout())
        } else {
            let file = std::fs::File::create(out).map_err(|e| {
                LanserError::new(
                    crate::error::ErrorCode::FsPermissions,
                    format!("cannot write bundles to {out}: {e}"),
                )
            })?;
            Box::new(std::io::BufWriter::new(file))
        };
        Ok(Output {
            writer,
            out: out.to_string(),
            failed: 0,
            first: None,
        })
    }

    /// Write line `line`'s bundle (`jcs`, the JCS of `bundle`) and flush it.
    pub fn write(&mut self, line: usize, jcs: &str, bundle: &Bundle) -> Result<()> {
        self.writer
            .write_all(jcs.as_bytes())
            .and_then(|_| self.writer.write_all(b"\n"))
            .and_then(|_| self.writer.flush())
            .map_err(|e| LanserError::internal(format!("writing bundles to {}: {e}", self.out)))?;
        if let Some(e) = &bundle.error {
            self.failed += 1;
            self.first
                .get_or_insert_with(|| format!("line {line}: {}: {}", e.code, e.message));
        }
        Ok(())
    }

    /// `lanser: N request(s) failed; first at line …` on stderr, when one did.
    pub fn report(&self) {
        if let Some(first) = &self.first {
            eprintln!(
                "lanser: {} request(s) failed; first at {first}",
                self.failed
            );
        }
    }
}

/// The error bundle of line `line` that is not a request (`cmd`: the command it named, if
/// any): the bundle [`run_lines`] writes for it, for whoever else answers a batch line.
pub async fn line_error(orch: &mut Orchestrator, line: usize, cmd: String, why: &str) -> Bundle {
    let echo = RequestEcho {
        cmd,
        selector: None,
        args: Map::new(),
        index_io: orch.opts.index_io,
    };
    let err = LanserError::usage(format!("batch line {line}: {why}"));
    orch.error_bundle(echo, &err).await
}

/// Answers that may be served again: successes and errors a retry would not change.
fn memoizable(b: &Bundle) -> bool {
    b.error.as_ref().is_none_or(|e| !e.retryable)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::Op;
    use clap::Parser;

    fn parse(text: &str) -> std::result::Result<Request, (String, String)> {
        LineParser::default().parse(text)
    }

    #[test]
    fn lines_become_requests_through_the_cli() {
        let r = parse(
            r#"{"id":7,"cmd":"refs","selector":"a.py@L1:x","args":{"exclude-declaration":true}}"#,
        )
        .unwrap();
        assert_eq!(
            r.op,
            Op::Refs {
                include_declaration: false
            }
        );
        assert_eq!(r.selector.as_deref(), Some("a.py@L1:x"));
        let r = parse(r#"{"cmd":"diag","args":{"targets":["a.py","-b.py"]}}"#).unwrap();
        assert_eq!(
            r.op,
            Op::Diag {
                targets: vec!["a.py".into(), "-b.py".into()]
            }
        );
        let r = parse(r#"{"cmd":"symbols","args":{"query":"Circle"}}"#).unwrap();
        assert_eq!(
            r.op,
            Op::Symbols {
                file: None,
                query: Some("Circle".into())
            }
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
            assert_eq!((back.op, back.selector), (want.op, want.selector), "{line}");
        }
    }

    #[test]
    fn bad_lines_say_why() {
        assert!(parse("{nope").unwrap_err().1.starts_with("not JSON"));
        assert_eq!(
            parse(r#"{"cmd":"fly"}"#).unwrap_err().1,
            "unknown cmd \"fly\""
        );
        assert_eq!(
            parse(r#"{"cmd":"def","args":{"workspace":"/"}}"#)
                .unwrap_err()
                .1,
            "def has no argument \"workspace\""
        );
        assert_eq!(
            parse(r#"{"cmd":"setup"}"#).unwrap_err().1,
            "setup cannot run inside a batch"
        );
        assert_eq!(
            parse(r#"{"cmd":"def"}"#).unwrap_err().1,
            "the following required arguments were not provided: <SELECTOR>"
        );
    }
}
