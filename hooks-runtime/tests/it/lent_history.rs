//! A turn whose agent has no `filter_messages` hook builds its request from the messages the
//! store lends (`MessageStore::lend_messages`), copying each; with such a hook, from the
//! snapshot the chain was handed. Both must send the provider the same request for the same
//! history, whatever it holds (tool exchanges, a failed step's row, an unanswered call, silent
//! and named messages), on every store; and the tool calls of the step just stored, kept as a
//! value for the next request, must be the value their stored text reads as.

use hooks_runtime::model::{ModelRequest, ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{InMemoryStore, MessageStore};
use hooks_runtime::tool::FnTool;
use hooks_runtime::{Runtime, ThreadOptions};
use serde_json::{Value, json};

#[hook(filter_messages, id = "lent_keep_all")]
fn lent_keep_all(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
    std::hint::black_box(messages);
}

define_prompt! { name: lent_plain_prompt, model: "scripted", prompt: "Reply.", tools: ["lookup"] }
define_prompt! {
    name: lent_filtered_prompt, model: "scripted", prompt: "Reply.", tools: ["lookup"],
    hooks: [lent_keep_all],
}
define_agent! { name: lent_plain, side_a: { prompt: lent_plain_prompt, stop_on_response: true }, side_b: { human: true } }
define_agent! { name: lent_filtered, side_a: { prompt: lent_filtered_prompt, stop_on_response: true }, side_b: { human: true } }

const CALLS: &str =
    r#"[{"function":{"arguments":"{\"key\":\"an \\\"answer\\\"\"}","name":"lookup"},"id":"c1","type":"function"}]"#;

/// A history with every kind of row a request is built from.
fn history() -> Vec<MessageRecord> {
    let mut call = MessageRecord::new(Role::Assistant, "").with_tool_calls(CALLS);
    call.content = None;
    let mut unanswered = MessageRecord::new(Role::Assistant, "let me look")
        .with_tool_calls(r#"[{"function":{"arguments":"{}","name":"lookup"},"id":"c2","type":"function"}]"#);
    unanswered.name = Some("helper".into());
    vec![
        MessageRecord::new(Role::User, "first"),
        call,
        MessageRecord::new(Role::Tool, "42").with_tool_call_id("c1"),
        MessageRecord::new(Role::User, "a note").with_silent(true),
        MessageRecord::new(Role::Assistant, "").with_extra("status", json!("failed")),
        unanswered,
        MessageRecord::new(Role::User, "second"),
        MessageRecord::new(Role::Assistant, "an answer").with_extra("finish_reason", json!("stop")),
    ]
}

/// The requests of a thread of `agent` on `store` with [`history`], sent `"go"`, whose model
/// calls `lookup` once and then answers.
async fn requests(store: impl MessageStore, agent: &str) -> (Vec<ModelRequest>, Vec<HookMessage>) {
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("c3", "lookup", r#"{"key":"x\ny"}"#),
        ScriptedResponse::text("done"),
    ]);
    let lookup = FnTool::new("lookup", "Looks a word up.", |_| async { HookToolResult::success("42") });
    let runtime = Runtime::builder()
        .store(store)
        .agent::<lent_plain>()
        .agent::<lent_filtered>()
        .model("scripted", model.clone())
        .tool(lookup)
        .build()
        .unwrap();
    let thread = runtime.create_thread(agent, ThreadOptions::default()).await.unwrap();
    for message in history() {
        thread.inject_message(message).await.unwrap();
    }
    let outcome = thread.send("go").await.unwrap();
    assert_eq!(outcome.reply.as_deref(), Some("done"));
    (model.requests(), thread.messages().await.unwrap())
}

fn shape(request: &ModelRequest) -> Vec<Value> {
    request.messages.iter().map(|message| serde_json::to_value(message).unwrap()).collect()
}

#[tokio::test]
async fn a_request_from_the_lent_history_is_the_request_from_a_filter_chains_snapshot() {
    let (lent, _) = requests(InMemoryStore::new(), "lent_plain").await;
    let (snapshot, stored) = requests(InMemoryStore::new(), "lent_filtered").await;
    assert_eq!(lent.len(), 2);
    for (lent, snapshot) in lent.iter().zip(&snapshot) {
        assert_eq!(shape(lent), shape(snapshot));
    }
    // What R9 makes of that history: the failed row and the unanswered call are not sent, nor
    // (without `include_past_tools`) the exchange before the current turn; the silent message is.
    let first = shape(&lent[0]);
    let roles: Vec<&str> = first.iter().map(|message| message["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "user", "assistant", "user", "assistant", "user"]);
    assert_eq!(first[3]["content"], "let me look");
    assert_eq!(first[3]["name"], "helper");
    assert!(first[3].get("tool_calls").is_none(), "the unanswered call is not sent: {}", first[3]);
    // The current turn's exchange is sent, its calls as their stored text reads.
    let step = stored.iter().rev().find(|message| message.tool_calls.is_some()).unwrap();
    let text = step.tool_calls.as_deref().unwrap();
    let second = shape(&lent[1]);
    let sent = second.iter().rev().find(|message| message.get("tool_calls").is_some()).unwrap();
    assert_eq!(sent["tool_calls"], serde_json::from_str::<Value>(text).unwrap());
}

#[cfg(feature = "sqlite")]
#[tokio::test]
async fn a_store_that_lends_through_the_default_sends_the_same_request() {
    let directory = std::env::temp_dir().join(format!("hooks-lent-history-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let path = directory.join("lent.db");
    let _ = std::fs::remove_file(&path);
    let sqlite = hooks_runtime::store::SqliteStore::open(&path).unwrap();
    let (from_sqlite, _) = requests(sqlite, "lent_plain").await;
    let (in_memory, _) = requests(InMemoryStore::new(), "lent_plain").await;
    assert_eq!(from_sqlite.len(), in_memory.len());
    for (a, b) in from_sqlite.iter().zip(&in_memory) {
        assert_eq!(shape(a), shape(b));
    }
    std::fs::remove_dir_all(&directory).unwrap();
}

/// A chain's snapshot is copied into a buffer an earlier assembly of the runtime used: a thread
/// with a shorter history, or other texts, must find nothing of the earlier thread's in it.
#[tokio::test]
async fn a_snapshot_in_a_buffer_another_thread_used_holds_only_this_threads_messages() {
    let model = ScriptedModel::new([
        ScriptedResponse::text("one"),
        ScriptedResponse::text("two"),
        ScriptedResponse::text("three"),
    ]);
    let runtime = Runtime::builder()
        .agent::<lent_plain>()
        .agent::<lent_filtered>()
        .model("scripted", model.clone())
        .tool(FnTool::new("lookup", "Looks a word up.", |_| async { HookToolResult::success("42") }))
        .build()
        .unwrap();
    let long = runtime.create_thread("lent_filtered", ThreadOptions::default()).await.unwrap();
    for message in history() {
        long.inject_message(message).await.unwrap();
    }
    long.send("a long conversation's last message").await.unwrap();
    let short_texts = [MessageRecord::new(Role::User, "hi"), MessageRecord::new(Role::Assistant, "hello")];
    let filtered = runtime.create_thread("lent_filtered", ThreadOptions::default()).await.unwrap();
    let plain = runtime.create_thread("lent_plain", ThreadOptions::default()).await.unwrap();
    for thread in [&filtered, &plain] {
        for message in &short_texts {
            thread.inject_message(message.clone()).await.unwrap();
        }
        thread.send("go").await.unwrap();
    }
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(shape(&requests[1]), shape(&requests[2]), "the chain's request against the lent one");
    let contents: Vec<&str> = requests[1].messages.iter().filter_map(|message| message.content.as_deref()).collect();
    assert_eq!(contents, ["Reply.", "hi", "hello", "go"]);
}
