//! Every read-only command against real Pyright on the fixture projects: one case per
//! concern, each with its own server session reused across its requests (as batch and the
//! daemon reuse theirs). Each expectation is computed from the fixture text, not from lanser.

use crate::support::*;
use lanser::bundle::Bundle;
use lanser::commands::Execute;
use lanser::commands::Request;
use lanser::orchestrator::{Options, Orchestrator};
use lanser::text::Encoding;
use std::collections::BTreeSet;
use std::path::Path;

pub fn options(ws: &Path) -> Options {
    Options::for_workspace(ws)
}

/// A request from the words of a command line: the operation, its selector (if any), then
/// its other arguments.
pub fn request(op: &str, selector: Option<String>, rest: &[&str]) -> Request {
    let words = [op.to_string()]
        .into_iter()
        .chain(selector)
        .chain(rest.iter().map(|w| w.to_string()));
    Request::parse(words).unwrap()
}

async fn ask(o: &mut Orchestrator, op: &str, selector: Option<String>, rest: &[&str]) -> Bundle {
    let b = o.execute(&request(op, selector, rest)).await;
    assert!(
        b.error.is_none(),
        "{:?} failed: {:?}",
        b.request.cmd,
        b.error
    );
    crate::schemas::collect_bundle(&b);
    b
}

fn sel(rel: &str, line: u32, name: &str) -> Option<String> {
    Some(format!("{rel}@L{line}:{name}"))
}

/// (path, range) of the whole-word `ident` on the first line of `rel` containing `needle`.
fn at(ws: &Path, rel: &str, needle: &str, ident: &str) -> (String, [u32; 4]) {
    let line = line_with(ws, rel, needle);
    (rel.to_string(), ident_range(ws, rel, line, ident))
}

#[tokio::test]
async fn def_lands_on_the_definition_through_imports_crlf_and_overloads() {
    let ws = fixture("srcpkg");
    let ws = ws.as_path();
    let mut o = Orchestrator::new(options(ws)).unwrap();
    // def after CJK and astral-plane emoji on the same line, through a relative import.
    let line = line_with(ws, "src/shapes/intl.py", "total = area_of(");
    let b = ask(
        &mut o,
        "def",
        sel("src/shapes/intl.py", line, "area_of"),
        &[],
    )
    .await;
    assert_eq!(
        locs(&b.facts["definitions"]),
        vec![at(ws, "src/shapes/geometry.py", "def area_of(", "area_of")]
    );
    let resolved = b.resolution.as_ref().unwrap().resolved.range;
    assert_eq!(
        resolved,
        ident_range(ws, "src/shapes/intl.py", line, "area_of")
    );
    assert!(b.meta.complete);
    assert_eq!(
        b.environment.server.as_ref().unwrap().version.as_deref(),
        Some("1.1.407")
    );

    // def through the package re-export (`from shapes import Circle`).
    let line = line_with(ws, "tests/test_geometry.py", "circle = Circle(");
    let b = ask(
        &mut o,
        "def",
        sel("tests/test_geometry.py", line, "Circle"),
        &[],
    )
    .await;
    assert_eq!(
        locs(&b.facts["definitions"]),
        vec![at(ws, "src/shapes/geometry.py", "class Circle(", "Circle")]
    );

    // A CRLF file: lines and columns are unaffected by the \r.
    let line = line_with(ws, "src/shapes/crlf_mod.py", "CRLF_RESULT = crlf_helper(");
    let b = ask(
        &mut o,
        "def",
        sel("src/shapes/crlf_mod.py", line, "crlf_helper"),
        &[],
    )
    .await;
    assert_eq!(
        locs(&b.facts["definitions"]),
        vec![at(
            ws,
            "src/shapes/crlf_mod.py",
            "def crlf_helper(",
            "crlf_helper"
        )]
    );

    // Overloads: both signatures and the implementation, in file order.
    let line = line_with(ws, "tests/test_geometry.py", "scale(2, 3)");
    let b = ask(
        &mut o,
        "def",
        sel("tests/test_geometry.py", line, "scale"),
        &[],
    )
    .await;
    let g = "src/shapes/geometry.py";
    assert_eq!(
        locs(&b.facts["definitions"]),
        vec![
            at(ws, g, "def scale(value: int,", "scale"),
            at(ws, g, "def scale(value: float,", "scale"),
            at(ws, g, "def scale(value: int | float,", "scale"),
        ]
    );
    o.close().await;
}

