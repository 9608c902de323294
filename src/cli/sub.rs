//! The clap types of the subcommands that have subcommands of their own (`trace`, `daemon`,
//! `schema`, `mcp install`) and of `mcp`'s options: argument shapes only; what they do lives
//! with their modules.

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
    /// `install`; none: serve MCP (on stdio, or over HTTP with --http)
    #[command(subcommand)]
    pub action: Option<McpCmd>,
}

/// `lanser mcp …`.
#[derive(Debug, Clone, Subcommand)]
pub enum McpCmd {
    /// Write lanser's entry into an MCP client's own configuration file (or print it with
    /// --dry-run), keeping everything else the file holds
    #[command(
        long_about = "Write lanser's entry into an MCP client's own configuration \
                      file, or with --dry-run print what would change. The entry runs this \
                      lanser binary (its absolute path) as `mcp --workspace DIR`, or with \
                      --http points the client at http://ADDR/mcp (start that server yourself \
                      with `lanser mcp --workspace DIR --http ADDR`). Running it again changes \
                      nothing; a different lanser entry is replaced; every other entry, key \
                      and comment of the file is kept as it was.\n\nFiles (project scope is \
                      under the workspace):\n  \
                      claude-code     project: .mcp.json; user: ~/.claude.json\n  \
                      cursor          project: .cursor/mcp.json; user: ~/.cursor/mcp.json\n  \
                      vscode          project: .vscode/mcp.json; user: Code/User/mcp.json in \
                      the OS's config directory\n  \
                      codex           user: $CODEX_HOME/config.toml (~/.codex); project: \
                      .codex/config.toml\n  \
                      claude-desktop  user: Claude/claude_desktop_config.json in the OS's \
                      config directory (stdio only)\n\nExamples:\n  \
                      lanser mcp install --client claude-code --workspace /path/to/project\n  \
                      lanser mcp install --client codex --dry-run\n  \
                      lanser mcp install --client vscode --http :8765"
    )]
    Install(InstallArgs),
}

/// `lanser mcp install`'s options (`--workspace` is the global flag).
#[derive(Debug, Clone, Args)]
pub struct InstallArgs {
    /// The client whose configuration to write
    #[arg(long, value_enum, value_name = "CLIENT")]
    pub client: McpClient,
    /// Which of the client's files: `project` (in the workspace) or `user` (in your home);
    /// default project, except for codex and claude-desktop (user)
    #[arg(long, value_enum, value_name = "SCOPE")]
    pub scope: Option<McpScope>,
    /// Point the client at `lanser mcp --http ADDR` (http://ADDR/mcp; `:PORT` is
    /// 127.0.0.1:PORT) instead of having it start lanser over stdio
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// Print what would change (a diff of the file) and write nothing
    #[arg(long)]
    pub dry_run: bool,
}

/// The MCP clients `lanser mcp install` configures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum McpClient {
    /// Claude Code (.mcp.json, or ~/.claude.json)
    ClaudeCode,
    /// Cursor (.cursor/mcp.json, or ~/.cursor/mcp.json)
    Cursor,
    /// VS Code (.vscode/mcp.json, or the user profile's mcp.json)
    Vscode,
    /// Codex (~/.codex/config.toml, or .codex/config.toml)
    Codex,
    /// Claude Desktop (claude_desktop_config.json)
    ClaudeDesktop,
}

/// Where a client's configuration lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum McpScope {
    /// The workspace's own file (shared with whoever checks it out)
    Project,
    /// The file in your home (or the OS's config directory)
    User,
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
