//! Incremental argument streaming: JSON arguments byte by byte, XML-like arguments
//! parameter by parameter (`Head::Params`).
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
//! whole when it closes (formats without streaming, unusual shapes such as
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
    /// Calls whose arguments are written parameter by parameter (XML-like formats), read from
    /// `at` by `syntax`: the call commits at its name; `{` goes out with it, each parameter
    /// (converted as in batch) when it closes, `}` when the call's end marker arrives.
    Params { at: usize, syntax: &'static ParamSyntax },
}

/// How a per-parameter format reads (see `Head::Params`). Batch parsing of these formats
/// reads through the same `param` function, so both see the same parameters.
pub struct ParamSyntax {
    /// The next call at or after `from`: its name and where its body starts.
    pub call: fn(&str, usize) -> CallStep,
    /// Ends a call's body (the first occurrence after the body start).
    pub call_end: &'static str,
    /// The next parameter of `body` at or after `from`; `closed`: `body` is the whole body.
    pub param: for<'a> fn(&'a str, usize, bool) -> ParamStep<'a>,
    /// A parameter's JSON value: (function, key, raw value, tag header, schemas).
    pub value: ValueFn,
    /// More than one call per region (otherwise the region is done after its first call).
    pub multi: bool,
    /// A call body without parameter tags may be one JSON arguments object (DSML).
    pub json_body: bool,
}

impl std::fmt::Debug for ParamSyntax {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ParamSyntax({})", self.call_end)
    }
}
impl PartialEq for ParamSyntax {
    fn eq(&self, o: &Self) -> bool {
        std::ptr::eq(self, o)
    }
}
impl Eq for ParamSyntax {}

/// A call head, as read so far.
pub enum CallStep {
    More,
    /// Not a call: stop streaming (the region is parsed whole when it closes).
    Bad,
    Found { name: String, body: usize },
}

/// A parameter, as read so far.
#[derive(Debug, PartialEq, Eq)]
pub enum ParamStep<'a> {
    /// Its end is not known yet.
    More,
    /// No further parameter in the body.
    End,
    /// `key` (empty: ignored) with its raw `value` and tag `header`; the next one is read from `next`.
    Found { key: &'a str, value: &'a str, header: &'a str, next: usize },
}

/// Every parameter of a complete `body` (batch), read by `param`.
pub fn all_params<'a>(body: &'a str, param: for<'b> fn(&'b str, usize, bool) -> ParamStep<'b>) -> Vec<(&'a str, &'a str, &'a str)> {
    let mut out = Vec::new();
    let mut cur = 0;
    while let ParamStep::Found { key, value, header, next } = param(body, cur, true) {
        if !key.is_empty() {
            out.push((key, value, header));
        }
        cur = next;
    }
    out
}

/// Converts a parameter's raw value (function, key, value, tag header, schemas) to JSON.
pub type ValueFn = fn(&str, &str, &str, &str, &ToolSchemas) -> String;

/// The usual value conversion: one layout newline each side stripped, typed by schema.
pub fn typed_value(func: &str, key: &str, v: &str, header: &str, schemas: &ToolSchemas) -> String {
    exact_value(func, key, strip_nl(v), header, schemas)
}

