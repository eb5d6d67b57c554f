//! C1: every thread hook receives the state first and the context last, and the context
//! parameter may be left out of the Rust signature. Both forms compile, and the one that takes
//! the context gets the very context the runtime passes.
use hooks_runtime::prelude::*;
use hooks_runtime::types::HookSource;
use hooks_runtime::__private::{self, Adapter, HookHandler};

#[hook(after_system_message, id = "with_context")]
fn with_context(_state: &ThreadState, system: &str, ctx: &HookExecutionContext) -> Option<String> {
    match &ctx.source {
        HookSource::Prompt { prompt_name } => Some(format!("{system} [prompt {prompt_name}]")),
        HookSource::Agent { agent_name } => Some(format!("{system} [agent {agent_name}]")),
        HookSource::Child { relationship_name, .. } => Some(format!("{system} [child {relationship_name}]")),
        HookSource::Runtime => Some(format!("{system} [runtime guard]")),
        // `HookSource` can grow: a source added later reads as its label.
        source => Some(format!("{system} [{source}]")),
    }
}

#[hook(after_system_message, id = "without_context")]
fn without_context(_state: &ThreadState, system: &str) -> String {
    format!("{system} [no context]")
}

#[hook(tool_call_started, id = "started_with_context")]
fn started_with_context(state: &ThreadState, call: &HookToolCall, progress: Option<&str>, ctx: &HookExecutionContext) {
    state.set_context_value("started", serde_json::json!([call.name(), progress, ctx]));
}

#[hook(tool_call_started, id = "started_without_context")]
fn started_without_context(state: &ThreadState, call: &HookToolCall, progress: Option<&str>) {
    state.set_context_value("started_plain", serde_json::json!([call.name(), progress]));
}

#[hook(after_thread_created, id = "created_with_context")]
async fn created_with_context(state: &ThreadState, ctx: &HookExecutionContext) {
    state.set_context_value("created", serde_json::to_value(ctx).unwrap());
}

#[hook(after_thread_created, id = "created_without_context")]
async fn created_without_context(state: &ThreadState) {
    state.set_context_value("created_plain", serde_json::json!(true));
}

fn main() {
    let state = ThreadState::detached("thread_1", "support_agent");
    let prompt = HookExecutionContext::prompt("triage");
    let agent = HookExecutionContext::agent("support_agent");

    // The adapter replaces the chain's system message with the hook's `Some`.
    let system = |f: for<'a> fn(&'a ThreadState, &'a mut String, &'a HookExecutionContext) -> HookResult<()>,
                  ctx: &HookExecutionContext| {
        let mut system = String::from("Be brief.");
        f(&state, &mut system, ctx).unwrap();
        system
    };
    let HookHandler::AfterSystemMessage(Adapter::Sync(f)) = __private::handler(<with_context as Hook>::DEF) else { panic!() };
    assert_eq!(system(f, &prompt), "Be brief. [prompt triage]");
    assert_eq!(system(f, &agent), "Be brief. [agent support_agent]");

    let HookHandler::AfterSystemMessage(Adapter::Sync(g)) = __private::handler(<without_context as Hook>::DEF) else { panic!() };
    assert_eq!(system(g, &prompt), "Be brief. [no context]");

    let call = HookToolCall::new("call_1", "search_github_issues", "{\"q\":");
    let HookHandler::ToolCallStarted(Adapter::Sync(f)) = __private::handler(<started_with_context as Hook>::DEF) else { panic!() };
    f(&state, &call, Some("Searching"), &agent).unwrap();
    assert_eq!(
        state.context_value("started").unwrap(),
        serde_json::json!(["search_github_issues", "Searching", {"source": {"kind": "agent", "agentName": "support_agent"}}])
    );
    let HookHandler::ToolCallStarted(Adapter::Sync(g)) = __private::handler(<started_without_context as Hook>::DEF) else { panic!() };
    g(&state, &call, None, &agent).unwrap();
    assert_eq!(state.context_value("started_plain").unwrap(), serde_json::json!(["search_github_issues", null]));

    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let HookHandler::AfterThreadCreated(Adapter::Async(f)) = __private::handler(<created_with_context as Hook>::DEF) else { panic!() };
    runtime.block_on(f(&state, &prompt)).unwrap();
    assert_eq!(
        state.context_value("created").unwrap(),
        serde_json::json!({"source": {"kind": "prompt", "promptName": "triage"}})
    );
    let HookHandler::AfterThreadCreated(Adapter::Async(g)) = __private::handler(<created_without_context as Hook>::DEF) else { panic!() };
    runtime.block_on(g(&state, &prompt)).unwrap();
    assert_eq!(state.context_value("created_plain").unwrap(), serde_json::json!(true));
}
