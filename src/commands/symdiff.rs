//! The symbol-level comparison behind `changes` ([`super::changes`]): the definitions of the
//! base's files against the definitions of the files now, from lanser's outlines.
//!
//! A definition is the same when its file, qualified name and occurrence (overloads,
//! accessors) are; it changed when its signature (decorators and header, whitespace
//! collapsed) or its own body (its text without the nested definitions, blank lines and
//! common indentation dropped) differ. Of the rest, a removed and an added definition of the
//! same name and kind are one definition moved (to another file or another parent) when the
//! relocation score of the pair ([`crate::relocate::score`]: the module, the identifiers the
//! two share, the lines between them) reaches τ; the best pairs are taken first. What is left
//! was added or removed.

use crate::document::Document;
use crate::relocate::durable;
use crate::relocate::outline::Def;
use crate::relocate::score::{self, Features};
use crate::relocate::structural::{self, ParseCache, Parsed};
use crate::text::Encoding;
use crate::workspace::Workspace;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// A parsed file: the base's (parsed here) or the disk's (from the parse cache).
pub enum Side {
    Owned(Parsed),
    Shared(Arc<Parsed>),
}

impl Side {
    fn parsed(&self) -> &Parsed {
        match self {
            Side::Owned(p) => p,
            Side::Shared(p) => p,
        }
    }
}

/// What the comparison reads besides the files.
pub struct Cx<'a> {
    pub ws: &'a Workspace,
    pub cache: &'a ParseCache,
    /// The column unit of ranges.
    pub encoding: Encoding,
}

/// What happened to a definition.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, JsonSchema, Serialize, Deserialize,
)]
#[serde(rename_all = "camelCase")]
pub enum ChangeKind {
    Added,
    Removed,
    Moved,
    Changed,
}

/// Which part of a definition changed.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, JsonSchema, Serialize, Deserialize,
)]
#[serde(rename_all = "camelCase")]
pub enum Aspect {
    /// Decorators and header (parameters, return type, bases).
    Signature,
    /// The body, nested definitions left out.
    Body,
}

/// One definition that is not as it was.
#[derive(Debug, Clone, PartialEq, JsonSchema, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SymbolChange {
    pub kind: ChangeKind,
    /// Where it is now (where it was, when removed), workspace-relative.
    pub path: String,
    /// Its qualified name there (`Class.method`).
    pub qualname: String,
    /// `function`, `class`, `method`, … as the outline names it.
    pub symbol_kind: String,
    /// What differs from the base's definition (changed, or moved with edits).
    pub aspects: Vec<Aspect>,
    /// Where it was (moved).
    pub old_path: Option<String>,
    /// Its qualified name there (moved).
    pub old_qualname: Option<String>,
    /// `[startLine, startCol, endLine, endCol]` of the whole definition now, decorators
    /// included, in the server's coordinates (none when removed).
    pub range: Option<[u32; 4]>,
    /// The same in the base's text (none when added).
    pub old_range: Option<[u32; 4]>,
    /// Moved: the relocation score of the pair, in [τ, 1].
    pub confidence: Option<f64>,
    /// A durable selector for it now (`py://…` or `sym://…`; none when removed).
    pub selector: Option<String>,
}

/// One definition of one side, with what it is compared by.
struct Sym<'p> {
    parsed: &'p Parsed,
    def: &'p Def,
    path: &'p str,
    qualname: String,
    /// Its index among the file's definitions of the same qualified name.
    occurrence: usize,
    kind: String,
    sig: String,
    body: String,
}

impl Sym<'_> {
    fn key(&self) -> (&str, &str, usize) {
        (self.path, &self.qualname, self.occurrence)
    }
    fn last_name(&self) -> &str {
        self.def.qual.last().map_or("", String::as_str)
    }
    fn range(&self, enc: Encoding) -> [u32; 4] {
        let doc = &self.parsed.doc;
        let (sl, sc) = doc.position(self.def.node.0, enc);
        let (el, ec) = doc.position(self.def.node.1, enc);
        [sl as u32, sc as u32, el as u32, ec as u32]
    }
    fn line(&self) -> usize {
        self.parsed.doc.position(self.def.name.0, Encoding::Utf8).0
    }
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The definition's own body: its text after the header without the nested definitions,
/// blank lines and trailing blanks dropped, dedented.
fn own_body(p: &Parsed, d: &Def) -> String {
    let text = &p.doc.text;
    let (start, end) = (d.sig.1.min(d.node.1), d.node.1);
    let mut holes: Vec<(usize, usize)> = p
        .defs
        .iter()
        .filter(|n| n.qual.len() > d.qual.len() && n.node.0 >= start && n.node.1 <= end)
        .map(|n| n.node)
        .collect();
    holes.sort();
    let mut own = String::new();
    let mut at = start;
    for (s, e) in holes {
        if s >= at {
            own.push_str(&text[at..s]);
            at = e;
        }
    }
    own.push_str(&text[at.max(start)..end]);
    let lines: Vec<&str> = own
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .collect();
    let indent = lines
        .iter()
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|l| &l[indent.min(l.len() - l.trim_start().len())..])
        .collect::<Vec<_>>()
        .join("\n")
}

