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

use super::facts::{Diagnostic, FoundSymbol, OutlineSymbol, Placed, Severity, Symbol};
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

    /// Diagnostics of one file (as the server answered them), sorted.
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

    #[test]
    fn install_prefixes_are_stripped_from_messages() {
        let t = "RangeError: x\n    at k.f (/root/.cache/lanser/pyright/1.1.407/node_modules/pyright/dist/p.js:3:1)\n    at g (/opt/node_modules/a/node_modules/b.js:1:1)";
        assert_eq!(
            strip_install_prefixes(t),
            "RangeError: x\n    at k.f (node_modules/pyright/dist/p.js:3:1)\n    at g (node_modules/a/node_modules/b.js:1:1)"
        );
        assert_eq!(strip_install_prefixes("no paths here"), "no paths here");
    }
}
