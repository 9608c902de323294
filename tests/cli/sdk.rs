//! The Python SDK (`python/lanser`) is tested from Python with pytest (`python/tests/`),
//! against the binary cargo built; this runs that suite so `cargo test` covers it. A machine
//! without pytest and the SDK's test dependencies (installed by `.ci/run`) fails here with
//! the install command.

#[test]
fn the_python_sdk_suite_passes() {
    crate::support::pytest(
        "python/tests",
        "import pytest, ray, pydantic, datamodel_code_generator",
        "python3 -m pip install pytest==8.4.2 'ray[data]==2.60.0' pydantic==2.13.4 \
         datamodel-code-generator==0.89.0",
    );
}
