//! The `http` hook type: the event POSTed as JSON to the hook's `url` (`http://` or
//! `https://`), the response body read as a command's stdout (a 2xx status is exit 0; any other
//! status is a failure), with the same timeout and output cap as a command.
//!
//! One client serves every such hook of the process. It trusts the Mozilla roots built in
//! (`webpki-roots`, as the OpenAI client does) and the PEM certificates of the file that
//! [`EXTRA_CA_CERTS_VAR`] names, the variable Claude Code (a Node program) reads for the same
//! purpose: a private CA that Claude Code's http hooks trust is trusted here the same way. The
//! variable is read once, when the first http hook runs; a file that cannot be read or holds no
//! certificate is every http hook's failure, named, rather than a silent fallback. Redirects are
//! not followed: a 3xx answer is a failure, so an event (tool inputs, expanded headers) is never
//! sent on to a host the settings file does not name. A proxy that `HTTPS_PROXY` / `HTTP_PROXY`
//! names is used, except for the hosts of `NO_PROXY` (reqwest's reading of them).

use std::sync::OnceLock;
use std::time::Duration;

use reqwest::Url;

use super::runner::{HookRun, MAX_SETTINGS_HOOK_OUTPUT_BYTES, RunEnd};
use crate::declarative::LOG_TARGET;
use crate::error_chain::error_chain;

/// The environment variable naming a PEM file of certificates that `https://` hooks trust
/// besides the built-in roots: Node's, which Claude Code honours.
pub(crate) const EXTRA_CA_CERTS_VAR: &str = "NODE_EXTRA_CA_CERTS";

/// An `http` hook's target, as loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HttpTarget {
    /// Where the event is POSTed.
    pub(crate) url: Url,
    /// The headers as written; `$VAR` and `${VAR}` expand when the hook runs.
    pub(crate) headers: Vec<(String, String)>,
    /// The variables a header may expand.
    pub(crate) allowed_env_vars: Vec<String>,
}

