//! PHP, HTML and CSS rules (the node kinds and fields of the pinned grammar crates):
//! - PHP: classes, interfaces, traits and enums (`class`), functions and methods (`def`),
//!   properties (without `$`), constants and enum cases (`assign`), all under their namespace
//!   (`namespace App\Billing;` names what follows it `App.Billing.…`);
//! - HTML: each element with an `id`, named by it alone (ids are unique in a page), its
//!   start tag as its `sig`;
//! - CSS: each rule by each of its selectors that is one class, id or tag (`.btn-primary`
//!   is `btn-primary`, `#content` `content`), nested rules under it, and `@keyframes`.

use super::{field, named_children, span, Cx, Found, Scope};
use crate::relocate::outline::{Def, DefKind};
use crate::selector::SegmentKind;
use tree_sitter::Node;

const CLASS: DefKind = DefKind::Class;
const FUNCTION: DefKind = DefKind::Function;
const VARIABLE: DefKind = DefKind::Variable;

impl Cx<'_> {
    pub(super) fn php<'t>(&self, n: Node<'t>) -> Vec<Found<'t>> {
        let name = field(n, "name");
        let body = field(n, "body");
        let f = match n.kind() {
            "class_declaration"
            | "interface_declaration"
            | "trait_declaration"
            | "enum_declaration" => Found::new(CLASS, self.names(name)).body(body).members(body),
            "function_definition" | "method_declaration" => Found::new(FUNCTION, self.names(name))
                .body(body)
                .members(body)
                .params(field(n, "parameters")),
            "namespace_definition" if body.is_some() => {
                let Some((scope, last)) = self.php_namespace(name) else {
                    // `namespace { … }`: the global namespace.
                    let mut f = Found::new(CLASS, vec![]).members(body);
                    f.emits = false;
                    return vec![f];
                };
                let mut f = Found::new(CLASS, vec![last]).body(body).members(body);
                f.scope = scope;
                f
            }
            "property_declaration" => return self.php_elements(n, "property_element"),
            // (`const_declaration` wraps its elements: `WRAPPERS`.)
            "const_element" => {
                let kids = named_children(n);
                Found::new(VARIABLE, self.names(kids.first().copied())).body(kids.get(1).copied())
            }
            "enum_case" => Found::new(VARIABLE, self.names(name)).body(field(n, "value")),
            _ => return vec![],
        };
        vec![f]
    }

    /// `public int $a = 1, $b;`: a variable each, named without its `$`.
    fn php_elements<'t>(&self, n: Node<'t>, kind: &str) -> Vec<Found<'t>> {
        let els: Vec<Node> = named_children(n)
            .into_iter()
            .filter(|c| c.kind() == kind)
            .collect();
        let several = els.len() > 1;
        els.into_iter()
            .map(|el| {
                let var = field(el, "name").map(named_children).unwrap_or_default();
                let name = var.into_iter().find(|c| c.kind() == "name");
                let mut f = Found::new(VARIABLE, self.names(name)).body(field(el, "default_value"));
                if several {
                    f.node = Some(span(el));
                }
                f
            })
            .collect()
    }

    /// The names of `App\Billing`: the scopes (`App`) and the last (`Billing`).
    fn php_namespace(&self, name: Option<Node>) -> Option<(Vec<String>, (String, super::Span))> {
        let mut parts: Vec<(String, super::Span)> = named_children(name?)
            .into_iter()
            .filter(|c| c.kind() == "name")
            .map(|c| self.name(Some(c)))
            .collect::<Option<_>>()?;
        let last = parts.pop()?;
        Some((parts.into_iter().map(|(s, _)| s).collect(), last))
    }

    /// `namespace App\Billing;` (a statement, no block): its definition is emitted and the
    /// scope of what follows it in the file returned.
    pub(super) fn php_namespace_statement(
        &self,
        n: Node,
        scope: &Scope,
        depth: usize,
        out: &mut Vec<Def>,
    ) -> Option<Scope> {
        if n.kind() != "namespace_definition" || field(n, "body").is_some() {
            return None;
        }
        let (outer, last) = self.php_namespace(field(n, "name"))?;
        let mut inner = scope.clone();
        for s in outer.iter().chain(std::iter::once(&last.0)) {
            inner.qual.push(s.clone());
            inner.chain.push(SegmentKind::Class);
        }
        let mut f = Found::new(CLASS, vec![last]);
        f.scope = outer;
        self.emit(n, None, f, scope, depth, out);
        Some(inner)
    }

    /// An HTML element with an `id`.
    pub(super) fn html<'t>(&self, n: Node<'t>) -> Vec<Found<'t>> {
        if !matches!(
            n.kind(),
            "element" | "script_element" | "style_element" | "template_element"
        ) {
            return vec![];
        }
        let Some(start) = named_children(n)
            .into_iter()
            .find(|c| matches!(c.kind(), "start_tag" | "self_closing_tag"))
        else {
            return vec![];
        };
        let id = named_children(start)
            .into_iter()
            .filter(|a| a.kind() == "attribute")
            .find_map(|a| {
                let kids = named_children(a);
                let is_id = kids.first().is_some_and(|k| {
                    k.kind() == "attribute_name" && self.text(*k).eq_ignore_ascii_case("id")
                });
                let value = kids.get(1).copied()?;
                let value = match value.kind() {
                    "quoted_attribute_value" => named_children(value).into_iter().next()?,
                    _ => value,
                };
                is_id.then_some(value)
            });
        let mut f = Found::new(CLASS, self.names(id));
        f.head = Some(span(start));
        f.flat = true;
        vec![f]
    }

    /// A CSS rule by its simple selectors, or `@keyframes`.
    pub(super) fn css<'t>(&self, n: Node<'t>) -> Vec<Found<'t>> {
        let kids = named_children(n);
        let find = |k: &str| kids.iter().copied().find(|c| c.kind() == k);
        let f = match n.kind() {
            "rule_set" => {
                let names = find("selectors")
                    .map(named_children)
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|s| self.css_simple(s))
                    .collect();
                let block = find("block");
                Found::new(CLASS, names).body(block).members(block)
            }
            "keyframes_statement" => Found::new(CLASS, self.names(find("keyframes_name")))
                .body(find("keyframe_block_list")),
            _ => return vec![],
        };
        vec![f]
    }

    /// The name of a selector that is one class (`.a`), id (`#a`) or tag (`a`).
    fn css_simple(&self, s: Node) -> Option<(String, super::Span)> {
        let inner = named_children(s);
        match (s.kind(), inner.as_slice()) {
            ("tag_name", []) => self.name(Some(s)),
            ("class_selector", [c]) if c.kind() == "class_name" => self.name(Some(*c)),
            ("id_selector", [c]) if c.kind() == "id_name" => self.name(Some(*c)),
            _ => None,
        }
    }
}
