//! Limiting what reaches the model: two `filter_messages` hooks on one prompt, run in the order
//! the prompt lists them.
//!
//! - `limit_to_20_messages` keeps the last 20 stored messages (`messages.slice(-20)` in the
//!   guide), and drops a tool result whose call fell before the cut, so that each tool call
//!   still travels with its result.
//! - `remove_failed_tool_messages` is the guide's message filter: an assistant message with a
//!   failed tool call leaves together with all of its results.
//!
//! The stored history keeps everything; only the request changes. After a long conversation
//! with one failed tool call, the program prints the stored history and marks which messages
//! the last request carried.
//!
//! ```text
//! cargo run -p examples --bin context_limits
//! ```

use examples::{Options, describe_llm_message, describe_message, heading};
use hooks_runtime::model::ScriptedResponse;
use hooks_runtime::tool::FnTool;
use hooks_runtime::types::{HookMessage, HookToolResult, LlmMessage};
use hooks_runtime::{Runtime, ThreadOptions};
use serde_json::{Value, json};

mod hooks {
    use std::collections::HashSet;

    use hooks_runtime::prelude::*;

    /// Keeps the 20 most recent messages.
    #[hook(filter_messages, id = "limit_to_20_messages")]
    pub(crate) fn limit_to_20_messages(_state: &ThreadState, mut messages: Vec<HookMessage>) -> Vec<HookMessage> {
        let mut kept = messages.split_off(messages.len().saturating_sub(20));
        // A cut just after an assistant tool call would leave its results without it.
        let calls: HashSet<String> = kept.iter().flat_map(call_ids).collect();
        kept.retain(|row| row.role != Role::Tool || row.tool_call_id.as_ref().is_some_and(|id| calls.contains(id)));
        kept
    }

    /// The guide's filter: drops each assistant message that made a failed tool call, with the
    /// results of all of its calls.
    #[hook(filter_messages, id = "remove_failed_tool_messages")]
    pub(crate) fn remove_failed_tool_messages(_state: &ThreadState, rows: Vec<HookMessage>) -> Vec<HookMessage> {
        let failed_ids: HashSet<&str> = rows
            .iter()
            .filter(|row| row.role == Role::Tool && row.extra_str("tool_status") == Some("error"))
            .filter_map(|row| row.tool_call_id.as_deref())
            .collect();
        let mut removed_ids = HashSet::new();
        for row in &rows {
            let calls = call_ids(row);
            if calls.iter().any(|id| failed_ids.contains(id.as_str())) {
                removed_ids.extend(calls);
            }
        }
        rows.into_iter()
            .filter(|row| {
                let makes_removed_call = call_ids(row).iter().any(|id| removed_ids.contains(id));
                let answers_removed_call =
                    row.role == Role::Tool && row.tool_call_id.as_ref().is_some_and(|id| removed_ids.contains(id));
                !makes_removed_call && !answers_removed_call
            })
            .collect()
    }

    /// The ids of an assistant message's tool calls: `JSON.parse(row.tool_calls || '[]')`.
    pub(crate) fn call_ids(row: &HookMessage) -> Vec<String> {
        let calls: Vec<serde_json::Value> =
            row.tool_calls.as_deref().and_then(|calls| serde_json::from_str(calls).ok()).unwrap_or_default();
        calls.iter().filter_map(|call| call["id"].as_str().map(str::to_owned)).collect()
    }
}

mod prompts {
    use hooks_runtime::prelude::*;

    define_prompt! {
        name: support_prompt,
        model: "tool-reasoning",
        prompt: "You help customers of a small online shop. Look orders up with lookup_order. Be brief.",
        include_chat: true,
        include_past_tools: true,
        tools: ["lookup_order"],
        hooks: [crate::hooks::limit_to_20_messages, crate::hooks::remove_failed_tool_messages],
    }
}

mod agents {
    use hooks_runtime::prelude::*;

    define_agent! {
        name: support_agent,
        side_a: { prompt: crate::prompts::support_prompt, stop_on_response: true, max_steps: 4 },
        side_b: { human: true },
    }
}

