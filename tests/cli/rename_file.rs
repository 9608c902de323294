//! `lanser rename-file` on throw-away git copies of fixtures/srcpkg (with the
//! fixtures/srcpkg_imports overlay: every import spelling): the rewritten files equal the
//! fixture text with exactly the expected lines changed, every other byte is kept, Pyright's
//! diagnostics for the workspace are unchanged, Python still imports and runs the package, the
//! preview diff is what apply writes (reproduced by `git apply`), and refusals write nothing.

use crate::mutations::{git, git_apply, repo_copy, snapshot};
use crate::support::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A committed copy of srcpkg plus the import-spellings overlay.
fn workspace() -> (tempfile::TempDir, PathBuf) {
    let (t, ws) = repo_copy("srcpkg");
    copy_tree(&fixture("srcpkg_imports"), &ws);
    git(&ws, &["add", "-A"]);
    git(&ws, &["commit", "-qm", "overlay"]);
    (t, ws)
}

/// The fixture text of a workspace file (srcpkg or the overlay).
fn original(rel: &str) -> String {
    let overlay = fixture("srcpkg_imports").join(rel);
    let p = if overlay.exists() {
        overlay
    } else {
        fixture("srcpkg").join(rel)
    };
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// `text` with each `old` (which must occur exactly once) replaced by `new`.
fn changed(text: &str, pairs: &[(&str, &str)]) -> String {
    let mut out = text.to_string();
    for (old, new) in pairs {
        assert_eq!(out.matches(old).count(), 1, "{old:?} once in\n{out}");
        out = out.replacen(old, new, 1);
    }
    out
}

/// (path, range, severity, message) of every diagnostic Pyright reports for the workspace.
fn diagnostics(ws: &Path) -> (Value, Vec<(String, Value, String, String)>) {
    let o = run(&["diag", "--workspace", &ws.to_string_lossy(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let b = bundle(&o);
    assert_eq!(b["meta"]["complete"], true);
    let list = b["facts"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["path"].as_str().unwrap().to_string(),
                d["range"].clone(),
                d["severity"].as_str().unwrap().to_string(),
                d["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (b["facts"]["counts"].clone(), list)
}

fn preview(ws: &Path, src: &str, dst: &str) -> Value {
    let o = run(&[
        "rename-file",
        src,
        dst,
        "--workspace",
        &ws.to_string_lossy(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    bundle(&o)
}

/// Python imports the moved package and runs the overlay's and fixture's test functions.
fn smoke(ws: &Path, script: &str) {
    let o = Command::new("python3")
        .args(["-B", "-c", script])
        .env("PYTHONPATH", "src:tests")
        .current_dir(ws)
        .output()
        .expect("python3 runs");
    assert!(
        o.status.success(),
        "python3 -c {script:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Move `src` to `dst` on a fresh copy and check everything the brief asks for. `expected`
/// holds the new text of every file that changes content (by path after the move); every
/// other file must keep its bytes at its (possibly moved) path.
fn check_move(
    src: &str,
    dst: &str,
    expected: &[(&str, String)],
    created: &[&str],
    smoke_script: &str,
) -> Value {
    let (_t, ws) = workspace();
    let w = ws.to_string_lossy().into_owned();
    let before = snapshot(&ws);
    let b = preview(&ws, src, dst);
    assert_eq!(snapshot(&ws), before, "a preview writes nothing");
    assert_eq!(b["facts"]["applied"], false);
    assert_eq!(b["facts"]["provenance"], "lanser");
    let diff = b["edits"]["diff"].as_str().unwrap().to_string();

    // The preview diff, through `git apply` on a second clean copy.
    let (_t2, other) = workspace();
    assert!(git_apply(&other, &diff), "a valid patch:\n{diff}");

    let o = run(&[
        "rename-file",
        src,
        dst,
        "--workspace",
        &w,
        "--apply",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let applied = bundle(&o);
    assert_eq!(applied["facts"]["applied"], true);
    let after = snapshot(&ws);
    assert_eq!(after, snapshot(&other), "apply wrote exactly the preview");

    // Every file: the expected new text, a new empty __init__.py, or the old bytes moved.
    let moved = |rel: &str| -> String {
        if rel == src {
            dst.to_string()
        } else if let Some(rest) = rel.strip_prefix(&format!("{src}/")) {
            format!("{dst}/{rest}")
        } else {
            rel.to_string()
        }
    };
    let mut want: BTreeMap<String, Vec<u8>> =
        before.iter().map(|(k, v)| (moved(k), v.clone())).collect();
    for (rel, text) in expected {
        assert!(want.contains_key(*rel), "{rel} is a workspace file");
        assert_ne!(want[*rel], text.as_bytes(), "{rel} changes");
        want.insert(rel.to_string(), text.as_bytes().to_vec());
    }
    for c in created {
        want.insert(c.to_string(), Vec::new());
    }
    for (k, v) in &after {
        assert_eq!(
            String::from_utf8_lossy(v),
            String::from_utf8_lossy(want.get(k).map(|v| &v[..]).unwrap_or(b"<absent>")),
            "{k}"
        );
    }
    assert_eq!(
        after.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>()
    );
    assert!(!ws.join(src).exists());
    smoke(&ws, smoke_script);

    // --apply-mode git writes the same tree through `git apply --3way`.
    let (_t3, third) = workspace();
    let t = third.to_string_lossy().into_owned();
    let o = run(&[
        "rename-file",
        src,
        dst,
        "--workspace",
        &t,
        "--apply",
        "--apply-mode",
        "git",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(snapshot(&third), after, "git mode wrote the same tree");
    applied
}

/// Pyright's diagnostics after a move equal those before it, paths and module names mapped.
fn same_diagnostics(ws_after: &Path, path_map: &dyn Fn(&str) -> String, names: &[(&str, &str)]) {
    let (_t, fresh) = workspace();
    let (counts_before, before) = diagnostics(&fresh);
    assert_eq!(
        counts_before,
        serde_json::json!({"error": 3, "warning": 0, "information": 0, "hint": 0})
    );
    assert!(before.iter().all(|d| d.0 == "src/shapes/broken.py"));
    let (counts_after, after) = diagnostics(ws_after);
    assert_eq!(counts_after, counts_before);
    let mapped: Vec<_> = before
        .into_iter()
        .map(|(p, r, s, mut m)| {
            for (a, b) in names {
                m = m.replace(a, b);
            }
            (path_map(&p), r, s, m)
        })
        .collect();
    assert_eq!(after, mapped);
}

const SMOKE: &str = "import shapes, shapes.report, test_units, test_geometry\n\
                     test_units.test_all_spellings(); test_geometry.test_circle_area()\n\
                     assert shapes.convert(100.0, 'm') == 1.0\n\
                     assert shapes.report.report(250.0) == '2.5 m, 4 digits (4, 1.0)'";

#[test]
fn module_renamed_in_its_package() {
    let to = "src/shapes/conversions.py";
    let rel_units = [(
        "from .units import convert",
        "from .conversions import convert",
    )];
    let expected = vec![
        (
            "src/shapes/__init__.py",
            changed(&original("src/shapes/__init__.py"), &rel_units),
        ),
        (
            "src/shapes/broken.py",
            changed(&original("src/shapes/broken.py"), &rel_units),
        ),
        (
            "src/shapes/intl.py",
            changed(&original("src/shapes/intl.py"), &rel_units),
        ),
        (
            "src/shapes/geometry.py",
            changed(
                &original("src/shapes/geometry.py"),
                &[("from .units import round", "from .conversions import round")],
            ),
        ),
        (
            "src/shapes/report.py",
            changed(
                &original("src/shapes/report.py"),
                &[
                    (
                        "from . import units, geometry",
                        "from . import conversions as units, geometry",
                    ),
                    ("from .units import (", "from .conversions import ("),
                ],
            ),
        ),
        (
            "tests/test_units.py",
            changed(
                &original("tests/test_units.py"),
                &[
                    ("import shapes.units\n", "import shapes.conversions\n"),
                    ("import shapes.units as u", "import shapes.conversions as u"),
                    (
                        "from shapes import units\n",
                        "from shapes import conversions as units\n",
                    ),
                    ("    units as units_mod,", "    conversions as units_mod,"),
                    (
                        "from shapes.units import \\",
                        "from shapes.conversions import \\",
                    ),
                    (
                        "from shapes.units import (",
                        "from shapes.conversions import (",
                    ),
                    (
                        "assert shapes.units.convert(",
                        "assert shapes.conversions.convert(",
                    ),
                ],
            ),
        ),
    ];
    let b = check_move("src/shapes/units.py", to, &expected, &[], SMOKE);
    assert_eq!(
        b["facts"]["modules"],
        serde_json::json!([
            {"from": "src.shapes.units", "to": "src.shapes.conversions"},
            {"from": "shapes.units", "to": "shapes.conversions"}
        ])
    );
}

#[test]
fn module_moved_into_a_new_subpackage_and_diagnostics_are_unchanged() {
    let to = "src/shapes/sub/units.py";
    let rel_units = [(
        "from .units import convert",
        "from .sub.units import convert",
    )];
    let expected = vec![
        (
            "src/shapes/__init__.py",
            changed(&original("src/shapes/__init__.py"), &rel_units),
        ),
        (
            "src/shapes/broken.py",
            changed(&original("src/shapes/broken.py"), &rel_units),
        ),
        (
            "src/shapes/intl.py",
            changed(&original("src/shapes/intl.py"), &rel_units),
        ),
        (
            "src/shapes/geometry.py",
            changed(
                &original("src/shapes/geometry.py"),
                &[("from .units import round", "from .sub.units import round")],
            ),
        ),
        (
            "src/shapes/report.py",
            changed(
                &original("src/shapes/report.py"),
                &[(
                    "from . import units, geometry\nfrom .units import (",
                    "from . import geometry\nfrom .sub import units\nfrom .sub.units import (",
                )],
            ),
        ),
        (
            "tests/test_units.py",
            changed(
                &original("tests/test_units.py"),
                &[
                    ("import shapes.units\n", "import shapes.sub.units\n"),
                    ("import shapes.units as u", "import shapes.sub.units as u"),
                    (
                        "from shapes import units\n",
                        "from shapes.sub import units\n",
                    ),
                    (
                        "    units as units_mod,\n)\n",
                        ")\nfrom shapes.sub import units as units_mod\n",
                    ),
                    (
                        "from shapes.units import \\",
                        "from shapes.sub.units import \\",
                    ),
                    (
                        "from shapes.units import (",
                        "from shapes.sub.units import (",
                    ),
                    (
                        "assert shapes.units.convert(",
                        "assert shapes.sub.units.convert(",
                    ),
                ],
            ),
        ),
    ];
    let (_t, ws) = workspace();
    let w = ws.to_string_lossy().into_owned();
    check_move(
        "src/shapes/units.py",
        to,
        &expected,
        &["src/shapes/sub/__init__.py"],
        &format!("{SMOKE}\nimport shapes.sub.units"),
    );
    // The same move on another copy, for Pyright's view of the result.
    let o = run(&[
        "rename-file",
        "src/shapes/units.py",
        to,
        "--workspace",
        &w,
        "--apply",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("applied 17 edits in 9 files"),
        "{}",
        stdout(&o)
    );
    same_diagnostics(&ws, &|p| p.to_string(), &[]);
}

#[test]
fn package_renamed_and_diagnostics_are_unchanged() {
    let test_units = changed(
        &original("tests/test_units.py"),
        &[
            ("import shapes.units\n", "import forms.units\n"),
            ("import shapes.units as u", "import forms.units as u"),
            ("from shapes import units\n", "from forms import units\n"),
            ("from shapes import (", "from forms import ("),
            ("from shapes.units import \\", "from forms.units import \\"),
            ("from shapes.units import (", "from forms.units import ("),
            (
                "assert shapes.units.convert(",
                "assert forms.units.convert(",
            ),
        ],
    );
    // The string and the comment that name shapes.units are left alone.
    assert!(test_units
        .contains("NOTE = \"shapes.units is named in a string\"  # and shapes.units in a comment"));
    let expected = vec![
        (
            "tests/test_geometry.py",
            changed(
                &original("tests/test_geometry.py"),
                &[
                    ("from shapes import Circle", "from forms import Circle"),
                    ("from shapes.geometry import", "from forms.geometry import"),
                ],
            ),
        ),
        ("tests/test_units.py", test_units),
    ];
    let smoke = SMOKE.replace("shapes", "forms");
    let b = check_move("src/shapes", "src/forms", &expected, &[], &smoke);
    assert_eq!(b["facts"]["kind"], "package");
    assert_eq!(b["facts"]["moved"].as_array().unwrap().len(), 7);

    let (_t, ws) = workspace();
    let w = ws.to_string_lossy().into_owned();
    let o = run(&[
        "rename-file",
        "src/shapes",
        "src/forms",
        "--workspace",
        &w,
        "--apply",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    same_diagnostics(
        &ws,
        &|p| p.replacen("src/shapes/", "src/forms/", 1),
        &[("shapes.", "forms.")],
    );
}

#[test]
fn a_moved_module_rewrites_its_own_relative_imports() {
    let expected = vec![(
        "src/shapes/sub/report.py",
        changed(
            &original("src/shapes/report.py"),
            &[
                (
                    "from . import units, geometry",
                    "from .. import units, geometry",
                ),
                ("from .units import (", "from ..units import ("),
            ],
        ),
    )];
    check_move(
        "src/shapes/report.py",
        "src/shapes/sub/report.py",
        &expected,
        &["src/shapes/sub/__init__.py"],
        "import shapes.sub.report as r\nassert r.report(250.0) == '2.5 m, 4 digits (4, 1.0)'",
    );
}

#[test]
fn refused_moves_write_nothing() {
    let (tmp, ws) = workspace();
    let w = ws.to_string_lossy().into_owned();
    crate::support::link(Path::new("shapes/units.py"), &ws.join("src/link.py"));
    git(&ws, &["add", "-A"]);
    git(&ws, &["commit", "-qm", "link"]);
    let before = snapshot(&ws);
    let outside = tmp
        .path()
        .join("elsewhere.py")
        .to_string_lossy()
        .into_owned();
    let cases: &[(&[&str], i32, &str)] = &[
        (
            &["src/shapes/units.py", "src/shapes/geometry.py"],
            70,
            "src/shapes/geometry.py already exists; nothing was applied",
        ),
        (&["src/shapes", "tests"], 70, "tests already exists"),
        (
            &["src/shapes/units.py", "../elsewhere.py"],
            71,
            "refusing to touch",
        ),
        (
            &["src/shapes/units.py", &outside],
            71,
            "outside the workspace",
        ),
        (
            &["src/shapes/nope.py", "src/shapes/yes.py"],
            3,
            "src/shapes/nope.py does not exist",
        ),
        (
            &["src/shapes/units.py", "src/shapes/my-units.py"],
            2,
            "not an importable module path",
        ),
        (
            &["src/shapes/units.py", "src/shapes/units.txt"],
            2,
            "must keep the suffix",
        ),
        (
            &["src/shapes/__init__.py", "src/shapes/init.py"],
            2,
            "move the directory instead",
        ),
        (&["src/shapes", "src/shapes/inner"], 2, "into itself"),
        (&["src/link.py", "src/moved.py"], 2, "is a symbolic link"),
    ];
    for (paths, code, needle) in cases {
        let o = run(&[&["rename-file"], *paths, &["--workspace", &w, "--apply"]].concat());
        assert_eq!(o.status.code(), Some(*code), "{paths:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains(needle), "{paths:?}: {err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert_eq!(snapshot(&ws), before, "{paths:?}");
    }
    // A file that needs an import edit is denied: nothing moves.
    let o = run(&[
        "rename-file",
        "src/shapes/units.py",
        "src/shapes/conversions.py",
        "--workspace",
        &w,
        "--apply",
        "--deny",
        "tests/*",
    ]);
    assert_eq!(o.status.code(), Some(71), "{}", stderr(&o));
    assert!(stderr(&o).contains("refusing to touch tests/test_units.py: denied by --deny tests/*"));
    assert_eq!(snapshot(&ws), before);
    assert!(!ws.join("src/shapes/sub").exists());
    // A file a directory move would carry is denied: nothing moves.
    let o = run(&[
        "rename-file",
        "src/shapes",
        "src/forms",
        "--workspace",
        &w,
        "--apply",
        "--deny",
        "src/forms/crlf_mod.py",
    ]);
    assert_eq!(o.status.code(), Some(71), "{}", stderr(&o));
    assert!(stderr(&o).contains("refusing to touch src/forms/crlf_mod.py"));
    assert_eq!(snapshot(&ws), before);
}

/// One session across the move: the server is told (didChangeWatchedFiles, didOpen/didChange
/// at the new paths), so diagnostics asked afterwards in the same process see the moved tree.
#[tokio::test]
async fn the_session_sees_the_move() {
    use crate::facts::request;
    use lanser::commands::Execute;
    use lanser::orchestrator::Orchestrator;
    let (_t, ws) = workspace();
    let mut o = Orchestrator::new(crate::facts::options(&ws)).unwrap();
    let diag = request("diag", None, &[]);
    // Files the session has open: without didChange it would keep their old imports.
    for (rel, needle, name) in [
        (
            "src/shapes/__init__.py",
            "from .units import convert",
            "convert",
        ),
        (
            "src/shapes/geometry.py",
            "from .units import round",
            "round_to_precision",
        ),
        ("tests/test_units.py", "import shapes.units as u", "u"),
    ] {
        let line = line_with(&ws, rel, needle);
        let h = o
            .execute(&request(
                "hover",
                Some(format!("{rel}@L{line}:{name}")),
                &[],
            ))
            .await;
        assert!(h.error.is_none(), "{:?}", h.error);
    }
    let before = o.execute(&diag).await;
    assert_eq!(before.facts["counts"]["error"], 3);
    let mv = request(
        "rename-file",
        None,
        &["src/shapes/units.py", "src/shapes/sub/units.py", "--apply"],
    );
    let b = o.execute(&mv).await;
    assert!(b.error.is_none(), "{:?}", b.error);
    crate::schemas::collect_bundle(&b);
    let after = o.execute(&diag).await;
    assert_eq!(after.facts["counts"], before.facts["counts"]);
    assert_eq!(after.facts["diagnostics"], before.facts["diagnostics"]);
    assert!(after.facts["files"]
        .as_array()
        .unwrap()
        .contains(&serde_json::json!("src/shapes/sub/units.py")));
    // The open file's new import leads to the moved module.
    let line = line_with(
        &ws,
        "src/shapes/__init__.py",
        "from .sub.units import convert",
    );
    let d = o
        .execute(&request(
            "def",
            Some(format!("src/shapes/__init__.py@L{line}:convert")),
            &[],
        ))
        .await;
    assert!(d.error.is_none(), "{:?}", d.error);
    let def_line = line_with(&ws, "src/shapes/sub/units.py", "def convert(");
    assert_eq!(
        locs(&d.facts["definitions"]),
        vec![(
            "src/shapes/sub/units.py".to_string(),
            ident_range(&ws, "src/shapes/sub/units.py", def_line, "convert")
        )]
    );
    o.close().await;
}

/// A server that advertises `workspace/willRenameFiles` is asked first; its edits win for the
/// files it edits, lanser's cover the rest (tests/fake_lsp.py plays such a server).
#[test]
fn a_server_with_will_rename_files_is_asked_first() {
    let (_t, ws) = workspace();
    let w = ws.to_string_lossy().into_owned();
    let cmd = format!(
        "python3 {} willrename",
        repo().join("tests/fake_lsp.py").display()
    );
    let args = [
        "rename-file",
        "src/shapes/units.py",
        "src/shapes/sub/units.py",
        "--workspace",
        &w,
        "--server-cmd",
        &cmd,
        "--json",
    ];
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let b = bundle(&o);
    assert_eq!(b["facts"]["provenance"], "lsp+lanser");
    let o = run(&[&args[..], &["--apply"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    // The server's one edit, and none of lanser's, in the file the server edited.
    assert_eq!(
        read(&ws, "tests/test_units.py"),
        changed(
            &original("tests/test_units.py"),
            &[(
                "import shapes.units\n",
                "import shapes.sub.units  # by the server\n"
            )]
        )
    );
    // lanser's edits everywhere else.
    assert_eq!(
        read(&ws, "src/shapes/geometry.py"),
        changed(
            &original("src/shapes/geometry.py"),
            &[("from .units import round", "from .sub.units import round")]
        )
    );
    assert!(ws.join("src/shapes/sub/units.py").is_file());
}
