//! The shared streaming tool-call engine and one file per format family.
//!
//! The engine scans content for a family's start markers; text outside calls is emitted
//! as soon as it cannot be part of a marker (a partial marker at the end is held back).
//! From a start marker on, the text is a *region*, held until the family says it is
//! complete (usually its end marker), then parsed into calls. A region that does not
//! parse is given back as content, byte for byte: nothing is lost and nothing invented.
//! Whitespace (and `;` for llama3) between or after calls belongs to the call syntax
//! and is dropped; before real text it is kept.
//!
//! End-of-stream rule (all families): an unterminated region is parsed with `eof=true`;
//! each family recovers a call only when the call's own body is complete (a complete
//! JSON arguments value, or a closed function/invoke element) and only the outer wrapper
//! is missing. Otherwise the region text is emitted as content.

pub mod deepseek;
pub mod dsml;
pub mod gemma4;
pub mod glm;
pub mod guided;
pub mod json_family;
pub mod kimi;
pub mod minimax;
pub mod minimax_nested;
pub mod pythonic;
pub mod step3;
pub mod stream;
pub mod xml_function;

use super::scan::{Hit, Markers};
use super::values::ToolSchemas;
use super::{Call, Delta, Sink};

/// Is the region complete?
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegionEnd {
    /// The region is `buf[..n]`.
    Complete(usize),
    NeedMore,
}

/// What parsing needs besides the region text.
pub struct Ctx<'a> {
    pub schemas: &'a ToolSchemas,
}

/// One tool-call format family.
pub trait Format: Send {
    /// Markers that open a region.
    fn starts(&self) -> &'static [&'static str];
    /// Wrapper markers dropped from content (e.g. a calls section around per-call regions).
    fn drops(&self) -> &'static [&'static str] {
        &[]
    }
    /// Bytes that open a bare region at the start of the output or right after a call.
    fn bare(&self) -> &'static [u8] {
        &[]
    }
    /// Markers kept as content after which a bare region may open again, as at the start
    /// of the output (xLAM: a JSON call list right after a `</think>` block).
    fn reopens(&self) -> &'static [&'static str] {
        &[]
    }
    /// Bytes between consecutive calls that belong to the syntax (besides whitespace).
    fn separators(&self) -> &'static [u8] {
        &[]
    }
    /// Where the region starting at `buf[0]` ends; `marker` is the index in `starts()`,
    /// or None for a bare region.
    fn region_end(&self, buf: &str, marker: Option<usize>) -> RegionEnd;
    /// Calls in a region (complete, or unterminated at end of stream when `eof`).
    /// None = not a tool call: the text is given back as content.
    fn parse(&self, region: &str, marker: Option<usize>, eof: bool, cx: &Ctx) -> Option<Vec<Call>>;
    /// `region_end`, told that no end was found in `buf[..floor]` before: formats whose end is a
    /// plain marker search resume near `floor` instead of rescanning the region (linear cost
    /// for long regions). The default rescans.
    fn region_end_from(&self, buf: &str, marker: Option<usize>, _floor: usize) -> RegionEnd {
        self.region_end(buf, marker)
    }
    /// Does this format stream arguments (see `stream`)? False: calls go out when they close.
    fn streams(&self) -> bool {
        false
    }
    /// How the region read so far starts, for streaming (only asked when `streams()`).
    fn stream_head(&self, _region: &str, _marker: Option<usize>) -> stream::Head {
        stream::Head::No
    }
}

/// Region ends after the first `end` marker following the opening marker.
pub fn until_marker(buf: &str, skip: usize, end: &str) -> RegionEnd {
    match buf.get(skip..).and_then(|r| r.find(end)) {
        Some(p) => RegionEnd::Complete(skip + p + end.len()),
        None => RegionEnd::NeedMore,
    }
}

/// Like `until_marker`, but an end marker inside a JSON string (`"..."`) does not count.
pub fn until_marker_json(buf: &str, skip: usize, end: &str) -> RegionEnd {
    let b = buf.as_bytes();
    let e = end.as_bytes();
    let mut i = skip;
    let mut in_str = false;
    while i < b.len() {
        let c = b[i];
        if in_str {
            if c == b'\\' {
                i += 2;
                continue;
            }
            if c == b'"' {
                in_str = false;
            }
        } else if c == b'"' {
            in_str = true;
        } else if c == e[0] && b[i..].starts_with(e) {
            return RegionEnd::Complete(i + e.len());
        }
        i += 1;
    }
    RegionEnd::NeedMore
}

/// Region ends after the first of several end markers.
pub fn until_any(buf: &str, skip: usize, ends: &[&str]) -> RegionEnd {
    let rest = match buf.get(skip..) {
        Some(r) => r,
        None => return RegionEnd::NeedMore,
    };
    let mut best: Option<usize> = None;
    for e in ends {
        if let Some(p) = rest.find(e) {
            let end = skip + p + e.len();
            if best.is_none_or(|b| end < b) {
                best = Some(end);
            }
        }
    }
    best.map_or(RegionEnd::NeedMore, RegionEnd::Complete)
}

