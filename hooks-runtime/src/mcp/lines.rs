//! H4: a stdio server's stdout with a cap on each line (one JSON-RPC message). `rmcp` drops an
//! oversized line and goes on, so the call it answered waits out its whole timeout; here such a
//! line is dropped as it arrives (never held whole) and replaced by a JSON-RPC error answer to
//! the same request id, so the call fails at once saying why. A line whose id cannot be read
//! (neither at its start, as the Python SDK writes answers, nor at its end, as the TypeScript
//! SDK does) ends the stream: every call in flight fails at once and the server is restarted.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use serde_json::{Value, json};
use tokio::io::{AsyncRead, ReadBuf};

/// Bytes kept from the start and from the end of an oversized line, where its id is.
const EDGE_BYTES: usize = 256;

/// How much is read from the server at a time.
const CHUNK_BYTES: usize = 8192;

/// The JSON-RPC error code of the answer put in place of an oversized one ("internal error").
const OVERSIZED_CODE: i64 = -32603;

/// `inner` with lines longer than `cap` bytes replaced (see the [module](self)).
pub(super) struct CappedLines<R> {
    inner: R,
    cap: usize,
    /// Bytes of the current line so far (passed on, or dropped once over the cap).
    line_len: usize,
    /// The current line's first bytes.
    head: Vec<u8>,
    /// While dropping an oversized line: its last bytes.
    tail: Vec<u8>,
    dropping: bool,
    /// What to hand out before reading more.
    pending: Vec<u8>,
    pending_at: usize,
    /// The stream ends once `pending` is out.
    closed: bool,
}

impl<R> CappedLines<R> {
    pub(super) fn new(inner: R, cap: usize) -> Self {
        CappedLines {
            inner,
            cap,
            line_len: 0,
            head: Vec::new(),
            tail: Vec::new(),
            dropping: false,
            pending: Vec::new(),
            pending_at: 0,
            closed: false,
        }
    }

    /// Passes `chunk` on to `pending`, dropping what is over the cap.
    fn take(&mut self, mut chunk: &[u8]) {
        while !chunk.is_empty() && !self.closed {
            let end = chunk.iter().position(|&byte| byte == b'\n');
            let (part, ends_line) = match end {
                Some(at) => (&chunk[..at], true),
                None => (chunk, false),
            };
            if !self.dropping {
                let room = EDGE_BYTES.saturating_sub(self.head.len());
                self.head.extend_from_slice(&part[..part.len().min(room)]);
                if self.line_len + part.len() > self.cap {
                    // What was passed on is ended here as a line of its own: `rmcp` reads it
                    // as broken JSON and ignores it.
                    self.pending.push(b'\n');
                    self.dropping = true;
                } else {
                    self.pending.extend_from_slice(part);
                }
            }
            self.line_len += part.len();
            if self.dropping {
                self.tail.extend_from_slice(part);
                let excess = self.tail.len().saturating_sub(EDGE_BYTES);
                self.tail.drain(..excess);
            }
            if ends_line {
                if self.dropping {
                    self.replace_dropped();
                } else {
                    self.pending.push(b'\n');
                }
                self.line_len = 0;
                self.head.clear();
                self.tail.clear();
                self.dropping = false;
                chunk = &chunk[part.len() + 1..];
            } else {
                chunk = &[];
            }
        }
    }

    /// The dropped line is whole: an error answer to its id, or the end of the stream.
    fn replace_dropped(&mut self) {
        let Some(id) = id_at_start(&self.head).or_else(|| id_at_end(&self.tail)) else {
            tracing::warn!(
                target: "hooks_runtime::mcp",
                "an MCP server sent a message of {} bytes, over the cap of {} bytes, whose id could not be read: the connection is closed",
                self.line_len,
                self.cap
            );
            self.closed = true;
            return;
        };
        let message = format!(
            "the MCP server's answer was {} bytes, over the cap of {} bytes on one message (`McpTransport::max_message_bytes`), and was dropped",
            self.line_len, self.cap
        );
        let answer = json!({"jsonrpc": "2.0", "id": id, "error": {"code": OVERSIZED_CODE, "message": message}});
        self.pending.extend_from_slice(answer.to_string().as_bytes());
        self.pending.push(b'\n');
    }
}

