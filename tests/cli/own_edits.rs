//! The uncommitted-changes guard protects people, not against the agent itself
//! (docs/safety.md#uncommitted-changes): thirty `edit --apply` / `apply --patch --apply` in a
//! row on one file and across files of a git copy of fixtures/edit, with no `--allow-dirty`
//! and an untracked file beside them, are all written; a file someone else changes between
//! two of them is refused (exit 71, naming it, every byte left alone) until it holds what
//! lanser left again, while writes to other files go on; the safety term S follows the same
//! rule; and batch, the CLI and MCP answer alike.

use crate::edit::{edit_line, mcp_calls, patch_line, text_file};
use crate::mutations::{repo_copy, snapshot};
use crate::support::*;
use serde_json::{json, Value};
use std::path::Path;

const SHAPES: &str = "shapes.py";
const USE: &str = "use.py";

/// The i-th write of the sequence (three kinds in turn, each with its own text): a patch of
/// `unused`'s return value and an edit of `Box.spare` in shapes.py, an edit of `total` in
/// use.py. Returns the request line, the file it writes and a line that file then holds.
fn step(ws: &Path, i: usize) -> (String, &'static str, String) {
    match i % 3 {
        0 => {
            let now = read(ws, SHAPES);
            let old = now
                .lines()
                .skip_while(|l| !l.starts_with("def unused("))
                .nth(1)
                .unwrap()
                .to_string();
            let new = format!("    return {}", 100 + i);
            let patch = one_line_diff(ws, SHAPES, &old, &new);
            (patch_line(&patch, true), SHAPES, new)
        }
        1 => {
            let body = format!("return area(2, 3) + Box(1, 2).size() + {i}\n");
            let line = edit_line("py://use#total", "replace-body", Some(&body), true);
            (line, USE, format!("    {}", body.trim_end()))
        }
        _ => (spare(i, true), SHAPES, format!("    x = {i}")),
    }
}

/// An edit of `Box.spare`'s body to `x = i` (its class is indented by two).
fn spare(i: usize, apply: bool) -> String {
    let body = format!("x = {i}\nreturn None\n");
    edit_line("py://shapes#Box.spare", "replace-body", Some(&body), apply)
}

fn written(h: &mut Harness, ws: &Path, i: usize) {
    let (line, file, want) = step(ws, i);
    let b = h.ask(&line);
    assert_eq!(b["status"], "ok", "step {i}: {}", b["error"]);
    assert_eq!(b["facts"]["applied"], true, "step {i}");
    assert_eq!(b["processReward"]["inputs"]["safety"], 1, "step {i}");
    assert!(
        read(ws, file).lines().any(|l| l == want),
        "step {i}: {want:?} in {file}"
    );
}

/// A refusal of someone else's change: exit 71, the file named, every byte left alone.
fn refused(b: &Value, before: &std::collections::BTreeMap<String, Vec<u8>>, ws: &Path) {
    assert_eq!(b["status"], "error", "{b}");
    assert_eq!(b["error"]["code"], "E/FS_PERMISSIONS", "{b}");
    assert_eq!(b["meta"]["exit_code"], 71);
    let msg = b["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("refusing to write shapes.py") && msg.contains("--allow-dirty"),
        "{msg}"
    );
    assert_eq!(snapshot(ws), *before, "nothing written");
}

