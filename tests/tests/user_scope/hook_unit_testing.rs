//! A hook is an ordinary function: it can be unit-tested without a runtime, by calling it with
//! `ThreadState::detached` (or a `ThreadState` over a `DetachedThread` the test keeps), and by
//! calling it the way the runtime does, through its companion's adapter.

use std::sync::Arc;

use hooks_runtime::__private::{self, Adapter, HookHandler};
use hooks_runtime::prelude::*;
use hooks_runtime::testing::DetachedThread;
use hooks_runtime::types::{ExecutionState, MessageQuery, Side, UserEvent};
use serde_json::json;

/// Calls a hook's adapter as the runtime does: a sync hook's answers at once, an async hook's
/// future is awaited.
macro_rules! call {
    ($adapter:expr, $($arg:expr),*) => {
        match $adapter {
            Adapter::Sync(f) => f($($arg),*),
            Adapter::Async(f) => f($($arg),*).await,
        }
    };
}

fn message(id: &str, role: Role, content: &str, created_at: i64) -> HookMessage {
    HookMessage::new(id, role, content, created_at)
}

fn history(count: usize) -> Vec<HookMessage> {
    (0..count).map(|i| message(&format!("msg_{i}"), Role::User, &format!("message {i}"), i as i64)).collect()
}

/// A state over a `DetachedThread` the test keeps a handle to, so what hooks did can be read.
fn detached_state() -> (ThreadState, Arc<DetachedThread>) {
    let thread = Arc::new(DetachedThread::default());
    let state = ThreadState::new("thread_1", "support_agent", thread.clone());
    (state, thread)
}

// The hooks under test, written as a user would write them.

#[hook(filter_messages, id = "limit_to_20_messages")]
async fn limit(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    let skip = messages.len().saturating_sub(20);
    messages.into_iter().skip(skip).collect()
}

#[hook(filter_messages, id = "keep_completed_only")]
fn keep_completed(_state: &ThreadState, rows: Vec<HookMessage>) -> Vec<HookMessage> {
    rows.into_iter().filter(|row| row.extra_str("status") == Some("completed")).collect()
}

/// Spec §8.5-like alerting: on a failed tool call, leave a note in the thread and count failures.
#[hook(after_tool_call_failure, id = "alert_on_failure")]
async fn alert_on_failure(
    state: &ThreadState,
    call: &HookToolCall,
    result: &HookToolResult,
) -> Result<Option<HookToolResult>, HookError> {
    let failures = state.get_value("tool_failures").await.and_then(|v| v.as_u64()).unwrap_or(0);
    state.set_value("tool_failures", json!(failures + 1)).await?;
    let mut note = MessageRecord::new(Role::System, format!("`{}` failed; it will be retried.", call.name()));
    note.silent = Some(true);
    note.extra.insert("tool_status".into(), json!(result.status.as_str()));
    state.inject_message(note).await?;
    Ok(None)
}

/// Spec §8.6: add the execution's metadata to every new message.
#[hook(before_create_message, id = "add_execution_metadata")]
fn add_execution_metadata(state: &ThreadState, mut message: MessageRecord) -> Result<MessageRecord, HookError> {
    let execution = state.execution.as_ref().ok_or_else(|| HookError::new("no active execution"))?;
    message.extra.insert(
        "metadata".into(),
        json!({"flow_id": execution.flow_id, "step": execution.step_count, "side": execution.current_side.as_str()}),
    );
    Ok(message)
}

/// Spec §8.3: surface tool progress to the connected clients.
#[hook(tool_call_started, id = "surface_progress")]
fn surface_progress(state: &ThreadState, call: &HookToolCall, progress: Option<&str>, ctx: &HookExecutionContext) {
    if let Some(progress) = progress {
        state.emit("tool_progress", json!({"id": call.id, "progress": progress, "context": ctx}));
    }
    if call.name() == "close_as_duplicate" {
        state.queue_tool("notify_reporter", json!({"call": call.id}));
    }
}

#[hook(prefilter_llm_history, id = "moderation_gate")]
fn moderation_gate(_state: &ThreadState, messages: Vec<LlmMessage>) -> Result<Vec<LlmMessage>, HookError> {
    if messages.iter().any(|m| m.content.as_deref().is_some_and(|c| c.contains("forbidden"))) {
        return Err(HookError::block("This request was refused by the moderation gate."));
    }
    Ok(messages)
}

