//! `ThreadState`: what every thread hook receives first.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

use crate::error::HookResult;
use crate::types::{ExecutionState, ExtraFields, HookMessage, MessageRecord, MessageUpdate};

/// Which messages [`ThreadState::get_messages`] returns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct MessageQuery {
    /// At most this many of the newest messages; `None` for all.
    pub limit: Option<usize>,
    /// Whether silent messages are included.
    pub include_silent: bool,
}

impl MessageQuery {
    /// Every message but the silent ones (the default): add [`with_limit`](Self::with_limit)
    /// or [`with_silent`](Self::with_silent).
    ///
    /// ```
    /// use hooks_runtime::types::MessageQuery;
    ///
    /// const LAST_TEN: MessageQuery = MessageQuery::new().with_limit(10).with_silent(true);
    /// assert_eq!(LAST_TEN.limit, Some(10));
    /// assert!(LAST_TEN.include_silent);
    /// ```
    pub const fn new() -> Self {
        MessageQuery { limit: None, include_silent: false }
    }

    /// At most `limit` of the newest messages.
    #[must_use]
    pub const fn with_limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Whether silent messages are included.
    #[must_use]
    pub const fn with_silent(mut self, include_silent: bool) -> Self {
        self.include_silent = include_silent;
        self
    }

    /// The messages of `history` (oldest first) that the query selects, oldest first.
    ///
    /// ```
    /// use hooks_runtime::types::{MessageQuery, MessageRecord, Role};
    ///
    /// let history: Vec<_> = ["a", "b", "c"].map(|text| MessageRecord::new(Role::User, text).into_message()).into();
    /// let last_two = MessageQuery::new().with_limit(2).with_silent(true).select(history);
    /// assert_eq!(last_two.iter().map(|m| m.content.as_deref().unwrap()).collect::<Vec<_>>(), ["b", "c"]);
    /// ```
    pub fn select(self, history: impl IntoIterator<Item = HookMessage>) -> Vec<HookMessage> {
        let eligible: Vec<HookMessage> =
            history.into_iter().filter(|message| self.include_silent || !message.is_silent()).collect();
        let skip = self.limit.map_or(0, |limit| eligible.len().saturating_sub(limit));
        eligible.into_iter().skip(skip).collect()
    }
}

/// Not public API. The supertrait that seals [`ThreadServices`], reached as
/// `__private::Sealed`: the runtime's thread services implement it, no user type can.
pub trait Sealed {}

/// The operations a thread offers its hooks. The runtime implements it, and
/// [`DetachedThread`] for unit tests; hooks reach it through [`ThreadState`]'s methods.
///
/// The trait is sealed: only this project's crates implement it, so that an operation can be
/// added to it in a minor release.
#[async_trait::async_trait]
pub trait ThreadServices: Sealed + Send + Sync + 'static {
    /// The thread's persisted messages, oldest first.
    async fn get_messages(&self, state: &ThreadState, query: MessageQuery) -> HookResult<Vec<HookMessage>>;
    /// Persists a message through `before_create_message` and `after_create_message`.
    async fn inject_message(&self, state: &ThreadState, message: MessageRecord) -> HookResult<HookMessage>;
    /// Updates a message through `before_update_message` and `after_update_message`.
    async fn update_message(
        &self,
        state: &ThreadState,
        message_id: &str,
        update: MessageUpdate,
    ) -> HookResult<HookMessage>;
    /// Queues a tool call to run on the thread.
    fn queue_tool(&self, state: &ThreadState, tool: &str, arguments: Value);
    /// Sends an event to the thread's connected clients.
    fn emit(&self, state: &ThreadState, event: &str, data: Value);
    /// A thread value by key.
    async fn get_value(&self, state: &ThreadState, key: &str) -> Option<Value>;
    /// Sets a thread value, persisted with the thread before it returns (M11).
    async fn set_value(&self, state: &ThreadState, key: &str, value: Value) -> HookResult<()>;
}