/// Region ends when the bracketed JSON (or Python) value starting at the first
/// non-whitespace byte after `skip` closes. A mismatched bracket ends it there.
pub fn after_balanced(buf: &str, skip: usize, python: bool) -> RegionEnd {
    let i = super::scan::skip_ws(buf, skip);
    match buf.as_bytes().get(i) {
        None => RegionEnd::NeedMore,
        Some(b'{') | Some(b'[') => match super::scan::balanced_end(buf, i, python) {
            Ok(Some(e)) => RegionEnd::Complete(e),
            Ok(None) => RegionEnd::NeedMore,
            Err(()) => RegionEnd::Complete(i + 1),
        },
        Some(_) => RegionEnd::Complete(i),
    }
}

/// Tool call ids: `call_` + 24 base62 chars from a splitmix64 stream.
pub struct IdGen {
    state: u64,
}

impl IdGen {
    pub fn new(seed: Option<u64>) -> IdGen {
        let state = seed.unwrap_or_else(|| {
            use std::hash::{BuildHasher, Hasher};
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u128(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos())
                    .unwrap_or(0),
            );
            h.finish()
        });
        IdGen { state }
    }
    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn next_id(&mut self) -> String {
        const A: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        let mut s = String::with_capacity(29);
        s.push_str("call_");
        for _ in 0..2 {
            let mut x = self.next_u64();
            for _ in 0..12 {
                s.push(A[(x % 62) as usize] as char);
                x /= 62;
            }
        }
        s
    }
}

enum Mode {
    Format(Box<dyn Format>),
    /// tool_choice named: the whole output is that function's arguments object.
    Named { name: String, started: bool, held_ws: String },
}

/// Streaming engine over one format.
pub struct ToolEngine {
    mode: Mode,
    markers: Markers,
    n_starts: usize,
    /// Start markers, then wrapper drops, then reopen markers (from `n_reopen` on).
    n_reopen: usize,
    bare: &'static [u8],
    seps: &'static [u8],
    buf: String,
    region: Option<Option<usize>>,
    at_start: bool,
    after_call: bool,
    schemas: ToolSchemas,
    ids: IdGen,
    next_index: u32,
    streams: bool,
    /// The open region's streaming reader (formats that stream).
    stream: Option<stream::RegionStream>,
    /// No region end in `buf[..end_floor]` (see `Format::region_end_from`).
    end_floor: usize,
    /// What the open region's streaming reader produced: released when the region closes
    /// and every call in it has complete JSON arguments (see `close_region`).
    pending: Sink,
}

impl ToolEngine {
    pub fn new(id: super::registry::ToolFormatId, schemas: ToolSchemas, ids: IdGen) -> ToolEngine {
        Self::with_format(super::registry::make_format(id), schemas, ids)
    }

    pub fn with_format(fmt: Box<dyn Format>, schemas: ToolSchemas, ids: IdGen) -> ToolEngine {
        let mut all: Vec<&'static str> = fmt.starts().to_vec();
        let n_starts = all.len();
        all.extend_from_slice(fmt.drops());
        let n_reopen = all.len();
        all.extend_from_slice(fmt.reopens());
        ToolEngine {
            markers: Markers::new(&all),
            n_starts,
            n_reopen,
            bare: fmt.bare(),
            seps: fmt.separators(),
            streams: fmt.streams(),
            stream: None,
            end_floor: 0,
            pending: Sink::default(),
            mode: Mode::Format(fmt),
            buf: String::new(),
            region: None,
            at_start: true,
            after_call: false,
            schemas,
            ids,
            next_index: 0,
        }
    }

    pub fn guided_required(ids: IdGen) -> ToolEngine {
        Self::with_format(Box::new(guided::RequiredArray), ToolSchemas::default(), ids)
    }

    pub fn guided_named(name: String, ids: IdGen) -> ToolEngine {
        let mut e = Self::with_format(Box::new(guided::RequiredArray), ToolSchemas::default(), ids);
        e.mode = Mode::Named { name, started: false, held_ws: String::new() };
        e
    }

    fn emit_calls(&mut self, calls: Vec<Call>, sink: &mut Sink) {
        for c in calls {
            let index = self.next_index;
            self.next_index += 1;
            let id = c.id.unwrap_or_else(|| self.ids.next_id());
            sink.out.push(Delta::ToolStart { index, id, name: c.name });
            sink.args(index, &c.args);
        }
        self.after_call = true;
        self.at_start = true;
    }