fn symbols<'p>(sides: &'p [Side]) -> Vec<Sym<'p>> {
    let mut out = Vec::new();
    for side in sides {
        let p = side.parsed();
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for d in &p.defs {
            let qualname = d.qualname();
            let n = seen.entry(qualname.clone()).or_default();
            let occurrence = *n;
            *n += 1;
            out.push(Sym {
                parsed: p,
                def: d,
                path: &p.doc.rel,
                qualname,
                occurrence,
                kind: structural::symbol_info(p, d).kind,
                sig: collapse(&p.doc.text[d.node.0..d.sig.1.max(d.node.0)]),
                body: own_body(p, d),
            });
        }
    }
    out
}

fn aspects(old: &Sym, new: &Sym) -> Vec<Aspect> {
    let mut out = Vec::new();
    if old.sig != new.sig {
        out.push(Aspect::Signature);
    }
    if old.body != new.body {
        out.push(Aspect::Body);
    }
    out
}

/// The relocation features of `new` as where `old` went.
fn features(old: &Sym, new: &Sym) -> Features {
    let same_dir =
        |a: &str, b: &str| a.rsplit_once('/').map(|x| x.0) == b.rsplit_once('/').map(|x| x.0);
    let module = match (old.path == new.path, same_dir(old.path, new.path)) {
        (true, _) => 1.0,
        (false, true) => 0.5,
        _ => 0.0,
    };
    let (a, b) = (
        format!("{}\n{}", old.sig, old.body),
        format!("{}\n{}", new.sig, new.body),
    );
    let token = score::jaccard(&score::identifiers(&a), &score::identifiers(&b));
    let prox = score::proximity((old.path == new.path).then(|| old.line()), new.line());
    Features {
        ast: 1.0,
        module,
        token,
        prox,
    }
    .rounded()
}

/// Every change from `before` to `after`, sorted by (path, qualname, kind, old path, old
/// qualname).
pub fn diff(cx: &Cx, before: &[Side], after: &[Side]) -> Vec<SymbolChange> {
    let old = symbols(before);
    let new = symbols(after);
    let old_by: BTreeMap<_, usize> = old.iter().enumerate().map(|(i, s)| (s.key(), i)).collect();
    let new_by: BTreeMap<_, usize> = new.iter().enumerate().map(|(i, s)| (s.key(), i)).collect();
    let mut out = Vec::new();
    let mut gone: BTreeSet<usize> = BTreeSet::new();
    let mut came: BTreeSet<usize> = BTreeSet::new();
    for (k, &i) in &old_by {
        match new_by.get(k) {
            Some(&j) => {
                let a = aspects(&old[i], &new[j]);
                if !a.is_empty() {
                    out.push(change(
                        cx,
                        ChangeKind::Changed,
                        Some(&old[i]),
                        Some(&new[j]),
                        a,
                        None,
                    ));
                }
            }
            None => {
                gone.insert(i);
            }
        }
    }
    for (k, &j) in &new_by {
        if !old_by.contains_key(k) {
            came.insert(j);
        }
    }
    for (s, i, j) in moves(&old, &new, &mut gone, &mut came) {
        let a = aspects(&old[i], &new[j]);
        out.push(change(
            cx,
            ChangeKind::Moved,
            Some(&old[i]),
            Some(&new[j]),
            a,
            Some(s),
        ));
    }
    for i in gone {
        out.push(change(
            cx,
            ChangeKind::Removed,
            Some(&old[i]),
            None,
            vec![],
            None,
        ));
    }
    for j in came {
        out.push(change(
            cx,
            ChangeKind::Added,
            None,
            Some(&new[j]),
            vec![],
            None,
        ));
    }
    out.sort_by(|a, b| {
        (
            &a.path,
            &a.qualname,
            a.kind,
            &a.old_path,
            &a.old_qualname,
            a.range,
            a.old_range,
        )
            .cmp(&(
                &b.path,
                &b.qualname,
                b.kind,
                &b.old_path,
                &b.old_qualname,
                b.range,
                b.old_range,
            ))
    });
    out
}

/// The moves among the removed (`gone`) and added (`came`) definitions: the best-scoring
/// pairs of one name and kind at or above τ, each definition in one pair at most (taken out
/// of `gone` and `came`), as (score, old, new).
fn moves(
    old: &[Sym],
    new: &[Sym],
    gone: &mut BTreeSet<usize>,
    came: &mut BTreeSet<usize>,
) -> Vec<(f64, usize, usize)> {
    let mut pairs: Vec<(f64, usize, usize)> = Vec::new();
    for &i in gone.iter() {
        for &j in came.iter() {
            let (o, n) = (&old[i], &new[j]);
            if o.last_name() != n.last_name() || o.kind != n.kind {
                continue;
            }
            let s = features(o, n).score();
            if s >= score::DEFAULT_TAU {
                pairs.push((s, i, j));
            }
        }
    }
    pairs.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| new[a.2].key().cmp(&new[b.2].key()))
            .then_with(|| old[a.1].key().cmp(&old[b.1].key()))
    });
    let mut taken = Vec::new();
    for (s, i, j) in pairs {
        if gone.contains(&i) && came.contains(&j) {
            gone.remove(&i);
            came.remove(&j);
            taken.push((s, i, j));
        }
    }
    taken
}

