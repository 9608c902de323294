//! Turning LSP payloads into facts: workspace-relative locations with server ranges, a
//! `selector` for each, the `ioRange` in verbose mode, and every list sorted by
//! (path, sL, sC, eL, eC) then name/message, duplicates removed (docs/bundle.md#ordering,
//! docs/coordinates.md).
//!
//! The operations' typed answers (`lsp_types`) become facts directly ([`typed`]); the JSON
//! readings here serve what has no typed form: a raw `request`'s verbatim answer and pulled
//! diagnostics. Both go through the same builders (a location list, an outline's symbol, a
//! search's symbol), so a shape is normalized the same whichever way it came.

pub mod typed;

use super::facts::{
    Diagnostic, FoundSymbol, Hover, MarkupKind, OutlineSymbol, Placed, Severity, Symbol,
};
use crate::selector::encode_path;
use crate::selector::resolve::{DocCache, Document};
use crate::text::Encoding;
use crate::workspace::{uri_to_path, Place, Workspace};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One location: server coordinates plus a selector ready to feed back.
#[derive(
    Debug,
    Clone,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[schemars(rename = "Location")]
pub struct Loc {
    pub path: String,
    /// 0-based `[startLine, startCol, endLine, endCol]` in the negotiated positionEncoding.
    pub range: [u32; 4],
    pub selector: String,
    /// 1-based range in the `--index-io` unit (`--verbose` only).
    #[serde(rename = "ioRange", default, skip_serializing_if = "Option::is_none")]
    pub io_range: Option<[u32; 4]>,
}

/// Converts server payloads for one request.
pub struct Normalizer<'a> {
    ws: &'a Workspace,
    server: Encoding,
    io: Encoding,
    verbose: bool,
    docs: HashMap<PathBuf, Option<Arc<Document>>>,
    /// Documents kept across requests, when the caller has them.
    cache: Option<&'a DocCache>,
}

fn range_of(v: &Value) -> [u32; 4] {
    let n = |p: &str| v.pointer(p).and_then(Value::as_u64).unwrap_or(0) as u32;
    [
        n("/start/line"),
        n("/start/character"),
        n("/end/line"),
        n("/end/character"),
    ]
}

/// The protocol's SymbolKind number by name (`unknown` out of range).
pub(crate) fn symbol_kind(k: u64) -> &'static str {
    const KINDS: [&str; 26] = [
        "file",
        "module",
        "namespace",
        "package",
        "class",
        "method",
        "property",
        "field",
        "constructor",
        "enum",
        "interface",
        "function",
        "variable",
        "constant",
        "string",
        "number",
        "boolean",
        "array",
        "object",
        "key",
        "null",
        "enumMember",
        "struct",
        "event",
        "operator",
        "typeParameter",
    ];
    k.checked_sub(1)
        .and_then(|i| KINDS.get(i as usize))
        .copied()
        .unwrap_or("unknown")
}

fn severity(s: Option<u64>) -> Severity {
    match s {
        Some(2) => Severity::Warning,
        Some(3) => Severity::Information,
        Some(4) => Severity::Hint,
        _ => Severity::Error,
    }
}

impl<'a> Normalizer<'a> {
    pub fn new(ws: &'a Workspace, server: Encoding, io: Encoding, verbose: bool) -> Self {
        Normalizer {
            ws,
            server,
            io,
            verbose,
            docs: HashMap::new(),
            cache: None,
        }
    }

    /// Read files through `cache` (documents kept across requests).
    pub fn with_cache(mut self, cache: &'a DocCache) -> Self {
        self.cache = Some(cache);
        self
    }

    /// Remember a document already read, so it is not read again.
    pub fn add_document(&mut self, doc: &Document) {
        self.docs
            .insert(doc.abs.clone(), Some(Arc::new(doc.clone())));
    }

    fn doc(&mut self, abs: &Path, place: &Place) -> Option<&Document> {
        let cache = self.cache;
        self.docs
            .entry(abs.to_path_buf())
            .or_insert_with(|| {
                let rel = match place {
                    Place::Workspace(r) => r.clone(),
                    Place::External(e) => e.clone(),
                };
                match cache {
                    Some(c) => c.load(abs.to_path_buf(), rel).ok(),
                    None => Document::load(abs.to_path_buf(), rel).ok().map(Arc::new),
                }
            })
            .as_deref()
    }

