//! Multi-turn requests send the earlier messages again, byte for byte: the same system
//! prompt, the same history, one new turn. Parsing a 190 KB messages array (serde_json's
//! escape handling) and copying its strings into template values was most of what a
//! prefix-cache hit of `encode_chat` cost, so the template values of the messages of the
//! last few long arrays are kept with the raw bytes they came from and where each element
//! ends. A new array that starts with the same bytes takes the values of the elements that
//! lie wholly in the common prefix and parses only the rest.
//!
//! Exactness: a message's normalised value depends on its own JSON only
//! (`normalise_message`), and the bytes of a reused element, and of everything before it,
//! are identical to those that produced the cached value. The rest is parsed element by
//! element with the same serde_json parser; anything a whole-array parse could refuse
//! (bad JSON, a trailing comma, trailing bytes, an element that is not an object, nesting
//! near serde_json's depth limit, a normalisation error) sends the request through the
//! whole-array parse instead, so errors are those of a cold call.
//!
//! Only parsed messages are reused, never rendered text: the template always renders the
//! whole conversation (its output for an earlier message may depend on later ones).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use minijinja::value::Value;
use serde_json::Value as Json;

use crate::content_format::ContentFormat;
use crate::error::Result;
use crate::messages::{normalise_for_template, normalise_message, parse_messages};
use crate::prompt_cache::common_prefix;
use crate::template_value::json_to_value;

/// Arrays shorter than this are parsed every time (a lookup would cost about as much).
pub const MIN_BYTES: usize = 4096;
const MAX_ENTRIES: usize = 16;
/// Bytes compared before a full prefix comparison (cheap rejection of other arrays).
const PROBE_BYTES: usize = 256;
/// Elements nested this deep are left to the whole-array parse (serde_json refuses a
/// 128th level, and an element parsed alone is one level shallower than in its array).
const MAX_ELEMENT_DEPTH: usize = 100;

struct Entry {
    format: ContentFormat,
    bytes: Box<[u8]>,
    /// Byte offset just after each element's closing brace.
    ends: Box<[u32]>,
    values: Box<[Value]>,
}

impl Entry {
    /// Raw bytes plus about as much again for the strings of the values.
    fn cost(&self) -> usize {
        self.bytes.len() * 2 + self.ends.len() * 4
    }
}

pub struct MessagesCache {
    /// Most recently used last.
    entries: Mutex<Vec<Arc<Entry>>>,
    budget_bytes: usize,
    min_bytes: usize,
    hits: AtomicU64,
}

/// Counters for tests: (entries, arrays that reused cached elements).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MessagesCacheStats {
    pub entries: usize,
    pub hits: u64,
}

impl MessagesCache {
    pub fn new(budget_bytes: usize) -> MessagesCache {
        MessagesCache::with_min_bytes(budget_bytes, MIN_BYTES)
    }

    /// A cache that also keeps arrays shorter than `MIN_BYTES` (tests).
    pub fn with_min_bytes(budget_bytes: usize, min_bytes: usize) -> MessagesCache {
        MessagesCache {
            entries: Mutex::new(Vec::new()),
            budget_bytes,
            min_bytes,
            hits: AtomicU64::new(0),
        }
    }

    /// The template value of a messages array (a list of normalised message maps), the
    /// same value as `messages_value` gives.
    pub fn messages(&self, bytes: &[u8], format: ContentFormat) -> Result<Value> {
        if bytes.len() < self.min_bytes || bytes.len() >= u32::MAX as usize {
            return messages_value(bytes, format);
        }
        let reuse = self.find(bytes, format);
        let (mut values, mut ends, start) = match &reuse {
            Some((entry, k)) => (
                entry.values[..*k].to_vec(),
                entry.ends[..*k].to_vec(),
                Start::After(entry.ends[*k - 1] as usize),
            ),
            None => (Vec::new(), Vec::new(), Start::Array),
        };
        let reused = values.len();
        if parse_elements(bytes, start, format, &mut values, &mut ends).is_none() {
            return messages_value(bytes, format);
        }
        // A new entry when nothing was reused or the new part is large enough to be worth a
        // copy of the whole array (a hit with a new short turn stores nothing).
        let fresh = bytes.len() - ends.get(reused.wrapping_sub(1)).map_or(0, |&e| e as usize);
        if reuse.is_none() || fresh >= (bytes.len() / 16).max(1024) {
            let entry = Entry {
                format,
                bytes: bytes.into(),
                ends: ends.into_boxed_slice(),
                values: values.clone().into_boxed_slice(),
            };
            let replaces = reuse
                .as_ref()
                .filter(|(e, k)| *k == e.values.len())
                .map(|(e, _)| e);
            self.insert(entry, replaces);
        }
        Ok(Value::from_object(values))
    }

