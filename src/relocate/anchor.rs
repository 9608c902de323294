//! Content anchors (docs/relocation.md#anchors): exact occurrences of the snippet,
//! then — only when there is none — whitespace-insensitive occurrences, then winnowed k-gram
//! fingerprints (k = 7, w = 4; Schleimer et al.) over the whitespace-free text, clustered by
//! the snippet start they imply.
//!
//! `hash` is `sha1:` of the occurrence's context window: the text from `ctx` characters before
//! the snippet to `ctx` characters after it (clamped to the file). An exact occurrence whose
//! window hashes to it is pinned (score 1.0); when several do, nothing is pinned.

use super::score::{identifiers, jaccard, proximity, Candidate, Features};
use crate::selector::is_ident_char;
use crate::selector::resolve::Document;
use sha1::{Digest, Sha1};

pub const K: usize = 7;
pub const W: usize = 4;
/// Fuzzy clusters sharing less of the snippet's fingerprints than this are dropped.
const MIN_CONTAINMENT: f64 = 0.3;

/// Byte bounds of the window of `ctx` characters on each side of `[start, end)`.
pub fn window(text: &str, start: usize, end: usize, ctx: usize) -> (usize, usize) {
    let before = text[..start]
        .char_indices()
        .rev()
        .nth(ctx.saturating_sub(1))
        .map(|(i, _)| i)
        .unwrap_or(0);
    let before = if ctx == 0 { start } else { before };
    let after = text[end..]
        .char_indices()
        .nth(ctx)
        .map(|(i, _)| end + i)
        .unwrap_or(text.len());
    (before, after)
}

/// `sha1:<hex>` of the context window of `[start, end)`.
pub fn window_hash(text: &str, start: usize, end: usize, ctx: usize) -> String {
    let (a, b) = window(text, start, end, ctx);
    let digest = Sha1::digest(&text.as_bytes()[a..b]);
    let mut s = String::from("sha1:");
    for byte in digest.iter() {
        s.push_str(&format!("{byte:02x}"));
    }
    s
}

/// Byte offsets of every (possibly overlapping) occurrence of `snippet`.
pub fn exact_occurrences(text: &str, snippet: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find(snippet) {
        out.push(from + i);
        let step = text[from + i..].chars().next().map_or(1, char::len_utf8);
        from += i + step;
    }
    out
}

/// The non-whitespace characters of `text` with their byte offsets.
fn squeeze(text: &str) -> Vec<(char, usize)> {
    text.char_indices()
        .filter(|(_, c)| !c.is_whitespace())
        .map(|(i, c)| (c, i))
        .collect()
}

fn kgrams(chars: &[(char, usize)]) -> Vec<u64> {
    if chars.len() < K {
        return vec![];
    }
    chars
        .windows(K)
        .map(|w| {
            // FNV-1a over the code points.
            w.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, (c, _)| {
                (h ^ u64::from(*c as u32)).wrapping_mul(0x0100_0000_01b3)
            })
        })
        .collect()
}

/// Winnowing: the minimum hash of every window of `W` consecutive k-grams (the rightmost on
/// ties), each selected position once. Returns (hash, k-gram index).
pub fn winnow(hashes: &[u64]) -> Vec<(u64, usize)> {
    let mut out: Vec<(u64, usize)> = Vec::new();
    if hashes.is_empty() {
        return out;
    }
    let w = W.min(hashes.len());
    for start in 0..=hashes.len() - w {
        let mut best = start;
        for i in start..start + w {
            if hashes[i] <= hashes[best] {
                best = i;
            }
        }
        if out.last().is_none_or(|&(_, p)| p != best) {
            out.push((hashes[best], best));
        }
    }
    out
}

/// One fingerprint shared by the pattern and the text: (implied pattern start in the text,
/// k-gram index in the pattern, k-gram index in the text, hash), all in squeezed characters.
type Vote = (isize, usize, usize, u64);

/// Fingerprint votes of `pn` in `tn`, clustered by the pattern start they imply, each cluster
/// with the share of the pattern's distinct fingerprints it holds (≥ the minimum).
fn clusters(tn: &[(char, usize)], pn: &[(char, usize)]) -> Vec<(Vec<Vote>, f64)> {
    let pfp = winnow(&kgrams(pn));
    if pfp.is_empty() {
        return vec![];
    }
    let mut distinct: Vec<u64> = pfp.iter().map(|f| f.0).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let mut votes: Vec<Vote> = Vec::new();
    for (h, ti) in winnow(&kgrams(tn)) {
        for &(ph, pi) in &pfp {
            if ph == h {
                votes.push((ti as isize - pi as isize, pi, ti, h));
            }
        }
    }
    votes.sort_unstable();
    let gap = (pn.len() / 4).max(2) as isize;
    let mut out = Vec::new();
    let mut i = 0;
    while i < votes.len() {
        let mut j = i + 1;
        while j < votes.len() && votes[j].0 - votes[j - 1].0 <= gap {
            j += 1;
        }
        let cluster = votes[i..j].to_vec();
        let mut hs: Vec<u64> = cluster.iter().map(|v| v.3).collect();
        hs.sort_unstable();
        hs.dedup();
        let containment = (hs.len() as f64 / distinct.len() as f64).min(1.0);
        if containment >= MIN_CONTAINMENT {
            out.push((cluster, containment));
        }
        i = j;
    }
    out
}

