//! Reasoning parsers: split text into reasoning and content by start/end markers.
//!
//! One engine, configured per family by a [`MarkerSpec`] (see `families.rs`); gpt-oss
//! (harmony channels) has its own engine in `parsers::harmony`.
//!
//! Rules: in content, a start marker switches to reasoning; in reasoning, an end marker
//! switches to content. Markers never reach the output: a start marker inside reasoning
//! (e.g. the model repeating `<think>` after a prompt-injected one) and a stray end marker
//! in content are dropped. A forced parser (or PRE.3 prompt-injected reasoning) starts in
//! reasoning; if the stream ends inside reasoning, everything was reasoning.

pub mod families;

use super::scan::{Hit, Markers};
use super::{ParserOptions, Sink};

/// A marker-based reasoning family.
#[derive(Debug)]
pub struct MarkerSpec {
    pub start: &'static [&'static str],
    pub end: &'static [&'static str],
    /// Starts inside reasoning (the template puts the start marker in the prompt).
    pub forced: bool,
    /// Content markers removed from the answer (e.g. Cohere's `<|START_RESPONSE|>`).
    pub content_drops: &'static [&'static str],
    /// PRE.4: with guided JSON, tell a bare `[`/`{` answer from reasoning (else: bypass).
    pub shape_aware: bool,
    /// PRE.6: when PRE.2 disabled reasoning, strip this marker at the very start.
    pub leading_strip_when_disabled: Option<&'static str>,
    /// Legacy pass-through: no reasoning split; this text is prepended to the content.
    pub pass_through_prefix: Option<&'static str>,
    /// Qwen3: text before an end marker that no start marker opened is reasoning (the
    /// template put the start marker in the prompt). When the prompt tells neither way
    /// (PRE.3), the start of the output is held until a start marker, an end marker or the
    /// end of the stream decides.
    pub implicit_start: bool,
    /// Tool-call block starts that end the reasoning when met inside it (the model's
    /// template has it call tools without closing its thoughts first, e.g. DeepSeek V4's
    /// DSML block, Kimi's tool-calls section). What came before is reasoning; the marker
    /// and all after it are content, for the tool parser. In content they are plain text.
    pub tool_starts: &'static [&'static str],
    /// Inline markup dropped from reasoning and content alike: from the marker through the
    /// next `>` (Cohere citations `<co>..</co: 0:[1]>` keep their text, lose their tags).
    /// A marker followed by `<` before `>`, or by no `>` within `SPAN_MAX` bytes, is text.
    pub span_drops: &'static [&'static str],
}

const SPAN_MAX: usize = 256;

#[derive(Debug, Clone, Copy)]
pub enum Spec {
    Markers(&'static MarkerSpec),
    Harmony,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Normal,
    /// PRE.4 shape detection: waiting for the first non-whitespace byte.
    ShapeDetect,
    /// PRE.6: waiting to see whether the output starts with the marker.
    LeadingStrip,
    /// Everything is content (after PRE.6, or legacy pass-through).
    Content,
    /// Legacy pass-through, prefix not yet emitted.
    Prefix,
    /// `implicit_start`: held until a marker or the end of the stream decides.
    Implicit,
}

pub struct Reasoner {
    spec: &'static MarkerSpec,
    mode: Mode,
    in_reasoning: bool,
    buf: String,
    /// In reasoning: end markers first, then start markers (dropped).
    m_reason: Markers,
    n_end: usize,
    /// In content: start markers, then end markers and drops (dropped).
    m_content: Markers,
    n_start: usize,
    /// Index of the first tool-start marker in `m_reason` and in `m_content`.
    tool_at_reason: usize,
    tool_at_content: usize,
    /// Index of the first `span_drops` marker in `m_reason` and in `m_content` (the last ones).
    span_at_reason: usize,
    span_at_content: usize,
}

pub type ContentFn<'a> = dyn FnMut(&str, &mut Sink) + 'a;

impl Reasoner {
    /// None when no reasoning parsing should run for this request (PRE.2 / PRE.4 bypass).
    pub fn new(spec: Spec, opts: &ParserOptions, guided: bool) -> Option<Reasoner> {
        let Spec::Markers(spec) = spec else { return None };
        let mode = if spec.pass_through_prefix.is_some() {
            if guided {
                return None; // PRE.4: universal OFF on required/named
            }
            Mode::Prefix
        } else if opts.reasoning_disabled {
            spec.leading_strip_when_disabled?;
            Mode::LeadingStrip
        } else if guided && spec.forced {
            if !spec.shape_aware {
                return None; // PRE.4: bare JSON goes straight to the tool jail
            }
            Mode::ShapeDetect
        } else if spec.implicit_start && !guided && !spec.forced && !opts.prompt_injected_reasoning && !opts.prompt_closed_reasoning {
            Mode::Implicit
        } else {
            Mode::Normal
        };
        let mut r: Vec<&'static str> = spec.end.to_vec();
        r.extend_from_slice(spec.start);
        let tool_at_reason = r.len();
        r.extend_from_slice(spec.tool_starts);
        let mut c: Vec<&'static str> = spec.start.to_vec();
        c.extend_from_slice(spec.end);
        c.extend_from_slice(spec.content_drops);
        let tool_at_content = c.len();
        c.extend_from_slice(spec.tool_starts);
        let (span_at_reason, span_at_content) = (r.len(), c.len());
        r.extend_from_slice(spec.span_drops);
        c.extend_from_slice(spec.span_drops);
        Some(Reasoner {
            spec,
            mode,
            in_reasoning: mode != Mode::LeadingStrip && (spec.forced || opts.prompt_injected_reasoning),
            buf: String::new(),
            m_reason: Markers::new(&r),
            n_end: spec.end.len(),
            m_content: Markers::new(&c),
            n_start: spec.start.len(),
            tool_at_reason,
            tool_at_content,
            span_at_reason,
            span_at_content,
        })
    }