/// The id of a message that begins `{"id":` or `{"jsonrpc":"2.0","id":` (spaces aside).
fn id_at_start(head: &[u8]) -> Option<Value> {
    let text = compact(head);
    let rest = text.strip_prefix(r#"{"jsonrpc":"2.0","id":"#).or_else(|| text.strip_prefix(r#"{"id":"#))?;
    id_value(rest, |after| after.starts_with(',') || after.starts_with('}'))
}

/// The id of a message that ends `,"id":<id>}` (spaces aside).
fn id_at_end(tail: &[u8]) -> Option<Value> {
    let text = compact(tail);
    let at = text.rfind(r#","id":"#)?;
    id_value(&text[at + r#","id":"#.len()..], |after| after == "}")
}

/// A number or a plain string at the start of `text`, if what follows it passes `then`.
fn id_value(text: &str, then: impl Fn(&str) -> bool) -> Option<Value> {
    let end = if let Some(string) = text.strip_prefix('"') {
        let close = string.find('"')?;
        if string[..close].contains('\\') {
            return None;
        }
        close + 2
    } else {
        text.find(|c: char| !(c.is_ascii_digit() || c == '-')).unwrap_or(text.len())
    };
    if end == 0 || !then(&text[end..]) {
        return None;
    }
    serde_json::from_str(&text[..end]).ok()
}

/// `bytes` as text without ASCII whitespace (lossy: only ids are read from it).
fn compact(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).chars().filter(|c| !c.is_ascii_whitespace()).collect()
}

impl<R: AsyncRead + Unpin> AsyncRead for CappedLines<R> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        loop {
            if this.pending_at < this.pending.len() {
                let out = &this.pending[this.pending_at..];
                let n = out.len().min(buf.remaining());
                buf.put_slice(&out[..n]);
                this.pending_at += n;
                if this.pending_at == this.pending.len() {
                    this.pending.clear();
                    this.pending_at = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.closed {
                return Poll::Ready(Ok(()));
            }
            let mut chunk = [0u8; CHUNK_BYTES];
            let mut read = ReadBuf::new(&mut chunk);
            match Pin::new(&mut this.inner).poll_read(cx, &mut read) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
                Poll::Ready(Ok(())) if read.filled().is_empty() => {
                    // The end: a line still being dropped never ended, so nothing answers it.
                    this.closed = true;
                    return Poll::Ready(Ok(()));
                }
                Poll::Ready(Ok(())) => {
                    let filled = read.filled().to_vec();
                    this.take(&filled);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    async fn through(input: &[u8], cap: usize) -> String {
        let mut out = String::new();
        CappedLines::new(input, cap).read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn h4_lines_within_the_cap_pass_unchanged() {
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n{\"a\":1}\n";
        assert_eq!(through(input, 64).await.as_bytes(), input);
    }

    #[tokio::test]
    async fn h4_an_oversized_answer_becomes_an_error_answer_to_its_id() {
        let big = "x".repeat(1000);
        // The Python SDK's order (id first), then the TypeScript SDK's (id last).
        let input = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":\"{big}\"}}\n{{\"result\":\"{big}\",\"jsonrpc\":\"2.0\",\"id\":\"r-8\"}}\n{{\"ok\":1}}\n"
        );
        let out = through(input.as_bytes(), 100).await;
        let lines: Vec<&str> = out.lines().filter(|line| line.contains("\"error\"")).collect();
        assert_eq!(lines.len(), 2, "{out}");
        let first: Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(first["id"], 7);
        let length = input.lines().next().unwrap().len();
        let said = format!("{length} bytes, over the cap of 100 bytes");
        assert!(first["error"]["message"].as_str().unwrap().contains(&said), "{first}");
        let second: Value = serde_json::from_str(lines[1]).unwrap();
        assert_eq!(second["id"], "r-8");
        assert!(out.ends_with("{\"ok\":1}\n"), "the next message passes: {out}");
        assert!(!out.contains(&"x".repeat(101)), "nothing over the cap is passed on");
    }

    #[tokio::test]
    async fn h4_an_oversized_message_without_a_readable_id_ends_the_stream() {
        let input = format!("{{\"method\":\"x\",\"params\":\"{}\"}}\n{{\"ok\":1}}\n", "y".repeat(500));
        let out = through(input.as_bytes(), 100).await;
        assert!(!out.contains("\"ok\""), "{out}");
    }
}
