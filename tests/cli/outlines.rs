//! `sym://` and `ast://[file=…]` selectors in every language with an outline: resolved by the
//! parser alone (`locate`, no server) on the fixtures of each language, offered as durable
//! selectors, relocated after an edit, refused for a file type with no outline; and answered
//! by the file's own server when a command needs one. Expectations come from fixture text.

use crate::support::*;
use serde_json::Value;
use std::path::Path;

fn locate(ws: &Path, sel: &str) -> Value {
    let w = ws.to_string_lossy().into_owned();
    let o = run(&["locate", sel, "--workspace", &w, "--json"]);
    assert!(o.status.success(), "locate {sel}: {}", stderr(&o));
    bundle(&o)
}

/// The selector's target text and its 1-based first line.
fn target(b: &Value) -> (String, u64) {
    let t = &b["facts"]["target"];
    let line = t["range"][0].as_u64().unwrap() + 1;
    (t["text"].as_str().unwrap().to_string(), line)
}

#[test]
fn sym_and_ast_selectors_name_definitions_in_every_language() {
    let cases = [
        (
            "ts",
            "sym://src/store.ts#Store.add:sig",
            "add(item: Item): number",
        ),
        ("ts", "sym://src/store.ts#Item.price", "price"),
        (
            "ts",
            "sym://src/store.ts#Store.add:doc",
            "/** Put an item on the shelf. */",
        ),
        (
            "ts",
            "ast://[file=src/store.ts]/[class=Store]/[def=total]/call_expression[1]",
            "this.items.reduce((sum, item) => sum + item.price, 0)",
        ),
        (
            "go",
            "sym://store/store.go#Store.Add:sig",
            "func (s *Store) Add(it Item) int",
        ),
        (
            "go",
            "sym://store/store.go#Store.Add:doc",
            "// Add puts an item on the shelf and returns how many there are.",
        ),
        ("go", "sym://store/store.go#Item.Price", "Price"),
        (
            "go",
            "ast://[file=store/store.go]/[class=Store]/[def=Add]/call_expression[1]",
            "append(s.items, it)",
        ),
        (
            "rust",
            "sym://src/store.rs#Store.total:sig",
            "pub fn total(&self) -> u32",
        ),
        (
            "rust",
            "sym://src/store.rs#Store:doc",
            "/// Items on a shelf.\n",
        ),
        (
            "rust",
            "ast://[file=src/store.rs]/[class=Store]/[def=add]/call_expression[1]",
            "self.items.push(item)",
        ),
        (
            "c",
            "sym://src/store.c#store_total:sig",
            "int store_total(const struct store *s)",
        ),
        ("c", "sym://src/store.h#item.price", "price"),
        ("sh", "sym://lib.sh#greet:doc", "# Say hello to someone."),
        ("sh", "sym://lib.sh#greet:body", "{\n  echo \"hello $1\"\n}"),
    ];
    for (lang, sel, want) in cases {
        let ws = fixture(lang);
        let b = locate(&ws, sel);
        let (text, line) = target(&b);
        assert_eq!(text, want, "{sel}");
        let file = b["facts"]["target"]["path"].as_str().unwrap().to_string();
        let first = want.lines().next().unwrap();
        assert_eq!(line, line_with(&ws, &file, first) as u64, "{sel}");
        assert_eq!(b["resolution"]["original"], sel);
        assert!(
            b["resolution"]["symbolId"]
                .as_str()
                .is_some_and(|s| s.starts_with("sym:")),
            "{sel}: {}",
            b["resolution"]
        );
    }
}

