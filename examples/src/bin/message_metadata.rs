//! Adding metadata to messages (spec 8.6): `add_execution_metadata` (`before_create_message`)
//! stamps each message with the execution it was written in, before it is inserted.
//!
//! The metadata is an extra field of the message record, so the store keeps it: this program
//! uses the SQLite store (in memory) and reads every message back from it. A message injected
//! at rest, outside any execution, gets none.
//!
//! ```text
//! cargo run -p examples --bin message_metadata
//! ```

use examples::{Options, describe_message, heading};
use hooks_runtime::model::ScriptedResponse;
use hooks_runtime::store::SqliteStore;
use hooks_runtime::tool::FnTool;
use hooks_runtime::types::{HookToolResult, MessageRecord, Role};
use hooks_runtime::{Runtime, ThreadOptions};
use serde_json::{Value, json};

mod hooks {
    use hooks_runtime::prelude::*;
    use serde_json::json;

    /// Records the flow, step and side a message was written in.
    #[hook(before_create_message, id = "add_execution_metadata")]
    pub(crate) fn add_execution_metadata(state: &ThreadState, mut message: MessageRecord) -> MessageRecord {
        // At rest (no execution) there is nothing to record.
        let Some(execution) = &state.execution else { return message };
        let metadata = json!({
            "flow_id": execution.flow_id,
            "step": execution.step_count,
            "side": execution.current_side,
        });
        // A JSON string, as the spec's `JSON.stringify`.
        message.extra.insert("metadata".into(), json!(metadata.to_string()));
        message
    }
}

mod prompts {
    use hooks_runtime::prelude::*;

    define_prompt! {
        name: weather_prompt,
        model: "tool-reasoning",
        prompt: "You answer questions about the weather. Use get_weather.",
        tools: ["get_weather"],
        hooks: [crate::hooks::add_execution_metadata],
    }
}

mod agents {
    use hooks_runtime::prelude::*;

    define_agent! {
        name: weather_agent,
        side_a: { prompt: crate::prompts::weather_prompt, stop_on_response: true, max_steps: 3 },
        side_b: { human: true },
        // At rest there is no active prompt: the agent's hooks apply.
        hooks: [crate::hooks::add_execution_metadata],
    }
}

const QUESTION: &str = "What's the weather in Lisbon?";

fn script() -> Vec<ScriptedResponse> {
    vec![
        ScriptedResponse::tool_call("call_1", "get_weather", r#"{"city":"Lisbon"}"#),
        ScriptedResponse::text("It is 18 °C and sunny in Lisbon."),
    ]
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    examples::init_logging();
    let options = Options::from_args();
    let model = options.model(script());
    let get_weather = FnTool::new("get_weather", "The current weather in a city.", |args: Value| async move {
        let city = args["city"].as_str().unwrap_or("nowhere").to_owned();
        HookToolResult::success(json!({ "city": city, "celsius": 18, "sky": "sunny" }).to_string())
    })
    .with_parameters(json!({
        "type": "object",
        "properties": { "city": { "type": "string", "description": "The city" } },
        "required": ["city"],
    }));
    let runtime = Runtime::builder()
        .agent::<agents::weather_agent>()
        .model("tool-reasoning", model.clone())
        .tool(get_weather)
        .store(SqliteStore::in_memory()?)
        .build()?;

    heading("A run");
    println!("model: {}", model.description());
    let thread = runtime.create_thread("weather_agent", ThreadOptions::default()).await?;
    println!("you:   {QUESTION}");
    let outcome = thread.send(QUESTION).await?.into_result()?;
    println!("agent: {}", outcome.reply.as_deref().unwrap_or("(no reply)"));
    // Outside a run: `before_create_message` still runs, but with no execution to describe.
    thread.inject_message(MessageRecord::new(Role::User, "(a note added at rest)")).await?;

    heading("The messages as the SQLite store returns them");
    let messages = thread.messages().await?;
    println!("{:<4}  {:<4}  {:<30}  message", "step", "side", "flow_id");
    for message in &messages {
        let metadata: Value =
            message.extra_str("metadata").and_then(|text| serde_json::from_str(text).ok()).unwrap_or_default();
        let field = |name: &str| match &metadata[name] {
            Value::Null => "-".to_owned(),
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        println!(
            "{:<4}  {:<4}  {:<30}  {}",
            field("step"),
            field("side"),
            field("flow_id"),
            describe_message(message, 50)
        );
    }
    if let Some(first) = messages.first() {
        println!("\nThe first message's stored field: \"metadata\": {}", first.extra["metadata"]);
    }
    Ok(())
}
