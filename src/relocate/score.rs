//! Scoring and disambiguation (docs/relocation.md#scoring, #ties-and-ambiguity).
//!
//! `score = 0.5·ast + 0.2·module + 0.2·token + 0.1·prox`, candidates sorted by (score desc,
//! path, range). Two or more candidates tied at the top are `E/AMBIGUOUS` listing every
//! candidate unless `--pick best`; a unique top reached only by fuzzy matching and below τ is
//! taken with `ambiguous: true` and the top-5 attached; an exact map through a snapshot wins
//! outright with score 1.0.
//!
//! The features per form. Structural (`py://`, `ast://`): `ast` 1 (the name and kind chain
//! matched); `module` 1 for the module's own file, 0.5 for another module of its package;
//! `token` the Jaccard of the identifiers of the selector's header (read from its snapshot)
//! and the candidate's, else of the selector's module + qualname and the candidate's; `prox`
//! from the header's old line. Anchors: `ast` 1 for an exact occurrence, else the share of
//! the snippet's (or its context window's) fingerprints matched; `module` 1; `token` the
//! Jaccard of the identifiers of the old context window and the candidate's, else of the
//! snippet and the candidate text; `prox` from the old line.

use crate::error::{ErrorCode, LanserError};
use crate::selector::is_ident_char;
use crate::selector::is_ident_start;
use crate::selector::resolve::Document;
use serde::Serialize;
use std::collections::BTreeSet;

pub const W_AST: f64 = 0.5;
pub const W_MODULE: f64 = 0.2;
pub const W_TOKEN: f64 = 0.2;
pub const W_PROX: f64 = 0.1;
/// Default confidence threshold τ.
pub const DEFAULT_TAU: f64 = 0.75;
/// Alternatives attached to a low-confidence resolution.
pub const TOP_K: usize = 5;

/// How relocation decides.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// `--tau`.
    pub tau: f64,
    /// `--pick best`: take the first of tied candidates instead of failing.
    pub pick_best: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            tau: DEFAULT_TAU,
            pick_best: false,
        }
    }
}

/// The four features, each in [0, 1].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Features {
    pub ast: f64,
    pub module: f64,
    pub token: f64,
    pub prox: f64,
}

impl Features {
    pub fn score(&self) -> f64 {
        round4(
            W_AST * self.ast + W_MODULE * self.module + W_TOKEN * self.token + W_PROX * self.prox,
        )
    }

    pub fn rounded(self) -> Features {
        Features {
            ast: round4(self.ast),
            module: round4(self.module),
            token: round4(self.token),
            prox: round4(self.prox),
        }
    }
}

pub fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// `1/(1+|Δline|/50)`, or 0.5 when the original line is unknown.
pub fn proximity(original_line: Option<usize>, line: usize) -> f64 {
    match original_line {
        Some(o) => 1.0 / (1.0 + (o.abs_diff(line) as f64) / 50.0),
        None => 0.5,
    }
}

/// The identifiers of a text.
pub fn identifiers(text: &str) -> BTreeSet<&str> {
    let mut out = BTreeSet::new();
    let mut start = None;
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        match start {
            None if is_ident_start(c) => start = Some(i),
            Some(s) if !is_ident_char(c) => {
                out.insert(&text[s..i]);
                start = if is_ident_start(c) { Some(i) } else { None };
            }
            _ => {}
        }
    }
    out
}

/// Jaccard similarity of two sets (1.0 for two empty sets).
pub fn jaccard(a: &BTreeSet<&str>, b: &BTreeSet<&str>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        return 1.0;
    }
    a.intersection(b).count() as f64 / union as f64
}

/// What a structural candidate is, for `symbolId` and the facts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct SymbolInfo {
    pub module: String,
    pub qualname: String,
    pub kind: String,
    pub shape: String,
    #[serde(rename = "symbolId")]
    pub symbol_id: String,
}

