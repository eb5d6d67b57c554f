//! One MCP server: its connection, started at the first need and again after it was lost (with
//! backoff), its tool list as the server last listed it (P5), and the calls of its tools (P3, P4).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError, RwLock, Weak};
use std::time::Duration;

use hooks_core::HookToolResult;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest, PaginatedRequestParams,
    ProgressNotificationParam, ProgressToken, RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, RunningService, ServiceError};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::handler::{Handler, Notified};
use super::lines::CappedLines;
use super::names::{provider_rejects, tool_name};
use super::tool::{CallTool, listed_tool, unlisted_tool};
use super::transport::{ChildProcess, McpTransport, Opened};
use crate::tool::{FnTool, Tool, ToolCallContext, ToolProgress};

/// The first wait before a server that failed (could not start, or was lost) is started again;
/// each failure in a row doubles it, up to [`MAX_BACKOFF`]. A call that succeeds resets it.
const FIRST_BACKOFF: Duration = Duration::from_millis(200);
const MAX_BACKOFF: Duration = Duration::from_secs(10);

/// A failed start's backoff doubles at each failed start in a row, up to this many times the
/// first ([`McpTransport::start_backoff`]).
const MAX_START_BACKOFF_FACTOR: u32 = 16;

/// The most `tools/list` pages read in one listing (H4): a server that pages without end
/// cannot grow memory or hold the start until its timeout.
const MAX_TOOL_PAGES: usize = 100;

/// Progress notifications kept for a token no call has subscribed to yet (a server may report
/// before the call's subscription, made right after the request is sent, is in place).
const EARLY_PROGRESS: usize = 32;

/// How many times a call yields after its answer for progress reports still on their way.
const PROGRESS_YIELDS: usize = 3;

/// Where an MCP server stands, as the inspector shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum McpServerState {
    /// Not started yet: it starts at the first prompt that offers its tools, or the first call.
    NotStarted,
    /// Starting: the process or HTTP session and the MCP handshake.
    Starting,
    /// Connected; its tools are listed.
    Ready,
    /// It could not start, or was lost (exited, closed the connection); the next call starts it
    /// again, after the backoff.
    Failed,
}

/// An MCP server as the inspector shows it ([`Runtime::mcp_servers`](crate::Runtime::mcp_servers)).
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct McpServerInfo {
    /// The name it was added with.
    pub name: String,
    /// `stdio` or `http`.
    pub transport: &'static str,
    /// Whether its tools are pinned (a trusted project's `.mcp.json` server; F6), and the tools
    /// of its last listing that were withheld because they changed since.
    pub pins: Option<super::pins::McpPinState>,
    /// Where it stands.
    pub state: McpServerState,
    /// Why it failed last, while it is failed.
    pub error: Option<String>,
    /// How many times it was started (connected).
    pub starts: u32,
    /// Its tools, as it last listed them (names as the model sees them).
    pub tools: Vec<McpToolInfo>,
}

/// One tool of an MCP server, as the inspector shows it.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct McpToolInfo {
    /// `mcp__<server>__<tool>`.
    pub name: String,
    /// The server's description.
    pub description: String,
}

/// A live connection: the rmcp client and, over stdio, the server's process.
struct Connection {
    peer: Peer<RoleClient>,
    /// Taken out by [`McpServer::close`], which waits for the client to end.
    service: Mutex<Option<RunningService<RoleClient, Handler>>>,
    process: Option<Box<ChildProcess>>,
}

impl Connection {
    fn new(service: RunningService<RoleClient, Handler>, process: Option<Box<ChildProcess>>) -> Self {
        Connection { peer: service.peer().clone(), service: Mutex::new(Some(service)), process }
    }

    fn alive(&self) -> bool {
        !self.peer.is_transport_closed()
    }
}

struct Status {
    connection: Option<Arc<Connection>>,
    state: McpServerState,
    error: Option<String>,
    /// Failures in a row, for the backoff.
    failures: u32,
    retry_at: Option<Instant>,
    /// H5: the last failure was a start, and calls fail at once until `retry_at`.
    start_failed: bool,
    starts: u32,
}

/// The tools of the server's last listing, by the server's name of each and in its order.
#[derive(Default)]
struct ToolList {
    order: Vec<Arc<FnTool>>,
    by_name: HashMap<String, Arc<FnTool>>,
}

