//! The last languages of issue 31 on their real, pinned servers (installed by `lanser setup
//! --server NAME`): Svelte, SQL, CMake and Fortran, one batch session per fixture for many
//! assertions, then one cold CLI call per server for a capability it does not declare, refused
//! with exit 72 naming it; and one repository of six file types answered per file by its own
//! server, through MCP and a batch as the CLI answers. Expectations come from the fixture text.

use crate::language_more::{
    at, cli_refuses, diag_lines, facts, refused, rename, sel, server, session, sorted, spot, with,
};
use crate::support::*;

/// Svelte through svelte-language-server: a script's import defined in a `.js` module, a
/// template's handler defined, referenced and renamed in its component, hover, and the
/// compiler's diagnostic (pulled, for the open document).
#[test]
fn svelte_components_through_svelte_language_server() {
    let ws = fixture("svelte");
    let w = ws.as_path();
    let (app, counter) = ("src/App.svelte", "src/Counter.svelte");
    let decl = sel(w, counter, "function increment", "increment");
    let lines = vec![
        at("def", &sel(w, app, "let base = double(", "double")),
        at("def", &sel(w, counter, "on:click={increment}", "increment")),
        at("refs", &decl),
        rename(&decl, "bump"),
        at("hover", &sel(w, app, "let base = double(", "double")),
        with(
            "diag",
            serde_json::json!({"targets": ["src/Broken.svelte"]}),
        ),
        at("decl", &decl),
    ];
    let b = session(w, &lines);
    assert!(b.iter().all(|x| server(x) == "svelte-language-server"));
    assert_eq!(
        sorted(&facts(&b[0], "svelte def js")["definitions"]),
        [spot(w, "src/math.js", "export function double", "double")]
    );
    let decl_at = spot(w, counter, "function increment", "increment");
    assert_eq!(
        sorted(&facts(&b[1], "svelte def")["definitions"]),
        std::slice::from_ref(&decl_at)
    );
    let mut want = vec![
        decl_at,
        spot(w, counter, "on:click={increment}", "increment"),
    ];
    want.sort();
    assert_eq!(sorted(&facts(&b[2], "svelte refs")["references"]), want);
    let diff = b[3]["edits"]["diff"].as_str().unwrap_or_default();
    for l in ["+  function bump() {", "+<button on:click={bump}>"] {
        assert!(diff.contains(l), "{l} in {diff}");
    }
    assert!(
        read(w, counter).contains("increment"),
        "a preview writes nothing"
    );
    // The doc comment of math.js's function.
    let hover = facts(&b[4], "svelte hover").to_string();
    assert!(hover.contains("Twice `n`."), "{hover}");
    let close = line_with(w, "src/Broken.svelte", "</h2>") as u64 - 1;
    let got = diag_lines(&b[5]);
    assert!(!got.is_empty(), "{}", b[5]["facts"]);
    assert!(
        got.iter().all(|d| *d == (close, "error".to_string())),
        "{got:?}"
    );
    refused(&b[6], "textDocument/declaration", "declarationProvider");
    cli_refuses(
        w,
        &["decl", &decl],
        "textDocument/declaration",
        "declarationProvider",
    );
}

