//! `complete`, `format`, `types` and `inlay` (issue 30) on real servers, each expectation read
//! from the fixture text: Pyright's completion after `user.` (one warm daemon: the CLI, a batch
//! line, the daemon, an MCP call and the SDK give the same bundle) and its exit-72 refusal of
//! the three it has no capability for; ty's type hierarchy and inlay hints; and
//! typescript-language-server's formatter, previewed (nothing written) and applied (the file
//! becomes the fixture's own text again).

use crate::support::*;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// The field and method names of `class NAME` in `rel` (its body's `name:` and `def name(`
/// lines, one indentation level in).
fn members(ws: &Path, rel: &str, class: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let text = read(ws, rel);
    let mut lines = text
        .lines()
        .skip_while(|l| !l.starts_with(&format!("class {class}")));
    lines.next();
    let (mut fields, mut methods) = (BTreeSet::new(), BTreeSet::new());
    for l in lines.take_while(|l| l.is_empty() || l.starts_with(' ')) {
        let Some(body) = l.strip_prefix("    ").filter(|b| !b.starts_with(' ')) else {
            continue;
        };
        if let Some(rest) = body.strip_prefix("def ") {
            methods.insert(rest.split('(').next().unwrap().to_string());
        } else if let Some((name, _)) = body.split_once(':') {
            if name.chars().all(|c| c == '_' || c.is_alphanumeric()) && !name.is_empty() {
                fields.insert(name.to_string());
            }
        }
    }
    (fields, methods)
}

/// The 1-based column just after the first `needle` on 1-based `line`.
fn col_after(ws: &Path, rel: &str, line: u32, needle: &str) -> usize {
    let text = read(ws, rel);
    let l = text.lines().nth(line as usize - 1).unwrap();
    l.find(needle).unwrap() + needle.len() + 1
}

fn labels(b: &Value, key: &str) -> Vec<String> {
    b["facts"][key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key}: {b}"))
        .iter()
        .map(|i| i["label"].as_str().unwrap().to_string())
        .collect()
}

/// The SDK's bundle line for `lanser.complete(sel)`, in the environment `like` runs in.
fn sdk_complete(like: &Command, ws: &Path, sel: &str) -> String {
    let script = "import sys\nfrom lanser.client import Lanser\n\
        with Lanser(sys.argv[1], lanser_bin=sys.argv[2]) as l:\n    print(l.complete(sys.argv[3]).line)\n";
    let mut py = sdk_python(like);
    let o = py
        .args(["-c", script])
        .arg(ws)
        .arg(env!("CARGO_BIN_EXE_lanser"))
        .arg(sel)
        .output()
        .unwrap();
    assert!(o.status.success(), "sdk: {}", stderr(&o));
    stdout(&o)
}

