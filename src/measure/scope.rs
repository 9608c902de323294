//! Which files a speculative check re-checks (docs/editing.md#what-is-re-checked): the changed
//! files always; an importer of a changed module only when the change can alter what it sees
//! (the others are not pulled at all: their diagnostics cannot change).
//!
//! For each changed Python module, [`crate::python::reach`] compares its surface before and
//! after: nothing reaches an importer (comments, docstrings, bodies whose types cannot leak,
//! bodies of functions without a declared return type whose inferred one the server reported
//! unchanged — [`Settled`], asked by [`super::speculate`]), or a set of names, or the rule
//! cannot judge. An importer is re-checked when one of the
//! changed modules it imports cannot be judged, or changes names it has a star import for, or
//! changes a name that occurs in its text as a word (anywhere: code, strings, comments — more
//! than it uses, never less). A stub (`.pyi`), or a module with a stub beside it, is not
//! judged. A new method named nowhere else in the program ([`super::fresh`]) is set aside:
//! the rest of the change is judged without it. A change to existing plain methods alone
//! ([`crate::python::methods`]) is judged by their names when no protocol declares one
//! ([`super::narrow`]): an importer is re-checked when it names one, has a star import, or
//! derives a class from two bases. `LANSER_CHECK_FULL=1` re-checks every importer, as before
//! the rule.

use super::fresh::{Cut, Cuts};
use crate::bundle::facts::{Checked, Skipped};
use crate::python::importers::{importers_of, Imported};
use crate::python::methods::{multiple_bases, narrowed};
use crate::python::reach::{inferred, reach_settled, Inferred, Reach};
use crate::python::uses::used_words;
use crate::selector::resolve::Document;
use crate::workspace::Workspace;
use std::collections::{BTreeMap, BTreeSet};

/// Which importers a speculation considers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every importer of a changed module (a rename, a code action: their plans change
    /// several files at once).
    Importers,
    /// The importers the change can alter (`check --patch`, the verified write).
    Reach,
}

/// Which of the method names asked no protocol of the program declares
/// ([`super::narrow::free`]).
pub type Free<'f> = &'f dyn Fn(&BTreeSet<String>) -> BTreeSet<String>;

/// Whether the environment asks for the full re-check (`LANSER_CHECK_FULL=1`).
pub fn forced_full() -> bool {
    std::env::var("LANSER_CHECK_FULL").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Per changed module, the functions whose changed body the server reported to infer the same
/// return type before and after.
pub type Settled = BTreeMap<String, Vec<Inferred>>;

/// Whether `scope` judges importers at all (else every importer is re-checked).
pub fn judged(scope: Scope) -> bool {
    scope == Scope::Reach && !forced_full()
}

/// The functions whose inferred return types would decide what importers a change reaches
/// (per changed module, at their offsets in the new text; none when `scope` re-checks every
/// importer anyway). A module's methods set aside in `cuts` are not among them.
pub fn to_settle(changes: &[(Document, String)], scope: Scope, cuts: &Cuts) -> Settled {
    if !judged(scope) {
        return Settled::new();
    }
    changes
        .iter()
        .filter(|(d, _)| d.rel.ends_with(".py") && stubbed(d).is_none())
        .map(|(d, new)| {
            let found = match cuts.get(&d.rel) {
                Some(cut) => inferred(&d.text, &cut.text)
                    .into_iter()
                    .map(|f| Inferred {
                        after: cut.to_new(f.after),
                        ..f
                    })
                    .collect(),
                None => inferred(&d.text, new),
            };
            (d.rel.clone(), found)
        })
        .filter(|(_, found)| !found.is_empty())
        .collect()
}

/// The files to pull for `changes` (the changed files and the importers to re-check, sorted)
/// and what was checked and skipped; each module's methods in `cuts` are set aside, and a
/// change to methods alone is judged by their names when `free` vouches for them.
pub fn files(
    ws: &Workspace,
    changes: &[(Document, String)],
    scope: Scope,
    settled: &Settled,
    cuts: &Cuts,
    free: Free<'_>,
) -> Checked {
    let touched: Vec<String> = changes.iter().map(|(d, _)| d.rel.clone()).collect();
    let found = importers_of(ws, &touched);
    let mut checked = Checked {
        files: touched.clone(),
        ..Checked::default()
    };
    checked.files.sort();
    if !judged(scope) {
        checked.importers = found.into_keys().collect();
        return checked;
    }
    let none = Vec::new();
    let mut reaches: BTreeMap<&str, Reach> = changes
        .iter()
        .map(|(d, new)| {
            let held = settled.get(&d.rel).unwrap_or(&none);
            (d.rel.as_str(), module_reach(d, new, held, cuts.get(&d.rel)))
        })
        .collect();
    unprotocolled(&mut reaches, free);
    for (rel, imported) in found {
        match skip_reason(&imported, &reaches, settled, cuts) {
            Some(reason) => checked.skipped.push(Skipped { path: rel, reason }),
            None => checked.importers.push(rel),
        }
    }
    checked
}

/// What changing `doc` to `new` can alter for an importer (`held`: the functions whose
/// inferred return types the server reported unchanged, at their offsets in `new`), the
/// methods of `cut` set aside; a change to methods alone is [`Reach::Members`].
fn module_reach(doc: &Document, new: &str, held: &[Inferred], cut: Option<&Cut>) -> Reach {
    if let Some(why) = stubbed(doc) {
        return Reach::Unknown(why.into());
    }
    let (text, held) = match cut {
        None => (new, held.to_vec()),
        Some(cut) => (
            cut.text.as_str(),
            held.iter()
                .filter_map(|h| {
                    Some(Inferred {
                        after: cut.to_cut(h.after)?,
                        ..h.clone()
                    })
                })
                .collect(),
        ),
    };
    match reach_settled(&doc.text, text, &held) {
        Reach::Names(names) => match narrowed(&doc.text, text, &held) {
            Some(members) => Reach::Members { members, names },
            None => Reach::Names(names),
        },
        other => other,
    }
}

/// Each [`Reach::Members`] of `reaches` whose methods a protocol may declare (not all among
/// what `free` returns for them) made [`Reach::Names`] again.
fn unprotocolled(reaches: &mut BTreeMap<&str, Reach>, free: Free<'_>) {
    let asked: BTreeSet<String> = reaches
        .values()
        .filter_map(|r| match r {
            Reach::Members { members, .. } => Some(members.iter().cloned()),
            _ => None,
        })
        .flatten()
        .collect();
    if asked.is_empty() {
        return;
    }
    let ok = free(&asked);
    for r in reaches.values_mut() {
        if let Reach::Members { members, names } = r {
            if !members.is_subset(&ok) {
                *r = Reach::Names(std::mem::take(names));
            }
        }
    }
}

/// Why a change to `doc` is beyond the rule because of a stub: it is one, or one is beside it.
fn stubbed(doc: &Document) -> Option<&'static str> {
    if doc.rel.ends_with(".pyi") {
        return Some("a stub changed");
    }
    doc.abs
        .with_extension("pyi")
        .exists()
        .then_some("a stub is beside the module")
}

