//! Incremental argument streaming for the JSON-argument formats.
//!
//! While a call region is open, its bytes are read as they arrive. As soon as a call's name
//! and the `{` opening its arguments have been seen, the call is *committed*: its
//! `ToolStart` (index, id, name) goes out, then every arguments byte the incremental JSON
//! validator accepts. The validator never accepts an end marker or a wrapper brace (they
//! are not JSON continuations inside an open object), so nothing is held back and nothing
//! emitted can turn out not to belong to the arguments.
//!
//! Batch parsing runs through the same reader, so streamed and batch results are equal
//! for any chunking. A committed call stays a call: if the output ends (or stops being
//! JSON) inside its arguments, the arguments are the bytes that arrived, as OpenAI returns
//! them when max_tokens cuts a call. A region whose reader never committed is parsed
//! whole when it closes, as before (formats without streaming, unusual shapes such as
//! fenced JSON, stringified or name-after-arguments objects).

use super::IdGen;
use crate::parsers::json;
use crate::parsers::values::{json_string, strip_nl, typed, ToolSchemas};
use crate::parsers::json_stream::{value_end, Feed, JsonStream};
use crate::parsers::{Delta, Sink};

/// How the start of a region reads, for streaming (see `Format::stream_head`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Head {
    /// Not enough bytes yet to tell.
    NeedMore,
    /// Not streamable: the region is parsed whole when it closes.
    No,
    /// A JSON call object `{"name":..,"arguments":{..}}`, or an array of them, starts at `at`.
    List { at: usize, names: &'static [&'static str], args: &'static [&'static str] },
    /// One call: its name (and the model's own id) are known; its arguments object starts at `at`.
    Args { at: usize, name: String, id: Option<String> },
    /// `<function=NAME>` elements with `<parameter=KEY>value</parameter>` children, from `at`
    /// (qwen3_coder family): the call commits at its name; `{` goes out with it, each
    /// parameter (typed as in batch) when it closes, `}` when `</function>` arrives.
    Xml { at: usize },
}

enum St {
    Head,
    /// Before the top-level `[` or `{`.
    Top,
    /// In the array, before an element (`first`: `]` may close an empty array).
    Elem { first: bool },
    /// After an element: `,` or `]`.
    After,
    /// A call object starting at `start`, its header (members before the arguments) not read yet.
    Obj { start: usize, single: bool },
    /// A call object read whole (not streamable shape), then parsed as before.
    Whole { start: usize, jv: JsonStream, single: bool },
    /// Streaming the arguments of call `index`.
    Args { jv: JsonStream, index: u32, list: bool, single: bool },
    /// The members after the arguments, up to the object's `}`.
    Tail { jv: JsonStream, single: bool },
    /// Looking for the next `<function=` element.
    XmlSeek,
    /// Inside function `name` (call `index`): parameters of its body read up to `pos`.
    XmlParams { name: String, index: u32, keys: Vec<String> },
    Done,
    /// Not streamable, or stopped being JSON.
    Stop,
}

/// Where deltas go and where ids and indexes come from.
pub struct Out<'a> {
    pub sink: &'a mut Sink,
    pub ids: &'a mut IdGen,
    pub next_index: &'a mut u32,
    pub schemas: &'a ToolSchemas,
}

impl Out<'_> {
    fn start(&mut self, name: String, id: Option<String>) -> u32 {
        let index = *self.next_index;
        *self.next_index += 1;
        let id = id.unwrap_or_else(|| self.ids.next_id());
        self.sink.out.push(Delta::ToolStart { index, id, name });
        index
    }
}

/// The streaming reader of one region.
pub struct RegionStream {
    st: St,
    pos: usize,
    names: &'static [&'static str],
    args: &'static [&'static str],
    /// At least one call went out: the region is a call region whatever follows.
    pub committed: bool,
}

enum Header {
    More,
    Bad,
    /// Name known, arguments object starts at `at`.
    Commit { name: String, at: usize },
    /// The object closed at `end` without arguments.
    NoArgs { name: String, end: usize },
    /// Read it whole instead.
    Whole,
}

impl Default for RegionStream {
    fn default() -> Self {
        RegionStream::new()
    }
}

impl RegionStream {
    pub fn new() -> RegionStream {
        RegionStream { st: St::Head, pos: 0, names: &[], args: &[], committed: false }
    }

    /// Inside a call's arguments: the region cannot have ended (an end marker or the closing
    /// bracket of the region comes after the arguments close), so its end need not be searched.
    pub fn in_args(&self) -> bool {
        matches!(self.st, St::Args { .. })
    }

