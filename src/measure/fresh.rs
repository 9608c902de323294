//! Methods a change adds that no importer can see (docs/editing.md#a-new-method): a new method
//! ([`crate::python::members`]) whose name is a word of no other text of the program — no
//! other workspace Python file, no changed file's other text, none of the library code the
//! server reads ([`crate::python::library`]), no other method the change adds — is used by no
//! one, makes no protocol fit or stop fitting (a protocol would name it), clashes with no base
//! or sibling base and implements no abstract member (they would name it). [`super::scope`]
//! judges the rest of the change without it.
//!
//! When the library code cannot be told (no typeshed beside the server, no interpreter, an
//! archive on the import path), nothing is set aside.

use crate::orchestrator::Cx;
use crate::python::library;
use crate::python::members::{new_methods, without, NewMethod};
use crate::selector::resolve::Document;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

/// A changed module's new text without the methods set aside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    pub text: String,
    pub methods: Vec<NewMethod>,
}

impl Cut {
    fn ranges(&self) -> Vec<Range<usize>> {
        let mut r: Vec<Range<usize>> = self.methods.iter().map(|m| m.lines.clone()).collect();
        r.sort_by_key(|r| r.start);
        r
    }

    /// Offset `at` of the new text in the cut one (`None` inside a method set aside).
    pub fn to_cut(&self, at: usize) -> Option<usize> {
        let mut shift = 0;
        for r in self.ranges() {
            if r.contains(&at) {
                return None;
            }
            if r.end <= at {
                shift += r.len();
            }
        }
        Some(at - shift)
    }

    /// Offset `at` of the cut text in the new one.
    pub fn to_new(&self, at: usize) -> usize {
        let mut n = at;
        for r in self.ranges() {
            if r.start <= n {
                n += r.len();
            }
        }
        n
    }

    /// `Class.method` of each method set aside.
    pub fn named(&self) -> Vec<String> {
        self.methods
            .iter()
            .map(|m| format!("{}.{}", m.class, m.name))
            .collect()
    }
}

/// Per changed module (workspace-relative path), its new text without the new methods named
/// nowhere else; modules with none are absent.
pub type Cuts = BTreeMap<String, Cut>;

/// The [`Cuts`] of `changes` (each a document and its new text).
pub fn cuts(cx: &Cx<'_>, changes: &[(Document, String)]) -> Cuts {
    let found: Vec<(usize, Vec<NewMethod>)> = changes
        .iter()
        .enumerate()
        .filter(|(_, (d, _))| d.rel.ends_with(".py") && !d.abs.with_extension("pyi").exists())
        .map(|(i, (d, new))| (i, new_methods(&d.text, new)))
        .filter(|(_, m)| !m.is_empty())
        .collect();
    if found.is_empty() {
        return Cuts::new();
    }
    let Some(roots) = library_roots(cx) else {
        return Cuts::new();
    };
    let words = library::words(&roots);
    let texts: Vec<(&str, &str)> = changes
        .iter()
        .map(|(d, new)| (d.text.as_str(), new.as_str()))
        .collect();
    let mut named = named_in_changes(&found, &texts, &|w| words.may_contain(w));
    let asked: BTreeSet<&str> = found
        .iter()
        .flat_map(|(_, ms)| ms.iter().map(|m| m.name.as_str()))
        .filter(|n| !named.contains(*n))
        .collect();
    named.extend(in_workspace(cx, changes, &asked));
    let mut out = Cuts::new();
    for (i, methods) in found {
        let kept: Vec<NewMethod> = methods
            .into_iter()
            .filter(|m| !named.contains(&m.name))
            .collect();
        if kept.is_empty() {
            continue;
        }
        let (doc, new) = &changes[i];
        out.insert(
            doc.rel.clone(),
            Cut {
                text: without(new, &kept),
                methods: kept,
            },
        );
    }
    out
}

/// Where the library code the server reads is (`None` when it cannot be told).
pub(super) fn library_roots(cx: &Cx<'_>) -> Option<library::Roots> {
    // A directory inside the workspace is the workspace's when the index has files in it.
    let indexed = cx.ws().python_files();
    let covered = |p: &std::path::Path| match cx.ws().relative(p) {
        Some(rel) if rel.is_empty() => true,
        Some(rel) => indexed.iter().any(|f| f.starts_with(&format!("{rel}/"))),
        None => false,
    };
    library::roots(
        cx.python_path(),
        cx.server_command(),
        &cx.ws().root,
        &covered,
    )
}

