//! How the runtime reaches one MCP server: a child process over its stdio, or streamable HTTP.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt as _;

use crate::process_group::ProcessGroup;

/// The default of [`McpTransport::timeout`]: how long one tool call may take on a running
/// server before it ends with an error result.
pub const DEFAULT_MCP_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// The default of [`McpTransport::start_timeout`]: how long a server's start (the process or
/// HTTP session, the MCP handshake and the first tool listing) may take.
pub const DEFAULT_MCP_START_TIMEOUT: Duration = Duration::from_secs(30);

/// The default of [`McpTransport::max_result_bytes`]: 100,000 bytes, about the 25,000 tokens
/// at which Claude Code cuts an MCP tool's output (4 bytes a token).
pub const DEFAULT_MCP_MAX_RESULT_BYTES: usize = 100_000;

/// The default of [`McpTransport::max_tools`]: 128, the most tools OpenAI's chat API takes in
/// one request.
pub const DEFAULT_MCP_MAX_TOOLS: usize = 128;

/// The default of [`McpTransport::max_message_bytes`]: 16 MiB, the line cap of `rmcp`'s stdio
/// transport (and of its HTTP client's events).
pub const DEFAULT_MCP_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// The default of [`McpTransport::start_backoff`]: after a failed start, calls fail at once
/// for 60 s before the server is started again.
pub const DEFAULT_MCP_START_BACKOFF: Duration = Duration::from_secs(60);

/// The variables of the runtime's environment a stdio server gets (H3), as the official MCP
/// SDKs pass them by default (their `get_default_environment`, on POSIX); the rest, API keys
/// included, only when its [`McpTransport::env`] lists them.
pub const MCP_INHERITED_ENV: [&str; 6] = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/// Most bytes of a stdio server's stderr kept, the last ones, for the message of a call that
/// the server's exit ended.
const STDERR_TAIL_BYTES: usize = 2048;

/// How to reach an MCP server ([`RuntimeBuilder::mcp_server`](crate::RuntimeBuilder::mcp_server)):
/// a child process that speaks MCP on its stdin and stdout, or a streamable-HTTP endpoint.
///
/// ```
/// use std::time::Duration;
/// use hooks_runtime::mcp::McpTransport;
///
/// let files = McpTransport::stdio("npx")
///     .args(["-y", "@modelcontextprotocol/server-filesystem", "/tmp"])
///     .env("NODE_ENV", "production")
///     .current_dir("/tmp")
///     .timeout(Duration::from_secs(30));
/// let remote = McpTransport::http("https://mcp.example.com/mcp").header("Authorization", "Bearer token");
/// # let _ = (files, remote);
/// ```
#[derive(Debug, Clone)]
pub struct McpTransport {
    pub(super) kind: TransportKind,
    pub(super) timeout: Duration,
    pub(super) start_timeout: Duration,
    pub(super) bounds: Bounds,
}

/// What one server's answers may hold (H4), and how long a failed start keeps it stopped (H5).
#[derive(Debug, Clone, Copy)]
pub(super) struct Bounds {
    pub(super) max_result_bytes: usize,
    pub(super) max_tools: usize,
    pub(super) max_message_bytes: usize,
    pub(super) start_backoff: Duration,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            max_result_bytes: DEFAULT_MCP_MAX_RESULT_BYTES,
            max_tools: DEFAULT_MCP_MAX_TOOLS,
            max_message_bytes: DEFAULT_MCP_MAX_MESSAGE_BYTES,
            start_backoff: DEFAULT_MCP_START_BACKOFF,
        }
    }
}

#[derive(Debug, Clone)]
pub(super) enum TransportKind {
    Stdio { command: OsString, args: Vec<OsString>, env: BTreeMap<OsString, OsString>, cwd: Option<PathBuf> },
    Http { url: String, headers: Vec<(String, String)> },
}

impl McpTransport {
    /// A server that the runtime starts as a child process, `command` (looked up on `PATH`),
    /// speaking MCP on its stdin and stdout; its stderr is kept only for error messages.
    ///
    /// The child leads a process group of its own, with a watchdog that kills the group once
    /// the runtime's process is gone (even by `SIGKILL`); the group is killed as well when the
    /// runtime is dropped or the server is restarted. It is started at the first need (a
    /// prompt that offers its tools, or a call), and again on the call after it exited.
    pub fn stdio(command: impl Into<OsString>) -> Self {
        McpTransport {
            kind: TransportKind::Stdio { command: command.into(), args: Vec::new(), env: BTreeMap::new(), cwd: None },
            timeout: DEFAULT_MCP_CALL_TIMEOUT,
            start_timeout: DEFAULT_MCP_START_TIMEOUT,
            bounds: Bounds::default(),
        }
    }

    /// A server at a streamable-HTTP endpoint (`http://` or `https://`).
    pub fn http(url: impl Into<String>) -> Self {
        McpTransport {
            kind: TransportKind::Http { url: url.into(), headers: Vec::new() },
            timeout: DEFAULT_MCP_CALL_TIMEOUT,
            start_timeout: DEFAULT_MCP_START_TIMEOUT,
            bounds: Bounds::default(),
        }
    }

