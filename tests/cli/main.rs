//! lanser's integration tests: one binary (ripgrep/uv style). Real Pyright drives every happy
//! path; `tests/fake_lsp.py` plays only the faults a real server cannot be made to show.

mod batch;
mod batch_pool;
mod by_content;
mod changes;
mod check_scope;
mod contract;
mod daemon;
mod daemon_batch;
mod daemon_refresh;
mod diag_memo;
mod edit;
mod facts;
mod faults;
mod freshness;
mod hostile;
mod impact;
mod importers;
mod language_apply;
mod language_asked;
mod language_binaries;
mod language_check;
mod language_jvm;
mod language_more;
mod language_stable;
mod language_web;
mod languages;
mod mcp;
mod mcp_install;
mod mutations;
// Shell-script stand-ins, bin/ layouts and `:`-joined PATHs: Unix only.
#[cfg(unix)]
mod node;
mod outline_langs;
mod outlines;
mod own_edits;
mod parse_once;
mod readiness;
mod readops;
mod relocation;
mod rename_file;
mod reward;
mod reward_v2;
mod reward_v3;
mod router;
mod routes;
mod schemas;
mod sdk;
mod selection_range;
mod selectors;
mod servers;
mod shared_base;
mod side_by_side;
mod snapshots;
mod support;
mod surface;
#[cfg(unix)]
mod toolchains;
mod trace;
mod trust;
mod unserved;