#[hook(user_value_changed, id = "count_value_changes")]
fn count_value_changes(user: &UserState) -> Result<(), HookError> {
    match &user.event {
        UserEvent::ValueChanged { key, .. } if key.is_empty() => Err(HookError::new("a value without a key")),
        _ => Ok(()),
    }
}

// Calling the user's functions directly.

#[tokio::test]
async fn a_filter_hook_is_called_directly_with_a_detached_state() {
    let state = ThreadState::detached("thread_1", "support_agent");
    let kept = limit(&state, history(25)).await;
    assert_eq!(kept.len(), 20);
    assert_eq!(kept[0].id, "msg_5");
    assert_eq!(kept[19].id, "msg_24");
    assert_eq!(limit(&state, history(3)).await.len(), 3);

    let mut rows = history(3);
    rows[1].extra.insert("status".into(), json!("completed"));
    let kept = keep_completed(&state, rows);
    assert_eq!(kept.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["msg_1"]);
}

#[tokio::test]
async fn a_hook_that_injects_and_sets_values_is_checked_through_the_detached_thread() {
    let (state, thread) = detached_state();
    // `services()` is the very `DetachedThread` the test holds.
    assert!(std::ptr::addr_eq(Arc::as_ptr(state.services()), Arc::as_ptr(&thread)));
    let call = HookToolCall::new("call_1", "get_github_issue", r#"{"number":12}"#);
    let failed = HookToolResult::error("GitHub returned 404");

    assert_eq!(alert_on_failure(&state, &call, &failed).await, Ok(None));
    assert_eq!(alert_on_failure(&state, &call, &failed).await, Ok(None));

    assert_eq!(state.get_value("tool_failures").await, Some(json!(2)));
    let injected = thread.messages();
    assert_eq!(injected.len(), 2);
    assert_eq!(injected[0].role, Role::System);
    assert_eq!(injected[0].content.as_deref(), Some("`get_github_issue` failed; it will be retried."));
    assert!(injected[0].is_silent());
    assert_eq!(injected[0].extra_str("tool_status"), Some("error"));
    assert!(!injected[0].id.is_empty() && injected[0].id != injected[1].id, "the detached store assigns ids");
    // The same messages through the state's own API; silent ones only when asked for.
    assert!(state.get_messages(MessageQuery::default()).await.unwrap().is_empty());
    let all = state.get_messages(MessageQuery::new().with_limit(1).with_silent(true)).await.unwrap();
    assert_eq!(all, injected[1..]);
}

#[test]
fn a_hook_reading_the_execution_state_is_called_directly() {
    let mut state = ThreadState::detached("thread_1", "support_agent");
    let record = MessageRecord::new(Role::Assistant, "Issue #12 duplicates #7.");
    let error = add_execution_metadata(&state, record.clone()).unwrap_err();
    assert_eq!(error.message(), "no active execution");

    let mut execution = ExecutionState::new("flow_1", Side::B);
    execution.step_count = 3;
    state.execution = Some(execution);
    let stamped = add_execution_metadata(&state, record).unwrap();
    assert_eq!(stamped.extra["metadata"], json!({"flow_id": "flow_1", "step": 3, "side": "b"}));
    assert_eq!(stamped.content.as_deref(), Some("Issue #12 duplicates #7."));
}

#[test]
fn an_event_hook_that_emits_and_queues_is_checked_through_the_detached_thread() {
    let (state, thread) = detached_state();
    let ctx = HookExecutionContext::agent("support_agent");
    let call = HookToolCall::new("call_7", "close_as_duplicate", "");
    surface_progress(&state, &call, Some("Closing #12"), &ctx);
    surface_progress(&state, &call, None, &ctx);
    assert_eq!(
        thread.events(),
        [(
            "tool_progress".to_owned(),
            json!({"id": "call_7", "progress": "Closing #12", "context": {"source": {"kind": "agent", "agentName": "support_agent"}}})
        )]
    );
    assert_eq!(
        thread.queued_tools(),
        [
            ("notify_reporter".to_owned(), json!({"call": "call_7"})),
            ("notify_reporter".to_owned(), json!({"call": "call_7"}))
        ]
    );
}

#[test]
fn a_user_scope_hook_is_called_with_a_user_state() {
    let user: UserState = serde_json::from_value(json!({
        "userId": "user_1",
        "values": {"theme": "light"},
        "clients": ["client_a"],
        "event": {"type": "value_changed", "key": "theme", "old": "dark", "new": "light"}
    }))
    .unwrap();
    assert_eq!(count_value_changes(&user), Ok(()));
    let mut keyless = user.clone();
    keyless.event = UserEvent::ValueChanged { key: String::new(), old: None, new: None };
    assert!(count_value_changes(&keyless).is_err());
}

// Calling through the companion, as the runtime does.

#[tokio::test]
async fn a_hook_is_called_through_its_companion_handler() {
    let state = ThreadState::detached("thread_1", "support_agent");
    let HookHandler::FilterMessages(f) = __private::handler(<limit_to_20_messages as Hook>::DEF) else {
        panic!("`limit_to_20_messages` is a filter_messages hook");
    };
    // The adapter transforms the chain's value in place, whatever form the hook is written in.
    let mut kept = history(25);
    call!(f, &state, &mut kept, &HookExecutionContext::prompt("p")).unwrap();
    assert_eq!(kept.len(), 20);
    assert_eq!(kept[0].id, "msg_5");
    let ctx = HookExecutionContext::prompt("p");
    let mut messages = history(3);
    let Adapter::Async(f) = f else { panic!("an async hook's adapter answers a future") };
    f(&state, &mut messages, &ctx).await.unwrap();
    assert_eq!(messages.len(), 3);

    let HookHandler::FilterMessages(g) = __private::handler(<keep_completed_only as Hook>::DEF) else { panic!() };
    let mut messages = history(2);
    let Adapter::Sync(g) = g else { panic!("a sync hook's adapter answers at once") };
    assert_eq!(g(&state, &mut messages, &ctx), Ok(()));
    assert_eq!(messages, Vec::new());
}

#[tokio::test]
async fn a_companion_handler_wraps_option_and_errors_as_the_chain_carries_them() {
    let (state, thread) = detached_state();
    let ctx = HookExecutionContext::prompt("duplicate_finder");

    let HookHandler::AfterToolCallFailure(f) = __private::handler(<alert_on_failure as Hook>::DEF) else { panic!() };
    let call = HookToolCall::new("call_1", "get_github_issue", "{}");
    let mut result = HookToolResult::error("timeout");
    let outcome = call!(f, &state, &call, &mut result, &ctx);
    assert_eq!(outcome, Ok(()));
    assert_eq!(result, HookToolResult::error("timeout"), "None keeps the original result");
    assert_eq!(thread.messages().len(), 1);

    let HookHandler::PrefilterLlmHistory(gate) = __private::handler(<moderation_gate as Hook>::DEF) else { panic!() };
    let allowed = vec![LlmMessage::new("user", "Is #12 a duplicate?")];
    let mut messages = allowed.clone();
    assert_eq!(call!(gate, &state, &mut messages, &ctx), Ok(()));
    assert_eq!(messages, allowed);
    let mut forbidden = vec![LlmMessage::new("user", "something forbidden")];
    let error = call!(gate, &state, &mut forbidden, &ctx).unwrap_err();
    assert!(error.is_block());
    assert_eq!(error.message(), "This request was refused by the moderation gate.");

    let HookHandler::BeforeCreateMessage(stamp) = __private::handler(<add_execution_metadata as Hook>::DEF) else {
        panic!()
    };
    let error = call!(stamp, &state, &mut MessageRecord::new(Role::User, "hi"), &ctx).unwrap_err();
    assert!(!error.is_block());

    let HookHandler::ToolCallStarted(started) = __private::handler(<surface_progress as Hook>::DEF) else { panic!() };
    call!(started, &state, &HookToolCall::new("call_2", "search_github_issues", "{\"q"), Some("Searching"), &ctx)
        .unwrap();
    assert_eq!(
        thread.events()[0].1["context"],
        json!({"source": {"kind": "prompt", "promptName": "duplicate_finder"}})
    );

    let HookHandler::UserValueChanged(user_hook) = __private::handler(<count_value_changes as Hook>::DEF) else {
        panic!()
    };
    let user =
        UserState::new("user_1", UserEvent::ValueChanged { key: "theme".into(), old: None, new: Some(json!("dark")) });
    assert_eq!(call!(user_hook, &user), Ok(()));
}
