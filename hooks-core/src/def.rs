//! A hook's static definition: its id, kind, typed adapter and where it was written.

use crate::error::HookResult;
use crate::future::HookFuture;
use crate::kind::HookKind;
use crate::state::ThreadState;
use crate::types::{
    HookExecutionContext, HookMessage, HookToolCall, HookToolResult, LlmMessage, MessageRecord, MessageUpdate,
    OnFailure, PackageSignature, ToolCallRecord, ToolDecision, UserState,
};

/// The typed adapter of a hook, one variant per kind. Each adapter calls the user's function
/// with the spec's arguments and answers a [`HookFuture`].
///
/// A kind that transforms a value takes it as `&mut T`, whichever form the user wrote: an
/// in-place hook gets the reference itself, and the adapter of a by-value hook moves the value
/// out, calls the hook and moves its answer back (see [`HookDef::moves_value`]). The chain
/// therefore runs on one value that is never copied or moved through its layers. Values a hook
/// only observes are borrowed.
#[derive(Clone, Copy)]
#[allow(clippy::type_complexity)]
pub enum HookHandler {
    /// `after_thread_created(state, ctx)`.
    AfterThreadCreated(for<'a> fn(&'a ThreadState, &'a HookExecutionContext) -> HookFuture<'a, HookResult<()>>),
    /// `after_subagent_created(state, child, ctx)`.
    AfterSubagentCreated(
        for<'a> fn(&'a ThreadState, &'a ThreadState, &'a HookExecutionContext) -> HookFuture<'a, HookResult<()>>,
    ),
    /// `after_system_message(state, system, ctx)`, the system message transformed in place.
    AfterSystemMessage(
        for<'a> fn(&'a ThreadState, &'a mut String, &'a HookExecutionContext) -> HookFuture<'a, HookResult<()>>,
    ),
    /// `filter_messages(state, messages, ctx)`, the messages transformed in place.
    FilterMessages(
        for<'a> fn(
            &'a ThreadState,
            &'a mut Vec<HookMessage>,
            &'a HookExecutionContext,
        ) -> HookFuture<'a, HookResult<()>>,
    ),
    /// `prefilter_llm_history(state, messages, ctx)`, the messages transformed in place.
    PrefilterLlmHistory(
        for<'a> fn(
            &'a ThreadState,
            &'a mut Vec<LlmMessage>,
            &'a HookExecutionContext,
        ) -> HookFuture<'a, HookResult<()>>,
    ),
    /// `before_create_message(state, record, ctx)`, the record transformed in place.
    BeforeCreateMessage(
        for<'a> fn(&'a ThreadState, &'a mut MessageRecord, &'a HookExecutionContext) -> HookFuture<'a, HookResult<()>>,
    ),
    /// `before_update_message(state, message_id, update, ctx)`, the update transformed in place.
    BeforeUpdateMessage(
        for<'a> fn(
            &'a ThreadState,
            &'a str,
            &'a mut MessageUpdate,
            &'a HookExecutionContext,
        ) -> HookFuture<'a, HookResult<()>>,
    ),
    /// `before_store_tool_result(state, call, result, ctx)`, the result transformed in place.
    BeforeStoreToolResult(
        for<'a> fn(
            &'a ThreadState,
            &'a ToolCallRecord,
            &'a mut HookToolResult,
            &'a HookExecutionContext,
        ) -> HookFuture<'a, HookResult<()>>,
    ),
    /// `after_create_message(state, record, ctx)`.
    AfterCreateMessage(
        for<'a> fn(&'a ThreadState, &'a MessageRecord, &'a HookExecutionContext) -> HookFuture<'a, HookResult<()>>,
    ),
    /// `after_update_message(state, message, ctx)`.
    AfterUpdateMessage(
        for<'a> fn(&'a ThreadState, &'a HookMessage, &'a HookExecutionContext) -> HookFuture<'a, HookResult<()>>,
    ),
    /// `after_tool_call_success(state, call, result, ctx)`, the result transformed in place.
    AfterToolCallSuccess(
        for<'a> fn(
            &'a ThreadState,
            &'a HookToolCall,
            &'a mut HookToolResult,
            &'a HookExecutionContext,
        ) -> HookFuture<'a, HookResult<()>>,
    ),
    /// `after_tool_call_failure(state, call, result, ctx)`, the result transformed in place.
    AfterToolCallFailure(
        for<'a> fn(
            &'a ThreadState,
            &'a HookToolCall,
            &'a mut HookToolResult,
            &'a HookExecutionContext,
        ) -> HookFuture<'a, HookResult<()>>,
    ),
    /// `tool_call_started(state, call, progress, ctx)`.
    ToolCallStarted(
        for<'a> fn(
            &'a ThreadState,
            &'a HookToolCall,
            Option<&'a str>,
            &'a HookExecutionContext,
        ) -> HookFuture<'a, HookResult<()>>,
    ),
    /// `before_tool_call(state, call, arguments, ctx)`: the arguments may be rewritten in place,
    /// and the answer decides whether the call runs.
    BeforeToolCall(
        for<'a> fn(
            &'a ThreadState,
            &'a HookToolCall,
            &'a mut serde_json::Value,
            &'a HookExecutionContext,
        ) -> HookFuture<'a, HookResult<ToolDecision>>,
    ),
    /// `tool_call_done(state, call, result, ctx)`.
    ToolCallDone(
        for<'a> fn(
            &'a ThreadState,
            &'a HookToolCall,
            &'a HookToolResult,
            &'a HookExecutionContext,
        ) -> HookFuture<'a, HookResult<()>>,
    ),
    /// `user_client_attached(user)`.
    UserClientAttached(for<'a> fn(&'a UserState) -> HookFuture<'a, HookResult<()>>),
    /// `user_client_detached(user)`.
    UserClientDetached(for<'a> fn(&'a UserState) -> HookFuture<'a, HookResult<()>>),
    /// `user_value_changed(user)`.
    UserValueChanged(for<'a> fn(&'a UserState) -> HookFuture<'a, HookResult<()>>),
}