    /// The cached array sharing the most whole elements with `bytes`, and how many.
    fn find(&self, bytes: &[u8], format: ContentFormat) -> Option<(Arc<Entry>, usize)> {
        let probe = &bytes[..PROBE_BYTES.min(bytes.len())];
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let mut best: Option<(usize, usize, usize)> = None; // (bytes reused, index, elements)
        for (i, e) in entries.iter().enumerate() {
            if e.format != format || !e.bytes.starts_with(probe) {
                continue;
            }
            let common = common_prefix(&e.bytes, bytes);
            let k = e.ends.partition_point(|&end| end as usize <= common);
            let Some(&end) = k.checked_sub(1).map(|k| &e.ends[k]) else {
                continue;
            };
            if best.is_none_or(|(b, _, _)| end as usize > b) {
                best = Some((end as usize, i, k));
            }
        }
        let (_, i, k) = best?;
        let entry = entries.remove(i);
        entries.push(Arc::clone(&entry));
        drop(entries);
        self.hits.fetch_add(1, Ordering::Relaxed);
        Some((entry, k))
    }

    fn insert(&self, entry: Entry, replaces: Option<&Arc<Entry>>) {
        if entry.cost() > self.budget_bytes / 4 {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = replaces {
            entries.retain(|e| !Arc::ptr_eq(e, old));
        }
        entries.push(Arc::new(entry));
        let mut total: usize = entries.iter().map(|e| e.cost()).sum();
        while entries.len() > MAX_ENTRIES || total > self.budget_bytes {
            total -= entries.remove(0).cost();
        }
    }

    pub fn stats(&self) -> MessagesCacheStats {
        MessagesCacheStats {
            entries: self.entries.lock().map(|e| e.len()).unwrap_or(0),
            hits: self.hits.load(Ordering::Relaxed),
        }
    }

    pub fn clear(&self) {
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }
}

/// The template value of a messages array, parsed whole (the reference path).
pub fn messages_value(bytes: &[u8], format: ContentFormat) -> Result<Value> {
    let messages = normalise_for_template(parse_messages(bytes)?, format)?;
    Ok(Value::from_object(
        messages
            .into_iter()
            .map(json_to_value)
            .collect::<Vec<Value>>(),
    ))
}

enum Start {
    /// At the beginning of the array (leading whitespace, then `[`).
    Array,
    /// Just after an element.
    After(usize),
}

/// Parses the elements from `start` to the end of the array, appending their values and
/// end offsets; `None` for anything other than `ws [ ws obj (ws , ws obj)* ws ] ws`
/// (or `[ ws ]`), or an element the whole-array path might treat differently.
fn parse_elements(
    bytes: &[u8],
    start: Start,
    format: ContentFormat,
    values: &mut Vec<Value>,
    ends: &mut Vec<u32>,
) -> Option<()> {
    let (mut pos, mut first) = match start {
        Start::Array => {
            let at = skip_ws(bytes, 0);
            (bytes.get(at).filter(|&&b| b == b'[').map(|_| at + 1)?, true)
        }
        Start::After(end) => (end, false),
    };
    loop {
        pos = skip_ws(bytes, pos);
        match bytes.get(pos)? {
            b']' => return (skip_ws(bytes, pos + 1) == bytes.len()).then_some(()),
            b',' if !first => pos = skip_ws(bytes, pos + 1),
            b'{' if first => {}
            _ => return None,
        }
        if bytes.get(pos) != Some(&b'{') {
            return None;
        }
        let mut stream = serde_json::Deserializer::from_slice(&bytes[pos..]).into_iter::<Json>();
        let message = stream.next()?.ok()?;
        pos += stream.byte_offset();
        if depth(&message, 0) >= MAX_ELEMENT_DEPTH {
            return None;
        }
        let message = normalise_message(message, values.len(), format).ok()?;
        values.push(json_to_value(message));
        ends.push(u32::try_from(pos).ok()?);
        first = false;
    }
}

/// JSON whitespace, as serde_json skips it.
fn skip_ws(bytes: &[u8], mut pos: usize) -> usize {
    while let Some(b' ' | b'\n' | b'\t' | b'\r') = bytes.get(pos) {
        pos += 1;
    }
    pos
}

/// Nesting depth of arrays and objects (a scalar is 0), stopping at the limit.
fn depth(v: &Json, at: usize) -> usize {
    if at >= MAX_ELEMENT_DEPTH {
        return at;
    }
    match v {
        Json::Array(items) => items
            .iter()
            .map(|i| depth(i, at + 1))
            .max()
            .unwrap_or(at + 1),
        Json::Object(map) => map
            .values()
            .map(|i| depth(i, at + 1))
            .max()
            .unwrap_or(at + 1),
        _ => at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FORMATS: [ContentFormat; 2] = [ContentFormat::String, ContentFormat::OpenAi];

    /// Same result as the whole-array parse: equal values with the same Debug text (types
    /// and key order), or the same error message.
    fn assert_same(cache: &MessagesCache, bytes: &[u8], format: ContentFormat) {
        let want = messages_value(bytes, format).map_err(|e| e.to_string());
        let got = cache.messages(bytes, format).map_err(|e| e.to_string());
        let text = String::from_utf8_lossy(bytes);
        match (&got, &want) {
            (Ok(g), Ok(w)) => {
                assert_eq!(g, w, "{text}");
                assert_eq!(format!("{g:?}"), format!("{w:?}"), "{text}");
            }
            _ => assert_eq!(got, want, "{text}"),
        }
    }

    fn array(items: &[String]) -> Vec<u8> {
        format!("[{}]", items.join(",")).into_bytes()
    }

    fn history() -> Vec<String> {
        let system =
            serde_json::to_string(&"Rules:\n\t\"quoted\" é 日本 🦊 \\ ".repeat(8)).unwrap();
        vec![
            format!(r#"{{"role":"system","content":{system}}}"#),
            r#"{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}"#.into(),
            r#"{"role":"assistant","content":null,"reasoning_content":"hmm","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"x\": 1.5e3, \"y\": -2}"}}]}"#.into(),
            r#"{"role":"tool","content":"{\"ok\": true}","tool_call_id":"c1","name":null}"#.into(),
            r#"{"role":"assistant","content":"<think>\nx\n</think>\n\nDone.","extra":{"n":18446744073709551615,"m":-1}}"#.into(),
            r#"{"role":"user","content":"next?"}"#.into(),
        ]
    }

    #[test]
    fn reused_elements_give_the_values_of_a_whole_parse() {
        for format in FORMATS {
            let msgs = history();
            let full = array(&msgs);
            for k in 0..=msgs.len() {
                let cache = MessagesCache::with_min_bytes(1 << 20, 0);
                assert_same(&cache, &array(&msgs[..k]), format);
                let before = cache.stats().hits;
                assert_same(&cache, &full, format);
                assert_eq!(cache.stats().hits > before, k > 0, "k={k}");
                // Again from whatever the cache holds now, then a different last turn.
                assert_same(&cache, &full, format);
                let mut other = msgs.clone();
                other[msgs.len() - 1] = r#"{"role":"user","content":"other"}"#.into();
                assert_same(&cache, &array(&other), format);
            }
        }
    }

    #[test]
    fn whitespace_and_an_edit_inside_a_cached_element() {
        let cache = MessagesCache::with_min_bytes(1 << 20, 0);
        let msgs = history();
        let spaced = format!(" \n[ {} ,\t{} ]\r\n", msgs[0], msgs[1]).into_bytes();
        assert_same(&cache, &spaced, ContentFormat::String);
        let longer = format!(" \n[ {} ,\t{} , {}]", msgs[0], msgs[1], msgs[5]).into_bytes();
        assert_same(&cache, &longer, ContentFormat::String);
        // The first element changed in its last byte before the brace: nothing reused.
        let edited = msgs[0].replace(r#""}"#, r#"!"}"#);
        assert_ne!(edited, msgs[0]);
        let hits = cache.stats().hits;
        assert_same(
            &cache,
            &array(&[edited, msgs[1].clone()]),
            ContentFormat::String,
        );
        assert_eq!(cache.stats().hits, hits);
        // Entries of the other content format are not used.
        assert_same(&cache, &spaced, ContentFormat::OpenAi);
        assert_eq!(cache.stats().hits, hits);
    }

    #[test]
    fn bad_input_after_a_cached_prefix_fails_as_a_cold_parse() {
        let msgs = history();
        let head = format!("[{},{}", msgs[0], msgs[1]);
        let deep = |d: usize| {
            format!(
                r#"{{"role":"user","content":"x","deep":{}{}}}"#,
                "[".repeat(d),
                "]".repeat(d)
            )
        };
        let mut bad: Vec<Vec<u8>> = [
            format!("{head},]"),
            format!("{head}]x"),
            format!("{head}] ]"),
            format!("{head},"),
            format!("{head}"),
            format!("{head},,{}]", msgs[5]),
            format!("{head} {}]", msgs[5]),
            format!("{head},3]"),
            format!(r#"{head},"user"]"#),
            format!("{head},[]]"),
            format!("{head},null]"),
            format!(r#"{head},{{"role":"user","content":}}]"#),
            format!(r#"{head},{{"role":"user","content":[{{"type":"image_url"}}]}}]"#),
            format!(r#"{head},{{"role":"user","content":5}}]"#),
            format!(r#"{head},{{"role":"user","content":"a","content":"b"}}]"#),
            format!(r#"{head},{{"role":"user","content":"\ud800"}}]"#),
            format!("{head},{}]", deep(90)),
        ]
        .into_iter()
        .map(String::into_bytes)
        .collect();
        for d in 120..=130 {
            bad.push(format!("{head},{}]", deep(d)).into_bytes());
        }
        let mut invalid_utf8 = format!(r#"{head},{{"role":"user","content":"x"#).into_bytes();
        invalid_utf8.extend_from_slice(b"\xff\"}]");
        bad.push(invalid_utf8);
        for format in FORMATS {
            for b in &bad {
                let cache = MessagesCache::with_min_bytes(1 << 20, 0);
                assert_same(&cache, format!("{head}]").as_bytes(), format);
                assert_same(&cache, b, format);
                // Errors are not kept: the same again, and the good array still reuses.
                assert_same(&cache, b, format);
                assert_same(&cache, format!("{head}]").as_bytes(), format);
            }
        }
    }

    #[test]
    fn short_arrays_and_budget() {
        let msgs = history();
        let cache = MessagesCache::new(1 << 20);
        assert_same(&cache, &array(&msgs), ContentFormat::String);
        assert_eq!(cache.stats().entries, 0, "shorter than MIN_BYTES: not kept");
        let small = MessagesCache::with_min_bytes(10 * array(&msgs).len(), 0);
        for i in 0..40 {
            let mut m = msgs.clone();
            m[5] = format!(r#"{{"role":"user","content":"{i}"}}"#);
            m.rotate_left(i % 3);
            assert_same(&small, &array(&m), ContentFormat::String);
        }
        let s = small.stats();
        assert!(s.entries >= 1 && s.entries <= 4, "{s:?}");
    }
}
