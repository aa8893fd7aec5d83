//! gpt-oss harmony format, for both the `harmony` tool parser and the `gpt_oss`
//! reasoning parser: messages `<|start|>assistant<|channel|>CH[ to=functions.NAME][ <|constrain|>json]
//! <|message|>BODY` ended by `<|end|>`, `<|call|>` or `<|return|>`.
//!
//! analysis → reasoning (content when no reasoning parser runs); final and commentary
//! without recipient → content; commentary `to=functions.NAME` → a tool call (its body
//! is the arguments JSON, held until the call closes); other recipients (built-in
//! browser/python tools) → reasoning. Output that does not start like a header
//! (markers stripped, plain text) is content. Header markup never reaches the output.
//!
//! A tool call goes out whole when its message ends, and only when its body is one complete
//! JSON value; otherwise (malformed, or cut by the end of the stream) the body is content.

use super::json;
use super::scan::{Hit, Markers};
use super::tool::IdGen;
use super::values::ToolSchemas;
use super::{Delta, Sink};

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Reasoning,
    Content,
    Tool(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum St {
    Header,
    Body(Kind),
}

pub struct Harmony {
    tools: bool,
    reasoning: bool,
    ids: IdGen,
    /// The request's functions: a call to another one is content.
    schemas: ToolSchemas,
    st: St,
    buf: String,
    tool_body: String,
    next_index: u32,
    body_ends: Markers,
}


const MESSAGE: &str = "<|message|>";
const HEADER_STARTS: [&str; 2] = ["<|start|>", "<|channel|>"];

impl Harmony {
    pub fn new(tools: bool, reasoning: bool, ids: IdGen, schemas: ToolSchemas) -> Harmony {
        Harmony {
            schemas,
            tools,
            reasoning,
            ids,
            st: St::Header,
            buf: String::new(),
            tool_body: String::new(),
            next_index: 0,
            // first three end the message; the last two begin the next header
            body_ends: Markers::new(&["<|end|>", "<|call|>", "<|return|>", "<|start|>", "<|channel|>"]),
        }
    }

    fn kind_of(&self, header: &str) -> Kind {
        let channel = header
            .rfind("<|channel|>")
            .map(|p| {
                let r = &header[p + "<|channel|>".len()..];
                let e = r.find(|c: char| c.is_whitespace() || c == '<').unwrap_or(r.len());
                &r[..e]
            })
            .unwrap_or("");
        let recipient = header.find("to=").map(|p| {
            let r = &header[p + 3..];
            let e = r.find(|c: char| c.is_whitespace() || c == '<').unwrap_or(r.len());
            &r[..e]
        });
        let reasoning_or_content = if self.reasoning { Kind::Reasoning } else { Kind::Content };
        match recipient {
            Some(r) if r.starts_with("functions.") && self.tools && r.len() > "functions.".len() => {
                Kind::Tool(r["functions.".len()..].to_string())
            }
            Some(r) if r.starts_with("functions.") => Kind::Content,
            Some(_) => reasoning_or_content,
            None => match channel {
                "analysis" => reasoning_or_content,
                _ => Kind::Content,
            },
        }
    }

    fn emit(&mut self, kind: &Kind, s: &str, sink: &mut Sink) {
        match kind {
            Kind::Reasoning => sink.reasoning(s),
            Kind::Content => sink.content(s),
            // a call goes out whole when its message ends (never with invalid JSON arguments)
            Kind::Tool(_) => self.tool_body.push_str(s),
        }
    }

    fn close_tool(&mut self, name: &str, sink: &mut Sink) {
        let body = std::mem::take(&mut self.tool_body);
        let args = body.trim();
        let args = if args.is_empty() { "{}" } else { args };
        if json::is_value(args) && self.schemas.offers(name) {
            let index = self.next_index;
            self.next_index += 1;
            let id = self.ids.next_id();
            sink.out.push(Delta::ToolStart { index, id, name: name.to_string() });
            sink.args(index, args);
        } else {
            sink.content(&body);
        }
    }

    pub fn push(&mut self, text: &str, eof: bool, sink: &mut Sink) {
        if let St::Body(Kind::Content) | St::Body(Kind::Reasoning) = &self.st {
            if self.buf.is_empty() && self.body_ends.none_can_start(text) {
                let k = if let St::Body(k) = &self.st { k.clone() } else { Kind::Content };
                return self.emit(&k, text, sink);
            }
        }
        self.buf.push_str(text);
        loop {
            match self.st.clone() {
                St::Header => {
                    let t = self.buf.trim_start();
                    let looks_like_header = HEADER_STARTS.iter().any(|h| t.starts_with(h) || (h.starts_with(t)));
                    if !looks_like_header {
                        self.st = St::Body(Kind::Content);
                        continue;
                    }
                    match self.buf.find(MESSAGE) {
                        Some(p) => {
                            let kind = self.kind_of(&self.buf[..p]);
                            self.buf.drain(..p + MESSAGE.len());
                            self.st = St::Body(kind);
                        }
                        None => {
                            if eof {
                                self.buf.clear(); // an unfinished header is markup only
                            }
                            return;
                        }
                    }
                }
                St::Body(kind) => match self.body_ends.find(&self.buf, 0, eof) {
                    Hit::Full { pos, len, idx } => {
                        let before = self.buf[..pos].to_string();
                        self.emit(&kind, &before, sink);
                        if let Kind::Tool(name) = &kind {
                            self.close_tool(name, sink);
                        }
                        let cut = if idx < 3 { pos + len } else { pos };
                        self.buf.drain(..cut);
                        self.st = St::Header;
                    }
                    Hit::Partial { pos } => {
                        let before = self.buf[..pos].to_string();
                        self.emit(&kind, &before, sink);
                        self.buf.drain(..pos);
                        return;
                    }
                    Hit::None => {
                        let all = std::mem::take(&mut self.buf);
                        self.emit(&kind, &all, sink);
                        if eof {
                            if let Kind::Tool(name) = &kind {
                                self.close_tool(name, sink);
                            }
                        }
                        return;
                    }
                },
            }
        }
    }
}
