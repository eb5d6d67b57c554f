//! Not public API. Entry points for the benchmarks in `hooks-runtime/benches`; they may change or
//! disappear in any release.
//!
//! The functions at the top level run a chain through the runtime's real dispatch functions
//! (the ones the thread pipelines call), with no optional relationship enabled and the runtime's
//! default timeout. [`experimental`] holds bench-only copies of the moving-chain loop, used to
//! measure what the E1 safety copy costs and what design changes would save; the runtime never
//! calls them.

#![allow(missing_docs)]

use std::time::Duration;

use hooks_core::{
    EnabledRelationships, HookError, HookMessage, HookToolCall, HookToolResult, LlmMessage, MessageRecord, PromptDef,
    ResolvedHook, Role, ThreadState, ToolCallRecord,
};

use crate::dispatch::{self, Dispatch, FailureRule};

/// The timeout the benchmarks dispatch with: the runtime's default.
pub const TIMEOUT: Duration = crate::DEFAULT_HOOK_TIMEOUT;

fn dispatch(chain: &[ResolvedHook]) -> Dispatch<'_> {
    Dispatch { chain, enabled: EnabledRelationships::NONE, default_timeout: TIMEOUT }
}

/// `filter_messages` as the runtime runs it: a copy of the value is kept before each hook (E1).
pub async fn filter_messages(
    chain: &[ResolvedHook],
    state: &ThreadState,
    messages: Vec<HookMessage>,
) -> Vec<HookMessage> {
    dispatch::filter_messages(&dispatch(chain), state, messages).await
}

/// `prefilter_llm_history` as the runtime runs it (R5, R7).
pub async fn prefilter_llm_history(
    chain: &[ResolvedHook],
    state: &ThreadState,
    messages: Vec<LlmMessage>,
) -> Result<Vec<LlmMessage>, HookError> {
    dispatch::prefilter_llm_history(&dispatch(chain), state, messages).await
}

/// `after_system_message` as the runtime runs it (R1).
pub async fn after_system_message(chain: &[ResolvedHook], state: &ThreadState, system: String) -> String {
    dispatch::after_system_message(&dispatch(chain), state, system).await
}

/// The failure rule of a `before_create_message` write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteRule {
    /// M2: the first failure prevents the write; no copy is taken.
    Prevent,
    /// M9: the write goes on with the last good value; a copy is taken before each hook.
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

// The two helpers below are copies of the private ones in `thread/context.rs` (same code), so
// that both sides of the assembly benchmark do the same non-hook work.

