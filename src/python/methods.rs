//! Changed methods of a class, read syntactically (docs/editing.md#a-changed-method): when all
//! a change does to a module's surface is in plain methods of its classes — a `def` directly in
//! the body of a top-level class both texts define once, in both texts once, with the same
//! decorators in both (none, `@property`, `@lru_cache(…)`: its type is still reached by its
//! name only), not special (`__x__`, `_x_`), declaring nothing beyond itself (no attribute of
//! its first parameter, no `global`, not a stub), in a class that may not be a protocol and
//! whose type parameters' variance is not inferred from its methods (`class C[T]`,
//! `infer_variance`) — [`narrowed`] gives the method names an importer must name to see the
//! change: those methods, and every method whose body infers its return type from one of them,
//! until nothing is added.
//!
//! Whether a name is safe to judge that way depends on the whole program (a protocol anywhere
//! declaring it makes a class fit or stop fitting where no one names it; a class deriving from
//! two bases may see them clash): [`crate::measure::narrow`] and [`crate::measure::scope`]
//! decide that; [`protocol_members`] and [`multiple_bases`] read one text for them.

use super::members::{bases_one_of, classes, maybe_protocols, name_of, once};
use super::reach::{reach_settled, Inferred, Reach};
use super::surface::{identifiers, leaks_beyond, parse_clean, statements, Kind, Leak};
use std::collections::BTreeSet;
use std::ops::Range;
use tree_sitter::Node;

/// A method whose text changed: its `def` in each text, and where its name is.
#[derive(Debug, Clone)]
struct Changed {
    name: String,
    before: Range<usize>,
    after: Range<usize>,
    name_before: usize,
    name_after: usize,
}

/// The method names an importer must name to see the change from `before` to `after` (`held`:
/// the functions whose inferred return types the server reported unchanged, at their offsets
/// in `after`), or `None` when the change is more than such methods (see the module's doc).
pub fn narrowed(before: &str, after: &str, held: &[Inferred]) -> Option<BTreeSet<String>> {
    let (a, b) = (parse_clean(before)?, parse_clean(after)?);
    let changed = changed_methods(a.root_node(), before, b.root_node(), after);
    if changed.is_empty() {
        return None;
    }
    // The rest of the change, each changed method as it was, must reach nothing.
    let spliced = splice(before, after, &changed);
    let inside = |h: &Inferred| changed.iter().find(|c| c.after.contains(&h.after));
    let rest: Vec<Inferred> = held
        .iter()
        .filter(|h| inside(h).is_none())
        .map(|h| Inferred {
            after: shifted(h.after, &changed),
            ..h.clone()
        })
        .collect();
    if reach_settled(before, &spliced, &rest) != Reach::Nothing {
        return None;
    }
    let mut names: BTreeSet<String> = changed
        .iter()
        .filter(|c| {
            !held
                .iter()
                .any(|h| h.name == c.name && h.before == c.name_before && h.after == c.name_after)
        })
        .map(|c| c.name.clone())
        .collect();
    dependents(before, after, &mut names)?;
    Some(names)
}

/// Add to `names` every method whose body infers its return type from one of them, in either
/// text; `None` when something else of the module depends on them (a top-level statement, a
/// class-level one, a body declaring attributes, a special method).
fn dependents(before: &str, after: &str, names: &mut BTreeSet<String>) -> Option<()> {
    let (a, b) = (statements(before)?, statements(after)?);
    loop {
        let known = names.len();
        for s in a.iter().chain(b.iter()) {
            // An import binds another module's names: it depends on no class here.
            if s.kind == Kind::Import {
                continue;
            }
            if !s.class {
                if s.uses.iter().any(|u| names.contains(u)) {
                    return None;
                }
                continue;
            }
            if s.own.iter().any(|u| names.contains(u)) {
                return None;
            }
            for body in &s.bodies {
                if !body.names.iter().any(|n| names.contains(n)) {
                    continue;
                }
                match body.leak {
                    Leak::No => {}
                    Leak::Inferred if !special(&body.name) => {
                        names.insert(body.name.clone());
                    }
                    _ => return None,
                }
            }
        }
        if names.len() == known {
            return Some(());
        }
    }
}

/// `__x__` and `_x_`: operators, protocols' hooks, `Enum`'s.
fn special(name: &str) -> bool {
    name.len() > 1 && name.starts_with('_') && name.ends_with('_')
}

