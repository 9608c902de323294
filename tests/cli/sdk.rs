//! The Python SDK (`python/lanser`) is tested from Python with pytest (`python/tests/`),
//! against the binary cargo built; this runs that suite so `cargo test` covers it. A machine
//! without pytest (and the SDK's test dependencies, installed by `.ci/run`) fails here with
//! the install command.

use crate::support::repo;
use std::process::Command;

#[test]
fn the_python_sdk_suite_passes() {
    let probe = Command::new("python3")
        .args([
            "-c",
            "import pytest, ray, pydantic, datamodel_code_generator",
        ])
        .output()
        .expect("python3 runs");
    assert!(
        probe.status.success(),
        "the SDK tests need: python3 -m pip install pytest==8.4.2 'ray[data]==2.60.0' pydantic==2.13.4 datamodel-code-generator==0.89.0\n{}",
        String::from_utf8_lossy(&probe.stderr)
    );
    let out = Command::new("python3")
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "python/tests",
        ])
        .current_dir(repo())
        .env("LANSER_BIN", env!("CARGO_BIN_EXE_lanser"))
        .env_remove("LANSER_NO_DAEMON")
        .output()
        .expect("pytest runs");
    assert!(
        out.status.success(),
        "python/tests failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