/// For formats whose values sit inline between the tags (step3): no layout, a string keeps
/// every byte (vLLM); typed by schema.
/// A literal `null` is null unless the parameter is a plain (non-nullable) string.
pub fn exact_value(func: &str, key: &str, v: &str, _header: &str, schemas: &ToolSchemas) -> String {
    if v.trim() == "null" && schemas.null_allowed(func, key) {
        return "null".into();
    }
    typed(v, schemas.param_type(func, key))
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
    /// A call object read whole (not streamable shape), then parsed like a non-streamed region.
    Whole { start: usize, jv: JsonStream, single: bool },
    /// Streaming the arguments of call `index`.
    Args { jv: JsonStream, index: u32, list: bool, single: bool },
    /// The members after the arguments, up to the object's `}`.
    Tail { jv: JsonStream, single: bool },
    /// Looking for the next call (`Head::Params`).
    Seek,
    /// Inside call `name` (`index`), whose body starts at `body`: parameters read up to `pos`.
    Params { name: String, index: u32, keys: Vec<String>, body: usize },
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
    syntax: Option<&'static ParamSyntax>,
    /// At least one call went out: the region is a call region whatever follows.
    pub committed: bool,
    /// The region is one JSON value (a call object, an array of them, or one arguments object).
    json: bool,
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
        RegionStream { st: St::Head, pos: 0, names: &[], args: &[], syntax: None, committed: false, json: false }
    }

    /// Inside a call's arguments: the region cannot have ended (an end marker or the closing
    /// bracket of the region comes after the arguments close), so its end need not be searched.
    pub fn in_args(&self) -> bool {
        matches!(self.st, St::Args { .. })
    }

    /// A JSON region whose value has not closed (or stopped being JSON) where the reader stands:
    /// its calls are not complete, whatever arguments went out (`[{"name":..,"arguments":{}` then
    /// the end marker is not a call).
    pub fn json_unclosed(&self) -> bool {
        self.json && !matches!(self.st, St::Done)
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
                        self.json = true;
                        self.st = St::Top;
                    }
                    Head::Args { at, name, id } => {
                        let index = out.start(name, id);
                        self.committed = true;
                        self.pos = at;
                        self.json = true;
                        self.st = St::Args { jv: JsonStream::new(), index, list: false, single: true };
                    }
                    Head::Params { at, syntax } => {
                        self.pos = at;
                        self.syntax = Some(syntax);
                        self.st = St::Seek;
                    }
                },
                St::Seek => {
                    let Some(syn) = self.syntax else { return };
                    match (syn.call)(region, self.pos) {
                        CallStep::More => return,
                        CallStep::Bad => self.st = St::Stop,
                        CallStep::Found { name, body } => {
                            let index = out.start(name.clone(), None);
                            out.sink.args(index, "{");
                            self.committed = true;
                            self.pos = body;
                            self.st = St::Params { name, index, keys: Vec::new(), body };
                        }
                    }
                }
                St::Params { name, index, keys, body: body_at } => {
                    let Some(syn) = self.syntax else { return };
                    // the body ends at the first end marker; a parameter goes out once its end
                    // is known (its type and trailing layout depend on it)
                    let fe = region[self.pos..].find(syn.call_end).map(|e| self.pos + e);
                    let body = &region[..fe.unwrap_or(region.len())];
                    match (syn.param)(body, self.pos, fe.is_some()) {
                        ParamStep::More => return,
                        ParamStep::Found { key, value, header, next } => {
                            if !key.is_empty() && !keys.iter().any(|x| x == key) {
                                let v = (syn.value)(name, key, value, header, out.schemas);
                                let sep = if keys.is_empty() { "" } else { "," };
                                out.sink.args(*index, &format!("{sep}{}:{v}", json_string(key)));
                                keys.push(key.to_string());
                            }
                            self.pos = next;
                        }
                        ParamStep::End => match fe {
                            None => return,
                            Some(e) => {
                                // `{` went out with the name: the rest of a JSON body object, or `}`
                                let tail = match json_object_body(syn, keys, &region[*body_at..e]) {
                                    Some(obj) => &obj[1..],
                                    None => "}",
                                };
                                out.sink.args(*index, tail);
                                self.pos = e + syn.call_end.len();
                                self.st = if syn.multi { St::Seek } else { St::Done };
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

/// A call body that is one JSON object and nothing else (no parameter was read), trimmed.
pub fn json_object_body<'a>(syn: &ParamSyntax, keys: &[String], body: &'a str) -> Option<&'a str> {
    let t = body.trim();
    (syn.json_body && keys.is_empty() && t.starts_with('{') && json::is_value(t)).then_some(t)
}

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