    /// The io-unit (1-based) range of a server range in the file at `abs`, when readable.
    fn io_range(&mut self, abs: &Path, place: &Place, r: [u32; 4]) -> Option<[u32; 4]> {
        let (server, io) = (self.server, self.io);
        let doc = self.doc(abs, place)?;
        let conv = |l: u32, c: u32| {
            let off = doc
                .index
                .offset_clamped(&doc.text, l as usize, c as usize, server);
            let (l, c) = doc.position(off, io);
            (l as u32 + 1, c as u32 + 1)
        };
        let (sl, sc) = conv(r[0], r[1]);
        let (el, ec) = conv(r[2], r[3]);
        Some([sl, sc, el, ec])
    }

    /// A location from a `file://` URI and a server range.
    pub fn location(&mut self, uri: &str, range: [u32; 4]) -> Loc {
        let place = self.ws.place_of_uri(uri);
        let io = uri_to_path(uri).and_then(|abs| self.io_range(&abs, &place, range));
        let (line, col) = match io {
            Some(r) => (r[0], r[1]),
            None => (range[0] + 1, range[1] + 1),
        };
        let path = place.display().to_string();
        Loc {
            selector: format!("{}@L{line}:C{col}", encode_path(&path)),
            path,
            range,
            io_range: if self.verbose { io } else { None },
        }
    }

