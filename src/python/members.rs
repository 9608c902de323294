//! New methods of a class, read syntactically: a `def` a change adds directly in the body of a
//! top-level class that both texts define once — undecorated, with a name that is not special
//! (`__x__`, `_x_`) and is no word of the module's text before, whose body declares nothing
//! beyond itself (no attribute of its first parameter, no `global`, not a stub), in a class
//! that may not be a protocol. [`without`] gives the new text with them left out, so that
//! [`super::reach`] judges the rest of the change alone.
//!
//! Whether such a method can reach an importer depends on the whole program (a protocol, a
//! base or a sibling base elsewhere may name it): [`crate::measure::fresh`] decides that.

use super::surface::{identifiers, leaks_beyond, parse_clean, words};
use std::collections::BTreeSet;
use std::ops::Range;
use tree_sitter::Node;

/// A method the change adds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewMethod {
    pub class: String,
    pub name: String,
    /// Its whole lines in the new text.
    pub lines: Range<usize>,
}

/// The top-level class definitions of a module, with their names.
pub(super) fn classes<'t>(root: Node<'t>, src: &[u8]) -> Vec<(String, Node<'t>)> {
    let mut cursor = root.walk();
    root.named_children(&mut cursor)
        .filter_map(|n| match n.kind() {
            "class_definition" => Some(n),
            "decorated_definition" => n
                .child_by_field_name("definition")
                .filter(|d| d.kind() == "class_definition"),
            _ => None,
        })
        .filter_map(|c| Some((name_of(c, src)?, c)))
        .collect()
}

/// The one node named `name` in `list`, if there is exactly one.
pub(super) fn once<'t>(list: &[(String, Node<'t>)], name: &str) -> Option<Node<'t>> {
    let mut found = list.iter().filter(|(n, _)| n == name);
    match (found.next(), found.next()) {
        (Some((_, c)), None) => Some(*c),
        _ => None,
    }
}

pub(super) fn name_of(n: Node, src: &[u8]) -> Option<String> {
    Some(
        n.child_by_field_name("name")?
            .utf8_text(src)
            .ok()?
            .to_string(),
    )
}

/// The methods added in `after` that no other text of the module could reach (see the
/// module's doc); none when either text does not parse cleanly.
pub fn new_methods(before: &str, after: &str) -> Vec<NewMethod> {
    let (Some(a), Some(b)) = (parse_clean(before), parse_clean(after)) else {
        return Vec::new();
    };
    let (sa, sb) = (before.as_bytes(), after.as_bytes());
    let old = classes(a.root_node(), sa);
    let new = classes(b.root_node(), sb);
    let known: BTreeSet<String> = words(before).collect();
    let protocols = maybe_protocols(b.root_node(), sb);
    let mut out = Vec::new();
    for (class, node) in &new {
        if once(&new, class).is_none()
            || once(&old, class).is_none()
            || bases_one_of(*node, sb, &protocols)
        {
            continue;
        }
        let Some(body) = node.child_by_field_name("body") else {
            continue;
        };
        let mut cursor = body.walk();
        for def in body.named_children(&mut cursor) {
            if def.kind() != "function_definition" || leaks_beyond(def, sb) {
                continue;
            }
            let Some(name) = name_of(def, sb) else {
                continue;
            };
            let special = name.starts_with('_') && name.ends_with('_');
            if special || known.contains(&name) {
                continue;
            }
            out.push(NewMethod {
                class: class.clone(),
                name,
                lines: whole_lines(after, def.start_byte()..def.end_byte()),
            });
        }
    }
    out
}

/// `range` widened to the whole lines it is on (with the last line's end).
fn whole_lines(text: &str, range: Range<usize>) -> Range<usize> {
    let start = text[..range.start].rfind('\n').map_or(0, |i| i + 1);
    let end = text[range.end..]
        .find('\n')
        .map_or(text.len(), |i| range.end + i + 1);
    start..end
}

/// `after` without the lines of `methods`.
pub fn without(after: &str, methods: &[NewMethod]) -> String {
    let mut cuts: Vec<&Range<usize>> = methods.iter().map(|m| &m.lines).collect();
    cuts.sort_by_key(|r| r.start);
    let mut out = String::with_capacity(after.len());
    let mut at = 0;
    for r in cuts {
        if r.start >= at {
            out.push_str(&after[at..r.start]);
            at = r.end;
        }
    }
    out.push_str(&after[at..]);
    out
}

