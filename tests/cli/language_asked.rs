//! More of issue 44's languages on their real, pinned servers (installed by `lanser setup
//! --server NAME`, as `.ci/run` does): one batch session per fixture, expectations computed
//! from the fixture's text.

use crate::language_jvm::starts;
use crate::language_more::{at, diag_lines, facts, refused, rename, sel, server, session, with};
use crate::support::*;

/// (path, 0-based line, column) of the first whole-word `ident` on the first line of `rel`
/// holding `needle`.
fn start(w: &std::path::Path, rel: &str, needle: &str, ident: &str) -> (String, u32, u32) {
    let line = line_with(w, rel, needle);
    let r = ident_range(w, rel, line, ident);
    (rel.to_string(), r[0], r[1])
}

/// GraphQL through graphql-language-service-cli, its project the fixture's `.graphqlrc.yml`:
/// a definition from a query into the schema, hover, symbols and validation, in one batch.
#[test]
fn graphql_through_graphql_language_service() {
    let ws = fixture("graphql");
    let w = ws.as_path();
    let (schema, queries, bad) = ("schema.graphql", "queries.graphql", "bad.graphql");
    let lines = vec![
        at("def", &sel(w, queries, "author {", "author")),
        at("hover", &sel(w, queries, "books {", "books")),
        with("diag", serde_json::json!({"targets": [bad]})),
        with("symbols", serde_json::json!({"file": schema})),
    ];
    let b = session(w, &lines);
    assert!(b
        .iter()
        .all(|x| server(x) == "graphql-language-service-cli"));
    // `author` of a Book: the field of `type Book`, the first `author:` of the schema.
    assert_eq!(
        starts(&facts(&b[0], "graphql def")["definitions"]),
        [start(w, schema, "author: Author!", "author")]
    );
    // Query's `books` field, its type as the schema writes it.
    let text = read(w, schema);
    let query = text.find("type Query").unwrap();
    let field = text[query..]
        .lines()
        .find(|l| l.trim_start().starts_with("books:"))
        .unwrap()
        .trim();
    let hover = facts(&b[1], "graphql hover").to_string();
    assert!(hover.contains(&format!("Query.{field}")), "{hover}");
    // `pages` is no field of Book.
    let pages = line_with(w, bad, "pages") as u64 - 1;
    assert_eq!(diag_lines(&b[2]), [(pages, "error".to_string())]);
    let diag = facts(&b[2], "graphql diag").to_string();
    assert!(diag.contains("pages"), "{diag}");
    let names = facts(&b[3], "graphql symbols").to_string();
    for n in ["\"Book\"", "\"Author\"", "\"Query\""] {
        assert!(names.contains(n), "{n} in {names}");
    }
}

/// Prisma through @prisma/language-server: definitions, references, hover, the schema
/// engine's validation, symbols and a rename preview, in one batch.
#[test]
fn prisma_through_prisma_language_server() {
    let ws = fixture("prisma");
    let w = ws.as_path();
    let (schema, broken) = ("schema.prisma", "broken.prisma");
    let decl = sel(w, schema, "model Author", "Author");
    let lines = vec![
        at("def", &sel(w, schema, "author   Author", "Author")),
        at("refs", &decl),
        at("hover", &sel(w, schema, "author   Author", "Author")),
        with("diag", serde_json::json!({"targets": [broken]})),
        with("symbols", serde_json::json!({"file": schema})),
        rename(&decl, "Writer"),
    ];
    let b = session(w, &lines);
    assert!(b.iter().all(|x| server(x) == "@prisma/language-server"));
    let declared = start(w, schema, "model Author", "Author");
    assert_eq!(
        starts(&facts(&b[0], "prisma def")["definitions"]),
        std::slice::from_ref(&declared)
    );
    let mut want = vec![declared, start(w, schema, "author   Author", "Author")];
    want.sort();
    assert_eq!(starts(&facts(&b[1], "prisma refs")["references"]), want);
    let hover = facts(&b[2], "prisma hover").to_string();
    assert!(hover.contains("model Author"), "{hover}");
    // `Volume` names no model.
    let volume = line_with(w, broken, "Volume[]") as u64 - 1;
    assert_eq!(diag_lines(&b[3]), [(volume, "error".to_string())]);
    let diag = facts(&b[3], "prisma diag").to_string();
    assert!(diag.contains("\\\"Volume\\\""), "{diag}");
    let names = facts(&b[4], "prisma symbols").to_string();
    for n in ["\"Author\"", "\"Book\""] {
        assert!(names.contains(n), "{n} in {names}");
    }
    // The declaration, its one use, and an `@@map("Author")` keeping the table's name.
    let preview = facts(&b[5], "prisma rename");
    assert_eq!(preview["applied"], false);
    assert_eq!(preview["editCount"], 3, "{preview}");
    assert_eq!(preview["files"], serde_json::json!([schema]), "{preview}");
}