    /// Reads the open region's bytes `buf[..limit]` with its streaming reader.
    fn advance_stream(&mut self, marker: Option<usize>, limit: usize, _sink: &mut Sink) {
        if !self.streams {
            return;
        }
        let Mode::Format(f) = &self.mode else { return };
        let st = self.stream.get_or_insert_with(stream::RegionStream::new);
        let head = |r: &str| f.stream_head(r, marker);
        st.advance(
            &head,
            &self.buf[..limit],
            &mut stream::Out {
                sink: &mut self.pending,
                ids: &mut self.ids,
                next_index: &mut self.next_index,
                schemas: &self.schemas,
            },
        );
    }

    fn close_region(&mut self, n: usize, marker: Option<usize>, eof: bool, sink: &mut Sink) {
        self.end_floor = 0;
        let pending = std::mem::take(&mut self.pending.out);
        if let Some(st) = self.stream.take().filter(|s| s.committed) {
            // at the end of the output, a region its end never closed is a call region only
            // when the format reads it whole (e.g. hermes: `{"name":..,"arguments":{..}` cut
            // before its own `}` is content, as vLLM and SGLang return it); a JSON region whose
            // value never closed before its end marker is not one either
            if !st.json_unclosed()
                && calls_complete(&pending)
                && self.all_offered(&pending)
                && (!eof || self.parse_region(n, marker, eof).is_some())
            {
                // the rest of the region is call markup
                sink.out.extend(pending);
                self.after_call = true;
                self.at_start = true;
                self.buf.drain(..n);
                self.region = None;
                return;
            }
            // a call whose arguments never completed (or stopped being JSON), or a call to a
            // function the request did not offer: no such call goes out; the region is
            // content, byte for byte (vLLM's rule for malformed calls), unless the format's
            // own reader of the whole region finds its calls (qwen3_coder: a `</function>`
            // missing before `</tool_call>`)
            if let Some(Delta::ToolStart { index, .. }) = pending.iter().find(|d| matches!(d, Delta::ToolStart { .. })) {
                self.next_index = *index;
            }
            if let Some(calls) = self.parse_region(n, marker, eof) {
                self.emit_calls(calls, sink);
                self.buf.drain(..n);
                self.region = None;
                return;
            }
            sink.content(&self.buf[..n]);
            self.after_call = false;
            self.at_start = false;
            self.buf.drain(..n);
            self.region = None;
            return;
        }
        match self.parse_region(n, marker, eof) {
            Some(calls) => self.emit_calls(calls, sink),
            None => {
                sink.content(&self.buf[..n]);
                self.after_call = false;
                self.at_start = false;
            }
        }
        self.buf.drain(..n);
        self.region = None;
    }

    /// The calls of region `buf[..n]` read whole by the format, if all are offered.
    fn parse_region(&self, n: usize, marker: Option<usize>, eof: bool) -> Option<Vec<Call>> {
        let Mode::Format(f) = &self.mode else { return None };
        let calls = f.parse(&self.buf[..n], marker, eof, &Ctx { schemas: &self.schemas })?;
        (!calls.is_empty() && calls.iter().all(|c| self.schemas.offers(&c.name))).then_some(calls)
    }

    fn all_offered(&self, deltas: &[Delta]) -> bool {
        deltas.iter().all(|d| match d {
            Delta::ToolStart { name, .. } => self.schemas.offers(name),
            _ => true,
        })
    }