    /// Adds an argument of a stdio server's command; ignored for HTTP.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        if let TransportKind::Stdio { args, .. } = &mut self.kind {
            args.push(arg.into());
        }
        self
    }

    /// Adds arguments of a stdio server's command; ignored for HTTP.
    pub fn args<I, S>(mut self, more: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        if let TransportKind::Stdio { args, .. } = &mut self.kind {
            args.extend(more.into_iter().map(Into::into));
        }
        self
    }

    /// Sets a variable of a stdio server's environment; ignored for HTTP. A server gets these
    /// and [`MCP_INHERITED_ENV`] of the runtime's environment, nothing else (H3): pass what it
    /// needs, `.env("GITHUB_TOKEN", token)`, or one of the runtime's by
    /// [`inherit_env`](Self::inherit_env).
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        if let TransportKind::Stdio { env, .. } = &mut self.kind {
            env.insert(key.into(), value.into());
        }
        self
    }

    /// Passes the runtime's variable `key` to a stdio server, when it is set (see
    /// [`env`](Self::env)); ignored for HTTP.
    ///
    /// ```
    /// use hooks_runtime::mcp::McpTransport;
    ///
    /// let server = McpTransport::stdio("my-server").inherit_env("LANG");
    /// # let _ = server;
    /// ```
    pub fn inherit_env(self, key: impl Into<OsString>) -> Self {
        let key = key.into();
        match std::env::var_os(&key) {
            Some(value) => self.env(key, value),
            None => self,
        }
    }

    /// The working directory of a stdio server (otherwise the runtime's); ignored for HTTP.
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        if let TransportKind::Stdio { cwd, .. } = &mut self.kind {
            *cwd = Some(dir.into());
        }
        self
    }

    /// Adds a header to every HTTP request (`Authorization`, say); ignored for stdio.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let TransportKind::Http { headers, .. } = &mut self.kind {
            headers.push((name.into(), value.into()));
        }
        self
    }

    /// How long one call of this server's tools may take on the running server (default
    /// [`DEFAULT_MCP_CALL_TIMEOUT`]): the tool's timeout. A call that runs past it ends with an
    /// error result, and the server is told with `notifications/cancelled`.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long the server's start may take: the process or HTTP session, the MCP handshake and
    /// the first tool listing (default [`DEFAULT_MCP_START_TIMEOUT`]). A call that finds the
    /// server stopped waits for its start first, then runs within [`McpTransport::timeout`].
    pub fn start_timeout(mut self, timeout: Duration) -> Self {
        self.start_timeout = timeout;
        self
    }

    /// The most bytes of a tool result's text the model reads (default
    /// [`DEFAULT_MCP_MAX_RESULT_BYTES`]); a longer text is cut there, with a note saying so and
    /// how long it was, and attachments past it are dropped with a line naming each (H4).
    ///
    /// ```
    /// use hooks_runtime::mcp::McpTransport;
    ///
    /// let logs = McpTransport::stdio("log-server").max_result_bytes(20_000);
    /// # let _ = logs;
    /// ```
    pub fn max_result_bytes(mut self, bytes: usize) -> Self {
        self.bounds.max_result_bytes = bytes;
        self
    }

    /// The most tools offered from this server (default [`DEFAULT_MCP_MAX_TOOLS`]); its listing
    /// is read until then, and the rest is left out with a WARN. Listing also stops after 100
    /// pages (`nextCursor`), so a server paging without end cannot grow the runtime's memory.
    pub fn max_tools(mut self, tools: usize) -> Self {
        self.bounds.max_tools = tools;
        self
    }

    /// The largest message read from a stdio server (default
    /// [`DEFAULT_MCP_MAX_MESSAGE_BYTES`]): a larger one is dropped as it arrives, and the call
    /// it answers fails at once with an error saying so (not at the call's timeout).
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.bounds.max_message_bytes = bytes;
        self
    }

    /// How long a server that failed to start stays stopped (default
    /// [`DEFAULT_MCP_START_BACKOFF`], doubled at each failed start in a row, at most 16 times
    /// it): meanwhile its calls fail at once with the start's error, and prompts offer none of
    /// its tools, rather than waiting for a start at every turn (H5).
    pub fn start_backoff(mut self, backoff: Duration) -> Self {
        self.bounds.start_backoff = backoff;
        self
    }

    /// `stdio` or `http`, for the inspector.
    pub(super) fn kind_name(&self) -> &'static str {
        match self.kind {
            TransportKind::Stdio { .. } => "stdio",
            TransportKind::Http { .. } => "http",
        }
    }
}

/// A started stdio server's process: the child (killed and reaped when dropped), its group
/// (killed when dropped) and the tail of its stderr.
pub(super) struct ChildProcess {
    _group: ProcessGroup,
    _child: tokio::process::Child,
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_reader: Option<tokio::task::JoinHandle<()>>,
}