/// One place a selector may mean.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Index into [`Evidence::docs`].
    pub doc: usize,
    pub start: usize,
    pub end: usize,
    pub features: Features,
    pub score: f64,
    /// Found only by fuzzy matching.
    pub fuzzy: bool,
    /// Mapped exactly from the selector's snapshot (or pinned by the anchor's hash).
    pub exact: bool,
    pub symbol: Option<SymbolInfo>,
}

impl Candidate {
    pub fn new(doc: usize, span: (usize, usize), features: Features) -> Candidate {
        Candidate {
            doc,
            start: span.0,
            end: span.1,
            score: features.score(),
            features: features.rounded(),
            fuzzy: false,
            exact: false,
            symbol: None,
        }
    }
}

/// The evidence behind a resolution: ranked candidates (the chosen one first), over the
/// documents they live in.
#[derive(Debug, Clone)]
pub struct Evidence {
    pub docs: Vec<Document>,
    pub candidates: Vec<Candidate>,
    pub confidence: f64,
    pub ambiguous: bool,
}

impl Evidence {
    /// `path:line:col (score)` of a candidate, 1-based codepoint columns, for messages.
    pub fn describe(&self, c: &Candidate) -> String {
        let d = &self.docs[c.doc];
        let (l, col) = d.position(c.start, crate::text::Encoding::Codepoint);
        format!("{}:{}:{} (score {})", d.rel, l + 1, col + 1, c.score)
    }
}

/// A resolution that failed; `evidence` holds the candidates when there were some.
#[derive(Debug)]
pub struct Rejected {
    pub error: LanserError,
    pub evidence: Option<Box<Evidence>>,
}

impl From<LanserError> for Rejected {
    fn from(error: LanserError) -> Self {
        Rejected {
            error,
            evidence: None,
        }
    }
}

