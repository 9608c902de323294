//! Safe mutations against real Pyright on throw-away git copies of the fixtures: the preview is
//! exactly what apply writes, refused applies leave every byte alone, a SIGKILL anywhere
//! inside apply leaves each file wholly old or wholly new, CRLF and BOM survive.

use crate::support::*;
use lanser::edits::apply::{self, Mode};
use lanser::edits::{workspace_edit, Plan};
use lanser::safety::Jail;
use lanser::text::Encoding;
use lanser::workspace::{path_to_uri, Workspace};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

pub fn git(dir: &Path, args: &[&str]) {
    let o = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A committed git copy of a fixture in a temp dir.
pub fn repo_copy(name: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join(name);
    copy_tree(&fixture(name), &ws);
    commit_tree(&ws);
    (tmp, ws)
}

/// Make `dir` a git repository whose one commit holds every file in it.
pub fn commit_tree(dir: &Path) {
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "fixture"]);
}

/// Every file under `dir` (skipping .git) with its bytes.
pub fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            if name == ".git" {
                continue;
            }
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.insert(rel, std::fs::read(&p).unwrap_or_default());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// `git apply` a unified diff (from stdin) in `dir`; whether it applied.
pub fn git_apply(dir: &Path, diff: &str) -> bool {
    use std::io::Write;
    let mut child = Command::new("git")
        .args(["apply", "-"])
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(diff.as_bytes())
        .unwrap();
    child.wait().unwrap().success()
}

pub fn rename_args<'a>(ws: &'a str, sel: &'a str, new: &'a str) -> Vec<&'a str> {
    vec!["rename", sel, new, "--workspace", ws]
}

#[test]
fn preview_diff_is_exactly_what_apply_writes() {
    let (_t, ws) = repo_copy("srcpkg");
    let w = ws.to_string_lossy().into_owned();
    let line = line_with(&ws, "src/shapes/units.py", "def convert(");
    let sel = format!("src/shapes/units.py@L{line}:convert");
    let before = snapshot(&ws);
    let preview = run(&[&rename_args(&w, &sel, "to_unit")[..], &["--json"]].concat());
    assert!(preview.status.success(), "{}", stderr(&preview));
    let pb = bundle(&preview);
    assert_eq!(snapshot(&ws), before, "a preview writes nothing");
    assert_eq!(pb["facts"]["applied"], false);
    let diff = pb["edits"]["diff"].as_str().unwrap().to_string();
    let files: Vec<&str> = pb["edits"]["workspaceEdit"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        [
            "src/shapes/__init__.py",
            "src/shapes/broken.py",
            "src/shapes/intl.py",
            "src/shapes/units.py"
        ]
    );

    // git applies the preview diff to a second clean copy: the reference result.
    let (_t2, other) = repo_copy("srcpkg");
    assert!(git_apply(&other, &diff), "the preview is a valid patch");

    let applied = run(&[
        &rename_args(&w, &sel, "to_unit")[..],
        &["--apply", "--json"],
    ]
    .concat());
    assert!(applied.status.success(), "{}", stderr(&applied));
    assert_eq!(bundle(&applied)["facts"]["applied"], true);
    // docVersions name the text the edits were computed against, not what was written.
    let b = bundle(&applied);
    for f in b["edits"]["workspaceEdit"]["files"].as_array().unwrap() {
        let path = f["path"].as_str().unwrap();
        assert_eq!(b["meta"]["docVersions"][path], f["docVersion"], "{path}");
    }
    assert_eq!(
        snapshot(&ws),
        snapshot(&other),
        "apply wrote exactly the previewed diff"
    );
    // The renamed code is consistent: the server finds the new name's definition from a use.
    let use_line = line_with(&ws, "src/shapes/intl.py", "result = to_unit(");
    let o = run(&[
        "def",
        &format!("src/shapes/intl.py@L{use_line}:to_unit"),
        "--workspace",
        &w,
        "--json",
    ]);
    let defs = locs(&bundle(&o)["facts"]["definitions"]);
    assert_eq!(
        defs,
        vec![(
            "src/shapes/units.py".to_string(),
            ident_range(&ws, "src/shapes/units.py", line, "to_unit")
        )]
    );

    // git mode applies the same change through `git apply --3way`.
    let (_t3, third) = repo_copy("srcpkg");
    let t = third.to_string_lossy().into_owned();
    let o = run(&[
        &rename_args(&t, &sel, "to_unit")[..],
        &["--apply", "--apply-mode", "git"],
    ]
    .concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(snapshot(&third), snapshot(&other));
}

#[test]
fn refused_applies_leave_every_byte_alone() {
    // CLI refusals: dirty tree, deny glob, read-only file, not a git repo, outside symlink.
    let (tmp, ws) = repo_copy("flat");
    let w = ws.to_string_lossy().into_owned();
    let line = line_with(&ws, "main.py", "user.display_name()");
    let sel = format!("main.py@L{line}:display_name");
    let apply = |extra: &[&str]| {
        run(&[&rename_args(&w, &sel, "full_name")[..], &["--apply"], extra].concat())
    };

    // A person's uncommitted change in a file the rename touches (an untracked file it does
    // not touch, beside it, refuses nothing: docs/safety.md#uncommitted-changes).
    std::fs::write(ws.join("notes.txt"), "untracked\n").unwrap();
    let models_text = read(&ws, "models.py");
    std::fs::write(ws.join("models.py"), format!("{models_text}# mine\n")).unwrap();
    let before = snapshot(&ws);
    let o = apply(&[]);
    assert_eq!(o.status.code(), Some(71), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "refusing to write models.py: it holds uncommitted changes lanser did not make"
        ),
        "{}",
        stderr(&o)
    );
    assert_eq!(snapshot(&ws), before);
    std::fs::write(ws.join("models.py"), models_text).unwrap();
    std::fs::remove_file(ws.join("notes.txt")).unwrap();
    let before = snapshot(&ws);

    let o = apply(&["--deny", "models.py"]);
    assert_eq!(o.status.code(), Some(71));
    assert!(
        stderr(&o).contains("refusing to touch models.py: denied by --deny models.py"),
        "{}",
        stderr(&o)
    );
    assert_eq!(snapshot(&ws), before);

    let o = apply(&["--allow", "main.py"]);
    assert_eq!(o.status.code(), Some(71));
    assert!(
        stderr(&o).contains("matched by no --allow glob"),
        "{}",
        stderr(&o)
    );

    let models = ws.join("models.py");
    let mut perms = std::fs::metadata(&models).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&models, perms.clone()).unwrap();
    let o = apply(&[]);
    assert_eq!(o.status.code(), Some(71), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("models.py: the file is read-only"),
        "{}",
        stderr(&o)
    );
    assert_eq!(snapshot(&ws), before);
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&models, perms).unwrap();

    // A file that is a symlink to outside the workspace.
    let outside = tmp.path().join("outside.py");
    std::fs::write(&outside, "from models import User\n\ndef shout(u: User) -> str:\n    return u.display_name().upper()\n").unwrap();
    crate::support::link(&outside, &ws.join("linked.py"));
    git(&ws, &["add", "-A"]);
    git(&ws, &["commit", "-qm", "link"]);
    let before = snapshot(&ws);
    let outside_before = std::fs::read(&outside).unwrap();
    let o = apply(&[]);
    assert_eq!(o.status.code(), Some(71), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("outside the workspace"),
        "{}",
        stderr(&o)
    );
    assert_eq!(snapshot(&ws), before);
    assert_eq!(std::fs::read(&outside).unwrap(), outside_before);

    // No repository at all.
    let bare = tempfile::tempdir().unwrap();
    let plain = bare.path().join("flat");
    copy_tree(&fixture("flat"), &plain);
    let p = plain.to_string_lossy().into_owned();
    let before = snapshot(&plain);
    let o = run(&[&rename_args(&p, &sel, "full_name")[..], &["--apply"]].concat());
    assert_eq!(o.status.code(), Some(71));
    assert!(
        stderr(&o).contains("not inside a git repository"),
        "{}",
        stderr(&o)
    );
    assert_eq!(snapshot(&plain), before);
    // Not an identifier.
    let o = run(&rename_args(&p, &sel, "full-name"));
    assert_eq!(o.status.code(), Some(2));
}