    /// Reads `region` (the region's bytes so far, from its start) past what was read before.
    pub fn advance(&mut self, head: &dyn Fn(&str) -> Head, region: &str, out: &mut Out) {
        let b = region.as_bytes();
        loop {
            match &mut self.st {
                St::Head => match head(region) {
                    Head::NeedMore => return,
                    Head::No => self.st = St::Stop,
                    Head::List { at, names, args } => {
                        self.names = names;
                        self.args = args;
                        self.pos = at;
                        self.st = St::Top;
                    }
                    Head::Args { at, name, id } => {
                        let index = out.start(name, id);
                        self.committed = true;
                        self.pos = at;
                        self.st = St::Args { jv: JsonStream::new(), index, list: false, single: true };
                    }
                    Head::Xml { at } => {
                        self.pos = at;
                        self.st = St::XmlSeek;
                    }
                },
                St::XmlSeek => {
                    let Some(p) = region[self.pos..].find(FUNC) else { return };
                    let n0 = self.pos + p + FUNC.len();
                    let Some(ne) = region[n0..].find('>') else { return };
                    let name = region[n0..n0 + ne].trim();
                    if name.is_empty() || name.contains(|c: char| c.is_whitespace() || c == '<' || c == '>') {
                        self.st = St::Stop;
                        continue;
                    }
                    let index = out.start(name.to_string(), None);
                    out.sink.args(index, "{");
                    self.committed = true;
                    self.pos = n0 + ne + 1;
                    self.st = St::XmlParams { name: name.to_string(), index, keys: Vec::new() };
                }
                St::XmlParams { name, index, keys } => {
                    // the body ends at the first </function>; a value ends at its close tag,
                    // the next open tag, or the body end (as `xml_function::params` reads it)
                    let fe = region[self.pos..].find(FUNC_END).map(|e| self.pos + e);
                    let limit = fe.unwrap_or(region.len());
                    let body = &region[..limit];
                    let param = body[self.pos..].find(P_OPEN).and_then(|p| {
                        let h0 = self.pos + p + P_OPEN.len();
                        let he = h0 + body[h0..].find('>')?;
                        let v0 = he + 1;
                        let rest = &body[v0..];
                        let (vlen, next) = match (rest.find(P_CLOSE), rest.find(P_OPEN)) {
                            (Some(c), Some(o)) if o < c => (o, v0 + o),
                            (Some(c), _) => (c, v0 + c + P_CLOSE.len()),
                            (None, Some(o)) => (o, v0 + o),
                            (None, None) if fe.is_some() => (rest.len(), limit),
                            (None, None) => return Some(None),
                        };
                        Some(Some((&body[h0..he], &rest[..vlen], next)))
                    });
                    match param {
                        Some(Some((header, value, next))) => {
                            let k = header.trim().trim_matches(|c| c == '"' || c == '\'');
                            if !k.is_empty() && !keys.iter().any(|x| x == k) {
                                let v = typed(strip_nl(value), out.schemas.param_type(name, k));
                                let sep = if keys.is_empty() { "" } else { "," };
                                out.sink.args(*index, &format!("{sep}{}:{v}", json_string(k)));
                                keys.push(k.to_string());
                            }
                            self.pos = next;
                        }
                        // a parameter still arriving
                        Some(None) => return,
                        None => match fe {
                            None => return,
                            Some(e) => {
                                out.sink.args(*index, "}");
                                self.pos = e + FUNC_END.len();
                                self.st = St::XmlSeek;
                            }
                        },
                    }
                }
                St::Top => {
                    let i = ws(b, self.pos);
                    match b.get(i) {
                        None => return,
                        Some(b'[') => {
                            self.pos = i + 1;
                            self.st = St::Elem { first: true };
                        }
                        Some(b'{') => self.st = St::Obj { start: i, single: true },
                        Some(_) => self.st = St::Stop,
                    }
                }
                St::Elem { first } => {
                    let i = ws(b, self.pos);
                    match b.get(i) {
                        None => return,
                        Some(b']') if *first => {
                            self.pos = i + 1;
                            self.st = St::Done;
                        }
                        Some(b'{') => self.st = St::Obj { start: i, single: false },
                        Some(_) => self.st = St::Stop,
                    }
                }
                St::After => {
                    let i = ws(b, self.pos);
                    match b.get(i) {
                        None => return,
                        Some(b',') => {
                            self.pos = i + 1;
                            self.st = St::Elem { first: false };
                        }
                        Some(b']') => {
                            self.pos = i + 1;
                            self.st = St::Done;
                        }
                        Some(_) => self.st = St::Stop,
                    }
                }
                St::Obj { start, single } => {
                    let (start, single) = (*start, *single);
                    match header(region, start, self.names, self.args) {
                        Header::More => return,
                        Header::Bad => self.st = St::Stop,
                        Header::Commit { name, at } => {
                            let index = out.start(name, None);
                            self.committed = true;
                            self.pos = at;
                            self.st = St::Args { jv: JsonStream::new(), index, list: true, single };
                        }
                        Header::NoArgs { name, end } => {
                            let index = out.start(name, None);
                            out.sink.args(index, "{}");
                            self.committed = true;
                            self.pos = end;
                            self.st = if single { St::Done } else { St::After };
                        }
                        Header::Whole => {
                            self.pos = start;
                            self.st = St::Whole { start, jv: JsonStream::new(), single };
                        }
                    }
                }
                St::Whole { start, jv, single } => match jv.feed(b, self.pos) {
                    Feed::More => {
                        self.pos = b.len();
                        return;
                    }
                    Feed::Bad(_) => self.st = St::Stop,
                    Feed::Complete(e) => {
                        let single = *single;
                        match json::call_from_object(&region[*start..e], self.names, self.args) {
                            Some(c) => {
                                let index = out.start(c.name, None);
                                out.sink.args(index, &c.args);
                                self.committed = true;
                                self.pos = e;
                                self.st = if single { St::Done } else { St::After };
                            }
                            None => self.st = St::Stop,
                        }
                    }
                },
                St::Args { jv, index, list, single } => {
                    let index = *index;
                    match jv.feed(b, self.pos) {
                        Feed::More => {
                            out.sink.args(index, &region[self.pos..]);
                            self.pos = b.len();
                            return;
                        }
                        Feed::Bad(k) => {
                            out.sink.args(index, &region[self.pos..k]);
                            self.pos = k;
                            self.st = St::Stop;
                        }
                        Feed::Complete(e) => {
                            out.sink.args(index, &region[self.pos..e]);
                            self.pos = e;
                            self.st = if *list {
                                St::Tail { jv: JsonStream::after_member(), single: *single }
                            } else {
                                St::Done
                            };
                        }
                    }
                }
                St::Tail { jv, single } => match jv.feed(b, self.pos) {
                    Feed::More => {
                        self.pos = b.len();
                        return;
                    }
                    Feed::Bad(_) => self.st = St::Stop,
                    Feed::Complete(e) => {
                        self.pos = e;
                        self.st = if *single { St::Done } else { St::After };
                    }
                },
                St::Done | St::Stop => return,
            }
        }
    }
}