#[test]
fn thirty_writes_of_its_own_are_never_refused_and_someone_elses_change_is() {
    let (_tmp, ws) = repo_copy("edit");
    // An agent's notes, untracked: they never refuse a write.
    std::fs::write(ws.join("notes.txt"), "untracked\n").unwrap();
    let mut cmd = lanser();
    cmd.args(["batch", "--in", "-", "--out", "-", "--workspace"])
        .arg(&ws);
    let mut h = Harness::spawn(cmd);
    for i in 0..15 {
        written(&mut h, &ws, i);
    }

    // Someone else changes shapes.py, which lanser wrote: a write to it is refused (and its
    // preview's S is 0), exactly as the CLI refuses it; nothing is written.
    let lanser_left = std::fs::read(ws.join(SHAPES)).unwrap();
    let mut theirs = lanser_left.clone();
    theirs.extend_from_slice(b"# a person's line\n");
    std::fs::write(ws.join(SHAPES), &theirs).unwrap();
    let before = snapshot(&ws);
    let preview = h.ask(&spare(99, false));
    assert_eq!(preview["status"], "ok", "{}", preview["error"]);
    assert_eq!(preview["processReward"]["inputs"]["safety"], 0);
    let b = h.ask(&spare(99, true));
    refused(&b, &before, &ws);
    let body = text_file("x = 99\nreturn None\n");
    let o = run(&[
        "edit",
        "py://shapes#Box.spare",
        "--replace-body",
        "--text",
        &body,
        "--apply",
        "--json",
        "--workspace",
        ws.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(71), "{}", stderr(&o));
    assert_eq!(bundle(&o), b, "the CLI refuses as batch does");
    assert_eq!(snapshot(&ws), before);
    // --allow-dirty keeps its meaning: the preview's S is 1 with it.
    let allowed =
        h.ask(&spare(99, false).replace("\"apply\":false", "\"apply\":false,\"allow-dirty\":true"));
    assert_eq!(allowed["processReward"]["inputs"]["safety"], 1, "{allowed}");
    // A write to another file goes on (use.py is lanser's own; shapes.py is not touched).
    written(&mut h, &ws, 16);
    assert_eq!(std::fs::read(ws.join(SHAPES)).unwrap(), theirs);

    // Put back as lanser left it, shapes.py is lanser's own again.
    std::fs::write(ws.join(SHAPES), &lanser_left).unwrap();
    for i in (15..32).filter(|i| *i != 16) {
        written(&mut h, &ws, i);
    }
    h.finish();
    assert_eq!(read(&ws, "notes.txt"), "untracked\n");
}

#[test]
fn mcp_writes_its_own_files_again_and_refuses_someone_elses_as_the_cli_does() {
    let (_tmp, ws) = repo_copy("edit");
    std::fs::write(ws.join("notes.txt"), "untracked\n").unwrap();
    let edit = |sel: &str, body: &str| json!({"selector": sel, "mode": "replace_body", "text": body, "apply": true});
    let patch = one_line_diff(&ws, SHAPES, "    return 0", "    return 7");
    let got = mcp_calls(
        &ws,
        &[
            (
                "edit",
                edit("py://shapes#Box.spare", "x = 1\nreturn None\n"),
            ),
            (
                "edit",
                edit("py://shapes#Box.spare", "x = 2\nreturn None\n"),
            ),
            ("apply_patch", json!({"patch": patch, "apply": true})),
        ],
    );
    for (i, b) in got.iter().enumerate() {
        assert_eq!(b["status"], "ok", "call {i}: {}", b["error"]);
        assert_eq!(b["facts"]["applied"], true, "call {i}");
    }
    let now = read(&ws, SHAPES);
    assert!(
        now.contains("    x = 2\n") && now.contains("    return 7\n"),
        "{now}"
    );

    let mut theirs = std::fs::read(ws.join(SHAPES)).unwrap();
    theirs.extend_from_slice(b"# a person's line\n");
    std::fs::write(ws.join(SHAPES), &theirs).unwrap();
    let before = snapshot(&ws);
    let body = "x = 3\nreturn None\n";
    let got = mcp_calls(
        &ws,
        &[
            ("edit", edit("py://shapes#Box.spare", body)),
            ("edit", edit("py://use#total", "return area(2, 3) + 1\n")),
        ],
    );
    let o = run(&[
        "edit",
        "py://shapes#Box.spare",
        "--replace-body",
        "--text",
        &text_file(body),
        "--apply",
        "--json",
        "--workspace",
        ws.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(71), "{}", stderr(&o));
    assert_eq!(got[0], bundle(&o), "MCP refuses as the CLI does");
    refused(&got[0], &snapshot(&ws), &ws);
    assert_eq!(std::fs::read(ws.join(SHAPES)).unwrap(), theirs);
    assert_eq!(got[1]["facts"]["applied"], true, "{}", got[1]["error"]);
    let mut want = before;
    want.insert(USE.into(), read(&ws, USE).into_bytes());
    assert_eq!(snapshot(&ws), want, "only use.py written");
    assert!(read(&ws, USE).contains("    return area(2, 3) + 1\n"));
}