/// Whitespace-insensitive occurrences of `pn` in `tn` (squeezed character indices).
fn squeezed_occurrences(tn: &[(char, usize)], pn: &[(char, usize)]) -> Vec<usize> {
    if pn.is_empty() || tn.len() < pn.len() {
        return vec![];
    }
    tn.windows(pn.len())
        .enumerate()
        .filter(|(_, w)| w.iter().zip(pn).all(|(a, b)| a.0 == b.0))
        .map(|(i, _)| i)
        .collect()
}

/// Whitespace-insensitive and fingerprint matches of `snippet` in `text`: byte spans with the
/// share of the snippet's fingerprints they contain.
pub fn fuzzy(text: &str, snippet: &str) -> Vec<((usize, usize), f64)> {
    let sn = squeeze(snippet);
    let tn = squeeze(text);
    if sn.is_empty() || tn.len() < sn.len() {
        return vec![];
    }
    let byte_span = |a: usize, b: usize| (tn[a].1, tn[b].1 + tn[b].0.len_utf8());
    // Whitespace-insensitive occurrences (reformatting) count as full containment.
    let same = squeezed_occurrences(&tn, &sn);
    if !same.is_empty() {
        return same
            .into_iter()
            .map(|i| (byte_span(i, i + sn.len() - 1), 1.0))
            .collect();
    }
    clusters(&tn, &sn)
        .into_iter()
        .map(|(cluster, containment)| {
            let first = cluster[0].0.max(0) as usize;
            let last = ((cluster[cluster.len() - 1].0 + sn.len() as isize) as usize)
                .min(tn.len())
                .saturating_sub(1)
                .max(first);
            (byte_span(first, last), containment)
        })
        .collect()
}

/// Fingerprint matches of the snippet's whole context window (`window`, the snippet at byte
/// `at` inside it, `len` bytes long) in `text`: the snippet's span placed from the matching
/// fingerprints nearest to it on each side, with the share of the window's fingerprints.
pub fn fuzzy_in_context(
    text: &str,
    window: &str,
    at: usize,
    len: usize,
) -> Vec<((usize, usize), f64)> {
    let wn = squeeze(window);
    let tn = squeeze(text);
    let p = squeeze(&window[..at]).len() as isize;
    let n = squeeze(&window[at..at + len]).len() as isize;
    if n == 0 || tn.is_empty() {
        return vec![];
    }
    let last = tn.len() as isize - 1;
    clusters(&tn, &wn)
        .into_iter()
        .filter_map(|(cluster, containment)| {
            // Start: the last fingerprint wholly before the snippet, else the first after.
            let before = cluster
                .iter()
                .filter(|v| v.1 as isize + K as isize <= p)
                .max_by_key(|v| v.1);
            let after_start = cluster
                .iter()
                .filter(|v| v.1 as isize >= p)
                .min_by_key(|v| v.1);
            let start = match (before, after_start) {
                (Some(v), _) => v.2 as isize + (p - v.1 as isize),
                (None, Some(v)) => v.2 as isize - (v.1 as isize - p),
                _ => return None,
            };
            // End: the first fingerprint wholly after the snippet, else start + length.
            let after_end = cluster
                .iter()
                .filter(|v| v.1 as isize >= p + n)
                .min_by_key(|v| v.1);
            let end = match after_end {
                Some(v) => v.2 as isize - (v.1 as isize - (p + n)) - 1,
                None => start + n - 1,
            };
            let (s, e) = (start.clamp(0, last), end.clamp(0, last));
            (e >= s).then(|| {
                let (s, e) = (s as usize, e as usize);
                ((tn[s].1, tn[e].1 + tn[e].0.len_utf8()), containment)
            })
        })
        .collect()
}

/// Widen a fuzzy span so that it does not cut an identifier at either end.
fn snap(text: &str, s: usize, e: usize) -> (usize, usize) {
    let word = |c: char| is_ident_char(c);
    let mut s = s;
    if text[s..].chars().next().is_some_and(word) {
        while let Some(c) = text[..s].chars().next_back().filter(|c| word(*c)) {
            s -= c.len_utf8();
        }
    }
    let mut e = e;
    if text[..e].chars().next_back().is_some_and(word) {
        while let Some(c) = text[e..].chars().next().filter(|c| word(*c)) {
            e += c.len_utf8();
        }
    }
    (s, e)
}

/// Where the snippet was in the selector's own version of the file, when a snapshot says.
#[derive(Debug, Clone)]
pub struct Original {
    /// 0-based line of the occurrence.
    pub line: usize,
    /// The text of its context window.
    pub window: String,
    /// Byte offset of the snippet inside `window`.
    pub at: usize,
}

