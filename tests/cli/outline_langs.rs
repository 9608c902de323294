//! Outlines of PHP, JSON, YAML, TOML, HTML, CSS, Dockerfile and CMake (`fixtures/outlines`):
//! `sym://` and
//! `ast://[file=…]` selectors resolved by the parser alone (`locate`, no server), the durable
//! selector a cursor on a name is offered, followed after an edit moves the name, and a file
//! type with no outline refused in one line. Expected spans are searched for in the fixture
//! text.

use crate::support::*;
use serde_json::Value;
use std::path::Path;

fn locate(ws: &Path, sel: &str) -> Value {
    let w = ws.to_string_lossy().into_owned();
    let o = run(&["locate", sel, "--workspace", &w, "--json"]);
    assert!(o.status.success(), "locate {sel}: {}", stderr(&o));
    bundle(&o)
}

/// The 0-based range of the only occurrence of `needle` in `rel` (ASCII fixtures).
fn span_of(ws: &Path, rel: &str, needle: &str) -> [u64; 4] {
    let text = read(ws, rel);
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not in {rel}"));
    assert_eq!(text.matches(needle).count(), 1, "{needle:?} twice in {rel}");
    let pos = |off: usize| {
        let before = &text[..off];
        let line = before.matches('\n').count() as u64;
        let col = (off - before.rfind('\n').map_or(0, |i| i + 1)) as u64;
        (line, col)
    };
    let (a, b) = (pos(at), pos(at + needle.len()));
    [a.0, a.1, b.0, b.1]
}

/// The range of `name` on the line that holds `line` (a name that occurs elsewhere too).
fn name_on(ws: &Path, rel: &str, line: &str, name: &str) -> [u64; 4] {
    ident_range(ws, rel, line_with(ws, rel, line), name).map(u64::from)
}

fn range(b: &Value) -> [u64; 4] {
    let r = &b["facts"]["target"]["range"];
    [0, 1, 2, 3].map(|i| r[i].as_u64().unwrap())
}

const PHP: &str = "src/Billing/Invoice.php";
const JSON: &str = "config/app.json";
const YAML: &str = "deploy/compose.yaml";
const TOML: &str = "config/settings.toml";
const HTML: &str = "site/index.html";
const CSS: &str = "site/site.css";
const DOCKER: &str = "build/Dockerfile";
const CMAKE: &str = "CMakeLists.txt";

#[test]
fn sym_and_ast_selectors_name_php_members_keys_ids_and_css_rules() {
    let ws = fixture("outlines");
    // (selector, the text it names, where: the text itself when it is unique in the file,
    // else the line that holds it).
    let sig = "public function addLine(int $amount): int";
    let cases: [(String, &str, [u64; 4]); 19] = [
        (
            format!("sym://{PHP}#App.Billing.Invoice.addLine:sig"),
            sig,
            span_of(&ws, PHP, sig),
        ),
        (
            format!("sym://{PHP}#App.Billing.Invoice.addLine:doc"),
            "/** Add a line and return the new total. */",
            span_of(&ws, PHP, "/** Add a line and return the new total. */"),
        ),
        (
            format!("sym://{PHP}#App.Billing.Invoice.lines"),
            "lines",
            name_on(&ws, PHP, "private array $lines", "lines"),
        ),
        (
            format!("sym://{PHP}#App.Billing.Invoice.CURRENCY:body"),
            "'EUR'",
            span_of(&ws, PHP, "'EUR'"),
        ),
        (
            format!("sym://{PHP}#App.Billing.MAX_TOTAL"),
            "MAX_TOTAL",
            span_of(&ws, PHP, "MAX_TOTAL"),
        ),
        (
            format!("sym://{PHP}#App.Billing.Status.Paid"),
            "Paid",
            span_of(&ws, PHP, "Paid"),
        ),
        (
            format!("ast://[file={PHP}]/[class=App]/[class=Billing]/[def=format_total]"),
            "format_total",
            span_of(&ws, PHP, "format_total"),
        ),
        (
            format!("sym://{JSON}#server.tls.cert-file:body"),
            "\"certs/dev.pem\"",
            span_of(&ws, JSON, "\"certs/dev.pem\""),
        ),
        (
            format!("sym://{JSON}#server.port"),
            "port",
            name_on(&ws, JSON, "\"port\"", "port"),
        ),
        (
            format!("sym://{YAML}#services.api.environment.max-workers:body"),
            "4",
            name_on(&ws, YAML, "max-workers: 4", "4"),
        ),
        (
            format!("ast://[file={YAML}]/[class=services]/[class=web]/[assign=image]"),
            "image",
            name_on(&ws, YAML, "image: nginx", "image"),
        ),
        (
            format!("sym://{TOML}#server.tls:sig"),
            "[server.tls]",
            span_of(&ws, TOML, "[server.tls]"),
        ),
        (
            format!("sym://{TOML}#owner.name"),
            "name",
            name_on(&ws, TOML, "owner.name", "name"),
        ),
        (
            format!("sym://{HTML}#signup:sig"),
            "<form id=\"signup\" action=\"/signup\">",
            span_of(&ws, HTML, "<form id=\"signup\" action=\"/signup\">"),
        ),
        (
            format!("sym://{CSS}#btn-primary:doc"),
            "/* The primary button. */",
            span_of(&ws, CSS, "/* The primary button. */"),
        ),
        (
            format!("ast://[file={CSS}]/[class=sidebar]"),
            "sidebar",
            span_of(&ws, CSS, "sidebar"),
        ),
        (
            format!("sym://{DOCKER}#build-env.VERSION:body"),
            "1.0",
            span_of(&ws, DOCKER, "1.0"),
        ),
        (
            format!("ast://[file={DOCKER}]/[class=runtime]/[assign=APP_HOME]"),
            "APP_HOME",
            name_on(&ws, DOCKER, "ENV APP_HOME=/srv", "APP_HOME"),
        ),
        (
            format!("sym://{CMAKE}#demo_add_library:sig"),
            "function(demo_add_library name)",
            span_of(&ws, CMAKE, "function(demo_add_library name)"),
        ),
    ];
    for (sel, text, want) in &cases {
        let b = locate(&ws, sel);
        assert_eq!(b["facts"]["target"]["text"], *text, "{sel}");
        assert_eq!(range(&b), *want, "{sel}");
        assert_eq!(b["facts"]["provenance"], "parser", "{sel}");
        assert_eq!(b["resolution"]["original"], sel.as_str());
        assert!(
            b["resolution"]["symbolId"]
                .as_str()
                .is_some_and(|s| s.starts_with("sym:")),
            "{sel}: {}",
            b["resolution"]
        );
    }
}