    /// Locations of `(uri, server range)` places, sorted and deduplicated.
    fn located<'u>(&mut self, places: impl IntoIterator<Item = (&'u str, [u32; 4])>) -> Vec<Loc> {
        let mut out: Vec<Loc> = places
            .into_iter()
            .map(|(uri, range)| self.location(uri, range))
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// `Location | Location[] | LocationLink[] | null` (as JSON) → sorted, deduplicated
    /// locations.
    pub fn locations(&mut self, v: &Value) -> Vec<Loc> {
        let items: Vec<&Value> = match v {
            Value::Array(a) => a.iter().collect(),
            Value::Object(_) => vec![v],
            _ => vec![],
        };
        let places: Vec<(&str, [u32; 4])> = items
            .into_iter()
            .filter_map(|item| {
                let (uri, range) = match item.get("targetUri") {
                    Some(u) => (
                        u.as_str()?,
                        item.get("targetSelectionRange")
                            .or_else(|| item.get("targetRange"))?,
                    ),
                    None => (item.get("uri")?.as_str()?, item.get("range")?),
                };
                Some((uri, range_of(range)))
            })
            .collect();
        self.located(places)
    }

    /// Hover (as JSON) → `{kind, value, range}`, or none for null.
    pub fn hover(&self, v: &Value) -> Option<Hover> {
        if v.is_null() {
            return None;
        }
        let contents = v.get("contents").cloned().unwrap_or(Value::Null);
        let (kind, value) = match &contents {
            Value::String(s) => (MarkupKind::Plaintext, s.clone()),
            Value::Object(o) if o.contains_key("kind") => (
                if o.get("kind").and_then(Value::as_str) == Some("markdown") {
                    MarkupKind::Markdown
                } else {
                    MarkupKind::Plaintext
                },
                o.get("value")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            ),
            Value::Object(o) => (
                MarkupKind::Markdown,
                marked_string(o.get("language"), o.get("value")),
            ),
            Value::Array(parts) => (
                MarkupKind::Markdown,
                parts
                    .iter()
                    .map(|p| match p {
                        Value::String(s) => s.clone(),
                        _ => marked_string(p.get("language"), p.get("value")),
                    })
                    .collect::<Vec<_>>()
                    .join("\n\n"),
            ),
            _ => (MarkupKind::Plaintext, String::new()),
        };
        Some(Hover {
            kind,
            value,
            range: v.get("range").map(range_of),
        })
    }

    /// A document outline (as JSON), flattened in document order with qualified names.
    pub fn document_symbols(&mut self, uri: &str, v: &Value) -> Vec<Symbol> {
        let mut out = Vec::new();
        if let Value::Array(items) = v {
            for item in items {
                if item.get("location").is_some() {
                    out.push(Symbol::Found(self.symbol_information(item)));
                } else {
                    self.document_symbol(uri, item, None, &mut out);
                }
            }
        }
        sort_by_location(&mut out);
        out
    }

    fn document_symbol(
        &mut self,
        uri: &str,
        s: &Value,
        parent: Option<&str>,
        out: &mut Vec<Symbol>,
    ) {
        let symbol = self.outline_symbol(
            uri,
            Outlined {
                name: s.get("name").and_then(Value::as_str).unwrap_or_default(),
                kind: s.get("kind").and_then(Value::as_u64).unwrap_or(0),
                detail: s.get("detail").and_then(Value::as_str),
                range: range_of(s.get("range").unwrap_or(&Value::Null)),
                selection: range_of(s.get("selectionRange").unwrap_or(&Value::Null)),
            },
            parent,
        );
        let qualname = symbol.qualname.clone();
        out.push(Symbol::Outline(symbol));
        if let Some(Value::Array(children)) = s.get("children") {
            for c in children {
                self.document_symbol(uri, c, Some(&qualname), out);
            }
        }
    }

    /// An outline's symbol from its parts, named under `parent`'s qualname.
    fn outline_symbol(&mut self, uri: &str, s: Outlined, parent: Option<&str>) -> OutlineSymbol {
        let loc = self.location(uri, s.selection);
        OutlineSymbol {
            name: s.name.to_string(),
            qualname: match parent {
                Some(p) => format!("{p}.{}", s.name),
                None => s.name.to_string(),
            },
            kind: symbol_kind(s.kind).to_string(),
            detail: s.detail.map(str::to_string),
            path: loc.path,
            range: s.range,
            selection_range: s.selection,
            selector: loc.selector,
        }
    }

    fn symbol_information(&mut self, s: &Value) -> FoundSymbol {
        self.found_symbol(Found {
            name: s.get("name").and_then(Value::as_str).unwrap_or_default(),
            kind: s.get("kind").and_then(Value::as_u64).unwrap_or(0),
            container: s.get("containerName").and_then(Value::as_str),
            uri: s
                .pointer("/location/uri")
                .and_then(Value::as_str)
                .unwrap_or_default(),
            range: range_of(s.pointer("/location/range").unwrap_or(&Value::Null)),
        })
    }

    /// A search's symbol from its parts (an empty container is none).
    fn found_symbol(&mut self, s: Found) -> FoundSymbol {
        let loc = self.location(s.uri, s.range);
        FoundSymbol {
            name: s.name.to_string(),
            kind: symbol_kind(s.kind).to_string(),
            container: s.container.filter(|c| !c.is_empty()).map(str::to_string),
            path: loc.path,
            range: s.range,
            selector: loc.selector,
        }
    }

    /// `workspace/symbol` answers (as JSON), sorted.
    pub fn workspace_symbols(&mut self, v: &Value) -> Vec<Symbol> {
        let out: Vec<Symbol> = match v {
            Value::Array(items) => items
                .iter()
                .map(|s| Symbol::Found(self.symbol_information(s)))
                .collect(),
            _ => vec![],
        };
        searched(out)
    }

    /// Diagnostics of one file, sorted.
    /// A diagnostic's message with this machine's paths taken out, so a copy of the workspace
    /// elsewhere gives the same bytes: workspace files relative to the root (as Pyright names
    /// them in import cycles and internal errors), and a server's own install from
    /// `node_modules/` on. The JavaScript stack frames of an internal error go too: where a
    /// stack overflows varies from run to run.
    fn message(&self, text: &str) -> String {
        if !text.contains('/') {
            return text.to_string();
        }
        let mut out = match text.contains("\n    at ") {
            true => text
                .split('\n')
                .filter(|l| !l.starts_with("    at "))
                .collect::<Vec<_>>()
                .join("\n"),
            false => text.to_string(),
        };
        let root = self.ws.root.to_string_lossy();
        if !root.is_empty() && out.contains(root.as_ref()) {
            out = out
                .replace(&format!("{root}/"), "")
                .replace(root.as_ref(), ".");
        }
        strip_install_prefixes(&out)
    }

    pub fn diagnostics(&mut self, uri: &str, items: &[Value]) -> Vec<Diagnostic> {
        let mut out: Vec<Diagnostic> = items
            .iter()
            .map(|d| {
                let range = range_of(d.get("range").unwrap_or(&Value::Null));
                let loc = self.location(uri, range);
                let code = match d.get("code") {
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(Value::Number(n)) => Some(n.to_string()),
                    _ => None,
                };
                Diagnostic {
                    path: loc.path,
                    range,
                    severity: severity(d.get("severity").and_then(Value::as_u64)),
                    code,
                    source: d.get("source").and_then(Value::as_str).map(str::to_string),
                    message: self
                        .message(d.get("message").and_then(Value::as_str).unwrap_or_default()),
                    selector: loc.selector,
                    io_range: loc.io_range,
                }
            })
            .collect();
        sort_by_location(&mut out);
        out.dedup();
        out
    }
}

