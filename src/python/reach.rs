//! What a change to a module can alter for its importers, from its two surfaces
//! ([`super::surface`]): nothing (only comments, docstrings, or bodies whose types cannot leak
//! changed), a set of names, or something the rule cannot judge.
//!
//! The top-level statements of the two texts are aligned by their shapes (a longest common
//! subsequence, so order counts). A statement outside it changed, and so did one whose leaking
//! function body changed — unless the body leaks only through its inferred return type and the
//! server reported the same type for it before and after ([`inferred`] lists those functions,
//! [`reach_settled`] takes the ones whose type held): the names they bind are changed. Then
//! every statement whose visible types use a changed name (a signature, a base, an assigned
//! value, an unannotated function's body) binds changed names too, until nothing is added. A
//! changed star import, a changed statement that is no definition, assignment or import
//! (module-level code with its side effects), `__all__` and a module `__getattr__` are for
//! the full re-check.

use super::surface::{statements, Body, Kind, Leak, Statement};
use std::collections::BTreeSet;

/// What an importer of a changed module may see changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// Nothing: the surfaces are the same.
    Nothing,
    /// At most these module-level names.
    Names(BTreeSet<String>),
    /// At most these methods of the module's classes ([`super::methods::narrowed`]), seen by
    /// an importer that names one of them or derives a class from two bases — when no protocol
    /// declares one of them ([`crate::measure::narrow`]); else `names`, as [`Reach::Names`].
    Members {
        members: BTreeSet<String>,
        names: BTreeSet<String>,
    },
    /// The rule cannot judge (why); every importer is re-checked.
    Unknown(String),
}

/// Statements longer than this on either side are not aligned (the table is quadratic).
const MAX_STATEMENTS: usize = 4000;

/// A function whose body changed and whose type reaches importers only through the return
/// type inferred from its body: where its name is in the text before and after.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Inferred {
    pub name: String,
    pub before: usize,
    pub after: usize,
    /// Whether the server may infer its return type again at each call site
    /// ([`Body::per_call`], before or after): then an `Unknown` in the type it shows does not
    /// say what a caller gets.
    pub per_call: bool,
}

/// Compare a module's text `before` and `after` a change.
pub fn reach(before: &str, after: &str) -> Reach {
    reach_settled(before, after, &[])
}

/// The functions of aligned statements whose bodies changed and leak only through their
/// inferred return types (empty when the texts do not parse).
pub fn inferred(before: &str, after: &str) -> Vec<Inferred> {
    let (Some(a), Some(b)) = (statements(before), statements(after)) else {
        return Vec::new();
    };
    if a.len() > MAX_STATEMENTS || b.len() > MAX_STATEMENTS {
        return Vec::new();
    }
    let (same_a, _) = aligned(&a, &b);
    let mut out = Vec::new();
    for (i, s) in a.iter().enumerate() {
        let Some(j) = same_a[i] else { continue };
        for (p, q) in s.bodies.iter().zip(&b[j].bodies) {
            if p.shape != q.shape && p.leak == Leak::Inferred && q.leak == Leak::Inferred {
                out.push(Inferred {
                    name: q.name.clone(),
                    before: p.name_at,
                    after: q.name_at,
                    per_call: p.per_call || q.per_call,
                });
            }
        }
    }
    out
}

/// [`reach`], where the functions in `settled` (from [`inferred`]) kept their inferred return
/// types: their changed bodies reach no importer.
pub fn reach_settled(before: &str, after: &str, settled: &[Inferred]) -> Reach {
    let (Some(a), Some(b)) = (statements(before), statements(after)) else {
        return Reach::Unknown("the module does not parse cleanly".into());
    };
    if a.len() > MAX_STATEMENTS || b.len() > MAX_STATEMENTS {
        return Reach::Unknown("the module has too many top-level statements".into());
    }
    let (same_a, same_b) = aligned(&a, &b);
    let mut changed: Vec<&Statement> = Vec::new();
    for (i, s) in a.iter().enumerate() {
        if !same_a[i].is_some_and(|j| same_bodies(s, &b[j], settled)) {
            changed.push(s);
        }
    }
    for (j, s) in b.iter().enumerate() {
        if !same_b[j].is_some_and(|i| same_bodies(&a[i], s, settled)) {
            changed.push(s);
        }
    }
    if let Some(why) = changed.iter().find_map(|s| unjudged(s)) {
        return Reach::Unknown(why);
    }
    let mut names: BTreeSet<String> = changed.iter().flat_map(|s| s.binds.clone()).collect();
    if names.is_empty() {
        return Reach::Nothing;
    }
    // Statements whose types follow a changed name change too.
    loop {
        let before_len = names.len();
        for s in a.iter().chain(b.iter()) {
            if s.uses.iter().any(|u| names.contains(u)) {
                names.extend(s.binds.iter().cloned());
            }
        }
        if names.len() == before_len {
            break;
        }
    }
    if names.contains("__getattr__") {
        return Reach::Unknown("the module's __getattr__ may change".into());
    }
    Reach::Names(names)
}