/// The plain methods whose text differs between the two trees (see the module's doc); a
/// method that differs and is not plain is left to the rest of the change.
fn changed_methods(a: Node, before: &str, b: Node, after: &str) -> Vec<Changed> {
    let (sa, sb) = (before.as_bytes(), after.as_bytes());
    // A type variable whose variance is inferred from the methods using it.
    if [before, after].iter().any(|t| t.contains("infer_variance")) {
        return Vec::new();
    }
    let (old, new) = (classes(a, sa), classes(b, sb));
    let (pa, pb) = (maybe_protocols(a, sa), maybe_protocols(b, sb));
    let mut out = Vec::new();
    for (class, _) in &new {
        let (Some(na), Some(nb)) = (once(&old, class), once(&new, class)) else {
            continue;
        };
        // A protocol's members are its surface; a class with type parameters of its own
        // (`class C[T]`) has their variance inferred from its methods' signatures.
        let generic = |c: Node| c.child_by_field_name("type_parameters").is_some();
        if bases_one_of(na, sa, &pa) || bases_one_of(nb, sb, &pb) || generic(na) || generic(nb) {
            continue;
        }
        let (da, db) = (defs(na, sa), defs(nb, sb));
        for (name, _) in &db {
            let (Some(fa), Some(fb)) = (once(&da, name), once(&db, name)) else {
                continue;
            };
            let plain = |f: Node, src: &[u8]| function(f).is_some_and(|f| !leaks_beyond(f, src));
            if text(fa, sa) == text(fb, sb)
                || special(name)
                || !plain(fa, sa)
                || !plain(fb, sb)
                || decorators(fa, sa) != decorators(fb, sb)
            {
                continue;
            }
            let at = |f: Node| {
                function(f)
                    .and_then(|f| f.child_by_field_name("name"))
                    .map_or(0, |n| n.start_byte())
            };
            out.push(Changed {
                name: name.clone(),
                before: fa.start_byte()..fa.end_byte(),
                after: fb.start_byte()..fb.end_byte(),
                name_before: at(fa),
                name_after: at(fb),
            });
        }
    }
    out.sort_by_key(|c| c.after.start);
    out
}

/// The definitions directly in class `c`'s body: each name with its node (a decorated one's
/// decorated node, decorators included).
fn defs<'t>(c: Node<'t>, src: &[u8]) -> Vec<(String, Node<'t>)> {
    let Some(body) = c.child_by_field_name("body") else {
        return Vec::new();
    };
    let mut cursor = body.walk();
    body.named_children(&mut cursor)
        .filter_map(|n| Some((name_of(function(n)?, src)?, n)))
        .collect()
}

/// The function a definition node defines (through its decorators).
fn function(n: Node) -> Option<Node> {
    match n.kind() {
        "function_definition" => Some(n),
        "decorated_definition" => n
            .child_by_field_name("definition")
            .filter(|d| d.kind() == "function_definition"),
        _ => None,
    }
}

/// The text of `n`'s decorators (empty for an undecorated one).
fn decorators<'s>(n: Node, src: &'s [u8]) -> &'s [u8] {
    let end = function(n).map_or(n.start_byte(), |f| f.start_byte());
    &src[n.start_byte()..end]
}

fn text<'s>(n: Node, src: &'s [u8]) -> &'s [u8] {
    &src[n.start_byte()..n.end_byte()]
}

/// `after` with each changed method's definition as it was `before`.
fn splice(before: &str, after: &str, changed: &[Changed]) -> String {
    let mut out = String::with_capacity(after.len());
    let mut at = 0;
    for c in changed {
        out.push_str(&after[at..c.after.start]);
        out.push_str(&before[c.before.clone()]);
        at = c.after.end;
    }
    out.push_str(&after[at..]);
    out
}

/// Offset `at` of `after` (outside every changed method) in [`splice`]'s text.
fn shifted(at: usize, changed: &[Changed]) -> usize {
    changed
        .iter()
        .filter(|c| c.after.end <= at)
        .fold(at, |n, c| n + c.before.len() - c.after.len())
}

/// The names declared in the protocols of a module's `text`: every `def` and assignment
/// target in the body of a class listing `Protocol` (or a name that may stand for it) among
/// its bases, at any depth of the module; a text that does not parse gives every word of it.
pub fn protocol_members(text: &str) -> BTreeSet<String> {
    let Some(tree) = parse_clean(text) else {
        return super::surface::words(text).collect();
    };
    let (root, src) = (tree.root_node(), text.as_bytes());
    let aliases = maybe_protocols(root, src);
    let mut out = BTreeSet::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if n.kind() == "class_definition" && bases_one_of(n, src, &aliases) {
            if let Some(body) = n.child_by_field_name("body") {
                declared(body, src, &mut out);
            }
        }
        let mut cursor = n.walk();
        stack.extend(n.named_children(&mut cursor));
    }
    out
}