/// What an outline's symbol is made of, however the server's answer came.
struct Outlined<'s> {
    name: &'s str,
    /// The protocol's SymbolKind number.
    kind: u64,
    detail: Option<&'s str>,
    range: [u32; 4],
    selection: [u32; 4],
}

/// What a search's symbol is made of, however the server's answer came.
struct Found<'s> {
    name: &'s str,
    kind: u64,
    container: Option<&'s str>,
    uri: &'s str,
    range: [u32; 4],
}

/// A search's symbols, sorted and deduplicated.
fn searched(mut out: Vec<Symbol>) -> Vec<Symbol> {
    sort_by_location(&mut out);
    out.dedup();
    out
}

/// `… (/any/where/node_modules/pyright/x.js:1:2)` → `… (node_modules/pyright/x.js:1:2)`.
fn strip_install_prefixes(text: &str) -> String {
    const MARK: &str = "/node_modules/";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        let head = &rest[..at];
        let start = head
            .rfind(|c: char| c.is_whitespace() || matches!(c, '(' | '"' | '\'' | '`'))
            .map_or(0, |i| i + 1);
        match head[start..].starts_with('/') {
            // An absolute path: keep it from `node_modules/` on.
            true => {
                out.push_str(&head[..start]);
                out.push_str(&MARK[1..]);
            }
            false => {
                out.push_str(head);
                out.push_str(MARK);
            }
        }
        rest = &rest[at + MARK.len()..];
    }
    out.push_str(rest);
    out
}

fn marked_string(language: Option<&Value>, value: Option<&Value>) -> String {
    let value = value.and_then(Value::as_str).unwrap_or_default();
    match language.and_then(Value::as_str) {
        Some(lang) => format!("```{lang}\n{value}\n```"),
        None => value.to_string(),
    }
}

/// Sort facts by (path, range, name or message, then the whole fact as JCS text for a total
/// order).
pub fn sort_by_location<T: Placed>(items: &mut [T]) {
    items.sort_by_cached_key(|v| {
        (
            v.path().to_string(),
            v.range(),
            v.name().to_string(),
            serde_jcs::to_string(v).unwrap_or_default(),
        )
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn install_prefixes_are_stripped_from_messages() {
        let t = "RangeError: x\n    at k.f (/root/.cache/lanser/pyright/1.1.407/node_modules/pyright/dist/p.js:3:1)\n    at g (/opt/node_modules/a/node_modules/b.js:1:1)";
        assert_eq!(
            strip_install_prefixes(t),
            "RangeError: x\n    at k.f (node_modules/pyright/dist/p.js:3:1)\n    at g (node_modules/a/node_modules/b.js:1:1)"
        );
        assert_eq!(strip_install_prefixes("no paths here"), "no paths here");
    }

    #[test]
    fn locations_are_sorted_and_deduplicated() {
        let ws = Workspace::new(PathBuf::from("/nonexistent-root"));
        let mut n = Normalizer::new(&ws, Encoding::Utf16, Encoding::Codepoint, false);
        let r = |l: u32, c: u32| json!({"start": {"line": l, "character": c}, "end": {"line": l, "character": c + 3}});
        let v = json!([
            {"uri": "file:///nonexistent-root/b.py", "range": r(1, 0)},
            {"uri": "file:///nonexistent-root/a.py", "range": r(5, 2)},
            {"uri": "file:///nonexistent-root/a.py", "range": r(1, 4)},
            {"uri": "file:///nonexistent-root/a.py", "range": r(1, 4)},
        ]);
        let locs = n.locations(&v);
        let got: Vec<_> = locs.iter().map(|l| (l.path.as_str(), l.range)).collect();
        assert_eq!(
            got,
            vec![
                ("a.py", [1, 4, 1, 7]),
                ("a.py", [5, 2, 5, 5]),
                ("b.py", [1, 0, 1, 3])
            ]
        );
        assert_eq!(locs[0].selector, "a.py@L2:C5");
    }

    #[test]
    fn hover_shapes() {
        let ws = Workspace::new(PathBuf::from("/r"));
        let n = Normalizer::new(&ws, Encoding::Utf16, Encoding::Codepoint, false);
        let h = n
            .hover(&json!({"contents": {"kind": "markdown", "value": "```python\nx: int\n```"}}))
            .unwrap();
        assert_eq!(h.kind, MarkupKind::Markdown);
        assert_eq!(h.value, "```python\nx: int\n```");
        assert_eq!(n.hover(&Value::Null), None);
    }
}