impl ChildProcess {
    /// The tail of stderr once the server exited: what it wrote before its stderr closed
    /// (waited for a moment at most, since a server that failed its handshake is exiting).
    pub(super) async fn final_stderr_tail(&mut self) -> String {
        if let Some(reader) = self.stderr_reader.take() {
            let _ = tokio::time::timeout(std::time::Duration::from_millis(500), reader).await;
        }
        self.stderr_tail()
    }

    /// The last lines the server wrote to stderr, trimmed, for an error message.
    pub(super) fn stderr_tail(&self) -> String {
        let bytes = self.stderr.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        String::from_utf8_lossy(&bytes).trim().to_owned()
    }
}

/// What [`McpTransport::open`] gives: the rmcp transport, and the process behind it (stdio).
pub(super) enum Opened {
    Stdio(tokio::process::ChildStdout, tokio::process::ChildStdin, Box<ChildProcess>),
    Http(rmcp::transport::StreamableHttpClientTransport<reqwest_mcp::Client>),
}

impl McpTransport {
    /// Starts the process, or makes the HTTP client; the MCP handshake is the caller's.
    pub(super) fn open(&self) -> Result<Opened, String> {
        match &self.kind {
            TransportKind::Stdio { command, args, env, cwd } => {
                let mut process = crate::process_group::watched(command, args);
                process
                    .env_clear()
                    .envs(inherited_env())
                    .envs(env)
                    .stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .kill_on_drop(true);
                if let Some(cwd) = cwd {
                    process.current_dir(cwd);
                }
                let mut child = process
                    .spawn()
                    .map_err(|error| format!("could not start `{}`: {error}", command.to_string_lossy()))?;
                // Taken before the child can be reaped, while its id is still the group's id.
                let group = ProcessGroup::led_by(&child);
                let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                    return Err("the child's stdio could not be taken".to_owned());
                };
                let stderr = Arc::new(Mutex::new(Vec::new()));
                let mut stderr_reader = None;
                if let Some(mut pipe) = child.stderr.take() {
                    let tail = stderr.clone();
                    stderr_reader = Some(tokio::spawn(async move {
                        let mut buffer = [0u8; 1024];
                        while let Ok(read) = pipe.read(&mut buffer).await {
                            if read == 0 {
                                break;
                            }
                            let mut kept = tail.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                            kept.extend_from_slice(&buffer[..read]);
                            let excess = kept.len().saturating_sub(STDERR_TAIL_BYTES);
                            kept.drain(..excess);
                        }
                    }));
                }
                Ok(Opened::Stdio(
                    stdout,
                    stdin,
                    Box::new(ChildProcess { _group: group, _child: child, stderr, stderr_reader }),
                ))
            }
            TransportKind::Http { url, headers } => {
                use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
                let mut custom = std::collections::HashMap::new();
                for (name, value) in headers {
                    let name = reqwest_mcp::header::HeaderName::from_bytes(name.as_bytes())
                        .map_err(|error| format!("the header name `{name}` is not valid: {error}"))?;
                    let value = reqwest_mcp::header::HeaderValue::from_str(value)
                        .map_err(|error| format!("the value of header `{name}` is not valid: {error}"))?;
                    custom.insert(name, value);
                }
                let config = StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom);
                Ok(Opened::Http(rmcp::transport::StreamableHttpClientTransport::with_client(http_client()?, config)))
            }
        }
    }
}

/// [`MCP_INHERITED_ENV`] as the runtime has them, without a value that is a shell function
/// (`() {...`), which the SDKs skip as well.
fn inherited_env() -> Vec<(&'static str, OsString)> {
    MCP_INHERITED_ENV
        .iter()
        .filter_map(|key| std::env::var_os(key).map(|value| (*key, value)))
        .filter(|(_, value)| !value.as_encoded_bytes().starts_with(b"()"))
        .collect()
}

/// rustls on ring with the webpki roots, as the OpenAI client has it.
fn tls_config() -> Result<rustls::ClientConfig, String> {
    let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    Ok(rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|error| format!("TLS: {error}"))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

/// A blocking reqwest 0.13 client with [`tls_config`], made on a thread of its own (a blocking
/// client may not be made on an async runtime's thread): what the OTLP exporter needs when this
/// feature has taken reqwest's built-in crypto provider away.
#[cfg(feature = "otel")]
pub(crate) fn blocking_http_client(timeout: std::time::Duration) -> Result<reqwest_mcp::blocking::Client, String> {
    let tls = tls_config()?;
    std::thread::spawn(move || {
        reqwest_mcp::blocking::Client::builder().timeout(timeout).tls_backend_preconfigured(tls).build()
    })
    .join()
    .map_err(|_| "the thread making the HTTP client panicked".to_owned())?
    .map_err(|error| format!("the HTTP client could not be made: {error}"))
}

/// reqwest with [`tls_config`].
fn http_client() -> Result<reqwest_mcp::Client, String> {
    let tls = tls_config()?;
    reqwest_mcp::Client::builder()
        .tls_backend_preconfigured(tls)
        .build()
        .map_err(|error| format!("the HTTP client could not be made: {error}"))
}
