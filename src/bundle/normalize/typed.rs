//! The operations' typed answers (`lsp_types`) as facts, without a detour through JSON:
//! locations, hovers, outlines and workspace symbols. Each reads the same parts the JSON
//! reading in [`super`] reads and builds the fact with the same builder.

use super::{searched, sort_by_location, Found, Loc, Normalizer, Outlined};
use crate::bundle::facts::{Hover, MarkupKind, Symbol};
use lsp_types::{
    DocumentSymbol, DocumentSymbolResponse, GotoDefinitionResponse, HoverContents, MarkedString,
    OneOf, SymbolInformation, SymbolKind, WorkspaceSymbolResponse,
};

/// A server range as `[startLine, startCol, endLine, endCol]`.
pub fn range(r: &lsp_types::Range) -> [u32; 4] {
    [r.start.line, r.start.character, r.end.line, r.end.character]
}

/// The protocol's number of a SymbolKind (0 for one it does not define).
pub fn symbol_kind_number(kind: SymbolKind) -> u64 {
    const KINDS: [SymbolKind; 26] = [
        SymbolKind::FILE,
        SymbolKind::MODULE,
        SymbolKind::NAMESPACE,
        SymbolKind::PACKAGE,
        SymbolKind::CLASS,
        SymbolKind::METHOD,
        SymbolKind::PROPERTY,
        SymbolKind::FIELD,
        SymbolKind::CONSTRUCTOR,
        SymbolKind::ENUM,
        SymbolKind::INTERFACE,
        SymbolKind::FUNCTION,
        SymbolKind::VARIABLE,
        SymbolKind::CONSTANT,
        SymbolKind::STRING,
        SymbolKind::NUMBER,
        SymbolKind::BOOLEAN,
        SymbolKind::ARRAY,
        SymbolKind::OBJECT,
        SymbolKind::KEY,
        SymbolKind::NULL,
        SymbolKind::ENUM_MEMBER,
        SymbolKind::STRUCT,
        SymbolKind::EVENT,
        SymbolKind::OPERATOR,
        SymbolKind::TYPE_PARAMETER,
    ];
    KINDS
        .iter()
        .position(|k| *k == kind)
        .map_or(0, |i| i as u64 + 1)
}

fn marked(s: &MarkedString) -> String {
    match s {
        MarkedString::String(s) => s.clone(),
        MarkedString::LanguageString(l) => format!("```{}\n{}\n```", l.language, l.value),
    }
}

