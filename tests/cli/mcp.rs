//! `lanser mcp` through real MCP clients: the official Python SDK (`mcp` on PyPI, pinned in
//! tests/requirements.txt) over stdio and HTTP in `tests/mcp/` (pytest), and the official
//! TypeScript SDK and conformance suite (npm, pinned in tests/mcp/ts/package-lock.json) in
//! `tests/mcp/test_typescript.py`. Two tests, so the two suites run side by side.

#[test]
fn the_official_python_client_drives_every_tool() {
    crate::support::pytest_args(&["tests/mcp", "--ignore=tests/mcp/test_typescript.py"]);
}

#[test]
fn the_typescript_client_and_the_conformance_suite_accept_the_server() {
    crate::support::pytest_args(&["tests/mcp/test_typescript.py"]);
}
