//! Issue 44's languages whose servers come as a native binary inside a registry package —
//! Protocol Buffers (buf, npm), LaTeX (badness), R (arity) and Julia (fatou), the last three
//! PyPI wheels — on their real, pinned servers (installed by `lanser setup --server NAME`, as
//! `.ci/run` does): one batch session per fixture, expectations computed from the fixture's
//! text.

use crate::language_jvm::starts;
use crate::language_more::{at, diag_lines, facts, rename, sel, server, session, with};
use crate::support::*;
use std::path::Path;

/// (path, 0-based line, column) of the first whole-word `ident` on the first line of `rel`
/// holding `needle`.
fn start(w: &Path, rel: &str, needle: &str, ident: &str) -> (String, u32, u32) {
    let line = line_with(w, rel, needle);
    let r = ident_range(w, rel, line, ident);
    (rel.to_string(), r[0], r[1])
}

/// (path, 0-based line, column) where `needle` begins on its first line in `rel`.
fn found(w: &Path, rel: &str, needle: &str) -> (String, u32, u32) {
    let line = line_with(w, rel, needle);
    let text = read(w, rel);
    let col = text
        .split('\n')
        .nth(line as usize - 1)
        .unwrap()
        .find(needle);
    (rel.to_string(), line - 1, col.unwrap() as u32)
}

/// Every answer came from `name` and was complete.
fn all_from(b: &[serde_json::Value], name: &str) {
    for x in b {
        assert_eq!(server(x), name, "{}", x["environment"]);
        assert_eq!(x["meta"]["complete"], true, "{x}");
    }
}

/// Protocol Buffers through buf (`buf lsp serve`, npm `@bufbuild/buf`): a message's
/// definition across an `import`, its references and a rename preview in both files, hover
/// (its leading comment), symbols and the compiler's diagnostics, in one batch.
#[test]
fn protobuf_through_buf() {
    let ws = fixture("proto");
    let w = ws.as_path();
    let (item, order, broken) = ("shop/item.proto", "shop/order.proto", "shop/broken.proto");
    let decl = sel(w, item, "message Item", "Item");
    let lines = vec![
        at("def", &sel(w, order, "repeated Item", "Item")),
        at("refs", &decl),
        at("hover", &sel(w, order, "Item gift", "Item")),
        with("diag", serde_json::json!({"targets": [broken]})),
        with("symbols", serde_json::json!({"file": order})),
        rename(&decl, "Product"),
    ];
    let b = session(w, &lines);
    all_from(&b, "buf-lsp");
    let declared = start(w, item, "message Item", "Item");
    assert_eq!(
        starts(&facts(&b[0], "proto def")["definitions"]),
        std::slice::from_ref(&declared)
    );
    // The declaration and every whole-word `Item` of order.proto.
    let text = read(w, order);
    let mut want = vec![declared];
    for (i, l) in text.split('\n').enumerate() {
        for (col, _) in l.match_indices("Item") {
            let after = l[col + 4..].chars().next();
            if !after.is_some_and(char::is_alphanumeric) {
                want.push((order.to_string(), i as u32, col as u32));
            }
        }
    }
    want.sort();
    assert_eq!(starts(&facts(&b[1], "proto refs")["references"]), want);
    // The comment above the message, as item.proto has it.
    let comment = read(w, item)
        .lines()
        .find_map(|l| l.strip_prefix("// "))
        .unwrap()
        .to_string();
    let hover = facts(&b[2], "proto hover").to_string();
    assert!(hover.contains(&comment), "{comment} in {hover}");
    // `Missing` names no message.
    let missing = line_with(w, broken, "Missing") as u64 - 1;
    assert_eq!(diag_lines(&b[3]), [(missing, "error".to_string())]);
    let diag = facts(&b[3], "proto diag").to_string();
    assert!(diag.contains("Missing"), "{diag}");
    let names = facts(&b[4], "proto symbols").to_string();
    for n in ["Order", "items", "gift", "Orders", "Place"] {
        assert!(names.contains(n), "{n} in {names}");
    }
    let preview = facts(&b[5], "proto rename");
    assert_eq!(preview["applied"], false);
    assert_eq!(preview["editCount"], want.len() as u64, "{preview}");
    assert_eq!(
        preview["files"],
        serde_json::json!([item, order]),
        "{preview}"
    );
}