#[test]
fn a_cursor_on_a_definition_offers_a_sym_selector_that_survives_an_edit() {
    let dir = tempfile::tempdir().unwrap();
    let go = dir.path().join("go");
    copy_tree(&fixture("go"), &go);
    let at = line_with(&go, "store/store.go", "func (s *Store) Total()");
    let b = locate(&go, &format!("store/store.go@L{at}:Total"));
    let durable = b["facts"]["selectors"]["symbol"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        durable.starts_with("sym://store/store.go#Store.Total?docVersion=sha256:"),
        "{durable}"
    );
    assert_eq!(b["facts"]["symbol"]["qualname"], "Store.Total");
    let before = b["facts"]["target"]["range"].clone();
    assert_eq!(locate(&go, &durable)["facts"]["target"]["range"], before);
    // Lines above it change: the pinned selector follows the method to its new line.
    let path = go.join("store/store.go");
    let text = std::fs::read_to_string(&path).unwrap();
    let edited = text.replacen(
        "// Total sums",
        "// Count is how many items there are.\nfunc (s *Store) Count() int {\n\treturn len(s.items)\n}\n\n// Total sums",
        1,
    );
    std::fs::write(&path, edited).unwrap();
    let moved = line_with(&go, "store/store.go", "func (s *Store) Total()");
    assert_eq!(moved, at + 5);
    // Traced and replayed by the harness: the trace carries the snapshot it maps through.
    let b = locate(&go, &durable);
    let (text, line) = target(&b);
    assert_eq!((text.as_str(), line), ("Total", moved as u64));
    assert_eq!(b["resolution"]["disambiguation"][0]["match"], "exact-map");
    assert_eq!(b["resolution"]["confidence"], 1.0);
}

#[test]
fn a_file_without_an_outline_or_a_missing_name_is_a_one_line_error() {
    let dir = tempfile::tempdir().unwrap();
    let ts = dir.path().join("ts");
    copy_tree(&fixture("ts"), &ts);
    std::fs::write(ts.join("notes.txt"), "add\n").unwrap();
    let w = ts.to_string_lossy().into_owned();
    let cases = [
        (
            "sym://notes.txt#add",
            2,
            "lanser has no outline for the type of notes.txt",
        ),
        (
            "sym://src/store.ts#add",
            3,
            "src/store.ts does not define add (did you mean Store.add?)",
        ),
        ("sym://src/gone.ts#add", 3, "gone.ts"),
        (
            "ast://[file=src/store.ts]/[def=Store]",
            3,
            "src/store.ts does not define Store",
        ),
    ];
    for (sel, code, msg) in cases {
        let o = run(&["locate", sel, "--workspace", &w]);
        assert_eq!(o.status.code(), Some(code), "{sel}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.trim().lines().count(), 1, "{sel}: {err}");
        assert!(err.contains(msg), "{sel}: {err}");
    }
}

/// `refs` of a `sym://` selector in `ws`: the server that answered and the files, sorted.
fn refs_of(ws: &Path, sel: &str) -> (String, Vec<String>) {
    let w = ws.to_string_lossy().into_owned();
    let o = run(&["refs", sel, "--workspace", &w, "--json"]);
    assert!(o.status.success(), "{sel}: {}", stderr(&o));
    let b = bundle(&o);
    let mut files: Vec<String> = locs(&b["facts"]["references"])
        .into_iter()
        .map(|l| l.0)
        .collect();
    files.sort();
    let server = b["environment"]["server"]["name"].as_str().unwrap();
    (server.to_string(), files)
}

#[test]
fn a_sym_selector_goes_to_the_server_of_its_file() {
    let (server, files) = refs_of(&fixture("ts"), "sym://src/store.ts#Store.add");
    assert_eq!(server, "typescript-language-server");
    assert_eq!(files, ["src/app.ts", "src/broken.ts", "src/store.ts"]);
    // (clangd finds references in other files only with its background index: hover here.)
    let w = fixture("c").to_string_lossy().into_owned();
    let sel = "sym://src/store.c#store_total";
    let o = run(&["hover", sel, "--workspace", &w, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let b = bundle(&o);
    assert_eq!(b["environment"]["server"]["name"], "clangd");
    let text = b["facts"].to_string();
    assert!(
        text.contains("int store_total(const struct store *s)"),
        "{text}"
    );
    if crate::languages::have_go() {
        let (server, files) = refs_of(&fixture("go"), "sym://store/store.go#Store.Add");
        assert_eq!(server, "gopls");
        assert_eq!(files, ["broken/broken.go", "main.go", "store/store.go"]);
    }
    if crate::languages::have_rust_analyzer() {
        // On a copy: rust-analyzer writes Cargo.lock beside the manifest.
        let dir = tempfile::tempdir().unwrap();
        let rs = dir.path().join("rust");
        copy_tree(&fixture("rust"), &rs);
        let (server, files) = refs_of(&rs, "sym://src/store.rs#Store.add");
        assert_eq!(server, "rust-analyzer");
        assert_eq!(files, ["src/broken.rs", "src/lib.rs", "src/store.rs"]);
    }
}