/// Ten short exchanges, then an order look-up whose first call fails, then a last question.
const SMALL_TALK: [(&str, &str); 10] = [
    ("Hi! Do you ship to Canada?", "Yes, in 5 to 8 days."),
    ("How much is shipping?", "A flat 9 dollars."),
    ("Is it free above some amount?", "Yes, above 80 dollars."),
    ("Can I return an item?", "Within 30 days."),
    ("Who pays for the return?", "We do."),
    ("Do you sell gift cards?", "Yes, from 10 to 200 dollars."),
    ("Do they expire?", "No."),
    ("Can I change my address?", "Until the order ships."),
    ("Do you have a phone line?", "Only chat and email."),
    ("Which email?", "help@shop.example."),
];
const ORDER_QUESTION: &str = "Where is my order 1234?";
const LAST_QUESTION: &str = "Thanks! When should I expect it again?";

fn script() -> Vec<ScriptedResponse> {
    let mut script: Vec<ScriptedResponse> =
        SMALL_TALK.iter().map(|(_, answer)| ScriptedResponse::text(answer)).collect();
    script.extend([
        ScriptedResponse::tool_call("call_1", "lookup_order", r#"{"order_id":"1243"}"#), // a typo: fails
        ScriptedResponse::tool_call("call_2", "lookup_order", r#"{"order_id":"1234"}"#),
        ScriptedResponse::text("Order 1234 shipped on May 2 and arrives on May 6."),
        ScriptedResponse::text("On May 6."),
    ]);
    script
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    examples::init_logging();
    let options = Options::from_args();
    let model = options.model(script());
    let lookup_order = FnTool::new("lookup_order", "Looks an order up by its id.", |args: Value| async move {
        match args["order_id"].as_str() {
            Some("1234") => HookToolResult::success(r#"{"order":"1234","status":"shipped May 2, arrives May 6"}"#),
            Some(other) => HookToolResult::error(format!("no order {other}")),
            None => HookToolResult::error("`order_id` is required"),
        }
    })
    .with_parameters(json!({
        "type": "object",
        "properties": { "order_id": { "type": "string", "description": "The order id" } },
        "required": ["order_id"],
    }));
    let runtime = Runtime::builder()
        .agent::<agents::support_agent>()
        .model("tool-reasoning", model.clone())
        .tool(lookup_order)
        .build()?;

    heading("A long support conversation");
    println!("model: {}", model.description());
    let thread = runtime.create_thread("support_agent", ThreadOptions::default()).await?;
    let questions = SMALL_TALK.iter().map(|(question, _)| *question).chain([ORDER_QUESTION, LAST_QUESTION]);
    for question in questions {
        let outcome = thread.send(question).await?.into_result()?;
        println!("you: {question:<40} agent: {}", outcome.reply.as_deref().unwrap_or("(no reply)"));
    }

    let stored = thread.messages().await?;
    let requests = model.requests();
    let last = requests.last().ok_or("the model was asked at least once")?;
    heading("The stored history, and what the last request carried");
    println!(
        "{} messages are stored. The last request, before the final reply, carried the system message and {} of them.",
        stored.len(),
        last.messages.len() - 1
    );
    println!(
        "limit_to_20_messages cut the oldest; remove_failed_tool_messages took out the failed call and its result."
    );
    for (number, message) in stored.iter().enumerate() {
        let sent = last.messages.iter().any(|sent| same(message, sent));
        println!("{:>3} {:<4}  {}", number + 1, if sent { "sent" } else { "" }, describe_message(message, 70));
    }

    heading("The last request, as the model received it");
    for message in &last.messages {
        println!("  {}", describe_llm_message(message, 90));
    }
    Ok(())
}

/// Whether a request message is this stored message: same role, text and tool-call ids.
fn same(stored: &HookMessage, sent: &LlmMessage) -> bool {
    let sent_calls: Vec<String> = sent
        .tool_calls
        .as_ref()
        .and_then(Value::as_array)
        .map(|calls| calls.iter().filter_map(|call| call["id"].as_str().map(str::to_owned)).collect())
        .unwrap_or_default();
    stored.role.as_str() == sent.role
        && stored.content == sent.content
        && stored.tool_call_id == sent.tool_call_id
        && hooks::call_ids(stored) == sent_calls
}
