//! The rest of the LSP surface against real Pyright, one session per fixture: impl (refused
//! from the capabilities, before anything is sent), calls, highlight, signature,
//! capabilities, status, reload and raw requests. Expectations come from the fixture text.

use crate::support::*;
use lanser::bundle::Bundle;
use lanser::commands::Execute;
use lanser::lsp::transport::{Dir, Tap, Tapped};
use lanser::orchestrator::{Options, Orchestrator};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Arc, Mutex};

fn options(ws: &Path) -> Options {
    Options::for_workspace(ws)
}

async fn ask(o: &mut Orchestrator, op: &str, selector: Option<String>, rest: &[&str]) -> Bundle {
    let b = o.execute(&crate::facts::request(op, selector, rest)).await;
    assert!(b.error.is_none(), "{} failed: {:?}", b.request.cmd, b.error);
    crate::schemas::collect_bundle(&b);
    b
}

/// (path, range) of the whole-word `ident` on the first line of `rel` containing `needle`.
fn at(ws: &Path, rel: &str, needle: &str, ident: &str) -> (String, [u32; 4]) {
    let line = line_with(ws, rel, needle);
    (rel.to_string(), ident_range(ws, rel, line, ident))
}

fn whole_word(line: &str, word: &str) -> bool {
    line.match_indices(word).any(|(i, _)| {
        let ok = |c: Option<char>| !c.is_some_and(|c| c == '_' || c.is_alphanumeric());
        ok(line[..i].chars().next_back()) && ok(line[i + word.len()..].chars().next())
    })
}

