//! The one memo policy, shared by `batch` and the daemon: which answers may serve a later
//! identical request over the same version of the workspace, and how much is kept.
//!
//! Each route keys its memo its own typed way (a batch by the parsed [`crate::commands::Request`],
//! the daemon by what was asked and the index generation) and decides when the workspace moved on; what
//! both take from here is the rule [`keeps`] and the bounded [`Store`].

use crate::bundle::Bundle;
use crate::commands::Op;
use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;

/// Most answers a memo holds.
pub const MAX_ENTRIES: usize = 512;
/// Most bytes of answers a memo holds.
pub const MAX_BYTES: usize = 64 << 20;

/// Whether `bundle`, the answer to `op`, may serve a later identical request while the
/// workspace stays as it was: the request reads no file of its own (`Op::memoizable`), the
/// answer is complete (the server had loaded the project) and carries no volatile timing,
/// and it is a success or an error a retry would not change.
pub fn keeps(op: &Op, bundle: &Bundle) -> bool {
    op.memoizable()
        && bundle.meta.complete
        && bundle.meta.timing.is_none()
        && bundle.error.as_ref().is_none_or(|e| !e.retryable)
}

/// A memo bounded by [`MAX_ENTRIES`] and [`MAX_BYTES`]: an insert that would pass either
/// empties it first (it refills from the next requests; no eviction order to keep).
#[derive(Debug)]
pub struct Store<K, V> {
    entries: HashMap<K, (V, usize)>,
    bytes: usize,
}

impl<K, V> Default for Store<K, V> {
    fn default() -> Self {
        Store {
            entries: HashMap::new(),
            bytes: 0,
        }
    }
}

impl<K: Hash + Eq, V> Store<K, V> {
    pub fn get<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        self.entries.get(key).map(|(v, _)| v)
    }

    pub fn contains<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.entries.contains_key(key)
    }

    /// Keep `value` (of `bytes` bytes) under `key`; a value larger than the whole budget is
    /// not kept.
    pub fn insert(&mut self, key: K, value: V, bytes: usize) {
        if bytes > MAX_BYTES {
            return;
        }
        if let Some((_, old)) = self.entries.remove(&key) {
            self.bytes -= old;
        }
        if self.entries.len() >= MAX_ENTRIES || self.bytes + bytes > MAX_BYTES {
            self.clear();
        }
        self.bytes += bytes;
        self.entries.insert(key, (value, bytes));
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.bytes = 0;
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_store_starts_over_and_counts_its_bytes() {
        let mut s = Store::default();
        for i in 0..MAX_ENTRIES {
            s.insert(i.to_string(), i, 10);
        }
        assert_eq!((s.len(), s.bytes()), (MAX_ENTRIES, 10 * MAX_ENTRIES));
        s.insert("0".into(), 0, 20);
        assert_eq!((s.len(), s.bytes()), (MAX_ENTRIES, 10 * MAX_ENTRIES + 10));
        s.insert("new".into(), 1, 5);
        assert_eq!((s.len(), s.bytes()), (1, 5));
        s.insert("big".into(), 2, MAX_BYTES - 4);
        assert_eq!((s.len(), s.bytes()), (1, MAX_BYTES - 4));
        s.insert("huge".into(), 3, MAX_BYTES + 1);
        assert_eq!(s.get("huge"), None);
        assert_eq!(s.get("big"), Some(&2));
    }
}
