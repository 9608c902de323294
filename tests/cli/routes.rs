//! `format`, `types`, `inlay` and `tests` (issue 30) answered alike from every route: the CLI
//! in-process, a batch line, the warm daemon, an MCP call and the SDK give the same bundle,
//! byte for byte. One warm daemon on a copy of fixtures/srcpkg serves all four, each through a
//! server that has it (ruff formats, ty answers the type hierarchy and inlay hints, Pyright's
//! references select the tests), and each answer is checked against the fixture's text.

use crate::daemon::Warm;
use crate::mutations::snapshot;
use crate::support::*;
use serde_json::{json, Value};

const GEOMETRY: &str = "src/shapes/geometry.py";
const UNITS: &str = "src/shapes/units.py";
const TESTS: &str = "tests/test_geometry.py";

/// One operation, asked five ways.
struct Ask {
    server: &'static str,
    /// The CLI's arguments (without --server, --workspace and --json).
    cli: Vec<String>,
    line: Value,
    tool: &'static str,
    mcp: Value,
    /// The SDK call on a session `l`, in Python.
    sdk: String,
}

/// The bundles of `asks` from the CLI in-process, checked to be the bytes of the other four
/// routes: the daemon, a batch line (in-process), an MCP call (through the daemon) and the SDK.
fn every_route(w: &Warm, asks: &[Ask]) -> Vec<Value> {
    fn args(v: &[String]) -> Vec<&str> {
        v.iter().map(String::as_str).collect()
    }
    let with = |a: &Ask, tail: &[&str]| -> Vec<String> {
        let mut v = vec!["--server".to_string(), a.server.to_string()];
        v.extend(a.cli.iter().cloned());
        v.extend(tail.iter().map(|s| s.to_string()));
        v
    };
    let mut cli = Vec::new();
    for a in asks {
        let argv = with(a, &["--json"]);
        let o = w
            .cmd(&args(&argv))
            .env("LANSER_NO_DAEMON", "1")
            .output()
            .unwrap();
        assert!(o.status.success(), "{argv:?}: {}", stderr(&o));
        let text = stdout(&o);
        assert_eq!(stdout(&w.ok(&args(&argv))), text, "daemon: {argv:?}");
        let batch = ["--server", a.server, "batch", "--in", "-", "--out", "-"];
        let mut h = Harness::spawn({
            let mut c = w.cmd(&batch);
            c.env("LANSER_NO_DAEMON", "1");
            c
        });
        let got = h.ask(&a.line.to_string());
        assert!(h.finish().success());
        assert_eq!(got.to_string(), text.trim_end(), "batch: {}", a.line);
        let mcp = mcp_session(
            w.cmd(&["--server", a.server, "mcp"]),
            &[(a.tool, a.mcp.clone())],
        );
        assert_eq!(mcp[0]["isError"], false, "{}", mcp[0]);
        assert_eq!(
            mcp[0]["structuredContent"].to_string(),
            text.trim_end(),
            "mcp: {}",
            a.tool
        );
        cli.push(text);
    }
    assert_eq!(sdk(w, asks), cli, "sdk");
    // The daemon answered the CLI's asks (none fell back to answering in-process).
    let answered = w.status()["requests"].as_u64().unwrap();
    assert!(answered >= asks.len() as u64, "{answered} requests");
    cli.iter()
        .map(|t| serde_json::from_str(t).unwrap())
        .collect()
}

/// The SDK's bundle lines for `asks`, one session per ask, through the warm daemon.
fn sdk(w: &Warm, asks: &[Ask]) -> Vec<String> {
    let mut script = String::from("import sys\nfrom lanser import Lanser\n");
    for a in asks {
        script += &format!(
            "with Lanser(sys.argv[1], lanser_bin=sys.argv[2], args=['--server', {:?}]) as l:\n    print({}.line)\n",
            a.server, a.sdk
        );
    }
    let like = w.cmd(&[]);
    let mut py = sdk_python(&like);
    let o = py
        .args(["-c", &script])
        .arg(&w.ws)
        .arg(env!("CARGO_BIN_EXE_lanser"))
        .output()
        .unwrap();
    assert!(o.status.success(), "sdk: {}", stderr(&o));
    stdout(&o).lines().map(|l| format!("{l}\n")).collect()
}

