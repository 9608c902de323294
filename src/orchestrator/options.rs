//! How lanser runs, independent of any one request: the options the CLI, the daemon, batch
//! and library users hand the orchestrator.

use crate::inputs::Inputs;
use crate::lsp::transport::Tap;
use crate::relocate;
use crate::reward::Scheme;
use crate::text::Encoding;
use std::path::PathBuf;
use std::time::Duration;

/// How lanser runs, independent of any one request.
#[derive(Clone)]
pub struct Options {
    pub workspace: Option<PathBuf>,
    pub server_cmd: Option<String>,
    pub index_io: Encoding,
    /// Add `ioRange` to every location.
    pub verbose: bool,
    /// Add the volatile `meta.timing` (outside the hash domain).
    pub timing: bool,
    /// Per-request timeout; also the bound on waiting for the project to load.
    pub timeout: Duration,
    pub cwd: PathBuf,
    /// Install the pinned server on first need.
    pub install: bool,
    pub tap: Option<Tap>,
    /// Offset of the first list entry to return (`--cursor`).
    pub cursor: usize,
    /// Longest list a bundle carries before it is cut (`--page-size`, default 10⁵).
    pub page_size: usize,
    /// The process-reward formula and weights (`--reward`, `--reward-weights`).
    pub reward: Scheme,
    /// pr-v2's test term (`--tests impacted`), with its budget (`--test-budget`).
    pub tests: Option<Duration>,
    /// D_{t-1} from `--prev-bundle`.
    pub prev_d: Option<u64>,
    /// Where files named on the command line (`--patch`) are read from.
    pub inputs: Inputs,
    /// The configured server to run (`--server`); `None` is lanser.toml's default, else Pyright.
    pub server: Option<String>,
    /// Whether `server` was chosen for a traced run by the request's file type
    /// (`commands::route::pin`), not named by the user: a file another server takes is then
    /// not refused as unserved but left unchecked (a trace records one server).
    pub pinned: bool,
    /// `--tau` and `--pick best`.
    pub relocate: relocate::Config,
}

impl Options {
    /// Defaults for a workspace, as the CLI has them with no flags (library users and tests
    /// set the fields they care about and take the rest from here).
    pub fn for_workspace(ws: &std::path::Path) -> Options {
        Options {
            workspace: Some(ws.to_path_buf()),
            server_cmd: None,
            index_io: Encoding::Codepoint,
            verbose: false,
            timing: false,
            timeout: Duration::from_secs(60),
            cwd: ws.to_path_buf(),
            install: true,
            tap: None,
            cursor: 0,
            page_size: DEFAULT_PAGE_SIZE,
            reward: Scheme::default(),
            tests: None,
            prev_d: None,
            inputs: Inputs::disk(),
            server: None,
            pinned: false,
            relocate: relocate::Config::default(),
        }
    }
}

/// The list cap of docs/bundle.md#paging.
pub const DEFAULT_PAGE_SIZE: usize = 100_000;
