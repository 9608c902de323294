//! The command line: clap definitions, turned into an [`Options`] and a [`Request`].

mod sub;
use crate::commands::{Op, Request};
use crate::error::{LanserError, Result};
use crate::inputs::Inputs;
use crate::orchestrator::{Options, DEFAULT_PAGE_SIZE};
use crate::reward::Scheme;
use crate::text::Encoding;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;
pub use sub::{
    Action, Filter, InstallArgs, McpArgs, McpClient, McpCmd, McpScope, SchemaCmd, SchemaKind,
    TraceCmd,
};

/// Set to a file's path: every parse of words by lanser's command-line definitions (a command
/// line, a request line of a batch or an MCP call, a trace's command line) appends a line
/// `<pid> <what>` to it — how a test sees that a request is parsed once, whatever its route.
pub const PARSE_LOG_ENV: &str = "LANSER_PARSE_LOG";

/// Note one parse of `what` (see [`PARSE_LOG_ENV`]).
pub fn note_parse(what: &str) {
    let Some(path) = std::env::var_os(PARSE_LOG_ENV) else {
        return;
    };
    use std::io::Write;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path);
    if let Ok(mut f) = file {
        // One write of one short line: lines of processes appending at once stay whole.
        let _ = f.write_all(format!("{} {what}\n", std::process::id()).as_bytes());
    }
}

#[derive(Debug, Parser)]
#[command(
    name = "lanser",
    version,
    about = "Deterministic, replayable language-server facts (Pyright) for coding agents and CI",
    long_about = "lanser pins a language server (Pyright 1.1.407), resolves selectors such as \
                  `src/app.py@L42:C7` or `src/app.py@L42:load#2`, and prints its answers as \
                  Analysis Bundles: sorted, JCS-canonical JSON with a sha256 bundleId."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// The options every command takes. It crosses the daemon's socket as a value (with the
/// request), so the daemon never parses a command line.
#[derive(Debug, Clone, Args, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Global {
    /// Workspace root (default: nearest ancestor with pyrightconfig.json, pyproject.toml,
    /// setup.py, setup.cfg or .git, else the current directory)
    #[arg(long, global = true, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Server command line, instead of the pinned Pyright (also LANSER_SERVER_CMD)
    #[arg(long, global = true, value_name = "CMD")]
    pub server_cmd: Option<String>,
    /// Column unit of selectors and human output: utf-8, utf-16 or codepoint
    #[arg(long, global = true, default_value = "codepoint", value_parser = parse_encoding)]
    pub index_io: Encoding,
    /// Print the Analysis Bundle (one line of JCS JSON)
    #[arg(long, global = true)]
    pub json: bool,
    /// Add ioRange (1-based, --index-io unit) to every location
    #[arg(long, global = true)]
    pub verbose: bool,
    /// Add meta.timing to the bundle (volatile; outside the hash domain)
    #[arg(long, global = true)]
    pub timing: bool,
    /// Per-request timeout in seconds (also bounds waiting for the project to load)
    #[arg(long, global = true, default_value_t = 60.0, value_name = "SECS")]
    pub timeout: f64,
    /// Never install the pinned server; fail if it is missing
    #[arg(long, global = true)]
    pub no_install: bool,
    /// Start a paged list at this entry (the `meta.cursor` of the previous page)
    #[arg(long, global = true, default_value_t = 0, value_name = "N")]
    pub cursor: usize,
    /// Longest list a bundle carries; longer ones are cut with `meta.truncated`
    #[arg(long, global = true, default_value_t = DEFAULT_PAGE_SIZE, value_name = "N")]
    pub page_size: usize,
    /// Record a JSONL trace of this run (for `trace` commands: the trace to read)
    #[arg(long, global = true, value_name = "FILE")]
    pub trace_file: Option<PathBuf>,
    /// With --trace-file: also record the content of every workspace file
    #[arg(long, global = true)]
    pub trace_sources: bool,
    /// Process reward: pr-v1 (the default), pr-v2 (diagnostics by kind, structural facts,
    /// optionally the impacted tests) or pr-v3 (pr-v2 with an absolute test term: selected tests
    /// failing after the step weigh against it)
    #[arg(long, global = true, default_value = "pr-v1", value_name = "VERSION")]
    pub reward: String,
    /// Process-reward weights: alpha,beta,gamma for pr-v1 (default 0.5,0.4,0.1); name=value
    /// pairs for pr-v2 (runtime, error, warning, remaining, structural, tests, safety, ambiguity)
    #[arg(long, global = true, value_name = "W")]
    pub reward_weights: Option<String>,
    /// With --reward pr-v2 or pr-v3: run the tests `impact` selects for a change, on an overlay copy
    /// of the workspace (never the user's files); off unless asked
    #[arg(long, global = true, value_name = "impacted", value_parser = ["impacted"])]
    pub tests: Option<String>,
    /// Wall-clock budget of --tests impacted, in seconds (a test past it is cut and reported)
    #[arg(long, global = true, default_value_t = 120.0, value_name = "SECS")]
    pub test_budget: f64,
    /// The previous step's bundle: its D_t is this step's D_{t-1}
    #[arg(long, global = true, value_name = "FILE")]
    pub prev_bundle: Option<PathBuf>,
    /// Configured server to run: pyright (default), basedpyright, or one named in lanser.toml
    #[arg(long, global = true, value_name = "NAME")]
    pub server: Option<String>,
    /// Confidence threshold τ: a fuzzy resolution scoring below it is flagged ambiguous
    #[arg(long, global = true, default_value_t = crate::relocate::score::DEFAULT_TAU, value_name = "T")]
    pub tau: f64,
    /// `best`: take the top-ranked candidate when a selector is ambiguous instead of failing
    #[arg(long, global = true, value_name = "best", value_parser = ["best"])]
    pub pick: Option<String>,
    /// Answer in this process instead of through the workspace's warm daemon (also
    /// LANSER_NO_DAEMON=1)
    #[arg(long, global = true)]
    pub no_daemon: bool,
}

