//! A message's `message_created` event reaches whoever listens once the message is stored: a
//! run hands its messages to the store uncopied when nobody listens, so a subscriber that starts
//! listening while the store writes one gets the stored message all the same.

use std::sync::Arc;
use std::time::Duration;

use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::MessageStore;
use hooks_runtime::{Runtime, ThreadEvent, ThreadOptions};
use tokio::sync::{Notify, Semaphore};

use crate::support_store::InterceptedInserts;

define_prompt! { name: message_events_prompt, model: "scripted", prompt: "Reply." }
define_agent! {
    name: message_events_agent,
    side_a: { prompt: message_events_prompt, stop_on_response: true },
    side_b: { human: true },
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_that_starts_listening_while_a_message_is_written_is_told_of_it() {
    // Each message insert says it started on `entered`, then waits for a permit of `open`.
    let (entered, open) = (Arc::new(Notify::new()), Arc::new(Semaphore::new(0)));
    let (enters, opens) = (entered.clone(), open.clone());
    let store = Arc::new(InterceptedInserts::new(Box::new(move || {
        let (enters, opens) = (enters.clone(), opens.clone());
        Box::pin(async move {
            enters.notify_one();
            opens.acquire().await.expect("the gate stays open").forget();
            Ok(())
        })
    })));
    let runtime = Runtime::builder()
        .agent::<message_events_agent>()
        .model("scripted", ScriptedModel::new([ScriptedResponse::text("Noted.")]))
        .store(store.clone())
        .build()
        .unwrap();
    let thread = runtime.create_thread("message_events_agent", ThreadOptions::default()).await.unwrap();
    let run = thread.clone();
    let sent = tokio::spawn(async move { run.send("Where is my order?").await });

    // The user's message is being written, and nobody listened when its write began.
    tokio::time::timeout(Duration::from_secs(10), entered.notified()).await.expect("the run stores the message");
    let mut events = thread.subscribe();
    // This insert, and every later one.
    open.add_permits(Semaphore::MAX_PERMITS / 2);
    let outcome = tokio::time::timeout(Duration::from_secs(10), sent).await.expect("the run ends").unwrap().unwrap();
    assert_eq!(outcome.reply.as_deref(), Some("Noted."));

    let mut created = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let ThreadEvent::MessageCreated { message, .. } = event {
            created.push((message.role, message.content.clone()));
        }
    }
    assert_eq!(
        created,
        [(Role::User, Some("Where is my order?".to_owned())), (Role::Assistant, Some("Noted.".to_owned()))],
        "both messages are told, the one written as the subscriber arrived included"
    );
    let stored = store.messages(thread.id()).await.unwrap();
    assert_eq!(stored.len(), 2);
}
