//! Workspace trust: what a repository's own `lanser.toml` may decide. A question about a
//! definition must not run a program the repository picked, so the fields that decide what
//! runs (`command`, `args`, `version`, `provision`, `package`, `with`) are honoured from a
//! workspace's file only once the user trusts that workspace — by listing it in
//! `trusted_workspaces` of the user configuration, or for one run with
//! `LANSER_TRUST_WORKSPACE=1`, the way editors' workspace trust works. Until then a server
//! whose definition such a field touched is refused (one line naming the file and how to
//! trust it) and every other server still answers; analysis settings keep working.

use std::path::{Path, PathBuf};

/// The variable that trusts the workspace for one run.
pub const ENV: &str = "LANSER_TRUST_WORKSPACE";

/// The server fields that decide what lanser executes.
pub const EXEC_FIELDS: &[&str] = &["command", "args", "version", "provision", "package", "with"];

/// Verdicts this process was given for workspaces it made itself: a replay's scratch copy of
/// a trace's sources takes the verdict the traced run had (it starts no server, so what the
/// workspace's file would run never runs; the verdict only shapes the answers, as it did).
static DECIDED: std::sync::Mutex<Vec<(PathBuf, bool)>> = std::sync::Mutex::new(Vec::new());

/// Take `trusted` as the verdict on `root` for the rest of the process.
pub fn decide(root: &Path, trusted: bool) {
    DECIDED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push((canonical(root), trusted));
}

/// The input a trace records the verdict under (`1` trusted, `0` not), where the workspace's
/// file sets what runs.
pub const INPUT: &str = "trust:workspace";

/// Whether `root` is trusted: a verdict [`decide`] was given, else the variable is set, or it
/// (or a directory above it) is listed in the user configuration's `trusted_workspaces`.
pub fn is_trusted(root: &Path, listed: &[String]) -> bool {
    let here = canonical(root);
    let decided = DECIDED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, verdict)) = decided.iter().rev().find(|(r, _)| *r == here) {
        return *verdict;
    }
    drop(decided);
    if std::env::var(ENV).is_ok_and(|v| matches!(v.as_str(), "1" | "true" | "yes")) {
        return true;
    }
    let root = canonical(root);
    listed
        .iter()
        .map(|l| canonical(Path::new(l)))
        .any(|t| root.starts_with(&t))
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

/// Why a server cannot run until the workspace is trusted (one line).
pub fn refusal(root: &Path, server: &str, fields: &[&str], user_file: Option<&Path>) -> String {
    let user = user_file
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "the user lanser.toml".into());
    format!(
        "{}: the workspace's lanser.toml sets servers.{server}.{} (what lanser runs), which is \
         honoured only in a trusted workspace: add trusted_workspaces = [{:?}] to {user}, or set \
         {ENV}=1 for one run",
        // config::FILE_NAME, spelled here: config depends on trust, not the other way.
        root.join("lanser.toml").display(),
        fields.join("/"),
        canonical(root).display().to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_directory_trusts_what_is_under_it() {
        let t = tempfile::tempdir().unwrap();
        let inner = t.path().join("a/b");
        std::fs::create_dir_all(&inner).unwrap();
        let listed = [t.path().join("a").display().to_string()];
        if std::env::var_os(ENV).is_none() {
            assert!(is_trusted(&inner, &listed));
            assert!(!is_trusted(t.path(), &listed));
            assert!(!is_trusted(&inner, &[]));
        }
    }
}