/// The names of the methods `found` (per change, by index into `texts`: each change's text
/// before and after) that are named elsewhere: in a text of the change other than the one
/// adding them (the module's own text before included), in the `library` code, or by another
/// method found (two classes gaining one name may clash in a class deriving from both).
fn named_in_changes(
    found: &[(usize, Vec<NewMethod>)],
    texts: &[(&str, &str)],
    library: &dyn Fn(&str) -> bool,
) -> BTreeSet<String> {
    let all: Vec<&str> = found
        .iter()
        .flat_map(|(_, ms)| ms.iter().map(|m| m.name.as_str()))
        .collect();
    let mut named = BTreeSet::new();
    for (i, methods) in found {
        for m in methods {
            let twice = all.iter().filter(|n| **n == m.name).count() > 1;
            let in_texts = texts.iter().enumerate().any(|(j, (before, after))| {
                has_word(before, &m.name) || (j != *i && has_word(after, &m.name))
            });
            if twice || in_texts || library(&m.name) {
                named.insert(m.name.clone());
            }
        }
    }
    named
}

/// Those of `names` that are words of a workspace Python file the change does not edit.
fn in_workspace(
    cx: &Cx<'_>,
    changes: &[(Document, String)],
    names: &BTreeSet<&str>,
) -> Vec<String> {
    let mut out = Vec::new();
    if names.is_empty() {
        return out;
    }
    unedited_texts(cx, changes, &mut |text| {
        out.extend(
            names
                .iter()
                .filter(|n| !out.iter().any(|o: &String| o == *n) && has_word(text, n))
                .map(|n| n.to_string())
                .collect::<Vec<_>>(),
        );
        out.len() < names.len()
    });
    out
}

/// Call `each` with the text of every workspace Python file `changes` do not edit, until it
/// returns false.
pub(super) fn unedited_texts(
    cx: &Cx<'_>,
    changes: &[(Document, String)],
    each: &mut dyn FnMut(&str) -> bool,
) {
    let edited: BTreeSet<&str> = changes.iter().map(|(d, _)| d.rel.as_str()).collect();
    for rel in cx.ws().python_files() {
        if edited.contains(rel.as_str()) {
            continue;
        }
        let Ok(bytes) = std::fs::read(cx.ws().root.join(&rel)) else {
            continue;
        };
        if !each(&String::from_utf8_lossy(&bytes)) {
            return;
        }
    }
}

/// Whether `word` occurs in `text` as a whole word (as [`crate::python::surface::words`]
/// splits it).
pub fn has_word(text: &str, word: &str) -> bool {
    let inner = |c: char| c == '_' || c.is_alphanumeric();
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(inner) && !after.is_some_and(inner)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_map_across_the_methods_set_aside() {
        let m = |lines: Range<usize>| NewMethod {
            class: "C".into(),
            name: "g".into(),
            lines,
        };
        let cut = Cut {
            text: String::new(),
            methods: vec![m(30..40), m(10..20)],
        };
        assert_eq!(cut.to_cut(5), Some(5));
        assert_eq!(cut.to_cut(15), None);
        assert_eq!(cut.to_cut(20), Some(10));
        assert_eq!(cut.to_cut(45), Some(25));
        for at in [0, 5, 10, 15, 25] {
            assert_eq!(cut.to_cut(cut.to_new(at)), Some(at), "{at}");
        }
    }

    #[test]
    fn a_name_found_elsewhere_is_not_set_aside() {
        let m = |name: &str| NewMethod {
            class: "C".into(),
            name: name.into(),
            lines: 0..0,
        };
        let texts = [
            ("class C: ...\n", "class C:\n    def a(self): ...\n"),
            ("x = 1\n", "from m import C\nC().b()\n"),
            ("y = 'c'\n", "y = 2\n"),
        ];
        let found = vec![
            (0, vec![m("a"), m("b"), m("c"), m("d"), m("e")]),
            (2, vec![m("e")]),
        ];
        let library = |w: &str| w == "d";
        let named = named_in_changes(&found, &texts, &library);
        // `a` only in the text adding it; `b` in another change's new text; `c` in a text
        // before; `d` in the library; `e` added twice.
        assert_eq!(named.into_iter().collect::<Vec<_>>(), ["b", "c", "d", "e"]);
    }

    #[test]
    fn a_word_is_whole() {
        assert!(has_word("x._helper(1)", "_helper"));
        assert!(has_word("\"_helper\"", "_helper"));
        assert!(!has_word("x._helper2(1)", "_helper"));
        assert!(!has_word("x.a_helper", "_helper"));
        assert!(has_word("a_helper _helper", "_helper"));
    }
}
