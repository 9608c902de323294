//! The return types a server infers for functions without a declared one, read from its hover
//! on the function's name (Pyright: `(function) def f(x: int) -> list[str]`), asked before and
//! after a change: a changed body whose function the server shows with the same signature both
//! times reaches no importer through it (docs/editing.md#what-is-re-checked).
//!
//! A signature with `Unknown` in its return type counts only for a function Pyright does not
//! infer again at each call site: where it cannot infer a return type fully, it infers it again
//! from the arguments given, which no hover of the function shows — unless the function is
//! decorated, `async`, or has no parameter of unknown type
//! ([`crate::python::reach::Inferred::per_call`]). Only servers whose definition declares the
//! quirk (`hover-infers`: the built-in Pyrights) are asked; others' hovers need not show
//! inferred types at all.

use super::scope::Settled;
use super::speculate::with_text;
use crate::error::Result;
use crate::lsp::typed;
use crate::orchestrator::Cx;
use crate::selector::resolve::Document;
use lsp_types::request::HoverRequest;
use lsp_types::HoverParams;
use serde_json::Value;
use std::collections::BTreeMap;

/// Most functions asked about per change (two hovers each); beyond it, none is.
pub const MAX_ASKED: usize = 16;

/// The signatures shown for each function asked about, by (changed file, the name's offset
/// before, after): before and after (`None`: no signature shown). pr-v2's structural term
/// reads a return type from them rather than asking the same hovers again.
pub type Shown = BTreeMap<(String, usize, usize), (Option<String>, Option<String>)>;

/// [`Shown`] from [`signatures`]' answers, before and after, for `asked`.
pub fn shown(asked: &Settled, before: &[Option<String>], after: &[Option<String>]) -> Shown {
    let mut answers = before.iter().cloned().zip(after.iter().cloned());
    let mut out = Shown::new();
    for (rel, functions) in asked {
        for f in functions {
            if let Some(pair) = answers.next() {
                out.insert((rel.clone(), f.before, f.after), pair);
            }
        }
    }
    out
}

/// The signatures the server shows for the functions of `asked` in each changed document:
/// as the text is before the change (`after` false) or after it. The session must hold that
/// text. A hover that fails or shows nothing is `None` (that function is not settled: its
/// importers are re-checked); only a server that cannot be reached fails the check.
pub async fn signatures(
    cx: &mut Cx<'_>,
    changes: &[(Document, String)],
    asked: &Settled,
    after: bool,
) -> Result<Vec<Option<String>>> {
    let mut out = Vec::new();
    for (doc, new) in changes {
        let Some(functions) = asked.get(&doc.rel) else {
            continue;
        };
        let shown = if after {
            with_text(doc, new)
        } else {
            doc.clone()
        };
        for f in functions {
            let at = if after { f.after } else { f.before };
            let session = cx.session().await?;
            let Ok(position) = typed::at(&shown, at, session.encoding) else {
                out.push(None);
                continue;
            };
            let hover = session
                .request::<HoverRequest>(HoverParams {
                    text_document_position_params: position,
                    work_done_progress_params: Default::default(),
                })
                .await;
            out.push(hover.ok().and_then(|h| signature(&typed::json(&h))));
        }
    }
    Ok(out)
}

/// The functions of `asked` whose signature `shown` is the same text before and after, and says
/// what a caller gets ([`trusted`], for a function inferred per call).
pub fn held(asked: &Settled, shown: &Shown) -> Settled {
    let mut out = Settled::new();
    for (rel, functions) in asked {
        for f in functions {
            let Some((Some(b), Some(a))) = shown.get(&(rel.clone(), f.before, f.after)) else {
                continue;
            };
            if b == a && (!f.per_call || trusted(b)) {
                out.entry(rel.clone()).or_default().push(f.clone());
            }
        }
    }
    out
}

/// The first code block of a hover, its whitespace collapsed.
pub fn signature(hover: &Value) -> Option<String> {
    let text = hover["contents"]["value"]
        .as_str()
        .or(hover["contents"].as_str())?;
    let block = text.split("```").nth(1)?;
    let block = block.strip_prefix("python").unwrap_or(block);
    let sig = block.split_whitespace().collect::<Vec<_>>().join(" ");
    (!sig.is_empty()).then_some(sig)
}