/// LaTeX through badness: a label's definition from a `\ref` in an `\input` file, its
/// references and a rename preview across both files, hover, symbols (sections and labels)
/// and the environment errors of a broken file, in one batch.
#[test]
fn latex_through_badness() {
    let ws = fixture("latex");
    let w = ws.as_path();
    let (main, usage, broken) = ("main.tex", "usage.tex", "broken.tex");
    let use_site = sel(w, usage, "\\ref{intro}", "intro");
    let lines = vec![
        at("def", &use_site),
        at("refs", &use_site),
        at("hover", &use_site),
        with("diag", serde_json::json!({"targets": [broken]})),
        with("symbols", serde_json::json!({"file": main})),
        rename(&use_site, "overview"),
    ];
    let b = session(w, &lines);
    all_from(&b, "badness");
    // The `\label{intro}` command.
    let label = found(w, main, "\\label{intro}");
    assert_eq!(
        starts(&facts(&b[0], "latex def")["definitions"]),
        std::slice::from_ref(&label)
    );
    // The label and each `\ref{intro}`, in both files.
    let mut want = vec![label];
    for rel in [main, usage] {
        for (i, l) in read(w, rel).split('\n').enumerate() {
            if let Some(col) = l.find("\\ref{intro}") {
                want.push((rel.to_string(), i as u32, col as u32));
            }
        }
    }
    want.sort();
    assert_eq!(starts(&facts(&b[1], "latex refs")["references"]), want);
    // What the label names: the section it follows.
    let section = read(w, main)
        .lines()
        .find(|l| l.contains("\\label{intro}"))
        .and_then(|l| l.strip_prefix("\\section{"))
        .map(|l| l.split('}').next().unwrap().to_string())
        .unwrap();
    let hover = facts(&b[2], "latex hover").to_string();
    assert!(hover.contains(&section), "{section} in {hover}");
    // `\end{enumerate}` closes `itemize`: each `\begin` and `\end` line is in error.
    let text = read(w, broken);
    let mut want: Vec<(u64, String)> = text
        .split('\n')
        .enumerate()
        .filter(|(_, l)| l.contains("\\begin{") || l.contains("\\end{"))
        .map(|(i, _)| (i as u64, "error".to_string()))
        .collect();
    want.sort();
    let mut got = diag_lines(&b[3]);
    got.sort();
    assert_eq!(got, want);
    let diag = facts(&b[3], "latex diag").to_string();
    assert!(diag.contains("itemize"), "{diag}");
    // Every section and label of main.tex.
    let names = facts(&b[4], "latex symbols").to_string();
    for l in read(w, main).lines() {
        for key in ["\\section{", "\\label{"] {
            if let Some(rest) = l.find(key).map(|i| &l[i + key.len()..]) {
                let n = rest.split('}').next().unwrap();
                assert!(names.contains(&format!("\"{n}\"")), "{n} in {names}");
            }
        }
    }
    // The label's name in the label and in each reference.
    let preview = facts(&b[5], "latex rename");
    assert_eq!(preview["applied"], false);
    assert_eq!(
        preview["editCount"],
        want_refs(w, &[main, usage]),
        "{preview}"
    );
    assert_eq!(
        preview["files"],
        serde_json::json!([main, usage]),
        "{preview}"
    );
}

/// How many times `{intro}` is written in `files`.
fn want_refs(w: &Path, files: &[&str]) -> u64 {
    files
        .iter()
        .map(|f| read(w, f).matches("{intro}").count() as u64)
        .sum()
}

