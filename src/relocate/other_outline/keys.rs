//! The keys of JSON, YAML and TOML documents as definitions, named by their path from the
//! top (`server.tls.enabled`, a TOML `[server.tls]` table and a dotted `a.b = 1` key alike):
//! a key whose value is a mapping (an object, a YAML mapping, a TOML table or inline table)
//! is a `class` whose keys are its members, any other key an `assign` whose body is its
//! value. Sequences are not read into (their items have no names), and a key a selector
//! cannot spell (`@types/node`, a dotted JSON key) is left out with what is under it.

use super::{named_children, span, Cx, Found, MAX_DEPTH};
use crate::relocate::grammars::Grammar;
use crate::relocate::outline::{DefKind, Span};
use tree_sitter::Node;

impl Cx<'_> {
    /// A key of a JSON, YAML or TOML document.
    pub(super) fn key<'t>(&self, n: Node<'t>) -> Vec<Found<'t>> {
        self.key_found(n).into_iter().collect()
    }

    fn key_found<'t>(&self, n: Node<'t>) -> Option<Found<'t>> {
        let kids = || {
            named_children(n)
                .into_iter()
                .filter(|c| !super::is_comment(*c))
        };
        let (key, value, table) = match (self.g, n.kind()) {
            (Grammar::Json, "pair") => (
                n.child_by_field_name("key")?,
                n.child_by_field_name("value"),
                false,
            ),
            (Grammar::Yaml, "block_mapping_pair" | "flow_pair") => (
                n.child_by_field_name("key")?,
                n.child_by_field_name("value"),
                false,
            ),
            (Grammar::Toml, "pair") => {
                let k: Vec<Node> = kids().collect();
                (*k.first()?, k.get(1).copied(), false)
            }
            (Grammar::Toml, "table" | "table_array_element") => (kids().next()?, None, true),
            _ => return None,
        };
        let mut parts = self.key_parts(key)?;
        let last = parts.pop()?;
        let mapping = table || value.is_some_and(|v| self.is_mapping(v));
        let mut f = if mapping {
            let members = if table { Some(n) } else { value };
            Found::new(DefKind::Class, vec![last])
                .body(value)
                .members(members)
        } else {
            Found::new(DefKind::Variable, vec![last]).body(value)
        };
        f.scope = parts.into_iter().map(|(s, _)| s).collect();
        if table {
            // The header line: `[server.tls]`.
            let mut c = n.walk();
            let close = n.children(&mut c).find(|t| matches!(t.kind(), "]" | "]]"));
            f.head = close.map(|t| (n.start_byte(), t.end_byte()));
        }
        Some(f)
    }

    /// Each name of a key (one, or a TOML dotted key's several); `None` when one cannot be
    /// spelled in a selector.
    fn key_parts(&self, key: Node) -> Option<Vec<(String, Span)>> {
        match key.kind() {
            // JSON: a string without escapes.
            "string" => {
                let inner = named_children(key);
                match inner.as_slice() {
                    [c] if c.kind() == "string_content" => Some(vec![self.spelled(span(*c))?]),
                    _ => None,
                }
            }
            // YAML: a plain or quoted scalar.
            "flow_node" => {
                let s = named_children(key).into_iter().next()?;
                match s.kind() {
                    "plain_scalar" => Some(vec![self.spelled(span(s))?]),
                    "double_quote_scalar" | "single_quote_scalar" => {
                        Some(vec![self.spelled(unquoted(s))?])
                    }
                    _ => None,
                }
            }
            "bare_key" => Some(vec![self.spelled(span(key))?]),
            "quoted_key" => Some(vec![self.spelled(unquoted(key))?]),
            // `a.b.c`: `(dotted_key (dotted_key a b) c)`, read down its left side.
            "dotted_key" => {
                let mut out = vec![];
                let mut cur = key;
                for _ in 0..MAX_DEPTH {
                    let kids = named_children(cur);
                    let (first, rest) = kids.split_first()?;
                    for k in rest.iter().rev() {
                        out.extend(self.key_parts(*k)?);
                    }
                    if first.kind() != "dotted_key" {
                        out.extend(self.key_parts(*first)?);
                        out.reverse();
                        return Some(out);
                    }
                    cur = *first;
                }
                None
            }
            _ => None,
        }
    }

    /// A value that is a mapping: its keys are members.
    fn is_mapping(&self, v: Node) -> bool {
        match v.kind() {
            "object" | "inline_table" | "block_mapping" | "flow_mapping" => true,
            "block_node" | "flow_node" => named_children(v)
                .into_iter()
                .any(|c| matches!(c.kind(), "block_mapping" | "flow_mapping")),
            _ => false,
        }
    }
}

/// A one-line quoted string's span without its quotes.
fn unquoted(n: Node) -> Span {
    let (s, e) = span(n);
    (s + 1, e.saturating_sub(1).max(s + 1))
}
