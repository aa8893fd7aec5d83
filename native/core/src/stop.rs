//! Stop strings over a text stream, with a hold-back "jail".
//!
//! Text arrives in pieces. The jail releases text as soon as it cannot be part of a stop
//! string: a suffix of the unreleased text that is a proper prefix of some stop string is
//! held back (across any number of pieces) until it either completes a stop string or
//! stops matching. On a match, the text before it is released (plus the stop string
//! itself when `include_in_output`), and everything after it is dropped.
//!
//! When several stop strings occur, the one whose match *ends* first wins (the one that
//! would have completed first during generation); on a tie, the longer one (earlier start).

/// A completed stop-string match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopMatch {
    /// Index into the stop list given to `StopJail::new`.
    pub index: usize,
    /// The final text released by this piece (text before the stop string, plus the
    /// stop string when `include_in_output`).
    pub released: String,
}

pub struct StopJail {
    stops: Vec<String>,
    include_in_output: bool,
    /// Text received but not yet released (a possible start of a stop string).
    held: String,
    /// Longest stop string length in bytes.
    max_len: usize,
}

/// What one `push` produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JailOutput {
    /// Text that is now final (possibly empty); more may follow.
    Text(String),
    /// A stop string matched; the stream is over.
    Stopped(StopMatch),
}

impl StopJail {
    /// Empty stop strings are ignored (they would match everywhere).
    pub fn new(stops: Vec<String>, include_in_output: bool) -> StopJail {
        let stops: Vec<String> = stops.into_iter().filter(|s| !s.is_empty()).collect();
        let max_len = stops.iter().map(String::len).max().unwrap_or(0);
        StopJail {
            stops,
            include_in_output,
            held: String::new(),
            max_len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.stops.is_empty()
    }

    pub fn stop(&self, index: usize) -> &str {
        &self.stops[index]
    }

    /// Bytes currently held back.
    pub fn held_len(&self) -> usize {
        self.held.len()
    }

    /// Adds `piece`. With `match_enabled` false (before min_tokens), stop strings are not
    /// matched, but partial ones are still held back so that one completing just after
    /// min_tokens is found.
    pub fn push(&mut self, piece: &str, match_enabled: bool) -> JailOutput {
        if self.stops.is_empty() {
            return JailOutput::Text(piece.to_owned());
        }
        if piece.is_empty() && self.held.is_empty() {
            return JailOutput::Text(String::new());
        }
        // Only a window ending in the new piece can hold a new match.
        let search_from = floor_char_boundary(
            &self.held,
            self.held.len().saturating_sub(self.max_len.saturating_sub(1)),
        );
        self.held.push_str(piece);
        if match_enabled {
            if let Some((index, start)) = self.find_first(search_from) {
                let end = start + self.stops[index].len();
                let cut = if self.include_in_output { end } else { start };
                self.held.truncate(cut);
                return JailOutput::Stopped(StopMatch {
                    index,
                    released: std::mem::take(&mut self.held),
                });
            }
        }
        let keep = self.partial_suffix_len();
        let released = self.held[..self.held.len() - keep].to_owned();
        self.held.drain(..self.held.len() - keep);
        JailOutput::Text(released)
    }

    /// Releases everything held (the stream ended without completing a stop string).
    pub fn flush(&mut self) -> String {
        std::mem::take(&mut self.held)
    }

    /// (stop index, start byte) of the match that ends first, searching from `from`.
    fn find_first(&self, from: usize) -> Option<(usize, usize)> {
        let hay = &self.held[from..];
        let mut best: Option<(usize, usize, usize)> = None; // (end, start, index)
        for (i, s) in self.stops.iter().enumerate() {
            if let Some(pos) = hay.find(s.as_str()) {
                let start = from + pos;
                let end = start + s.len();
                let better = match best {
                    None => true,
                    Some((be, bs, _)) => end < be || (end == be && start < bs),
                };
                if better {
                    best = Some((end, start, i));
                }
            }
        }
        best.map(|(_, start, i)| (i, start))
    }

    /// Length of the longest suffix of `held` that is a proper prefix of a stop string.
    fn partial_suffix_len(&self) -> usize {
        let h = self.held.as_bytes();
        let longest = self.max_len.saturating_sub(1).min(h.len());
        for k in (1..=longest).rev() {
            let start = h.len() - k;
            if !self.held.is_char_boundary(start) {
                continue;
            }
            let tail = &h[start..];
            if self
                .stops
                .iter()
                .any(|s| s.len() > k && s.as_bytes().starts_with(tail))
            {
                return k;
            }
        }
        0
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jail(stops: &[&str], include: bool) -> StopJail {
        StopJail::new(stops.iter().map(|s| s.to_string()).collect(), include)
    }

    fn text(o: JailOutput) -> String {
        match o {
            JailOutput::Text(t) => t,
            JailOutput::Stopped(m) => panic!("unexpected stop {m:?}"),
        }
    }

    #[test]
    fn partial_is_held_across_pieces_then_released() {
        let mut j = jail(&["</answer>"], false);
        assert_eq!(text(j.push("the end <", true)), "the end ");
        assert_eq!(text(j.push("/ans", true)), "");
        assert_eq!(text(j.push("w", true)), "");
        assert_eq!(text(j.push("x", true)), "</answx");
        assert_eq!(j.held_len(), 0);
    }

    #[test]
    fn match_across_pieces_drops_stop_and_rest() {
        let mut j = jail(&["STOP"], false);
        assert_eq!(text(j.push("abcST", true)), "abc");
        match j.push("OPxyz", true) {
            JailOutput::Stopped(m) => assert_eq!((m.index, m.released.as_str()), (0, "")),
            o => panic!("{o:?}"),
        }
    }

    #[test]
    fn include_in_output_keeps_the_stop_string() {
        let mut j = jail(&["STOP"], true);
        match j.push("abcSTOPxyz", true) {
            JailOutput::Stopped(m) => assert_eq!(m.released, "abcSTOP"),
            o => panic!("{o:?}"),
        }
    }

    #[test]
    fn first_completed_wins() {
        let mut j = jail(&["bcd", "ab", "zzz"], false);
        match j.push("xabcd", true) {
            JailOutput::Stopped(m) => assert_eq!((m.index, m.released.as_str()), (1, "x")),
            o => panic!("{o:?}"),
        }
    }

    #[test]
    fn flush_releases_the_partial() {
        let mut j = jail(&["<stop>"], false);
        assert_eq!(text(j.push("a<st", true)), "a");
        assert_eq!(j.flush(), "<st");
    }

    #[test]
    fn multibyte_stop_and_text() {
        let mut j = jail(&["é!"], false);
        assert_eq!(text(j.push("café", true)), "caf");
        match j.push("!", true) {
            JailOutput::Stopped(m) => assert_eq!(m.released, ""),
            o => panic!("{o:?}"),
        }
        let mut j = jail(&["日本"], false);
        assert_eq!(text(j.push("日", true)), "");
        assert_eq!(text(j.push("語", true)), "日語");
    }

    #[test]
    fn disabled_matching_still_holds_partials() {
        let mut j = jail(&["ab"], false);
        assert_eq!(text(j.push("xab", false)), "xab");
        assert_eq!(text(j.push("a", false)), "");
        match j.push("b", true) {
            JailOutput::Stopped(m) => assert_eq!(m.released, ""),
            o => panic!("{o:?}"),
        }
    }

    #[test]
    fn no_stops_is_a_passthrough() {
        let mut j = jail(&[""], false);
        assert!(j.is_empty());
        assert_eq!(text(j.push("a<b", true)), "a<b");
    }
}