#[tokio::test]
async fn the_rest_of_the_surface_matches_the_flat_fixture() {
    let ws = fixture("flat");
    let ws = ws.as_path();
    let sent = Arc::new(Mutex::new(Vec::<String>::new()));
    let log = sent.clone();
    let tap: Tap = Arc::new(move |event| {
        if let Tapped::Frame(Dir::Send, frame) = event {
            log.lock().unwrap().push(frame.to_string());
        }
    });
    let mut opts = options(ws);
    opts.tap = Some(tap);
    let mut o = Orchestrator::new(opts).unwrap();
    let main_py = "main.py";

    // impl: Pyright declares no implementationProvider, so lanser refuses without asking.
    let line = line_with(ws, main_py, "user = register(");
    let b = o
        .execute(&crate::facts::request(
            "impl",
            Some(format!("{main_py}@L{line}:register")),
            &[],
        ))
        .await;
    let err = b.error.as_ref().expect("impl must fail on Pyright");
    assert_eq!(err.code.symbol(), "E/UNSUPPORTED_CAP");
    assert_eq!(b.meta.exit_code, 72);
    assert!(
        err.message.contains("textDocument/implementation")
            && err.message.contains("implementationProvider")
            && err.message.starts_with("pyright 1.1.407 "),
        "{}",
        err.message
    );
    assert!(
        !sent
            .lock()
            .unwrap()
            .iter()
            .any(|f| f.contains("\"textDocument/implementation\"")),
        "the request must not be sent"
    );

    // calls: main() calls register twice; register calls User(...), len(...) and repo.add(...).
    let b = ask(
        &mut o,
        "calls",
        Some(format!("{main_py}@L{line}:register")),
        &[],
    )
    .await;
    let decl = at(ws, "service.py", "def register(", "register");
    assert_eq!(locs(&json!([b.facts["item"].clone()])), vec![decl.clone()]);
    let incoming = b.facts["incoming"].as_array().unwrap();
    assert_eq!(incoming.len(), 1, "{incoming:?}");
    assert_eq!(incoming[0]["name"], "main");
    assert_eq!(
        locs(&json!([incoming[0].clone()])),
        vec![at(ws, main_py, "def main(", "main")]
    );
    let text = read(ws, main_py);
    let want_sites: Vec<_> = text
        .split('\n')
        .enumerate()
        .filter(|(_, l)| l.contains("register(") && !l.contains("import"))
        .map(|(i, _)| {
            let l = i as u32 + 1;
            (main_py.to_string(), ident_range(ws, main_py, l, "register"))
        })
        .collect();
    assert_eq!(want_sites.len(), 2);
    assert_eq!(locs(&incoming[0]["callSites"]), want_sites);
    let outgoing = b.facts["outgoing"].as_array().unwrap();
    let names: BTreeSet<&str> = outgoing
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, BTreeSet::from(["User", "add", "len"]));
    let add = outgoing.iter().find(|c| c["name"] == "add").unwrap();
    assert_eq!(
        locs(&json!([add.clone()])),
        vec![at(ws, "models.py", "def add(", "add")]
    );
    assert_eq!(
        locs(&add["callSites"]),
        vec![at(ws, "service.py", "repo.add(", "add")]
    );
    let len = outgoing.iter().find(|c| c["name"] == "len").unwrap();
    assert!(len["path"].as_str().unwrap().starts_with("typeshed://"));
    // --outgoing alone leaves incoming out.
    let b = ask(
        &mut o,
        "calls",
        Some(format!("service.py@{}:register", "L6")),
        &["--outgoing"],
    )
    .await;
    assert!(b.facts.get("incoming").is_none());
    assert_eq!(b.facts["outgoing"].as_array().unwrap().len(), 3);

    // highlight: `user` inside main() — the assignment is a write, the uses reads; greet's
    // parameter of the same name is another symbol.
    let start = line_with(ws, main_py, "def main(");
    let lines: Vec<&str> = text.split('\n').collect();
    let mut want = Vec::new();
    for (i, l) in lines.iter().enumerate().skip(start as usize) {
        if whole_word(l, "user") {
            let kind = if l.trim_start().starts_with("user =") {
                "write"
            } else {
                "read"
            };
            let r = ident_range(ws, main_py, i as u32 + 1, "user");
            want.push((main_py.to_string(), r, kind.to_string()));
        }
    }
    assert_eq!(want.len(), 3);
    let b = ask(
        &mut o,
        "highlight",
        Some(format!("{main_py}@L{line}:user")),
        &[],
    )
    .await;
    let got: Vec<_> = b.facts["highlights"]
        .as_array()
        .unwrap()
        .iter()
        .zip(locs(&b.facts["highlights"]))
        .map(|(h, (p, r))| (p, r, h["kind"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(got, want);

    // signature: inside `register(repo, "Alice", …)` at "Alice", the second parameter.
    let l = lines[line as usize - 1];
    let col = l[..l.find("\"Alice\"").unwrap()].chars().count() + 1;
    let b = ask(
        &mut o,
        "signature",
        Some(format!("{main_py}@L{line}:C{col}")),
        &[],
    )
    .await;
    let sig = &b.facts["signature"];
    let label = sig["signatures"][0]["label"].as_str().unwrap();
    let def_line = lines_of(ws, "service.py")
        .into_iter()
        .find(|l| l.starts_with("def register("))
        .unwrap();
    let params = &def_line["def register(".len()..def_line.find(") ->").unwrap()];
    assert!(label.contains(params), "{label} vs {params}");
    let active = sig["signatures"][0]["activeParameter"]
        .as_u64()
        .or(sig["activeParameter"].as_u64())
        .unwrap();
    assert_eq!(
        sig["signatures"][0]["parameters"][active as usize]["label"],
        "name: str"
    );
    assert!(sig["signatures"][0]["documentation"]
        .as_str()
        .unwrap()
        .starts_with("Create a user"));
    // Outside any call there is no signature.
    let b = ask(&mut o, "signature", Some(format!("{main_py}@L1:C1")), &[]).await;
    assert_eq!(b.facts["signature"], Value::Null);

    // capabilities: what Pyright declared, verbatim, and the summary the envelope carries.
    let b = ask(&mut o, "capabilities", None, &[]).await;
    let caps = &b.facts["capabilities"];
    assert_eq!(caps["callHierarchyProvider"], true);
    assert!(caps.get("implementationProvider").is_none());
    assert_eq!(caps["renameProvider"]["prepareProvider"], true);
    assert_eq!(b.facts["summary"], b.capabilities);
    assert_eq!(b.facts["server"]["name"], "pyright");

    // request documentSymbol gives exactly `symbols FILE`'s facts beside the raw result.
    let sym = ask(&mut o, "symbols", None, &["models.py"]).await;
    let raw = ask(
        &mut o,
        "request",
        Some("textDocument/documentSymbol".into()),
        &["models.py@L1:C1"],
    )
    .await;
    for (k, v) in sym.facts.as_object().unwrap() {
        assert_eq!(&raw.facts[k], v, "facts.{k}");
    }
    assert_eq!(
        raw.facts["params"],
        json!({"textDocument": {"uri": "models.py"}})
    );
    // … and the raw tree holds the same symbols: qualified names and selection ranges.
    fn walk(v: &Value, parent: &str, out: &mut Vec<(String, Value)>) {
        for s in v.as_array().into_iter().flatten() {
            let name = s["name"].as_str().unwrap();
            let q = if parent.is_empty() {
                name.to_string()
            } else {
                format!("{parent}.{name}")
            };
            let r = &s["selectionRange"];
            let range = json!([
                r["start"]["line"],
                r["start"]["character"],
                r["end"]["line"],
                r["end"]["character"]
            ]);
            out.push((q.clone(), range));
            walk(&s["children"], &q, out);
        }
    }
    let mut from_raw = Vec::new();
    walk(&raw.facts["result"], "", &mut from_raw);
    let mut from_symbols: Vec<(String, Value)> = sym.facts["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["qualname"].as_str().unwrap().to_string(),
                s["selectionRange"].clone(),
            )
        })
        .collect();
    from_raw.sort_by_key(|(q, r)| (q.clone(), r.to_string()));
    from_symbols.sort_by_key(|(q, r)| (q.clone(), r.to_string()));
    assert_eq!(from_raw, from_symbols);
    assert!(from_raw.iter().any(|(q, _)| q == "Repository.add"));

    // request definition at a selector: the `definitions` view equals `def`'s facts, and the
    // raw Location's URI is the workspace-relative path.
    let sel = format!("{main_py}@L{line}:register");
    let def = ask(&mut o, "def", Some(sel.clone()), &[]).await;
    let raw = ask(
        &mut o,
        "request",
        Some("textDocument/definition".into()),
        &[&sel],
    )
    .await;
    assert_eq!(raw.facts["definitions"], def.facts["definitions"]);
    assert_eq!(raw.facts["result"][0]["uri"], "service.py");
    assert_eq!(
        raw.facts["params"]["position"],
        json!({"line": decl_pos(ws, main_py, line, "register").0, "character": decl_pos(ws, main_py, line, "register").1})
    );

    // status: every built-in, pyright selected; reload with a live session reconfigures it.
    let b = ask(&mut o, "status", None, &[]).await;
    let servers = b.facts["servers"].as_array().unwrap();
    let names: Vec<&str> = servers
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    let mut builtin: Vec<String> = lanser::servers::builtins()
        .into_iter()
        .map(|d| d.name)
        .collect();
    builtin.sort();
    assert_eq!(names, builtin);
    assert!(builtin.len() >= 9, "{builtin:?}");
    let pyright = &servers[names.iter().position(|n| *n == "pyright").unwrap()];
    assert_eq!(pyright["selected"], true);
    assert_eq!(pyright["installedVersion"], "1.1.407");
    assert_eq!(b.facts["sessions"].as_array().unwrap().len(), 1);
    let before = sent.lock().unwrap().len();
    let b = ask(&mut o, "reload", None, &[]).await;
    assert_eq!(
        b.facts["reloaded"][0]["action"],
        "workspace/didChangeConfiguration"
    );
    assert_eq!(b.facts["reloaded"][0]["settingsChanged"], false);
    // The server still answers after the reload (and the notification went out before).
    let b = ask(
        &mut o,
        "def",
        Some(format!("{main_py}@L{line}:register")),
        &[],
    )
    .await;
    assert_eq!(locs(&b.facts["definitions"]), vec![decl]);
    assert!(sent.lock().unwrap()[before..]
        .iter()
        .any(|f| f.contains("workspace/didChangeConfiguration")));
    o.close().await;
}