/// A thread as its hooks see it: identity, arguments, execution state, per-execution context and
/// the thread's operations.
///
/// In a unit test, [`ThreadState::detached`] gives a state whose operations work in memory, so a
/// hook can be called directly:
///
/// ```
/// use hooks_runtime::types::{HookMessage, ThreadState};
///
/// fn limit(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
///     let skip = messages.len().saturating_sub(20);
///     messages.into_iter().skip(skip).collect()
/// }
///
/// let state = ThreadState::detached("thread_1", "support_agent");
/// assert!(limit(&state, Vec::new()).is_empty());
/// ```
pub struct ThreadState {
    /// Unique thread identifier.
    pub thread_id: String,
    /// The agent that owns the thread.
    pub agent_id: String,
    /// The associated user.
    pub user_id: Option<String>,
    /// Creation time, milliseconds since the Unix epoch.
    pub created_at: i64,
    /// Invocation or subagent-creation arguments.
    pub arguments: ExtraFields,
    /// Present during an active execution, `None` at rest.
    pub execution: Option<ExecutionState>,
    context: Mutex<ExtraFields>,
    services: Arc<dyn ThreadServices>,
}

impl ThreadState {
    /// A state for thread `thread_id` of agent `agent_id`, backed by `services`.
    pub fn new(thread_id: impl Into<String>, agent_id: impl Into<String>, services: Arc<dyn ThreadServices>) -> Self {
        ThreadState {
            thread_id: thread_id.into(),
            agent_id: agent_id.into(),
            user_id: None,
            created_at: 0,
            arguments: ExtraFields::new(),
            execution: None,
            context: Mutex::new(ExtraFields::new()),
            services,
        }
    }

    /// A state with no runtime behind it, for calling hooks in tests: injected messages are kept
    /// in memory (no hooks run on them), values live in a map, events and queued tools are
    /// recorded and can be read back with [`DetachedThread`].
    pub fn detached(thread_id: impl Into<String>, agent_id: impl Into<String>) -> Self {
        Self::new(thread_id, agent_id, Arc::new(DetachedThread::default()))
    }

    /// [`ThreadState::detached`], and the in-memory services behind it, to read back what a hook
    /// injected, queued, emitted or stored as a value.
    ///
    /// ```
    /// use hooks_runtime::types::{MessageRecord, Role, ThreadState};
    ///
    /// # tokio_like_block_on(async {
    /// let (state, thread) = ThreadState::detached_with_services("thread_1", "support_agent");
    /// state.inject_message(MessageRecord::new(Role::User, "hello")).await.unwrap();
    /// state.set_value("seen", true.into()).await.unwrap();
    /// assert_eq!(thread.messages().len(), 1);
    /// assert_eq!(thread.values().get("seen"), Some(&true.into()));
    /// # });
    /// # fn tokio_like_block_on<F: std::future::Future>(future: F) -> F::Output {
    /// #     use std::task::{Context, Poll, Waker};
    /// #     let mut future = std::pin::pin!(future);
    /// #     let mut cx = Context::from_waker(Waker::noop());
    /// #     loop { if let Poll::Ready(value) = future.as_mut().poll(&mut cx) { return value; } }
    /// # }
    /// ```
    pub fn detached_with_services(
        thread_id: impl Into<String>,
        agent_id: impl Into<String>,
    ) -> (Self, Arc<DetachedThread>) {
        let services = Arc::new(DetachedThread::default());
        (Self::new(thread_id, agent_id, services.clone()), services)
    }

    /// The services behind the state; with [`ThreadState::detached`], a [`DetachedThread`].
    pub fn services(&self) -> &Arc<dyn ThreadServices> {
        &self.services
    }

    /// The thread's persisted messages, oldest first.
    pub async fn get_messages(&self, query: MessageQuery) -> HookResult<Vec<HookMessage>> {
        self.services.get_messages(self, query).await
    }

    /// Persists a message; `before_create_message` and `after_create_message` apply. An error of
    /// a `before_create_message` hook is returned and nothing is stored.
    pub async fn inject_message(&self, message: MessageRecord) -> HookResult<HookMessage> {
        self.services.inject_message(self, message).await
    }

    /// Updates a message; `before_update_message` and `after_update_message` apply.
    pub async fn update_message(&self, message_id: &str, update: MessageUpdate) -> HookResult<HookMessage> {
        self.services.update_message(self, message_id, update).await
    }

    /// Queues a tool call on the thread.
    pub fn queue_tool(&self, tool: &str, arguments: Value) {
        self.services.queue_tool(self, tool, arguments);
    }

    /// Sends an event to the thread's connected clients.
    pub fn emit(&self, event: &str, data: Value) {
        self.services.emit(self, event, data);
    }

