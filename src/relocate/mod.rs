//! Relocate (docs/relocation.md): resolve any selector against the workspace as it
//! is now, with the evidence of how.
//!
//! 1. A `docVersion` that is not the file's current version is looked up in the snapshot
//!    store ([`snapshot`]); a span on unchanged lines maps exactly through the diff (score
//!    1.0). A cursor or range whose snapshot is missing is `E/VERSION_SKEW`; one whose lines
//!    changed is searched for again as an anchor made from its old text.
//! 2. `py://`, `sym://` and `ast://` resolve structurally ([`structural`], the tree-sitter
//!    grammar of the file's language: [`grammars`]).
//! 3. Anchors match exactly, then by winnowed fingerprints ([`anchor`]).
//! 4. Candidates are scored and disambiguated ([`score`]).

pub mod anchor;
pub mod durable;
pub mod grammars;
pub mod other_outline;
pub mod outline;
pub mod score;
pub mod snapshot;
pub mod structural;

use crate::error::{ErrorCode, LanserError};
use crate::selector::resolve::{self, Document};
use crate::selector::{is_ident_char, AstSegment, PositionSpec, Role, SegmentKind, DEFAULT_CTX};
use crate::text::Encoding;
use crate::workspace::Workspace;
pub use score::{Candidate, Config, Evidence, Features, Rejected, SymbolInfo};
use std::path::{Path, PathBuf};
pub use structural::ParseCache;

/// Everything relocation needs besides the selector.
pub struct Context<'a> {
    pub ws: &'a Workspace,
    /// Column unit of cursor and range selectors.
    pub io: Encoding,
    pub cwd: &'a Path,
    pub config: Config,
    pub store: snapshot::Store,
    /// Parsed files reused across selectors of one workspace.
    pub cache: &'a structural::ParseCache,
    /// Files read before, reused while their bytes are the same.
    pub docs: &'a resolve::DocCache,
}

impl Context<'_> {
    /// The selector's file as it is on disk now.
    fn load(&self, abs: PathBuf, rel: String) -> crate::error::Result<Document> {
        let doc = self.docs.load(abs, rel)?;
        Ok(Document::clone(&doc))
    }
}

/// A resolved selector: a byte span in one document, and how it was found when that took
/// more than arithmetic (structural forms, anchors, a stale `docVersion`).
#[derive(Debug, Clone)]
pub struct Target {
    pub doc: Document,
    pub start: usize,
    pub end: usize,
    pub evidence: Option<Box<Evidence>>,
}

impl From<resolve::Span> for Target {
    fn from(s: resolve::Span) -> Target {
        Target {
            doc: s.doc,
            start: s.start,
            end: s.end,
            evidence: None,
        }
    }
}

/// Resolve `spec`; the target carries its [`Evidence`] unless it was a plain cursor or range
/// on an unchanged file.
pub fn relocate(cx: &Context, spec: &PositionSpec) -> Result<Target, Rejected> {
    match spec {
        PositionSpec::Cursor { .. } | PositionSpec::Range { .. } => direct(cx, spec),
        PositionSpec::Symbol { .. } | PositionSpec::Sym { .. } | PositionSpec::Ast { .. } => {
            structural_target(cx, spec)
        }
        PositionSpec::Anchor {
            path,
            snippet,
            ctx,
            hash,
            doc_version,
        } => {
            let (abs, rel) = cx.ws.resolve_user_path(path, cx.cwd)?;
            let doc = cx.load(abs, rel)?;
            let ctx = ctx.unwrap_or(DEFAULT_CTX) as usize;
            let old = doc_version
                .as_deref()
                .filter(|dv| *dv != doc.doc_version)
                .map(|dv| cx.store.get(dv));
            let old_text = match &old {
                None => Some(doc.text.clone()),
                Some(t) => t.clone(),
            };
            let what = spec.to_canonical();
            let job = AnchorJob {
                snippet,
                ctx,
                hash: hash.as_deref(),
                old_text: old_text.as_deref(),
                known: None,
            };
            anchor_target(cx, doc, &job, &what)
        }
    }
}

/// What to look for: `snippet` with `ctx` characters of context, pinned by `hash`;
/// `old_text` is the selector's version of the file when known, `known` the snippet's offset
/// in it when the caller knows it (a stale cursor).
struct AnchorJob<'a> {
    snippet: &'a str,
    ctx: usize,
    hash: Option<&'a str>,
    old_text: Option<&'a str>,
    known: Option<usize>,
}

