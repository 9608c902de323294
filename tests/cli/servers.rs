//! Servers by configuration, one process per call: basedpyright from PyPI (installed into the
//! cache on first need, as a user gets it, then reused) running with no node on PATH;
//! lanser.toml settings reaching the server and feeding configDigest; config errors; raw
//! requests that hash the same for a copied workspace; the human refs rendering.

use crate::support::*;
use serde_json::Value;

use std::process::Output;

fn run_in(path: &str, args: &[&str]) -> Output {
    lanser().env("PATH", path).args(args).output().unwrap()
}

#[test]
fn basedpyright_runs_without_system_node_and_answers_impl() {
    let bin = tempfile::tempdir().unwrap();
    let path = path_without_node(bin.path());
    let flat = fixture("flat");
    let flat_s = flat.to_string_lossy().into_owned();

    // def: installs basedpyright into the cache when missing (the first use), then runs it.
    let line = line_with(&flat, "main.py", "user = register(");
    let sel = format!("main.py@L{line}:register");
    let o = run_in(
        &path,
        &[
            "--server",
            "basedpyright",
            "def",
            &sel,
            "--workspace",
            &flat_s,
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let b = bundle(&o);
    assert_eq!(b["environment"]["server"]["name"], "basedpyright");
    assert_eq!(
        b["environment"]["server"]["version"],
        lanser::config::BASEDPYRIGHT_VERSION
    );
    let decl_line = line_with(&flat, "service.py", "def register(");
    assert_eq!(
        locs(&b["facts"]["definitions"]),
        vec![(
            "service.py".to_string(),
            ident_range(&flat, "service.py", decl_line, "register")
        )]
    );
    assert_eq!(b["capabilities"]["implementation"], true);

    // impl: the base method and both overrides, from the fixture text.
    let srcpkg = fixture("srcpkg");
    let ws = srcpkg.to_string_lossy().into_owned();
    let g = "src/shapes/geometry.py";
    let text = read(&srcpkg, g);
    let want: Vec<(String, [u32; 4])> = text
        .split('\n')
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("def area(self)"))
        .map(|(i, _)| (g.to_string(), ident_range(&srcpkg, g, i as u32 + 1, "area")))
        .collect();
    assert_eq!(want.len(), 3);
    let base = line_with(&srcpkg, g, "def area(self)");
    let sel = format!("{g}@L{base}:area");
    let o = run_in(
        &path,
        &[
            "--server",
            "basedpyright",
            "impl",
            &sel,
            "--workspace",
            &ws,
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let b = bundle(&o);
    assert_eq!(locs(&b["facts"]["implementations"]), want);
    assert!(b["meta"]["complete"].as_bool().unwrap());

    // The same question to Pyright: exit 72, one line naming the capability.
    let o = run(&["impl", &sel, "--workspace", &ws]);
    assert_eq!(o.status.code(), Some(72), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("lanser: E/UNSUPPORTED_CAP: pyright 1.1.407 does not support textDocument/implementation: no implementationProvider"),
        "{err}"
    );

    // status shows the install, with the cache spelled $LANSER_HOME.
    let o = run(&[
        "status",
        "--server",
        "basedpyright",
        "--workspace",
        &ws,
        "--json",
    ]);
    let b = bundle(&o);
    // Listed by name: found by it (a built-in may sort before it).
    let based = b["facts"]["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "basedpyright")
        .expect("basedpyright listed");
    assert_eq!(based["selected"], true);
    assert_eq!(
        based["installedVersion"],
        lanser::config::BASEDPYRIGHT_VERSION
    );
    assert!(based["resolved"][0]
        .as_str()
        .unwrap()
        .starts_with("$LANSER_HOME/basedpyright/"));
}

fn diag(ws: &str) -> Value {
    let o = run(&["diag", "m.py", "--workspace", ws, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    bundle(&o)
}

#[test]
fn lanser_toml_settings_reach_the_server_and_feed_config_digest() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    // No pyrightconfig/pyproject: settings from workspace/configuration decide the rules.
    std::fs::write(ws.join("m.py"), "def f(x):\n    return x\n").unwrap();
    let wss = ws.to_string_lossy().into_owned();
    let plain = diag(&wss);
    assert_eq!(plain["facts"]["counts"]["error"], 0, "{}", plain["facts"]);

    std::fs::write(
        ws.join("lanser.toml"),
        "[servers.pyright.settings.python.analysis]\ntypeCheckingMode = \"strict\"\n",
    )
    .unwrap();
    let strict = diag(&wss);
    let codes: Vec<&str> = strict["facts"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["code"].as_str())
        .collect();
    assert!(
        codes.contains(&"reportMissingParameterType"),
        "strict mode from lanser.toml: {codes:?}"
    );
    assert_ne!(
        plain["environment"]["configDigest"],
        strict["environment"]["configDigest"]
    );
    // A comment changes the file, so the digest, not the settings.
    let text = std::fs::read_to_string(ws.join("lanser.toml")).unwrap();
    std::fs::write(ws.join("lanser.toml"), format!("# note\n{text}")).unwrap();
    let again = diag(&wss);
    assert_ne!(
        again["environment"]["configDigest"],
        strict["environment"]["configDigest"]
    );
    assert_eq!(
        again["facts"]["diagnostics"],
        strict["facts"]["diagnostics"]
    );

    // Errors: one line, usage exit 2 for bad configuration, 65 for a server not on PATH.
    let mut builtin: Vec<String> = lanser::servers::builtins()
        .into_iter()
        .map(|d| d.name)
        .collect();
    builtin.sort();
    let unknown = format!(
        "unknown server \"nope\" (configured: {})",
        builtin.join(", ")
    );
    let cases: Vec<(&str, Vec<&str>, i32, &str)> = vec![
        ("server = \"nope\"\n", vec!["status"], 2, &unknown),
        (
            "",
            vec!["--server", "nope", "status"],
            2,
            "unknown server \"nope\"",
        ),
        (
            "colour = 1\n",
            vec!["status"],
            2,
            "lanser.toml: unknown field `colour`",
        ),
        (
            "[servers.ghost]\ncommand = \"lanser-no-such-server\"\n",
            vec!["--server", "ghost", "def", "m.py@L1:f"],
            65,
            "server ghost: lanser-no-such-server is not on PATH",
        ),
    ];
    for (toml, args, code, msg) in cases {
        std::fs::write(ws.join("lanser.toml"), toml).unwrap();
        let o = run(&[&args[..], &["--workspace", &wss]].concat());
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(code), "{toml} {args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(msg), "{err}");
    }
    // status still lists a configured server it cannot resolve, and exits 0.
    std::fs::write(
        ws.join("lanser.toml"),
        "[servers.ghost]\ncommand = \"lanser-no-such-server\"\nfile_types = [\"py\"]\n",
    )
    .unwrap();
    let o = run(&["status", "--workspace", &wss]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("ghost (pinned -, none, workspace): not available"),
        "{}",
        stdout(&o)
    );
    // reload in the one-shot CLI: nothing is running, and it says so.
    let o = run(&["reload", "--workspace", &wss, "--json"]);
    let b = bundle(&o);
    assert_eq!(b["facts"]["reloaded"], serde_json::json!([]));
    assert!(b["facts"]["note"]
        .as_str()
        .unwrap()
        .starts_with("no running session"));
}

/// A raw references request for `User` in a copy of the flat fixture at `ws`, by its file URI.
fn references_payload(ws: &std::path::Path) -> String {
    let uri = format!("file://{}/models.py", ws.canonicalize().unwrap().display());
    let line = line_with(ws, "models.py", "class User:") - 1;
    format!(
        r#"{{"textDocument":{{"uri":"{uri}"}},"position":{{"line":{line},"character":6}},"context":{{"includeDeclaration":true}}}}"#
    )
}

#[test]
fn raw_requests_hash_the_same_for_a_copied_workspace() {
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let outs: Vec<Vec<u8>> = dirs
        .iter()
        .map(|d| {
            let ws = d.path().join("copy");
            copy_tree(&fixture("flat"), &ws);
            let payload = references_payload(&ws);
            let wss = ws.to_string_lossy().into_owned();
            let o = run(&[
                "request",
                "textDocument/references",
                "--payload",
                &payload,
                "--workspace",
                &wss,
                "--json",
            ]);
            assert!(o.status.success(), "{}", stderr(&o));
            assert!(!stdout(&o).contains(&*d.path().to_string_lossy()));
            o.stdout
        })
        .collect();
    assert_eq!(outs[0], outs[1]);
    let b: Value = serde_json::from_slice(&outs[0]).unwrap();
    let uris: Vec<&str> = b["facts"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["uri"].as_str().unwrap())
        .collect();
    assert!(
        uris.contains(&"main.py") && uris.contains(&"service.py"),
        "{uris:?}"
    );
    assert_eq!(b["facts"]["count"], uris.len());
    // Traced with its sources, the request replays over a scratch copy elsewhere: its payload's
    // URIs are moved to the replay's root.
    let d = tempfile::tempdir().unwrap();
    let ws = d.path().join("copy");
    copy_tree(&fixture("flat"), &ws);
    let payload = references_payload(&ws);
    let trace_path = d.path().join("t.jsonl");
    let trace = trace_path.to_string_lossy().into_owned();
    let wss = ws.to_string_lossy().into_owned();
    let o = run(&[
        "request",
        "textDocument/references",
        "--payload",
        &payload,
        "--workspace",
        &wss,
        "--trace-file",
        &trace,
        "--trace-sources",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::remove_dir_all(&ws).unwrap();
    crate::trace::replays_offline(&trace_path);

    let ws = fixture("flat").to_string_lossy().into_owned();
    let o = run(&[
        "request",
        "x/y",
        "--payload",
        "{not json",
        "--workspace",
        &ws,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--payload is not valid JSON"),
        "{}",
        stderr(&o)
    );
}

/// Human refs: the first 50 hits with their line of code, then a count of the rest.
#[test]
fn human_refs_show_a_line_of_context_for_the_first_50() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let mut text = String::from("def hit(n: int) -> int:\n    return n\n\n");
    for i in 0..60 {
        text.push_str(&format!("v{i} = hit({i})\n"));
    }
    std::fs::write(ws.join("many.py"), &text).unwrap();
    let wss = ws.to_string_lossy().into_owned();
    let o = run(&["refs", "many.py@L1:hit", "--workspace", &wss]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 52, "{out}");
    assert_eq!(lines[0], "many.py:1:5: def hit(n: int) -> int:");
    for (i, l) in lines[1..50].iter().enumerate() {
        assert_eq!(
            *l,
            format!(
                "many.py:{}:{}: v{i} = hit({i})",
                i + 4,
                format!("v{i} = ").len() + 1
            )
        );
    }
    assert_eq!(lines[50], "… 11 more (use --json for all)");
    assert_eq!(lines[51], "61 references");
}

/// Every README example of the commands this file covers runs as written and exits 0.
#[test]
fn readme_examples_of_the_new_commands_run() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let new = [
        "impl",
        "calls",
        "highlight",
        "signature",
        "capabilities",
        "status",
        "reload",
        "request",
    ];
    let mut seen = std::collections::BTreeSet::new();
    for line in readme.lines() {
        let Some(rest) = line.strip_prefix("lanser ") else {
            continue;
        };
        let args: Vec<&str> = rest.split_whitespace().collect();
        if !new.contains(&args[0]) {
            continue;
        }
        let o = lanser().args(&args).current_dir(repo()).output().unwrap();
        assert!(o.status.success(), "{line}: {}", stderr(&o));
        assert!(!o.stdout.is_empty(), "{line}");
        seen.insert(args[0]);
    }
    assert_eq!(seen.len(), new.len(), "one example per command: {seen:?}");
}

/// A copy of fixtures/flat under `dir` whose lanser.toml defines the server `mine`, run by the
/// pinned Pyright's own entry point (a server only lanser.toml defines: lanser runs its
/// command as given).
pub fn own_pyright_workspace(dir: &std::path::Path) -> std::path::PathBuf {
    let entry = lanser::servers::install_dir(&lanser::config::Config::builtin().servers["pyright"])
        .join("node_modules/.bin/pyright-langserver");
    assert!(entry.exists(), "{}", entry.display());
    let ws = dir.join("flat");
    copy_tree(&fixture("flat"), &ws);
    std::fs::write(
        ws.join("lanser.toml"),
        format!(
            "server = \"mine\"\n[servers.mine]\ncommand = \"{}\"\nargs = [\"--stdio\"]\n",
            entry.display()
        ),
    )
    .unwrap();
    ws
}

/// A server defined only in lanser.toml (provision = "none"): lanser runs its command, serves
/// its settings, and names it in the bundle by its config name with the version it logged.
#[test]
fn a_server_defined_in_lanser_toml_runs() {
    // Installs the pinned Pyright when this runs first on a fresh machine.
    let o = run(&["setup"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let tmp = tempfile::tempdir().unwrap();
    let ws = own_pyright_workspace(tmp.path());
    let wss = ws.to_string_lossy().into_owned();
    let line = line_with(&ws, "main.py", "user = register(");
    let o = run(&[
        "def",
        &format!("main.py@L{line}:register"),
        "--workspace",
        &wss,
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let b = bundle(&o);
    assert_eq!(
        b["environment"]["server"],
        serde_json::json!({"name": "mine", "version": "1.1.407"})
    );
    let decl = line_with(&ws, "service.py", "def register(");
    assert_eq!(
        locs(&b["facts"]["definitions"]),
        vec![(
            "service.py".to_string(),
            ident_range(&ws, "service.py", decl, "register")
        )]
    );
    let o = run(&["status", "--workspace", &wss, "--json"]);
    let b = bundle(&o);
    let mine = b["facts"]["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "mine")
        .unwrap()
        .clone();
    assert_eq!(mine["selected"], true);
    assert_eq!(mine["default"], true);
    assert_eq!(mine["source"], "lanser.toml command");
    assert_eq!(mine["origin"], "workspace");
}

/// Re-pinning the built-in Pyright in lanser.toml (1.1.406, which lanser also supports)
/// installs that version with npm into the cache on first need and runs it.
#[test]
fn a_repinned_pyright_is_installed_with_npm_and_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("flat");
    copy_tree(&fixture("flat"), &ws);
    std::fs::write(
        ws.join("lanser.toml"),
        "[servers.pyright]\nversion = \"1.1.406\"\n",
    )
    .unwrap();
    let wss = ws.to_string_lossy().into_owned();
    let line = line_with(&ws, "main.py", "user = register(");
    let o = run(&[
        "def",
        &format!("main.py@L{line}:register"),
        "--workspace",
        &wss,
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let b = bundle(&o);
    assert_eq!(
        b["environment"]["server"],
        serde_json::json!({"name": "pyright", "version": "1.1.406"})
    );
    assert_eq!(b["facts"]["definitions"][0]["path"], "service.py");
}

/// An install that cannot run (no python3 for the venv) is E/LS_CRASH in one line, and leaves
/// nothing behind.
#[test]
fn a_pip_install_without_python_fails_cleanly() {
    let home = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let ws = fixture("flat").to_string_lossy().into_owned();
    let o = lanser()
        .env("LANSER_HOME", home.path())
        .env("PATH", empty.path())
        .args(["--server", "basedpyright", "def", "main.py@L13:register"])
        .args(["--workspace", &ws])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(65), "{err}");
    assert_eq!(
        err.lines().count(),
        1,
        "no progress line before the failure: {err}"
    );
    assert_eq!(
        err.lines().last().unwrap(),
        format!(
            "lanser: E/LS_CRASH: cannot install basedpyright {}: python3 is not on PATH",
            lanser::config::BASEDPYRIGHT_VERSION
        )
    );
    // The client is looked for before anything is written.
    assert_eq!(
        std::fs::read_dir(home.path()).unwrap().count(),
        0,
        "nothing half-installed"
    );
}