/// Astro through @astrojs/language-server (with its pinned TypeScript, no `astro` package in
/// the project): a component's frontmatter answers definitions into a `.ts` module,
/// references into the template, hover, TypeScript's diagnostics, symbols and a rename
/// preview, in one batch.
#[test]
fn astro_through_astro_language_server() {
    let ws = fixture("astro");
    let w = ws.as_path();
    let (card, greet) = ("src/Card.astro", "src/greet.ts");
    let title = sel(w, card, "const title", "title");
    let lines = vec![
        at("def", &sel(w, card, "= greet(", "greet")),
        at("refs", &title),
        at("hover", &title),
        with("diag", serde_json::json!({"targets": [card]})),
        with("symbols", serde_json::json!({"file": card})),
        rename(&title, "heading"),
    ];
    let b = session(w, &lines);
    assert!(b.iter().all(|x| server(x) == "@astrojs/language-server"));
    for x in &b {
        assert_eq!(x["meta"]["complete"], true, "{x}");
    }
    // The declaration of `greet`, from the start of its `export function` line.
    let decl = line_with(w, greet, "export function greet(") - 1;
    assert_eq!(
        starts(&facts(&b[0], "astro def")["definitions"]),
        [(greet.to_string(), decl, 0)]
    );
    // `title` declared in the frontmatter and used in the template.
    let mut want = vec![
        start(w, card, "const title", "title"),
        start(w, card, "<h1>{title}", "title"),
    ];
    want.sort();
    assert_eq!(starts(&facts(&b[1], "astro refs")["references"]), want);
    let hover = facts(&b[2], "astro hover").to_string();
    assert!(hover.contains("const title: string"), "{hover}");
    // A string where `count: number` is declared: TypeScript's one error.
    let count = line_with(w, card, "const count: number") as u64 - 1;
    let errors: Vec<_> = diag_lines(&b[3])
        .into_iter()
        .filter(|(_, s)| s == "error")
        .collect();
    assert_eq!(errors, [(count, "error".to_string())]);
    let diag = facts(&b[3], "astro diag").to_string();
    assert!(diag.contains("not assignable to type 'number'"), "{diag}");
    let names = facts(&b[4], "astro symbols").to_string();
    for n in ["\"title\"", "\"count\""] {
        assert!(names.contains(n), "{n} in {names}");
    }
    let preview = facts(&b[5], "astro rename");
    assert_eq!(preview["editCount"], 2, "{preview}");
    assert_eq!(preview["files"], serde_json::json!([card]), "{preview}");
}

/// TOML through tombi (`--offline`): symbols (the keys), hover (a key's path and value type;
/// in `Cargo.toml`, from the Cargo schema it carries) and its syntax diagnostics, in one
/// batch.
#[test]
fn toml_through_tombi() {
    let ws = fixture("toml");
    let w = ws.as_path();
    let (config, broken, cargo) = ("config.toml", "broken.toml", "Cargo.toml");
    let lines = vec![
        with("symbols", serde_json::json!({"file": config})),
        at("hover", &sel(w, config, "port =", "port")),
        at("hover", &sel(w, cargo, "serde =", "serde")),
        with("diag", serde_json::json!({"targets": [broken]})),
    ];
    let b = session(w, &lines);
    assert!(b.iter().all(|x| server(x) == "Tombi LSP"));
    // Every key of the file, dotted under its table.
    let text = read(w, config);
    let names = facts(&b[0], "toml symbols").to_string();
    let mut table = String::new();
    for l in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(t) = l.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            table = format!("{t}.");
            assert!(names.contains(&format!("\"{t}\"")), "{t} in {names}");
        } else {
            let key = l.split('=').next().unwrap().trim();
            let full = format!("\"{table}{key}\"");
            let bare = format!("\"{key}\"");
            assert!(
                names.contains(&full) || names.contains(&bare),
                "{key} in {names}"
            );
        }
    }
    let hover = facts(&b[1], "toml hover").to_string();
    assert!(hover.contains("server.port"), "{hover}");
    let hover = facts(&b[2], "toml hover (Cargo)").to_string();
    assert!(hover.contains("dependencies.serde"), "{hover}");
    // `port = = 8080`: one error, on that line.
    let bad = line_with(w, broken, "= =") as u64 - 1;
    assert_eq!(diag_lines(&b[3]), [(bad, "error".to_string())]);
}

