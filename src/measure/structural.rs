//! pr-v2's structural facts of a change (`--reward pr-v2`): what a diagnostics count misses,
//! read from the tree-sitter outlines before and after and from the server's references and
//! hovers, on its in-memory documents only.
//!
//! - a public function or class the change removes, still referenced from a file it did not
//!   touch;
//! - a function whose parameters change incompatibly (one dropped or renamed without a
//!   `*args`/`**kwargs` to catch it, a required one added, required ones reordered), counted
//!   per call site left in a file the change did not touch;
//! - a function the change edits whose return type, as the server infers it, changes while
//!   something references it.

use crate::error::Result;
use crate::lsp::typed;
use crate::measure::inferred::Shown;
use crate::measure::speculate::{self, with_text, Speculation};
use crate::orchestrator::Cx;
use crate::relocate::outline::{self, Def, DefKind};
use crate::reward::v2::{self, Structural};
use crate::selector::resolve::Document;
use crate::workspace::walk::is_python;
use crate::workspace::{path_to_uri, uri_to_path};
use lsp_types::request::{HoverRequest, References};
use lsp_types::{HoverParams, Location, Position, ReferenceContext, ReferenceParams};
use serde_json::Value;
use std::collections::BTreeSet;

/// Most edited functions whose return types are compared per step (two hovers each, when the
/// speculation was not shown their signatures; the count the term has always kept).
const MAX_RETURN_CHECKS: usize = 10;

fn defs(text: &str) -> Vec<Def> {
    outline::parse(text)
        .map(|t| outline::definitions(&t, text))
        .unwrap_or_default()
}

fn public(d: &Def) -> bool {
    d.qual.len() <= 2 && d.kind != DefKind::Variable && d.qual.iter().all(|q| !q.starts_with('_'))
}

/// One parameter of an outline shape.
struct Param {
    name: String,
    default: bool,
    /// `*args` or `**kwargs`.
    star: bool,
    /// After a bare `*` or `*args`: keyword-only.
    kw_only: bool,
}

fn params(shape: &str) -> Vec<Param> {
    let inner = shape
        .split_once('(')
        .map(|(_, r)| r.trim_end_matches(')'))
        .unwrap_or("");
    let mut kw_only = false;
    let mut out = Vec::new();
    for p in inner.split(',').filter(|p| !p.is_empty() && *p != "/") {
        if p == "*" {
            kw_only = true;
            continue;
        }
        let star = p.starts_with('*');
        out.push(Param {
            name: p.trim_start_matches('*').trim_end_matches('=').to_string(),
            default: p.ends_with('='),
            star,
            kw_only,
        });
        kw_only |= star && !p.starts_with("**");
    }
    out
}

/// Whether callers written for `before` may break against `after`.
pub fn breaking(before: &str, after: &str) -> bool {
    let (b, a) = (params(before), params(after));
    let catches_all = a.iter().any(|p| p.star);
    let find = |list: &[Param], n: &str| -> Option<usize> {
        list.iter().position(|p| p.name == n && !p.star)
    };
    let dropped = b.iter().any(|p| !p.star && find(&a, &p.name).is_none()) && !catches_all;
    let required_added = a
        .iter()
        .any(|p| !p.default && !p.star && find(&b, &p.name).is_none());
    // A required positional parameter that moved, or became keyword-only.
    let moved = b.iter().enumerate().any(|(i, p)| {
        !p.default
            && !p.star
            && !p.kw_only
            && find(&a, &p.name).is_some_and(|j| j != i || a[j].kw_only)
    });
    dropped || required_added || moved
}

/// A location the server sent, as (workspace-relative path, byte offset of its end).
fn place(cx: &Cx<'_>, loc: &Location) -> Option<(String, usize, usize)> {
    let abs = uri_to_path(loc.uri.as_str())?;
    let rel = cx.ws().relative(&abs)?;
    let text = std::fs::read_to_string(&abs).ok()?;
    let index = crate::text::LineIndex::new(&text);
    let enc = cx.started()?.encoding;
    let at = |p: Position| index.offset_clamped(&text, p.line as usize, p.character as usize, enc);
    let (start, end) = (at(loc.range.start), at(loc.range.end));
    let call = text[end..].trim_start().starts_with('(');
    Some((rel, start, usize::from(call)))
}

