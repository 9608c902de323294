//! The workspace side of a replay: the scratch copy a trace with sources is replayed over,
//! and the first difference between the files a trace recorded and the workspace now.

use crate::error::{ErrorCode, LanserError, Result};
use crate::trace::{snapshot_files, workspace_digest, Trace};
use std::collections::HashMap;
use std::path::PathBuf;

/// The first difference between the recorded files and the workspace now.
///
/// A trace recorded before the index tracked the servers' and outlines' file types holds
/// sources and configuration files only: the workspace is compared on those.
pub(super) fn compare_workspace(trace: &Trace, ws: &crate::workspace::Workspace) -> Option<String> {
    let listed = |p: &str| {
        crate::workspace::walk::is_source(p) || crate::workspace::index::SERVER_CONFIG.contains(&p)
    };
    let sources_only = trace.files.iter().all(|f| listed(&f.path));
    let now: Vec<(String, String)> = snapshot_files(ws)
        .into_iter()
        .filter(|(p, _)| !sources_only || listed(p))
        .map(|(p, b)| (p, crate::digest::sha256_tagged(&b)))
        .collect();
    let digest = workspace_digest(now.iter().map(|(p, d)| (p.as_str(), d.as_str())));
    if digest == trace.header.workspace_digest {
        return None;
    }
    let recorded: HashMap<&str, &str> = trace
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.digest.as_str()))
        .collect();
    let current: HashMap<&str, &str> = now.iter().map(|(p, d)| (p.as_str(), d.as_str())).collect();
    let mut names: Vec<&str> = recorded.keys().chain(current.keys()).copied().collect();
    names.sort_unstable();
    names.dedup();
    let first = names
        .into_iter()
        .find_map(|n| match (recorded.get(n), current.get(n)) {
            (Some(a), Some(b)) if a != b => Some(format!("{n} changed (recorded {a}, now {b})")),
            (Some(_), None) => Some(format!("{n} is missing")),
            (None, Some(_)) => Some(format!("{n} was not in the recorded workspace")),
            _ => None,
        });
    Some(format!(
        "workspace digest {digest} differs from the recorded {}: {}",
        trace.header.workspace_digest,
        first.unwrap_or_else(|| "the file list differs".into())
    ))
}

/// A scratch copy of a trace's recorded sources, removed on drop.
pub(super) struct Scratch(pub(super) PathBuf);

impl Scratch {
    pub(super) fn materialize(trace: &Trace) -> Result<Scratch> {
        static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("lanser-replay-{}-{n}", std::process::id()));
        let io = |e: std::io::Error| {
            LanserError::internal(format!("replay workspace {}", dir.display())).with_source(e)
        };
        std::fs::create_dir_all(&dir).map_err(io)?;
        let scratch = Scratch(dir.clone());
        for f in &trace.files {
            let Some(content) = &f.content else { continue };
            if f.path.split('/').any(|c| c == ".." || c.is_empty()) {
                return Err(LanserError::new(
                    ErrorCode::ReplayMismatch,
                    format!("trace file record has an unsafe path {:?}", f.path),
                ));
            }
            let path = dir.join(&f.path);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(io)?;
            }
            std::fs::write(&path, content).map_err(io)?;
        }
        Ok(scratch)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