impl Normalizer<'_> {
    /// A definition-like answer (`Location | Location[] | LocationLink[]`, or none) → sorted,
    /// deduplicated locations; a link is named by its target's selection range.
    pub fn goto(&mut self, answer: &Option<GotoDefinitionResponse>) -> Vec<Loc> {
        let places: Vec<(&str, [u32; 4])> = match answer {
            None => vec![],
            Some(GotoDefinitionResponse::Scalar(l)) => vec![(l.uri.as_str(), range(&l.range))],
            Some(GotoDefinitionResponse::Array(ls)) => ls
                .iter()
                .map(|l| (l.uri.as_str(), range(&l.range)))
                .collect(),
            Some(GotoDefinitionResponse::Link(links)) => links
                .iter()
                .map(|l| (l.target_uri.as_str(), range(&l.target_selection_range)))
                .collect(),
        };
        self.located(places)
    }

    /// A references answer → sorted, deduplicated locations.
    pub fn references(&mut self, answer: &Option<Vec<lsp_types::Location>>) -> Vec<Loc> {
        let places = answer
            .iter()
            .flatten()
            .map(|l| (l.uri.as_str(), range(&l.range)));
        self.located(places)
    }

    /// A hover answer → `{kind, value, range}`, or none: marked strings become markdown
    /// (a language's in a fence), joined by blank lines.
    pub fn hover_of(&self, answer: &Option<lsp_types::Hover>) -> Option<Hover> {
        let h = answer.as_ref()?;
        let (kind, value) = match &h.contents {
            HoverContents::Scalar(MarkedString::String(s)) => (MarkupKind::Plaintext, s.clone()),
            HoverContents::Scalar(s) => (MarkupKind::Markdown, marked(s)),
            HoverContents::Array(parts) => (
                MarkupKind::Markdown,
                parts.iter().map(marked).collect::<Vec<_>>().join("\n\n"),
            ),
            HoverContents::Markup(m) => (
                match m.kind {
                    lsp_types::MarkupKind::Markdown => MarkupKind::Markdown,
                    lsp_types::MarkupKind::PlainText => MarkupKind::Plaintext,
                },
                m.value.clone(),
            ),
        };
        Some(Hover {
            kind,
            value,
            range: h.range.as_ref().map(range),
        })
    }

    /// A documentSymbol answer, flattened in document order with qualified names.
    pub fn outline(&mut self, uri: &str, answer: &Option<DocumentSymbolResponse>) -> Vec<Symbol> {
        let mut out = Vec::new();
        match answer {
            None => {}
            Some(DocumentSymbolResponse::Flat(items)) => {
                for s in items {
                    out.push(Symbol::Found(self.information(s)));
                }
            }
            Some(DocumentSymbolResponse::Nested(items)) => {
                for s in items {
                    self.nested(uri, s, None, &mut out);
                }
            }
        }
        sort_by_location(&mut out);
        out
    }

    fn nested(
        &mut self,
        uri: &str,
        s: &DocumentSymbol,
        parent: Option<&str>,
        out: &mut Vec<Symbol>,
    ) {
        let symbol = self.outline_symbol(
            uri,
            Outlined {
                name: &s.name,
                kind: symbol_kind_number(s.kind),
                detail: s.detail.as_deref(),
                range: range(&s.range),
                selection: range(&s.selection_range),
            },
            parent,
        );
        let qualname = symbol.qualname.clone();
        out.push(Symbol::Outline(symbol));
        for c in s.children.iter().flatten() {
            self.nested(uri, c, Some(&qualname), out);
        }
    }

    fn information(&mut self, s: &SymbolInformation) -> crate::bundle::facts::FoundSymbol {
        self.found_symbol(Found {
            name: &s.name,
            kind: symbol_kind_number(s.kind),
            container: s.container_name.as_deref(),
            uri: s.location.uri.as_str(),
            range: range(&s.location.range),
        })
    }

    /// A workspace/symbol answer, sorted and deduplicated (a symbol located by its file
    /// alone has the empty range).
    pub fn search(&mut self, answer: &Option<WorkspaceSymbolResponse>) -> Vec<Symbol> {
        let out: Vec<Symbol> = match answer {
            None => vec![],
            Some(WorkspaceSymbolResponse::Flat(items)) => items
                .iter()
                .map(|s| Symbol::Found(self.information(s)))
                .collect(),
            Some(WorkspaceSymbolResponse::Nested(items)) => items
                .iter()
                .map(|s| {
                    let (uri, at) = match &s.location {
                        OneOf::Left(l) => (l.uri.as_str(), range(&l.range)),
                        OneOf::Right(w) => (w.uri.as_str(), [0; 4]),
                    };
                    Symbol::Found(self.found_symbol(Found {
                        name: &s.name,
                        kind: symbol_kind_number(s.kind),
                        container: s.container_name.as_deref(),
                        uri,
                        range: at,
                    }))
                })
                .collect(),
        };
        searched(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::Encoding;
    use crate::workspace::Workspace;
    use serde_json::{json, Value};
    use std::path::PathBuf;

    fn r(l: u32, c: u32) -> Value {
        json!({"start": {"line": l, "character": c}, "end": {"line": l, "character": c + 3}})
    }

    fn normalizer(ws: &Workspace) -> Normalizer<'_> {
        Normalizer::new(ws, Encoding::Utf16, Encoding::Codepoint, false)
    }

    const A: &str = "file:///nonexistent-root/a.py";
    const B: &str = "file:///nonexistent-root/b.py";

    /// Definition-like answers of each shape: sorted by path and range, deduplicated, a link
    /// named by its target's selection range.
    #[test]
    fn locations_are_sorted_deduplicated_and_links_named_by_their_selection() {
        let ws = Workspace::new(PathBuf::from("/nonexistent-root"));
        let mut n = normalizer(&ws);
        let mut read = |v: Value| {
            let typed: Option<GotoDefinitionResponse> = serde_json::from_value(v).unwrap();
            n.goto(&typed)
                .into_iter()
                .map(|l| (l.path, l.range, l.selector))
                .collect::<Vec<_>>()
        };
        let many = json!([{"uri": B, "range": r(1, 0)}, {"uri": A, "range": r(5, 2)},
            {"uri": A, "range": r(1, 4)}, {"uri": A, "range": r(1, 4)}]);
        assert_eq!(
            read(many),
            [
                ("a.py".into(), [1, 4, 1, 7], "a.py@L2:C5".into()),
                ("a.py".into(), [5, 2, 5, 5], "a.py@L6:C3".into()),
                ("b.py".into(), [1, 0, 1, 3], "b.py@L2:C1".into()),
            ]
        );
        let one = read(json!({"uri": A, "range": r(2, 1)}));
        assert_eq!(one, [("a.py".into(), [2, 1, 2, 4], "a.py@L3:C2".into())]);
        let link =
            json!([{"targetUri": B, "targetRange": r(0, 0), "targetSelectionRange": r(3, 4)}]);
        assert_eq!(
            read(link),
            [("b.py".into(), [3, 4, 3, 7], "b.py@L4:C5".into())]
        );
        assert_eq!(read(Value::Null), []);
    }

    /// Hover contents of each shape: plain text stays plain, marked strings become markdown
    /// (a language's fenced), parts joined by a blank line.
    #[test]
    fn hover_shapes() {
        let ws = Workspace::new(PathBuf::from("/r"));
        let n = normalizer(&ws);
        let read = |contents: Value| {
            let v = json!({"contents": contents, "range": r(1, 1)});
            let h = n.hover_of(&serde_json::from_value(v).unwrap()).unwrap();
            assert_eq!(h.range, Some([1, 1, 1, 4]));
            (h.kind, h.value)
        };
        assert_eq!(
            read(json!("plain")),
            (MarkupKind::Plaintext, "plain".into())
        );
        assert_eq!(
            read(json!({"kind": "markdown", "value": "**x**"})),
            (MarkupKind::Markdown, "**x**".into())
        );
        assert_eq!(
            read(json!({"language": "python", "value": "x: int"})),
            (MarkupKind::Markdown, "```python\nx: int\n```".into())
        );
        assert_eq!(
            read(json!(["a", {"language": "python", "value": "def f(): ..."}])),
            (
                MarkupKind::Markdown,
                "a\n\n```python\ndef f(): ...\n```".into()
            )
        );
        assert_eq!(n.hover_of(&None), None);
    }

    /// A nested outline flattens with qualified names; a flat answer and a search keep each
    /// symbol's container (an empty one is none) and name an unknown kind `unknown`.
    #[test]
    fn outlines_flatten_with_qualnames_and_searches_keep_containers() {
        let ws = Workspace::new(PathBuf::from("/nonexistent-root"));
        let mut n = normalizer(&ws);
        let nested = json!([{"name": "C", "kind": 5, "range": r(0, 0), "selectionRange": r(0, 6),
            "children": [{"name": "m", "kind": 6, "detail": "(self)", "range": r(1, 4), "selectionRange": r(1, 8)}]},
            {"name": "f", "kind": 12, "range": r(4, 0), "selectionRange": r(4, 4)}]);
        let outline = n.outline(A, &serde_json::from_value(nested).unwrap());
        let names: Vec<&str> = outline.iter().map(|s| s.qualname()).collect();
        assert_eq!(names, ["C", "C.m", "f"]);
        let flat = json!([{"name": "x", "kind": 13, "containerName": "", "location": {"uri": A, "range": r(2, 0)}},
            {"name": "y", "kind": 99, "containerName": "C", "location": {"uri": B, "range": r(0, 0)}}]);
        let found = |symbols: Vec<Symbol>| -> Vec<(String, String, Option<String>, String)> {
            symbols
                .into_iter()
                .map(|s| match s {
                    Symbol::Found(f) => (f.name, f.kind, f.container, f.path),
                    other => panic!("{other:?}"),
                })
                .collect()
        };
        let want = vec![
            (
                "x".to_string(),
                "variable".to_string(),
                None,
                "a.py".to_string(),
            ),
            (
                "y".into(),
                "unknown".into(),
                Some("C".into()),
                "b.py".into(),
            ),
        ];
        let typed: Option<DocumentSymbolResponse> = serde_json::from_value(flat.clone()).unwrap();
        assert_eq!(found(n.outline(A, &typed)), want);
        let typed: Option<WorkspaceSymbolResponse> = serde_json::from_value(flat).unwrap();
        assert_eq!(found(n.search(&typed)), want);
    }
}
