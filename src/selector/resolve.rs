//! Resolving a cursor or range selector against the files on disk: path → document, 1-based
//! line/column in the `--index-io` unit → byte span, `line:name#N` → the Nth whole-word
//! occurrence of `name` on that line (docs/coordinates.md, docs/selectors.md#forms). The
//! other forms, and stale
//! `docVersion`s, are `crate::relocate`'s.

use super::{is_ident_char, PositionSpec};
pub use crate::document::{DocCache, Document};
use crate::error::{ErrorCode, LanserError, Result};
use crate::text::{Encoding, PosError};
use crate::workspace::Workspace;
use std::path::Path;

/// A resolved cursor or range selector: a byte span in one document.
#[derive(Debug, Clone)]
pub struct Span {
    pub doc: Document,
    pub start: usize,
    pub end: usize,
}

/// Resolve a cursor or range `spec` on an unchanged file with 1-based coordinates in `io`
/// (unless the spec names its own unit). A changed `docVersion` is `E/VERSION_SKEW` here;
/// `crate::relocate` maps it through a snapshot instead.
pub fn resolve(ws: &Workspace, spec: &PositionSpec, io: Encoding, cwd: &Path) -> Result<Span> {
    let path = spec
        .path()
        .filter(|_| {
            matches!(
                spec,
                PositionSpec::Cursor { .. } | PositionSpec::Range { .. }
            )
        })
        .ok_or_else(|| LanserError::internal("resolve takes cursor and range selectors"))?;
    let (abs, rel) = ws.resolve_user_path(path, cwd)?;
    let doc = Document::load(abs, rel)?;
    let io = spec.indexing().unwrap_or(io);
    if let Some(dv) = spec.doc_version() {
        if dv != doc.doc_version {
            return Err(LanserError::new(
                ErrorCode::VersionSkew,
                format!(
                    "{} changed since the selector was made (docVersion {dv}, now {})",
                    doc.rel, doc.doc_version
                ),
            ));
        }
    }
    let (start, end) = span(&doc, spec, io)?;
    Ok(Span { doc, start, end })
}

/// The byte span of a cursor or range `spec` in `doc`, coordinates in `io`.
pub fn span(doc: &Document, spec: &PositionSpec, io: Encoding) -> Result<(usize, usize)> {
    Ok(match spec {
        PositionSpec::Cursor {
            line,
            col,
            name,
            occurrence,
            ..
        } => match name {
            Some(name) => name_span(doc, *line, name, occurrence.unwrap_or(1))?,
            None => {
                let off = offset_1based(doc, *line, col.unwrap_or(1), io)?;
                (off, off)
            }
        },
        PositionSpec::Range { start, end, .. } => (
            offset_1based(doc, start[0], start[1], io)?,
            offset_1based(doc, end[0], end[1], io)?,
        ),
        _ => return Err(LanserError::internal("not a cursor or range selector")),
    })
}

fn offset_1based(doc: &Document, line: u32, col: u32, io: Encoding) -> Result<usize> {
    let (l0, c0) = (
        (line as usize).saturating_sub(1),
        (col as usize).saturating_sub(1),
    );
    doc.index
        .offset(&doc.text, l0, c0, io)
        .map_err(|e| position_error(doc, line, col, io, e))
}

fn position_error(doc: &Document, line: u32, col: u32, io: Encoding, e: PosError) -> LanserError {
    match e {
        PosError::LineOutOfRange { line_count } => LanserError::not_found(format!(
            "line {line} is past the end of {} ({line_count} lines)",
            doc.rel
        )),
        PosError::ColumnOutOfRange { len } => LanserError::not_found(format!(
            "column {col} is past the end of {}:{line} (the line is {len} {io} units long; the last column is {})",
            doc.rel,
            len + 1
        )),
        PosError::InsideChar => LanserError::new(
            ErrorCode::IndexingMismatch,
            format!(
                "column {col} of {}:{line} falls inside a character that takes several {io} units",
                doc.rel
            ),
        ),
    }
}

