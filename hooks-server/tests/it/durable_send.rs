//! Accepted means committed: `POST /threads/{id}/messages` answers 202 only once the message is
//! in the thread's inbox, with the inbox entry's id as `runId`; a store that cannot take it is a
//! 503 naming the store, and no run starts. An input that a stopped process had accepted runs
//! when the process recovers (`Runtime::recover` before serving, or the server's first request),
//! and a client of its thread sees that run.

use crate::support;
use crate::watched_store::WatchedStore;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use hooks_runtime::model::{Model, ModelError, ModelEvent, ModelRequest, ModelStream, ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::InMemoryStore;
use hooks_runtime::{Runtime, ThreadOptions};
use hooks_server::ServerConfig;
use support::{ALICE, Server};

define_prompt! { name: durable_send_prompt, model: "scripted", prompt: "Reply." }
define_agent! {
    name: durable_send_agent,
    side_a: { prompt: durable_send_prompt, stop_on_response: true },
    side_b: { human: true },
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_is_accepted_only_once_committed_and_a_store_failure_is_a_503() {
    let store = Arc::new(WatchedStore::default());
    let runtime = Runtime::builder()
        .agent::<durable_send_agent>()
        .model("scripted", ScriptedModel::new([ScriptedResponse::text("hi")]))
        .store(store.clone())
        .build()
        .unwrap();
    let config = ServerConfig::default().catalog(vec!["durable_send_agent".into()]);
    let server = Server::start(runtime, config).await;
    let id = server.create_thread(ALICE, "durable_send_agent").await;

    let (status, accepted) = server.post(&format!("/threads/{id}/messages"), ALICE, r#"{"content":"hello"}"#).await;
    assert_eq!(status, 202, "{accepted}");
    let run_id = accepted["runId"].as_str().unwrap().to_owned();
    assert_eq!(*store.committed.lock().unwrap(), [run_id], "the run id is the committed entry's");

    store.refuse_inputs.store(true, Ordering::SeqCst);
    let (status, refused) = server.post(&format!("/threads/{id}/messages"), ALICE, r#"{"content":"lost?"}"#).await;
    assert_eq!(status, 503, "{refused}");
    let text = refused.to_string();
    assert!(text.contains("message store") && !text.contains("lost?") && !text.contains("disk"), "{text}");
    assert_eq!(store.committed.lock().unwrap().len(), 1);
}

/// A model that says it was called, then waits for `release` before it answers "recovered".
struct GatedModel {
    called: Arc<tokio::sync::Notify>,
    release: Arc<tokio::sync::Semaphore>,
}

struct OneDelta(Option<String>);

#[hooks_runtime::async_trait]
impl ModelStream for OneDelta {
    async fn next_event(&mut self) -> Option<Result<ModelEvent, ModelError>> {
        self.0.take().map(|text| Ok(ModelEvent::TextDelta(text)))
    }
}

#[hooks_runtime::async_trait]
impl Model for GatedModel {
    async fn stream(&self, _request: ModelRequest) -> Result<Box<dyn ModelStream>, ModelError> {
        self.called.notify_one();
        self.release.acquire().await.expect("the gate is open").forget();
        Ok(Box::new(OneDelta(Some("recovered".into()))))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_of_a_thread_sees_the_run_that_recovery_resumes() {
    let store = Arc::new(InMemoryStore::new());
    // A process accepted an input and stopped before its run.
    let thread_id = {
        let runtime = Runtime::builder()
            .agent::<durable_send_agent>()
            .model("scripted", ScriptedModel::new([]))
            .store(store.clone())
            .build()
            .unwrap();
        let thread = runtime.create_thread("durable_send_agent", ThreadOptions::new().user("alice")).await.unwrap();
        thread.queue_message(MessageRecord::new(Role::User, "still there?")).await.unwrap();
        thread.id().to_owned()
    };

    // The next process recovers it as it starts: the input runs on recovery's thread handle.
    let called = Arc::new(tokio::sync::Notify::new());
    let release = Arc::new(tokio::sync::Semaphore::new(0));
    let model = GatedModel { called: called.clone(), release: release.clone() };
    let runtime =
        Runtime::builder().agent::<durable_send_agent>().model("scripted", model).store(store.clone()).build().unwrap();
    // Recovered before the server takes requests, as `hooks_server::router_with` advises.
    let called_first = called.notified();
    runtime.recover().await.expect("recovery");
    let config = ServerConfig::default().catalog(vec!["durable_send_agent".into()]);
    let server = Server::start(runtime, config).await;
    tokio::time::timeout(support::PATIENCE, called_first).await.expect("recovery runs the input");

    // A client opens the thread while that run waits on the model.
    let (status, thread) = server.get(&format!("/threads/{thread_id}"), ALICE).await;
    assert_eq!(status, 200, "{thread}");
    assert_eq!(thread["status"], "running", "{thread}");
    let mut stream = server.stream(&format!("/threads/{thread_id}/events"), ALICE, None).await;
    release.add_permits(1);
    let mut replies = Vec::new();
    loop {
        let event = stream.next().await;
        match event.kind() {
            "message_created" if event.data["role"] == "assistant" => {
                replies.push(event.data["message"]["content"].clone());
            }
            "status" => {
                assert_eq!(event.data["status"], "idle", "{:?}", event.data);
                break;
            }
            _ => {}
        }
    }
    assert_eq!(replies, ["recovered"], "the recovered run's reply is on the stream");
    let (_, thread) = server.get(&format!("/threads/{thread_id}"), ALICE).await;
    assert_eq!(thread["status"], "idle", "the thread says what its stream said: {thread}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_that_opens_no_thread_starts_the_recovery_of_an_accepted_input() {
    let store = Arc::new(InMemoryStore::new());
    let runtime = || {
        Runtime::builder().agent::<durable_send_agent>().model("scripted", ScriptedModel::new([])).store(store.clone())
    };
    // A process accepted an input and stopped before its run.
    {
        let runtime = runtime().build().unwrap();
        let thread = runtime.create_thread("durable_send_agent", ThreadOptions::new().user("alice")).await.unwrap();
        thread.queue_message(MessageRecord::new(Role::User, "still there?")).await.unwrap();
    }
    let called = Arc::new(tokio::sync::Notify::new());
    let release = Arc::new(tokio::sync::Semaphore::new(1));
    let model = GatedModel { called: called.clone(), release };
    let runtime = runtime().model("scripted", model).build().unwrap();
    let server = Server::start(runtime, ServerConfig::default()).await;
    // A request that opens no thread (the runtime would recover at its first thread) starts it.
    let (status, values) = server.get("/user/values", ALICE).await;
    assert_eq!(status, 200, "{values}");
    tokio::time::timeout(support::PATIENCE, called.notified()).await.expect("the first request starts the recovery");
}
