//! Changed methods judged by name (docs/editing.md#a-changed-method): when a change touches
//! only plain methods of a module's classes ([`crate::python::methods::narrowed`]), an importer
//! that names none of them sees nothing changed — unless a protocol declares one of them (then a
//! class can fit it or stop fitting it at a call that never names the method), or the importer
//! derives a class from two bases ([`crate::python::methods::multiple_bases`], asked by
//! [`super::scope`]). [`free`] tells which names no protocol declares: none of the library code
//! the server reads ([`crate::python::library::protocols`]), none of the workspace's Python
//! files, none of the changed texts before or after. When the library code cannot be told,
//! no name is free.

use super::fresh::has_word;
use crate::orchestrator::Cx;
use crate::python::library;
use crate::python::methods::protocol_members;
use crate::selector::resolve::Document;
use std::collections::BTreeSet;

/// Those of `asked` that no protocol of the program declares.
pub fn free(
    cx: &Cx<'_>,
    changes: &[(Document, String)],
    asked: &BTreeSet<String>,
) -> BTreeSet<String> {
    if asked.is_empty() {
        return BTreeSet::new();
    }
    let Some(roots) = super::fresh::library_roots(cx) else {
        return BTreeSet::new();
    };
    let protocols = library::protocols(&roots);
    let mut declared: BTreeSet<String> = asked
        .iter()
        .filter(|n| protocols.may_contain(n))
        .cloned()
        .collect();
    let mut look = |text: &str| {
        if asked
            .iter()
            .any(|n| !declared.contains(n) && has_word(text, n))
        {
            let found = protocol_members(text);
            declared.extend(asked.iter().filter(|n| found.contains(*n)).cloned());
        }
    };
    for (doc, new) in changes {
        look(&doc.text);
        look(new);
    }
    super::fresh::unedited_texts(cx, changes, &mut |text| {
        look(text);
        true
    });
    asked.difference(&declared).cloned().collect()
}