/// Just through just-lsp (a `justfile`, routed by its name): definitions, references and a
/// rename of a recipe, hover of a variable, symbols and diagnostics, in one batch.
#[test]
fn justfiles_through_just_lsp() {
    let ws = fixture("just");
    let w = ws.as_path();
    let (just, bad) = ("justfile", "bad.just");
    let decl = sel(w, just, "lint:", "lint");
    let lines = vec![
        at("def", &sel(w, just, "build: lint", "lint")),
        at("refs", &decl),
        at("hover", &sel(w, just, "{{greeting}}", "greeting")),
        with("diag", serde_json::json!({"targets": [bad]})),
        with("symbols", serde_json::json!({"file": just})),
        rename(&decl, "check"),
    ];
    let b = session(w, &lines);
    assert!(
        b.iter().all(|x| server(x) == "just-lsp"),
        "{}",
        b[0]["environment"]
    );
    let declared = start(w, just, "lint:", "lint");
    assert_eq!(
        starts(&facts(&b[0], "just def")["definitions"]),
        std::slice::from_ref(&declared)
    );
    let mut want = vec![declared, start(w, just, "build: lint", "lint")];
    want.sort();
    assert_eq!(starts(&facts(&b[1], "just refs")["references"]), want);
    // The variable's assignment, as the file has it.
    let text = read(w, just);
    let assignment = text.lines().find(|l| l.starts_with("greeting :=")).unwrap();
    let hover = facts(&b[2], "just hover").to_string();
    assert!(hover.contains(&assignment.replace('"', "\\\"")), "{hover}");
    // `{{missing}}` and the dependency `nothere`: one error each, on their lines.
    let mut want = vec![
        (
            line_with(w, bad, "{{missing}}") as u64 - 1,
            "error".to_string(),
        ),
        (line_with(w, bad, "nothere") as u64 - 1, "error".to_string()),
    ];
    want.sort();
    let mut got = diag_lines(&b[3]);
    got.sort();
    assert_eq!(got, want);
    // Every recipe and the variable: the names before `:` or `:=` at the start of a line.
    let names = facts(&b[4], "just symbols").to_string();
    for l in text.lines().filter(|l| l.starts_with(char::is_alphabetic)) {
        let n = l.split(':').next().unwrap().trim();
        assert!(names.contains(&format!("\"{n}\"")), "{n} in {names}");
    }
    let preview = facts(&b[5], "just rename");
    assert_eq!(preview["editCount"], 2, "{preview}");
    assert_eq!(preview["files"], serde_json::json!([just]), "{preview}");
}

/// TypeSpec through tsp-server (@typespec/compiler): definitions, references and a rename
/// across an `import`, hover (with the doc comment), symbols and the compiler's
/// diagnostics, in one batch.
#[test]
fn typespec_through_tsp_server() {
    let ws = fixture("typespec");
    let w = ws.as_path();
    let (main, pets, bad) = ("main.tsp", "pets.tsp", "bad.tsp");
    let decl = sel(w, pets, "model Pet", "Pet");
    let lines = vec![
        at("def", &sel(w, main, "pets: Pet[]", "Pet")),
        at("refs", &decl),
        at("hover", &sel(w, main, "pets: Pet[]", "Pet")),
        with("diag", serde_json::json!({"targets": [bad]})),
        with("symbols", serde_json::json!({"file": pets})),
        rename(&decl, "Animal"),
    ];
    let b = session(w, &lines);
    assert!(b.iter().all(|x| server(x) == "TypeSpec Language Server"));
    // The declaration, from its doc comment on.
    let doc = line_with(w, pets, "/**") - 1;
    assert_eq!(
        starts(&facts(&b[0], "tsp def")["definitions"]),
        [(pets.to_string(), doc, 0)]
    );
    let mut want = vec![
        start(w, pets, "model Pet", "Pet"),
        start(w, main, "pets: Pet[]", "Pet"),
    ];
    want.sort();
    assert_eq!(starts(&facts(&b[1], "tsp refs")["references"]), want);
    // The doc comment's text, as the file has it.
    let text = read(w, pets);
    let comment = text.lines().next().unwrap();
    let comment = comment
        .trim_start_matches("/**")
        .trim_end_matches("*/")
        .trim();
    let hover = facts(&b[2], "tsp hover").to_string();
    assert!(hover.contains("model Pet"), "{hover}");
    assert!(hover.contains(comment), "{comment} in {hover}");
    // `Parrot` names no model.
    let parrot = line_with(w, bad, "Parrot") as u64 - 1;
    assert_eq!(diag_lines(&b[3]), [(parrot, "error".to_string())]);
    let names = facts(&b[4], "tsp symbols").to_string();
    for n in ["Pet", "name", "age"] {
        assert!(names.contains(n), "{n} in {names}");
    }
    let preview = facts(&b[5], "tsp rename");
    assert_eq!(preview["editCount"], 2, "{preview}");
    assert_eq!(
        preview["files"],
        serde_json::json!([main, pets]),
        "{preview}"
    );
}

