//! A message a `before_create_message` hook blocks with `HookError::block`: the run's
//! `run_finished` event carries the reason the hook gave (`blocked`), and an ordinary hook
//! failure's message never reaches the client.

use crate::support;

use hooks_runtime::Runtime;
use hooks_runtime::model::ScriptedModel;
use hooks_runtime::prelude::*;
use hooks_server::ServerConfig;
use support::{ALICE, Server};

#[hook(before_create_message, id = "blocks_account_numbers")]
fn blocks_account_numbers(_state: &ThreadState, message: MessageRecord) -> Result<MessageRecord, HookError> {
    match message.content.as_deref() {
        Some(text) if text.contains("ACCT") => Err(HookError::block("account numbers are not sent to the model")),
        Some(text) if text.contains("BROKEN") => Err(HookError::new("SECRET detail of a failure")),
        _ => Ok(message),
    }
}

define_prompt! { name: blocked_prompt, model: "scripted", prompt: "Hi." }
define_agent! {
    name: blocked_agent,
    side_a: { prompt: blocked_prompt, stop_on_response: true },
    side_b: { human: true },
    hooks: [blocks_account_numbers],
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocked_a_blocked_messages_reason_is_in_run_finished() {
    let runtime =
        Runtime::builder().agent::<blocked_agent>().model("scripted", ScriptedModel::new([])).build().unwrap();
    let server = Server::start(runtime, ServerConfig::default()).await;
    let thread = server.create_thread(ALICE, "blocked_agent").await;
    let mut stream = server.stream(&format!("/threads/{thread}/events"), ALICE, None).await;

    let (status, body) = server.post(&format!("/threads/{thread}/messages"), ALICE, r#"{"content":"ACCT 12"}"#).await;
    assert_eq!(status, 202, "{body}");
    let events = stream.until("run_finished").await;
    let finished = &events.last().unwrap().data;
    assert_eq!(finished["status"], "failed", "{finished}");
    assert_eq!(finished["reason"], "message_hook_error", "{finished}");
    assert_eq!(finished["blocked"], "account numbers are not sent to the model", "{finished}");

    server.post(&format!("/threads/{thread}/messages"), ALICE, r#"{"content":"BROKEN"}"#).await;
    let events = stream.until("run_finished").await;
    let finished = &events.last().unwrap().data;
    assert_eq!(finished["reason"], "message_hook_error", "{finished}");
    assert!(finished.get("blocked").is_none(), "{finished}");
    assert!(!events.iter().any(|e| e.data.to_string().contains("SECRET")), "{events:#?}");
}