/// Pyright's completion after `user.` lists `User`'s fields and methods in its sort order;
/// the CLI, a batch line, the warm daemon, MCP and the SDK give it byte for byte; format,
/// types and inlay are refused with exit 72 naming the capability, and nothing is written.
#[test]
fn completion_is_the_same_from_every_route_and_pyright_refuses_the_rest() {
    let w = crate::daemon::Warm::new("flat");
    let line = line_with(&w.ws, "main.py", "print(user.display_name())");
    let col = col_after(&w.ws, "main.py", line, "user.");
    let sel = format!("main.py@L{line}:C{col}");
    let in_process = w
        .cmd(&["complete", &sel, "--json"])
        .env("LANSER_NO_DAEMON", "1")
        .output()
        .unwrap();
    assert!(in_process.status.success(), "{}", stderr(&in_process));
    let cli = stdout(&in_process);
    let b: Value = serde_json::from_str(&cli).unwrap();
    let (fields, methods) = members(&w.ws, "models.py", "User");
    assert!(methods.contains("display_name") && fields.contains("email"));
    let items = b["facts"]["items"].as_array().unwrap();
    for name in fields.iter().chain(&methods) {
        let item = items.iter().find(|i| i["label"] == name.as_str());
        let item = item.unwrap_or_else(|| panic!("{name} not offered: {}", b["facts"]));
        let kind = if methods.contains(name) {
            "method"
        } else {
            "variable"
        };
        assert_eq!(item["kind"], kind, "{name}");
    }
    let keys: Vec<(String, String)> = items
        .iter()
        .map(|i| {
            (
                i["sortText"].as_str().unwrap().into(),
                i["label"].as_str().unwrap().into(),
            )
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted, "items in sortText order");
    assert_eq!(b["request"]["cmd"], "complete");
    // The other four routes: the same bytes.
    let daemon = stdout(&w.ok(&["complete", &sel, "--json"]));
    assert_eq!(daemon, cli, "daemon");
    let mut batch = w.cmd(&["batch", "--in", "-", "--out", "-"]);
    batch.env("LANSER_NO_DAEMON", "1");
    let mut h = Harness::spawn(batch);
    let line_json = json!({"cmd": "complete", "selector": sel}).to_string();
    let via_batch = h.ask(&line_json);
    assert!(h.finish().success());
    assert_eq!(
        serde_json::to_string(&via_batch).unwrap(),
        cli.trim_end(),
        "batch"
    );
    let via_mcp = &mcp_session(w.cmd(&["mcp"]), &[("completion", json!({"selector": sel}))])[0];
    assert_eq!(via_mcp["isError"], false, "{via_mcp}");
    let structured = serde_json::to_string(&via_mcp["structuredContent"]).unwrap();
    assert_eq!(structured, cli.trim_end(), "mcp");
    let sdk = sdk_complete(&w.cmd(&[]), &w.ws, &sel);
    assert_eq!(sdk, cli, "sdk");
    // --resolve: each item's documentation, the method's docstring among it.
    let resolved = bundle(&w.ok(&["complete", &sel, "--resolve", "--json"]));
    let doc_line = "Return the name, followed by the e-mail address when known.";
    assert!(read(&w.ws, "models.py").contains(doc_line));
    let shown = resolved["facts"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["label"] == "display_name")
        .map(|i| i["documentation"].as_str().unwrap_or_default().to_string());
    assert!(shown.unwrap().contains(doc_line), "{}", resolved["facts"]);
    assert_eq!(labels(&resolved, "items"), labels(&b, "items"));
    // What Pyright has no provider for: exit 72 naming it, nothing written.
    let before = read(&w.ws, "main.py");
    for (args, provider) in [
        (
            vec!["format", "main.py", "--apply"],
            "documentFormattingProvider",
        ),
        (vec!["types", sel.as_str()], "typeHierarchyProvider"),
        (vec!["inlay", "main.py"], "inlayHintProvider"),
    ] {
        let o = w.run(&args);
        assert_eq!(o.status.code(), Some(72), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(provider), "{args:?}: {}", stderr(&o));
    }
    assert_eq!(read(&w.ws, "main.py"), before);
}

/// `lanser --server S batch` over `lines` in `ws`: one bundle per line.
fn batch_on(server: &str, ws: &Path, lines: &[String]) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::write(
        &input,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    let o = run(&[
        "--server",
        server,
        "batch",
        "--in",
        input.to_str().unwrap(),
        "--out",
        "-",
        "--workspace",
        ws.to_str().unwrap(),
    ]);
    stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// (name, range of the name) of the classes `class X(...)` in `rel` that list `base`.
pub(crate) fn classes_with_base(ws: &Path, rel: &str, base: &str) -> Vec<(String, [u32; 4])> {
    let text = read(ws, rel);
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let Some(rest) = l.strip_prefix("class ") else {
            continue;
        };
        let (name, bases) = rest
            .split_once('(')
            .unwrap_or((rest.trim_end_matches(':'), ""));
        if bases.split([',', ')']).any(|b| b.trim() == base) {
            let line = i as u32 + 1;
            out.push((name.to_string(), ident_range(ws, rel, line, name)));
        }
    }
    out
}

/// ty's type hierarchy on srcpkg: `Circle`'s supertype is the class it names as its base,
/// `Shape`'s subtypes are the classes that name it; ty's inlay hints on flat: the return type
/// of each service function a variable is assigned from, and the parameter name of each
/// argument that does not already spell it; `--range` keeps one line's.
#[test]
fn ty_answers_the_type_hierarchy_and_inlay_hints() {
    let src = fixture("srcpkg");
    let geo = "src/shapes/geometry.py";
    let answers = batch_on(
        "ty",
        &src,
        &[
            json!({"cmd": "types", "selector": "py://shapes.geometry#Circle", "args": {"supertypes": true}}).to_string(),
            json!({"cmd": "types", "selector": "py://shapes.geometry#Shape", "args": {"subtypes": true}}).to_string(),
        ],
    );
    let named = |list: &Value| -> Vec<(String, [u32; 4])> {
        let paths = locs(list);
        let names = list
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string());
        names
            .zip(paths)
            .map(|(n, (p, r))| {
                assert_eq!(p, geo);
                (n, r)
            })
            .collect()
    };
    let shape_line = line_with(&src, geo, "class Shape");
    assert_eq!(
        named(&answers[0]["facts"]["supertypes"]),
        [(
            "Shape".to_string(),
            ident_range(&src, geo, shape_line, "Shape")
        )]
    );
    assert_eq!(answers[0]["facts"]["item"]["name"], "Circle");
    assert!(answers[0]["facts"].get("subtypes").is_none());
    let subs = classes_with_base(&src, geo, "Shape");
    assert_eq!(subs.len(), 2, "{subs:?}");
    assert_eq!(named(&answers[1]["facts"]["subtypes"]), subs);

    let flat = fixture("flat");
    let calls_line = line_with(&flat, "main.py", "found = lookup(");
    let answers = batch_on(
        "ty",
        &flat,
        &[
            json!({"cmd": "inlay", "args": {"file": "main.py"}}).to_string(),
            json!({"cmd": "inlay", "args": {"file": "main.py", "range": format!("{calls_line},1->{},1", calls_line + 1)}}).to_string(),
        ],
    );
    // The service functions' parameters and return types, from their `def` lines.
    let service = read(&flat, "service.py");
    let sigs: Vec<(String, Vec<String>, String)> = service
        .lines()
        .filter_map(|l| l.strip_prefix("def "))
        .map(|l| {
            let (name, rest) = l.split_once('(').unwrap();
            let (params, ret) = rest.rsplit_once(") -> ").unwrap();
            let params = params
                .split(", ")
                .map(|p| p.split(':').next().unwrap().to_string())
                .collect();
            (
                name.to_string(),
                params,
                ret.trim_end_matches(':').to_string(),
            )
        })
        .collect();
    let mut want = BTreeSet::new();
    let text = read(&flat, "main.py");
    for (i, l) in text.lines().enumerate() {
        for (name, params, ret) in &sigs {
            let Some(at) = l.find(&format!("{name}(")) else {
                continue;
            };
            let lhs = l[..at].trim();
            if let Some(var) = lhs.strip_suffix(" =").or(lhs.strip_suffix('=')) {
                let end = l.find(var.trim()).unwrap() + var.trim().len();
                want.insert((i as u32, end as u32, format!(": {ret}")));
            }
            let open = at + name.len() + 1;
            let args = &l[open..l.rfind(')').unwrap()];
            let mut col = open;
            for (arg, param) in args.split(", ").zip(params) {
                if arg != param {
                    want.insert((i as u32, col as u32, format!("{param}=")));
                }
                col += arg.len() + 2;
            }
        }
    }
    let hints = |b: &Value| -> BTreeSet<(u32, u32, String)> {
        b["facts"]["hints"]
            .as_array()
            .unwrap_or_else(|| panic!("{b}"))
            .iter()
            .map(|h| {
                let p = &h["position"];
                (
                    p[0].as_u64().unwrap() as u32,
                    p[1].as_u64().unwrap() as u32,
                    h["label"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let on_call_lines: BTreeSet<_> = hints(&answers[0])
        .into_iter()
        .filter(|h| want.iter().any(|w| w.0 == h.0))
        .collect();
    assert_eq!(on_call_lines, want);
    assert!(
        want.contains(&(calls_line - 1, 9, ": User | None".to_string())),
        "{want:?}"
    );
    let in_range: BTreeSet<_> = want
        .iter()
        .filter(|w| w.0 == calls_line - 1)
        .cloned()
        .collect();
    assert_eq!(hints(&answers[1]), in_range);
}

/// typescript-language-server's formatter on a copy of fixtures/ts whose store.ts lost its
/// indentation and some spaces: the preview writes nothing and its diff restores them; the
/// applied format leaves the fixture's own text. Its completion after `store.` lists the
/// class's methods, and it has no type hierarchy (exit 72's error bundle in a batch).
#[test]
fn typescript_formats_previewed_and_applied_and_completes_members() {
    let dir = tempfile::tempdir().unwrap();
    let ts = dir.path().join("ts");
    copy_tree(&fixture("ts"), &ts);
    let original = read(&ts, "src/store.ts");
    let mangled: String = original
        .split('\n')
        .map(|l| l.trim_start().replace(" = ", "=").replace("): ", "):"))
        .collect::<Vec<_>>()
        .join("\n");
    assert_ne!(mangled, original);
    std::fs::write(ts.join("src/store.ts"), &mangled).unwrap();
    for args in [
        &["init", "-q"][..],
        &["add", "-A"],
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "x",
        ],
    ] {
        assert!(Command::new("git")
            .args(args)
            .current_dir(&ts)
            .status()
            .unwrap()
            .success());
    }
    // The `add` method's lines (0-based first and last): --range formats only those.
    let lines: Vec<&str> = original.split('\n').collect();
    let first = lines.iter().position(|l| l.starts_with("  add(")).unwrap();
    let last = first + lines[first..].iter().position(|l| *l == "  }").unwrap();
    let method = (first, last);
    let line = line_with(&ts, "src/app.ts", "store.add(item)");
    let col = col_after(&ts, "src/app.ts", line, "store.");
    let answers = batch_on(
        "typescript-language-server",
        &ts,
        &[
            json!({"cmd": "format", "args": {"file": "src/store.ts", "tab-size": 2}}).to_string(),
            json!({"cmd": "complete", "selector": format!("src/app.ts@L{line}:C{col}")})
                .to_string(),
            json!({"cmd": "types", "selector": format!("src/app.ts@L{line}:C{col}")}).to_string(),
            json!({"cmd": "format", "args": {"file": "src/store.ts", "tab-size": 2,
                "range": format!("{},1->{},1", method.0 + 1, method.1 + 2)}})
            .to_string(),
        ],
    );
    let preview = &answers[0];
    assert_eq!(preview["facts"]["applied"], false, "{preview}");
    assert_eq!(preview["facts"]["files"], json!(["src/store.ts"]));
    assert_eq!(
        read(&ts, "src/store.ts"),
        mangled,
        "a preview writes nothing"
    );
    let diff = preview["edits"]["diff"].as_str().unwrap();
    for l in original.lines().filter(|l| l.starts_with("  ")) {
        assert!(
            diff.contains(&format!("+{l}\n")),
            "{l:?} not restored:\n{diff}"
        );
    }
    let o = run(&[
        "--server",
        "typescript-language-server",
        "format",
        "src/store.ts",
        "--tab-size",
        "2",
        "--apply",
        "--workspace",
        ts.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(bundle(&o)["facts"]["applied"], true);
    assert_eq!(
        read(&ts, "src/store.ts"),
        original,
        "formatted back to the fixture"
    );
    // Completion after `store.`: Store's methods.
    let methods: Vec<&str> = original
        .lines()
        .skip_while(|l| !l.starts_with("export class Store"))
        .filter_map(|l| l.strip_prefix("  ")?.split_once('(').map(|(m, _)| m))
        .filter(|m| m.chars().all(char::is_alphanumeric))
        .collect();
    assert_eq!(methods, ["add", "total"]);
    for m in methods {
        let item = answers[1]["facts"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["label"] == m);
        assert_eq!(
            item.map(|i| i["kind"].clone()),
            Some(json!("method")),
            "{}",
            answers[1]["facts"]
        );
    }
    let ranged = answers[3]["edits"]["diff"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", answers[3]));
    let added: Vec<&str> = ranged
        .lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
        .map(|l| &l[1..])
        .collect();
    assert_eq!(added, lines[first..=last], "{ranged}");
    assert_eq!(
        answers[2]["error"]["code"], "E/UNSUPPORTED_CAP",
        "{}",
        answers[2]
    );
    assert!(answers[2]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("typeHierarchyProvider"));
}

/// clangd's inlay hints on fixtures/c: each argument of a call to a function store.h declares
/// is shown with its parameter's name from the prototype (`s:` before `&s`, `it:` before `tea`).
#[test]
fn clangd_names_the_parameters_of_calls() {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("c");
    copy_tree(&fixture("c"), &c);
    let line = json!({"cmd": "inlay", "args": {"file": "src/main.c"}}).to_string();
    let b = &batch_on("clangd", &c, &[line])[0];
    assert_eq!(b["environment"]["server"]["name"], "clangd");
    // `int NAME(TYPE PARAM, …);` in the header.
    let header = read(&c, "src/store.h");
    let protos: Vec<(String, Vec<String>)> = header
        .lines()
        .filter(|l| l.starts_with("int ") && l.ends_with(");"))
        .map(|l| {
            let (name, rest) = l["int ".len()..].split_once('(').unwrap();
            let params = rest
                .trim_end_matches(");")
                .split(", ")
                .map(|p| p.rsplit([' ', '*']).next().unwrap().to_string())
                .collect();
            (name.to_string(), params)
        })
        .collect();
    let mut want = BTreeSet::new();
    for (i, l) in read(&c, "src/main.c").lines().enumerate() {
        for (name, params) in &protos {
            let Some(at) = l.find(&format!("{name}(")) else {
                continue;
            };
            let open = at + name.len() + 1;
            let args = &l[open..open + l[open..].find(')').unwrap()];
            let mut col = open;
            for (arg, p) in args.split(", ").zip(params) {
                want.insert((i as u32, col as u32, format!("{p}:")));
                col += arg.len() + 2;
            }
        }
    }
    assert_eq!(want.len(), 3, "{want:?}");
    let got: BTreeSet<(u32, u32, String)> = b["facts"]["hints"]
        .as_array()
        .unwrap_or_else(|| panic!("{b}"))
        .iter()
        .map(|h| {
            let p = &h["position"];
            let at = (p[0].as_u64().unwrap() as u32, p[1].as_u64().unwrap() as u32);
            (at.0, at.1, h["label"].as_str().unwrap().to_string())
        })
        .filter(|h| want.iter().any(|w| w.0 == h.0))
        .collect();
    assert_eq!(got, want);
}