/// MDX through @mdx-js/language-server (with its pinned TypeScript): definitions and
/// references of an exported function, hover, symbols, a rename preview and TypeScript's
/// diagnostics of an expression, in one batch.
#[test]
fn mdx_through_mdx_language_server() {
    let ws = fixture("mdx");
    let w = ws.as_path();
    let (post, broken) = ("post.mdx", "broken.mdx");
    let decl = sel(w, post, "export function twice(", "twice");
    let year = sel(w, post, "export const year", "year");
    let lines = vec![
        at("def", &sel(w, post, "{twice(year)}", "twice")),
        at("refs", &decl),
        at("hover", &sel(w, post, "Notes from {year}", "year")),
        with("diag", serde_json::json!({"targets": [broken]})),
        with("symbols", serde_json::json!({"file": post})),
        rename(&year, "when"),
    ];
    let b = session(w, &lines);
    assert!(
        b.iter().all(|x| server(x) == "@mdx-js/language-server"),
        "{}",
        b[0]["environment"]
    );
    // The function's declaration, from the start of its `export` line.
    let declared = line_with(w, post, "export function twice(") - 1;
    assert_eq!(
        starts(&facts(&b[0], "mdx def")["definitions"]),
        [(post.to_string(), declared, 0)]
    );
    let mut want = vec![
        start(w, post, "export function twice(", "twice"),
        start(w, post, "{twice(year)}", "twice"),
    ];
    want.sort();
    assert_eq!(starts(&facts(&b[1], "mdx refs")["references"]), want);
    // `year`'s literal type: the number it is set to.
    let text = read(w, post);
    let value = text.lines().next().unwrap().rsplit("= ").next().unwrap();
    let hover = facts(&b[2], "mdx hover").to_string();
    assert!(hover.contains(&format!("const year: {value}")), "{hover}");
    let missing = line_with(w, broken, "{missingName}") as u64 - 1;
    assert_eq!(diag_lines(&b[3]), [(missing, "error".to_string())]);
    let diag = facts(&b[3], "mdx diag").to_string();
    assert!(diag.contains("missingName"), "{diag}");
    let names = facts(&b[4], "mdx symbols").to_string();
    for n in ["\"year\"", "\"twice\""] {
        assert!(names.contains(n), "{n} in {names}");
    }
    // `year`'s declaration and each expression that reads it (`{year}`, `twice(year)`), not
    // the prose's word.
    let uses = 1 + text.matches("{year}").count() + text.matches("(year)").count();
    let preview = facts(&b[5], "mdx rename");
    assert_eq!(preview["editCount"], uses as u64, "{preview}");
    assert_eq!(preview["files"], serde_json::json!([post]), "{preview}");
}

