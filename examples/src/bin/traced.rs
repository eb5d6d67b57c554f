//! Tracing: a turn with tool calls, a guard and an approval, exported as OpenTelemetry spans
//! (GenAI semantic conventions) over OTLP: `invoke_agent` for each run, `chat` for each model
//! call, `execute_tool` for each tool call, and a span for each hook run under the call that
//! ran it, with the guard's and the hook's decisions.
//!
//! ```text
//! cargo run -p examples --bin traced --features otel
//! OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:6006 cargo run -p examples --bin traced --features otel
//! ```
//!
//! The collector is `OTEL_EXPORTER_OTLP_ENDPOINT` (default `http://127.0.0.1:4318`), any OTLP
//! HTTP/protobuf endpoint: an OpenTelemetry Collector, Jaeger, Arize Phoenix. Message contents,
//! tool arguments and results go on the spans too (`trace_contents(true)`): leave that out
//! where the backend must not hold conversations.

use examples::{Options, heading};
use hooks_runtime::model::{ScriptedResponse, Usage};
use hooks_runtime::tool::FnTool;
use hooks_runtime::types::HookToolResult;
use hooks_runtime::{Runtime, ThreadOptions};
use serde_json::{Value, json};

#[path = "approvals/guards.rs"]
mod guards;

mod hooks {
    use hooks_runtime::prelude::*;

    /// Every tool result is noted (an event hook: it observes, and its span says so).
    #[hook(tool_call_done, id = "note_results")]
    pub(crate) fn note_results(_state: &ThreadState, _call: &HookToolCall, _result: &HookToolResult) {}
}

mod agents {
    use hooks_runtime::prelude::*;

    define_prompt! {
        name: ops_prompt,
        model: "ops",
        prompt: "You run operations: look invoices up, run shell commands, pay.",
        tools: ["invoice", "shell", "pay"],
        hooks: [crate::guards::large_payments_need_a_person, crate::hooks::note_results],
    }

    define_agent! { name: ops, side_a: { prompt: ops_prompt, stop_on_response: true, max_steps: 4 } }
}

fn tools() -> [FnTool; 3] {
    let invoice = FnTool::new("invoice", "Looks an invoice up.", |args: Value| async move {
        tokio::time::sleep(std::time::Duration::from_millis(120)).await;
        HookToolResult::success(format!("invoice {}: 250 to ACME", args["id"].as_str().unwrap_or("?")))
    });
    let shell = FnTool::new("shell", "Runs a shell command.", |args: Value| async move {
        HookToolResult::success(format!("ran `{}`", args["command"].as_str().unwrap_or_default()))
    })
    .with_parameters(
        json!({ "type": "object", "properties": { "command": { "type": "string" } }, "required": ["command"] }),
    );
    let pay = FnTool::new("pay", "Pays an invoice.", |args: Value| async move {
        tokio::time::sleep(std::time::Duration::from_millis(60)).await;
        HookToolResult::success(format!("paid {} to {}", args["amount"], args["to"].as_str().unwrap_or("?")))
    });
    [invoice, shell, pay]
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let endpoint = std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT").unwrap_or_else(|_| "http://127.0.0.1:4318".to_owned());
    // The process's subscriber: the runtime's spans to the collector, logs (RUST_LOG) to stderr.
    let exporter = hooks_runtime::otel::install(&endpoint)?;
    let options = Options::from_args();
    let script = [
        ScriptedResponse::tool_call("call_invoice", "invoice", r#"{"id":"INV-7"}"#)
            .then_tool_call("call_clean", "shell", r#"{"command":"rm -rf /var/cache"}"#)
            .then_tool_call("call_pay", "pay", r#"{"amount":250,"to":"ACME"}"#)
            .with_usage(Usage::new(182, 61, 243)),
        ScriptedResponse::text("ACME's invoice INV-7 is paid; the cache was not cleared (not allowed).")
            .with_usage(Usage::new(311, 19, 330)),
    ];
    let runtime = Runtime::builder()
        .agent::<agents::ops>()
        .model("ops", options.model(script))
        .tools(tools())
        .guard::<guards::no_destructive_commands>()
        .trace_contents(true)
        .build()?;

    heading("A run: the guard denies the shell command, the payment waits for a person");
    let thread = runtime.create_thread("ops", ThreadOptions::default()).await?;
    let outcome = thread.send("Pay ACME's invoice INV-7, and clear the cache.").await?;
    println!("status: {}", outcome.status);
    heading("A person approves the payment: a second run finishes the turn");
    // The call's id is the model's (a real endpoint makes up its own): found by its tool.
    let waiting = thread.pending_approvals().await?;
    let payment = waiting.iter().find(|call| call.tool == "pay").ok_or("no payment waits for approval")?;
    let outcome = thread.approve(&payment.id).await?;
    println!("status: {}", outcome.status);
    println!("agent: {}", outcome.reply.as_deref().unwrap_or("(no reply)"));

    // Sent now, and an unreachable collector said so; then the exporter stops.
    exporter.flush()?;
    exporter.shutdown()?;
    println!("\nspans sent to {endpoint}/v1/traces; the thread's id, gen_ai.conversation.id, is {}", thread.id());
    Ok(())
}
