//! Files of a type no server serves (issue 44): every operation on one is refused with
//! `E/UNSUPPORTED` (exit 72), one line naming the type and the `lanser.toml` entry that would
//! add a server, before any server starts (the refusals run with an empty LANSER_HOME, where a
//! server would first have to be installed); a workspace-wide answer lists such files as
//! unchecked and is not complete. A Python script without an extension still goes to Pyright.

use crate::support::{batch_lines, lanser, mcp_session, stderr, write_tree};
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Output};

/// (file, 1-based line, a name on it, the type as the refusal shows it, as `file_types` names it)
const FILES: &[(&str, u32, &str, &str, &str)] = &[
    ("a.rb", 2, "add", ".rb", "rb"),
    ("Main.kt", 2, "add", ".kt", "kt"),
    ("Makefile", 1, "all", "Makefile", "Makefile"),
    ("ok.ini", 1, "name", ".ini", "ini"),
];

const TREE: &[(&str, &str)] = &[
    ("a.py", "def add(x):\n    return x + 1\n"),
    ("a.rb", "class A\n  def add(x)\n    x + 1\n  end\nend\n"),
    (
        "Main.kt",
        "object Main {\n  fun add(a: Int, b: Int) = a + b\n}\n",
    ),
    ("Makefile", "all:\n\techo hi\n"),
    ("ok.ini", "name = 1\n"),
    ("bad.ini", "[a\nb = \n"),
    ("tool", "#!/usr/bin/env python3\nprint(len('abc'))\n"),
];

/// A committed git repository holding [`TREE`].
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), TREE);
    for args in [
        &["init", "-q"][..],
        &["add", "-A"],
        &["commit", "-qm", "tree"],
    ] {
        let o = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(["-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "git {args:?}");
    }
    dir
}

/// lanser in `ws` with an empty LANSER_HOME (`home`): nothing installed, so a request that
/// started a server would first install one.
fn bare(ws: &Path, home: &Path, args: &[&str]) -> Output {
    lanser()
        .env("LANSER_HOME", home)
        .current_dir(ws)
        .args(args)
        .output()
        .unwrap()
}

/// A patch replacing `file`'s first line.
fn patch(ws: &Path, file: &str) -> String {
    let text = std::fs::read_to_string(ws.join(file)).unwrap();
    let first = text.lines().next().unwrap();
    format!("--- a/{file}\n+++ b/{file}\n@@ -1 +1 @@\n-{first}\n+{first} \n")
}

/// The refusal's line for `file` (of shown type `shown`, `file_types` name `t`).
fn assert_refused(o: &Output, file: &str, shown: &str, t: &str, what: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(72), "{what}: {err}");
    assert_eq!(err.lines().count(), 1, "{what}: one line: {err}");
    let want = format!("lanser: E/UNSUPPORTED: {file}: lanser has no built-in server for {shown} files; add one in lanser.toml: servers.");
    assert!(err.starts_with(&want), "{what}: {err}");
    assert!(
        err.trim_end()
            .ends_with(&format!("file_types = [\"{t}\"] }}")),
        "{what}: {err}"
    );
    assert!(
        !err.contains("installing"),
        "{what}: nothing installed: {err}"
    );
}