/// The top-level functions of `text`: (name, 1-based line of the `def`, the block's text).
fn functions(text: &str) -> Vec<(String, u32, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(rest) = l.strip_prefix("def ").or(l.strip_prefix("async def ")) else {
            continue;
        };
        let name = rest.split('(').next().unwrap().to_string();
        let end = i
            + 1
            + lines[i + 1..]
                .iter()
                .take_while(|b| b.is_empty() || b.starts_with(' '))
                .count();
        out.push((name, i as u32 + 1, lines[i..end].join("\n")));
    }
    out
}

/// The parameter names of the last `def NAME(` of `text`.
fn params(text: &str, name: &str) -> Vec<String> {
    let head = format!("def {name}(");
    let l = text.lines().rfind(|l| l.starts_with(&head)).unwrap();
    l[head.len()..l.find(')').unwrap()]
        .split(", ")
        .map(|p| p.split(':').next().unwrap().to_string())
        .collect()
}

/// `units.py` with the spaces around its first `=` and after its commas taken out (still
/// Python): ruff's format puts them back.
fn squeezed(text: &str) -> String {
    text.split('\n')
        .map(|l| l.replacen(" = ", "=", 1).replace(", ", ","))
        .collect::<Vec<_>>()
        .join("\n")
}

fn ask(
    server: &'static str,
    cli: &[&str],
    line: Value,
    mcp: (&'static str, Value),
    sdk: &str,
) -> Ask {
    Ask {
        server,
        cli: cli.iter().map(|s| s.to_string()).collect(),
        line,
        tool: mcp.0,
        mcp: mcp.1,
        sdk: sdk.to_string(),
    }
}

#[test]
fn format_types_inlay_and_tests_answer_alike_from_every_route() {
    let w = Warm::new("srcpkg");
    w.link_server("ty");
    w.link_server("ruff");
    let original = read(&w.ws, UNITS);
    let mangled = squeezed(&original);
    assert_ne!(mangled, original);
    std::fs::write(w.ws.join(UNITS), &mangled).unwrap();
    let before = snapshot(&w.ws);
    // The two lines of test_scale that call scale(): their hints only.
    let first = line_with(&w.ws, TESTS, "assert scale(2, 3)");
    let range = format!("{first},1->{},1", first + 2);
    let asks = [
        ask(
            "ruff",
            &["format", UNITS],
            json!({"cmd": "format", "args": {"file": UNITS}}),
            ("format", json!({"file": UNITS})),
            &format!("l.format({UNITS:?})"),
        ),
        ask(
            "ty",
            &["types", "py://shapes.geometry#Shape", "--subtypes"],
            json!({"cmd": "types", "selector": "py://shapes.geometry#Shape", "args": {"subtypes": true}}),
            (
                "type_hierarchy",
                json!({"selector": "py://shapes.geometry#Shape", "direction": "subtypes"}),
            ),
            "l.types('py://shapes.geometry#Shape', subtypes=True)",
        ),
        ask(
            "ty",
            &["inlay", TESTS, "--range", &range],
            json!({"cmd": "inlay", "args": {"file": TESTS, "range": range}}),
            ("inlay_hints", json!({"file": TESTS, "range": range})),
            &format!("l.inlay({TESTS:?}, range={range:?})"),
        ),
        ask(
            "pyright",
            &["tests", "py://shapes.geometry#scale"],
            json!({"cmd": "tests", "selector": "py://shapes.geometry#scale"}),
            ("tests", json!({"selector": "py://shapes.geometry#scale"})),
            "l.tests('py://shapes.geometry#scale')",
        ),
    ];
    let b = every_route(&w, &asks);
    assert_eq!(snapshot(&w.ws), before, "nothing is written");

    // format: a preview whose diff takes each squeezed line back to the fixture's.
    assert_eq!(b[0]["facts"]["applied"], false, "{}", b[0]);
    assert_eq!(b[0]["facts"]["files"], json!([UNITS]));
    let diff = b[0]["edits"]["diff"].as_str().unwrap();
    let (old, new): (Vec<&str>, Vec<&str>) = mangled
        .lines()
        .zip(original.lines())
        .filter(|(m, o)| m != o)
        .unzip();
    let signed = |sign: char| -> Vec<&str> {
        diff.lines()
            .filter(|l| l.starts_with(sign) && !l.starts_with(&sign.to_string().repeat(3)))
            .map(|l| &l[1..])
            .collect()
    };
    assert_eq!(signed('-'), old, "{diff}");
    assert_eq!(signed('+'), new, "{diff}");

    // types --subtypes: the classes that name Shape as their base, where their names are.
    assert_eq!(b[1]["facts"]["item"]["name"], "Shape");
    let subtypes = &b[1]["facts"]["subtypes"];
    let names: Vec<&str> = subtypes
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let want = crate::readops::classes_with_base(&w.ws, GEOMETRY, "Shape");
    assert_eq!(
        names,
        want.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>()
    );
    let at: Vec<(String, [u32; 4])> = want
        .iter()
        .map(|(_, r)| (GEOMETRY.to_string(), *r))
        .collect();
    assert_eq!(locs(subtypes), at);

    // inlay --range: each argument of the two scale() calls named by scale's parameters.
    let geometry = read(&w.ws, GEOMETRY);
    let names = params(&geometry, "scale");
    assert_eq!(names, ["value", "factor"]);
    let tests_text = read(&w.ws, TESTS);
    let mut want = Vec::new();
    for (i, l) in tests_text.lines().enumerate() {
        let line = i as u32 + 1;
        if !(first..first + 2).contains(&line) {
            continue;
        }
        let open = l.find("scale(").unwrap() + "scale(".len();
        let mut col = open;
        for (arg, p) in l[open..open + l[open..].find(')').unwrap()]
            .split(", ")
            .zip(&names)
        {
            want.push(json!({"kind": "parameter", "label": format!("{p}="),
                "position": [i, col], "selector": format!("{TESTS}@L{line}:C{}", col + 1)}));
            col += arg.len() + 2;
        }
    }
    assert_eq!(want.len(), 4);
    assert_eq!(b[2]["facts"]["hints"], json!(want));

    // tests: those that call scale() (depth 1) or a function of geometry.py that does (2).
    let callers: Vec<String> = functions(&geometry)
        .into_iter()
        .filter(|(n, _, body)| n != "scale" && body.contains("scale("))
        .map(|(n, ..)| n)
        .collect();
    assert_eq!(callers, ["fetch_shape"]);
    let mut want = Vec::new();
    for (name, line, body) in functions(&tests_text) {
        let depth = if body.contains(" scale(") {
            1
        } else if callers.iter().any(|c| body.contains(&format!("{c}("))) {
            2
        } else {
            continue;
        };
        let r = ident_range(&w.ws, TESTS, line, &name);
        want.push((format!("{TESTS}::{name}"), depth, r));
    }
    want.sort();
    assert_eq!(want.len(), 2, "{want:?}");
    let got: Vec<(String, u64, [u32; 4])> = b[3]["facts"]["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            assert_eq!(t["path"], TESTS);
            let r = locs(&json!([t]))[0].1;
            (
                t["id"].as_str().unwrap().to_string(),
                t["depth"].as_u64().unwrap(),
                r,
            )
        })
        .collect();
    let want: Vec<(String, u64, [u32; 4])> =
        want.into_iter().map(|(i, d, r)| (i, d as u64, r)).collect();
    assert_eq!(got, want);
    assert_eq!(b[3]["facts"]["ran"], false);
}