/// Why `imported` needs no re-check, or `None` when it does.
fn skip_reason(
    imported: &Imported,
    reaches: &BTreeMap<&str, Reach>,
    settled: &Settled,
    cuts: &Cuts,
) -> Option<String> {
    let mut words_of: Option<BTreeSet<String>> = None;
    let mut why = Vec::new();
    for m in &imported.modules {
        match reaches.get(m.as_str())? {
            Reach::Unknown(_) => return None,
            Reach::Nothing => why.push(match settled.get(m) {
                Some(held) => format!(
                    "{m}: its surface is unchanged{} (the server infers the same return type \
                     for {})",
                    but_new(cuts.get(m)),
                    listed(&held.iter().map(|h| h.name.clone()).collect())
                ),
                None => format!("{m}: its surface is unchanged{}", but_new(cuts.get(m))),
            }),
            Reach::Names(_) | Reach::Members { .. } if imported.star => return None,
            Reach::Members { members, .. } => {
                let words = words_of.get_or_insert_with(|| used_words(&imported.text));
                if members.iter().any(|n| words.contains(n)) || multiple_bases(&imported.text) {
                    return None;
                }
                why.push(format!(
                    "{m}: changes only methods no protocol declares ({}), which it names none \
                     of, and it derives no class from two bases",
                    listed(members)
                ));
            }
            Reach::Names(names) => {
                let words = words_of.get_or_insert_with(|| used_words(&imported.text));
                if names.iter().any(|n| words.contains(n)) {
                    return None;
                }
                why.push(format!(
                    "{m}: names none of the names it changes ({})",
                    listed(names)
                ));
            }
        }
    }
    Some(why.join("; "))
}

/// What a module's surface gained that no importer can see: its new methods named nowhere
/// else in the program, if any were set aside.
fn but_new(cut: Option<&Cut>) -> String {
    match cut {
        Some(c) => format!(
            " but for new methods named nowhere else in the program ({})",
            listed(&c.named().into_iter().collect())
        ),
        None => String::new(),
    }
}

/// Up to five names, and how many more.
fn listed(names: &BTreeSet<String>) -> String {
    let shown: Vec<&str> = names.iter().take(5).map(String::as_str).collect();
    match names.len().saturating_sub(5) {
        0 => shown.join(", "),
        more => format!("{}, and {more} more", shown.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn imported(text: &str, star: bool) -> Imported {
        Imported {
            modules: vec!["pkg/m.py".into()],
            star,
            text: text.into(),
        }
    }

    fn reaches(r: Reach) -> BTreeMap<&'static str, Reach> {
        BTreeMap::from([("pkg/m.py", r)])
    }

    #[test]
    fn an_importer_is_skipped_only_when_no_changed_name_reaches_it() {
        let names = |n: &[&str]| Reach::Names(n.iter().map(|s| s.to_string()).collect());
        let uses_f = imported("from pkg.m import f\nf()\n", false);
        let none = Settled::new();
        assert!(
            skip_reason(&uses_f, &reaches(Reach::Nothing), &none, &Cuts::new())
                .unwrap()
                .contains("surface is unchanged")
        );
        assert!(
            skip_reason(&uses_f, &reaches(names(&["g"])), &none, &Cuts::new())
                .unwrap()
                .contains("(g)")
        );
        assert_eq!(
            skip_reason(&uses_f, &reaches(names(&["f"])), &none, &Cuts::new()),
            None
        );
        // A name in a string annotation or a comment counts too.
        let in_string = imported("from pkg import m\nx: \"m.g\" = m.h()\n", false);
        assert_eq!(
            skip_reason(&in_string, &reaches(names(&["g"])), &none, &Cuts::new()),
            None
        );
        // A star import takes every changed name; an unjudged change re-checks everyone.
        let star = imported("from pkg.m import *\n", true);
        assert_eq!(
            skip_reason(&star, &reaches(names(&["g"])), &none, &Cuts::new()),
            None
        );
        assert!(skip_reason(&star, &reaches(Reach::Nothing), &none, &Cuts::new()).is_some());
        let unknown = reaches(Reach::Unknown("why".into()));
        assert_eq!(skip_reason(&uses_f, &unknown, &none, &Cuts::new()), None);
        // A module the rule was not asked about is re-checked.
        assert_eq!(
            skip_reason(&uses_f, &BTreeMap::new(), &none, &Cuts::new()),
            None
        );
    }
}