/// A cursor on a name in each language: the `sym://` selector it is offered (pinned to the
/// file's version), and that selector after lines are inserted above the name.
#[test]
fn a_cursor_on_a_name_offers_a_sym_selector_that_follows_an_edit() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("outlines");
    copy_tree(&fixture("outlines"), &ws);
    // (file, a line holding the name, the name, its qualified name, lines to insert at the
    // top of the file after its first line, so the name moves down).
    let cases = [
        (
            PHP,
            "public function total(): int",
            "total",
            "App.Billing.Invoice.total",
            "\n// moved\n// down\n",
        ),
        (
            JSON,
            "\"cert-file\"",
            "cert-file",
            "server.tls.cert-file",
            "\n  \"added\": 1,\n",
        ),
        (
            YAML,
            "LOG_LEVEL: debug",
            "LOG_LEVEL",
            "services.api.environment.LOG_LEVEL",
            "\n# moved\n# down\n",
        ),
        (TOML, "port = 8080", "port", "server.port", "\n# moved\n"),
        (
            HTML,
            "<input id=\"email\"",
            "email",
            "email",
            "\n<!-- moved -->\n",
        ),
        (
            CSS,
            ".btn-primary {",
            "btn-primary",
            "btn-primary",
            "\n/* moved */\n/* down */\n",
        ),
        (
            DOCKER,
            "ARG VERSION=1.0",
            "VERSION",
            "build-env.VERSION",
            "\nARG EXTRA=1\n",
        ),
        (
            CMAKE,
            "macro(demo_option",
            "demo_option",
            "demo_option",
            "\n# moved\n",
        ),
    ];
    for (rel, line, name, qual, insert) in cases {
        let at = name_on(&ws, rel, line, name);
        // The line:name form where the name is an identifier, else line and column.
        let cursor = if name.contains('-') {
            format!("{rel}@L{}:C{}", at[0] + 1, at[1] + 1)
        } else {
            format!("{rel}@L{}:{name}", at[0] + 1)
        };
        let b = locate(&ws, &cursor);
        assert_eq!(b["facts"]["symbol"]["qualname"], qual, "{cursor}");
        let durable = b["facts"]["selectors"]["symbol"]
            .as_str()
            .unwrap_or_else(|| panic!("{cursor}: no durable selector: {}", b["facts"]))
            .to_string();
        assert!(
            durable.starts_with(&format!("sym://{rel}#{qual}?docVersion=sha256:")),
            "{durable}"
        );
        assert_eq!(range(&locate(&ws, &durable)), at, "{durable}");
        // Lines above it change: the pinned and the unpinned selector both find it again.
        let text = read(&ws, rel);
        let first = text.find('\n').unwrap();
        let edited = format!("{}{}{}", &text[..first], insert, &text[first + 1..]);
        std::fs::write(ws.join(rel), edited).unwrap();
        let moved = name_on(&ws, rel, line, name);
        assert_eq!(moved[0], at[0] + insert.matches('\n').count() as u64 - 1);
        let b = locate(&ws, &durable);
        assert_eq!(range(&b), moved, "{durable} after the edit");
        assert_eq!(b["resolution"]["disambiguation"][0]["match"], "exact-map");
        let plain = format!("sym://{rel}#{qual}");
        assert_eq!(range(&locate(&ws, &plain)), moved, "{plain}");
    }
}

#[test]
fn a_file_type_without_an_outline_or_a_missing_key_is_a_one_line_error() {
    let ws = fixture("outlines");
    let w = ws.to_string_lossy().into_owned();
    let web = fixture("web").to_string_lossy().into_owned();
    let cases = [
        (
            &web,
            "sym://styles/theme.less#btn".to_string(),
            2,
            "lanser has no outline for the type of styles/theme.less (it reads ",
        ),
        (
            &web,
            "ast://[file=styles/theme.scss]/[class=btn]".to_string(),
            2,
            "lanser has no outline for the type of styles/theme.scss",
        ),
        (
            &w,
            format!("sym://{JSON}#server.tls.key-file"),
            3,
            "config/app.json does not define server.tls.key-file",
        ),
        (
            &w,
            format!("sym://{JSON}#features.search"),
            3,
            "does not define features.search",
        ),
    ];
    for (ws, sel, code, msg) in cases {
        let o = run(&["locate", &sel, "--workspace", ws]);
        assert_eq!(o.status.code(), Some(code), "{sel}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.trim().lines().count(), 1, "{sel}: {err}");
        assert!(err.contains(msg), "{sel}: {err}");
    }
}