/// The names `def`s and assignments under `n` declare, not entering function bodies.
fn declared(n: Node, src: &[u8], out: &mut BTreeSet<String>) {
    match n.kind() {
        "function_definition" => {
            out.extend(name_of(n, src));
            return;
        }
        "assignment" | "augmented_assignment" => {
            if let Some(left) = n.child_by_field_name("left") {
                identifiers(left, src, out);
            }
        }
        _ => {}
    }
    let mut cursor = n.walk();
    for c in n.named_children(&mut cursor) {
        declared(c, src, out);
    }
}

/// Whether `text` defines a class with two or more bases anywhere (keyword arguments such as
/// `metaclass=` aside), or does not parse.
pub fn multiple_bases(text: &str) -> bool {
    let Some(tree) = parse_clean(text) else {
        return true;
    };
    let mut stack = vec![tree.root_node()];
    while let Some(n) = stack.pop() {
        if n.kind() == "class_definition" {
            let bases = n.child_by_field_name("superclasses").map_or(0, |s| {
                let mut cursor = s.walk();
                let count = s
                    .named_children(&mut cursor)
                    .filter(|c| !matches!(c.kind(), "keyword_argument" | "comment"))
                    .count();
                count
            });
            if bases > 1 {
                return true;
            }
        }
        let mut cursor = n.walk();
        stack.extend(n.named_children(&mut cursor));
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "import typing\n\n\nclass C(Base):\n    def f(self, x: int) -> int:\n        return x\n\n    def g(self):\n        return self.f(1)\n\n    def h(self) -> int:\n        return self.f(2)\n\n\nclass D:\n    def k(self):\n        return 1\n\n\ndef top(c: C) -> int:\n    return c.f(3)\n";

    fn names(after: &str) -> Option<Vec<String>> {
        narrowed(BASE, after, &[]).map(|n| n.into_iter().collect())
    }

    #[test]
    fn a_changed_signature_reaches_its_name_and_the_methods_inferring_from_it() {
        let after = BASE.replace("def f(self, x: int)", "def f(self, x: int, y: int = 0)");
        // `g` infers its return type from `f`; `h` declares one; `top` declares one.
        assert_eq!(names(&after), Some(vec!["f".into(), "g".into()]));
        let after = BASE.replace(
            "    def k(self):\n        return 1",
            "    def k(self):\n        return 2",
        );
        assert_eq!(names(&after), Some(vec!["k".into()]));
        // Two methods at once, and a comment beside them.
        let after = BASE.replace("return 1\n", "return 2  # two\n").replace(
            "-> int:\n        return self.f(2)",
            "-> int:\n        return self.f(4)",
        );
        assert_eq!(names(&after), Some(vec!["h".into(), "k".into()]));
    }

    #[test]
    fn a_method_whose_inferred_type_held_reaches_nothing() {
        let after = BASE.replace(
            "        return 1\n",
            "        one = 1\n        return one\n",
        );
        let at = |t: &str| t.find("def k").unwrap() + 4;
        let held = Inferred {
            name: "k".into(),
            before: at(BASE),
            after: at(&after),
            per_call: false,
        };
        let found = narrowed(BASE, &after, std::slice::from_ref(&held));
        assert_eq!(found, Some(BTreeSet::new()));
    }

    #[test]
    fn what_is_more_than_plain_methods_is_not_narrowed() {
        let change_f = |t: &str| t.replace("def f(self, x: int)", "def f(self, x: str)");
        // Beside the change to `f`: a top-level statement, a special or decorated method, a
        // method added or removed, a class-level statement, the bases.
        for (old, new) in [
            ("import typing\n", "import typing\nimport os\n"),
            (
                "def top(c: C) -> int:\n    return c.f(3)",
                "def top(c: C):\n    return c.f(3)",
            ),
            ("    def h(self) -> int:", "    def __h__(self) -> int:"),
            (
                "    def h(self) -> int:",
                "    @staticmethod\n    def h(self) -> int:",
            ),
            (
                "class D:\n",
                "class D:\n    def n(self) -> int:\n        return 1\n\n",
            ),
            ("    def k(self):\n        return 1\n", "    pass\n"),
            ("class D:\n", "class D:\n    z = 1\n"),
            ("class C(Base):", "class C(Base, typing.Protocol):"),
        ] {
            let after = BASE.replace(old, new);
            assert_ne!(after, BASE, "{old}");
            assert_eq!(names(&change_f(&after)), None, "{new}");
        }
        // In both texts: `f` declares an attribute or is a stub; `C` is a protocol; `C`'s type
        // parameters have their variance inferred; a top-level function infers its return
        // type from `f`.
        for (old, new) in [
            (
                "        return x\n",
                "        self.y = x\n        return x\n",
            ),
            ("        return x\n", "        ...\n"),
            ("class C(Base):", "class C(Base, typing.Protocol):"),
            ("class C(Base):", "class C[T](Base):"),
            (
                "import typing\n",
                "import typing\nT = typing.TypeVar(\"T\", infer_variance=True)\n",
            ),
            ("def top(c: C) -> int:", "def top(c: C):"),
        ] {
            let before = BASE.replace(old, new);
            assert_ne!(before, BASE, "{old}");
            assert_eq!(narrowed(&before, &change_f(&before), &[]), None, "{new}");
        }
        // A decorated method changed under the same decorators is narrowed; an import of a
        // module whose name is the method's is no use of it.
        let deco = BASE.replace(
            "    def h(self) -> int:",
            "    @property\n    def h(self) -> int:",
        );
        let deco = deco.replace("import typing\n", "import typing\nfrom . import h\n");
        let after = deco.replace("return self.f(2)", "return self.f(5)");
        assert_eq!(
            narrowed(&deco, &after, &[]).map(|n| n.into_iter().collect::<Vec<_>>()),
            Some(vec!["h".to_string()])
        );
        // The same change alone is narrowed.
        assert_eq!(names(&change_f(BASE)), Some(vec!["f".into(), "g".into()]));
        // A method of a protocol, or of a class defined twice.
        let proto = "from typing import Protocol\n\n\nclass P(Protocol):\n    def f(self) -> int:\n        return 1\n";
        assert_eq!(
            narrowed(proto, &proto.replace("-> int", "-> str"), &[]),
            None
        );
        let twice = format!("{BASE}\n\nclass C:\n    pass\n");
        assert_eq!(
            narrowed(&twice, &twice.replace("x: int)", "x: str)"), &[]),
            None
        );
    }

    #[test]
    fn a_parameter_or_keyword_named_like_the_method_is_no_use_of_it() {
        // Another method's parameter `f` (plain, defaulted, typed, starred, a lambda's), or a
        // keyword `f=` in a class-level call or a decorator: the change to `f` is narrowed.
        let change_f = |t: &str| t.replace("def f(self, x: int)", "def f(self, x: str)");
        for (old, new) in [
            ("    def k(self):", "    def k(self, f=None):"),
            ("    def k(self):", "    def k(self, *f, **kw: int):"),
            ("    def k(self):", "    def k(self, f: int = 1, **f2):"),
            ("class D:\n", "class D:\n    z = dict(f=1, g=lambda f: 0)\n"),
            (
                "    def k(self):",
                "    @typing.no_type_check_decorator(f=1)\n    def k(self):",
            ),
        ] {
            let before = BASE.replace(old, new);
            assert_ne!(before, BASE, "{old}");
            let got = narrowed(&before, &change_f(&before), &[]);
            assert_eq!(
                got.map(|n| n.into_iter().collect::<Vec<_>>()),
                Some(vec!["f".into(), "g".into()]),
                "{new}"
            );
        }
        // A default value or an annotation naming it is a use: the class is the unit.
        for (old, new) in [
            ("    def k(self):", "    def k(self, h=f):"),
            ("    def k(self):", "    def k(self, h: f = 1):"),
            ("class D:\n", "class D:\n    z = dict(h=f)\n"),
        ] {
            let before = BASE.replace(old, new);
            assert_eq!(narrowed(&before, &change_f(&before), &[]), None, "{new}");
        }
    }

    #[test]
    fn the_names_protocols_declare_are_found_at_any_depth() {
        let text = "import sys\nif sys.version_info >= (3, 8):\n    from typing import Protocol as P\n\n\nclass Reads(P):\n    size: int\n    def read(self, n: int) -> bytes: ...\n    if sys:\n        def peek(self) -> bytes: ...\n\n\nclass Plain:\n    def write(self) -> None: ...\n\n\ndef outer():\n    class Inner(typing.Protocol):\n        def close(self) -> None:\n            def nested(): ...\n";
        let found: Vec<String> = protocol_members(text).into_iter().collect();
        assert_eq!(found, ["close", "peek", "read", "size"]);
        // What does not parse gives every word.
        assert!(protocol_members("class (:\n    write").contains("write"));
    }

    #[test]
    fn two_bases_anywhere_count_and_keywords_do_not() {
        assert!(multiple_bases("class A(B, C):\n    pass\n"));
        assert!(multiple_bases("def f():\n    class A(B, C): ...\n"));
        assert!(!multiple_bases("class A(B, metaclass=M):\n    pass\n"));
        assert!(!multiple_bases("class A:\n    x = f(1, 2)\n"));
        assert!(multiple_bases("class A(:\n"));
    }
}
