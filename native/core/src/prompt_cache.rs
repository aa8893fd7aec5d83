//! The last few long prompts with their ids and the places where an added token ends, so a
//! new prompt that starts with the same text (the same system prompt and earlier turns,
//! a new user turn) reuses the ids of the shared part without splitting, hashing or
//! comparing it piece by piece: one comparison of the common prefix, one copy of the ids.
//!
//! Exactness: `SpecialSplitter::split` scans left to right and decides at each byte by
//! reading at most `max_token_len` bytes from it, so the split of a new text agrees with the
//! cached one at every position `p` with `p + max_token_len <= common prefix`. A place
//! where an added token ends, up to that limit, is therefore a piece boundary of the new
//! text too, with the same pieces (and ids: pieces encode independently) before it.

use std::sync::{Arc, Mutex};

/// Prompts shorter than this go through the piece cache only.
pub const MIN_PROMPT_BYTES: usize = 4096;
/// Prompts kept (most recently used first out of the list when full).
const MAX_ENTRIES: usize = 16;
/// Bytes compared before a full prefix comparison (cheap rejection of other prompts).
const PROBE_BYTES: usize = 256;

pub struct Entry {
    text: Box<str>,
    ids: Box<[u32]>,
    /// (byte offset just after an added token, number of ids before that offset), ascending.
    bounds: Box<[(u32, u32)]>,
}

impl Entry {
    pub fn new(text: &str, ids: &[u32], bounds: Vec<(u32, u32)>) -> Entry {
        Entry {
            text: text.into(),
            ids: ids.into(),
            bounds: bounds.into_boxed_slice(),
        }
    }

    pub fn text_len(&self) -> usize {
        self.text.len()
    }

    fn cost(&self) -> usize {
        self.text.len() + self.ids.len() * 4 + self.bounds.len() * 8
    }
}

/// A reusable prefix of a cached prompt: `ids[..ids_len]` are the ids of `text[..bytes]`.
pub struct Reuse {
    pub entry: Arc<Entry>,
    pub bytes: usize,
    pub ids_len: usize,
    /// The common prefix covers the whole cached prompt.
    pub covers_entry: bool,
}

impl Reuse {
    pub fn ids(&self) -> &[u32] {
        &self.entry.ids[..self.ids_len]
    }

    /// The cached boundaries up to the reused prefix (to carry into a new entry).
    pub fn bounds(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.entry
            .bounds
            .iter()
            .copied()
            .take_while(|&(b, _)| b as usize <= self.bytes)
    }
}

#[derive(Default)]
struct Inner {
    /// Most recently used last.
    entries: Vec<Arc<Entry>>,
    bytes: usize,
    hits: u64,
}

pub struct PromptCache {
    inner: Mutex<Inner>,
    budget_bytes: usize,
}

impl PromptCache {
    pub fn new(budget_bytes: usize) -> PromptCache {
        PromptCache {
            inner: Mutex::new(Inner::default()),
            budget_bytes,
        }
    }

    /// The longest reusable prefix of `text` among the cached prompts, if any is longer than
    /// zero. `max_token_len` is the longest added token in bytes.
    pub fn find(&self, text: &str, max_token_len: usize) -> Option<Reuse> {
        let probe = &text.as_bytes()[..PROBE_BYTES.min(text.len())];
        let candidates: Vec<Arc<Entry>> = {
            let inner = self.inner.lock().ok()?;
            inner
                .entries
                .iter()
                .filter(|e| e.text.as_bytes().starts_with(probe))
                .cloned()
                .collect()
        };
        let mut best: Option<Reuse> = None;
        for entry in candidates {
            let common = common_prefix(entry.text.as_bytes(), text.as_bytes());
            // Every boundary is followed in the cached text by what followed it there; a
            // boundary at the very end of both texts needs no look-ahead.
            let limit = if common == entry.text.len() && common == text.len() {
                common
            } else {
                (common + 1).saturating_sub(max_token_len.max(1))
            };
            let k = entry.bounds.partition_point(|&(b, _)| b as usize <= limit);
            let Some(&(b, n)) = k.checked_sub(1).map(|k| &entry.bounds[k]) else {
                continue;
            };
            if best.as_ref().is_some_and(|r| r.bytes >= b as usize) {
                continue;
            }
            best = Some(Reuse {
                covers_entry: common == entry.text.len(),
                entry,
                bytes: b as usize,
                ids_len: n as usize,
            });
        }
        if let Some(r) = &best {
            if let Ok(mut inner) = self.inner.lock() {
                inner.hits += 1;
                if let Some(i) = inner.entries.iter().position(|e| Arc::ptr_eq(e, &r.entry)) {
                    let e = inner.entries.remove(i);
                    inner.entries.push(e);
                }
            }
        }
        best
    }