#[tokio::test]
async fn type_def_is_the_class_and_hover_names_a_property() {
    let ws = fixture("srcpkg");
    let ws = ws.as_path();
    let mut o = Orchestrator::new(options(ws)).unwrap();
    let g = "src/shapes/geometry.py";
    // type-def of a variable is its class; hover on a property says so.
    let line = line_with(ws, "tests/test_geometry.py", "circle.diameter ==");
    let b = ask(
        &mut o,
        "type-def",
        sel("tests/test_geometry.py", line, "circle"),
        &[],
    )
    .await;
    assert_eq!(
        locs(&b.facts["typeDefinitions"]),
        vec![at(ws, g, "class Circle(", "Circle")]
    );
    let b = ask(
        &mut o,
        "hover",
        sel("tests/test_geometry.py", line, "diameter"),
        &[],
    )
    .await;
    let hover = b.facts["hover"]["value"].as_str().unwrap();
    assert!(hover.contains("(property) diameter: float"), "{hover}");
    o.close().await;
}

#[tokio::test]
async fn refs_cross_files_with_and_without_the_declaration() {
    let ws = fixture("srcpkg");
    let ws = ws.as_path();
    let mut o = Orchestrator::new(options(ws)).unwrap();

    // refs across files, including the import in __init__ and the __all__ entry.
    let u = "src/shapes/units.py";
    let line = line_with(ws, u, "def convert(");
    let want_uses = vec![
        at(
            ws,
            "src/shapes/__init__.py",
            "from .units import convert",
            "convert",
        ),
        at(ws, "src/shapes/__init__.py", "__all__", "convert"),
        at(
            ws,
            "src/shapes/broken.py",
            "from .units import convert",
            "convert",
        ),
        at(ws, "src/shapes/broken.py", "convert(\"x\"", "convert"),
        at(
            ws,
            "src/shapes/intl.py",
            "from .units import convert",
            "convert",
        ),
        at(ws, "src/shapes/intl.py", "result = convert(", "convert"),
    ];
    let decl = at(ws, u, "def convert(", "convert");
    let b = ask(&mut o, "refs", sel(u, line, "convert"), &[]).await;
    let mut want: Vec<_> = want_uses.iter().cloned().chain([decl]).collect();
    want.sort();
    assert_eq!(locs(&b.facts["references"]), want);
    assert_eq!(b.facts["count"], want.len());
    assert!(b.meta.complete, "refs must wait for the project to load");
    let b = ask(
        &mut o,
        "refs",
        sel(u, line, "convert"),
        &["--exclude-declaration"],
    )
    .await;
    assert_eq!(locs(&b.facts["references"]), want_uses);
    o.close().await;
}