/// The names that may stand for `Protocol` in a module: `Protocol` itself and every name a
/// top-level statement other than a class mentioning it binds or uses (an import alias, an
/// assignment). A class is a protocol only when it lists `Protocol` among its bases (a class
/// deriving from a protocol alone is an ordinary one).
pub(super) fn maybe_protocols(root: Node, src: &[u8]) -> BTreeSet<String> {
    let mut out = BTreeSet::from(["Protocol".to_string()]);
    let mut cursor = root.walk();
    for n in root.named_children(&mut cursor) {
        if matches!(n.kind(), "class_definition" | "decorated_definition") {
            continue;
        }
        let mut ids = BTreeSet::new();
        identifiers(n, src, &mut ids);
        if ids.contains("Protocol") {
            out.extend(ids);
        }
    }
    out
}

/// Whether class `c` names one of `names` among its bases (anywhere in them: `typing.Protocol`,
/// `Protocol[T]`).
pub(super) fn bases_one_of(c: Node, src: &[u8], names: &BTreeSet<String>) -> bool {
    let Some(bases) = c.child_by_field_name("superclasses") else {
        return false;
    };
    let mut ids = BTreeSet::new();
    identifiers(bases, src, &mut ids);
    ids.iter().any(|i| names.contains(i))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "import typing\n\nclass C(Base):\n    def f(self) -> int:\n        return 1\n\n\nclass D:\n    x = 1\n";

    fn added(after: &str) -> Vec<String> {
        new_methods(BASE, after)
            .into_iter()
            .map(|m| format!("{}.{}", m.class, m.name))
            .collect()
    }

    #[test]
    fn a_plain_new_method_is_found_and_cut_out_whole() {
        let after = BASE.replace(
            "        return 1\n",
            "        return 1\n\n    def _helper(self, x: int) -> int:  # new\n        return x + 1\n",
        );
        let found = new_methods(BASE, &after);
        assert_eq!(added(&after), ["C._helper"]);
        assert_eq!(
            without(&after, &found),
            BASE.replace("return 1\n", "return 1\n\n")
        );
    }

    #[test]
    fn what_could_reach_further_is_not_a_new_method() {
        let add = |def: &str| BASE.replace("    x = 1\n", &format!("    x = 1\n{def}"));
        // Decorated (abstract, property, overload), special, declaring attributes, a stub, or
        // named in the module already.
        for def in [
            "    @property\n    def p(self) -> int:\n        return 1\n",
            "    def __len__(self) -> int:\n        return 1\n",
            "    def _missing_(self) -> int:\n        return 1\n",
            "    def g(self) -> None:\n        self.y = 2\n",
            "    def g(self) -> int: ...\n",
            "    def typing(self) -> int:\n        return 1\n",
            "    def x(self) -> int:\n        return 1\n",
        ] {
            assert_eq!(added(&add(def)), Vec::<String>::new(), "{def}");
        }
        assert_eq!(
            added(&add("    def g(self) -> int:\n        return 2\n")),
            ["D.g"]
        );
        // A nested class's method, or one in a class defined twice, is not judged.
        let nested = BASE.replace(
            "    x = 1\n",
            "    x = 1\n    class E:\n        def g(self): pass\n",
        );
        assert_eq!(added(&nested), Vec::<String>::new());
    }

    #[test]
    fn a_class_that_may_be_a_protocol_gains_nothing_here() {
        let base = "from typing import Protocol as P\nimport typing as t\n\nclass A(P):\n    def f(self) -> int: ...\n\nclass B(A, P):\n    def f(self) -> int: ...\n\nclass C(t.Protocol):\n    pass\n\nclass D(A):\n    pass\n";
        let g = "    def g(self) -> int:\n        return 1\n";
        for class in ["A", "B", "C"] {
            let after = base.to_string();
            let at = after.find(&format!("class {class}")).unwrap();
            let end = after[at..].find("\n\n").map_or(after.len(), |i| at + i + 1);
            let after = format!("{}{g}{}", &after[..end], &after[end..]);
            assert!(new_methods(base, &after).is_empty(), "{class}");
        }
        // D derives from a protocol without listing Protocol: an ordinary class.
        let after = format!("{base}{g}");
        assert_eq!(new_methods(base, &after).len(), 1);
    }
}
