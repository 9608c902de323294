//! A workspace file as lanser reads it: its bytes as text, their `docVersion` (sha256) and a
//! line index; and a cache of them that reuses a document while its bytes are the same.

use crate::digest::sha256_tagged;
use crate::error::{ErrorCode, LanserError, Result};
use crate::text::{Encoding, LineIndex};
use std::path::PathBuf;
use std::sync::Arc;

/// One workspace file as read from disk.
#[derive(Debug, Clone)]
pub struct Document {
    pub abs: PathBuf,
    /// Relative POSIX path inside the root.
    pub rel: String,
    pub text: String,
    pub index: LineIndex,
    /// `sha256:<hex>` of the bytes.
    pub doc_version: String,
}

impl Document {
    pub fn load(abs: PathBuf, rel: String) -> Result<Document> {
        let bytes = std::fs::read(&abs)
            .map_err(|e| LanserError::not_found(format!("cannot read {rel}")).with_source(e))?;
        Document::from_bytes(abs, rel, bytes)
    }

    /// A document from bytes already read from `abs`.
    pub fn from_bytes(abs: PathBuf, rel: String, bytes: Vec<u8>) -> Result<Document> {
        let doc_version = sha256_tagged(&bytes);
        let text = String::from_utf8(bytes).map_err(|e| {
            LanserError::new(
                ErrorCode::IndexingUnsupported,
                format!(
                    "{rel} is not UTF-8 (invalid byte at offset {})",
                    e.utf8_error().valid_up_to()
                ),
            )
        })?;
        let index = LineIndex::new(&text);
        Ok(Document {
            abs,
            rel,
            text,
            index,
            doc_version,
        })
    }

    /// A document from text already in memory (a snapshot).
    pub fn from_text(abs: PathBuf, rel: String, text: String) -> Document {
        Document {
            doc_version: sha256_tagged(text.as_bytes()),
            index: LineIndex::new(&text),
            abs,
            rel,
            text,
        }
    }

    /// 0-based (line, column) of a byte offset in `enc`.
    pub fn position(&self, offset: usize, enc: Encoding) -> (usize, usize) {
        self.index.position(&self.text, offset, enc)
    }
}

/// Documents read before, kept across requests: a file read again whose bytes are the ones kept
/// (compared, not judged by its modification time) is not hashed or indexed again.
#[derive(Debug, Default)]
pub struct DocCache {
    /// The documents, and the bytes of their texts.
    docs: std::sync::Mutex<(std::collections::HashMap<PathBuf, Arc<Document>>, usize)>,
}

/// At most this many documents, and this many bytes of their texts, are kept; past either
/// the cache starts over. A larger document is not kept.
const DOC_CACHE_MAX: usize = 1024;
const DOC_CACHE_BYTES: usize = if cfg!(test) { 1 << 10 } else { 256 << 20 };

impl DocCache {
    /// [`Document::load`], through the cache.
    pub fn load(&self, abs: PathBuf, rel: String) -> Result<Arc<Document>> {
        let bytes = std::fs::read(&abs)
            .map_err(|e| LanserError::not_found(format!("cannot read {rel}")).with_source(e))?;
        let mut guard = self.docs.lock().unwrap_or_else(|p| p.into_inner());
        let (docs, held) = &mut *guard;
        if let Some(d) = docs.get(&abs) {
            if d.rel == rel && d.text.as_bytes() == bytes.as_slice() {
                return Ok(d.clone());
            }
        }
        let doc = Arc::new(Document::from_bytes(abs.clone(), rel, bytes)?);
        let size = doc.text.len();
        if size > DOC_CACHE_BYTES {
            return Ok(doc);
        }
        if docs.len() >= DOC_CACHE_MAX || *held + size > DOC_CACHE_BYTES {
            docs.clear();
            *held = 0;
        }
        if let Some(old) = docs.insert(abs, doc.clone()) {
            *held -= old.text.len();
        }
        *held += size;
        Ok(doc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_cache_is_bounded_by_bytes_as_well_as_by_count() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, size: usize| {
            let p = dir.path().join(name);
            std::fs::write(&p, "x".repeat(size)).unwrap();
            p
        };
        let cache = DocCache::default();
        let (a, b, big) = (file("a.py", 600), file("b.py", 300), file("big.py", 2000));
        let a1 = cache.load(a.clone(), "a.py".into()).unwrap();
        assert!(Arc::ptr_eq(
            &a1,
            &cache.load(a.clone(), "a.py".into()).unwrap()
        ));
        cache.load(b.clone(), "b.py".into()).unwrap();
        // Over the cap with a third: the cache starts over, and a is read again.
        cache.load(file("c.py", 300), "c.py".into()).unwrap();
        assert!(!Arc::ptr_eq(&a1, &cache.load(a, "a.py".into()).unwrap()));
        // A document larger than the whole cap is never kept.
        let big1 = cache.load(big.clone(), "big.py".into()).unwrap();
        assert!(!Arc::ptr_eq(
            &big1,
            &cache.load(big, "big.py".into()).unwrap()
        ));
        assert!(cache.docs.lock().unwrap().1 <= 1 << 10);
    }
}
