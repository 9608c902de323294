//! Languages beyond Python on their real, pinned servers (installed into the cache on first
//! use, as a user gets them): TypeScript through typescript-language-server, C through
//! clangd; a mixed repository answered without flags. Expectations come from the fixture
//! text.

use crate::support::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// `lanser symbols FILE` includes each of `names` as a symbol's name (at any depth).
fn assert_symbols(ws: &str, file: &str, names: &[&str]) {
    fn collect(v: &Value, out: &mut std::collections::BTreeSet<String>) {
        match v {
            Value::Array(items) => items.iter().for_each(|i| collect(i, out)),
            Value::Object(m) => {
                if let Some(n) = m.get("name").and_then(Value::as_str) {
                    out.insert(n.to_string());
                }
                m.values().for_each(|i| collect(i, out));
            }
            _ => {}
        }
    }
    let b = json(&["symbols", file, "--workspace", ws, "--json"]);
    let mut got = std::collections::BTreeSet::new();
    collect(&b["facts"]["symbols"], &mut got);
    for name in names {
        assert!(
            got.contains(*name),
            "{name} not among the symbols of {file}: {got:?}"
        );
    }
}

/// `def` of `name` on the line of `call` in `from`, answered by `server`, lands on `name` on
/// the line of `decl` in `to`; the files of the `refs` from there, sorted.
fn def_then_ref_files(
    ws: &Path,
    server: &str,
    (from, call): (&str, &str),
    (to, decl): (&str, &str),
    name: &str,
) -> Vec<String> {
    let w = ws.to_string_lossy().into_owned();
    let call = line_with(ws, from, call);
    let b = json(&[
        "def",
        &format!("{from}@L{call}:{name}"),
        "--workspace",
        &w,
        "--json",
    ]);
    assert_eq!(b["environment"]["server"]["name"], server);
    let decl = line_with(ws, to, decl);
    assert_eq!(
        locs(&b["facts"]["definitions"]),
        vec![(to.to_string(), ident_range(ws, to, decl, name))]
    );
    let b = json(&[
        "refs",
        &format!("{to}@L{decl}:{name}"),
        "--workspace",
        &w,
        "--json",
    ]);
    let mut files: Vec<String> = locs(&b["facts"]["references"])
        .into_iter()
        .map(|l| l.0)
        .collect();
    files.sort();
    files
}

#[test]
fn typescript_def_refs_hover_symbols_and_diag_on_the_real_server() {
    let ts = fixture("ts");
    let ws = ts.to_string_lossy().into_owned();
    let app = "src/app.ts";
    let call = line_with(&ts, app, "makeStore();");
    let sel = format!("{app}@L{call}:makeStore");
    let b = json(&["def", &sel, "--workspace", &ws, "--json"]);
    assert_eq!(
        b["environment"]["server"]["name"], "typescript-language-server",
        "routed by the file type, no --server"
    );
    let decl = line_with(&ts, "src/store.ts", "export function makeStore");
    assert_eq!(
        locs(&b["facts"]["definitions"]),
        vec![(
            "src/store.ts".to_string(),
            ident_range(&ts, "src/store.ts", decl, "makeStore")
        )],
        "the declaration, not the import (the project is loaded first)"
    );
    assert_eq!(b["meta"]["complete"], true);

    // refs of Store.add: the declaration and both calls.
    let add = line_with(&ts, "src/store.ts", "add(item: Item)");
    let sel = format!("src/store.ts@L{add}:add");
    let b = json(&["refs", &sel, "--workspace", &ws, "--json"]);
    let mut want = vec![(
        "src/store.ts".to_string(),
        ident_range(&ts, "src/store.ts", add, "add"),
    )];
    for (file, needle) in [(app, "store.add(item)"), ("src/broken.ts", "store.add({")] {
        let line = line_with(&ts, file, needle);
        want.push((file.to_string(), ident_range(&ts, file, line, "add")));
    }
    want.sort();
    let mut got = locs(&b["facts"]["references"]);
    got.sort();
    assert_eq!(got, want);

    let sel = format!(
        "{app}@L{}:checkout",
        line_with(&ts, app, "function checkout")
    );
    let b = json(&["hover", &sel, "--workspace", &ws, "--json"]);
    let text = b["facts"].to_string();
    assert!(
        text.contains("function checkout(items: Item[]): number"),
        "{text}"
    );

    assert_symbols(
        &ws,
        "src/store.ts",
        &["Item", "Store", "add", "total", "makeStore"],
    );

    // diag: the two type errors of broken.ts, none in app.ts.
    let b = json(&["diag", "src/broken.ts", app, "--workspace", &ws, "--json"]);
    let errors: Vec<(String, u64)> = b["facts"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| {
            (
                d["path"].as_str().unwrap().to_string(),
                d["range"][0].as_u64().unwrap(),
            )
        })
        .collect();
    let bad = |needle| line_with(&ts, "src/broken.ts", needle) as u64 - 1;
    assert_eq!(
        errors,
        vec![
            ("src/broken.ts".to_string(), bad("const count")),
            ("src/broken.ts".to_string(), bad("store.remove()")),
        ]
    );
    assert_eq!(b["facts"]["counts"]["error"], 2);

    // With no target, a TypeScript-only workspace is checked by its server as a whole.
    let b = json(&["diag", "--workspace", &ws, "--json"]);
    assert_eq!(
        b["environment"]["server"]["name"],
        "typescript-language-server"
    );
    assert_eq!(
        b["facts"]["files"],
        serde_json::json!(["src/app.ts", "src/broken.ts", "src/store.ts"])
    );
    assert_eq!(b["facts"]["counts"]["error"], 2);
}