/// R through arity: a function's definition and references across the package's files, a
/// rename preview across them, symbols and a syntax error, in one batch; hover answers
/// nothing on the package's own code.
#[test]
fn r_through_arity() {
    let ws = fixture("r");
    let w = ws.as_path();
    let (stats, report, broken) = ("R/stats.R", "R/report.R", "R/broken.R");
    let decl = sel(w, stats, "positive_mean <-", "positive_mean");
    let lines = vec![
        at("def", &sel(w, report, "positive_mean(c", "positive_mean")),
        at("refs", &decl),
        with("diag", serde_json::json!({"targets": [broken]})),
        with("symbols", serde_json::json!({"file": stats})),
        rename(&decl, "pos_mean"),
    ];
    let b = session(w, &lines);
    all_from(&b, "arity");
    let declared = start(w, stats, "positive_mean <-", "positive_mean");
    assert_eq!(
        starts(&facts(&b[0], "r def")["definitions"]),
        std::slice::from_ref(&declared)
    );
    // The assignment and each call, in both files.
    let mut want = vec![declared];
    for rel in [stats, report] {
        for (i, l) in read(w, rel).split('\n').enumerate() {
            if let Some(col) = l.find("positive_mean(") {
                want.push((rel.to_string(), i as u32, col as u32));
            }
        }
    }
    want.sort();
    assert_eq!(starts(&facts(&b[1], "r refs")["references"]), want);
    // The unclosed parameter list: errors on its line only.
    let bad = line_with(w, broken, "function(") as u64 - 1;
    let got = diag_lines(&b[2]);
    assert!(!got.is_empty());
    assert!(
        got.iter().all(|d| *d == (bad, "error".to_string())),
        "{got:?}"
    );
    // Every function of stats.R: the names assigned `<- function`.
    let names = facts(&b[3], "r symbols").to_string();
    for l in read(w, stats).lines().filter(|l| l.contains("<- function")) {
        let n = l.split(" <-").next().unwrap();
        assert!(names.contains(&format!("\"{n}\"")), "{n} in {names}");
    }
    let preview = facts(&b[4], "r rename");
    assert_eq!(preview["applied"], false);
    assert_eq!(preview["editCount"], want.len() as u64, "{preview}");
    assert_eq!(
        preview["files"],
        serde_json::json!([report, stats]),
        "{preview}"
    );
}

/// Julia through fatou: a function's definition, references and rename preview, hover (a
/// struct's docstring), symbols and a syntax error, in one batch.
#[test]
fn julia_through_fatou() {
    let ws = fixture("julia");
    let w = ws.as_path();
    let (shapes, broken) = ("shapes.jl", "broken.jl");
    let call = sel(w, shapes, "string(area(r))", "area");
    let lines = vec![
        at("def", &call),
        at("refs", &call),
        at("hover", &sel(w, shapes, "area(r::Rect)", "Rect")),
        with("diag", serde_json::json!({"targets": [broken]})),
        with("symbols", serde_json::json!({"file": shapes})),
        rename(&call, "surface"),
    ];
    let b = session(w, &lines);
    all_from(&b, "fatou");
    let declared = start(w, shapes, "area(r::Rect) =", "area");
    assert_eq!(
        starts(&facts(&b[0], "julia def")["definitions"]),
        std::slice::from_ref(&declared)
    );
    let mut want = vec![declared, start(w, shapes, "string(area(r))", "area")];
    want.sort();
    assert_eq!(starts(&facts(&b[1], "julia refs")["references"]), want);
    // The docstring above `struct Rect`, as the file has it.
    let text = read(w, shapes);
    let doc = text.lines().next().unwrap().trim_matches('"');
    let hover = facts(&b[2], "julia hover").to_string();
    assert!(hover.contains("struct Rect"), "{hover}");
    assert!(hover.contains(doc), "{doc} in {hover}");
    // The `function` left without its `end`.
    let open = line_with(w, broken, "function half") as u64 - 1;
    assert_eq!(diag_lines(&b[3]), [(open, "error".to_string())]);
    let diag = facts(&b[3], "julia diag").to_string();
    assert!(diag.contains("end"), "{diag}");
    let names = facts(&b[4], "julia symbols").to_string();
    for n in ["\"Rect\"", "\"area\"", "\"describe\""] {
        assert!(names.contains(n), "{n} in {names}");
    }
    let preview = facts(&b[5], "julia rename");
    assert_eq!(preview["applied"], false);
    assert_eq!(preview["editCount"], 2, "{preview}");
    assert_eq!(preview["files"], serde_json::json!([shapes]), "{preview}");
}
