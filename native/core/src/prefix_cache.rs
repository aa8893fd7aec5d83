//! Cache of the ids of long text pieces (the text between two added tokens: a system
//! prompt, a tool list, an earlier turn), so that a repeated long prefix — or any repeated
//! long piece — is not re-tokenized. Keyed by the piece's text (hash, then full compare),
//! bounded in bytes, evicting the least recently used entries.

use std::collections::HashMap;
use std::hash::Hasher;

use rustc_hash::FxHasher;
use std::sync::{Arc, Mutex};

/// Pieces shorter than this are encoded directly (a lookup would cost about as much).
pub const MIN_PIECE_BYTES: usize = 256;

struct Entry {
    text: Box<str>,
    ids: Arc<[u32]>,
    last_used: u64,
}

#[derive(Default)]
struct Inner {
    map: HashMap<u64, Entry>,
    bytes: usize,
    clock: u64,
    hits: u64,
    misses: u64,
}

pub struct PrefixCache {
    inner: Mutex<Inner>,
    budget_bytes: usize,
}

/// Counters for metrics and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheStats {
    pub entries: usize,
    pub bytes: usize,
    pub hits: u64,
    pub misses: u64,
}

impl PrefixCache {
    pub fn new(budget_bytes: usize) -> PrefixCache {
        PrefixCache {
            inner: Mutex::new(Inner::default()),
            budget_bytes,
        }
    }

    pub fn key(text: &str) -> u64 {
        // Fx, not SipHash: the key is only a bucket (a hit compares the full text), and a
        // 150 KB system prompt is hashed on every request.
        let mut h = FxHasher::default();
        h.write(text.as_bytes());
        h.finish()
    }

    /// The cached ids of `text`, if any (a poisoned lock is treated as a miss).
    pub fn get(&self, key: u64, text: &str) -> Option<Arc<[u32]>> {
        let mut inner = self.inner.lock().ok()?;
        inner.clock += 1;
        let now = inner.clock;
        let found = match inner.map.get_mut(&key) {
            Some(e) if &*e.text == text => {
                e.last_used = now;
                Some(Arc::clone(&e.ids))
            }
            _ => None,
        };
        if found.is_some() {
            inner.hits += 1;
        } else {
            inner.misses += 1;
        }
        found
    }

    pub fn insert(&self, key: u64, text: &str, ids: Arc<[u32]>) {
        let cost = text.len() + ids.len() * 4;
        if cost > self.budget_bytes / 4 {
            return; // one piece may not take over the cache
        }
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        inner.clock += 1;
        let now = inner.clock;
        if let Some(old) = inner.map.insert(
            key,
            Entry {
                text: text.into(),
                ids,
                last_used: now,
            },
        ) {
            inner.bytes -= old.text.len() + old.ids.len() * 4;
        }
        inner.bytes += cost;
        if inner.bytes > self.budget_bytes {
            evict(&mut inner, self.budget_bytes * 3 / 4);
        }
    }

    pub fn stats(&self) -> CacheStats {
        match self.inner.lock() {
            Ok(i) => CacheStats {
                entries: i.map.len(),
                bytes: i.bytes,
                hits: i.hits,
                misses: i.misses,
            },
            Err(_) => CacheStats {
                entries: 0,
                bytes: 0,
                hits: 0,
                misses: 0,
            },
        }
    }

    pub fn clear(&self) {
        if let Ok(mut i) = self.inner.lock() {
            i.map.clear();
            i.bytes = 0;
        }
    }
}

/// Drops least recently used entries until at most `target` bytes remain.
fn evict(inner: &mut Inner, target: usize) {
    let mut ages: Vec<(u64, u64)> = inner.map.iter().map(|(k, e)| (e.last_used, *k)).collect();
    ages.sort_unstable();
    for (_, key) in ages {
        if inner.bytes <= target {
            break;
        }
        if let Some(e) = inner.map.remove(&key) {
            inner.bytes -= e.text.len() + e.ids.len() * 4;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hit_miss_and_eviction() {
        let c = PrefixCache::new(4000);
        let a = "a".repeat(300);
        let k = PrefixCache::key(&a);
        assert!(c.get(k, &a).is_none());
        c.insert(k, &a, Arc::from(vec![1, 2, 3]));
        assert_eq!(&*c.get(k, &a).unwrap(), &[1, 2, 3]);
        // Same hash, different text: a miss, never wrong ids.
        assert!(c.get(k, "b").is_none());
        for i in 0..20 {
            let t = format!("{i}{}", "x".repeat(300));
            c.insert(PrefixCache::key(&t), &t, Arc::from(vec![0; 10]));
        }
        let s = c.stats();
        assert!(s.bytes <= 4000, "{s:?}");
        assert_eq!((s.hits, s.misses), (1, 2));
    }
}