impl HookHandler {
    /// The kind the adapter serves.
    pub const fn kind(&self) -> HookKind {
        match self {
            HookHandler::AfterThreadCreated(_) => HookKind::AfterThreadCreated,
            HookHandler::AfterSubagentCreated(_) => HookKind::AfterSubagentCreated,
            HookHandler::AfterSystemMessage(_) => HookKind::AfterSystemMessage,
            HookHandler::FilterMessages(_) => HookKind::FilterMessages,
            HookHandler::PrefilterLlmHistory(_) => HookKind::PrefilterLlmHistory,
            HookHandler::BeforeCreateMessage(_) => HookKind::BeforeCreateMessage,
            HookHandler::BeforeUpdateMessage(_) => HookKind::BeforeUpdateMessage,
            HookHandler::BeforeStoreToolResult(_) => HookKind::BeforeStoreToolResult,
            HookHandler::AfterCreateMessage(_) => HookKind::AfterCreateMessage,
            HookHandler::AfterUpdateMessage(_) => HookKind::AfterUpdateMessage,
            HookHandler::AfterToolCallSuccess(_) => HookKind::AfterToolCallSuccess,
            HookHandler::AfterToolCallFailure(_) => HookKind::AfterToolCallFailure,
            HookHandler::ToolCallStarted(_) => HookKind::ToolCallStarted,
            HookHandler::BeforeToolCall(_) => HookKind::BeforeToolCall,
            HookHandler::ToolCallDone(_) => HookKind::ToolCallDone,
            HookHandler::UserClientAttached(_) => HookKind::UserClientAttached,
            HookHandler::UserClientDetached(_) => HookKind::UserClientDetached,
            HookHandler::UserValueChanged(_) => HookKind::UserValueChanged,
        }
    }
}

impl std::fmt::Debug for HookHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HookHandler::{}(..)", self.kind().name())
    }
}

/// Where a hook was written: its package (crate), module, file and line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookLocation {
    /// The crate that defines the hook: the spec's package namespace.
    pub package: PackageSignature,
    /// `module_path!()` at the definition.
    pub module_path: &'static str,
    /// `file!()` at the definition.
    pub file: &'static str,
    /// `line!()` at the definition.
    pub line: u32,
    /// The Rust function that implements the hook.
    pub function: &'static str,
}

impl std::fmt::Display for HookLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}::{} ({}:{})", self.module_path, self.function, self.file, self.line)
    }
}

/// A hook's static definition, produced by `#[hook]` and reached through the [`Hook`] trait of
/// its companion item.
#[derive(Debug)]
pub struct HookDef {
    /// The hook's id (snake_case, unique).
    pub id: &'static str,
    /// The typed adapter; it also tells the kind.
    pub handler: HookHandler,
    /// Whether the function is `async fn`.
    pub is_async: bool,
    /// Whether the hook takes the value its chain transforms by value (`messages:
    /// Vec<HookMessage>`) rather than in place (`messages: &mut Vec<HookMessage>`). The adapter
    /// of such a hook moves the value out of the chain, so a hook that fails, times out or
    /// panics leaves nothing behind: dispatch keeps a snapshot of the value before each such
    /// hook and restores it (E7, all-or-nothing). An in-place hook needs no snapshot: it leaves
    /// the value as it left it. `false` for kinds that transform nothing.
    pub moves_value: bool,
    /// `blocking`: a sync hook that blocks its thread (file or network I/O, a lock). On a
    /// multi-threaded tokio runtime the runtime first hands the worker's other tasks to another
    /// thread (`tokio::task::block_in_place`), so the other threads keep making progress while it
    /// runs, and a run past its timeout counts as timed out. A plain sync hook runs in place and
    /// holds its worker: keep those short.
    pub blocking: bool,
    /// The per-hook timeout from `timeout_ms = N`, overriding the runtime's default.
    pub timeout_ms: Option<u64>,
    /// `on_failure = deny|allow`: what a `before_tool_call` hook that fails, times out or panics
    /// decides. Required for that kind, `None` for every other.
    pub on_failure: Option<OnFailure>,
    /// Where the hook was written.
    pub location: HookLocation,
}

impl HookDef {
    /// The hook's kind.
    pub const fn kind(&self) -> HookKind {
        self.handler.kind()
    }
}

/// Implemented by the companion item `#[hook]` emits beside the function, named by the hook's
/// id. `define_prompt!` and `define_agent!` reach a hook through it, by path.
///
/// ```
/// use hooks_runtime::prelude::*;
///
/// #[hook(filter_messages, id = "keep_last_two")]
/// fn keep_last_two(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
///     let skip = messages.len().saturating_sub(2);
///     messages.into_iter().skip(skip).collect()
/// }
///
/// let def = <keep_last_two as Hook>::DEF;
/// assert_eq!(def.id, "keep_last_two");
/// assert_eq!(def.kind(), HookKind::FilterMessages);
/// ```
pub trait Hook {
    /// The hook's definition.
    const DEF: &'static HookDef;
}

/// The `inventory` entry of one linked hook: `#[hook]` submits one per hook, and
/// [`Registry::linked`](crate::Registry::linked) collects them.
#[derive(Debug)]
pub struct RegisteredHook(pub &'static HookDef);

inventory::collect!(RegisteredHook);