#[tokio::test]
async fn outline_and_workspace_symbols_name_every_definition() {
    let ws = fixture("srcpkg");
    let ws = ws.as_path();
    let mut o = Orchestrator::new(options(ws)).unwrap();
    let g = "src/shapes/geometry.py";
    // The outline: qualified names, nested classes, properties, overloads, async defs.
    let b = ask(&mut o, "symbols", None, &[g]).await;
    let symbols = b.facts["symbols"].as_array().unwrap();
    let names: BTreeSet<&str> = symbols
        .iter()
        .map(|s| s["qualname"].as_str().unwrap())
        .collect();
    for want in [
        "DEFAULT_RADIUS",
        "Shape",
        "Shape.area",
        "Shape.name",
        "Circle",
        "Circle.area",
        "Circle.diameter",
        "Circle.unit",
        "Square",
        "Square.Corner",
        "area_of",
        "scale",
        "fetch_shape",
    ] {
        assert!(names.contains(want), "{want} missing from {names:?}");
    }
    let circle = symbols.iter().find(|s| s["qualname"] == "Circle").unwrap();
    assert_eq!(circle["kind"], "class");
    assert_eq!(
        circle["selector"],
        format!("{g}@L{}:C7", line_with(ws, g, "class Circle("))
    );

    // Workspace symbols find the class by name.
    let b = ask(&mut o, "symbols", None, &["--query", "Circle"]).await;
    let hits: Vec<_> = b.facts["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["name"] == "Circle" && s["kind"] == "class")
        .map(|s| (s["path"].as_str().unwrap().to_string(), s["range"].clone()))
        .collect();
    let (_, r) = at(ws, g, "class Circle(", "Circle");
    assert_eq!(hits, vec![(g.to_string(), serde_json::json!(r))]);
    o.close().await;
}

#[tokio::test]
async fn diagnostics_are_the_marked_errors_in_files_globs_and_workspace() {
    let ws = fixture("srcpkg");
    let ws = ws.as_path();
    let mut o = Orchestrator::new(options(ws)).unwrap();
    // Diagnostics: exactly the three marked errors, in one file and in the whole workspace.
    let broken = "src/shapes/broken.py";
    let text = read(ws, broken);
    let marked: Vec<u32> = text
        .split('\n')
        .enumerate()
        .filter(|(_, l)| l.contains("# expected error"))
        .map(|(i, _)| i as u32)
        .collect();
    assert_eq!(marked.len(), 3);
    for targets in [vec![broken.to_string()], vec![]] {
        let b = ask(
            &mut o,
            "diag",
            None,
            &targets.iter().map(String::as_str).collect::<Vec<_>>(),
        )
        .await;
        let diags = b.facts["diagnostics"].as_array().unwrap();
        let got: Vec<(String, u32)> = diags
            .iter()
            .map(|d| {
                (
                    d["path"].as_str().unwrap().to_string(),
                    d["range"][0].as_u64().unwrap() as u32,
                )
            })
            .collect();
        let want: Vec<(String, u32)> = marked.iter().map(|l| (broken.to_string(), *l)).collect();
        assert_eq!(got, want, "targets {targets:?}");
        let codes: BTreeSet<&str> = diags.iter().map(|d| d["code"].as_str().unwrap()).collect();
        assert_eq!(
            codes,
            BTreeSet::from([
                "reportArgumentType",
                "reportAttributeAccessIssue",
                "reportUndefinedVariable"
            ])
        );
        assert_eq!(b.facts["counts"]["error"], 3);
    }
    let b = ask(&mut o, "diag", None, &[]).await;
    let files: Vec<&str> = b.facts["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert_eq!(files.len(), 7, "{files:?}");
    let b = ask(&mut o, "diag", None, &["src/shapes/u*.py"]).await;
    assert_eq!(b.facts["files"], serde_json::json!(["src/shapes/units.py"]));
    assert_eq!(b.facts["counts"]["error"], 0);
    // A glob that only matches files already named still counts (regression: it was reported
    // as matching no Python file).
    let both = ask(
        &mut o,
        "diag",
        None,
        &[
            "src/shapes/units.py",
            "src/shapes/u*.py",
            "src/shapes/b*.py",
        ],
    )
    .await;
    assert_eq!(
        both.facts["files"],
        serde_json::json!(["src/shapes/broken.py", "src/shapes/units.py"])
    );
    o.close().await;
}

#[tokio::test]
async fn every_index_unit_resolves_alike_and_an_emoji_column_is_a_mismatch() {
    let ws = fixture("srcpkg");
    let ws = ws.as_path();
    let mut o = Orchestrator::new(options(ws)).unwrap();
    let g = "src/shapes/geometry.py";
    // The same identifier addressed in each --index-io unit resolves to the same place.
    let intl = "src/shapes/intl.py";
    let line = line_with(ws, intl, "total = area_of(");
    let text = read(ws, intl);
    let l = text.split('\n').nth(line as usize - 1).unwrap();
    let byte = l.find("area_of").unwrap();
    let cols = [
        (Encoding::Utf8, byte + 1),
        (Encoding::Utf16, l[..byte].encode_utf16().count() + 1),
        (Encoding::Codepoint, l[..byte].chars().count() + 1),
    ];
    let mut seen = Vec::new();
    for (enc, col) in cols {
        o.opts_mut().index_io = enc;
        let b = ask(&mut o, "def", Some(format!("{intl}@L{line}:C{col}")), &[]).await;
        seen.push((
            b.resolution.unwrap().resolved.range,
            locs(&b.facts["definitions"]),
        ));
        // The location's own selector is written in the requested unit.
        let again = b.facts["definitions"][0]["selector"]
            .as_str()
            .unwrap()
            .to_string();
        let def_line = line_with(ws, g, "def area_of(");
        let def_text = read(ws, g);
        let dl = def_text.split('\n').nth(def_line as usize - 1).unwrap();
        let db = dl.find("area_of").unwrap();
        let dcol = match enc {
            Encoding::Utf8 => db + 1,
            Encoding::Utf16 => dl[..db].encode_utf16().count() + 1,
            Encoding::Codepoint => dl[..db].chars().count() + 1,
        };
        assert_eq!(again, format!("{g}@L{def_line}:C{dcol}"));
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");
    o.opts_mut().index_io = Encoding::Codepoint;

    // --verbose adds the 1-based io range; a column inside an emoji is an indexing mismatch.
    o.opts_mut().verbose = true;
    let b = ask(&mut o, "def", sel(intl, line, "area_of"), &[]).await;
    let io: Vec<u64> = b.facts["definitions"][0]["ioRange"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    let def_line = line_with(ws, g, "def area_of(") as u64;
    assert_eq!(io, vec![def_line, 5, def_line, 12]);
    o.opts_mut().verbose = false;
    o.opts_mut().index_io = Encoding::Utf16;
    let emoji = l.find('😀').unwrap();
    let inside = l[..emoji].encode_utf16().count() + 2;
    let b = o
        .execute(&request(
            "def",
            Some(format!("{intl}@L{line}:C{inside}")),
            &[],
        ))
        .await;
    assert_eq!(
        b.error.as_ref().unwrap().code.symbol(),
        "E/INDEXING_MISMATCH"
    );
    o.close().await;
}

#[tokio::test]
async fn flat_project_facts_match_the_fixture() {
    let ws = fixture("flat");
    let ws = ws.as_path();
    let mut o = Orchestrator::new(options(ws)).unwrap();
    let line = line_with(ws, "main.py", "user.display_name()");
    let b = ask(&mut o, "def", sel("main.py", line, "display_name"), &[]).await;
    let decl = at(ws, "models.py", "def display_name(", "display_name");
    assert_eq!(locs(&b.facts["definitions"]), vec![decl.clone()]);

    let b = ask(&mut o, "refs", sel("main.py", line, "display_name"), &[]).await;
    let text = read(ws, "main.py");
    let mut want: Vec<_> = text
        .split('\n')
        .enumerate()
        .filter(|(_, l)| l.contains("display_name()"))
        .map(|(i, _)| {
            (
                "main.py".to_string(),
                ident_range(ws, "main.py", i as u32 + 1, "display_name"),
            )
        })
        .chain([decl])
        .collect();
    want.sort();
    assert_eq!(want.len(), 3);
    assert_eq!(locs(&b.facts["references"]), want);

    let line = line_with(ws, "main.py", "register(");
    let b = ask(&mut o, "def", sel("main.py", line, "register"), &[]).await;
    let got = locs(&b.facts["definitions"]);
    // `register` is imported into main.py; the definition lives in service.py.
    assert_eq!(got, vec![at(ws, "service.py", "def register(", "register")]);
    o.close().await;
}

/// One session, a file edited on disk between two requests: the second answer describes the
/// new text (didChange with the next version), not the text the server saw first.
#[tokio::test]
async fn an_edit_between_requests_is_seen() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("flat");
    copy_tree(&fixture("flat"), &ws);
    let mut o = Orchestrator::new(options(&ws)).unwrap();
    let line = line_with(&ws, "main.py", "user.display_name()");
    let refs = |b: &Bundle| -> Vec<u32> {
        locs(&b.facts["references"])
            .into_iter()
            .filter(|(p, _)| p == "main.py")
            .map(|(_, r)| r[0])
            .collect()
    };
    let before = ask(&mut o, "refs", sel("main.py", line, "display_name"), &[]).await;
    let text = read(&ws, "main.py");
    std::fs::write(ws.join("main.py"), format!("# one\n# two\n{text}")).unwrap();
    let after = ask(
        &mut o,
        "refs",
        sel("main.py", line + 2, "display_name"),
        &[],
    )
    .await;
    let shifted: Vec<u32> = refs(&before).iter().map(|l| l + 2).collect();
    assert_eq!(refs(&after), shifted);
    assert_ne!(
        before.resolution.unwrap().resolved.doc_version,
        after.resolution.unwrap().resolved.doc_version
    );
    o.close().await;
}