/// D_t recorded in a previous bundle (`processReward.inputs.d_now`).
fn prev_d(path: &std::path::Path, inputs: &Inputs) -> Result<u64> {
    let text = inputs
        .read_to_string("--prev-bundle", &path.to_string_lossy(), || {
            std::fs::read(path)
        })
        .map_err(|e| {
            LanserError::not_found(format!("cannot read --prev-bundle {}", path.display()))
                .with_source(e)
        })?;
    let v: serde_json::Value = serde_json::from_str(text.trim()).map_err(|e| {
        LanserError::usage(format!("--prev-bundle {}: not a bundle", path.display())).with_source(e)
    })?;
    v.pointer("/processReward/inputs/d_now")
        .and_then(serde_json::Value::as_u64)
        .ok_or_else(|| {
            LanserError::usage(format!(
                "--prev-bundle {}: its processReward has no measured D (inputs.d_now)",
                path.display()
            ))
        })
}

fn parse_encoding(s: &str) -> std::result::Result<Encoding, String> {
    Encoding::parse(s).ok_or_else(|| format!("unknown unit {s:?}: use utf-8, utf-16 or codepoint"))
}

#[derive(Debug, Subcommand)]
pub enum Command {
    #[command(flatten)]
    Op(Op),
    /// Run JSONL requests (one per line) over one server session; one bundle per line out
    Batch {
        /// Requests, one JSON object per line (`-`: stdin)
        #[arg(long = "in", value_name = "FILE")]
        input: String,
        /// Bundles, one JCS line per request, in input order (`-`: stdout)
        #[arg(long, value_name = "FILE")]
        out: String,
        /// Requests in flight at once
        #[arg(long, default_value_t = 1, value_name = "N")]
        jobs: usize,
        /// Server sessions the read-only requests are spread over, each a server process of
        /// its own loading the project (default 1: every request over one session; at most
        /// --jobs; more than 1 runs in-process, not through the daemon). Requests that change the server's view run alone;
        /// with --trace-file there is always one session, since a trace records one.
        #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(1..))]
        servers: Option<u64>,
    },
    /// Read, filter and replay traces written with --trace-file
    Trace {
        #[command(subcommand)]
        action: TraceCmd,
    },
    /// Recompute the process rewards of recorded bundles, without a server
    Reward {
        /// Bundle files (JSON or JSONL), in episode order
        #[arg(long, num_args = 1.., required = true, value_name = "FILE")]
        from_bundles: Vec<PathBuf>,
        /// Recompute with other weights (counterfactual), in the recorded version's syntax:
        /// alpha,beta,gamma for pr-v1, name=value pairs for pr-v2
        #[arg(long, value_name = "A,B,G")]
        weights: Option<String>,
    },
    /// Install the pinned server (Pyright, or --server NAME), with the Node.js it needs, into
    /// the cache now
    Setup {
        /// Every configured server, each through its own client (npm, pip, go, rustup)
        #[arg(long, conflicts_with = "server")]
        all: bool,
    },
    /// Report the Node.js lanser uses and why, npm, Python, the server and its version, and
    /// every other server: where it is found, or how to install it
    Doctor,
    /// Print, export and validate the JSON Schemas of selectors, bundles, batch lines, traces
    Schema {
        #[command(subcommand)]
        action: SchemaCmd,
    },
    /// Print a shell completion script (bash, elvish, fish, powershell, zsh)
    Completions {
        /// The shell to complete for
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Serve every lanser action as an MCP tool on stdin/stdout, or over HTTP with --http (for
    /// Claude Code, Codex, Cursor, OpenHands, ...); answers go through the workspace's warm
    /// daemon
    #[command(
        args_conflicts_with_subcommands = true,
        long_about = "Serve every lanser action as an MCP tool on stdin/stdout, for agents \
                      (Claude Code, Codex, Cursor, OpenHands, ...). Each result carries the \
                      Analysis Bundle that `lanser <cmd> --json` prints as structuredContent and \
                      a compact, paged rendering as text. Calls go through the workspace's warm \
                      daemon (shared with CLI calls); writes (apply: true) run in this process \
                      inside the same safety envelope as the CLI.\n\nWith --http ADDR it serves \
                      streamable HTTP at http://ADDR/mcp instead, to any number of clients \
                      (each its own MCP session, all answered by the same daemon), until \
                      interrupted. A non-loopback ADDR needs --token (or LANSER_MCP_TOKEN); then \
                      every request must carry `Authorization: Bearer TOKEN`.\n\n`lanser mcp install \
                      --client CLIENT` writes the entry that runs it into a client's own \
                      configuration (`lanser mcp install --help`).\n\nExamples:\n  \
                      lanser mcp install --client claude-code --workspace /path/to/project\n  \
                      claude mcp add lanser -- lanser mcp --workspace /path/to/project\n  \
                      lanser mcp --workspace /path/to/project --http :8765\n  \
                      claude mcp add --transport http lanser http://127.0.0.1:8765/mcp"
    )]
    Mcp(McpArgs),
    /// The workspace's warm daemon: start, stop or inspect it
    Daemon {
        #[command(subcommand)]
        action: Action,
    },
}