/// Gherkin through cucumber-language-server: a step's definition in the JavaScript step
/// definitions, symbols (the feature and its scenarios), the undefined step of another
/// feature, and references and hover refused (not declared), in one batch.
#[test]
fn gherkin_through_cucumber_language_server() {
    let ws = fixture("gherkin");
    let w = ws.as_path();
    let (cart, checkout) = ("features/cart.feature", "features/checkout.feature");
    let steps = "features/step_definitions/cart_steps.js";
    let step = sel(w, cart, "When I add 3 apples", "add");
    let lines = vec![
        at("def", &step),
        with("diag", serde_json::json!({"targets": [checkout]})),
        with("symbols", serde_json::json!({"file": cart})),
        at("refs", &step),
        at("hover", &step),
    ];
    let b = session(w, &lines);
    assert!(b.iter().all(|x| server(x) == "Cucumber Language Server"));
    // The expression `'I add {int} apples'` of the `When(…)` that matches the step.
    let line = line_with(w, steps, "'I add {int} apples'");
    let col = read(w, steps)
        .split('\n')
        .nth(line as usize - 1)
        .unwrap()
        .find('\'');
    assert_eq!(
        starts(&facts(&b[0], "gherkin def")["definitions"]),
        [(steps.to_string(), line - 1, col.unwrap() as u32)]
    );
    // checkout.feature's one step with no definition: a warning on its line.
    let text = read(w, checkout);
    let steps_text = read(w, steps);
    let undefined: Vec<(u64, String)> = text
        .split('\n')
        .enumerate()
        .filter(|(_, l)| {
            let l = l.trim();
            let words = ["Given ", "When ", "Then "];
            words.iter().any(|k| l.starts_with(k))
                && !steps_text.contains(&format!("'{}'", l.split_once(' ').unwrap().1))
        })
        .map(|(i, _)| (i as u64, "warning".to_string()))
        .collect();
    assert_eq!(undefined.len(), 1, "{undefined:?}");
    assert_eq!(diag_lines(&b[1]), undefined);
    let diag = facts(&b[1], "gherkin diag").to_string();
    assert!(diag.contains("Undefined step"), "{diag}");
    // The feature and each scenario, named as the file writes them.
    let names = facts(&b[2], "gherkin symbols").to_string();
    for l in read(w, cart).lines().map(str::trim) {
        if l.starts_with("Feature:") || l.starts_with("Scenario:") {
            assert!(names.contains(&format!("\"{l}\"")), "{l} in {names}");
        }
    }
    refused(&b[3], "textDocument/references", "referencesProvider");
    refused(&b[4], "textDocument/hover", "hoverProvider");
}

/// HTML+ERB through herb-language-server: the Herb parser's and linter's diagnostics, a
/// linter fix previewed as a code action, and definitions and symbols refused (not
/// declared), in one batch.
#[test]
fn erb_through_herb_language_server() {
    let ws = fixture("erb");
    let w = ws.as_path();
    let (index, broken) = (
        "app/views/items/index.html.erb",
        "app/views/items/broken.html.erb",
    );
    let upper = sel(w, index, "<LI>", "LI");
    let lines = vec![
        with("diag", serde_json::json!({"targets": [index, broken]})),
        format!(
            r#"{{"cmd":"code-actions","selector":"{upper}","args":{{"apply":"0","dry-run":true}}}}"#
        ),
        at("def", &sel(w, index, "item.name", "item")),
        with("symbols", serde_json::json!({"file": index})),
    ];
    let b = session(w, &lines);
    assert!(b.iter().all(|x| server(x) == "Herb Language Server"));
    let d = facts(&b[0], "erb diag")["diagnostics"].as_array().unwrap();
    let has = |path: &str, line: u32, code: &str| {
        d.iter()
            .any(|x| x["path"] == path && x["range"][0] == line - 1 && x["code"] == code)
    };
    // The `<div>` never closed (the parser), the `<img>` without `alt` and the upper-case
    // tag (the linter).
    let div = line_with(w, broken, "<div>");
    assert!(has(broken, div, "MISSING_CLOSING_TAG_ERROR"), "{d:?}");
    assert!(
        has(index, line_with(w, index, "<img"), "html-img-require-alt"),
        "{d:?}"
    );
    let li = line_with(w, index, "<LI>");
    assert!(has(index, li, "html-tag-name-lowercase"), "{d:?}");
    // The first fix lowers the tag names of that line, and nothing is written.
    let line = read(w, index)
        .lines()
        .nth(li as usize - 1)
        .unwrap()
        .to_string();
    let diff = b[1]["edits"]["diff"].as_str().unwrap_or_default();
    assert!(diff.contains(&format!("-{line}")), "{diff}");
    assert!(
        diff.contains(&format!("+{}", line.replace("LI>", "li>"))),
        "{diff}"
    );
    assert!(read(w, index).contains("<LI>"));
    refused(&b[2], "textDocument/definition", "definitionProvider");
    refused(
        &b[3],
        "textDocument/documentSymbol",
        "documentSymbolProvider",
    );
}