fn interpolate(template: &str, state: &ThreadState) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find("}}") {
            Some(end) => {
                let name = after[..end].trim();
                match state.arguments.get(name) {
                    Some(serde_json::Value::String(text)) => out.push_str(text),
                    Some(value) => out.push_str(&value.to_string()),
                    None => out.push_str(&rest[start..start + 2 + end + 2]),
                }
                rest = &after[end + 2..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

fn to_provider_messages(system: String, history: &[HookMessage], prompt: &PromptDef) -> Vec<LlmMessage> {
    let last_user = history.iter().rposition(|message| message.role == Role::User).unwrap_or(0);
    let mut messages = Vec::with_capacity(history.len() + 1);
    messages.push(LlmMessage::new("system", system));
    for (index, message) in history.iter().enumerate() {
        if message.extra_str("status") == Some("failed") {
            continue;
        }
        let before_turn = index < last_user;
        if before_turn && !prompt.include_chat {
            continue;
        }
        let is_tool_exchange = message.role == Role::Tool || message.tool_calls.is_some();
        if before_turn && is_tool_exchange && !prompt.include_past_tools {
            continue;
        }
        messages.push(LlmMessage {
            role: message.role.as_str().to_owned(),
            content: message.content.clone(),
            tool_calls: message
                .tool_calls
                .as_ref()
                .map(|calls| serde_json::from_str(calls).unwrap_or_else(|_| serde_json::Value::String(calls.clone()))),
            tool_call_id: message.tool_call_id.clone(),
            name: message.name.clone(),
        });
    }
    messages
}

/// Bench-only copies of the `filter_messages` loop (`run_moving` and `invoke` in
/// `dispatch/`), with switches for the design alternatives the benchmarks compare. With
/// [`Backup::PerHook`] and `fast_path: false` they do what the runtime does; the benchmarks check
/// that they cost the same as the real functions.
pub mod experimental {
    use std::any::Any;
    use std::future::Future;
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::pin::Pin;
    use std::task::{Context, Poll};
    use std::time::{Duration, Instant};

    use hooks_core::{
        EnabledRelationships, HookFuture, HookHandler, HookMessage, HookResult, HookSource, ResolvedHook, ThreadState,
    };

    use super::TIMEOUT;
    use crate::dispatch::HookFailure;

    /// When the loop copies the value it moves, so that a failed hook can be undone (E1).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Backup {
        /// Before every hook: what the runtime does.
        PerHook,
        /// Once, before the first hook: a failure falls back to the chain's input.
        PerChain,
        /// Never: the dispatch overhead alone (a failure would lose the value).
        None,
    }

    /// `filter_messages` through the copied loop.
    pub async fn filter_messages(
        chain: &[ResolvedHook],
        state: &ThreadState,
        value: Vec<HookMessage>,
        backup: Backup,
        fast_path: bool,
    ) -> Vec<HookMessage> {
        filter_messages_with(chain, state, value, Options { backup, fast_path, sync_first: false }).await
    }

    /// The switches of [`filter_messages_with`].
    #[derive(Debug, Clone, Copy)]
    pub struct Options {
        /// When the value is copied.
        pub backup: Backup,
        /// Poll an async hook's future once before arming its timeout.
        pub fast_path: bool,
        /// Run a sync hook through a plain function, creating no `invoke` future: the chain
        /// builds (and moves) a future only for an async hook.
        pub sync_first: bool,
    }

    /// `filter_messages` through the copied loop, with every switch.
    pub async fn filter_messages_with(
        chain: &[ResolvedHook],
        state: &ThreadState,
        mut value: Vec<HookMessage>,
        options: Options,
    ) -> Vec<HookMessage> {
        let Options { backup, fast_path, sync_first } = options;
        let chain_backup = (backup == Backup::PerChain && !chain.is_empty()).then(|| value.clone());
        for entry in chain.iter().filter(|entry| entry.is_active(&EnabledRelationships::NONE)) {
            let HookHandler::FilterMessages(adapter) = entry.hook.handler else { unreachable!() };
            let hook_backup = (backup == Backup::PerHook).then(|| value.clone());
            let timeout = entry.hook.timeout_ms.map_or(TIMEOUT, Duration::from_millis);
            let outcome = if sync_first {
                match start(entry, || adapter(state, value, &entry.context)) {
                    Started::Done(result) => result,
                    Started::Pending(future, span) => finish(entry, timeout, fast_path, future, span).await,
                }
            } else {
                invoke(entry, timeout, fast_path, || adapter(state, value, &entry.context)).await
            };
            match outcome {
                Ok(next) => value = next,
                Err(_) => {
                    value = match (hook_backup, &chain_backup) {
                        (Some(copy), _) => copy,
                        (None, Some(copy)) => copy.clone(),
                        (None, None) => Vec::new(),
                    }
                }
            }
        }
        value
    }

    /// `invoke` of `dispatch/invoke.rs`; with `fast_path`, an async hook's future is polled
    /// once before its timeout is armed, so a future that is ready at once reads no clock and
    /// creates no timer.
    async fn invoke<'a, T>(
        entry: &ResolvedHook,
        timeout: Duration,
        fast_path: bool,
        call: impl FnOnce() -> HookFuture<'a, HookResult<T>>,
    ) -> Result<T, HookFailure> {
        let def = entry.hook;
        let span = tracing::info_span!(
            target: "hooks_runtime::hook",
            "hook",
            hook.id = def.id,
            hook.kind = def.kind().name(),
            hook.source = tracing::field::Empty,
            duration_us = tracing::field::Empty,
        );
        let started = (!span.is_disabled()).then(|| {
            span.record("hook.source", source_label(entry));
            Instant::now()
        });
        let outcome = {
            let _entered = span.enter();
            catch_unwind(AssertUnwindSafe(call))
        };
        let result = match outcome {
            Err(_) => Err(HookFailure::Panic),
            Ok(HookFuture::Ready(result)) => result.map_err(HookFailure::Error),
            Ok(HookFuture::Pending(future)) => {
                let mut guarded = CatchUnwind(future);
                let first = if fast_path {
                    let _entered = span.enter();
                    std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut guarded).poll(cx))).await
                } else {
                    Poll::Pending
                };
                match first {
                    Poll::Ready(Err(_)) => Err(HookFailure::Panic),
                    Poll::Ready(Ok(result)) => result.map_err(HookFailure::Error),
                    Poll::Pending => {
                        match tokio::time::timeout(timeout, tracing::Instrument::instrument(guarded, span.clone()))
                            .await
                        {
                            Err(_) => Err(HookFailure::Timeout(timeout)),
                            Ok(Err(_)) => Err(HookFailure::Panic),
                            Ok(Ok(result)) => result.map_err(HookFailure::Error),
                        }
                    }
                }
            }
        };
        if let Some(started) = started {
            span.record("duration_us", started.elapsed().as_micros() as u64);
        }
        if result.is_err() {
            tracing::error!(target: "hooks_runtime::hook", hook_id = def.id, "[Hooks] ✗ {} hook `{}` failed", def.kind(), def.id);
        }
        result
    }

    enum Started<'a, T> {
        Done(Result<T, HookFailure>),
        Pending(Pin<Box<dyn Future<Output = HookResult<T>> + Send + 'a>>, tracing::Span),
    }

    /// The synchronous part of `invoke`: a sync hook's whole run, or an async hook's future.
    #[inline]
    fn start<'a, T>(entry: &ResolvedHook, call: impl FnOnce() -> HookFuture<'a, HookResult<T>>) -> Started<'a, T> {
        let def = entry.hook;
        let span = tracing::info_span!(
            target: "hooks_runtime::hook",
            "hook",
            hook.id = def.id,
            hook.kind = def.kind().name(),
            hook.source = tracing::field::Empty,
            duration_us = tracing::field::Empty,
        );
        let started = (!span.is_disabled()).then(|| {
            span.record("hook.source", source_label(entry));
            Instant::now()
        });
        let outcome = {
            let _entered = span.enter();
            catch_unwind(AssertUnwindSafe(call))
        };
        let result = match outcome {
            Err(_) => Err(HookFailure::Panic),
            Ok(HookFuture::Ready(result)) => result.map_err(HookFailure::Error),
            Ok(HookFuture::Pending(future)) => return Started::Pending(future, span),
        };
        if let Some(started) = started {
            span.record("duration_us", started.elapsed().as_micros() as u64);
        }
        if result.is_err() {
            tracing::error!(target: "hooks_runtime::hook", hook_id = def.id, "[Hooks] ✗ {} hook `{}` failed", def.kind(), def.id);
        }
        Started::Done(result)
    }

    /// The asynchronous part of `invoke`, for an async hook only.
    async fn finish<'a, T>(
        entry: &ResolvedHook,
        timeout: Duration,
        fast_path: bool,
        future: Pin<Box<dyn Future<Output = HookResult<T>> + Send + 'a>>,
        span: tracing::Span,
    ) -> Result<T, HookFailure> {
        let mut guarded = CatchUnwind(future);
        let first = if fast_path {
            let _entered = span.enter();
            std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut guarded).poll(cx))).await
        } else {
            Poll::Pending
        };
        let result = match first {
            Poll::Ready(Err(_)) => Err(HookFailure::Panic),
            Poll::Ready(Ok(result)) => result.map_err(HookFailure::Error),
            Poll::Pending => {
                match tokio::time::timeout(timeout, tracing::Instrument::instrument(guarded, span.clone())).await {
                    Err(_) => Err(HookFailure::Timeout(timeout)),
                    Ok(Err(_)) => Err(HookFailure::Panic),
                    Ok(Ok(result)) => result.map_err(HookFailure::Error),
                }
            }
        };
        if result.is_err() {
            let def = entry.hook;
            tracing::error!(target: "hooks_runtime::hook", hook_id = def.id, "[Hooks] ✗ {} hook `{}` failed", def.kind(), def.id);
        }
        result
    }

    fn source_label(entry: &ResolvedHook) -> String {
        match &entry.context.source {
            HookSource::Prompt { prompt_name } => format!("prompt:{prompt_name}"),
            HookSource::Agent { agent_name } => format!("agent:{agent_name}"),
            HookSource::Child { relationship_name, .. } => format!("child:{relationship_name}"),
        }
    }

    struct CatchUnwind<'a, T>(Pin<Box<dyn Future<Output = T> + Send + 'a>>);

    impl<T> Future for CatchUnwind<'_, T> {
        type Output = Result<T, Box<dyn Any + Send>>;

        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
            let future = self.0.as_mut();
            match catch_unwind(AssertUnwindSafe(|| future.poll(cx))) {
                Ok(Poll::Pending) => Poll::Pending,
                Ok(Poll::Ready(value)) => Poll::Ready(Ok(value)),
                Err(payload) => Poll::Ready(Err(payload)),
            }
        }
    }
}