/// References to the definition named at `offset` in `doc` (declaration excluded):
/// `(path, start, 1 if it is called there)`.
async fn references(
    cx: &mut Cx<'_>,
    doc: &Document,
    offset: usize,
) -> Result<Vec<(String, usize, usize)>> {
    let session = cx.session().await?;
    let refs = session
        .request::<References>(ReferenceParams {
            text_document_position: typed::at(doc, offset, session.encoding)?,
            context: ReferenceContext {
                include_declaration: false,
            },
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        })
        .await?;
    Ok(refs.iter().flatten().filter_map(|l| place(cx, l)).collect())
}

/// The return type in a hover's signature (`def f(x) -> int` → `int`).
fn return_type(hover: &Value) -> Option<String> {
    return_type_of(&super::inferred::signature(hover)?)
}

/// The return type in a signature as [`super::inferred::signature`] reads it.
fn return_type_of(sig: &str) -> Option<String> {
    super::inferred::return_type(sig).map(str::to_string)
}

async fn hover_at(cx: &mut Cx<'_>, doc: &Document, offset: usize) -> Result<Option<String>> {
    let session = cx.session().await?;
    session.sync_document(&path_to_uri(&doc.abs), doc);
    let hover = session
        .request::<HoverRequest>(HoverParams {
            text_document_position_params: typed::at(doc, offset, session.encoding)?,
            work_done_progress_params: Default::default(),
        })
        .await?;
    Ok(return_type(&typed::json(&hover)))
}

/// Everything pr-v2 measures of a change beside pr-v1's count: diagnostics by kind before
/// and after, the run-time errors left that git HEAD does not have, the structural facts.
/// pr-v3's test term is read from `pending` when [`super::tests_term::start_v3`] started it
/// (its run goes on while the server answers), else selected and run here.
pub async fn measure_v2(
    cx: &mut Cx<'_>,
    spec: &Speculation,
    changes: &[(Document, String)],
    pending: Option<super::tests_term::PendingV3>,
) -> Result<v2::Measured> {
    let (mut tests, mut tests3) = (None, None);
    let pending = match (cx.opts().tests, pending) {
        (Some(_), Some(p)) if cx.opts().reward.is_v3() => Some(p),
        (Some(budget), _) if cx.opts().reward.is_v3() => {
            Some(super::tests_term::start_v3(cx, changes, budget).await?)
        }
        (Some(budget), _) => {
            tests = Some(super::tests_term::run(cx, changes, budget).await?);
            None
        }
        (None, _) => None,
    };
    let remaining = super::baseline::remaining(cx, spec).await?;
    // The structural terms read Python outlines: measured when every change is Python.
    let structural = match changes.iter().all(|(d, _)| is_python(&d.rel)) {
        true => Some(measure(cx, changes, &spec.shown).await?),
        false => None,
    };
    if let Some(p) = pending {
        tests3 = Some(super::tests_term::finish_v3(cx, p).await?);
    }
    Ok(v2::Measured {
        before: Some(speculate::tally(&spec.before)),
        after: Some(speculate::tally(&spec.after)),
        remaining: Some(remaining),
        structural,
        tests,
        tests3,
    })
}