/// The return type in a signature `sig` ([`signature`]): what follows the `def`'s parameter
/// list and its `->`; `None` for a signature that is no `def`.
pub fn return_type(sig: &str) -> Option<&str> {
    let rest = after_parameters(sig)?.trim_start();
    Some(rest.strip_prefix("->").unwrap_or(rest).trim())
}

/// Whether the return type in `sig` (all of it when it is no `def`) is free of `Unknown`.
fn trusted(sig: &str) -> bool {
    let ret = match (return_type(sig), sig.contains(" def ")) {
        (Some(ret), _) => ret,
        (None, true) => return false,
        (None, false) => sig,
    };
    !crate::python::surface::words(ret).any(|w| w == "Unknown")
}

/// What follows the parameter list of the `def` in `sig`.
fn after_parameters(sig: &str) -> Option<&str> {
    let start = sig.find(" def ")? + 5;
    let open = start + sig[start..].find('(')?;
    let mut depth = 0usize;
    for (i, c) in sig[open..].char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(&sig[open + i + 1..]);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::reach::Inferred;
    use serde_json::json;

    fn hover(code: &str) -> Value {
        json!({"contents": {"kind": "markdown", "value": format!("```python\n{code}\n```\n---\nDoc.")}})
    }

    #[test]
    fn a_signature_counts_when_its_return_type_is_known() {
        let sig = |c: &str| signature(&hover(c)).unwrap();
        let g = sig("(function) def g(\n    x: Unknown,\n    y: int = 1\n) -> list[str]");
        assert_eq!(g, "(function) def g( x: Unknown, y: int = 1 ) -> list[str]");
        assert!(trusted(&g), "unknown parameters do not matter");
        assert_eq!(return_type(&g), Some("list[str]"));
        let w = sig("(function) def w(f: int) -> ((x: int) -> str)");
        assert_eq!(return_type(&w), Some("((x: int) -> str)"));
        assert_eq!(return_type("(property) p: int"), None);
        assert!(!trusted(&sig("(function) def f(x: Unknown) -> Unknown")));
        assert!(!trusted(&sig(
            "(method) def m(self: Self@C, a: int) -> dict[str, Unknown]"
        )));
        assert!(!trusted(&sig(
            "(function) def w(f: int) -> ((x: int) -> Unknown)"
        )));
        assert!(trusted(&sig("(property) p: int")));
        assert!(!trusted(&sig("(variable) v: Unknown")));
        assert!(trusted(&sig("(function) def u() -> UnknownError")));
        assert_eq!(signature(&json!({"contents": ""})), None);
    }

    #[test]
    fn held_keeps_the_functions_shown_the_same() {
        // Each function's name at its own offset, as in a module.
        let at = |name: &str| {
            ["one", "two", "three"]
                .iter()
                .position(|n| *n == name)
                .unwrap()
        };
        let f = |name: &str| Inferred {
            name: name.into(),
            before: 10 * at(name),
            after: 10 * at(name) + 1,
            per_call: true,
        };
        let asked = Settled::from([
            ("a.py".to_string(), vec![f("one"), f("two")]),
            ("b.py".to_string(), vec![f("three")]),
        ]);
        let s = |t: &str| Some(t.to_string());
        let before = [
            s("def one() -> int"),
            s("def two() -> int"),
            s("def three() -> str"),
        ];
        let after = [s("def one() -> int"), s("def two() -> str"), None];
        let shown_now = shown(&asked, &before, &after);
        assert_eq!(
            shown_now[&("a.py".to_string(), 10, 11)],
            (s("def two() -> int"), s("def two() -> str"))
        );
        let held_now = held(&asked, &shown_now);
        assert_eq!(
            held_now,
            Settled::from([("a.py".to_string(), vec![f("one")])])
        );
        // `Unknown` in the return type holds only for a function not inferred per call.
        let unknown = [s("def one(a) -> list[Unknown]")];
        let once = |per_call: bool| {
            let g = Inferred {
                per_call,
                ..f("one")
            };
            let asked = Settled::from([("a.py".to_string(), vec![g])]);
            held(&asked, &shown(&asked, &unknown, &unknown)).len()
        };
        assert_eq!((once(true), once(false)), (0, 1));
    }
}