/// SQL through sql-language-server: sqlint's diagnostics (none on the clean query), the quick
/// fix that uppercases a keyword; no definitions, and the rename it declares it does not have.
#[test]
fn sql_through_sql_language_server_and_its_linter() {
    let ws = fixture("sql");
    let w = ws.as_path();
    let (report, broken) = ("queries/report.sql", "queries/broken.sql");
    let select = format!("{broken}@L1:select");
    let lines = vec![
        with("diag", serde_json::json!({"targets": [report, broken]})),
        format!(
            r#"{{"cmd":"code-actions","selector":"{select}","args":{{"apply":"0","dry-run":true}}}}"#
        ),
        at("def", &sel(w, report, "FROM", "FROM")),
        rename(&sel(w, report, "orders AS o", "o"), "ord"),
    ];
    let b = session(w, &lines);
    assert!(b.iter().all(|x| server(x) == "sql-language-server"));
    let d = facts(&b[0], "sql diag")["diagnostics"].as_array().unwrap();
    assert!(
        d.iter().all(|d| d["path"] == broken),
        "the clean query: none"
    );
    let messages: Vec<&str> = d.iter().map(|d| d["message"].as_str().unwrap()).collect();
    for m in [
        "reserved word must be uppercase",
        "Columns must go on a new line.",
    ] {
        assert!(messages.contains(&m), "{m} in {messages:?}");
    }
    let diff = b[1]["edits"]["diff"].as_str().unwrap_or_default();
    assert!(
        diff.contains("+SELECT id, total from orders where total > 10;"),
        "{diff}"
    );
    assert!(
        read(w, broken).starts_with("select"),
        "a preview writes nothing"
    );
    refused(&b[2], "textDocument/definition", "definitionProvider");
    // It declares renames, and answers that it has no handler for them.
    assert_eq!(
        b[3]["error"]["code"], "E/UNSUPPORTED_CAP",
        "{}",
        b[3]["error"]
    );
    let msg = b[3]["error"]["message"].as_str().unwrap_or_default();
    assert!(
        msg.contains("Unhandled method textDocument/rename"),
        "{msg}"
    );
    cli_refuses(
        w,
        &["refs", &sel(w, report, "FROM", "FROM")],
        "textDocument/references",
        "referencesProvider",
    );
}

/// CMake through cmake-language-server: the documentation of CMake's own commands (from the
/// `cmake` its venv brings), in CMakeLists.txt and in an included `.cmake` file; it offers no
/// definitions or outline.
#[test]
fn cmake_through_cmake_language_server() {
    let ws = fixture("cmake");
    let w = ws.as_path();
    let (lists, helpers) = ("CMakeLists.txt", "cmake/helpers.cmake");
    let call = sel(w, lists, "shapes_warnings(shapes)", "shapes_warnings");
    let lines = vec![
        at("hover", &sel(w, lists, "add_executable(", "add_executable")),
        at(
            "hover",
            &sel(
                w,
                helpers,
                "target_compile_options(",
                "target_compile_options",
            ),
        ),
        with("symbols", serde_json::json!({"file": lists})),
        at("def", &call),
    ];
    let b = session(w, &lines);
    assert!(b.iter().all(|x| server(x) == "cmake-language-server"));
    let hover = facts(&b[0], "cmake hover").to_string();
    assert!(hover.contains("add_executable(<name>"), "{hover}");
    let hover = facts(&b[1], "cmake hover helpers").to_string();
    assert!(hover.contains("target_compile_options(<target>"), "{hover}");
    refused(
        &b[2],
        "textDocument/documentSymbol",
        "documentSymbolProvider",
    );
    refused(&b[3], "textDocument/definition", "definitionProvider");
    cli_refuses(
        w,
        &["def", &call],
        "textDocument/definition",
        "definitionProvider",
    );
}

/// Fortran through fortls: a module function defined, referenced and renamed across files,
/// its hover and outline, a variable declared twice; no document highlights, no code actions.
#[test]
fn fortran_through_fortls_across_files() {
    let ws = fixture("fortran");
    let w = ws.as_path();
    let (shapes, main) = ("src/shapes.f90", "src/main.f90");
    let decl = sel(w, shapes, "function area(", "area");
    let lines = vec![
        at("def", &sel(w, main, "total = area(", "area")),
        at("refs", &decl),
        rename(&decl, "surface"),
        at("hover", &sel(w, main, "total = area(", "area")),
        with("symbols", serde_json::json!({"file": shapes})),
        with("diag", serde_json::json!({"targets": ["src/broken.f90"]})),
        at("highlight", &decl),
        at("code-actions", &decl),
    ];
    let b = session(w, &lines);
    assert!(b.iter().all(|x| server(x) == "fortls"));
    let decl_at = spot(w, shapes, "function area(", "area");
    assert_eq!(
        sorted(&facts(&b[0], "fortran def")["definitions"]),
        std::slice::from_ref(&decl_at)
    );
    let mut want = vec![
        decl_at,
        spot(w, shapes, "end function area", "area"),
        spot(w, main, "use shapes, only: area", "area"),
        spot(w, main, "total = area(", "area"),
        spot(w, main, "total + area(", "area"),
    ];
    want.sort();
    assert_eq!(sorted(&facts(&b[1], "fortran refs")["references"]), want);
    let diff = b[2]["edits"]["diff"].as_str().unwrap_or_default();
    for l in [
        "+  function surface(w, h) result(a)",
        "+  end function surface",
        "+  use shapes, only: surface",
        "+  total = total + surface(1.0, 1.0)",
    ] {
        assert!(diff.contains(l), "{l} in {diff}");
    }
    let hover = facts(&b[3], "fortran hover").to_string();
    assert!(hover.contains("FUNCTION area(w, h) RESULT(a)"), "{hover}");
    let names = facts(&b[4], "fortran symbols").to_string();
    for n in ["\"shapes\"", "\"area\""] {
        assert!(names.contains(n), "{n} in {names}");
    }
    let twice = line_with(w, "src/broken.f90", "real :: count") as u64 - 1;
    assert_eq!(diag_lines(&b[5]), [(twice, "error".to_string())]);
    let msg = b[5]["facts"]["diagnostics"][0]["message"].to_string();
    assert!(msg.contains("declared twice"), "{msg}");
    refused(
        &b[6],
        "textDocument/documentHighlight",
        "documentHighlightProvider",
    );
    // fortls declares no codeActionProvider: asked anyway, it would say "no actions".
    refused(&b[7], "textDocument/codeAction", "codeActionProvider");
    cli_refuses(
        w,
        &["highlight", &decl],
        "textDocument/documentHighlight",
        "documentHighlightProvider",
    );
}