#[test]
fn typescript_rename_previews_then_applies_and_bundles_are_stable_across_copies() {
    let ts = fixture("ts");
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("ts");
    copy_tree(&ts, &copy);
    let ws = copy.to_string_lossy().into_owned();
    let add = line_with(&copy, "src/store.ts", "add(item: Item)");
    let sel = format!("src/store.ts@L{add}:add");

    // The same read-only bundle in the fixture and in a copy, from fresh processes.
    let here = json(&["refs", &sel, "--workspace", &ts.to_string_lossy(), "--json"]);
    let there = json(&["refs", &sel, "--workspace", &ws, "--json"]);
    assert_eq!(here["bundleId"], there["bundleId"]);

    let before: Vec<String> = ["src/store.ts", "src/app.ts", "src/broken.ts"]
        .iter()
        .map(|f| read(&copy, f))
        .collect();
    let preview = json(&["rename", &sel, "put", "--workspace", &ws, "--json"]);
    let diff = preview["edits"]["diff"].as_str().unwrap_or_default();
    assert!(diff.contains("+  put(item: Item): number {"), "{diff}");
    assert!(diff.contains("+    store.put(item);"), "{diff}");
    for (f, old) in ["src/store.ts", "src/app.ts", "src/broken.ts"]
        .iter()
        .zip(&before)
    {
        assert_eq!(&read(&copy, f), old, "a preview writes nothing");
    }
    let o = lanser()
        .args([
            "rename",
            &sel,
            "put",
            "--workspace",
            &ws,
            "--apply",
            "--allow-dirty",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    for (f, old) in ["src/store.ts", "src/app.ts", "src/broken.ts"]
        .iter()
        .zip(&before)
    {
        let want = old
            .replace("add(item: Item)", "put(item: Item)")
            .replace("store.add(", "store.put(");
        assert_eq!(read(&copy, f), want, "{f}");
    }
}

#[test]
fn a_mixed_repository_is_answered_per_file_type_without_flags() {
    let mixed = fixture("mixed");
    let ws = mixed.to_string_lossy().into_owned();
    let py = format!(
        "api/views.py@L{}:make_order",
        line_with(&mixed, "api/views.py", "order = make_order(")
    );
    let ts = format!(
        "web/app.ts@L{}:render",
        line_with(&mixed, "web/app.ts", "render({")
    );
    let b = json(&["def", &py, "--workspace", &ws, "--json"]);
    assert_eq!(b["environment"]["server"]["name"], "pyright");
    let line = line_with(&mixed, "api/models.py", "def make_order");
    assert_eq!(
        locs(&b["facts"]["definitions"]),
        vec![(
            "api/models.py".to_string(),
            ident_range(&mixed, "api/models.py", line, "make_order")
        )]
    );
    let b = json(&["def", &ts, "--workspace", &ws, "--json"]);
    assert_eq!(
        b["environment"]["server"]["name"],
        "typescript-language-server"
    );
    let line = line_with(&mixed, "web/order.ts", "export function render");
    let ts_def = b["bundleId"].clone();
    assert_eq!(
        locs(&b["facts"]["definitions"]),
        vec![(
            "web/order.ts".to_string(),
            ident_range(&mixed, "web/order.ts", line, "render")
        )]
    );

    // A file given as an argument, not a selector, routes too: `format` and `inlay` of a
    // TypeScript file go to its server, not to the default (which has neither).
    for cmd in ["format", "inlay"] {
        let b = json(&[cmd, "web/app.ts", "--workspace", &ws, "--json"]);
        assert_eq!(b["status"], "ok", "{cmd}: {}", b["error"]);
        assert_eq!(
            b["environment"]["server"]["name"], "typescript-language-server",
            "{cmd}"
        );
    }

    // A workspace-wide diag checks each file on its own server.
    let o = lanser()
        .args(["diag", "--workspace", &ws, "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let b = bundle(&o);
    let files = b["facts"]["files"].to_string();
    for f in ["api/views.py", "web/app.ts", "web/order.ts"] {
        assert!(files.contains(f), "{f} in {files}");
    }
    assert_eq!(b["facts"]["counts"]["error"], 0);
    assert_eq!(b["meta"]["complete"], true);
    // Traced (and replayed, by `run`), it has one server: the others' files are named as
    // not checked, and the answer is incomplete.
    let b = bundle(&run(&["diag", "--workspace", &ws, "--json"]));
    let failed: Vec<&str> = b["facts"]["failed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(failed, ["web/app.ts", "web/order.ts"]);
    assert_eq!(b["meta"]["complete"], false);

    // Workspace symbols come from both servers, merged in location order.
    let o = lanser()
        .args(["symbols", "--query", "Order", "--workspace", &ws, "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let found: Vec<(String, String)> = bundle(&o)["facts"]["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["name"] == "Order")
        .map(|s| (s["path"].as_str().unwrap().into(), s["kind"].to_string()))
        .collect();
    let paths: Vec<&str> = found.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(paths, ["api/models.py", "web/order.ts"], "{found:?}");

    // One batch, both languages: each line on its own server, the same bundles.
    let input = format!(
        "{{\"cmd\":\"def\",\"selector\":\"{py}\"}}\n{{\"cmd\":\"def\",\"selector\":\"{ts}\"}}\n{{\"cmd\":\"def\",\"selector\":\"{py}\"}}\n"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("in.jsonl");
    std::fs::write(&file, input).unwrap();
    let o = lanser()
        .args([
            "batch",
            "--in",
            &file.to_string_lossy(),
            "--out",
            "-",
            "--workspace",
            &ws,
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(
        lines[1]["environment"]["server"]["name"],
        "typescript-language-server"
    );
    assert_eq!(lines[1]["bundleId"], ts_def);
    assert_eq!(lines[0]["bundleId"], lines[2]["bundleId"]);
    assert_eq!(lines[0]["environment"]["server"]["name"], "pyright");
    // With --jobs the Python lines run on forks and the TypeScript ones on the batch's one
    // TypeScript session: the same bytes.
    let jobs = lanser()
        .args(["batch", "--in", &file.to_string_lossy(), "--out", "-"])
        .args(["--jobs", "3", "--workspace", &ws])
        .output()
        .unwrap();
    assert!(jobs.status.success(), "{}", stderr(&jobs));
    assert_eq!(jobs.stdout, o.stdout);
}

/// A copy of `fixtures/c` under `dir` with a compilation database: the fixture has
/// compile_flags.txt (no index: clangd is ready at once); a compile_commands.json turns on the
/// background index, and clangd reads only absolute directories.
pub fn indexed_c_copy(dir: &Path) -> std::path::PathBuf {
    let c = dir.join("c");
    copy_tree(&fixture("c"), &c);
    let db: Vec<serde_json::Value> = ["src/store.c", "src/main.c", "src/broken.c"]
        .iter()
        .map(|f| {
            serde_json::json!({"directory": c, "file": f,
                "arguments": ["cc", "-std=c11", "-Isrc", "-c", f]})
        })
        .collect();
    std::fs::write(
        c.join("compile_commands.json"),
        serde_json::to_string(&db).unwrap(),
    )
    .unwrap();
    c
}

#[test]
fn c_through_clangd_with_its_background_index() {
    let dir = tempfile::tempdir().unwrap();
    let c = indexed_c_copy(dir.path());
    let ws = c.to_string_lossy().into_owned();
    let call = line_with(&c, "src/main.c", "store_add(&s");
    let b = json(&[
        "def",
        &format!("src/main.c@L{call}:store_add"),
        "--workspace",
        &ws,
        "--json",
    ]);
    assert_eq!(b["environment"]["server"]["name"], "clangd");
    // The definition (the body in store.c), which clangd finds through its index.
    let decl = line_with(&c, "src/store.c", "int store_add(");
    assert_eq!(
        locs(&b["facts"]["definitions"]),
        vec![(
            "src/store.c".to_string(),
            ident_range(&c, "src/store.c", decl, "store_add")
        )]
    );
    // refs from the definition file reach main.c only through the background index.
    let def_line = line_with(&c, "src/store.c", "int store_add(");
    let b = json(&[
        "refs",
        &format!("src/store.c@L{def_line}:store_add"),
        "--workspace",
        &ws,
        "--json",
    ]);
    assert_eq!(b["meta"]["complete"], true);
    let files: std::collections::BTreeSet<String> = locs(&b["facts"]["references"])
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    assert_eq!(
        files,
        ["src/main.c", "src/store.c", "src/store.h"]
            .map(String::from)
            .into()
    );
    let b = json(&["diag", "src/broken.c", "--workspace", &ws, "--json"]);
    let line = line_with(&c, "src/broken.c", "store_remove") as u64 - 1;
    let diags = b["facts"]["diagnostics"].as_array().unwrap();
    assert!(
        diags
            .iter()
            .any(|d| d["severity"] == "error" && d["range"][0] == line),
        "{diags:?}"
    );
    let call = line_with(&c, "src/main.c", "store_total(&s)");
    let b = json(&[
        "hover",
        &format!("src/main.c@L{call}:store_total"),
        "--workspace",
        &ws,
        "--json",
    ]);
    let text = b["facts"].to_string();
    assert!(
        text.contains("int store_total(const struct store *s)"),
        "{text}"
    );
    assert_symbols(
        &ws,
        "src/store.h",
        &["item", "store", "store_add", "store_total"],
    );
    // Rename through the index: the declaration, the definition and the call.
    let b = json(&[
        "rename",
        &format!("src/store.c@L{def_line}:store_add"),
        "store_put",
        "--workspace",
        &ws,
        "--json",
    ]);
    let diff = b["edits"]["diff"].as_str().unwrap_or_default();
    for line in [
        "+int store_put(struct store *s, struct item it);",
        "+int store_put(struct store *s, struct item it) {",
        "+    store_put(&s, tea);",
    ] {
        assert!(diff.contains(line), "{line} in {diff}");
    }
}

#[test]
fn shell_scripts_through_bash_language_server() {
    let sh = fixture("sh");
    let ws = sh.to_string_lossy().into_owned();
    let call = line_with(&sh, "main.sh", "greet world");
    let b = json(&[
        "def",
        &format!("main.sh@L{call}:greet"),
        "--workspace",
        &ws,
        "--json",
    ]);
    assert_eq!(b["environment"]["server"]["name"], "bash-language-server");
    let decl = line_with(&sh, "lib.sh", "greet() {");
    let got = locs(&b["facts"]["definitions"]);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!((got[0].0.as_str(), got[0].1[0]), ("lib.sh", decl - 1));
    let b = json(&[
        "refs",
        &format!("lib.sh@L{decl}:greet"),
        "--workspace",
        &ws,
        "--json",
    ]);
    let mut lines: Vec<(String, u32)> = locs(&b["facts"]["references"])
        .into_iter()
        .map(|(p, r)| (p, r[0] + 1))
        .collect();
    lines.sort();
    let want = vec![
        ("lib.sh".to_string(), decl),
        ("main.sh".to_string(), call),
        (
            "main.sh".to_string(),
            line_with(&sh, "main.sh", "greet \"$USER\""),
        ),
    ];
    assert_eq!(lines, want);
    assert_symbols(&ws, "lib.sh", &["greet", "total"]);
    let b = json(&[
        "hover",
        &format!("main.sh@L{call}:greet"),
        "--workspace",
        &ws,
        "--json",
    ]);
    let text = b["facts"].to_string();
    assert!(
        text.contains("greet") && text.contains("Say hello to someone."),
        "{text}"
    );
    // Diagnostics come from shellcheck, which the server runs when it is on PATH.
    if on_path("shellcheck") {
        let b = json(&["diag", "broken.sh", "--workspace", &ws, "--json"]);
        let line = line_with(&sh, "broken.sh", "echo $1") as u64 - 1;
        let diags = b["facts"]["diagnostics"].as_array().unwrap();
        assert!(
            diags
                .iter()
                .any(|d| d["code"] == "SC2086" && d["range"][0] == line),
            "{diags:?}"
        );
    } else {
        assert!(
            std::env::var_os("LANSER_TEST_SHELLCHECK").is_none(),
            "LANSER_TEST_SHELLCHECK is set but shellcheck is not on PATH"
        );
    }
}

fn on_path(program: &str) -> bool {
    lanser::servers::which(program).is_some()
}

/// ty and pyrefly, chosen with `--server`, give Pyright's definition and references on the
/// same fixture.
#[test]
fn ty_and_pyrefly_agree_with_pyright_on_def_and_refs() {
    let flat = fixture("flat");
    let ws = flat.to_string_lossy().into_owned();
    let line = line_with(&flat, "main.py", "user = register(");
    let sel = format!("main.py@L{line}:register");
    let facts = |server: &str, cmd: &str| {
        let b = json(&["--server", server, cmd, &sel, "--workspace", &ws, "--json"]);
        // pyrefly names itself "pyrefly-lsp" in serverInfo.
        let name = b["environment"]["server"]["name"]
            .as_str()
            .unwrap_or_default();
        assert!(name.starts_with(server), "{name}");
        let key = if cmd == "def" {
            "definitions"
        } else {
            "references"
        };
        let mut l = locs(&b["facts"][key]);
        l.sort();
        l
    };
    let (def, refs) = (facts("pyright", "def"), facts("pyright", "refs"));
    assert_eq!(def.len(), 1);
    assert!(refs.len() >= 2, "{refs:?}");
    for server in ["ty", "pyrefly"] {
        assert_eq!(facts(server, "def"), def, "{server} def");
        assert_eq!(facts(server, "refs"), refs, "{server} refs");
    }
}

/// Through the daemon (the default route): Python and TypeScript requests on one workspace
/// are answered by their own warm servers, byte for byte as in-process, and an edit to a
/// TypeScript file is seen by the next TypeScript answer.
#[test]
fn the_daemon_routes_by_file_type_and_sees_an_edit_to_a_typescript_file() {
    let w = crate::daemon::Warm::new("mixed");
    w.link_server("typescript-language-server");
    let py_line = line_with(&w.ws, "api/views.py", "order = make_order(");
    let py = format!("api/views.py@L{py_line}:make_order");
    let ts_line = line_with(&w.ws, "web/app.ts", "render({");
    let ts = format!("web/app.ts@L{ts_line}:render");
    let in_process = |sel: &str| {
        let o = w
            .cmd(&["def", sel, "--json"])
            .env("LANSER_NO_DAEMON", "1")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        o.stdout
    };
    for _ in 0..2 {
        for sel in [&py, &ts, &py] {
            let o = w.ok(&["def", sel, "--json"]);
            assert_eq!(
                o.stdout,
                in_process(sel),
                "{sel}: daemon and in-process differ"
            );
        }
    }
    // An edit moves the definition down one line; the daemon's next answer has it there.
    let order = w.ws.join("web/order.ts");
    let text = std::fs::read_to_string(&order).unwrap();
    std::fs::write(&order, format!("// moved\n{text}")).unwrap();
    let o = w.ok(&["def", &ts, "--json"]);
    let b: Value = serde_json::from_slice(&o.stdout).unwrap();
    let line = line_with(&w.ws, "web/order.ts", "export function render");
    assert_eq!(
        locs(&b["facts"]["definitions"]),
        vec![(
            "web/order.ts".to_string(),
            ident_range(&w.ws, "web/order.ts", line, "render")
        )]
    );
    assert_eq!(o.stdout, in_process(&ts));
    let status = w.idle_status();
    assert!(status.to_string().contains("pyright"), "{status}");
}

/// Go through gopls, when a Go toolchain and gopls are on PATH (as `.ci/run` puts them, and
/// then sets LANSER_TEST_GO=1, which makes their absence a failure).
pub fn have_go() -> bool {
    if !(on_path("gopls") && on_path("go")) {
        assert!(
            std::env::var_os("LANSER_TEST_GO").is_none(),
            "LANSER_TEST_GO is set but go/gopls are not on PATH"
        );
        eprintln!("skipped: no go and gopls on PATH (see .ci/run)");
        return false;
    }
    true
}

#[test]
fn go_through_gopls_from_the_users_toolchain() {
    if !have_go() {
        return;
    }
    let go = fixture("go");
    let ws = go.to_string_lossy().into_owned();
    let files = def_then_ref_files(
        &go,
        "gopls",
        ("main.go", "s.Add("),
        ("store/store.go", "func (s *Store) Add("),
        "Add",
    );
    assert_eq!(files, ["broken/broken.go", "main.go", "store/store.go"]);
    let at = line_with(&go, "main.go", "s := store.New()");
    let b = json(&[
        "hover",
        &format!("main.go@L{at}:New"),
        "--workspace",
        &ws,
        "--json",
    ]);
    let text = b["facts"].to_string();
    assert!(text.contains("func store.New() *store.Store"), "{text}");
    let b = json(&["diag", "broken/broken.go", "--workspace", &ws, "--json"]);
    assert_eq!(b["facts"]["counts"]["error"], 2, "{}", b["facts"]);
    assert_symbols(&ws, "store/store.go", &["Item", "Store", "New"]);
    // gopls refuses a rename whose dependents do not compile (broken/ uses store), so the
    // preview renames a function of the main package.
    let f = line_with(&go, "main.go", "func checkout()");
    let sel = format!("main.go@L{f}:checkout");
    let b = json(&["rename", &sel, "pay", "--workspace", &ws, "--json"]);
    let diff = b["edits"]["diff"].as_str().unwrap_or_default();
    assert!(diff.contains("+func pay() int {"), "{diff}");
    assert!(diff.contains("+\tfmt.Println(pay())"), "{diff}");
}

/// Rust through rust-analyzer (`rustup component add rust-analyzer`; `.ci/run` adds it and
/// sets LANSER_TEST_RUST=1, which makes its absence a failure), on a copy: it writes
/// Cargo.lock beside the manifest.
pub fn have_rust_analyzer() -> bool {
    let installed = Command::new("rust-analyzer")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !installed {
        assert!(
            std::env::var_os("LANSER_TEST_RUST").is_none(),
            "LANSER_TEST_RUST is set but rust-analyzer does not run"
        );
        eprintln!("skipped: no rust-analyzer (rustup component add rust-analyzer)");
        return false;
    }
    true
}

#[test]
fn rust_through_rust_analyzer_after_it_is_quiescent() {
    if !have_rust_analyzer() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rs = dir.path().join("rust");
    copy_tree(&fixture("rust"), &rs);
    let ws = rs.to_string_lossy().into_owned();
    // A definition asked before the workspace is loaded comes back empty: lanser waits.
    let files = def_then_ref_files(
        &rs,
        "rust-analyzer",
        ("src/lib.rs", "s.add("),
        ("src/store.rs", "pub fn add("),
        "add",
    );
    assert_eq!(files, ["src/broken.rs", "src/lib.rs", "src/store.rs"]);
    let at = line_with(&rs, "src/lib.rs", "let mut s = new_store();");
    let b = json(&[
        "hover",
        &format!("src/lib.rs@L{at}:new_store"),
        "--workspace",
        &ws,
        "--json",
    ]);
    let text = b["facts"].to_string();
    assert!(text.contains("pub fn new_store() -> Store"), "{text}");
    let decl = line_with(&rs, "src/store.rs", "pub fn add(");
    let b = json(&["diag", "src/broken.rs", "--workspace", &ws, "--json"]);
    let line = line_with(&rs, "src/broken.rs", "let count: String") as u64 - 1;
    let diags = b["facts"]["diagnostics"].as_array().unwrap();
    assert!(
        diags
            .iter()
            .any(|d| d["severity"] == "error" && d["range"][0] == line),
        "{diags:?}"
    );
    assert_symbols(&ws, "src/store.rs", &["Item", "Store", "new_store"]);
    let b = json(&[
        "rename",
        &format!("src/store.rs@L{decl}:add"),
        "put",
        "--workspace",
        &ws,
        "--json",
    ]);
    let diff = b["edits"]["diff"].as_str().unwrap_or_default();
    assert!(
        diff.contains("+    pub fn put(&mut self, item: Item) -> usize {"),
        "{diff}"
    );
    assert!(diff.contains("+    s.put(Item {"), "{diff}");
}
