//! Byte-level BPE over raw bytes: each byte starts as the id of its GPT-2 byte-level
//! character, and merges are applied in exactly the order of `tokenizers`' `Word::merge_all`
//! (a min-heap on (rank, position); an entry is stale when the pair now at its position
//! no longer merges into the entry's new id). Working on bytes and ids, not byte-level
//! strings, means no allocation per piece.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};
use std::hash::BuildHasherDefault;

use rustc_hash::FxHasher;

pub type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

pub struct ByteBpe {
    byte_ids: [u32; 256],
    /// (left << 32 | right) -> (rank, merged id).
    merges: FxMap<u64, (u32, u32)>,
    /// Raw bytes of every vocabulary token -> id (for `ignore_merges`).
    vocab: FxMap<Box<[u8]>, u32>,
    ignore_merges: bool,
}

#[derive(Clone, Copy)]
struct Symbol {
    c: u32,
    prev: i32,
    next: i32,
    len: u32,
}

#[derive(PartialEq, Eq)]
struct Merge {
    pos: u32,
    rank: u32,
    new_id: u32,
}

impl Ord for Merge {
    // BinaryHeap is a max-heap: lowest rank first, then lowest position (as `tokenizers`).
    fn cmp(&self, other: &Self) -> Ordering {
        other.rank.cmp(&self.rank).then_with(|| other.pos.cmp(&self.pos))
    }
}
impl PartialOrd for Merge {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Reusable buffers for `ByteBpe::encode_word`.
#[derive(Default)]
pub struct Scratch {
    symbols: Vec<Symbol>,
    heap: BinaryHeap<Merge>,
}

impl ByteBpe {
    /// `vocab`: byte-level token strings -> id; `merges`: pairs of byte-level strings in
    /// rank order. None when a byte has no token (then `tokenizers` would drop it as
    /// unknown, which this does not reproduce) or a merge names an unknown token.
    pub fn new(
        vocab: &HashMap<String, u32>,
        merges: &[(String, String)],
        ignore_merges: bool,
    ) -> Option<ByteBpe> {
        let char_to_byte = crate::byte_table::char_to_byte();
        let to_bytes = |s: &str| -> Option<Box<[u8]>> {
            s.chars().map(|c| char_to_byte.get(&c).copied()).collect()
        };
        let mut byte_vocab: FxMap<Box<[u8]>, u32> = FxMap::default();
        byte_vocab.reserve(vocab.len());
        for (tok, &id) in vocab {
            if let Some(b) = to_bytes(tok) {
                byte_vocab.insert(b, id);
            }
        }
        let mut byte_ids = [0u32; 256];
        for (b, slot) in byte_ids.iter_mut().enumerate() {
            *slot = *byte_vocab.get(&[b as u8][..])?;
        }
        let mut merge_map: FxMap<u64, (u32, u32)> = FxMap::default();
        merge_map.reserve(merges.len());
        for (rank, (a, b)) in merges.iter().enumerate() {
            let a_id = *vocab.get(a)?;
            let b_id = *vocab.get(b)?;
            let new_id = *vocab.get(&format!("{a}{b}"))?;
            merge_map.insert(pair(a_id, b_id), (rank as u32, new_id));
        }
        Some(ByteBpe {
            byte_ids,
            merges: merge_map,
            vocab: byte_vocab,
            ignore_merges,
        })
    }

    /// Appends the ids of one pre-tokenized piece (its raw bytes) to `out`.
    #[inline]
    pub fn encode_word(&self, word: &[u8], out: &mut Vec<u32>, scratch: &mut Scratch) {
        if word.len() == 1 {
            out.push(self.byte_ids[word[0] as usize]);
            return;
        }
        if self.ignore_merges {
            if let Some(&id) = self.vocab.get(word) {
                out.push(id);
                return;
            }
        }
        let symbols = &mut scratch.symbols;
        symbols.clear();
        let n = word.len();
        for (i, &b) in word.iter().enumerate() {
            symbols.push(Symbol {
                c: self.byte_ids[b as usize],
                prev: i as i32 - 1,
                next: if i + 1 < n { i as i32 + 1 } else { -1 },
                len: 1,
            });
        }
        let heap = &mut scratch.heap;
        heap.clear();
        for i in 0..n - 1 {
            if let Some(&(rank, new_id)) = self.merges.get(&pair(symbols[i].c, symbols[i + 1].c)) {
                heap.push(Merge {
                    pos: i as u32,
                    rank,
                    new_id,
                });
            }
        }
        while let Some(top) = heap.pop() {
            let pos = top.pos as usize;
            if symbols[pos].len == 0 || symbols[pos].next == -1 {
                continue;
            }
            let next_pos = symbols[pos].next as usize;
            let right = symbols[next_pos];
            match self.merges.get(&pair(symbols[pos].c, right.c)) {
                Some(&(_, id)) if id == top.new_id => {}
                _ => continue, // stale
            }
            symbols[pos].c = top.new_id;
            symbols[pos].len += right.len;
            symbols[pos].next = right.next;
            symbols[next_pos].len = 0;
            if right.next > -1 && (right.next as usize) < n {
                symbols[right.next as usize].prev = pos as i32;
            }
            let cur = symbols[pos];
            if cur.prev >= 0 {
                let prev = cur.prev as usize;
                if let Some(&(rank, new_id)) = self.merges.get(&pair(symbols[prev].c, cur.c)) {
                    heap.push(Merge {
                        pos: prev as u32,
                        rank,
                        new_id,
                    });
                }
            }
            if cur.next >= 0 && (cur.next as usize) < n {
                let next = cur.next as usize;
                if let Some(&(rank, new_id)) = self.merges.get(&pair(cur.c, symbols[next].c)) {
                    heap.push(Merge {
                        pos: pos as u32,
                        rank,
                        new_id,
                    });
                }
            }
        }
        out.extend(symbols.iter().filter(|s| s.len != 0).map(|s| s.c));
    }
}

#[inline(always)]
fn pair(a: u32, b: u32) -> u64 {
    ((a as u64) << 32) | b as u64
}