    /// Feeds content text (`eof` = end of the choice).
    pub fn push(&mut self, text: &str, eof: bool, sink: &mut Sink) {
        if let Mode::Named { .. } = self.mode {
            return self.push_named(text, eof, sink);
        }
        if self.region.is_none()
            && self.buf.is_empty()
            && !self.after_call
            && !(self.at_start && !self.bare.is_empty())
            && self.markers.none_can_start(text)
        {
            sink.content(text);
            return;
        }
        // A region can only complete when a closing byte arrives (every end marker and
        // bracket ends in one of these): skip the rescan otherwise (keeps long argument
        // streams linear).
        let in_region_before = self.region.is_some();
        let may_close = eof || !in_region_before || text.bytes().any(|b| matches!(b, b'>' | b'}' | b']' | b')' | b'`'));
        self.buf.push_str(text);
        if !may_close {
            if let Some(marker) = self.region {
                self.advance_stream(marker, self.buf.len(), sink);
            }
            return;
        }
        loop {
            if let Some(marker) = self.region {
                if self.stream.as_ref().is_some_and(|s| s.in_args()) {
                    // streaming arguments: read on; the region cannot end inside them, so
                    // no rescan for its end (keeps long arguments linear)
                    self.advance_stream(marker, self.buf.len(), sink);
                    if self.stream.as_ref().is_some_and(|s| s.in_args()) {
                        if eof {
                            let n = self.buf.len();
                            self.close_region(n, marker, true, sink);
                            continue;
                        }
                        return;
                    }
                }
                let end = match &self.mode {
                    Mode::Format(f) => f.region_end_from(&self.buf, marker, self.end_floor),
                    Mode::Named { .. } => RegionEnd::NeedMore,
                };
                if end == RegionEnd::NeedMore {
                    self.end_floor = self.buf.len();
                }
                match end {
                    RegionEnd::Complete(n) => {
                        let n = n.min(self.buf.len()).max(1);
                        let n = floor_char(&self.buf, n);
                        self.advance_stream(marker, n, sink);
                        self.close_region(n, marker, false, sink);
                        continue;
                    }
                    RegionEnd::NeedMore => {
                        self.advance_stream(marker, self.buf.len(), sink);
                        if eof {
                            let n = self.buf.len();
                            self.close_region(n, marker, true, sink);
                            continue;
                        }
                        return;
                    }
                }
            }
            if self.buf.is_empty() {
                return;
            }
            let bare_ok = self.at_start && !self.bare.is_empty();
            if self.after_call || bare_ok {
                // Skip syntax whitespace; decide once the next real byte is known.
                let b = self.buf.as_bytes();
                let mut i = 0;
                while i < b.len()
                    && (b[i].is_ascii_whitespace() || (self.after_call && self.seps.contains(&b[i])))
                {
                    i += 1;
                }
                if i == b.len() {
                    if eof {
                        if !self.after_call {
                            sink.content(&self.buf);
                        }
                        self.buf.clear();
                    }
                    return;
                }
                let structural = if bare_ok && self.bare.contains(&b[i]) {
                    self.region = Some(None);
                    true
                } else {
                    match self.markers.find(&self.buf, i, eof) {
                        Hit::Full { pos, .. } if pos == i => true,
                        Hit::Partial { pos } if pos == i => return,
                        _ => false,
                    }
                };
                if structural {
                    if !self.after_call {
                        sink.content(&self.buf[..i]);
                    }
                    self.buf.drain(..i);
                } else {
                    // Real text follows: the held whitespace is text.
                    self.at_start = false;
                }
                self.after_call = false;
                if self.region.is_some() {
                    continue;
                }
            }
            match self.markers.find(&self.buf, 0, eof) {
                Hit::Full { pos, len, idx } => {
                    sink.content(&self.buf[..pos]);
                    if pos > 0 {
                        self.at_start = false;
                    }
                    if idx >= self.n_reopen {
                        // kept as content; a bare region may open right after it
                        sink.content(&self.buf[pos..pos + len]);
                        self.buf.drain(..pos + len);
                        self.at_start = true;
                        self.after_call = false;
                    } else if idx >= self.n_starts {
                        // a wrapper marker: whitespace right after it is syntax too
                        self.buf.drain(..pos + len);
                        self.after_call = true;
                    } else {
                        self.buf.drain(..pos);
                        self.region = Some(Some(idx));
                    }
                }
                Hit::Partial { pos } => {
                    sink.content(&self.buf[..pos]);
                    if pos > 0 {
                        self.at_start = false;
                    }
                    self.buf.drain(..pos);
                    return;
                }
                Hit::None => {
                    sink.content(&self.buf);
                    self.at_start = false;
                    self.buf.clear();
                    return;
                }
            }
        }
    }

    fn push_named(&mut self, text: &str, eof: bool, sink: &mut Sink) {
        let Mode::Named { name, started, held_ws } = &mut self.mode else { return };
        let mut t = text;
        if !*started {
            t = t.trim_start();
            if t.is_empty() {
                return;
            }
            *started = true;
            let id = self.ids.next_id();
            sink.out.push(Delta::ToolStart { index: 0, id, name: name.clone() });
            self.next_index = 1;
            if !eof && t.is_empty() {
                return;
            }
        }
        // Trailing whitespace is held: it is dropped at the end of the stream.
        let body = t.trim_end();
        if !body.is_empty() {
            let ws = std::mem::take(held_ws);
            sink.args(0, &ws);
            sink.args(0, body);
        }
        held_ws.push_str(&t[body.len()..]);
        if eof {
            held_ws.clear();
        }
    }
}

/// Every call in `deltas` has arguments that are one complete JSON value.
fn calls_complete(deltas: &[Delta]) -> bool {
    let mut args: Vec<String> = Vec::new();
    for d in deltas {
        match d {
            Delta::ToolStart { .. } => args.push(String::new()),
            Delta::ToolArgs { text, .. } => match args.last_mut() {
                Some(a) => a.push_str(text),
                None => return false,
            },
            _ => {}
        }
    }
    !args.is_empty() && args.iter().all(|a| super::json::is_value(a))
}

fn floor_char(s: &str, mut n: usize) -> usize {
    while n < s.len() && !s.is_char_boundary(n) {
        n += 1;
    }
    n
}
