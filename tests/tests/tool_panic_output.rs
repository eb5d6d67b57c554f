//! E9 for a tool's panic: the runtime's one panic path catches it (the call's result is the
//! error "the tool ... panicked" and the turn goes on), and its message, which may hold the
//! call's arguments, never reaches the process's panic hook (whose default prints to stderr).
//! Alone in its binary: it sets the process-wide panic hook.

use std::sync::Mutex;

use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::tool::FnTool;
use hooks_runtime::{Runtime, ThreadOptions};
use serde_json::Value;

static SEEN_BY_APP_HOOK: Mutex<Vec<String>> = Mutex::new(Vec::new());

define_prompt! { name: tool_panic_prompt, model: "scripted", prompt: "p", tools: ["leaky"] }
define_agent! { name: tool_panic_agent, side_a: { prompt: tool_panic_prompt, stop_on_response: true } }

fn payload_text(info: &std::panic::PanicHookInfo<'_>) -> String {
    let payload = info.payload();
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|text| (*text).to_owned()))
        .unwrap_or_default()
}

#[tokio::test]
async fn e9_a_tool_panic_is_the_calls_error_and_never_reaches_the_applications_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        SEEN_BY_APP_HOOK.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(payload_text(info));
    }));
    let leaky = FnTool::new("leaky", "Panics with its arguments.", |arguments: Value| async move {
        if arguments.is_object() {
            panic!("a tool bug that prints {arguments}");
        }
        HookToolResult::success("unreachable")
    });
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_1", "leaky", r#"{"secret": "s3cr3t-tool-7a1f"}"#),
        ScriptedResponse::text("done"),
    ]);
    let runtime = Runtime::builder().agent::<tool_panic_agent>().model("scripted", model).tool(leaky).build().unwrap();
    let thread = runtime.create_thread("tool_panic_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("go").await.unwrap();
    assert_eq!(outcome.reply.as_deref(), Some("done"), "the turn went on after the tool's panic");
    let messages = thread.messages().await.unwrap();
    let result = messages.iter().find(|m| m.role == Role::Tool).expect("the call's result is stored");
    let text = result.content.as_deref().unwrap_or_default();
    assert!(text.contains("the tool leaky panicked"), "{text}");

    let _ = std::panic::catch_unwind(|| panic!("an application panic"));
    let seen = SEEN_BY_APP_HOOK.lock().unwrap().clone();
    assert!(seen.iter().all(|text| !text.contains("s3cr3t")), "a tool's panic message escaped: {seen:?}");
    assert!(seen.iter().any(|text| text == "an application panic"), "the application's hook was bypassed: {seen:?}");
}