impl Global {
    pub fn options(&self) -> Result<Options> {
        // A traced run records what it reads from the files its flags name.
        let inputs = match self.trace_file {
            Some(_) => Inputs::logged(),
            None => Inputs::disk(),
        };
        self.options_with(inputs)
    }

    /// [`Global::options`], reading the files named on the command line through `inputs`.
    pub fn options_with(&self, inputs: Inputs) -> Result<Options> {
        if !(self.timeout.is_finite() && self.timeout > 0.0) {
            return Err(LanserError::usage(format!(
                "--timeout must be a positive number of seconds, not {}",
                self.timeout
            )));
        }
        if !(self.test_budget.is_finite() && self.test_budget > 0.0) {
            return Err(LanserError::usage(format!(
                "--test-budget must be a positive number of seconds, not {}",
                self.test_budget
            )));
        }
        let reward = Scheme::parse(&self.reward, self.reward_weights.as_deref())?;
        if self.tests.is_some() && !reward.is_v2() {
            return Err(LanserError::usage(
                "--tests impacted is a term of pr-v2 and pr-v3: add --reward pr-v2 (or pr-v3)",
            ));
        }
        if !(0.0..=1.0).contains(&self.tau) {
            return Err(LanserError::usage(format!(
                "--tau must be between 0 and 1, not {}",
                self.tau
            )));
        }
        let cwd = std::env::current_dir().map_err(|e| {
            LanserError::internal("cannot read the current directory").with_source(e)
        })?;
        Ok(Options {
            workspace: self.workspace.clone(),
            server_cmd: self.server_cmd.clone(),
            index_io: self.index_io,
            verbose: self.verbose,
            timing: self.timing,
            timeout: Duration::from_secs_f64(self.timeout),
            cwd,
            install: !self.no_install,
            tap: None,
            cursor: self.cursor,
            page_size: self.page_size,
            reward,
            tests: self
                .tests
                .as_ref()
                .map(|_| Duration::from_secs_f64(self.test_budget)),
            prev_d: match &self.prev_bundle {
                Some(p) => Some(prev_d(p, &inputs)?),
                None => None,
            },
            inputs,
            server: self.server.clone(),
            pinned: false,
            relocate: crate::relocate::Config {
                tau: self.tau,
                pick_best: self.pick.is_some(),
            },
        })
    }
}

impl Command {
    /// The orchestrator request, for the commands that are one.
    pub fn request(&self) -> Option<Request> {
        match self {
            Command::Op(op) => Some(Request { op: op.clone() }),
            _ => None,
        }
    }
}
