//! Server-sent events: splits a `text/event-stream` body into the data of its events, however the
//! network cuts the body into chunks.
//!
//! Follows the WHATWG event-stream rules that matter here: lines end with `\r\n`, `\n` or `\r`; a
//! blank line ends an event; `data:` lines are joined with `\n`; one space after the colon is
//! dropped; comments (`:`) and other fields (`event`, `id`, `retry`) are ignored; an event without
//! data is not dispatched.

/// The event-stream parser. Feed it chunks with [`SseParser::push`], take events with
/// [`SseParser::next_event`], and at the end of the body drain it with [`SseParser::next_event_at_end`].
/// The most one event may hold, line breaks and all, so an endpoint that never ends its line or
/// event cannot grow the buffer without bound.
const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

#[derive(Debug, Default)]
pub(super) struct SseParser {
    /// Bytes received and not yet split into lines; starts at `consumed`.
    buffer: Vec<u8>,
    consumed: usize,
    /// How many bytes after `consumed` are known to hold no line break, so a long line arriving in
    /// many chunks is scanned once.
    scanned: usize,
    /// The data of the event being read.
    data: String,
    has_data: bool,
    /// Whether the first line was seen, for the byte-order mark the format allows there.
    started: bool,
}

/// The body is not an event stream the parser can read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SseError(pub(super) String);

impl SseParser {
    /// Appends a chunk of the body.
    pub(super) fn push(&mut self, chunk: &[u8]) {
        if self.consumed > 0 {
            self.buffer.drain(..self.consumed);
            self.consumed = 0;
        }
        self.buffer.extend_from_slice(chunk);
    }

    /// The data of the next complete event in what was pushed so far, if there is one.
    pub(super) fn next_event(&mut self) -> Result<Option<String>, SseError> {
        self.next_event_inner(false)
    }

    /// After the body ended: the data of the next event, counting a last line without a line break
    /// and a last event without a blank line after it, since some servers end the body that way.
    pub(super) fn next_event_at_end(&mut self) -> Result<Option<String>, SseError> {
        if let Some(data) = self.next_event_inner(true)? {
            return Ok(Some(data));
        }
        Ok(self.dispatch())
    }

    fn next_event_inner(&mut self, at_end: bool) -> Result<Option<String>, SseError> {
        while let Some(line) = self.next_line(at_end)? {
            if let Some(data) = self.handle_line(&line) {
                return Ok(Some(data));
            }
        }
        if self.buffer.len() - self.consumed + self.data.len() > MAX_EVENT_BYTES {
            return Err(SseError(format!("expected events of at most {} MiB", MAX_EVENT_BYTES / (1024 * 1024))));
        }
        Ok(None)
    }

    /// The next complete line, without its line break.
    fn next_line(&mut self, at_end: bool) -> Result<Option<String>, SseError> {
        let rest = &self.buffer[self.consumed..];
        let found = rest[self.scanned..].iter().position(|&byte| byte == b'\n' || byte == b'\r');
        let found = found.map(|at| self.scanned + at);
        let (line_len, break_len) = match found {
            Some(at) if rest[at] == b'\n' => (at, 1),
            Some(at) => match rest.get(at + 1) {
                Some(b'\n') => (at, 2),
                Some(_) => (at, 1),
                // A `\r` at the end of what arrived: a `\n` may follow in the next chunk.
                None if at_end => (at, 1),
                None => {
                    self.scanned = at;
                    return Ok(None);
                }
            },
            None if at_end && !rest.is_empty() => (rest.len(), 0),
            None => {
                self.scanned = rest.len();
                return Ok(None);
            }
        };
        let line = std::str::from_utf8(&rest[..line_len])
            .map_err(|_| SseError("expected UTF-8 text in the event stream".to_owned()))?;
        let line = if self.started { line } else { line.strip_prefix('\u{feff}').unwrap_or(line) };
        let line = line.to_owned();
        self.started = true;
        self.consumed += line_len + break_len;
        self.scanned = 0;
        Ok(Some(line))
    }

    /// Applies one line; returns the event's data when the line ends an event.
    fn handle_line(&mut self, line: &str) -> Option<String> {
        if line.is_empty() {
            return self.dispatch();
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        if field == "data" {
            if self.has_data {
                self.data.push('\n');
            }
            self.data.push_str(value);
            self.has_data = true;
        }
        // Comments have an empty field name; `event`, `id`, `retry` and unknown fields carry
        // nothing an OpenAI-compatible stream needs.
        None
    }

    fn dispatch(&mut self) -> Option<String> {
        if !self.has_data {
            return None;
        }
        self.has_data = false;
        Some(std::mem::take(&mut self.data))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(chunks: &[&[u8]]) -> Result<Vec<String>, SseError> {
        let mut parser = SseParser::default();
        let mut events = Vec::new();
        for chunk in chunks {
            parser.push(chunk);
            while let Some(data) = parser.next_event()? {
                events.push(data);
            }
        }
        while let Some(data) = parser.next_event_at_end()? {
            events.push(data);
        }
        Ok(events)
    }

    const STREAM: &str = "\u{feff}: keep-alive\r\n\r\ndata: {\"a\":\"é\"}\r\n\r\nevent: message\nid: 7\nretry: 10\ndata:x\n\ndata: one\ndata:  two\r\rdata\n\ndata: [DONE]\n\n";

    fn expected() -> Vec<String> {
        ["{\"a\":\"é\"}", "x", "one\n two", "", "[DONE]"].map(str::to_owned).to_vec()
    }

    #[test]
    fn reads_fields_comments_and_all_line_breaks() {
        assert_eq!(parse(&[STREAM.as_bytes()]), Ok(expected()));
    }

    #[test]
    fn any_cut_into_two_chunks_gives_the_same_events() {
        let bytes = STREAM.as_bytes();
        for cut in 0..=bytes.len() {
            assert_eq!(parse(&[&bytes[..cut], &bytes[cut..]]), Ok(expected()), "cut at byte {cut}");
        }
    }

    #[test]
    fn one_byte_at_a_time_gives_the_same_events() {
        let chunks: Vec<&[u8]> = STREAM.as_bytes().chunks(1).collect();
        assert_eq!(parse(&chunks), Ok(expected()));
    }

    #[test]
    fn the_last_event_counts_without_a_blank_line_or_line_break() {
        assert_eq!(parse(&[b"data: a\n\ndata: b"]), Ok(vec!["a".to_owned(), "b".to_owned()]));
        assert_eq!(parse(&[b"data: a\r"]), Ok(vec!["a".to_owned()]));
    }

    #[test]
    fn an_event_is_not_yielded_before_its_blank_line() {
        let mut parser = SseParser::default();
        parser.push(b"data: a\n");
        assert_eq!(parser.next_event(), Ok(None));
        parser.push(b"\r");
        assert_eq!(parser.next_event(), Ok(None), "a \\r may be the start of \\r\\n");
        parser.push(b"\n");
        assert_eq!(parser.next_event(), Ok(Some("a".to_owned())));
    }

    #[test]
    fn an_event_that_never_ends_is_an_error_once_too_large() {
        let mut parser = SseParser::default();
        let line = vec![b'x'; 1024 * 1024];
        parser.push(b"data: ");
        let mut result = Ok(None);
        for _ in 0..=16 {
            parser.push(&line);
            result = parser.next_event();
        }
        assert_eq!(result, Err(SseError("expected events of at most 16 MiB".to_owned())));
    }

    #[test]
    fn invalid_utf8_is_an_error_not_a_panic() {
        assert!(parse(&[b"data: \xff\xfe\n\n"]).is_err());
    }
}