    /// Adds a prompt; `replaces` (a cached prompt the new one extends) is dropped.
    pub fn insert(&self, entry: Entry, replaces: Option<&Arc<Entry>>) {
        if entry.cost() > self.budget_bytes / 4 {
            return;
        }
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        if let Some(old) = replaces {
            if let Some(i) = inner.entries.iter().position(|e| Arc::ptr_eq(e, old)) {
                let e = inner.entries.remove(i);
                inner.bytes -= e.cost();
            }
        }
        inner.bytes += entry.cost();
        inner.entries.push(Arc::new(entry));
        while inner.entries.len() > MAX_ENTRIES || inner.bytes > self.budget_bytes {
            let e = inner.entries.remove(0);
            inner.bytes -= e.cost();
        }
    }

    pub fn len(&self) -> usize {
        self.inner.lock().map(|i| i.entries.len()).unwrap_or(0)
    }

    /// (entries, bytes, prompts that reused a cached prefix).
    pub fn stats(&self) -> (usize, usize, u64) {
        self.inner
            .lock()
            .map(|i| (i.entries.len(), i.bytes, i.hits))
            .unwrap_or((0, 0, 0))
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn clear(&self) {
        if let Ok(mut i) = self.inner.lock() {
            i.entries.clear();
            i.bytes = 0;
        }
    }
}

/// Length of the longest common prefix (compared in blocks, then byte by byte).
pub(crate) fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 4096;
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + BLOCK <= n && a[i..i + BLOCK] == b[i..i + BLOCK] {
        i += BLOCK;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_prefix_lengths() {
        let a = "x".repeat(10_000);
        let mut b = a.clone();
        assert_eq!(common_prefix(a.as_bytes(), b.as_bytes()), 10_000);
        b.replace_range(9_000..9_001, "y");
        assert_eq!(common_prefix(a.as_bytes(), b.as_bytes()), 9_000);
        assert_eq!(common_prefix(b"ab", b"abc"), 2);
        assert_eq!(common_prefix(b"", b"abc"), 0);
    }

    #[test]
    fn reuse_stops_max_token_len_before_the_difference() {
        let c = PromptCache::new(1 << 20);
        let text = format!("{}<t>{}<t>tail", "a".repeat(300), "b".repeat(300));
        // Boundaries after each "<t>" (ids counts are made up).
        let b1 = 303;
        let b2 = 606;
        c.insert(Entry::new(&text, &[1; 10], vec![(b1, 4), (b2, 8)]), None);
        // Differs right after the second token: that boundary needs 3 more equal bytes.
        let other = format!("{}<t>{}<t>TAIL", "a".repeat(300), "b".repeat(300));
        let r = c.find(&other, 3).unwrap();
        assert_eq!(
            (r.bytes, r.ids_len, r.covers_entry),
            (b1 as usize, 4, false)
        );
        let other = format!("{}<t>{}<t>taiX", "a".repeat(300), "b".repeat(300));
        let r = c.find(&other, 3).unwrap();
        assert_eq!((r.bytes, r.ids_len), (b2 as usize, 8));
        // The same text: all of it (up to the last boundary).
        let r = c.find(&text, 3).unwrap();
        assert_eq!((r.bytes, r.covers_entry), (b2 as usize, true));
        assert!(c.find(&"z".repeat(400), 3).is_none());
        c.clear();
        assert!(c.find(&text, 3).is_none());
    }
}