/// Every server-backed operation on each unserved file type: exit 72, one line naming it;
/// with `--json`, an error bundle that claims nothing and names no server.
#[test]
fn every_operation_on_an_unserved_file_is_refused_naming_its_type() {
    let ws = repo();
    let w = ws.path();
    let home = tempfile::tempdir().unwrap();
    let diffs = tempfile::tempdir().unwrap();
    for (file, line, name, shown, t) in FILES {
        let sel = format!("{file}@L{line}:{name}");
        let diff = diffs.path().join(format!("{t}.diff"));
        std::fs::write(&diff, patch(w, file)).unwrap();
        let diff = diff.to_string_lossy().into_owned();
        let ops: Vec<Vec<&str>> = vec![
            vec!["def", &sel],
            vec!["refs", &sel],
            vec!["hover", &sel],
            vec!["symbols", file],
            vec!["diag", file],
            vec!["rename", &sel, "renamed"],
            vec!["check", "--patch", &diff],
            vec!["impact", &sel],
            vec!["impact", "--patch", &diff],
        ];
        for op in ops {
            let what = op.join(" ");
            assert_refused(&bare(w, home.path(), &op), file, shown, t, &what);
            let o = bare(w, home.path(), &[&op[..], &["--json"]].concat());
            assert_eq!(o.status.code(), Some(72), "{what} --json");
            let b: Value = serde_json::from_slice(&o.stdout).unwrap();
            assert_eq!(b["status"], "error", "{what}");
            assert_eq!(b["facts"], Value::Null, "{what}");
            assert_eq!(b["error"]["code"], "E/UNSUPPORTED", "{what}");
            assert_eq!(b["error"]["retryable"], false, "{what}");
            assert_eq!(b["environment"]["server"], Value::Null, "{what}");
        }
    }
    // Nothing was installed for any of them.
    assert_eq!(std::fs::read_dir(home.path()).unwrap().count(), 0);
    // Naming a server that does not serve the type is refused the same way.
    let o = bare(
        w,
        home.path(),
        &["--server", "pyright", "def", "a.rb@L2:add"],
    );
    assert_eq!(o.status.code(), Some(72), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("a.rb: server pyright does not serve .rb files"),
        "{}",
        stderr(&o)
    );
    // `source` and `locate` ask no server: they answer from lanser's own outline (TOML has
    // one; `--server pyright` serves no TOML) and are not refused where there is none.
    std::fs::write(w.join("cfg.toml"), "name = 1\n").unwrap();
    let o = bare(
        w,
        home.path(),
        &["source", "cfg.toml@L1:name", "--server", "pyright"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = bare(w, home.path(), &["source", "a.rb@L2:add"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let o = bare(w, home.path(), &["locate", "Makefile@L1:all"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// The MCP tools, on the same files: each an error result naming the type; `changes` answers
/// and lists the changed unserved files as unchecked, not complete.
#[test]
fn the_mcp_tools_refuse_unserved_files_and_changes_lists_them() {
    let ws = repo();
    let w = ws.path();
    let home = tempfile::tempdir().unwrap();
    let mut calls: Vec<(&str, Value)> = Vec::new();
    for (file, line, name, _, _) in FILES {
        let sel = format!("{file}@L{line}:{name}");
        calls.extend([
            ("definition", json!({"selector": sel})),
            ("references", json!({"selector": sel})),
            ("hover", json!({"selector": sel})),
            ("symbols", json!({"file": file})),
            ("diagnostics", json!({"files": [file]})),
            ("rename", json!({"selector": sel, "new_name": "renamed"})),
            ("check_patch", json!({"patch": patch(w, file)})),
            ("impact", json!({"selector": sel})),
        ]);
    }
    let n = calls.len();
    // A changed Ruby file, and one that is code and a changed TOML file (data: listed only).
    std::fs::write(
        w.join("a.rb"),
        "class A\n  def plus(x)\n    x + 1\n  end\nend\n",
    )
    .unwrap();
    std::fs::write(w.join("Makefile"), "all:\n\techo bye\n").unwrap();
    calls.push(("changes", json!({})));
    let mut cmd = lanser();
    cmd.env("LANSER_HOME", home.path())
        .args(["mcp", "--workspace"])
        .arg(w);
    let results = mcp_session(cmd, &calls);
    let per_file = n / FILES.len();
    for (i, r) in results[..n].iter().enumerate() {
        let (file, _, _, shown, _) = FILES[i / per_file];
        let what = &calls[i].0;
        assert_eq!(r["isError"], true, "{what} {file}: {r}");
        let text = r["content"][0]["text"].as_str().unwrap();
        let want = format!("E/UNSUPPORTED: {file}: lanser has no built-in server for {shown} files; add one in lanser.toml: ");
        assert!(text.starts_with(&want), "{what}: {text}");
        assert_eq!(r["structuredContent"]["error"]["code"], "E/UNSUPPORTED");
    }
    let changes = &results[n]["structuredContent"];
    assert_eq!(changes["status"], "ok", "{changes}");
    let unchecked: Vec<(&str, &str)> = changes["facts"]["unchecked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| (u["path"].as_str().unwrap(), u["fileType"].as_str().unwrap()))
        .collect();
    assert_eq!(unchecked, [("Makefile", "Makefile"), ("a.rb", "rb")]);
    assert_eq!(changes["meta"]["complete"], false);
    assert_eq!(std::fs::read_dir(home.path()).unwrap().count(), 0);
}

/// Over a mixed tree (one Pyright session, through a batch): a glob `diag` checks the Python
/// files — the script without an extension among them — and lists every other matched file
/// as unchecked, not complete; `symbols --query` lists the unserved code files;
/// `check --patch` over a Python file and a Ruby file measures the first, lists the second;
/// a line about a Ruby file is refused.
#[test]
fn workspace_wide_answers_list_unserved_files_as_unchecked() {
    let ws = repo();
    let w = ws.path();
    let outside = tempfile::tempdir().unwrap();
    let diff = outside.path().join("both.diff");
    std::fs::write(&diff, format!("{}{}", patch(w, "a.py"), patch(w, "a.rb"))).unwrap();
    let check = json!({"cmd": "check", "args": {"patch": diff}}).to_string();
    let lines = [
        r#"{"cmd":"diag","args":{"targets":["*"]}}"#,
        r#"{"cmd":"symbols","args":{"query":"add"}}"#,
        check.as_str(),
        r#"{"cmd":"def","selector":"a.rb@L2:add"}"#,
    ];
    let o = batch_lines(w, &lines);
    let b: Vec<Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let unchecked = |b: &Value| -> Vec<String> {
        b["facts"]["unchecked"]
            .as_array()
            .unwrap_or(&Vec::new())
            .iter()
            .map(|u| u["path"].as_str().unwrap().to_string())
            .collect()
    };
    let diag = &b[0];
    assert_eq!(diag["status"], "ok", "{diag}");
    let mut served = vec!["a.py", "tool"];
    served.sort();
    assert_eq!(diag["facts"]["files"], json!(served));
    let mut unserved: Vec<&str> = TREE
        .iter()
        .map(|(f, _)| *f)
        .filter(|f| !served.contains(f))
        .collect();
    unserved.sort();
    assert_eq!(unchecked(diag), unserved);
    assert_eq!(diag["meta"]["complete"], false);
    // Pyright checked the script as Python: `len` is known there, so no error is reported.
    assert_eq!(diag["facts"]["counts"]["error"], 0, "{diag}");

    let symbols = &b[1];
    assert_eq!(symbols["status"], "ok", "{symbols}");
    assert_eq!(unchecked(symbols), ["Main.kt", "Makefile", "a.rb"]);
    assert_eq!(symbols["meta"]["complete"], false);

    let check = &b[2];
    assert_eq!(check["status"], "ok", "{check}");
    assert_eq!(check["facts"]["patched"], json!(["a.py", "a.rb"]));
    assert_eq!(unchecked(check), ["a.rb"]);
    assert_eq!(check["meta"]["complete"], false);

    // A batch line about an unserved file is refused like the command line, beside the rest.
    let def = &b[3];
    assert_eq!(def["error"]["code"], "E/UNSUPPORTED", "{def}");
    assert_eq!(def["meta"]["exit_code"], 72, "{def}");
    assert_eq!(def["facts"], Value::Null);
}
