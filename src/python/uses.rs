//! The words of a module's text that may name something another module defines: every
//! identifier-like word ([`super::surface::words`]: code, strings — a string annotation names
//! types — and comments, for type comments), less the occurrences that are the keyword of a
//! keyword argument (`f(name=…)`, `dict(name=…)`, `class C(metaclass=…)`). Such a keyword binds
//! a parameter of the callee and looks no name up: the callee is named elsewhere in the text
//! (or reaches it through a name the text uses), so an importer that names a changed name only
//! as keywords sees nothing of it. A text that does not parse cleanly keeps every word.

use super::surface::{parse_clean, words};
use std::collections::{BTreeMap, BTreeSet};

/// The words of `text` that may be uses of a name (see the module doc).
pub fn used_words(text: &str) -> BTreeSet<String> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for w in words(text) {
        *counts.entry(w).or_default() += 1;
    }
    for keyword in keywords(text) {
        if let Some(n) = counts.get_mut(&keyword) {
            *n = n.saturating_sub(1);
        }
    }
    counts
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(w, _)| w)
        .collect()
}

/// The keywords of every keyword argument in `text`, one per occurrence (none when the text
/// does not parse cleanly). Walked with a cursor: deep expressions need no stack.
fn keywords(text: &str) -> Vec<String> {
    let Some(tree) = parse_clean(text) else {
        return Vec::new();
    };
    let src = text.as_bytes();
    let mut out = Vec::new();
    let mut cursor = tree.walk();
    loop {
        let node = cursor.node();
        if node.kind() == "keyword_argument" {
            if let Some(name) = node.child_by_field_name("name") {
                out.push(name.utf8_text(src).unwrap_or_default().to_string());
            }
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
    fn a_keyword_argument_names_nothing() {
        let text = "from m import f\nx = dict(compose=[1], flip=2)\ny = f(grow=3)\n";
        assert!(!used(text, "compose"));
        assert!(!used(text, "flip"));
        assert!(!used(text, "grow"));
        assert!(used(text, "f"));
        assert!(used(text, "dict"));
        assert!(!used("class C(metaclass=Meta): pass\n", "metaclass"));
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
            "def g(compose=1): pass\n",
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