/// One MCP server of the runtime. Tools and the client's handler hold it weakly: it is dropped
/// with the runtime, and its process with it.
pub(crate) struct McpServer {
    pub(super) name: String,
    transport: McpTransport,
    status: Mutex<Status>,
    tools: RwLock<Option<Arc<ToolList>>>,
    /// One start at a time.
    starting: tokio::sync::Mutex<()>,
    progress: Mutex<ProgressRoutes>,
    /// F6: the pins its listings are checked against (a project's `.mcp.json` server).
    pub(super) pins: std::sync::OnceLock<Arc<super::pins::ToolPins>>,
    this: Weak<McpServer>,
}

#[derive(Default)]
struct ProgressRoutes {
    routes: HashMap<ProgressToken, mpsc::UnboundedSender<ToolProgress>>,
    early: VecDeque<ProgressNotificationParam>,
}

impl McpServer {
    pub(super) fn new(name: String, transport: McpTransport) -> Arc<Self> {
        Arc::new_cyclic(|this| McpServer {
            name,
            transport,
            status: Mutex::new(Status {
                connection: None,
                state: McpServerState::NotStarted,
                error: None,
                failures: 0,
                retry_at: None,
                start_failed: false,
                starts: 0,
            }),
            tools: RwLock::new(None),
            starting: tokio::sync::Mutex::new(()),
            progress: Mutex::new(ProgressRoutes::default()),
            pins: std::sync::OnceLock::new(),
            this: this.clone(),
        })
    }

    /// What its tools call, held weakly.
    fn caller(&self) -> Weak<dyn CallTool> {
        self.this.clone()
    }

    fn status(&self) -> std::sync::MutexGuard<'_, Status> {
        self.status.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The tool the server calls `tool`: from its last listing, or, before it has listed any,
    /// a tool by that name alone (a call approved before a restart of the runtime, say).
    pub(super) fn tool(&self, tool: &str) -> Option<Arc<FnTool>> {
        match &*self.tools.read().unwrap_or_else(PoisonError::into_inner) {
            Some(list) => list.by_name.get(tool).cloned(),
            None => Some(Arc::new(unlisted_tool(self.caller(), &self.name, tool))),
        }
    }

    /// The tools to offer a model: the last listing, or, when there is none yet, the server
    /// started (within its timeout) and listed. A server that cannot start offers none.
    pub(super) async fn offered_tools(&self) -> Vec<Arc<FnTool>> {
        if let Some(list) = self.listing() {
            return list.order.clone();
        }
        let deadline = Instant::now() + self.transport.start_timeout;
        if let Err(error) = self.connection(deadline).await {
            tracing::warn!(target: "hooks_runtime::mcp", server = %self.name, "the MCP server's tools are not offered: {error}");
        }
        self.listing().map(|list| list.order.clone()).unwrap_or_default()
    }

