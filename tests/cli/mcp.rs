//! `lanser mcp` through a real MCP client: the official Python SDK (`mcp` on PyPI, pinned in
//! `.ci/run`) drives the binary over stdio in `tests/mcp/` (pytest). This runs that suite so
//! `cargo test` covers it; a machine without the SDK fails here with the install command.

use crate::support::repo;
use std::process::Command;

#[test]
fn the_official_python_client_drives_every_tool() {
    let probe = Command::new("python3")
        .args(["-c", "import mcp, pytest, anyio"])
        .output()
        .expect("python3 runs");
    assert!(
        probe.status.success(),
        "the MCP tests need the official Python SDK: python3 -m pip install mcp==2.3.0 pytest==8.4.2\n{}",
        String::from_utf8_lossy(&probe.stderr)
    );
    let out = Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/mcp"])
        .current_dir(repo())
        .env("LANSER_BIN", env!("CARGO_BIN_EXE_lanser"))
        .env_remove("LANSER_NO_DAEMON")
        .output()
        .expect("pytest runs");
    assert!(
        out.status.success(),
        "tests/mcp failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
