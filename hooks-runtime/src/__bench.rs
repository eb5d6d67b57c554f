//! Not public API. Entry points for the benchmarks in `hooks-runtime/benches`; they may change or
//! disappear in any release. Compiled only with the `__bench` feature, which the package's
//! self dev-dependency turns on for its benches.
//!
//! The functions at the top level run a chain through the runtime's real dispatch functions
//! (the ones the thread pipelines call), with no optional relationship enabled and the runtime's
//! default timeout. The context assembly uses the pipeline's own helpers
//! (`thread::context::{interpolate, to_provider_messages}`).

#![allow(missing_docs)]

use std::future::Future;
use std::time::Duration;

use hooks_core::{
    EnabledRelationships, HookError, HookMessage, HookToolCall, HookToolResult, LlmMessage, MessageRecord, PromptDef,
    ResolvedHook, ThreadState, ToolCallRecord,
};

use crate::dispatch::{self, Dispatch, FailureRule};
use crate::thread::context::{interpolate, to_provider_messages};

/// The timeout the benchmarks dispatch with: the runtime's default.
pub const TIMEOUT: Duration = crate::DEFAULT_HOOK_TIMEOUT;

fn dispatch(chain: &[ResolvedHook]) -> Dispatch<'_> {
    Dispatch { chain, enabled: EnabledRelationships::NONE, default_timeout: TIMEOUT }
}

/// `filter_messages` as the runtime runs it (R3-R4, E1, E7): the chain runs on one `&mut` value;
/// an in-place hook gets it as it is, and before each by-value hook a snapshot is taken into one
/// buffer per chain (a `clone()` for the first, `clone_from` after), restored if that hook fails.
pub fn filter_messages<'a>(
    chain: &'a [ResolvedHook],
    state: &'a ThreadState,
    messages: Vec<HookMessage>,
) -> impl Future<Output = Vec<HookMessage>> + Send + 'a {
    dispatch::filter_messages(&dispatch(chain), state, messages)
}

/// `prefilter_llm_history` as the runtime runs it (R5, R7).
pub fn prefilter_llm_history<'a>(
    chain: &'a [ResolvedHook],
    state: &'a ThreadState,
    messages: Vec<LlmMessage>,
) -> impl Future<Output = Result<Vec<LlmMessage>, HookError>> + Send + 'a {
    dispatch::prefilter_llm_history(&dispatch(chain), state, messages)
}

/// `after_system_message` as the runtime runs it (R1).
pub async fn after_system_message(chain: &[ResolvedHook], state: &ThreadState, system: String) -> String {
    dispatch::after_system_message(&dispatch(chain), state, system).await
}

/// The failure rule of a `before_create_message` write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteRule {
    /// M2: the first failure prevents the write; no snapshot is taken.
    Prevent,
    /// M9: the write goes on with the last good value; snapshots are taken as for `filter_messages`.
    KeepLastGood,
}

/// `before_create_message` as the runtime runs it under `rule`.
pub async fn before_create_message(
    chain: &[ResolvedHook],
    state: &ThreadState,
    record: MessageRecord,
    rule: WriteRule,
) -> Result<MessageRecord, HookError> {
    let rule = match rule {
        WriteRule::Prevent => FailureRule::Prevent,
        WriteRule::KeepLastGood => FailureRule::KeepLastGood,
    };
    dispatch::before_create_message(&dispatch(chain), state, record, rule).await
}

/// `after_create_message` as the runtime runs it (M3).
pub async fn after_create_message(chain: &[ResolvedHook], state: &ThreadState, record: &MessageRecord) {
    dispatch::after_create_message(&dispatch(chain), state, record).await
}

/// `tool_call_started` as the runtime runs it.
pub async fn tool_call_started(chain: &[ResolvedHook], state: &ThreadState, call: &HookToolCall) {
    dispatch::tool_call_started(&dispatch(chain), state, call, None).await
}

/// `tool_call_done` as the runtime runs it.
pub async fn tool_call_done(chain: &[ResolvedHook], state: &ThreadState, call: &HookToolCall, result: &HookToolResult) {
    dispatch::tool_call_done(&dispatch(chain), state, call, result).await
}

/// `after_tool_call_success|failure` as the runtime runs it.
pub async fn after_tool_call(
    chain: &[ResolvedHook],
    state: &ThreadState,
    call: &HookToolCall,
    result: HookToolResult,
) -> HookToolResult {
    dispatch::after_tool_call(&dispatch(chain), state, call, result).await
}

/// `before_store_tool_result` as the runtime runs it (T6).
pub async fn before_store_tool_result(
    chain: &[ResolvedHook],
    state: &ThreadState,
    call: &ToolCallRecord,
    result: HookToolResult,
) -> HookToolResult {
    dispatch::before_store_tool_result(&dispatch(chain), state, call, result).await
}

/// The three chains of a context assembly.
#[derive(Debug, Clone, Copy)]
pub struct AssemblyChains<'c> {
    pub after_system_message: &'c [ResolvedHook],
    pub filter_messages: &'c [ResolvedHook],
    pub prefilter_llm_history: &'c [ResolvedHook],
}

/// A context assembly as `thread::context::assemble` does it, on a snapshot the caller passes in
/// (the store read is left out): interpolation, `after_system_message`, `filter_messages`,
/// provider transformation, `prefilter_llm_history`, each through the real dispatch function.
pub async fn assemble(
    chains: AssemblyChains<'_>,
    state: &ThreadState,
    prompt: &PromptDef,
    snapshot: Vec<HookMessage>,
) -> Result<Vec<LlmMessage>, HookError> {
    let rendered = interpolate(prompt.prompt, state);
    let system = dispatch::after_system_message(&dispatch(chains.after_system_message), state, rendered).await;
    let filtered = dispatch::filter_messages(&dispatch(chains.filter_messages), state, snapshot).await;
    let provider = to_provider_messages(system, &filtered, prompt);
    dispatch::prefilter_llm_history(&dispatch(chains.prefilter_llm_history), state, provider).await
}

/// The same assembly with no hook machinery at all: the baseline of [`assemble`].
pub fn assemble_plain(state: &ThreadState, prompt: &PromptDef, snapshot: Vec<HookMessage>) -> Vec<LlmMessage> {
    let system = interpolate(prompt.prompt, state);
    to_provider_messages(system, &snapshot, prompt)
}
