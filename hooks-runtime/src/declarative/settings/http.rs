//! The `http` hook type: the event POSTed as JSON to the hook's `url`, the response body read as
//! a command's stdout (a 2xx status is exit 0; any other status is a failure). Plain `http://`
//! only, with the same timeout and output cap as a command.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::runner::{HookRun, MAX_SETTINGS_HOOK_OUTPUT_BYTES, RunEnd};

/// An `http` hook's target, as loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HttpTarget {
    /// `host:port`.
    pub(crate) authority: String,
    /// The path and query, from `/`.
    pub(crate) path: String,
    /// The headers as written; `$VAR` and `${VAR}` expand when the hook runs.
    pub(crate) headers: Vec<(String, String)>,
    /// The variables a header may expand.
    pub(crate) allowed_env_vars: Vec<String>,
}

impl HttpTarget {
    /// The target of `url` (`http://host[:port]/path`), or why it is not one.
    pub(crate) fn parse(url: &str) -> Result<(String, String), String> {
        let rest = url.strip_prefix("http://").ok_or("only `http://` URLs are supported here")?;
        let (authority, path) = match rest.find('/') {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, "/"),
        };
        if authority.is_empty() || authority.contains(['@', ' ']) {
            return Err("expected `http://host[:port]/path`".to_owned());
        }
        let authority = if authority.contains(':') { authority.to_owned() } else { format!("{authority}:80") };
        Ok((authority, path.to_owned()))
    }

    /// `value` with `$VAR` and `${VAR}` replaced by the variable's value when `VAR` is allowed,
    /// by nothing otherwise: a header never carries a variable it was not allowed.
    fn expand(&self, value: &str) -> String {
        let mut out = String::new();
        let mut rest = value;
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            let (name, tail) = if let Some(braced) = after.strip_prefix('{') {
                match braced.find('}') {
                    Some(end) => (&braced[..end], &braced[end + 1..]),
                    None => ("", after),
                }
            } else {
                let end = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
                (&after[..end], &after[end..])
            };
            if name.is_empty() {
                out.push('$');
            } else if self.allowed_env_vars.iter().any(|allowed| allowed == name) {
                out.push_str(&std::env::var(name).unwrap_or_default());
            }
            rest = tail;
        }
        out.push_str(rest);
        out
    }

    /// POSTs `body` within `timeout`.
    pub(crate) async fn post(&self, body: &[u8], timeout: Duration) -> HookRun {
        match tokio::time::timeout(timeout, self.exchange(body)).await {
            Err(_) => HookRun { end: RunEnd::TimedOut(timeout), stdout: String::new(), stderr: String::new() },
            Ok(Err(error)) => HookRun { end: RunEnd::NotRun(error), stdout: String::new(), stderr: String::new() },
            Ok(Ok((status, body))) if (200..300).contains(&status) => {
                HookRun { end: RunEnd::Exited(0), stdout: body, stderr: String::new() }
            }
            Ok(Ok((status, body))) => HookRun {
                end: RunEnd::NotRun(format!("answered HTTP status {status}")),
                stdout: String::new(),
                stderr: body,
            },
        }
    }

    async fn exchange(&self, body: &[u8]) -> Result<(u16, String), String> {
        let mut stream = tokio::net::TcpStream::connect(&self.authority)
            .await
            .map_err(|error| format!("could not connect to {}: {error}", self.authority))?;
        let mut request = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
            self.path,
            self.authority,
            body.len()
        );
        for (name, value) in &self.headers {
            let value = self.expand(value);
            // A header cannot break the request: line breaks in a value are dropped.
            let value: String = value.chars().filter(|c| *c != '\r' && *c != '\n').collect();
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        stream.write_all(request.as_bytes()).await.map_err(|error| format!("could not send: {error}"))?;
        stream.write_all(body).await.map_err(|error| format!("could not send: {error}"))?;
        let mut response = Vec::new();
        stream
            .take(MAX_SETTINGS_HOOK_OUTPUT_BYTES as u64 + 64 * 1024)
            .read_to_end(&mut response)
            .await
            .map_err(|error| format!("could not read the response: {error}"))?;
        let text = String::from_utf8_lossy(&response);
        let (head, body) = text.split_once("\r\n\r\n").ok_or("the response has no header end")?;
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|code| code.parse::<u16>().ok())
            .ok_or("the response has no status")?;
        let chunked = head.lines().any(|line| {
            line.to_ascii_lowercase().starts_with("transfer-encoding:") && line.to_ascii_lowercase().contains("chunked")
        });
        let body = if chunked { dechunk(body) } else { body.to_owned() };
        let body: String = body.chars().take(MAX_SETTINGS_HOOK_OUTPUT_BYTES).collect();
        Ok((status, body))
    }
}

/// A chunked body's data.
fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else { break };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].strip_prefix("\r\n").unwrap_or(&rest[size..]);
    }
    out
}