/// Anchor relocation of a [`AnchorJob`] in `doc`.
fn anchor_target(
    cx: &Context,
    doc: Document,
    job: &AnchorJob,
    what: &str,
) -> Result<Target, Rejected> {
    let AnchorJob {
        snippet,
        ctx,
        hash,
        old_text,
        known,
    } = *job;
    let mut original = None;
    let mut old_span = None;
    if let Some(old) = old_text {
        let occ: Vec<usize> = match known {
            Some(s) => vec![s],
            None => anchor::exact_occurrences(old, snippet)
                .into_iter()
                .filter(|&s| {
                    hash.is_none_or(|h| anchor::window_hash(old, s, s + snippet.len(), ctx) == h)
                })
                .collect(),
        };
        if let [s] = occ[..] {
            let e = s + snippet.len();
            let (a, b) = anchor::window(old, s, e, ctx);
            let line = old[..s].matches('\n').count();
            original = Some(anchor::Original {
                line,
                window: old[a..b].to_string(),
                at: s - a,
            });
            old_span = Some((old.to_string(), s, e));
        }
    }
    let mut cands = anchor::candidates(0, &doc, snippet, ctx, hash, original.as_ref());
    if known.is_some() {
        // Found again by searching for old text: never more than a fuzzy match.
        for c in cands.iter_mut() {
            c.fuzzy = true;
        }
    }
    if let Some((old, s, e)) = &old_span {
        if let Some(m) = snapshot::map_span(old, &doc.text, *s, *e) {
            for c in cands.iter_mut() {
                c.exact |= (c.start, c.end) == m && !c.fuzzy;
            }
        }
    }
    let ev = score::decide(vec![doc], cands, &cx.config, what)?;
    Ok(target_of(ev))
}

fn target_of(ev: Evidence) -> Target {
    let c = &ev.candidates[0];
    Target {
        doc: ev.docs[c.doc].clone(),
        start: c.start,
        end: c.end,
        evidence: Some(Box::new(ev)),
    }
}

/// Cursor and range: direct on an unchanged file, else through the snapshot.
fn direct(cx: &Context, spec: &PositionSpec) -> Result<Target, Rejected> {
    let path = spec.path().unwrap_or_default();
    let (abs, rel) = cx.ws.resolve_user_path(path, cx.cwd)?;
    let doc = cx.load(abs, rel)?;
    let io = spec.indexing().unwrap_or(cx.io);
    let Some(dv) = spec.doc_version().filter(|dv| *dv != doc.doc_version) else {
        let (start, end) = resolve::span(&doc, spec, io)?;
        return Ok(Target {
            doc,
            start,
            end,
            evidence: None,
        });
    };
    let (rel, now) = (doc.rel.clone(), doc.doc_version.clone());
    let skew = |why: &str| {
        LanserError::new(
            ErrorCode::VersionSkew,
            format!("{rel} changed since the selector was made (docVersion {dv}, now {now}){why}"),
        )
    };
    let Some(old_text) = cx.store.get(dv) else {
        return Err(skew(" and that version is not in the snapshot store").into());
    };
    let old = Document::from_text(doc.abs.clone(), doc.rel.clone(), old_text);
    let (os, oe) = resolve::span(&old, spec, io).map_err(|e| {
        skew(&format!(
            ", and the selector does not fit the old version: {}",
            e.message
        ))
    })?;
    if let Some((s, e)) = snapshot::map_span(&old.text, &doc.text, os, oe) {
        let mut c = Candidate::new(
            0,
            (s, e),
            Features {
                ast: 1.0,
                module: 1.0,
                token: 1.0,
                prox: 1.0,
            },
        );
        c.exact = true;
        let ev = score::decide(vec![doc], vec![c], &cx.config, &spec.to_canonical())?;
        return Ok(target_of(ev));
    }
    // The selected lines changed: look for their old text again.
    let (ss, se) = anchor_text(&old.text, os, oe);
    let snippet = old.text[ss..se].to_string();
    let what = spec.to_canonical();
    let job = AnchorJob {
        snippet: &snippet,
        ctx: DEFAULT_CTX as usize,
        hash: None,
        old_text: Some(&old.text),
        known: Some(ss),
    };
    let mut t = anchor_target(cx, doc, &job, &what).map_err(|r| match r.error.code {
        ErrorCode::NotFound => Rejected::from(skew(", and the selected text is gone")),
        _ => r,
    })?;
    // Keep the selection's place inside the anchor.
    let (ds, de) = (os - ss, oe - ss);
    let len = t.end - t.start;
    let (s, e) = (t.start + ds.min(len), t.start + de.min(len));
    if t.doc.text.is_char_boundary(s) && t.doc.text.is_char_boundary(e) {
        t.start = s;
        t.end = e;
    }
    Ok(t)
}

/// The text to search for when a selection's lines changed: the selection itself when it is
/// long enough, else the identifier at it, else the rest of its line.
fn anchor_text(text: &str, s: usize, e: usize) -> (usize, usize) {
    if e > s && text[s..e].trim().chars().count() >= 3 {
        return (s, e);
    }
    let line_start = text[..s].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[s..].find('\n').map_or(text.len(), |i| s + i);
    let word_start = text[line_start..s]
        .char_indices()
        .rev()
        .take_while(|(_, c)| is_ident_char(*c))
        .last()
        .map_or(s, |(i, _)| line_start + i);
    let word_end = text[s..line_end]
        .char_indices()
        .find(|(_, c)| !is_ident_char(*c))
        .map_or(line_end, |(i, _)| s + i);
    if word_end > word_start && word_end - word_start >= 3 {
        return (word_start, word_end);
    }
    (s.min(line_end), line_end.max(e))
}