/// Score every candidate occurrence of `snippet` in `doc` (index `doc_idx` of the evidence).
pub fn candidates(
    doc_idx: usize,
    doc: &Document,
    snippet: &str,
    ctx: usize,
    hash: Option<&str>,
    original: Option<&Original>,
) -> Vec<Candidate> {
    let text = &doc.text;
    let snippet_ids = identifiers(snippet);
    let token = |s: usize, e: usize| match original {
        Some(o) => {
            let (a, b) = window(text, s, e, ctx);
            jaccard(&identifiers(&o.window), &identifiers(&text[a..b]))
        }
        None => jaccard(&snippet_ids, &identifiers(&text[s..e])),
    };
    let line = |s: usize| doc.index.position(text, s, crate::text::Encoding::Utf8).0;
    let orig_line = original.map(|o| o.line);
    let exact = exact_occurrences(text, snippet);
    if !exact.is_empty() {
        let pinned: Vec<bool> = exact
            .iter()
            .map(|&s| hash.is_some_and(|h| window_hash(text, s, s + snippet.len(), ctx) == h))
            .collect();
        let unique_pin = pinned.iter().filter(|p| **p).count() == 1;
        return exact
            .iter()
            .zip(pinned)
            .map(|(&s, pin)| {
                let e = s + snippet.len();
                let f = Features {
                    ast: 1.0,
                    module: 1.0,
                    token: token(s, e),
                    prox: proximity(orig_line, line(s)),
                };
                let mut c = Candidate::new(doc_idx, (s, e), f);
                c.exact = pin && unique_pin;
                c
            })
            .collect();
    }
    let hits = match original {
        // With the original context known, its whole window is the pattern.
        Some(o) => {
            let near = fuzzy_in_context(text, &o.window, o.at, snippet.len());
            if near.is_empty() {
                fuzzy(text, snippet)
            } else {
                near
            }
        }
        None => fuzzy(text, snippet),
    };
    hits.into_iter()
        .map(|((s, e), containment)| {
            let (s, e) = snap(text, s, e);
            let f = Features {
                ast: containment,
                module: 1.0,
                token: token(s, e),
                prox: proximity(orig_line, line(s)),
            };
            let mut c = Candidate::new(doc_idx, (s, e), f);
            c.fuzzy = true;
            c
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_and_hashes_are_in_characters() {
        let t = "αβγ snippet δεζ";
        let s = t.find("snippet").unwrap();
        let (a, b) = window(t, s, s + 7, 2);
        assert_eq!(&t[a..b], "γ snippet δ");
        let (a, b) = window(t, s, s + 7, 100);
        assert_eq!(&t[a..b], t);
        let (a, b) = window(t, s, s + 7, 0);
        assert_eq!(&t[a..b], "snippet");
        // sha1("abc") is a known vector.
        assert_eq!(
            window_hash("abc", 0, 3, 0),
            "sha1:a9993e364706816aba3e25717850c26c9cd0d89d"
        );
    }

    #[test]
    fn winnowing_selects_rightmost_minimum_per_window() {
        let w = winnow(&[5, 3, 7, 3, 9, 8, 1]);
        // Windows of 4: [5,3,7,3]→3@3, [3,7,3,9]→3@3, [7,3,9,8]→3@3, [3,9,8,1]→1@6.
        assert_eq!(w, vec![(3, 3), (1, 6)]);
        assert_eq!(winnow(&[4, 2]), vec![(2, 1)]);
        assert!(winnow(&[]).is_empty());
    }

    #[test]
    fn exact_then_reformatted_then_fingerprints() {
        let t = "x = 1\ndef load_data(path, mode):\n    pass\n";
        assert_eq!(exact_occurrences("aaa", "aa"), vec![0, 1]);
        // Reformatted: whitespace differs.
        let hits = fuzzy(t, "def load_data(path,mode)");
        assert_eq!(hits.len(), 1);
        assert_eq!(&t[hits[0].0 .0..hits[0].0 .1], "def load_data(path, mode)");
        assert_eq!(hits[0].1, 1.0);
        // Edited: most fingerprints survive a renamed parameter.
        let hits = fuzzy(t, "def load_data(source, mode):");
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert!(hits[0].1 >= 0.3 && hits[0].1 < 1.0, "{hits:?}");
        assert!(t[hits[0].0 .0..hits[0].0 .1].contains("load_data"));
        // Unrelated text shares nothing.
        assert!(fuzzy(t, "class Completely(Different):").is_empty());
    }

    #[test]
    fn the_context_window_places_an_edited_snippet() {
        let old = "class A:\n    def area(self) -> float:\n        return self.radius * 2\n";
        let new =
            "import os\nclass A:\n    def area(this) -> Real:\n        return self.radius * 2\n";
        let s = old.find("def area").unwrap();
        let e = s + "def area(self) -> float:".len();
        let (a, b) = window(old, s, e, 24);
        let hits = fuzzy_in_context(new, &old[a..b], s - a, e - s);
        assert_eq!(hits.len(), 1, "{hits:?}");
        let ((hs, he), containment) = hits[0];
        assert_eq!(&new[hs..he], "def area(this) -> Real:");
        assert!(containment > 0.3 && containment < 1.0, "{containment}");
        // Without the context the snippet alone is too changed to find.
        assert!(fuzzy(new, "def area(self) -> float:").is_empty());
    }
}