    fn emit(&self, s: &str, sink: &mut Sink, content: &mut ContentFn) {
        if s.is_empty() {
            return;
        }
        if self.in_reasoning {
            sink.reasoning(s)
        } else {
            content(s, sink)
        }
    }

    pub fn push(&mut self, text: &str, eof: bool, sink: &mut Sink, content: &mut ContentFn) {
        match self.mode {
            Mode::Normal => {}
            Mode::Content => return content(text, sink),
            Mode::Prefix => {
                if text.is_empty() && !eof {
                    return;
                }
                self.mode = Mode::Content;
                content(self.spec.pass_through_prefix.unwrap_or(""), sink);
                return content(text, sink);
            }
            Mode::LeadingStrip => {
                self.buf.push_str(text);
                let marker = self.spec.leading_strip_when_disabled.unwrap_or("");
                let t = self.buf.trim_start();
                let ws = self.buf.len() - t.len();
                if t.starts_with(marker) {
                    content(&self.buf[..ws], sink);
                    let rest = self.buf[ws + marker.len()..].to_string();
                    self.buf.clear();
                    self.mode = Mode::Content;
                    return content(&rest, sink);
                }
                if !eof && marker.starts_with(t) {
                    return;
                }
                self.mode = Mode::Content;
                let all = std::mem::take(&mut self.buf);
                return content(&all, sink);
            }
            Mode::Implicit => {
                self.buf.push_str(text);
                match self.m_content.find(&self.buf, 0, eof) {
                    Hit::Full { pos, idx, .. } if idx >= self.tool_at_content => {
                        // a tool call before any end marker: what came before it was reasoning
                        let before = self.buf[..pos].to_string();
                        sink.reasoning(&before);
                        let rest = self.buf[pos..].to_string();
                        self.buf.clear();
                        self.in_reasoning = false;
                        self.mode = Mode::Normal;
                        return self.push(&rest, eof, sink, content);
                    }
                    Hit::Full { pos, len, idx } if idx >= self.n_start && idx < self.n_start + self.spec.end.len() => {
                        // an end marker nothing opened: what came before it was reasoning
                        let before = self.buf[..pos].to_string();
                        sink.reasoning(&before);
                        let rest = self.buf[pos + len..].to_string();
                        self.buf.clear();
                        self.mode = Mode::Normal;
                        return self.push(&rest, eof, sink, content);
                    }
                    Hit::Full { .. } => {}
                    Hit::Partial { .. } | Hit::None if !eof => return,
                    _ => {}
                }
                // a start marker (or the end of the stream) decides: read it normally
                self.mode = Mode::Normal;
                let all = std::mem::take(&mut self.buf);
                return self.push(&all, eof, sink, content);
            }
            Mode::ShapeDetect => {
                self.buf.push_str(text);
                let t = self.buf.trim_start();
                match t.as_bytes().first() {
                    None if !eof => return,
                    Some(b'[') | Some(b'{') => self.in_reasoning = false,
                    _ => {}
                }
                self.mode = Mode::Normal;
                let all = std::mem::take(&mut self.buf);
                return self.push(&all, eof, sink, content);
            }
        }
        let m = if self.in_reasoning { &self.m_reason } else { &self.m_content };
        if self.buf.is_empty() && m.none_can_start(text) {
            return self.emit(text, sink, content);
        }
        self.buf.push_str(text);
        loop {
            let m = if self.in_reasoning { &self.m_reason } else { &self.m_content };
            match m.find(&self.buf, 0, eof) {
                Hit::Full { pos, len, idx } => {
                    let before = self.buf[..pos].to_string();
                    self.emit(&before, sink, content);
                    if idx >= if self.in_reasoning { self.span_at_reason } else { self.span_at_content } {
                        // inline markup: dropped through its `>`, or text when none comes
                        let from = pos + len - 1;
                        let end = self.buf[from..].find(['<', '>']).map(|e| from + e);
                        self.buf.drain(..pos);
                        match end.map(|e| (e - pos, self.buf.as_bytes()[e - pos])) {
                            Some((e, b'>')) if e < SPAN_MAX => drop(self.buf.drain(..=e)),
                            None if !eof && self.buf.len() <= SPAN_MAX => return,
                            _ => {
                                let marker = self.buf[..len].to_string();
                                self.emit(&marker, sink, content);
                                self.buf.drain(..len);
                            }
                        }
                        continue;
                    }
                    if self.in_reasoning {
                        if idx >= self.tool_at_reason {
                            // a tool call ends the reasoning; the marker is the tool parser's
                            self.in_reasoning = false;
                            self.buf.drain(..pos);
                            continue;
                        }
                        if idx < self.n_end {
                            self.in_reasoning = false;
                        }
                    } else if idx >= self.tool_at_content {
                        // in content a tool start is text like any other
                        let marker = self.buf[pos..pos + len].to_string();
                        self.emit(&marker, sink, content);
                    } else if idx < self.n_start {
                        self.in_reasoning = true;
                    }
                    self.buf.drain(..pos + len);
                }
                Hit::Partial { pos } => {
                    let before = self.buf[..pos].to_string();
                    self.emit(&before, sink, content);
                    self.buf.drain(..pos);
                    return;
                }
                Hit::None => {
                    let all = std::mem::take(&mut self.buf);
                    self.emit(&all, sink, content);
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tool_start_tests {
    use super::super::Delta;
    use super::*;

    static SPEC: MarkerSpec = MarkerSpec {
        start: &["<think>"],
        end: &["</think>"],
        forced: true,
        content_drops: &[],
        shape_aware: false,
        leading_strip_when_disabled: None,
        pass_through_prefix: None,
        implicit_start: false,
        tool_starts: &["<calls>"],
        span_drops: &[],
    };
    static IMPLICIT: MarkerSpec = MarkerSpec { forced: false, implicit_start: true, ..SPEC };

    /// (reasoning, content) of `text` pushed in `parts`.
    fn run(spec: &'static MarkerSpec, parts: &[&str]) -> (String, String) {
        let mut r = Reasoner::new(Spec::Markers(spec), &ParserOptions::default(), false).unwrap();
        let mut sink = Sink::default();
        let mut content = String::new();
        for (i, p) in parts.iter().enumerate() {
            r.push(p, i + 1 == parts.len(), &mut sink, &mut |s: &str, _k: &mut Sink| content.push_str(s));
        }
        let reasoning = sink.out.iter().map(|d| if let Delta::Reasoning(s) = d { s.as_str() } else { "" }).collect();
        (reasoning, content)
    }

    fn every_split(spec: &'static MarkerSpec, text: &str) -> (String, String) {
        let whole = run(spec, &[text]);
        for i in (1..text.len()).filter(|i| text.is_char_boundary(*i)) {
            assert_eq!(run(spec, &[&text[..i], &text[i..]]), whole, "split at {i}");
        }
        whole
    }

    #[test]
    fn a_tool_start_inside_reasoning_ends_it_and_goes_to_the_tool_side() {
        assert_eq!(every_split(&SPEC, "let me call it<calls>[x]"), ("let me call it".into(), "<calls>[x]".into()));
        // after the reasoning ended normally, the marker is plain content
        assert_eq!(every_split(&SPEC, "r</think>a<calls>b"), ("r".into(), "a<calls>b".into()));
        // an unfinished marker at the end stays reasoning
        assert_eq!(every_split(&SPEC, "r<cal"), ("r<cal".into(), "".into()));
    }

    #[test]
    fn with_an_implicit_start_a_tool_call_before_any_end_marker_ends_the_reasoning() {
        assert_eq!(every_split(&IMPLICIT, "thinking<calls>[x]"), ("thinking".into(), "<calls>[x]".into()));
        assert_eq!(every_split(&IMPLICIT, "<think>t</think>c"), ("t".into(), "c".into()));
    }
}