fn lines_of(ws: &Path, rel: &str) -> Vec<String> {
    read(ws, rel).split('\n').map(str::to_string).collect()
}

/// 0-based (line, UTF-16 column) of the whole-word `ident` on 1-based `line`.
fn decl_pos(ws: &Path, rel: &str, line: u32, ident: &str) -> (u32, u32) {
    let r = ident_range(ws, rel, line, ident);
    (r[0], r[1])
}

/// `decl` came as one file and one line of the registry: the CLI, its human rendering and a
/// batch line all know it. Pyright's declaration of a stdlib function is its typeshed stub,
/// where `def` goes to the implementation.
#[test]
fn decl_goes_to_the_stub_where_def_goes_to_the_source() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("pyproject.toml"), "").unwrap();
    std::fs::write(t.path().join("m.py"), "import json\n\nx = json.dumps({})\n").unwrap();
    let ws = t.path().to_str().unwrap();
    let cli = run(&["decl", "m.py@L3:dumps", "--workspace", ws, "--json"]);
    let decl = bundle(&cli);
    assert_eq!(decl["request"]["cmd"], "decl");
    // The stub the pinned Pyright ships, read here: its `def dumps(` line is the answer.
    let stub = crate::daemon::real_home()
        .join("pyright")
        .join(lanser::servers::PYRIGHT_VERSION)
        .join("node_modules/pyright/dist/typeshed-fallback/stdlib/json/__init__.pyi");
    let stub = std::fs::read_to_string(&stub).unwrap();
    let line = stub
        .lines()
        .position(|l| l.starts_with("def dumps("))
        .unwrap();
    let found = decl["facts"]["declarations"].as_array().unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["path"], "typeshed://stdlib/json/__init__.pyi");
    assert_eq!(found[0]["range"], serde_json::json!([line, 4, line, 9]));
    // `def` goes to the interpreter's own json/__init__.py, at its `def dumps(`.
    let def = bundle(&run(&["def", "m.py@L3:dumps", "--workspace", ws, "--json"]));
    let d = &def["facts"]["definitions"][0];
    let path = d["path"].as_str().unwrap();
    assert!(path.ends_with("json/__init__.py"), "{path}");
    let source = std::fs::read_to_string(path.trim_start_matches("file://")).unwrap();
    let at = d["range"][0].as_u64().unwrap() as usize;
    assert!(source.lines().nth(at).unwrap().starts_with("def dumps("));
    let human = stdout(&run(&["decl", "m.py@L3:dumps", "--workspace", ws]));
    let want = format!("typeshed://stdlib/json/__init__.pyi:{}:5\n", line + 1);
    assert_eq!(human, want);
    let batch = batch_lines(
        t.path(),
        &["{\"cmd\":\"decl\",\"selector\":\"m.py@L3:dumps\"}"],
    );
    assert_eq!(stdout(&batch), stdout(&cli));
}

