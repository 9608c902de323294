//! Where a request goes depends on the request and the configuration alone, never on which
//! servers earlier requests of a batch or a daemon started: a request that names files of
//! two languages, routed to one server after another server is already running, is answered
//! as the one-shot CLI answers it (each file on its own server).

use crate::support::*;
use serde_json::Value;

/// A copy of `fixtures/mixed` with one type error in a Python and one in a TypeScript file.
fn mixed_with_errors(dir: &std::path::Path) -> std::path::PathBuf {
    let ws = dir.join("mixed");
    copy_tree(&fixture("mixed"), &ws);
    let append = |rel: &str, line: &str| {
        let text = read(&ws, rel);
        std::fs::write(ws.join(rel), format!("{text}{line}\n")).unwrap();
    };
    append("api/models.py", "count: int = \"three\"");
    append("web/app.ts", "export const count: number = \"three\";");
    ws
}

/// A one-shot CLI bundle, untraced: a traced run records one server, so it would answer only
/// one language.
fn alone(ws: &std::path::Path, args: &[&str]) -> Value {
    let o = lanser()
        .args(args)
        .arg("--workspace")
        .arg(ws)
        .arg("--json")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    bundle(&o)
}

/// A batch line that starts Pyright (a hover in the Python file).
fn pyright_first(ws: &std::path::Path) -> String {
    format!(
        "{{\"cmd\":\"hover\",\"selector\":\"api/models.py@L{}:make_order\"}}",
        line_with(ws, "api/models.py", "def make_order")
    )
}

fn lines_of(o: &std::process::Output) -> Vec<Value> {
    assert!(o.status.success(), "{}", stderr(o));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_two_language_request_after_another_server_started_is_answered_as_alone() {
    let dir = tempfile::tempdir().unwrap();
    let ws = mixed_with_errors(dir.path());
    let alone = alone(&ws, &["diag", "web/app.ts", "api/models.py"]);
    assert_eq!(alone["status"], "ok", "{alone}");
    let sources: Vec<&str> = alone["facts"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| d["source"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(sources, ["Pyright", "typescript"], "{alone}");

    let hover = pyright_first(&ws);
    let diag_line = r#"{"cmd":"diag","args":{"targets":["web/app.ts","api/models.py"]}}"#;
    // Pyright runs first; the diag goes to typescript-language-server (its first file's), and
    // the Python file is still checked by Pyright.
    let lines = lines_of(&batch_lines(&ws, &[&hover, diag_line]));
    assert_eq!(lines[0]["environment"]["server"]["name"], "pyright");
    assert_eq!(lines[1]["status"], "ok", "{}", lines[1]);
    assert_eq!(lines[1]["bundleId"], alone["bundleId"], "{}", lines[1]);
}

/// `check --patch` over a Python and a TypeScript file, after Pyright started: routed to the
/// server of its first file, each file is still measured by its own server.
#[test]
fn a_two_language_patch_after_another_server_started_is_measured_as_alone() {
    let dir = tempfile::tempdir().unwrap();
    let ws = mixed_with_errors(dir.path());
    let patch = dir.path().join("both.diff");
    let diff = one_line_diff(&ws, "web/app.ts", "total: 3", "total: \"3\"")
        + &one_line_diff(
            &ws,
            "api/models.py",
            "return Order(total)",
            "return Order(\"t\")",
        );
    std::fs::write(&patch, diff).unwrap();
    let p = patch.to_string_lossy().into_owned();
    let alone = alone(&ws, &["check", "--patch", &p]);
    assert_eq!(alone["status"], "ok", "{alone}");
    let patched = serde_json::json!(["web/app.ts", "api/models.py"]);
    assert_eq!(alone["facts"]["patched"], patched);
    let added: Vec<&str> = alone["facts"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| !f["added"].as_array().unwrap().is_empty())
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(added, ["api/models.py", "web/app.ts"], "{alone}");

    let hover = pyright_first(&ws);
    let check = serde_json::json!({"cmd": "check", "args": {"patch": p}}).to_string();
    let lines = lines_of(&batch_lines(&ws, &[&hover, &check]));
    assert_eq!(lines[1]["status"], "ok", "{}", lines[1]);
    assert_eq!(lines[1]["bundleId"], alone["bundleId"], "{}", lines[1]);
}

/// A traced run records one server: pinned to the first file's server by its type, a request
/// naming a file of another language leaves that file unchecked (as a traced whole-workspace
/// `diag` does), never refused with "leave out --server" when no `--server` was given. `run`
/// replays the trace offline too.
#[test]
fn a_traced_two_language_diag_checks_its_own_files_and_names_the_others_unchecked() {
    let dir = tempfile::tempdir().unwrap();
    let ws = mixed_with_errors(dir.path());
    let w = ws.to_string_lossy().into_owned();
    let o = run(&[
        "diag",
        "web/app.ts",
        "api/models.py",
        "--workspace",
        &w,
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let b = bundle(&o);
    assert_eq!(
        b["environment"]["server"]["name"],
        "typescript-language-server"
    );
    let failed = &b["facts"]["failed"];
    assert_eq!(failed[0]["path"], "api/models.py", "{b}");
    assert!(
        failed[0]["message"]
            .as_str()
            .unwrap()
            .contains("not checked"),
        "{b}"
    );
    assert_eq!(b["meta"]["complete"], false);
    let sources: Vec<&str> = b["facts"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["source"].as_str().unwrap_or_default())
        .collect();
    assert!(
        !sources.is_empty() && sources.iter().all(|s| *s == "typescript"),
        "{b}"
    );
}