fn change(
    cx: &Cx,
    kind: ChangeKind,
    old: Option<&Sym>,
    new: Option<&Sym>,
    aspects: Vec<Aspect>,
    confidence: Option<f64>,
) -> SymbolChange {
    let here = new.or(old).expect("a change has a side");
    let moved = kind == ChangeKind::Moved;
    SymbolChange {
        kind,
        path: here.path.to_string(),
        qualname: here.qualname.clone(),
        symbol_kind: here.kind.clone(),
        aspects,
        old_path: old.filter(|_| moved).map(|o| o.path.to_string()),
        old_qualname: old.filter(|_| moved).map(|o| o.qualname.clone()),
        range: new.map(|n| n.range(cx.encoding)),
        old_range: old.map(|o| o.range(cx.encoding)),
        confidence,
        selector: new.and_then(|n| selector(cx, &n.parsed.doc, n.def)),
    }
}

fn selector(cx: &Cx, doc: &Document, d: &Def) -> Option<String> {
    durable::symbol_at(cx.ws, cx.cache, doc, d.name.0).map(|(_, s)| s)
}

/// One line for a person: `moved function helper (a.py -> b.py:12, confidence 0.85)`.
pub fn describe(c: &SymbolChange) -> String {
    let line = |r: Option<[u32; 4]>| r.map_or(String::new(), |r| format!(":{}", r[0] + 1));
    let what = match c.kind {
        ChangeKind::Added => "added",
        ChangeKind::Removed => "removed",
        ChangeKind::Moved => "moved",
        ChangeKind::Changed => "changed",
    };
    let aspects: Vec<&str> = c
        .aspects
        .iter()
        .map(|a| match a {
            Aspect::Signature => "signature",
            Aspect::Body => "body",
        })
        .collect();
    let mut s = format!("{what} {} {}", c.symbol_kind, c.qualname);
    match c.kind {
        ChangeKind::Removed => s.push_str(&format!(" ({}{})", c.path, line(c.old_range))),
        ChangeKind::Moved => s.push_str(&format!(
            " ({} {}{} -> {}{}, confidence {})",
            c.old_qualname.as_deref().unwrap_or_default(),
            c.old_path.as_deref().unwrap_or_default(),
            line(c.old_range),
            c.path,
            line(c.range),
            c.confidence.unwrap_or_default()
        )),
        _ => s.push_str(&format!(" ({}{})", c.path, line(c.range))),
    }
    if !aspects.is_empty() {
        s.push_str(&format!(": {}", aspects.join(", ")));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The changes from `old` to `new`, one file `rel` on each side, as (kind, qualname,
    /// aspects, old path).
    fn kinds(rel: &str, old: &str, new: &str) -> Vec<(ChangeKind, String, Vec<Aspect>)> {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::discover(Some(dir.path()), dir.path()).unwrap();
        std::fs::write(dir.path().join(rel), new).unwrap();
        let parse = |text: &str| {
            let doc = Document::from_text(dir.path().join(rel), rel.into(), text.into());
            structural::parse_doc(doc, rel.into()).unwrap()
        };
        let cache = ParseCache::default();
        let cx = Cx {
            ws: &ws,
            cache: &cache,
            encoding: Encoding::Utf16,
        };
        let before = [Side::Owned(parse(old))];
        let after = [Side::Owned(parse(new))];
        diff(&cx, &before, &after)
            .into_iter()
            .map(|c| (c.kind, c.qualname, c.aspects))
            .collect()
    }

    #[test]
    fn go_and_rust_outlines_diff_as_python_does() {
        use Aspect::*;
        use ChangeKind::*;
        let old = "package m\n\nfunc A(x int) int {\n\treturn x\n}\n\nfunc B() {}\n\nfunc C() int {\n\treturn 1\n}\n";
        let new = "package m\n\nfunc A(x int, y int) int {\n\treturn x\n}\n\nfunc C() int {\n\treturn 2\n}\n\nfunc D() {}\n";
        assert_eq!(
            kinds("m.go", old, new),
            [
                (Changed, "A".into(), vec![Signature]),
                (Removed, "B".into(), vec![]),
                (Changed, "C".into(), vec![Body]),
                (Added, "D".into(), vec![]),
            ]
        );
        // A method moved to another impl block of the same file; a body edit elsewhere.
        let old = "struct S;\nstruct T;\nimpl S {\n    fn go(&self) -> u8 {\n        1\n    }\n}\nimpl T {}\nfn f() {}\n";
        let new = "struct S;\nstruct T;\nimpl S {}\nimpl T {\n    fn go(&self) -> u8 {\n        1\n    }\n}\nfn f() { g() }\n";
        let got = kinds("m.rs", old, new);
        assert!(got.contains(&(Moved, "T.go".into(), vec![])), "{got:?}");
        assert!(got.contains(&(Changed, "f".into(), vec![Body])), "{got:?}");
    }
}
