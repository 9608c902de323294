//! The languages of issue 31 on their real, pinned servers (installed by `lanser setup
//! --server NAME`, as `.ci/run` does): one batch session per fixture (every server it routes
//! to started once, warm for all its lines), then one CLI call per server for a capability it
//! does not declare, refused with exit 72 naming it. Expectations come from the fixture text.

use crate::support::*;
use serde_json::Value;
use std::path::Path;

/// The bundles of one `lanser batch` over `lines` in `ws`, in order.
pub fn session(ws: &Path, lines: &[String]) -> Vec<Value> {
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    parse_batch(batch_lines(ws, &refs), lines)
}

/// [`session`] on the server named `server` (`--server`).
pub fn session_on(ws: &Path, server: &str, lines: &[String]) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let (i, w) = (input.to_str().unwrap(), ws.to_str().unwrap());
    let o = run(&[
        "--server",
        server,
        "batch",
        "--in",
        i,
        "--out",
        "-",
        "--workspace",
        w,
    ]);
    parse_batch(o, lines)
}

fn parse_batch(o: std::process::Output, lines: &[String]) -> Vec<Value> {
    let out: Vec<Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a bundle per line"))
        .collect();
    assert_eq!(out.len(), lines.len(), "{}", stderr(&o));
    out
}

/// A batch line: `cmd` at `selector`.
pub fn at(cmd: &str, selector: &str) -> String {
    format!(r#"{{"cmd":"{cmd}","selector":"{selector}"}}"#)
}

/// A batch line: `cmd` with `args` (JSON).
pub fn with(cmd: &str, args: Value) -> String {
    format!(r#"{{"cmd":"{cmd}","args":{args}}}"#)
}

/// A rename preview line.
pub fn rename(selector: &str, new_name: &str) -> String {
    format!(r#"{{"cmd":"rename","selector":"{selector}","args":{{"new_name":"{new_name}"}}}}"#)
}

/// `rel@L<line of needle>:name`.
pub fn sel(ws: &Path, rel: &str, needle: &str, name: &str) -> String {
    format!("{rel}@L{}:{name}", line_with(ws, rel, needle))
}

/// The facts of a bundle that answered (its error otherwise fails the test).
pub fn facts<'a>(b: &'a Value, what: &str) -> &'a Value {
    assert!(b["error"].is_null(), "{what}: {}", b["error"]);
    &b["facts"]
}

/// Sorted (path, range) of a facts list.
pub fn sorted(list: &Value) -> Vec<(String, [u32; 4])> {
    let mut l = locs(list);
    l.sort();
    l
}

/// `ident` on the line of `needle` in `rel`.
pub fn spot(ws: &Path, rel: &str, needle: &str, ident: &str) -> (String, [u32; 4]) {
    let line = line_with(ws, rel, needle);
    (rel.to_string(), ident_range(ws, rel, line, ident))
}

/// (line (0-based), severity) of each diagnostic of a `diag` bundle.
pub fn diag_lines(b: &Value) -> Vec<(u64, String)> {
    facts(b, "diag")["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["range"][0].as_u64().unwrap(),
                d["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The bundle refused the request with E/UNSUPPORTED_CAP naming `provider`.
pub fn refused(b: &Value, method: &str, provider: &str) {
    assert_eq!(b["error"]["code"], "E/UNSUPPORTED_CAP", "{}", b["error"]);
    let msg = b["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains(&format!("does not support {method}: no {provider}")),
        "{msg}"
    );
}

/// The CLI refuses `args` in `ws` with exit 72, one line naming `method` and `provider`.
pub fn cli_refuses(ws: &Path, args: &[&str], method: &str, provider: &str) {
    let w = ws.to_string_lossy().into_owned();
    let mut all = args.to_vec();
    all.extend(["--workspace", &w]);
    let o = run(&all);
    assert_eq!(o.status.code(), Some(72), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("lanser: E/UNSUPPORTED_CAP: ")
            && err.contains(&format!("does not support {method}: no {provider}")),
        "{err}"
    );
}

/// The server a bundle names.
pub fn server(b: &Value) -> &str {
    b["environment"]["server"]["name"]
        .as_str()
        .unwrap_or_default()
}

/// CSS/SCSS/LESS, JSON and HTML through vscode-langservers-extracted's three servers, each
/// routed by file type within one batch.
#[test]
fn web_files_through_vscode_langservers_extracted() {
    let ws = fixture("web");
    let w = ws.as_path();
    let (css, scss, less) = ("styles/site.css", "styles/theme.scss", "styles/theme.less");
    let (json, html) = ("config/service.json", "index.html");
    let lines = vec![
        at("def", &sel(w, css, "color: var(--accent)", "accent")),
        at("refs", &sel(w, css, "--accent: #", "accent")),
        rename(&sel(w, css, "--accent: #", "accent"), "--brand"),
        with(
            "diag",
            serde_json::json!({"targets": ["styles/broken.css"]}),
        ),
        at("def", &sel(w, scss, "margin: $radius", "radius")),
        at("refs", &sel(w, less, "@base: #", "base")),
        at("hover", &sel(w, json, "\"port\"", "port")),
        with(
            "diag",
            serde_json::json!({"targets": ["config/broken.json"]}),
        ),
        at("def", &sel(w, json, "\"port\"", "port")),
        with("symbols", serde_json::json!({"file": json})),
        at("def", &sel(w, html, "+ countItems(", "countItems")),
        at("refs", &sel(w, html, "function countItems", "countItems")),
        rename(&sel(w, html, "function countItems", "countItems"), "tally"),
        with("diag", serde_json::json!({"targets": ["broken.html"]})),
    ];
    let b = session(w, &lines);
    for x in &b {
        assert_eq!(server(x), "vscode-langservers-extracted", "{}", x["error"]);
    }
    // CSS: a custom property's definition, references and rename, in its file.
    let decl = spot(w, css, "--accent: #", "--accent");
    assert_eq!(
        sorted(&facts(&b[0], "css def")["definitions"]),
        std::slice::from_ref(&decl)
    );
    let mut want = vec![
        decl,
        spot(w, css, "color: var(--accent)", "--accent"),
        spot(w, css, "border-color: var(--accent)", "--accent"),
    ];
    want.sort();
    assert_eq!(sorted(&facts(&b[1], "css refs")["references"]), want);
    let diff = b[2]["edits"]["diff"].as_str().unwrap_or_default();
    for l in [
        "+  --brand: #3366ff;",
        "+  color: var(--brand);",
        "+  border-color: var(--brand);",
    ] {
        assert!(diff.contains(l), "{l} in {diff}");
    }
    assert_eq!(facts(&b[2], "css rename")["applied"], false);
    assert!(
        read(w, css).contains("--accent"),
        "a preview writes nothing"
    );
    let colr = line_with(w, "styles/broken.css", "colr:") as u64 - 1;
    assert_eq!(diag_lines(&b[3]), [(colr, "warning".to_string())]);
    assert_eq!(b[3]["facts"]["diagnostics"][0]["code"], "unknownProperties");
    // SCSS: a variable's use lands on its declaration; LESS: a variable's references.
    let l = line_with(w, scss, "$radius: 4px;");
    let decl_len = "$radius: 4px".len() as u32;
    assert_eq!(
        sorted(&facts(&b[4], "scss def")["definitions"]),
        [(scss.to_string(), [l - 1, 0, l - 1, decl_len])]
    );
    let mut want = vec![
        spot(w, less, "@base: #", "@base"),
        spot(w, less, "color: @base", "@base"),
        spot(w, less, "lighten(@base", "@base"),
    ];
    want.sort();
    assert_eq!(sorted(&facts(&b[5], "less refs")["references"]), want);
    // JSON: hover and diagnostics from the schema its `$schema` names; no definitions.
    let hover = facts(&b[6], "json hover").to_string();
    assert!(hover.contains("The port it listens on"), "{hover}");
    let port = line_with(w, "config/broken.json", "\"eighty\"") as u64 - 1;
    assert_eq!(diag_lines(&b[7]), [(port, "warning".to_string())]);
    let msg = b[7]["facts"]["diagnostics"][0]["message"].to_string();
    assert!(msg.contains("Expected \\\"integer\\\""), "{msg}");
    refused(&b[8], "textDocument/definition", "definitionProvider");
    let names: Vec<&str> = facts(&b[9], "json symbols")["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["$schema", "name", "port"]);
    // HTML: its script's function, defined, referenced and renamed in the page.
    let decl = spot(w, html, "function countItems", "countItems");
    assert_eq!(
        sorted(&facts(&b[10], "html def")["definitions"]),
        std::slice::from_ref(&decl)
    );
    let mut want = vec![decl, spot(w, html, "+ countItems(", "countItems")];
    want.sort();
    assert_eq!(sorted(&facts(&b[11], "html refs")["references"]), want);
    let diff = b[12]["edits"]["diff"].as_str().unwrap_or_default();
    assert!(diff.contains("+      function tally(items) {"), "{diff}");
    assert!(diff.contains("+ tally([]);"), "{diff}");
    // Its embedded style and script are checked: the unknown property, the syntax error.
    let got = diag_lines(&b[13]);
    let style = line_with(w, "broken.html", "colr:") as u64 - 1;
    let script = line_with(w, "broken.html", "function countItems(items {") as u64 - 1;
    assert!(got.contains(&(style, "warning".to_string())), "{got:?}");
    assert!(got.contains(&(script, "error".to_string())), "{got:?}");

    // The CLI, one cold process: JSON has no references.
    let port = sel(w, json, "\"port\"", "port");
    cli_refuses(
        w,
        &["refs", &port],
        "textDocument/references",
        "referencesProvider",
    );
}

/// YAML through yaml-language-server: an alias's anchor, the anchor renamed, a schema's hover
/// and its diagnostic (the `$schema` modeline), no references.
#[test]
fn yaml_through_yaml_language_server_with_its_schema() {
    let ws = fixture("yaml");
    let w = ws.as_path();
    let y = "deploy.yaml";
    let anchor = sel(w, y, "defaults: &defaults", "defaults#2");
    let lines = vec![
        at("def", &sel(w, y, "settings: *defaults", "defaults")),
        rename(&anchor, "base"),
        at("hover", &sel(w, y, "replicas: 2", "replicas")),
        with("diag", serde_json::json!({"targets": ["broken.yaml"]})),
        with("symbols", serde_json::json!({"file": y})),
        at("refs", &anchor),
    ];
    let b = session(w, &lines);
    assert!(b.iter().all(|x| server(x) == "yaml-language-server"));
    // The alias lands on the anchored mapping: from its first key to the blank line after it.
    let first = line_with(w, y, "region: eu-west");
    let blank = line_with(w, y, "retries: 3") + 1;
    assert_eq!(
        sorted(&facts(&b[0], "yaml def")["definitions"]),
        [(y.to_string(), [first - 1, 2, blank - 1, 0])]
    );
    let diff = b[1]["edits"]["diff"].as_str().unwrap_or_default();
    assert!(diff.contains("+defaults: &base"), "{diff}");
    assert_eq!(diff.matches("+    settings: *base").count(), 2, "{diff}");
    let hover = facts(&b[2], "yaml hover").to_string();
    assert!(hover.contains("How many copies run."), "{hover}");
    let two = line_with(w, "broken.yaml", "replicas: two") as u64 - 1;
    assert_eq!(diag_lines(&b[3]), [(two, "error".to_string())]);
    let names: Vec<&str> = facts(&b[4], "yaml symbols")["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    for key in ["defaults", "service", "replicas", "stages"] {
        assert!(names.contains(&key), "{key} in {names:?}");
    }
    refused(&b[5], "textDocument/references", "referencesProvider");
    cli_refuses(
        w,
        &["refs", &anchor],
        "textDocument/references",
        "referencesProvider",
    );
}

/// Dockerfiles (by name, and `*.dockerfile`) through dockerfile-language-server-nodejs: a
/// build stage's definition, a build argument renamed, dockerfile-utils' diagnostics.
#[test]
fn dockerfiles_through_dockerfile_language_server() {
    let ws = fixture("docker");
    let w = ws.as_path();
    let d = "Dockerfile";
    let arg = sel(w, d, "ARG PYTHON_VERSION", "PYTHON_VERSION");
    let lines = vec![
        at("def", &sel(w, d, "--from=builder", "builder")),
        rename(&arg, "PY"),
        at("hover", &sel(w, d, "WORKDIR /src", "WORKDIR")),
        with(
            "diag",
            serde_json::json!({"targets": ["broken.dockerfile"]}),
        ),
        at("refs", &arg),
    ];
    let b = session(w, &lines);
    assert!(b
        .iter()
        .all(|x| server(x) == "dockerfile-language-server-nodejs"));
    assert_eq!(
        sorted(&facts(&b[0], "docker def")["definitions"]),
        [spot(w, d, "AS builder", "builder")]
    );
    let diff = b[1]["edits"]["diff"].as_str().unwrap_or_default();
    assert!(diff.contains("+ARG PY=3.11"), "{diff}");
    assert_eq!(diff.matches("+FROM python:${PY}-slim").count(), 2, "{diff}");
    let hover = facts(&b[2], "docker hover").to_string();
    assert!(hover.contains("Set the working directory"), "{hover}");
    let runn = line_with(w, "broken.dockerfile", "RUNN") as u64 - 1;
    let expose = line_with(w, "broken.dockerfile", "EXPOSE eighty") as u64 - 1;
    assert_eq!(
        diag_lines(&b[3]),
        [(runn, "error".to_string()), (expose, "error".to_string())]
    );
    refused(&b[4], "textDocument/references", "referencesProvider");
    cli_refuses(
        w,
        &["refs", &arg],
        "textDocument/references",
        "referencesProvider",
    );
}

/// PHP through intelephense, after it has indexed its stubs and the workspace: a method's
/// definition and its references across files, the parser's diagnostic; rename is a licensed
/// feature it does not declare.
#[test]
fn php_through_intelephense_after_its_index() {
    let ws = fixture("php");
    let w = ws.as_path();
    let (store, app) = ("src/Store.php", "src/app.php");
    let decl = sel(w, store, "public function add(", "add");
    let lines = vec![
        at("def", &sel(w, app, "$store->add('tea'", "add")),
        at("refs", &decl),
        at("hover", &sel(w, app, "$store->add('tea'", "add")),
        with("diag", serde_json::json!({"targets": ["src/broken.php"]})),
        with("symbols", serde_json::json!({"file": store})),
        rename(&decl, "put"),
    ];
    let b = session(w, &lines);
    assert!(b.iter().all(|x| server(x) == "intelephense"));
    // The whole declaration, from its doc comment to the closing brace.
    let start = line_with(w, store, "/** Add an item;");
    let text = read(w, store);
    let end = text
        .split('\n')
        .enumerate()
        .skip(start as usize)
        .find(|(_, l)| *l == "    }")
        .unwrap()
        .0 as u32;
    assert_eq!(
        sorted(&facts(&b[0], "php def")["definitions"]),
        [(store.to_string(), [start - 1, 4, end, 5])]
    );
    let mut want = vec![
        spot(w, store, "public function add(", "add"),
        spot(w, app, "$store->add('tea'", "add"),
        spot(w, app, "$store->add('cake'", "add"),
        spot(w, "src/broken.php", "$store->add(", "add"),
    ];
    want.sort();
    assert_eq!(sorted(&facts(&b[1], "php refs")["references"]), want);
    let hover = facts(&b[2], "php hover").to_string();
    assert!(
        hover.contains("public function add(string $name, float $price): int"),
        "{hover}"
    );
    // The missing `;` is reported at the brace that follows it.
    let brace = line_with(w, "src/broken.php", "return $store->add('tea')") as u64;
    assert_eq!(diag_lines(&b[3]), [(brace, "error".to_string())]);
    let names = facts(&b[4], "php symbols").to_string();
    for n in ["\"Store\"", "\"add\"", "\"total\""] {
        assert!(names.contains(n), "{n} in {names}");
    }
    refused(&b[5], "textDocument/rename", "renameProvider");
    cli_refuses(
        w,
        &["rename", &decl, "put"],
        "textDocument/rename",
        "renameProvider",
    );
}

/// `ident`'s range on the line of `needle` in `rel`, its columns in code points.
fn cp_spot(ws: &Path, rel: &str, needle: &str, ident: &str) -> (String, [u32; 4]) {
    let line = line_with(ws, rel, needle);
    let text = read(ws, rel);
    let l = text.split('\n').nth(line as usize - 1).unwrap();
    let [_, u16_start, _, _] = ident_range(ws, rel, line, ident);
    let (mut units, mut start) = (0, 0);
    for c in l.chars() {
        if units == u16_start {
            break;
        }
        units += c.len_utf16() as u32;
        start += 1;
    }
    let end = start + ident.chars().count() as u32;
    (rel.to_string(), [line - 1, start, line - 1, end])
}

/// The Python servers people run besides Pyright, chosen with `--server`, on a copy of
/// srcpkg with a syntax error added: jedi-language-server and pylsp (definitions, references
/// and rename from jedi, in code points; intl.py puts astral characters before a call), and
/// ruff (lint diagnostics and code actions only).
#[test]
fn python_alternatives_jedi_pylsp_and_ruff() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("srcpkg");
    copy_tree(&fixture("srcpkg"), &ws);
    std::fs::write(ws.join("src/shapes/typo.py"), "def typo(:\n    return 1\n").unwrap();
    let w = ws.as_path();
    let (units, intl, broken) = (
        "src/shapes/units.py",
        "src/shapes/intl.py",
        "src/shapes/broken.py",
    );
    let decl = sel(w, units, "def convert(", "convert");
    let call = sel(w, intl, "result = convert(", "convert");
    let mut want = vec![
        cp_spot(w, units, "def convert(", "convert"),
        cp_spot(
            w,
            "src/shapes/__init__.py",
            "from .units import convert",
            "convert",
        ),
        cp_spot(w, broken, "from .units import convert", "convert"),
        cp_spot(w, broken, "bad_length = convert(", "convert"),
        cp_spot(w, intl, "from .units import", "convert"),
        cp_spot(w, intl, "result = convert(", "convert"),
    ];
    want.sort();
    let lines = vec![
        at("def", &call),
        at("refs", &decl),
        rename(&decl, "to_unit"),
        at("hover", &call),
        with(
            "diag",
            serde_json::json!({"targets": ["src/shapes/typo.py", broken]}),
        ),
    ];
    let typo = line_with(w, "src/shapes/typo.py", "def typo(:") as u64 - 1;
    let undefined = line_with(w, broken, "undefined_total + 1") as u64 - 1;
    for server in ["jedi-language-server", "pylsp"] {
        let b = session_on(w, server, &lines);
        assert_eq!(
            b[0]["environment"]["positionEncoding"], "codepoint",
            "{server}"
        );
        assert_eq!(
            sorted(&facts(&b[0], server)["definitions"]),
            [want.iter().find(|l| l.0 == units).unwrap().clone()],
            "{server}"
        );
        assert_eq!(
            sorted(&facts(&b[1], server)["references"]),
            want,
            "{server}"
        );
        let diff = b[2]["edits"]["diff"].as_str().unwrap_or_default();
        for l in [
            "+def to_unit(value: float, unit: str) -> float:",
            "+from .units import to_unit",
            "+label = \"🐍𝔘\"; result = to_unit(total, \"cm\")",
        ] {
            assert!(diff.contains(l), "{server}: {l} in {diff}");
        }
        let hover = facts(&b[3], server).to_string();
        assert!(
            hover.contains("Convert a length given in centimetres"),
            "{server}: {hover}"
        );
        let got = diag_lines(&b[4]);
        assert!(
            got.contains(&(typo, "error".to_string())),
            "{server}: {got:?}"
        );
        // pyflakes (pylsp) finds the undefined name; jedi reports syntax errors only.
        assert_eq!(
            got.contains(&(undefined, "error".to_string())),
            server == "pylsp",
            "{server}: {got:?}"
        );
    }
    // ruff: its lint rule at the undefined name, a fix that disables it for the line.
    let at_undefined = sel(w, broken, "undefined_total + 1", "undefined_total");
    let b = session_on(
        w,
        "ruff",
        &[
            with("diag", serde_json::json!({"targets": [broken]})),
            format!(
                r#"{{"cmd":"code-actions","selector":"{at_undefined}","args":{{"apply":"0","dry-run":true}}}}"#
            ),
            at("def", &call),
        ],
    );
    let d = &facts(&b[0], "ruff diag")["diagnostics"];
    assert!(
        d.as_array()
            .unwrap()
            .iter()
            .any(|d| d["code"] == "F821" && d["range"][0] == undefined),
        "{d}"
    );
    let diff = b[1]["edits"]["diff"].as_str().unwrap_or_default();
    assert!(diff.contains("# noqa: F821"), "{diff}");
    refused(&b[2], "textDocument/definition", "definitionProvider");
    cli_refuses(
        w,
        &["--server", "ruff", "refs", &decl],
        "textDocument/references",
        "referencesProvider",
    );
}