/// Measure the structural facts of `changes` (each document with its new text). The server
/// must show the original texts when this is called, and does again when it returns. The
/// signatures a speculation was shown (`shown`) are read, not asked again.
pub async fn measure(
    cx: &mut Cx<'_>,
    changes: &[(Document, String)],
    shown: &Shown,
) -> Result<Structural> {
    let touched: BTreeSet<&str> = changes.iter().map(|(d, _)| d.rel.as_str()).collect();
    let elsewhere = |refs: &[(String, usize, usize)]| {
        refs.iter()
            .filter(|r| !touched.contains(r.0.as_str()))
            .count() as u64
    };
    let mut s = Structural::default();
    let mut edited: Vec<Edited> = Vec::new();
    for (doc, new) in changes {
        let (before, after) = (defs(&doc.text), defs(new));
        {
            let session = cx.session().await?;
            session.sync_document(&path_to_uri(&doc.abs), doc);
        }
        for (k, d) in before.iter().enumerate().filter(|(_, d)| public(d)) {
            // The same occurrence of the name after (overloads share one).
            let nth = before[..k].iter().filter(|x| x.qual == d.qual).count();
            let now = after.iter().filter(|a| a.qual == d.qual).nth(nth);
            match now {
                None => {
                    let refs = references(cx, doc, d.name.0).await?;
                    s.removed_referenced += u64::from(elsewhere(&refs) > 0);
                }
                Some(a) if d.kind == DefKind::Function && breaking(&d.shape, &a.shape) => {
                    let refs = references(cx, doc, d.name.0).await?;
                    let calls: Vec<_> = refs.into_iter().filter(|r| r.2 == 1).collect();
                    s.stale_call_sites += elsewhere(&calls);
                }
                Some(a) if d.kind == DefKind::Function => {
                    let changed = doc.text.get(d.node.0..d.node.1) != new.get(a.node.0..a.node.1);
                    if changed && edited.len() < MAX_RETURN_CHECKS {
                        let known = match shown.get(&(doc.rel.clone(), d.name.0, a.name.0)) {
                            Some((Some(b), Some(a))) => Some((b.clone(), a.clone())),
                            _ => None,
                        };
                        edited.push(Edited {
                            before: doc.clone(),
                            at: d.name.0,
                            after: with_text(doc, new),
                            // The name's offset in the new text, for the hover after.
                            after_at: a.name.0,
                            known,
                        });
                    }
                }
                _ => {}
            }
        }
    }
    s.return_changed = returns_changed(cx, &edited).await?;
    Ok(s)
}

/// An edited function whose inferred return type is compared: its name in the text before and
/// after, and the signatures a speculation was shown for it, if any.
struct Edited {
    before: Document,
    at: usize,
    after: Document,
    after_at: usize,
    known: Option<(String, String)>,
}

/// The edited functions whose inferred return type changed while they are referenced: read
/// from the signatures shown, or hovered before and after.
async fn returns_changed(cx: &mut Cx<'_>, edited: &[Edited]) -> Result<u64> {
    let mut n = 0;
    for e in edited {
        let (was, now) = match &e.known {
            Some((b, a)) => (return_type_of(b), return_type_of(a)),
            None => {
                let was = hover_at(cx, &e.before, e.at).await?;
                let now = hover_at(cx, &e.after, e.after_at).await?;
                // Back to the original text before asking for references.
                cx.session()
                    .await?
                    .sync_document(&path_to_uri(&e.before.abs), &e.before);
                (was, now)
            }
        };
        if was.is_some() && now.is_some() && was != now {
            n += u64::from(!references(cx, &e.before, e.at).await?.is_empty());
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn incompatible_signature_changes() {
        assert!(!breaking("def(a,b)", "def(a,b)"));
        assert!(!breaking("def(a,b)", "def(a,b,c=)"));
        assert!(breaking("def(a,b)", "def(a,b,c)"));
        assert!(breaking("def(a,b)", "def(a)"));
        assert!(breaking("def(a,b)", "def(a,c)"));
        assert!(breaking("def(a,b)", "def(b,a)"));
        assert!(!breaking("def(a,b)", "def(a,*args)"));
        assert!(!breaking("def(self,a=)", "def(self,a=,*,k=)"));
        assert!(breaking("def(self,a)", "def(self,*,a)"));
        assert!(!breaking("def(self,*,a)", "def(self,*,b=,a)"));
        assert!(breaking("def(self,*,a)", "def(self)"));
    }

    #[test]
    fn return_types_from_hovers() {
        let h = json!({"contents": {"kind": "markdown", "value": "```python\n(function) def f(x: int) -> list[int]\n```\n---\nDoc -> not this"}});
        assert_eq!(return_type(&h).as_deref(), Some("list[int]"));
        let h =
            json!({"contents": {"kind": "markdown", "value": "```python\n(variable) x: int\n```"}});
        assert_eq!(return_type(&h), None);
    }
}