const FUNC: &str = "<function=";
const FUNC_END: &str = "</function>";
const P_OPEN: &str = "<parameter=";
const P_CLOSE: &str = "</parameter>";

fn ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// Reads a call object's members up to its arguments (re-read from `start` each time: the
/// header is short). Same rules as `json::call_from_object`; anything unusual reads whole.
fn header(s: &str, start: usize, names: &[&str], args: &[&str]) -> Header {
    let b = s.as_bytes();
    let mut i = ws(b, start + 1);
    let mut name: Option<String> = None;
    macro_rules! end_of {
        ($j:expr) => {
            match value_end(b, $j) {
                Feed::Complete(e) => e,
                Feed::More => return Header::More,
                Feed::Bad(_) => return Header::Bad,
            }
        };
    }
    loop {
        match b.get(i) {
            None => return Header::More,
            Some(b'}') => {
                return match name {
                    Some(name) => Header::NoArgs { name, end: i + 1 },
                    None => Header::Whole,
                }
            }
            Some(b'"') => {}
            Some(_) => return Header::Bad,
        }
        let ke = end_of!(i);
        let Some(key) = json::decode_str(&s[i..ke]) else { return Header::Bad };
        let mut j = ws(b, ke);
        match b.get(j) {
            None => return Header::More,
            Some(b':') => {}
            Some(_) => return Header::Bad,
        }
        j = ws(b, j + 1);
        let Some(&v0) = b.get(j) else { return Header::More };
        if name.is_none() && names.contains(&key.as_str()) {
            if v0 != b'"' {
                return Header::Whole;
            }
            let ve = end_of!(j);
            match json::decode_str(&s[j..ve]) {
                Some(n) if !n.is_empty() => name = Some(n),
                _ => return Header::Whole,
            }
            i = ve;
        } else if args.contains(&key.as_str()) {
            return match (name, v0) {
                (Some(name), b'{') => Header::Commit { name, at: j },
                _ => Header::Whole,
            };
        } else if key == "function" {
            return Header::Whole;
        } else {
            i = end_of!(j);
        }
        i = ws(b, i);
        match b.get(i) {
            None => return Header::More,
            Some(b',') => i = ws(b, i + 1),
            Some(b'}') => {}
            Some(_) => return Header::Bad,
        }
    }
}