/// The file a `sym://` or `ast://[file=…]` selector names, made absolute, with its
/// workspace-relative path; refused when lanser has no outline for its type.
fn outlined_file(cx: &Context, path: &str, what: &str) -> Result<(PathBuf, String), Rejected> {
    let (abs, rel) = cx.ws.resolve_user_path(path, cx.cwd)?;
    if grammars::Grammar::for_path(&rel).is_none() {
        return Err(LanserError::usage(format!(
            "{what}: lanser has no outline for the type of {rel} (it reads {})",
            grammars::SUPPORTED
        ))
        .into());
    }
    if !abs.is_file() {
        return Err(LanserError::not_found(format!("{what}: no file {rel}")).into());
    }
    Ok((abs, rel))
}

/// The structural query a `sym://`, `py://` or `ast://` selector asks.
fn structural_query(
    cx: &Context,
    spec: &PositionSpec,
    what: &str,
) -> Result<structural::Query, Rejected> {
    match spec {
        PositionSpec::Sym {
            path,
            qualname,
            role,
            ..
        } => {
            let (abs, rel) = outlined_file(cx, path, what)?;
            Ok(structural::Query {
                module: rel,
                file: Some(abs),
                names: qualname.split('.').map(str::to_string).collect(),
                kinds: None,
                role: role.unwrap_or(Role::Def),
                overload: None,
                node: None,
            })
        }
        PositionSpec::Symbol {
            module,
            qualname,
            role,
            overload,
            ..
        } => Ok(structural::Query {
            module: module.clone(),
            file: None,
            names: qualname.split('.').map(str::to_string).collect(),
            kinds: None,
            role: role.unwrap_or(Role::Def),
            overload: *overload,
            node: None,
        }),
        PositionSpec::Ast { path, node, .. } => {
            let (module, file) = match path.first() {
                Some(AstSegment(SegmentKind::File, f)) => {
                    let (abs, rel) = outlined_file(cx, f, what)?;
                    (rel, Some(abs))
                }
                first => (first.map(|s| s.1.clone()).unwrap_or_default(), None),
            };
            Ok(structural::Query {
                module,
                file,
                names: path.iter().skip(1).map(|s| s.1.clone()).collect(),
                kinds: Some(
                    path.iter()
                        .skip(1)
                        .map(|s| s.0)
                        .collect::<Vec<SegmentKind>>(),
                ),
                role: Role::Def,
                overload: None,
                node: node.clone(),
            })
        }
        _ => Err(LanserError::internal("not a structural selector").into()),
    }
}

fn structural_target(cx: &Context, spec: &PositionSpec) -> Result<Target, Rejected> {
    let what = spec.to_canonical();
    let q = structural_query(cx, spec, &what)?;
    let dv = spec.doc_version();
    let original = |p: &structural::Parsed| -> Option<structural::Original> {
        // The selector's own version: the current text when unchanged, else its snapshot.
        let dv = dv?;
        let old_text = if dv == p.doc.doc_version {
            p.doc.text.clone()
        } else {
            cx.store.get(dv)?
        };
        let old = Document::from_text(p.doc.abs.clone(), p.doc.rel.clone(), old_text);
        let old = structural::parse_doc(old, p.module.clone()).ok()?;
        let found = structural::matches(&old, &q).ok()?;
        let [d] = found[..] else { return None };
        let span = structural::role_span(&old, Some(d), &q).ok()?;
        Some(structural::Original {
            line: old
                .doc
                .index
                .position(&old.doc.text, d.name.0, Encoding::Utf8)
                .0,
            header: old.doc.text[d.sig.0..d.sig.1].to_string(),
            span,
            old_text: old.doc.text.clone(),
        })
    };
    let (docs, cands) = structural::candidates(cx.ws, cx.cache, &q, original)?;
    if cands.is_empty() {
        let hint = structural::try_load(cx.ws, cx.cache, &q)
            .map(|p| structural::similar_names(&p, q.names.last().map_or("", String::as_str)))
            .filter(|v| !v.is_empty())
            .map(|v| format!(" (did you mean {}?)", v.join(", ")))
            .unwrap_or_default();
        return Err(LanserError::not_found(format!(
            "{what}: {} does not define {}{hint}",
            q.module,
            if q.names.is_empty() {
                "it".to_string()
            } else {
                q.names.join(".")
            }
        ))
        .into());
    }
    let ev = score::decide(docs, cands, &cx.config, &what)?;
    Ok(target_of(ev))
}