/// The block that starts on 1-based `line` of `text`: that line and every following line that
/// is blank or indented deeper, trailing blank lines dropped (Python's own block rule).
fn block_at(text: &str, line: usize) -> (usize, String) {
    let lines: Vec<&str> = text.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut i = line - 1;
    // Decorators above belong to it.
    while i > 0 && lines[i - 1].trim_start().starts_with('@') {
        i -= 1;
    }
    let header = line - 1;
    let mut end = header + 1;
    while end < lines.len()
        && (lines[end].trim().is_empty() || indent(lines[end]) > indent(lines[header]))
    {
        end += 1;
    }
    while lines[end - 1].trim().is_empty() {
        end -= 1;
    }
    (i + 1, lines[i..end].join("\n"))
}

#[test]
fn source_gives_a_definitions_code_from_any_route() {
    let ws = fixture("srcpkg");
    let rel = "src/shapes/geometry.py";
    let text = read(&ws, rel);
    let cases = [
        (
            "py://shapes.geometry#Circle.diameter",
            line_with(&ws, rel, "def diameter("),
        ),
        (
            "py://shapes.geometry#Square.Corner",
            line_with(&ws, rel, "class Corner:"),
        ),
    ];
    for (sel, header) in cases {
        let (first, want) = block_at(&text, header as usize);
        let o = run(&["source", sel, "--workspace", ws.to_str().unwrap(), "--json"]);
        let b = bundle(&o);
        assert_eq!(b["facts"]["text"], want.as_str(), "{sel}");
        assert_eq!(b["facts"]["firstLine"], first, "{sel}");
        assert_eq!(b["facts"]["path"], rel);
        let r = &b["facts"]["range"];
        assert_eq!(
            (r[0].as_u64(), r[1].as_u64()),
            (Some(first as u64 - 1), Some(0))
        );
        // A durable selector that lands on the same definition again.
        let durable = b["facts"]["selector"].as_str().unwrap();
        let again = bundle(&run(&[
            "source",
            durable,
            "--workspace",
            ws.to_str().unwrap(),
            "--json",
        ]));
        assert_eq!(again["facts"]["text"], b["facts"]["text"]);
        // The human rendering is the code, numbered as in the file.
        let human = stdout(&run(&["source", sel, "--workspace", ws.to_str().unwrap()]));
        let body: Vec<&str> = human.lines().skip(1).collect();
        let numbered: Vec<String> = want
            .lines()
            .enumerate()
            .map(|(i, l)| format!("{}  {l}", first + i))
            .collect();
        assert_eq!(body, numbered, "{sel}");
        // A batch line gives the CLI's bytes.
        let line = format!("{{\"cmd\":\"source\",\"selector\":\"{sel}\"}}");
        let batch = batch_lines(&ws, &[&line]);
        assert_eq!(stdout(&batch), stdout(&o), "{sel}");
    }
    // --signature: the decorators and the header only.
    let header = line_with(&ws, rel, "def diameter(") as usize;
    let sig = bundle(&run(&[
        "source",
        "py://shapes.geometry#Circle.diameter",
        "--signature",
        "--workspace",
        ws.to_str().unwrap(),
        "--json",
    ]));
    let lines: Vec<&str> = text.lines().collect();
    let want = lines[header - 2..header].join("\n");
    assert_eq!(sig["facts"]["text"], want.as_str());
    // Not inside any definition: a clear E/NOT_FOUND.
    let o = run(&[
        "source",
        "src/shapes/geometry.py@L1:C1",
        "--workspace",
        ws.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
}
