//! A reply's text as it streams: `message_delta` events to `Thread::subscribe_text_deltas`
//! subscribers, in order, with their model step, and then the whole message in
//! `message_created` on the thread's ordinary events, which carry no deltas.

use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::tool::FnTool;
use hooks_runtime::{Runtime, ThreadEvent, ThreadOptions};

define_prompt! { name: delta_prompt, model: "scripted", prompt: "Chat.", tools: ["lookup"] }
define_agent! { name: delta_agent, side_a: { prompt: delta_prompt, stop_on_response: true } }

fn runtime(model: ScriptedModel) -> Runtime {
    Runtime::builder()
        .agent::<delta_agent>()
        .model("scripted", model)
        .tool(FnTool::new("lookup", "Looks it up.", |_args| async { HookToolResult::success("42") }))
        .build()
        .unwrap()
}

#[tokio::test]
async fn text_deltas_stream_in_order_with_their_step_and_the_message_follows_whole() {
    let reply = "The answer, after looking it up, is forty-two: ünïcode and all.";
    let model = ScriptedModel::new([
        ScriptedResponse::text("Let me look.").then_tool_call("call_1", "lookup", "{}"),
        ScriptedResponse::text(reply),
    ]);
    let runtime = runtime(model);
    let thread = runtime.create_thread("delta_agent", ThreadOptions::default()).await.unwrap();
    let mut deltas = thread.subscribe_text_deltas();
    let mut events = thread.subscribe();

    thread.send("What is it?").await.unwrap();

    let mut by_step: Vec<(u32, String)> = Vec::new();
    let mut count = 0;
    while let Ok(event) = deltas.try_recv() {
        let ThreadEvent::MessageDelta { step, delta } = event else { panic!("only deltas here, got {event:?}") };
        count += 1;
        match by_step.last_mut() {
            Some((last, text)) if *last == step => text.push_str(&delta),
            _ => by_step.push((step, delta)),
        }
    }
    assert_eq!(by_step, vec![(1, "Let me look.".to_owned()), (2, reply.to_owned())]);
    assert!(count > 2, "the reply streamed in pieces, not as one event ({count})");

    let mut created = Vec::new();
    while let Ok(event) = events.try_recv() {
        assert!(!matches!(event, ThreadEvent::MessageDelta { .. }), "no deltas on the ordinary events");
        if let ThreadEvent::MessageCreated { role: Role::Assistant, message, .. } = event {
            created.push(message.content.clone());
        }
    }
    assert_eq!(created.last().cloned().flatten().as_deref(), Some(reply), "message_created carries it whole");
}
