//! `lanser mcp` through a real MCP client: the official Python SDK (`mcp` on PyPI, pinned in
//! tests/requirements.txt) drives the binary over stdio in `tests/mcp/` (pytest). This runs
//! that suite so `cargo test` covers it, on the pinned test environment (support::python).

#[test]
fn the_official_python_client_drives_every_tool() {
    crate::support::pytest("tests/mcp");
}