/// A WorkspaceEdit as a server might send it, through the library envelope.
fn edit_for(uris: &[String]) -> serde_json::Value {
    let r = json!({"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}});
    let changes: serde_json::Map<String, serde_json::Value> = uris
        .iter()
        .map(|u| (u.clone(), json!([{"range": r, "newText": "Z"}])))
        .collect();
    json!({ "changes": changes })
}

#[test]
fn the_envelope_refuses_bad_edits_before_writing() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ws");
    std::fs::create_dir_all(root.join("pkg")).unwrap();
    std::fs::write(root.join("pkg/a.py"), "a = 1\n").unwrap();
    std::fs::write(root.join("pkg/b.py"), "b = 2\n").unwrap();
    std::fs::write(root.join("latin1.py"), b"x = '\xe9'\n").unwrap();
    std::fs::write(tmp.path().join("secret.py"), "s = 0\n").unwrap();
    let ws = Workspace::new(root.canonicalize().unwrap());
    let jail = Jail::new(&ws, &[], &[]).unwrap();
    let a = path_to_uri(&ws.root.join("pkg/a.py"));
    let before = (
        snapshot(&ws.root),
        std::fs::read(tmp.path().join("secret.py")).unwrap(),
    );
    let cases = [
        (
            format!("{}/pkg/../../secret.py", path_to_uri(&ws.root)),
            71,
            "outside the workspace",
        ),
        (
            path_to_uri(&tmp.path().join("secret.py")),
            71,
            "outside the workspace",
        ),
        (
            path_to_uri(&ws.root.join("latin1.py")),
            75,
            "latin1.py is not UTF-8",
        ),
        (
            "https://example.invalid/x.py".to_string(),
            71,
            "not a file:// URI",
        ),
    ];
    for (bad, code, needle) in cases {
        let err = Plan::from_workspace_edit(
            &jail,
            workspace_edit(&edit_for(&[a.clone(), bad.clone()])).unwrap(),
            Encoding::Utf16,
        )
        .unwrap_err();
        assert_eq!(err.code.exit_code(), code, "{bad}: {}", err.message);
        assert!(err.message.contains(needle), "{bad}: {}", err.message);
    }
    // Overlapping edits are rejected, not dropped.
    let r = |c: u32, d: u32| json!({"start": {"line": 0, "character": c}, "end": {"line": 0, "character": d}});
    let overlap = json!({"changes": {a.clone(): [{"range": r(0, 3), "newText": "x"}, {"range": r(2, 4), "newText": "y"}]}});
    let err = Plan::from_workspace_edit(&jail, workspace_edit(&overlap).unwrap(), Encoding::Utf16)
        .unwrap_err();
    assert_eq!(err.code.exit_code(), 70);

    // A stale docVersion: one file changed after the preview → 70 with hunks, nothing written.
    let b = path_to_uri(&ws.root.join("pkg/b.py"));
    let plan = Plan::from_workspace_edit(
        &jail,
        workspace_edit(&edit_for(&[a.clone(), b])).unwrap(),
        Encoding::Utf16,
    )
    .unwrap();
    std::fs::write(root.join("pkg/b.py"), "b = 3\n").unwrap();
    let changed = snapshot(&ws.root);
    let err = apply::apply(&ws.root, &plan, Mode::Direct, None).unwrap_err();
    assert_eq!(err.code.exit_code(), 70);
    assert!(
        err.message.contains("pkg/b.py changed since the preview"),
        "{}",
        err.message
    );
    let hunks = err.details.unwrap()["conflicts"][0]["hunks"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        hunks.contains("-b = 2") && hunks.contains("+b = 3"),
        "{hunks}"
    );
    assert_eq!(snapshot(&ws.root), changed);
    assert_ne!(snapshot(&ws.root), before.0);
    assert_eq!(
        std::fs::read(tmp.path().join("secret.py")).unwrap(),
        before.1
    );
}

#[test]
fn crlf_and_bom_files_round_trip_except_for_the_renamed_identifier() {
    let (_t, ws) = repo_copy("flat");
    // A CRLF module with a UTF-8 BOM that uses the symbol on its first line and later.
    let text = "\u{feff}from models import User\r\n\r\n\r\ndef first(u: User) -> str:\r\n    return u.display_name()  # display_name\r\n";
    std::fs::write(ws.join("bom_crlf.py"), text).unwrap();
    git(&ws, &["add", "-A"]);
    git(&ws, &["commit", "-qm", "bom"]);
    let w = ws.to_string_lossy().into_owned();
    let before = snapshot(&ws);
    let sel = "bom_crlf.py@L5:display_name".to_string();
    let o = run(&[&rename_args(&w, &sel, "label")[..], &["--apply"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let after = snapshot(&ws);
    // Only the code occurrences change (not the comment); every other byte is kept.
    let want = text.replacen("u.display_name()", "u.label()", 1);
    assert_eq!(
        String::from_utf8(after["bom_crlf.py"].clone()).unwrap(),
        want
    );
    let models_before = String::from_utf8(before["models.py"].clone()).unwrap();
    assert_eq!(
        String::from_utf8(after["models.py"].clone()).unwrap(),
        models_before.replacen("def display_name(", "def label(", 1)
    );
}

/// A selector that resolves only fuzzily (below τ) is flagged ambiguous; with
/// `--deny-apply-on-ambiguous` the apply is refused (exit 4) and nothing is written, without it
/// the rename goes ahead at the name the anchored header defines.
#[test]
fn an_ambiguous_selector_is_refused_with_the_flag() {
    let (_t, ws) = repo_copy("srcpkg");
    let w = ws.to_string_lossy().into_owned();
    // The header as an agent misremembers it: `-> int` instead of `-> float`.
    let sel = r#"anchor://src/shapes/units.py#"def convert(value: float, unit: str) -> int:""#;
    let before = snapshot(&ws);
    let o = run(&[
        "rename",
        sel,
        "to_unit",
        "--workspace",
        &w,
        "--tau",
        "0.9",
        "--apply",
        "--deny-apply-on-ambiguous",
    ]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--deny-apply-on-ambiguous"),
        "{}",
        stderr(&o)
    );
    assert_eq!(snapshot(&ws), before);
    let o = run(&[
        "rename",
        sel,
        "to_unit",
        "--workspace",
        &w,
        "--tau",
        "0.9",
        "--json",
    ]);
    let b = bundle(&o);
    assert_eq!(b["resolution"]["ambiguous"], true);
    assert!(b["resolution"]["confidence"].as_f64().unwrap() < 0.9);
    assert_eq!(b["facts"]["newName"], "to_unit");
    let line = line_with(&ws, "src/shapes/units.py", "def convert(");
    assert_eq!(
        b["facts"]["range"],
        serde_json::json!(ident_range(&ws, "src/shapes/units.py", line, "convert"))
    );
}
