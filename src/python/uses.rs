//! The words of a module's text that may name something another module defines: every
//! identifier-like word ([`super::surface::words`]: code, strings — a string annotation names
//! types — and comments, for type comments), less the occurrences that bind and look nothing up
//! ([`super::surface::binding`]): a keyword argument's keyword (`f(name=…)`, `dict(name=…)`,
//! `class C(metaclass=…)`) binds a parameter of the callee, which the text names elsewhere (or
//! reaches through a name it uses) when a change can alter it; a parameter's name (`def g(name=1)`)
//! binds a local. An importer naming a changed name only so sees nothing of it. A text that
//! does not parse cleanly keeps every word.

use super::surface::{binding, parse_clean, words};
use std::collections::{BTreeMap, BTreeSet};

/// The words of `text` that may be uses of a name (see the module doc).
pub fn used_words(text: &str) -> BTreeSet<String> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for w in words(text) {
        *counts.entry(w).or_default() += 1;
    }
    for bound in bindings(text) {
        if let Some(n) = counts.get_mut(&bound) {
            *n = n.saturating_sub(1);
        }
    }
    counts
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(w, _)| w)
        .collect()
}

/// The names `text` binds without looking them up, one per occurrence (none when the text does
/// not parse cleanly). Walked with a cursor: deep expressions need no stack.
fn bindings(text: &str) -> Vec<String> {
    let Some(tree) = parse_clean(text) else {
        return Vec::new();
    };
    let src = text.as_bytes();
    let mut out = Vec::new();
    let mut cursor = tree.walk();
    loop {
        let node = cursor.node();
        let mut kids = node.walk();
        for c in node.children(&mut kids).filter(|c| binding(node, *c)) {
            out.push(c.utf8_text(src).unwrap_or_default().to_string());
        }
        if cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return out;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn used(text: &str, word: &str) -> bool {
        used_words(text).contains(word)
    }

    #[test]
    fn a_keyword_or_a_parameter_names_nothing() {
        let text = "from m import f\nx = dict(compose=[1], flip=2)\ny = f(grow=3)\n";
        assert!(!used(text, "compose"));
        assert!(!used(text, "flip"));
        assert!(!used(text, "grow"));
        assert!(used(text, "f"));
        assert!(used(text, "dict"));
        assert!(!used("class C(metaclass=Meta): pass\n", "metaclass"));
        // A parameter's name binds a local.
        assert!(!used(
            "def g(compose=1, *flip, grow: int = 2): pass\n",
            "compose"
        ));
        assert!(!used(
            "def g(compose=1, *flip, grow: int = 2): pass\n",
            "flip"
        ));
        assert!(!used("g = lambda compose: 0\n", "compose"));
        assert!(used("class C(metaclass=Meta): pass\n", "Meta"));
    }

    #[test]
    fn the_same_word_used_elsewhere_still_counts() {
        // As a value, a name, an attribute, a string annotation or a type comment.
        for text in [
            "x = dict(compose=compose)\n",
            "x = dict(compose=1)\ncompose(2)\n",
            "x = dict(compose=1)\nm.compose\n",
            "x = dict(compose=1)\ny: 'compose'\n",
            "x = dict(compose=1)\ny = z  # type: compose\n",
            "def g(compose): return compose\n",
            "def g(x=compose): pass\n",
            "def g(x: compose): pass\n",
            "x = dict(compose=1, **{'compose': 2})\n",
        ] {
            assert!(used(text, "compose"), "{text}");
        }
    }

    #[test]
    fn a_text_that_does_not_parse_keeps_every_word() {
        assert!(used("x = dict(compose=1\n", "compose"));
    }
}