/// Whether the aligned statements `x` and `y` differ in no leaking body (a body whose inferred
/// return type held, as `settled` says, does not count).
fn same_bodies(x: &Statement, y: &Statement, settled: &[Inferred]) -> bool {
    let held = |p: &Body, q: &Body| {
        p.leak == Leak::Inferred
            && q.leak == Leak::Inferred
            && settled
                .iter()
                .any(|s| s.before == p.name_at && s.after == q.name_at)
    };
    x.bodies.iter().zip(&y.bodies).all(|(p, q)| {
        p.shape == q.shape || (p.leak == Leak::No && q.leak == Leak::No) || held(p, q)
    })
}

/// Why a changed statement is beyond the rule, if it is.
fn unjudged(s: &Statement) -> Option<String> {
    let why = match s.kind {
        Kind::StarImport => "a star import changed",
        Kind::Other => {
            "a module-level statement that is not a definition, assignment or import changed"
        }
        _ if s.binds.contains("__all__") || s.uses.contains("__all__") => "__all__ changed",
        _ if s.binds.contains("__getattr__") => "the module's __getattr__ changed",
        _ => return None,
    };
    Some(why.to_string())
}

/// For each statement of `a` its partner in `b` and back, by a longest common subsequence of
/// their shapes.
fn aligned(a: &[Statement], b: &[Statement]) -> (Vec<Option<usize>>, Vec<Option<usize>>) {
    let (n, m) = (a.len(), b.len());
    // Equal heads and tails are aligned outright; the table covers the middle.
    let mut head = 0;
    while head < n && head < m && a[head].shape == b[head].shape {
        head += 1;
    }
    let mut tail = 0;
    while tail < n - head && tail < m - head && a[n - 1 - tail].shape == b[m - 1 - tail].shape {
        tail += 1;
    }
    let mut pa: Vec<Option<usize>> = vec![None; n];
    let mut pb: Vec<Option<usize>> = vec![None; m];
    for k in 0..head {
        pa[k] = Some(k);
        pb[k] = Some(k);
    }
    for k in 0..tail {
        pa[n - 1 - k] = Some(m - 1 - k);
        pb[m - 1 - k] = Some(n - 1 - k);
    }
    let (ma, mb) = (&a[head..n - tail], &b[head..m - tail]);
    let w = mb.len() + 1;
    let mut t = vec![0u32; (ma.len() + 1) * w];
    for i in (0..ma.len()).rev() {
        for j in (0..mb.len()).rev() {
            t[i * w + j] = if ma[i].shape == mb[j].shape {
                t[(i + 1) * w + j + 1] + 1
            } else {
                t[(i + 1) * w + j].max(t[i * w + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < ma.len() && j < mb.len() {
        if ma[i].shape == mb[j].shape {
            pa[head + i] = Some(head + j);
            pb[head + j] = Some(head + i);
            i += 1;
            j += 1;
        } else if t[(i + 1) * w + j] >= t[i * w + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    (pa, pb)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Reach {
        Reach::Names(list.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn comments_and_docstrings_reach_nothing() {
        let a = "\"\"\"Doc.\"\"\"\nimport os\n\ndef f(x: int) -> int:\n    \"\"\"Doc.\"\"\"\n    return x  # one\n";
        let b = "\"\"\"Other doc.\"\"\"\n# new comment\nimport os\n\ndef f(x: int) -> int:\n    \"\"\"Changed.\"\"\"\n    # more\n    return x  # two\n";
        assert_eq!(reach(a, b), Reach::Nothing);
    }

    #[test]
    fn annotated_bodies_reach_nothing_and_unannotated_ones_their_users() {
        let a = "def f(x: int) -> int:\n    return x\n\ndef g(x):\n    return x\n\ndef h() -> int:\n    return 1\n\ny = g(1)\n";
        let b = a.replace("    return x\n\ndef g", "    return x + 1\n\ndef g");
        assert_eq!(reach(a, &b), Reach::Nothing);
        let c = a.replace("def g(x):\n    return x", "def g(x):\n    return str(x)");
        assert_eq!(reach(a, &c), names(&["g", "y"]));
        // `__init__` returns None whatever its body, unless it declares attributes.
        let d = "class C:\n    def __init__(self):\n        print(1)\n";
        assert_eq!(reach(d, &d.replace("print(1)", "print(2)")), Reach::Nothing);
        assert_eq!(
            reach(d, &d.replace("print(1)", "self.x = 1")),
            names(&["C"])
        );
    }

    #[test]
    fn a_function_is_inferred_per_call_only_as_pyright_does() {
        let per_call = |def: &str| {
            let a = format!("{def}\n    return 1\n");
            let found = inferred(&a, &a.replace("return 1", "return 2"));
            assert_eq!(found.len(), 1, "{def}");
            found[0].per_call
        };
        assert!(per_call("def g(x):"));
        assert!(per_call("def g(x: int, *args):"));
        assert!(per_call("def g(x: int, *, y=1):"));
        assert!(!per_call("def g(x: int, /, *, y: str = ''):"));
        assert!(!per_call("def g():"));
        assert!(!per_call("async def g(x):"));
        assert!(!per_call("@deco\ndef g(x):"));
        let method = |sig: &str| {
            let a = format!("class C:\n    {sig}\n        return 1\n");
            inferred(&a, &a.replace("return 1", "return 2"))[0].per_call
        };
        assert!(!method("def m(self):"));
        assert!(method("def m(self, y):"));
        assert!(!method("@staticmethod\n    def m(y):"));
    }

    #[test]
    fn a_body_whose_inferred_type_held_reaches_nothing() {
        let a = "def g(x: int):\n    return x\n\ny = g(1)\n\nclass C:\n    def m(self):\n        return 1\n";
        let b = a.replace("    return x\n", "    z = 1\n    return x\n");
        assert_eq!(reach(a, &b), names(&["g", "y"]));
        let found = inferred(a, &b);
        let g = Inferred {
            name: "g".into(),
            before: 4,
            after: 4,
            per_call: false,
        };
        assert_eq!(found, std::slice::from_ref(&g));
        assert_eq!(reach_settled(a, &b, &found), Reach::Nothing);
        // Each function is settled apart; a method is one too.
        let c = b.replace("return 1", "return 2");
        let found = inferred(a, &c);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[1].name, "m");
        assert_eq!(reach_settled(a, &c, &[g]), names(&["C"]));
        assert_eq!(reach_settled(a, &c, &found), Reach::Nothing);
        // A method that declares attributes, and a declared body, are not asked about.
        let d = "class D:\n    def m(self):\n        self.x = 1\n\ndef h() -> int:\n    return 1\n";
        let e = d
            .replace("self.x = 1", "self.x = 2")
            .replace("return 1", "return 2");
        assert!(inferred(d, &e).is_empty());
        assert_eq!(reach_settled(d, &e, &inferred(d, &e)), names(&["D"]));
    }

    #[test]
    fn changed_signatures_reach_their_names_and_their_dependents() {
        let a = "class A:\n    pass\n\ndef make() -> A:\n    return A()\n\ndef other() -> int:\n    return 1\n\nalias = make\n";
        let b = a.replace("class A:\n    pass", "class A:\n    x: int = 1");
        assert_eq!(reach(a, &b), names(&["A", "alias", "make"]));
        let c = a.replace("def other() -> int", "def other() -> str");
        assert_eq!(reach(a, &c), names(&["other"]));
    }

    #[test]
    fn what_the_rule_cannot_judge() {
        let base = "import os\nx = 1\n";
        for (after, why) in [
            ("from os import *\nx = 1\n", "star import"),
            ("import os\nx = 1\n__all__ = ['x']\n", "__all__"),
            ("import os\nx = 1\nprint(x)\n", "module-level statement"),
            (
                "import os\nx = 1\nif x:\n    y = 2\n",
                "module-level statement",
            ),
            (
                "import os\nx = 1\ndef __getattr__(n: str) -> int:\n    return 1\n",
                "__getattr__",
            ),
            ("import os\nx = (1\n", "parse"),
        ] {
            match reach(base, after) {
                Reach::Unknown(w) => assert!(w.contains(why), "{after:?}: {w}"),
                other => panic!("{after:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_method_to_or_from_a_stub_body_changes_its_class() {
        let a = "class P:\n    def m(self) -> int:\n        ...\n";
        let b = a.replace("...", "return 1");
        assert_eq!(reach(a, &b), names(&["P"]));
        let c = "class P:\n    def m(self) -> int:\n        return 2\n";
        assert_eq!(reach(&b, c), Reach::Nothing);
    }

    #[test]
    fn names_bound_out_of_sight_count() {
        // `:=` binds at module level, in a comprehension too.
        let a = "x = (y := 1)\nz = [w := i for i in range(3)]\n";
        let b = "x = (y := '')\nz = [w := str(i) for i in range(3)]\n";
        assert_eq!(reach(a, b), names(&["w", "x", "y", "z"]));
        // A function defined in an `if` follows what its unannotated body calls.
        let c = "import sys\ndef base():\n    return 1\nif sys:\n    def helper():\n        return base()\n";
        let d = c.replace("return 1", "return ''");
        match reach(c, &d) {
            Reach::Names(n) => assert!(n.contains("helper"), "{n:?}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn indentation_counts() {
        let a = "import sys\nif sys:\n    a = 1\nb = 2\n";
        let b = "import sys\nif sys:\n    a = 1\n    b = 2\n";
        assert!(matches!(reach(a, b), Reach::Unknown(_)));
    }

    #[test]
    fn moved_statements_change() {
        let a = "x = 1\nx = ''\n";
        let b = "x = ''\nx = 1\n";
        assert_eq!(reach(a, b), names(&["x"]));
    }
}