/// TypeScript, Python, YAML, a Dockerfile and SQL in one repository (fixtures/polyglot): one
/// MCP session through the official client and one `lanser batch` answer each file from its
/// own server, byte for byte as the CLI does (tests/polyglot, pytest).
#[test]
fn a_polyglot_repository_through_mcp_and_batch_as_the_cli() {
    crate::support::pytest("tests/polyglot");
}

/// Vue single-file components through tsserver with `@vue/typescript-plugin` (built-in
/// `vue-typescript-plugin`): a script's import defined in a `.ts` module, its references
/// across the component and the module, hover, a rename (of the import, as an alias), the type checker's
/// diagnostic in a component; the template's expressions are not its to answer (and a `.ts`
/// file goes to the TypeScript server, which does not see the components).
#[test]
fn vue_components_through_tsserver_and_the_vue_plugin() {
    let ws = fixture("vue");
    let w = ws.as_path();
    let (app, math) = ("src/App.vue", "src/math.ts");
    let call = sel(w, app, "const total = double(", "double");
    let lines = vec![
        at("def", &call),
        at("refs", &call),
        at("hover", &call),
        rename(&call, "twice"),
        with("diag", serde_json::json!({"targets": ["src/Broken.vue"]})),
        at("def", &sel(w, app, "<p>{{ total }}", "total")),
    ];
    let b = session(w, &lines);
    let decl = spot(w, math, "export function double", "double");
    assert_eq!(
        sorted(&facts(&b[0], "vue def")["definitions"]),
        std::slice::from_ref(&decl)
    );
    let mut want = vec![
        decl,
        spot(w, app, "import { double }", "double"),
        spot(w, app, "const total = double(", "double"),
        spot(w, app, "const again = double(", "double"),
    ];
    want.sort();
    assert_eq!(sorted(&facts(&b[1], "vue refs")["references"]), want);
    let hover = facts(&b[2], "vue hover").to_string();
    assert!(hover.contains("double(n: number): number"), "{hover}");
    assert!(hover.contains("Twice `n`."), "{hover}");
    let diff = b[3]["edits"]["diff"].as_str().unwrap_or_default();
    // As in a `.ts` file, a rename at an imported name renames it locally, as an alias.
    for l in [
        "+import { double as twice } from './math';",
        "+const total = twice(2);",
        "+const again = twice(total);",
    ] {
        assert!(diff.contains(l), "{l} in {diff}");
    }
    let bad = line_with(w, "src/Broken.vue", "const count: number = 'one'") as u64 - 1;
    assert_eq!(diag_lines(&b[4]), [(bad, "error".to_string())]);
    assert_eq!(b[4]["facts"]["diagnostics"][0]["code"], "2322");
    // A template expression: tsserver has no answer there (Vue's own server would).
    assert_eq!(
        facts(&b[5], "vue template def")["definitions"],
        serde_json::json!([])
    );
}
