//! Importers on the importers fixture with real Pyright: a patch changes the signature of the
//! function two modules re-export (`pkg/mod.py`'s `scale`, and `units.convert` of
//! `shared/units.py`, a module found through the extraPaths root `shared`), which breaks every
//! caller. `check --patch` pulls diagnostics for each importer, so each caller's new error is
//! in its delta, and `impact --patch` reaches each importer from the modules' top level —
//! however the importer spells the import: `from pkg import mod`, `import json, pkg.mod`, a
//! parenthesized multi-line list, or `import units` from under the extraPaths root `plugins`.

use crate::support::*;
use serde_json::Value;
use std::path::Path;

/// Each caller, and the call on it that the patch breaks.
const CALLERS: &[(&str, &str)] = &[
    ("callers/from_import.py", "mod.scale(1, 2)"),
    ("callers/comma_import.py", "pkg.mod.scale(1, 2)"),
    ("callers/paren_import.py", "mod.scale(other.FACTOR, 2)"),
    ("plugins/report.py", "units.convert(1, 2)"),
    // The spelling a prefix match on import lines found too.
    ("callers/plain_import.py", "scale(1, 2)"),
];

/// Both modules re-export `double(x)` instead of `scale_by(x, factor)`.
fn patch(ws: &Path) -> String {
    let a = one_line_diff(
        ws,
        "pkg/mod.py",
        "import scale_by as scale",
        "import double as scale",
    );
    let b = one_line_diff(
        ws,
        "shared/units.py",
        "import scale_by as convert",
        "import double as convert",
    );
    format!("{a}{b}")
}

/// The server range of the second argument of `call` in `rel`: the one `double` has no
/// parameter for.
fn extra_argument(ws: &Path, rel: &str, call: &str) -> Value {
    let line = line_with(ws, rel, call) - 1;
    let text = read(ws, rel);
    let l = text.lines().nth(line as usize).unwrap();
    let col = (l.find(call).unwrap() + call.rfind(", ").unwrap() + 2) as u32;
    serde_json::json!([line, col, line, col + 1])
}

/// The fixture and the patch file (kept alive by the temporary directory).
fn setup() -> (std::path::PathBuf, tempfile::TempDir, String) {
    let ws = fixture("importers");
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("p.diff");
    std::fs::write(&p, patch(&ws)).unwrap();
    let p = p.to_string_lossy().into_owned();
    (ws, dir, p)
}

#[test]
fn check_patch_measures_every_importer_however_it_imports() {
    let (ws, _dir, p) = setup();
    let w = ws.to_string_lossy();
    let o = run(&["check", "--patch", &p, "--workspace", &w, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let b = bundle(&o);
    let files = b["facts"]["files"].as_array().unwrap();
    let added = |rel: &str| -> Vec<Value> {
        files
            .iter()
            .find(|f| f["path"] == rel)
            .map(|f| f["added"].as_array().unwrap().clone())
            .unwrap_or_default()
    };
    let mut missed = Vec::new();
    for (rel, call) in CALLERS {
        let new = added(rel);
        let want = extra_argument(&ws, rel, call);
        let hit = new.iter().any(|d| {
            d["severity"] == "error" && d["code"] == "reportCallIssue" && d["range"] == want
        });
        if !hit {
            missed.push(format!("{rel}: {new:?}"));
        }
    }
    assert!(missed.is_empty(), "no new error for {missed:#?}");
    // The modules themselves stay clean.
    for rel in ["pkg/mod.py", "shared/units.py"] {
        assert_eq!(added(rel), Vec::<Value>::new(), "{rel}");
    }
}

#[test]
fn impact_patch_reaches_every_importer_however_it_imports() {
    let (ws, _dir, p) = setup();
    let w = ws.to_string_lossy();
    let o = run(&["impact", "--patch", &p, "--workspace", &w, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let b = bundle(&o);
    let seeds: Vec<&str> = b["facts"]["seeds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["path"].as_str().unwrap())
        .collect();
    // The re-exports are the modules' top level: importers are how impact goes on from there.
    assert_eq!(seeds, ["pkg/mod.py", "shared/units.py"]);
    let library: Vec<&str> = b["facts"]["library"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["path"].as_str().unwrap())
        .collect();
    let missed: Vec<&str> = CALLERS
        .iter()
        .map(|(rel, _)| *rel)
        .filter(|rel| !library.contains(rel))
        .collect();
    assert!(missed.is_empty(), "impact missed {missed:?}: {library:?}");
}
