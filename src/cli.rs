//! The command line: clap definitions, turned into an [`Options`] and a [`Request`].

use crate::commands::Op;
use crate::error::{LanserError, Result};
use crate::orchestrator::{Options, Request, DEFAULT_PAGE_SIZE};
use crate::text::Encoding;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

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

#[derive(Debug, Args)]
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
}

fn parse_encoding(s: &str) -> std::result::Result<Encoding, String> {
    Encoding::parse(s).ok_or_else(|| format!("unknown unit {s:?}: use utf-8, utf-16 or codepoint"))
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Where the symbol at SELECTOR is defined
    Def { selector: String },
    /// Where the type of the symbol at SELECTOR is defined
    TypeDef { selector: String },
    /// Every reference to the symbol at SELECTOR
    Refs {
        selector: String,
        /// Leave the declaration itself out
        #[arg(long)]
        exclude_declaration: bool,
    },
    /// Type, signature and documentation at SELECTOR
    Hover { selector: String },
    /// A file's outline, or workspace symbols with --query
    Symbols {
        file: Option<String>,
        /// Workspace symbol search (filters the outline when FILE is given)
        #[arg(long)]
        query: Option<String>,
    },
    /// Diagnostics for files or globs (default: every Python file of the workspace)
    Diag { targets: Vec<String> },
    /// Resolve SELECTOR to a range without asking the server
    Locate {
        selector: String,
        /// Show the lines the range covers
        #[arg(long)]
        preview: bool,
    },
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
    },
    /// Read, filter and replay traces written with --trace-file
    Trace {
        #[command(subcommand)]
        action: crate::commands::trace::TraceCmd,
    },
    /// Install the pinned Pyright into the cache now
    Setup,
    /// Report node, npm, the server and its version, and Python
    Doctor,
}

impl Global {
    pub fn options(&self) -> Result<Options> {
        if !(self.timeout.is_finite() && self.timeout > 0.0) {
            return Err(LanserError::usage(format!(
                "--timeout must be a positive number of seconds, not {}",
                self.timeout
            )));
        }
        let cwd = std::env::current_dir()
            .map_err(|e| LanserError::internal(format!("current directory: {e}")))?;
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
        })
    }
}

impl Command {
    /// The orchestrator request, for the commands that are one.
    pub fn request(&self) -> Option<Request> {
        let (op, selector) = match self {
            Command::Def { selector } => (Op::Def, Some(selector)),
            Command::TypeDef { selector } => (Op::TypeDef, Some(selector)),
            Command::Refs {
                selector,
                exclude_declaration,
            } => (
                Op::Refs {
                    include_declaration: !exclude_declaration,
                },
                Some(selector),
            ),
            Command::Hover { selector } => (Op::Hover, Some(selector)),
            Command::Symbols { file, query } => (
                Op::Symbols {
                    file: file.clone(),
                    query: query.clone(),
                },
                None,
            ),
            Command::Diag { targets } => (
                Op::Diag {
                    targets: targets.clone(),
                },
                None,
            ),
            Command::Locate { selector, preview } => {
                (Op::Locate { preview: *preview }, Some(selector))
            }
            Command::Setup | Command::Doctor | Command::Batch { .. } | Command::Trace { .. } => {
                return None
            }
        };
        Some(Request {
            op,
            selector: selector.cloned(),
        })
    }
}