impl HttpTarget {
    /// The URL of `url` (`http://` or `https://`, a host, no credentials), or why it is not one.
    pub(crate) fn parse(url: &str) -> Result<Url, String> {
        let parsed =
            Url::parse(url).map_err(|error| format!("not a URL ({error}); expected `https://host[:port]/path`"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(format!("the scheme `{}` is not supported here; use `http://` or `https://`", parsed.scheme()));
        }
        if parsed.host_str().is_none_or(str::is_empty) {
            return Err("no host; expected `https://host[:port]/path`".to_owned());
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(
                "credentials in the URL are not supported; send them in `headers` with `allowedEnvVars`".to_owned()
            );
        }
        Ok(parsed)
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

    /// POSTs `body` within `timeout` (connecting, sending and reading the answer).
    pub(crate) async fn post(&self, body: &[u8], timeout: Duration) -> HookRun {
        // Boxed: reqwest's client is a deep type, and every future that awaits a settings hook
        // (a turn's, and a hook's that sends to its own thread) would otherwise carry it, past
        // the depth at which rustc gives up proving such a future `Send`. One allocation per
        // POST, beside the request's own.
        let exchange: futures_util::future::BoxFuture<'_, Result<(u16, String), String>> =
            Box::pin(self.exchange(body));
        match tokio::time::timeout(timeout, exchange).await {
            Err(_) => HookRun { end: RunEnd::TimedOut(timeout), stdout: String::new(), stderr: String::new() },
            Ok(Err(error)) => HookRun { end: RunEnd::NotRun(error), stdout: String::new(), stderr: String::new() },
            Ok(Ok((status, body))) if (200..300).contains(&status) => {
                HookRun { end: RunEnd::Exited(0), stdout: body, stderr: String::new() }
            }
            Ok(Ok((status, body))) => HookRun {
                end: RunEnd::NotRun(format!("{} answered HTTP status {status}", self.url)),
                stdout: String::new(),
                stderr: body,
            },
        }
    }

    async fn exchange(&self, body: &[u8]) -> Result<(u16, String), String> {
        let client = client()?;
        let mut request =
            client.post(self.url.clone()).header(reqwest::header::CONTENT_TYPE, "application/json").body(body.to_vec());
        for (name, value) in &self.headers {
            // A header cannot break the request: line breaks in a value are dropped.
            let value: String = self.expand(value).chars().filter(|c| *c != '\r' && *c != '\n').collect();
            request = request.header(name.as_str(), value);
        }
        let mut response = request
            .send()
            .await
            .map_err(|error| format!("could not POST to {}: {}", self.url, error_chain(&error.without_url())))?;
        let status = response.status().as_u16();
        let mut kept = Vec::new();
        let mut dropped = 0usize;
        while let Some(chunk) = response.chunk().await.map_err(|error| {
            format!("could not read the answer of {}: {}", self.url, error_chain(&error.without_url()))
        })? {
            let room = MAX_SETTINGS_HOOK_OUTPUT_BYTES.saturating_sub(kept.len());
            kept.extend_from_slice(&chunk[..room.min(chunk.len())]);
            dropped += chunk.len().saturating_sub(room);
            if dropped > 0 {
                // The rest is not read: the connection closes with the response.
                break;
            }
        }
        if dropped > 0 {
            tracing::warn!(
                target: LOG_TARGET,
                "[HOOK] the answer of {} was cut at {MAX_SETTINGS_HOOK_OUTPUT_BYTES} bytes; the rest was not read",
                self.url
            );
        }
        Ok((status, String::from_utf8_lossy(&kept).into_owned()))
    }
}

/// The process's client for http hooks, made at the first use.
fn client() -> Result<&'static reqwest::Client, String> {
    static CLIENT: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    CLIENT.get_or_init(|| build_client(std::env::var_os(EXTRA_CA_CERTS_VAR))).as_ref().map_err(Clone::clone)
}

/// A client trusting the built-in roots and the certificates of the PEM file `extra_ca`.
fn build_client(extra_ca: Option<std::ffi::OsString>) -> Result<reqwest::Client, String> {
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        // Header names as the settings file writes them (`X-Api-Key`), as Claude Code sends them.
        .http1_title_case_headers();
    if let Some(path) = extra_ca.filter(|path| !path.is_empty()) {
        let shown = std::path::Path::new(&path).display().to_string();
        let pem = std::fs::read(&path)
            .map_err(|error| format!("{EXTRA_CA_CERTS_VAR} names {shown}, which could not be read: {error}"))?;
        let certificates = reqwest::Certificate::from_pem_bundle(&pem)
            .map_err(|error| format!("{EXTRA_CA_CERTS_VAR} names {shown}, which is not PEM certificates: {error}"))?;
        if certificates.is_empty() {
            return Err(format!("{EXTRA_CA_CERTS_VAR} names {shown}, which holds no PEM certificate"));
        }
        for certificate in certificates {
            builder = builder.add_root_certificate(certificate);
        }
    }
    builder.build().map_err(|error| format!("could not set up the HTTP client of http hooks: {}", error_chain(&error)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k12_http_and_https_urls_load_and_others_are_named() {
        assert_eq!(
            HttpTarget::parse("https://hooks.example/pre?x=1").unwrap().as_str(),
            "https://hooks.example/pre?x=1"
        );
        assert_eq!(HttpTarget::parse("http://127.0.0.1:8080").unwrap().as_str(), "http://127.0.0.1:8080/");
        assert_eq!(
            HttpTarget::parse("ftp://hooks.example/").unwrap_err(),
            "the scheme `ftp` is not supported here; use `http://` or `https://`"
        );
        assert!(HttpTarget::parse("https://user:secret@hooks.example/").unwrap_err().starts_with("credentials"));
        assert!(HttpTarget::parse("hooks.example/pre").unwrap_err().starts_with("not a URL"));
    }

    #[test]
    fn k12_an_extra_ca_file_that_cannot_be_used_is_named() {
        let missing = std::env::temp_dir().join(format!("no-such-ca-{}.pem", std::process::id()));
        let error = build_client(Some(missing.clone().into())).unwrap_err();
        assert!(
            error.starts_with(&format!("NODE_EXTRA_CA_CERTS names {}, which could not be read", missing.display()))
        );
        let empty = std::env::temp_dir().join(format!("empty-ca-{}.pem", std::process::id()));
        std::fs::write(&empty, "no certificate here\n").unwrap();
        let error = build_client(Some(empty.clone().into())).unwrap_err();
        std::fs::remove_file(&empty).unwrap();
        assert_eq!(error, format!("NODE_EXTRA_CA_CERTS names {}, which holds no PEM certificate", empty.display()));
    }
}