    /// A thread value by key (see [`ThreadState::set_value`]).
    pub async fn get_value(&self, key: &str) -> Option<Value> {
        self.services.get_value(self, key).await
    }

    /// Sets a thread value. Thread values persist with the thread in every store, written in
    /// the same transaction as the change that sets them (M11): a value set in
    /// `after_thread_created` is there when the thread is reopened later, in this process or
    /// another. The error says why the store refused the write; the value is then not set.
    /// For values that live only while one execution runs, use
    /// [`ThreadState::set_context_value`].
    pub async fn set_value(&self, key: &str, value: Value) -> HookResult<()> {
        self.services.set_value(self, key, value).await
    }

    /// A value of the current execution's context storage.
    pub fn context_value(&self, key: &str) -> Option<Value> {
        self.context.lock().unwrap_or_else(PoisonError::into_inner).get(key).cloned()
    }

    /// Sets a value in the current execution's context storage.
    pub fn set_context_value(&self, key: impl Into<String>, value: Value) {
        self.context.lock().unwrap_or_else(PoisonError::into_inner).insert(key.into(), value);
    }

    /// Empties the context storage; the runtime calls it when an execution ends.
    pub fn clear_context(&self) {
        self.context.lock().unwrap_or_else(PoisonError::into_inner).clear();
    }
}

impl fmt::Debug for ThreadState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadState")
            .field("thread_id", &self.thread_id)
            .field("agent_id", &self.agent_id)
            .field("user_id", &self.user_id)
            .field("execution", &self.execution)
            .finish_non_exhaustive()
    }
}

/// The in-memory services of [`ThreadState::detached`].
#[derive(Debug, Default)]
pub struct DetachedThread {
    inner: Mutex<DetachedInner>,
}

#[derive(Debug, Default)]
struct DetachedInner {
    messages: Vec<HookMessage>,
    values: HashMap<String, Value>,
    queued_tools: Vec<(String, Value)>,
    events: Vec<(String, Value)>,
    next_id: u64,
}

impl DetachedThread {
    fn lock(&self) -> std::sync::MutexGuard<'_, DetachedInner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The messages injected so far.
    pub fn messages(&self) -> Vec<HookMessage> {
        self.lock().messages.clone()
    }

    /// The tool calls queued so far.
    pub fn queued_tools(&self) -> Vec<(String, Value)> {
        self.lock().queued_tools.clone()
    }

    /// The events emitted so far.
    pub fn events(&self) -> Vec<(String, Value)> {
        self.lock().events.clone()
    }

    /// The thread values set so far.
    pub fn values(&self) -> HashMap<String, Value> {
        self.lock().values.clone()
    }
}

impl Sealed for DetachedThread {}

#[async_trait::async_trait]
impl ThreadServices for DetachedThread {
    async fn get_messages(&self, _state: &ThreadState, query: MessageQuery) -> HookResult<Vec<HookMessage>> {
        Ok(query.select(self.lock().messages.iter().cloned()))
    }

    async fn inject_message(&self, _state: &ThreadState, mut message: MessageRecord) -> HookResult<HookMessage> {
        let mut inner = self.lock();
        if message.id.is_empty() {
            inner.next_id += 1;
            message.id = format!("detached_{}", inner.next_id);
        }
        let stored = message.into_message();
        inner.messages.push(stored.clone());
        Ok(stored)
    }

    async fn update_message(
        &self,
        _state: &ThreadState,
        message_id: &str,
        update: MessageUpdate,
    ) -> HookResult<HookMessage> {
        let mut inner = self.lock();
        let message = inner
            .messages
            .iter_mut()
            .find(|m| m.id == message_id)
            .ok_or_else(|| crate::error::HookError::new(format!("no message with id `{message_id}`")))?;
        update.apply_to(message);
        Ok(message.clone())
    }

    fn queue_tool(&self, _state: &ThreadState, tool: &str, arguments: Value) {
        self.lock().queued_tools.push((tool.to_owned(), arguments));
    }

    fn emit(&self, _state: &ThreadState, event: &str, data: Value) {
        self.lock().events.push((event.to_owned(), data));
    }

    async fn get_value(&self, _state: &ThreadState, key: &str) -> Option<Value> {
        self.lock().values.get(key).cloned()
    }

    async fn set_value(&self, _state: &ThreadState, key: &str, value: Value) -> HookResult<()> {
        self.lock().values.insert(key.to_owned(), value);
        Ok(())
    }
}
