//! `lanser mcp` through a real MCP client: the official Python SDK (`mcp` on PyPI, pinned in
//! `.ci/run`) drives the binary over stdio in `tests/mcp/` (pytest). This runs that suite so
//! `cargo test` covers it; a machine without the SDK fails here with the install command.

#[test]
fn the_official_python_client_drives_every_tool() {
    crate::support::pytest(
        "tests/mcp",
        "import mcp, pytest, anyio",
        "python3 -m pip install mcp==2.3.0 pytest==8.4.2",
    );
}