/// Byte span of the `occurrence`-th (1-based) whole-word `name` on 1-based `line`.
fn name_span(doc: &Document, line: u32, name: &str, occurrence: u32) -> Result<(usize, usize)> {
    let l0 = (line as usize).saturating_sub(1);
    let Some((line_start, _)) = doc.index.line_span(l0) else {
        return Err(position_error(
            doc,
            line,
            1,
            Encoding::Codepoint,
            PosError::LineOutOfRange {
                line_count: doc.index.line_count(),
            },
        ));
    };
    let text = doc.index.line_text(&doc.text, l0).unwrap_or_default();
    let hits: Vec<usize> = text
        .match_indices(name)
        .filter(|(i, _)| {
            let before = text[..*i].chars().next_back();
            let after = text[i + name.len()..].chars().next();
            !before.is_some_and(is_ident_char) && !after.is_some_and(is_ident_char)
        })
        .map(|(i, _)| i)
        .collect();
    match hits.get(occurrence as usize - 1) {
        Some(i) => Ok((line_start + i, line_start + i + name.len())),
        None if hits.is_empty() => Err(LanserError::not_found(format!(
            "no identifier '{name}' on {}:{line}",
            doc.rel
        ))),
        None => Err(LanserError::not_found(format!(
            "'{name}' occurs {} times on {}:{line}, not {occurrence}",
            hits.len(),
            doc.rel
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::sha256_tagged;
    use crate::text::LineIndex;
    use std::path::PathBuf;
    use std::sync::Arc;

    fn doc(text: &str) -> Document {
        Document {
            abs: PathBuf::from("/x/a.py"),
            rel: "a.py".into(),
            text: text.into(),
            index: LineIndex::new(text),
            doc_version: sha256_tagged(text.as_bytes()),
        }
    }

    #[test]
    fn kept_documents_follow_the_bytes_on_disk() {
        let tmp = tempfile::tempdir().unwrap();
        let abs = tmp.path().join("a.py");
        std::fs::write(&abs, "x = 1\n").unwrap();
        let cache = DocCache::default();
        let first = cache.load(abs.clone(), "a.py".into()).unwrap();
        let again = cache.load(abs.clone(), "a.py".into()).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        // Same length, same second: only the bytes tell.
        std::fs::write(&abs, "x = 2\n").unwrap();
        let changed = cache.load(abs.clone(), "a.py".into()).unwrap();
        assert_eq!(changed.text, "x = 2\n");
        assert_eq!(
            changed.doc_version,
            Document::load(abs.clone(), "a.py".into())
                .unwrap()
                .doc_version
        );
        assert_ne!(changed.doc_version, first.doc_version);
        std::fs::write(&abs, b"\xff").unwrap();
        assert!(cache.load(abs, "a.py".into()).is_err());
    }

    #[test]
    fn name_occurrence_is_whole_word() {
        let d = doc("load = loader(load, load_all, load)\n");
        assert_eq!(name_span(&d, 1, "load", 1).unwrap(), (0, 4));
        assert_eq!(name_span(&d, 1, "load", 2).unwrap(), (14, 18));
        assert_eq!(name_span(&d, 1, "load", 3).unwrap(), (30, 34));
        let e = name_span(&d, 1, "load", 4).unwrap_err();
        assert!(e.message.contains("occurs 3 times"), "{}", e.message);
        assert!(name_span(&d, 1, "oad", 1).is_err());
    }

    #[test]
    fn name_after_emoji() {
        let d = doc("标签 = \"😀😀\"; total = area_of(x)\n");
        let (s, e) = name_span(&d, 1, "area_of", 1).unwrap();
        assert_eq!(&d.text[s..e], "area_of");
        assert_eq!(d.position(s, Encoding::Utf16), (0, 21));
    }

    #[test]
    fn errors_give_sizes() {
        let d = doc("ab\ncd\n");
        let e = offset_1based(&d, 9, 1, Encoding::Codepoint).unwrap_err();
        assert_eq!(e.code, ErrorCode::NotFound);
        assert!(e.message.contains("3 lines"), "{}", e.message);
        let e = offset_1based(&d, 1, 5, Encoding::Codepoint).unwrap_err();
        assert!(
            e.message.contains("2 codepoint units long"),
            "{}",
            e.message
        );
    }
}