    fn listing(&self) -> Option<Arc<ToolList>> {
        self.tools.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    pub(super) fn info(&self) -> McpServerInfo {
        let status = self.status();
        let tools = self
            .listing()
            .map(|list| {
                list.order
                    .iter()
                    .map(|tool| McpToolInfo {
                        name: tool.name().to_owned(),
                        description: tool.description().to_owned(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        McpServerInfo {
            name: self.name.clone(),
            transport: self.transport.kind_name(),
            pins: self.pins.get().map(|pins| pins.state()),
            state: status.state,
            error: status.error.clone(),
            starts: status.starts,
            tools,
        }
    }

    /// The live connection, started (after the backoff of a failed one) if there is none.
    async fn connection(&self, deadline: Instant) -> Result<Arc<Connection>, String> {
        if let Some(connection) = self.live() {
            return Ok(connection);
        }
        let _one_start = tokio::time::timeout_at(deadline, self.starting.lock())
            .await
            .map_err(|_| "it was still starting for another caller when its start timeout ran out".to_owned())?;
        if let Some(connection) = self.live() {
            return Ok(connection);
        }
        let (retry_at, start_failed) = {
            let status = self.status();
            (status.retry_at, status.start_failed)
        };
        if let Some(retry_at) = retry_at
            && retry_at > Instant::now()
        {
            // H5: a server that could not start is not tried at every turn.
            if start_failed {
                let error = self.status().error.clone().unwrap_or_default();
                let left = retry_at - Instant::now();
                return Err(format!(
                    "{error}; it is not started again for {:.1}s (`McpTransport::start_backoff`)",
                    left.as_secs_f64()
                ));
            }
            if retry_at > deadline {
                let error = self.status().error.clone().unwrap_or_default();
                return Err(format!("it failed ({error}) and is not started again before its start timeout"));
            }
            tokio::time::sleep_until(retry_at).await;
        }
        self.status().state = McpServerState::Starting;
        let started = match tokio::time::timeout_at(deadline, self.start()).await {
            Ok(started) => started,
            Err(_) => Err(format!("it did not start within {:?}", self.transport.start_timeout)),
        };
        match started {
            Ok((connection, tools)) => {
                let connection = Arc::new(connection);
                self.set_tools(tools);
                let mut status = self.status();
                status.connection = Some(connection.clone());
                status.state = McpServerState::Ready;
                status.error = None;
                status.retry_at = None;
                status.start_failed = false;
                status.starts += 1;
                tracing::info!(target: "hooks_runtime::mcp", server = %self.name, "MCP server started ({})", self.transport.kind_name());
                Ok(connection)
            }
            Err(error) => {
                let error = format!("it failed to start: {error}");
                self.start_failed(error.clone());
                Err(error)
            }
        }
    }

    fn live(&self) -> Option<Arc<Connection>> {
        let status = self.status();
        status.connection.as_ref().filter(|connection| connection.alive()).cloned()
    }

    /// The process or HTTP session, the handshake, and the first tool listing.
    async fn start(&self) -> Result<(Connection, Vec<rmcp::model::Tool>), String> {
        let this: Weak<dyn Notified> = self.this.clone();
        let handler = Handler::new(this);
        let (service, process) = match self.transport.open()? {
            Opened::Stdio(stdout, stdin, mut process) => {
                let stdout = CappedLines::new(stdout, self.transport.bounds.max_message_bytes);
                match rmcp::serve_client(handler, (stdout, stdin)).await {
                    Ok(service) => (service, Some(process)),
                    Err(error) => {
                        let stderr = process.final_stderr_tail().await;
                        return Err(if stderr.is_empty() {
                            format!("the MCP handshake failed: {error}")
                        } else {
                            format!("the MCP handshake failed: {error}; its stderr: {stderr}")
                        });
                    }
                }
            }
            Opened::Http(transport) => {
                let service = rmcp::serve_client(handler, transport)
                    .await
                    .map_err(|error| format!("the MCP handshake failed: {error}"))?;
                (service, None)
            }
        };
        let tools = self.list_tools(service.peer()).await?;
        Ok((Connection::new(service, process), tools))
    }

    /// The server's tools, page after page (H4): at most [`McpTransport::max_tools`] of them
    /// and [`MAX_TOOL_PAGES`] pages, the rest left out with a WARN.
    async fn list_tools(&self, peer: &Peer<RoleClient>) -> Result<Vec<rmcp::model::Tool>, String> {
        let max = self.transport.bounds.max_tools;
        let mut tools = Vec::new();
        let mut cursor = None;
        for _ in 0..MAX_TOOL_PAGES {
            let params = PaginatedRequestParams::default().with_cursor(cursor);
            let page =
                peer.list_tools(Some(params)).await.map_err(|error| format!("it did not list its tools: {error}"))?;
            let listed = page.tools.len();
            tools.extend(page.tools.into_iter().take(max - tools.len()));
            if tools.len() == max && (listed > tools.len() || page.next_cursor.is_some()) {
                tracing::warn!(target: "hooks_runtime::mcp", server = %self.name, "the MCP server lists more than {max} tools: the first {max} are offered (`McpTransport::max_tools`)");
                return Ok(tools);
            }
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(tools),
            }
        }
        tracing::warn!(target: "hooks_runtime::mcp", server = %self.name, "the MCP server's tool list goes on past {MAX_TOOL_PAGES} pages: the tools of those pages are offered");
        Ok(tools)
    }

    /// Replaces the tool list (a start, or `notifications/tools/list_changed`).
    pub(super) fn set_tools(&self, tools: Vec<rmcp::model::Tool>) {
        // F6: a pinned server's changed or new tools are withheld.
        let tools = match self.pins.get() {
            Some(pins) => pins.admit(&self.name, tools),
            None => tools,
        };
        let mut list = ToolList::default();
        for listed in tools {
            let name = tool_name(&self.name, &listed.name);
            if let Some(why) = provider_rejects(&name).or(listed.name.is_empty().then_some("its tool name is empty")) {
                let shown: String = name.chars().take(80).collect();
                tracing::warn!(target: "hooks_runtime::mcp", server = %self.name, "the MCP tool {shown:?} ({} bytes) is not offered: {why}, which the model providers reject", name.len());
                continue;
            }
            let tool = Arc::new(listed_tool(self.caller(), &self.name, &listed));
            list.by_name.insert(listed.name.to_string(), tool.clone());
            list.order.push(tool);
        }
        tracing::info!(target: "hooks_runtime::mcp", server = %self.name, tools = list.order.len(), "MCP server's tools listed");
        *self.tools.write().unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(list));
    }

    /// Lists the tools again on the live connection (P5).
    async fn relist(&self, peer: Peer<RoleClient>) {
        match self.list_tools(&peer).await {
            Ok(tools) => self.set_tools(tools),
            Err(error) => {
                tracing::warn!(target: "hooks_runtime::mcp", server = %self.name, "the MCP server's changed tool list could not be read: {error}")
            }
        }
    }

    /// Closes the connection, if there is one, and waits until rmcp's client and its transport
    /// have ended, within the tokio runtime: a client only dropped closes its transport on a
    /// task of its own, which the end of the tokio runtime can cut short (rmcp then logs
    /// `fail to close sink`). The next call starts the server again.
    pub(super) async fn close(&self) {
        let connection = {
            let mut status = self.status();
            if status.state == McpServerState::Ready {
                status.state = McpServerState::NotStarted;
            }
            status.connection.take()
        };
        let Some(connection) = connection else { return };
        let service = connection.service.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(service) = service
            && let Err(error) = service.cancel().await
        {
            tracing::warn!(target: "hooks_runtime::mcp", server = %self.name, "the MCP client did not end cleanly: {error}");
        }
        tracing::debug!(target: "hooks_runtime::mcp", server = %self.name, "MCP client closed");
    }

    fn failed(&self, error: String) {
        tracing::warn!(target: "hooks_runtime::mcp", server = %self.name, "MCP server failed: {error}");
        let mut status = self.status();
        status.connection = None;
        status.state = McpServerState::Failed;
        status.error = Some(error);
        status.failures = status.failures.saturating_add(1);
        status.start_failed = false;
        let backoff = FIRST_BACKOFF.saturating_mul(1 << (status.failures - 1).min(6)).min(MAX_BACKOFF);
        status.retry_at = Some(Instant::now() + backoff);
    }

    /// H5: the start failed; calls fail at once until the start backoff has elapsed.
    fn start_failed(&self, error: String) {
        self.failed(error);
        let mut status = self.status();
        let first = self.transport.bounds.start_backoff;
        let factor = 1u32 << (status.failures - 1).min(MAX_START_BACKOFF_FACTOR.trailing_zeros());
        status.retry_at = Some(Instant::now() + first.saturating_mul(factor));
        status.start_failed = true;
    }

    /// The connection ended under a call: dropped (its process killed), and the next call
    /// starts the server again. Returns what the server's stderr last said, if anything.
    fn lost(&self, connection: &Arc<Connection>) -> String {
        let stderr = connection.process.as_ref().map(|process| process.stderr_tail()).unwrap_or_default();
        let current = self.status().connection.as_ref().is_some_and(|current| Arc::ptr_eq(current, connection));
        if current {
            let error = if stderr.is_empty() {
                "the connection was lost".to_owned()
            } else {
                format!("the connection was lost; its stderr: {stderr}")
            };
            self.failed(error);
        }
        stderr
    }

    /// Calls the server's tool `tool` (P2-P4); every failure is an error result.
    async fn call(&self, tool: &str, arguments: Value, context: ToolCallContext<'_>) -> HookToolResult {
        let name = &self.name;
        let arguments = match arguments {
            Value::Object(arguments) => Some(arguments),
            Value::Null => None,
            _ => return HookToolResult::error("the arguments of an MCP tool call must be a JSON object"),
        };
        let connection = match self.connection(Instant::now() + self.transport.start_timeout).await {
            Ok(connection) => connection,
            Err(error) => return HookToolResult::error(format!("the MCP server `{name}` is not available: {error}")),
        };
        let deadline = Instant::now() + self.transport.timeout;
        let call = async {
            let peer = connection.peer.clone();
            let mut params = CallToolRequestParams::new(tool.to_owned());
            params.arguments = arguments;
            let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
            let handle = match peer.send_request_with_option(request, PeerRequestOptions::no_options()).await {
                Ok(handle) => handle,
                Err(error) => return self.ended(&connection, tool, error),
            };
            // P4: dropped before the answer (abort, the timeout), it tells the server.
            let mut cancel = CancelOnDrop { peer: peer.clone(), id: Some(handle.id.clone()) };
            let mut progress = self.subscribe(handle.progress_token.clone());
            let answer = handle.await_response();
            tokio::pin!(answer);
            let answer = loop {
                tokio::select! {
                    biased;
                    answer = &mut answer => break answer,
                    Some(report) = progress.receiver.recv() => context.report_progress(report),
                }
            };
            cancel.id = None;
            // rmcp hands each notification to the handler on a task of its own, so a report
            // the server sent just before its answer may still be on its way: a few yields let
            // it through (no wait on a timer; a report later than that is dropped).
            for _ in 0..PROGRESS_YIELDS {
                tokio::task::yield_now().await;
                while let Ok(report) = progress.receiver.try_recv() {
                    context.report_progress(report);
                }
            }
            match answer {
                Ok(ServerResult::CallToolResult(result)) => {
                    self.status().failures = 0;
                    let result = serde_json::to_value(&result).unwrap_or(Value::Null);
                    let mut result = super::result::tool_result(&tool_name(name, tool), &result);
                    super::result::cap(&mut result, self.transport.bounds.max_result_bytes);
                    result
                }
                Ok(_) => HookToolResult::error(format!(
                    "the MCP server `{name}` answered the call of `{tool}` with something other than a tool result"
                )),
                Err(error) => self.ended(&connection, tool, error),
            }
        };
        match tokio::time::timeout_at(deadline, call).await {
            Ok(result) => result,
            Err(_) => HookToolResult::error(format!(
                "the MCP tool `{tool}` of server `{name}` did not answer within {:?}; the call was cancelled",
                self.transport.timeout
            )),
        }
    }

    /// The error result of a call that failed at the protocol or transport level.
    fn ended(&self, connection: &Arc<Connection>, tool: &str, error: ServiceError) -> HookToolResult {
        let name = &self.name;
        match error {
            ServiceError::McpError(error) => HookToolResult::error(format!(
                "the MCP server `{name}` answered the call of `{tool}` with an error: {} (code {})",
                error.message, error.code.0
            )),
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                let stderr = self.lost(connection);
                let said = if stderr.is_empty() { String::new() } else { format!("; its stderr: {stderr}") };
                HookToolResult::error(format!(
                    "the MCP server `{name}` closed the connection during the call of `{tool}` (it exited or hung up){said}; it is started again on the next call"
                ))
            }
            other => HookToolResult::error(format!("the call of `{tool}` on the MCP server `{name}` failed: {other}")),
        }
    }

    fn subscribe(&self, token: ProgressToken) -> ProgressSubscription<'_> {
        let (sender, receiver) = mpsc::unbounded_channel();
        let mut routes = self.progress.lock().unwrap_or_else(PoisonError::into_inner);
        let early = std::mem::take(&mut routes.early);
        for notification in early {
            if notification.progress_token == token {
                let _ = sender.send(progress_of(notification));
            } else {
                routes.early.push_back(notification);
            }
        }
        routes.routes.insert(token.clone(), sender);
        ProgressSubscription { server: self, token, receiver }
    }

    /// A progress notification, to the call whose token it carries.
    fn route_progress(&self, notification: ProgressNotificationParam) {
        let mut routes = self.progress.lock().unwrap_or_else(PoisonError::into_inner);
        match routes.routes.get(&notification.progress_token) {
            Some(sender) => _ = sender.send(progress_of(notification)),
            None => {
                if routes.early.len() == EARLY_PROGRESS {
                    routes.early.pop_front();
                }
                routes.early.push_back(notification);
            }
        }
    }
}

#[async_trait::async_trait]
impl CallTool for McpServer {
    async fn call_tool(&self, tool: &str, arguments: Value, context: ToolCallContext<'_>) -> HookToolResult {
        self.call(tool, arguments, context).await
    }
}

impl Notified for McpServer {
    fn progress(&self, notification: ProgressNotificationParam) {
        self.route_progress(notification);
    }

    fn tools_changed(self: Arc<Self>, peer: Peer<RoleClient>) {
        // Listed on a task of its own: the connection's loop must go on to read the answer.
        tokio::spawn(async move { self.relist(peer).await });
    }
}

fn progress_of(notification: ProgressNotificationParam) -> ToolProgress {
    ToolProgress { progress: notification.progress, total: notification.total, message: notification.message }
}

/// A call's progress route, removed when the call ends.
struct ProgressSubscription<'a> {
    server: &'a McpServer,
    token: ProgressToken,
    receiver: mpsc::UnboundedReceiver<ToolProgress>,
}

impl Drop for ProgressSubscription<'_> {
    fn drop(&mut self) {
        self.server.progress.lock().unwrap_or_else(PoisonError::into_inner).routes.remove(&self.token);
    }
}

/// Sends `notifications/cancelled` for a request whose caller stopped waiting (P4).
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let peer = self.peer.clone();
        runtime.spawn(async move {
            let cancelled =
                CancelledNotificationParam::new(Some(id), Some("the tool call was aborted or timed out".to_owned()));
            let _ = peer.notify_cancelled(cancelled).await;
        });
    }
}
