//! The clap types of the subcommands that have subcommands of their own (`trace`, `daemon`,
//! `schema`) and of `mcp`'s options: argument shapes only; what they do lives with their
//! modules.

use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub enum TraceCmd {
    /// Rebuild the traced bundles from the recorded frames, without a server
    Replay {
        /// Compare each rebuilt bundle (and the workspace digest) with the trace; exit 76 on
        /// the first difference
        #[arg(long)]
        verify: bool,
        /// Print (and verify) only operation N; the others still run, as they shape the session
        #[arg(long, value_name = "N")]
        op: Option<usize>,
    },
    /// One line per operation: number, status, exit code, command, selector
    List {
        #[command(flatten)]
        filter: Filter,
    },
    /// The bundles of operation N, or of every operation the filters select
    Show {
        /// The operation number (1-based, as `trace list` prints it)
        n: Option<usize>,
        #[command(flatten)]
        filter: Filter,
    },
}

#[derive(Debug, Args)]
pub struct Filter {
    /// Only this operation (`def`, `refs`, …)
    #[arg(long, value_name = "CMD")]
    pub operation: Option<String>,
    /// Only operations whose selector contains TEXT
    #[arg(long, value_name = "TEXT")]
    pub selector: Option<String>,
    /// Only operations that exited with CODE
    #[arg(long, value_name = "CODE")]
    pub exit_code: Option<u64>,
    /// Only `ok` or `error` operations
    #[arg(long, value_name = "STATUS", value_parser = ["ok", "error"])]
    pub status: Option<String>,
}

/// `lanser daemon …`.
#[derive(Debug, Clone, Subcommand)]
pub enum Action {
    /// Start the workspace's daemon (a no-op when one is running)
    Start {
        /// Shut down after this many seconds without a request (default 900; also
        /// LANSER_DAEMON_IDLE)
        #[arg(long, value_name = "SECS")]
        idle_timeout: Option<u64>,
    },
    /// Stop the workspace's daemon and its server
    Stop,
    /// Pid, versions, uptime, memory and open documents of the workspace's daemon
    Status,
    /// Run the daemon in the foreground (what `start` spawns)
    #[command(hide = true)]
    Serve {
        /// Exit after this many seconds without a request (default 900, or LANSER_DAEMON_IDLE)
        #[arg(long, value_name = "SECS")]
        idle_timeout: Option<u64>,
    },
}

#[derive(Debug, Subcommand)]
pub enum SchemaCmd {
    /// Print the PositionSpec (JSON selector) schema
    Selector {
        /// Write it to FILE instead of stdout
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Print the Analysis Bundle schema
    Bundle {
        /// Write it to FILE instead of stdout
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Print the batch request line schema
    Batch {
        /// Write it to FILE instead of stdout
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Print the trace event schema
    Trace {
        /// Write it to FILE instead of stdout
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Print the operations' catalog: each operation's name, selector, arguments (as batch
    /// lines, MCP calls and the Python SDK take them), whether it writes and what it pages
    Operations {
        /// Write it to FILE instead of stdout
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Write all four schemas (KIND.schema.json) and the operations' catalog
    /// (operations.json) into DIR, creating it if needed
    Export {
        /// The directory to write into
        dir: PathBuf,
    },
    /// Validate a JSON or JSONL file; print every violation with its JSON pointer (exit 2)
    Validate {
        /// The contract to validate against
        #[arg(long, value_enum, default_value = "bundle", value_name = "KIND")]
        kind: SchemaKind,
        /// A JSON document, or JSONL (one document per line)
        file: PathBuf,
    },
    /// Validate every file of DIR (JSON or JSONL); a summary, exit 2 if any is invalid
    ValidateBatch {
        /// The contract to validate against
        #[arg(long, value_enum, default_value = "bundle", value_name = "KIND")]
        kind: SchemaKind,
        /// The directory (its files, not subdirectories, in name order)
        dir: PathBuf,
    },
}

/// `lanser mcp`'s own options (the global flags are every call's).
#[derive(Debug, Clone, Default, Args)]
pub struct McpArgs {
    /// Serve MCP over streamable HTTP at ADDR (endpoint /mcp) instead of stdio: `:PORT` or
    /// `127.0.0.1:PORT` (loopback; port 0 picks one, printed on stderr); any other address
    /// needs --token
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// With --http: every request must carry `Authorization: Bearer TOKEN` (also
    /// LANSER_MCP_TOKEN, which keeps it out of the process list)
    #[arg(long, value_name = "TOKEN", requires = "http")]
    pub token: Option<String>,
}

/// One of the four contracts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemaKind {
    /// A PositionSpec (JSON selector)
    Selector,
    /// An Analysis Bundle
    Bundle,
    /// A batch request line
    Batch,
    /// A trace event (one line of a --trace-file)
    Trace,
}

impl SchemaKind {
    pub const ALL: [SchemaKind; 4] = [
        SchemaKind::Selector,
        SchemaKind::Bundle,
        SchemaKind::Batch,
        SchemaKind::Trace,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SchemaKind::Selector => "selector",
            SchemaKind::Bundle => "bundle",
            SchemaKind::Batch => "batch",
            SchemaKind::Trace => "trace",
        }
    }

    /// The exported file name, e.g. `bundle.schema.json`.
    pub fn file_name(self) -> String {
        format!("{}.schema.json", self.name())
    }
}