/// Rank `candidates` and decide (docs/relocation.md#ties-and-ambiguity). `what` names the
/// selector in messages. On success the chosen candidate is `candidates[0]`.
pub fn decide(
    docs: Vec<Document>,
    mut candidates: Vec<Candidate>,
    config: &Config,
    what: &str,
) -> Result<Evidence, Rejected> {
    if candidates.is_empty() {
        return Err(LanserError::not_found(format!("{what} matches nothing")).into());
    }
    if let Some(i) = candidates.iter().position(|c| c.exact) {
        let mut c = candidates.swap_remove(i);
        c.score = 1.0;
        return Ok(Evidence {
            docs,
            candidates: vec![c],
            confidence: 1.0,
            ambiguous: false,
        });
    }
    candidates.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| docs[a.doc].rel.cmp(&docs[b.doc].rel))
            .then_with(|| (a.start, a.end).cmp(&(b.start, b.end)))
    });
    candidates.dedup_by(|a, b| a.doc == b.doc && a.start == b.start && a.end == b.end);
    let top = candidates[0].score;
    let tied = candidates.iter().filter(|c| c.score == top).count();
    let mut ev = Evidence {
        docs,
        candidates,
        confidence: top,
        ambiguous: false,
    };
    if tied > 1 && !config.pick_best {
        let list: Vec<String> = ev.candidates.iter().map(|c| ev.describe(c)).collect();
        ev.ambiguous = true;
        let error = LanserError::new(
            ErrorCode::Ambiguous,
            format!(
                "{what} matches {} candidates, {tied} tied at the top (add a docVersion, a hash or a longer path, or pass --pick best): {}",
                ev.candidates.len(),
                list.join("; ")
            ),
        );
        return Err(Rejected {
            error,
            evidence: Some(Box::new(ev)),
        });
    }
    if ev.candidates[0].fuzzy && top < config.tau {
        ev.ambiguous = true;
    }
    ev.candidates.truncate(TOP_K);
    Ok(ev)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::sha256_tagged;
    use crate::text::LineIndex;
    use std::path::PathBuf;

    fn doc(rel: &str, text: &str) -> Document {
        Document {
            abs: PathBuf::from("/w").join(rel),
            rel: rel.into(),
            text: text.into(),
            index: LineIndex::new(text),
            doc_version: sha256_tagged(text.as_bytes()),
        }
    }

    fn f(ast: f64, module: f64, token: f64, prox: f64) -> Features {
        Features {
            ast,
            module,
            token,
            prox,
        }
    }

    #[test]
    fn weights_are_eq_3_1() {
        assert_eq!(f(1.0, 1.0, 1.0, 1.0).score(), 1.0);
        assert_eq!(f(1.0, 0.5, 0.5, 0.5).score(), 0.75);
        assert_eq!(f(0.0, 0.0, 0.0, 1.0).score(), 0.1);
        assert_eq!(proximity(Some(10), 60), 0.5);
        assert_eq!(proximity(None, 3), 0.5);
        let a = identifiers("def load_data(path, 名前=1):");
        assert_eq!(
            a.into_iter().collect::<Vec<_>>(),
            ["def", "load_data", "path", "名前"]
        );
        assert_eq!(jaccard(&identifiers("a b"), &identifiers("b c")), 1.0 / 3.0);
    }

    #[test]
    fn ties_are_ambiguous_unless_pick_best() {
        let docs = || vec![doc("b.py", "x\nx\n"), doc("a.py", "x\n")];
        let cands = || {
            vec![
                Candidate::new(0, (2, 3), f(1.0, 1.0, 1.0, 0.5)),
                Candidate::new(0, (0, 1), f(1.0, 1.0, 1.0, 0.5)),
                Candidate::new(1, (0, 1), f(1.0, 0.5, 1.0, 0.5)),
            ]
        };
        let r = decide(docs(), cands(), &Config::default(), "x").unwrap_err();
        assert_eq!(r.error.code, ErrorCode::Ambiguous);
        assert!(
            r.error.message.contains("3 candidates, 2 tied"),
            "{}",
            r.error.message
        );
        assert!(
            r.error
                .message
                .contains("b.py:1:1 (score 0.95); b.py:2:1 (score 0.95); a.py:1:1 (score 0.85)"),
            "{}",
            r.error.message
        );
        assert_eq!(r.evidence.unwrap().candidates.len(), 3);
        let best = Config {
            pick_best: true,
            ..Config::default()
        };
        let ev = decide(docs(), cands(), &best, "x").unwrap();
        assert_eq!((ev.candidates[0].doc, ev.candidates[0].start), (0, 0));
        assert!(!ev.ambiguous);
    }

    #[test]
    fn fuzzy_below_tau_is_flagged_and_exact_wins() {
        let mut low = Candidate::new(0, (0, 1), f(0.6, 1.0, 0.3, 0.5));
        low.fuzzy = true;
        let ev = decide(
            vec![doc("a.py", "x\n")],
            vec![low.clone()],
            &Config::default(),
            "x",
        )
        .unwrap();
        assert!(ev.ambiguous);
        assert_eq!(ev.confidence, 0.61);
        let lax = Config {
            tau: 0.5,
            ..Config::default()
        };
        assert!(
            !decide(vec![doc("a.py", "x\n")], vec![low.clone()], &lax, "x")
                .unwrap()
                .ambiguous
        );
        let mut exact = Candidate::new(0, (1, 1), f(0.0, 0.0, 0.0, 0.0));
        exact.exact = true;
        let ev = decide(
            vec![doc("a.py", "x\n")],
            vec![low, exact],
            &Config::default(),
            "x",
        )
        .unwrap();
        assert_eq!((ev.candidates.len(), ev.confidence), (1, 1.0));
        let e = decide(vec![], vec![], &Config::default(), "py://m#f").unwrap_err();
        assert_eq!(e.error.code, ErrorCode::NotFound);
    }
}
