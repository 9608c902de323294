//! Workspace trust: a repository's own lanser.toml cannot choose what lanser executes until
//! the user trusts that workspace (docs/configuration.md#workspace-trust).

use crate::support::*;
use std::path::Path;
use std::process::Output;

/// A workspace whose lanser.toml makes `touch MARKER` its default server.
fn hostile(root: &Path, marker: &Path) {
    std::fs::write(root.join("a.py"), "x = 1\n").unwrap();
    let toml = format!(
        "server = \"evil\"\n\n[servers.evil]\ncommand = \"touch\"\nargs = [{:?}]\n",
        marker.display().to_string()
    );
    std::fs::write(root.join("lanser.toml"), toml).unwrap();
}

fn def(root: &Path, config_home: &Path, extra: &[(&str, &str)], args: &[&str]) -> Output {
    let mut c = lanser();
    c.args(["def", "a.py@L1:C1", "--workspace", root.to_str().unwrap()])
        .args(args)
        .env("XDG_CONFIG_HOME", config_home)
        .env_remove("LANSER_TRUST_WORKSPACE");
    for (k, v) in extra {
        c.env(k, v);
    }
    c.output().unwrap()
}

#[test]
fn a_workspace_cannot_choose_what_runs_until_it_is_trusted() {
    let t = tempfile::tempdir().unwrap();
    let (root, home) = (t.path().join("repo"), t.path().join("config"));
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(home.join("lanser")).unwrap();
    let marker = t.path().join("ran");
    hostile(&root, &marker);

    // Untrusted: refused in one line naming the file and how to trust it; nothing runs.
    let o = def(&root, &home, &[], &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("lanser.toml") && err.contains("servers.evil.command"),
        "{err}"
    );
    assert!(
        err.contains("trusted_workspaces") && err.contains("LANSER_TRUST_WORKSPACE"),
        "{err}"
    );
    assert!(!marker.exists(), "the workspace's program ran");
    // The built-ins still answer.
    let o = def(&root, &home, &[], &["--server", "pyright", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!marker.exists());

    // Trusted for one run: its program is what runs (it is no language server).
    let o = def(&root, &home, &[("LANSER_TRUST_WORKSPACE", "1")], &[]);
    assert_ne!(o.status.code(), Some(0));
    assert!(
        marker.exists(),
        "trusted, the configured program runs: {}",
        stderr(&o)
    );
    std::fs::remove_file(&marker).unwrap();

    // Trusted by the user configuration.
    let listed = format!("trusted_workspaces = [{:?}]\n", root.display().to_string());
    std::fs::write(home.join("lanser/lanser.toml"), listed).unwrap();
    let o = def(&root, &home, &[], &[]);
    assert_ne!(o.status.code(), Some(0));
    assert!(
        marker.exists(),
        "listed, the configured program runs: {}",
        stderr(&o)
    );

    // A workspace cannot trust itself.
    std::fs::remove_file(&marker).unwrap();
    std::fs::write(home.join("lanser/lanser.toml"), "").unwrap();
    let own = format!("trusted_workspaces = [{:?}]\n", root.display().to_string());
    let text = std::fs::read_to_string(root.join("lanser.toml")).unwrap();
    std::fs::write(root.join("lanser.toml"), own + &text).unwrap();
    let o = def(&root, &home, &[], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("only the user configuration"),
        "{}",
        stderr(&o)
    );
    assert!(!marker.exists());
}
