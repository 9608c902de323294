//! `lanser impact`: on the srcpkg fixture with real Pyright, a patch to a helper reaches its
//! callers (through an overridden base method) and exactly the tests that exercise it;
//! fixtures are followed; nothing outside the workspace; the bytes are the same in fresh
//! processes and in a copy; every run here is traced and replayed offline by `run`.

use crate::support::*;
use serde_json::Value;

fn names(facts: &Value, key: &str, field: &str) -> Vec<String> {
    facts[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f[field].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_patch_reaches_its_callers_and_exactly_the_tests_that_exercise_it() {
    let ws = fixture("srcpkg");
    let dir = tempfile::tempdir().unwrap();
    let patch = dir.path().join("p.diff");
    let d = one_line_diff(&ws, "src/shapes/units.py", "PRECISION)", "PRECISION + 1)");
    std::fs::write(&patch, d).unwrap();
    let (w, p) = (ws.to_string_lossy(), patch.to_string_lossy());
    let o = run(&["impact", "--patch", &p, "--workspace", &w, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let b = bundle(&o);
    let f = &b["facts"];
    assert_eq!(names(f, "seeds", "name"), ["round_to_precision"]);
    let library = names(f, "library", "name");
    // Circle.area calls it; area_of reaches it through Shape.area, which Circle overrides.
    for want in [
        "Circle.area",
        "Square.area",
        "Shape.area",
        "area_of",
        "convert",
    ] {
        assert!(library.contains(&want.to_string()), "{want}: {library:?}");
    }
    assert_eq!(
        names(f, "tests", "id"),
        [
            "tests/test_geometry.py::test_circle_area",
            "tests/test_geometry.py::test_square_area_and_corners"
        ]
    );
    assert_eq!(
        f["testFiles"],
        serde_json::json!(["tests/test_geometry.py"])
    );
    assert_eq!(b["meta"]["complete"], true);
    // Nothing outside the workspace: every path is workspace-relative.
    for key in ["seeds", "library", "tests"] {
        for item in f[key].as_array().unwrap() {
            let path = item["path"].as_str().unwrap();
            assert!(!path.starts_with('/') && !path.starts_with(".."), "{path}");
        }
    }
    let o1 = run(&[
        "impact",
        "--patch",
        &p,
        "--depth",
        "1",
        "--workspace",
        &w,
        "--json",
    ]);
    // Depth bounds the static walk: nothing past level 1, and no test is reached statically.
    // Coverage (when the interpreter has coverage.py) still selects the tests that execute the
    // changed line, without a `depth`, as docs/commands.md says.
    let f1 = &bundle(&o1)["facts"];
    for item in f1["library"].as_array().unwrap() {
        assert!(item["depth"].as_u64().unwrap() <= 1, "{item}");
    }
    for t in f1["tests"].as_array().unwrap() {
        assert!(
            t.get("depth").is_none(),
            "reached statically at depth 1: {t}"
        );
    }
    if f1["selection"]["coverage"] == true {
        assert_eq!(names(f1, "tests", "id"), names(f, "tests", "id"));
    } else {
        assert_eq!(f1["tests"], serde_json::json!([]));
    }

    // The same bytes from a fresh process and from a copy of the workspace.
    let again = run(&["impact", "--patch", &p, "--workspace", &w, "--json"]);
    assert_eq!(stdout(&again), stdout(&o));
    let copy = dir.path().join("copy");
    copy_tree(&ws, &copy);
    let c = run(&[
        "impact",
        "--patch",
        &p,
        "--workspace",
        &copy.to_string_lossy(),
        "--json",
    ]);
    assert_eq!(stdout(&c), stdout(&o));
}

#[test]
fn a_selector_names_the_change_and_the_tests_of_a_test_helper_are_not_library() {
    let ws = fixture("srcpkg");
    let w = ws.to_string_lossy();
    let line = line_with(
        &ws,
        "src/shapes/geometry.py",
        "def scale(value: int | float",
    );
    let sel = format!("src/shapes/geometry.py@L{line}:scale");
    let o = run(&["impact", &sel, "--workspace", &w, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let f = &bundle(&o)["facts"];
    // test_scale calls it; test_fetch_shape through fetch_shape.
    assert_eq!(
        names(f, "tests", "id"),
        [
            "tests/test_geometry.py::test_fetch_shape",
            "tests/test_geometry.py::test_scale"
        ]
    );
    assert!(names(f, "library", "path")
        .iter()
        .all(|p| !p.starts_with("tests/")));
    // Neither or both of a selector and --patch is a usage error.
    let o = run(&["impact", "--workspace", &w]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn fixtures_are_followed_by_parameter_name_and_autouse_reaches_its_scope() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("proj");
    let files = [
        ("pyproject.toml", "[project]\nname = \"proj\"\nversion = \"0\"\n"),
        ("lib.py", "def make() -> int:\n    return 1\n\n\ndef other() -> int:\n    return 2\n"),
        (
            "tests/conftest.py",
            "import pytest\n\nfrom lib import make, other\n\n\n@pytest.fixture\ndef thing() -> int:\n    return make()\n\n\n@pytest.fixture\ndef wrapped(thing: int) -> int:\n    return thing + 1\n\n\n@pytest.fixture(autouse=True)\ndef everywhere() -> None:\n    other()\n",
        ),
        (
            "tests/test_a.py",
            "def test_uses(thing: int) -> None:\n    assert thing == 1\n\n\ndef test_wrapped(wrapped: int) -> None:\n    assert wrapped == 2\n\n\ndef test_plain() -> None:\n    assert True\n",
        ),
        (
            "tests/test_b.py",
            "class TestB:\n    def test_m(self) -> None:\n        assert True\n",
        ),
    ];
    write_tree(&ws, &files);
    let w = ws.to_string_lossy();
    let o = run(&["impact", "lib.py@L1:make", "--workspace", &w, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        names(&bundle(&o)["facts"], "tests", "id"),
        [
            "tests/test_a.py::test_uses",
            "tests/test_a.py::test_wrapped"
        ]
    );
    // `other` is called by an autouse fixture: every test under tests/ is reached.
    let o = run(&["impact", "lib.py@L5:other", "--workspace", &w, "--json"]);
    assert_eq!(
        names(&bundle(&o)["facts"], "tests", "id"),
        [
            "tests/test_a.py::test_plain",
            "tests/test_a.py::test_uses",
            "tests/test_a.py::test_wrapped",
            "tests/test_b.py::TestB::test_m"
        ]
    );
}
