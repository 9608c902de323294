//! `lanser edit` and `lanser apply --patch` against real Pyright on a git copy of
//! fixtures/edit: every mode previewed (every byte left alone) and applied (the exact text
//! after, computed from the fixture's own text), a method of a class indented unlike the
//! file, `--require-clean` refusing an edit that breaks a caller in another file, a safe delete
//! refused while references remain, a stale hunk refusing its whole patch; and both
//! operations answered alike by the CLI, a batch line, the daemon, MCP and the SDK. Each test
//! shares one warm session for its many asks.

use crate::mutations::{git, repo_copy, snapshot};
use crate::support::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const SHAPES: &str = "shapes.py";

/// A file named by its content where the MCP tools and the SDK put a text they are given
/// (so every route names the same path in its request).
pub fn text_file(text: &str) -> String {
    let dir = std::env::temp_dir().join("lanser-patches");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!(
        "{}.diff",
        lanser::digest::sha256_hex(text.as_bytes())
    ));
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

/// A line's leading blanks.
fn leading(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

pub fn edit_line(sel: &str, mode: &str, text: Option<&str>, apply: bool) -> String {
    let mut args = json!({ "apply": apply });
    args[mode] = json!(true);
    if let Some(t) = text {
        args["text"] = json!(text_file(t));
    }
    json!({"cmd": "edit", "selector": sel, "args": args}).to_string()
}

pub fn patch_line(patch: &str, apply: bool) -> String {
    json!({"cmd": "apply", "args": {"patch": text_file(patch), "apply": apply}}).to_string()
}

/// Replace the one occurrence of `old` in `text`.
fn once(text: &str, old: &str, new: &str) -> String {
    assert_eq!(text.matches(old).count(), 1, "{old:?} once in the fixture");
    text.replacen(old, new, 1)
}

/// Preview `line` (nothing changes on disk, the diff is given), then apply it and check the
/// file is `want`; commit, so the next apply finds a clean tree.
fn preview_then_apply(h: &mut Harness, ws: &Path, line: &str, want: &str) {
    let before = snapshot(ws);
    let b = h.ask(line);
    assert_eq!(b["status"], "ok", "{line}: {}", b["error"]);
    assert_eq!(b["facts"]["applied"], false);
    assert!(b["edits"]["diff"]
        .as_str()
        .unwrap()
        .contains("+++ b/shapes.py"));
    assert_eq!(snapshot(ws), before, "a preview writes nothing: {line}");
    let applied = h.ask(&line.replace("\"apply\":false", "\"apply\":true"));
    assert_eq!(applied["status"], "ok", "{line}: {}", applied["error"]);
    assert_eq!(applied["facts"]["applied"], true);
    assert_eq!(
        applied["edits"]["diff"], b["edits"]["diff"],
        "applied as previewed"
    );
    assert_eq!(read(ws, SHAPES), want, "{line}");
    git(ws, &["commit", "-qam", "step"]);
}

#[test]
fn every_edit_mode_previews_then_applies_and_refusals_write_nothing() {
    let (_tmp, ws) = repo_copy("edit");
    let mut cmd = lanser();
    cmd.args(["batch", "--in", "-", "--out", "-", "--workspace"])
        .arg(&ws);
    let mut h = Harness::spawn(cmd);

    // --replace-body of a method in a class indented by two: its body keeps that indentation.
    let cur = read(&ws, SHAPES);
    let want = once(
        &cur,
        "  def spare(self) -> None:\n    return None\n",
        "  def spare(self) -> None:\n    result = None\n    return result\n",
    );
    let line = edit_line(
        "py://shapes#Box.spare",
        "replace-body",
        Some("        result = None\n        return result\n"),
        false,
    );
    preview_then_apply(&mut h, &ws, &line, &want);

    // --insert-after a two-space method: a sibling at its level, one blank line apart.
    let cur = read(&ws, SHAPES);
    let want = once(
        &cur,
        "    return area(self.w, self.h)\n",
        "    return area(self.w, self.h)\n\n  def double(self) -> int:\n    return 2 * self.size()\n",
    );
    let text = "def double(self) -> int:\n  return 2 * self.size()\n";
    let line = edit_line("py://shapes#Box.size", "insert-after", Some(text), false);
    preview_then_apply(&mut h, &ws, &line, &want);

    // --insert-before a two-space method, the text indented by tabs: its nested levels take
    // the class's unit (the step from `def size` to its body), not the text's.
    let cur = read(&ws, SHAPES);
    let def = cur.lines().find(|l| l.contains("def size(")).unwrap();
    let first = cur.lines().skip_while(|l| *l != def).nth(1).unwrap();
    let (i, u) = (leading(def), &leading(first)[leading(def).len()..]);
    assert_eq!((i, u), ("  ", "  "));
    let want = once(
        &cur,
        def,
        &format!("{i}def half(self) -> int:\n{i}{u}if self.w:\n{i}{u}{u}return self.w // 2\n{i}{u}return self.h\n\n{def}"),
    );
    let tabs = "def half(self) -> int:\n\tif self.w:\n\t\treturn self.w // 2\n\treturn self.h\n";
    let line = edit_line("py://shapes#Box.size", "insert-before", Some(tabs), false);
    preview_then_apply(&mut h, &ws, &line, &want);

    // --insert-before a top-level function: two blank lines apart, before it.
    let cur = read(&ws, SHAPES);
    let perimeter = "def perimeter(w: int, h: int) -> int:\n    return 2 * (w + h)\n";
    let want = once(&cur, "def area(", &format!("{perimeter}\n\ndef area("));
    let line = edit_line("py://shapes#area", "insert-before", Some(perimeter), false);
    preview_then_apply(&mut h, &ws, &line, &want);

    // --replace the whole definition (text given indented: dedented first).
    let cur = read(&ws, SHAPES);
    let want = once(&cur, "    return 0\n", "    return 1\n");
    let line = edit_line(
        "py://shapes#unused",
        "replace",
        Some("    def unused() -> int:\n        return 1\n"),
        false,
    );
    preview_then_apply(&mut h, &ws, &line, &want);

    // --delete what nothing references: it and the blank line that set it apart.
    let cur = read(&ws, SHAPES);
    let want = once(
        &cur,
        "\n  def spare(self) -> None:\n    result = None\n    return result\n",
        "",
    );
    let line = edit_line("py://shapes#Box.spare", "delete", None, false);
    preview_then_apply(&mut h, &ws, &line, &want);

    // A safe delete is refused while references remain, every one listed; nothing written.
    let before = snapshot(&ws);
    let b = h.ask(&edit_line("py://shapes#area", "delete", None, false));
    assert_eq!(b["error"]["code"], "E/STILL_REFERENCED", "{b}");
    assert_eq!(b["meta"]["exit_code"], 78);
    let refs: Vec<(String, u64)> = b["error"]["details"]["references"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["path"].as_str().unwrap().to_string(),
                r["range"][0].as_u64().unwrap() + 1,
            )
        })
        .collect();
    let at = |rel: &str, needle: &str| (rel.to_string(), u64::from(line_with(&ws, rel, needle)));
    let want_refs = vec![
        at(SHAPES, "return area(self.w"),
        at("use.py", "from shapes import"),
        at("use.py", "return area(2, 3)"),
    ];
    assert_eq!(refs, want_refs);
    let forced = h.ask(
        &edit_line("py://shapes#area", "delete", None, false)
            .replace("\"delete\":true", "\"delete\":true,\"force\":true"),
    );
    assert_eq!(forced["status"], "ok", "{}", forced["error"]);
    assert_eq!(forced["facts"]["references"].as_array().unwrap().len(), 3);
    assert_eq!(
        snapshot(&ws),
        before,
        "refused and previewed: nothing written"
    );

    // An edit that breaks a caller in another file: the preview names it; --require-clean
    // refuses it (exit 77) and writes nothing.
    let narrow = "def area(w: int) -> int:\n    return w * w\n";
    let b = h.ask(&edit_line(
        "py://shapes#area",
        "replace",
        Some(narrow),
        false,
    ));
    let use_py = b["facts"]["speculativeDiagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "use.py")
        .unwrap()
        .clone();
    let added = use_py["added"].as_array().unwrap();
    assert_eq!(added.len(), 1, "{use_py}");
    assert_eq!(added[0]["severity"], "error");
    assert_eq!(
        added[0]["range"][0].as_u64().unwrap() + 1,
        u64::from(line_with(&ws, "use.py", "return area(2, 3)"))
    );
    // Refused in the session (--require-clean with --apply: the server is left showing the
    // change while lanser decides): the server is shown the original again, so the session's
    // next check of the caller finds it as it is on disk, without the refused edit's error.
    let mut refused: Value = serde_json::from_str(&edit_line(
        "py://shapes#area",
        "replace",
        Some(narrow),
        true,
    ))
    .unwrap();
    refused["args"]["require-clean"] = json!(true);
    let r = h.ask(&refused.to_string());
    assert_eq!(r["error"]["code"], "E/WOULD_BREAK", "{r}");
    let d = h.ask(r#"{"cmd":"diag","args":{"targets":["use.py"]}}"#);
    assert_eq!(d["status"], "ok", "{d}");
    assert!(
        !d["facts"]["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["message"] == added[0]["message"]),
        "the refused edit's error is gone: {d}"
    );
    h.finish();
    let o = run(&[
        "edit",
        "py://shapes#area",
        "--replace",
        "--text",
        &text_file(narrow),
        "--require-clean",
        "--apply",
        "--workspace",
        ws.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(77), "{}", stderr(&o));
    assert!(stderr(&o).contains("E/WOULD_BREAK"), "{}", stderr(&o));
    assert_eq!(snapshot(&ws), before, "--require-clean wrote nothing");
}

/// A verified write leaves the server showing the text it measured: the server is sent the
/// change once (not the change, the original again, then the written text).
#[test]
fn a_verified_write_sends_its_change_once() {
    let (_tmp, ws) = repo_copy("edit");
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.jsonl");
    let body = "def area(w: int, h: int) -> int:\n    product = w * h\n    return product\n";
    let o = run(&[
        "edit",
        "py://shapes#area",
        "--replace",
        "--text",
        &text_file(body),
        "--apply",
        "--workspace",
        ws.to_str().unwrap(),
        "--trace-file",
        trace.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(read(&ws, SHAPES).contains("    product = w * h\n"));
    let changed: Vec<String> = sent(&trace, "textDocument/didChange")
        .iter()
        .map(|b| b["params"]["textDocument"]["uri"].to_string())
        .collect();
    assert_eq!(changed.len(), 1, "{changed:?}");
    assert!(changed[0].ends_with("shapes.py\""), "{changed:?}");
}

#[test]
fn a_stale_hunk_refuses_the_whole_patch_and_a_fresh_one_applies() {
    let (_tmp, ws) = repo_copy("edit");
    let cur = read(&ws, SHAPES);
    let lines: Vec<&str> = cur.lines().collect();
    let unused = line_with(&ws, SHAPES, "def unused(") as usize;
    let spare = line_with(&ws, SHAPES, "def spare(") as usize;
    let hunk = |at: usize, old: &str, new: &str| {
        format!(
            "@@ -{at},2 +{at},2 @@\n {}\n-{old}\n+{new}\n",
            lines[at - 1]
        )
    };
    let fresh = hunk(unused, lines[unused], "    return 1");
    let stale = hunk(spare, "    return 7", "    return None");
    let head = "--- a/shapes.py\n+++ b/shapes.py\n";
    let before = snapshot(&ws);
    let mut cmd = lanser();
    cmd.args(["batch", "--in", "-", "--out", "-", "--workspace"])
        .arg(&ws);
    let mut h = Harness::spawn(cmd);
    for apply in [false, true] {
        let b = h.ask(&patch_line(&format!("{head}{fresh}{stale}"), apply));
        assert_eq!(b["error"]["code"], "E/APPLY_CONFLICT", "{b}");
        let msg = b["error"]["message"].as_str().unwrap();
        let header = format!("@@ -{spare},2 +{spare},2 @@");
        assert!(
            msg.contains(&header) && msg.contains(SHAPES) && !msg.contains('\n'),
            "{msg}"
        );
        assert_eq!(snapshot(&ws), before, "refused whole: nothing written");
    }
    let want = once(&cur, "    return 0\n", "    return 1\n");
    preview_then_apply(
        &mut h,
        &ws,
        &patch_line(&format!("{head}{fresh}"), false),
        &want,
    );
    h.finish();
}

/// One MCP session over stdio: each call's `structuredContent`.
pub fn mcp_calls(ws: &Path, calls: &[(&str, Value)]) -> Vec<Value> {
    let mut cmd = lanser();
    cmd.args(["mcp", "--workspace"]).arg(ws);
    mcp_session(cmd, calls)
        .into_iter()
        .map(|r| r["structuredContent"].clone())
        .collect()
}

/// The SDK's bundles (the lines as read) for `code`'s asks, one session.
fn sdk_lines(ws: &Path, code: &str) -> Vec<String> {
    let script = format!(
        "import sys\nfrom lanser import Lanser\nwith Lanser(sys.argv[1], lanser_bin=sys.argv[2], daemon=False) as l:\n    for b in [{code}]:\n        print(b.line)\n"
    );
    let o = std::process::Command::new(python())
        .args(["-c", &script])
        .arg(ws)
        .arg(env!("CARGO_BIN_EXE_lanser"))
        .env("PYTHONPATH", repo().join("python"))
        .env("LANSER_TRUST_WORKSPACE", "1")
        .env_remove("LANSER_SERVER_CMD")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o).lines().map(str::to_string).collect()
}

#[test]
fn edit_and_apply_answer_alike_from_every_route() {
    let warm = crate::daemon::Warm::new("edit");
    let ws: PathBuf = warm.ws.clone();
    let wss = ws.to_str().unwrap();
    let body = "x = 3\nreturn None\n";
    let text = text_file(body);
    let patch = one_line_diff(&ws, SHAPES, "    return 0", "    return 2");
    let patch_path = text_file(&patch);
    let before = snapshot(&ws);
    let edit_args = [
        "edit",
        "py://shapes#Box.spare",
        "--replace-body",
        "--text",
        &text,
    ];
    let apply_args = ["apply", "--patch", &patch_path];
    // CLI (in-process) and the daemon.
    let cli: Vec<String> = [&edit_args[..], &apply_args[..]]
        .iter()
        .map(|a| {
            let mut a = a.to_vec();
            a.extend(["--workspace", wss, "--json"]);
            let o = run(&a);
            assert!(o.status.success(), "{a:?}: {}", stderr(&o));
            stdout(&o).trim_end().to_string()
        })
        .collect();
    for (i, a) in [&edit_args[..], &apply_args[..]].iter().enumerate() {
        let mut a = a.to_vec();
        a.push("--json");
        assert_eq!(stdout(&warm.ok(&a)).trim_end(), cli[i], "daemon: {a:?}");
    }
    // A batch line.
    let edit = edit_line("py://shapes#Box.spare", "replace-body", Some(body), false);
    let apply = patch_line(&patch, false);
    let batch = stdout(&batch_lines(&ws, &[&edit, &apply]));
    assert_eq!(batch.lines().collect::<Vec<_>>(), cli, "batch");
    // MCP.
    let mcp = mcp_calls(
        &ws,
        &[
            (
                "edit",
                json!({"selector": "py://shapes#Box.spare", "mode": "replace_body", "text": body}),
            ),
            ("apply_patch", json!({"patch": patch})),
        ],
    );
    for (i, b) in mcp.iter().enumerate() {
        let want: Value = serde_json::from_str(&cli[i]).unwrap();
        assert_eq!(*b, want, "mcp {i}");
    }
    // The SDK.
    let code = format!(
        "l.edit('py://shapes#Box.spare', 'replace_body', {body:?}), l.apply_patch({patch:?})"
    );
    assert_eq!(sdk_lines(&ws, &code), cli, "sdk");
    assert_eq!(snapshot(&ws), before, "previews write nothing");
    let b: Value = serde_json::from_str(&cli[0]).unwrap();
    assert_eq!(b["facts"]["qualname"], "Box.spare");
    assert_eq!(b["facts"]["mode"], "replace-body");
}
