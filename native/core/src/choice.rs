//! One generated choice, end to end: token ids in, the deltas a response needs out.
//!
//! Composes the choice's `Sequence` (incremental detokenizer + stop jail + token limits)
//! with its optional `OutputParser` (reasoning, then tool calls over the content, spec 003),
//! so the text the detokenizer makes goes straight into the parser without leaving native
//! code. One `push` per engine message (all of its new ids); `finish` when the engine ended
//! the choice itself. Either returns the deltas that became final, in order, and once the
//! choice is over (a stop or the token limit on Portico's side, or `finish`) the parser has
//! been flushed too: its deltas come in the same result.
//!
//! The order of operations is exactly the one the two objects had when driven one after the
//! other (src/pipeline/outputs.ts then parse-outputs.ts): text that the sequence releases is
//! pushed into the parser (empty text is not pushed); when the sequence ends, the text it
//! still holds is pushed, then the parser is finished.

use crate::error::Result;
use crate::parsers::{Delta, OutputParser, Sink};
use crate::sequence::{FinishReason, MatchedStop, Sequence};

pub struct ChoiceOutput {
    seq: Sequence,
    parser: Option<OutputParser>,
    /// The deltas of the current push (reused between pushes).
    sink: Sink,
    /// The choice is over here: later pushes release nothing.
    over: bool,
}

impl ChoiceOutput {
    pub fn new(seq: Sequence, parser: Option<OutputParser>) -> ChoiceOutput {
        ChoiceOutput { seq, parser, sink: Sink::default(), over: false }
    }

    /// Adds the new ids of one engine message. Returns the deltas that became final; read
    /// `over()` after it: true once a stop or the token limit ended the choice (on this push).
    pub fn push(&mut self, ids: &[u32]) -> Result<&[Delta]> {
        self.sink.out.clear();
        if self.over {
            return Ok(&self.sink.out);
        }
        let text = self.seq.push(ids)?;
        self.text(&text);
        if self.seq.finished() {
            self.end()?;
        }
        Ok(&self.sink.out)
    }

    /// The engine ended the choice (or it was aborted): the held text and the parser's
    /// flush. Nothing once the choice is over.
    pub fn finish(&mut self) -> Result<&[Delta]> {
        self.sink.out.clear();
        if !self.over {
            self.end()?;
        }
        Ok(&self.sink.out)
    }

    /// Text the sequence released, through the parser. The first text of a push goes
    /// straight into the (empty) sink; a later one (the held tail) gets its own deltas, so
    /// delta boundaries stay where the two separate objects put them.
    fn text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        if self.sink.out.is_empty() {
            match &mut self.parser {
                Some(p) => p.push_into(text, &mut self.sink),
                None => self.sink.content(text),
            }
            return;
        }
        let mut own = Sink::default();
        match &mut self.parser {
            Some(p) => p.push_into(text, &mut own),
            None => own.content(text),
        }
        self.sink.out.append(&mut own.out);
    }

    fn end(&mut self) -> Result<()> {
        self.over = true;
        let tail = self.seq.finish()?;
        self.text(&tail);
        if let Some(p) = &mut self.parser {
            self.sink.out.extend(p.finish());
        }
        Ok(())
    }

    /// The deltas of the last `push` / `finish`.
    pub fn last(&self) -> &[Delta] {
        &self.sink.out
    }

    /// The choice is over here (a stop, the token limit, or `finish`).
    pub fn over(&self) -> bool {
        self.over
    }

    /// Portico's own finish reason: a stop (string, id, EOS) or the token limit; None when
    /// the engine ended the choice.
    pub fn finish_reason(&self) -> Option<FinishReason> {
        self.seq.finish_reason()
    }

    pub fn matched_stop(&self) -> Option<&MatchedStop> {
        self.seq.matched_stop()
    }

    /// Ids that count for usage (through the stop token).
    pub fn generated_tokens(&self) -> u32 {
        self.seq.generated_tokens()
    }

    /// Tool calls started so far (the finish reason is `tool_calls` when > 0, unless `length`).
    pub fn tool_call_count(&self) -> u32 {
        self.parser.as_ref().map_or(0, |p| p.tool_call_count())
    }
}
