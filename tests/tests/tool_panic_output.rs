//! E9 for a tool's panic: the runtime's one panic path catches it (the call's result is the
//! error "the tool ... panicked" and the turn goes on), and its message, which may hold the
//! call's arguments, never reaches the process's panic hook (whose default prints to stderr).
//! Alone in its binary: it sets the process-wide panic hook.

mod support_panic_hook;

use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::tool::FnTool;
use hooks_runtime::{Runtime, ThreadOptions};
use serde_json::Value;
use support_panic_hook::{assert_only_the_application_panic_reached_the_hook, set_recording_hook};

define_prompt! { name: tool_panic_prompt, model: "scripted", prompt: "p", tools: ["leaky"] }
define_agent! { name: tool_panic_agent, side_a: { prompt: tool_panic_prompt, stop_on_response: true } }

#[tokio::test]
async fn e9_a_tool_panic_is_the_calls_error_and_never_reaches_the_applications_panic_hook() {
    // The application's own panic hook, set before the runtime is built.
    set_recording_hook();
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

    // Any other panic still goes to the application's hook.
    assert_only_the_application_panic_reached_the_hook("s3cr3t", "a tool's");
}
