//! Durable runs: an accepted input is committed before `queue_message` answers; recovery settles
//! a run a stopped process left `running`, answers its open tool calls and runs its inbox (each
//! store); abort stops a streaming reply, a hung model and a slow tool within about 100 ms; the
//! runtime's size caps apply to a custom model.

#[cfg(feature = "postgres")]
use crate::support_store;
use crate::support_tools::until_every_task_waits;

use std::sync::Arc;
use std::time::{Duration, Instant};

use hooks_runtime::model::{Model, ModelError, ModelEvent, ModelRequest, ModelStream, ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{
    FailReason, InMemoryStore, InboxEntry, InputTake, MessageStore, SqliteStore, StopReason, ThreadRecord, ThreadStatus,
};
use hooks_runtime::tool::FnTool;
use hooks_runtime::{RecoveryPolicy, Runtime, RuntimeBuilder, Thread, ThreadEvent, ThreadOptions};

define_prompt! { name: durable_prompt, model: "m", prompt: "Work.", tools: ["durable_tool"] }
define_agent! { name: durable_agent, side_a: { prompt: durable_prompt, stop_on_response: true }, side_b: { human: true } }

/// How long an abort may take to stop a run: its promise (`Thread::abort`; the signal is polled
/// every 10 ms while a step waits). The abort tests run on paused time, so this is a bound on
/// tokio's clock, which moves only when every task waits: a loaded machine cannot fail it.
const ABORT_BOUND: Duration = Duration::from_millis(100);

fn quick_tool() -> FnTool {
    FnTool::new("durable_tool", "Works.", |_| async { HookToolResult::success("worked") })
}

fn slow_tool() -> FnTool {
    FnTool::new("durable_tool", "Works slowly.", |_| async {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        HookToolResult::success("too late")
    })
}

/// A runtime whose recovery settles an interrupted turn and stops it (`failed (owner_lost)`).
fn runtime_on(store: Arc<dyn MessageStore>, model: impl Model) -> Runtime {
    runtime_with(store, model, RecoveryPolicy::Settle)
}

fn runtime_with(store: Arc<dyn MessageStore>, model: impl Model, policy: RecoveryPolicy) -> Runtime {
    Runtime::builder()
        .agent::<durable_agent>()
        .model("m", model)
        .tool(quick_tool())
        .store(store)
        .recovery_policy(policy)
        .build()
        .unwrap()
}

fn texts(messages: &[HookMessage]) -> Vec<String> {
    messages.iter().map(|m| m.content.clone().unwrap_or_default()).collect()
}

/// Every assistant tool call has a tool result after it.
fn assert_provider_valid(messages: &[HookMessage]) {
    for (at, message) in messages.iter().enumerate() {
        let Some(calls) = message.tool_calls.as_deref() else { continue };
        let calls: Vec<HookToolCall> = serde_json::from_str(calls).unwrap();
        for call in calls {
            let answered = messages[at..].iter().any(|m| m.tool_call_id.as_deref() == Some(call.id.as_str()));
            assert!(answered, "tool call {} has no result: {messages:#?}", call.id);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Accepted means committed.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_message_commits_the_input_before_it_answers() {
    let dir = std::env::temp_dir().join(format!("agent-hooks-durable-commit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("threads.db");
    let runtime = runtime_on(Arc::new(SqliteStore::open(&path).unwrap()), ScriptedModel::new([]));
    let thread = runtime.create_thread("durable_agent", ThreadOptions::default()).await.unwrap();
    let input = thread.queue_message(MessageRecord::new(Role::User, "keep me")).await.unwrap();

    // Another connection, as the next process would open the file.
    let reader = SqliteStore::open(&path).unwrap();
    let pending = reader.inbox().unwrap().pending_inputs(thread.id()).await.unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!((pending[0].id.as_str(), pending[0].message.content.as_deref()), (input.as_str(), Some("keep me")));
    assert!(reader.messages(thread.id()).await.unwrap().is_empty(), "stored as a message only when a run takes it");
    drop(runtime);
    std::fs::remove_dir_all(dir).unwrap();
}

#[tokio::test]
async fn a_store_without_an_inbox_refuses_queue_message_naming_what_to_implement() {
    /// A store that forwards everything but offers no inbox.
    struct NoInbox(InMemoryStore);

    #[hooks_runtime::async_trait]
    impl MessageStore for NoInbox {
        async fn create_thread(&self, thread: &ThreadRecord) -> Result<(), hooks_runtime::store::StoreError> {
            self.0.create_thread(thread).await
        }
        async fn load_thread(&self, id: &str) -> Result<Option<ThreadRecord>, hooks_runtime::store::StoreError> {
            self.0.load_thread(id).await
        }
        async fn set_value(
            &self,
            id: &str,
            key: &str,
            value: &serde_json::Value,
        ) -> Result<(), hooks_runtime::store::StoreError> {
            self.0.set_value(id, key, value).await
        }
        async fn set_status(&self, id: &str, status: &ThreadStatus) -> Result<(), hooks_runtime::store::StoreError> {
            self.0.set_status(id, status).await
        }
        async fn hand_off(
            &self,
            id: &str,
            agent: &str,
            message: Option<&HookMessage>,
        ) -> Result<(), hooks_runtime::store::StoreError> {
            self.0.hand_off(id, agent, message).await
        }
        async fn insert_message(
            &self,
            id: &str,
            message: &HookMessage,
        ) -> Result<(), hooks_runtime::store::StoreError> {
            self.0.insert_message(id, message).await
        }
        async fn update_message(
            &self,
            id: &str,
            message_id: &str,
            update: &MessageUpdate,
        ) -> Result<HookMessage, hooks_runtime::store::StoreError> {
            self.0.update_message(id, message_id, update).await
        }
        async fn messages(&self, id: &str) -> Result<Vec<HookMessage>, hooks_runtime::store::StoreError> {
            self.0.messages(id).await
        }
        async fn threads_of_user(&self, user: &str) -> Result<Vec<ThreadRecord>, hooks_runtime::store::StoreError> {
            self.0.threads_of_user(user).await
        }
        async fn user_values(
            &self,
            user: &str,
        ) -> Result<Vec<hooks_runtime::store::UserValue>, hooks_runtime::store::StoreError> {
            self.0.user_values(user).await
        }
        async fn set_user_value(
            &self,
            user: &str,
            key: &str,
            value: Option<&serde_json::Value>,
        ) -> Result<Option<serde_json::Value>, hooks_runtime::store::StoreError> {
            self.0.set_user_value(user, key, value).await
        }
        async fn unsettled_threads(&self) -> Result<Vec<String>, hooks_runtime::store::StoreError> {
            self.0.unsettled_threads().await
        }
    }

    let runtime = runtime_on(Arc::new(NoInbox(InMemoryStore::new())), ScriptedModel::new([]));
    let thread = runtime.create_thread("durable_agent", ThreadOptions::default()).await.unwrap();
    let error = thread.queue_message(MessageRecord::new(Role::User, "hi")).await.unwrap_err().to_string();
    assert!(error.contains("keeps no inbox") && error.contains("MessageStore::inbox"), "{error}");
}

#[tokio::test]
async fn run_input_takes_its_entry_once_and_a_second_run_finds_it_gone() {
    let runtime = runtime_on(Arc::new(InMemoryStore::new()), ScriptedModel::new([ScriptedResponse::text("hi")]));
    let thread = runtime.create_thread("durable_agent", ThreadOptions::default()).await.unwrap();
    let input = thread.queue_message(MessageRecord::new(Role::User, "hello")).await.unwrap();
    let outcome = thread.run_input(&input).await.unwrap().expect("in the inbox");
    assert_eq!(outcome.status, ThreadStatus::Idle);
    assert!(thread.run_input(&input).await.unwrap().is_none(), "taken: no second run");
    assert_eq!(texts(&thread.messages().await.unwrap()), ["hello", "hi"]);
}

// ---------------------------------------------------------------------------------------------
// Recovery, on each store: a thread left `running` with an open tool call and an input.

/// What a process killed mid-run leaves: status `running`, an assistant tool call without a
/// result, and an accepted input in the inbox.
async fn leave_a_crashed_run(store: &dyn MessageStore) -> String {
    let record = ThreadRecord::new(format!("thread_crashed_{}", std::process::id()), "durable_agent", 1);
    store.create_thread(&record).await.unwrap();
    store.insert_message(&record.id, &HookMessage::new("msg_1", Role::User, "first", 1)).await.unwrap();
    let calls = serde_json::json!([HookToolCall::new("call_open", "durable_tool", "{}")]).to_string();
    let mut call = HookMessage::new("msg_2", Role::Assistant, "", 2).with_tool_calls(calls);
    call.content = None;
    store.insert_message(&record.id, &call).await.unwrap();
    store.set_status(&record.id, &ThreadStatus::Running).await.unwrap();
    store
        .inbox()
        .unwrap()
        .enqueue_input(&record.id, &InboxEntry::new(MessageRecord::new(Role::User, "second")))
        .await
        .unwrap();
    record.id
}

async fn recovery_settles_and_runs_the_inbox(store: Arc<dyn MessageStore>) {
    let thread_id = leave_a_crashed_run(store.as_ref()).await;
    let runtime = runtime_on(store.clone(), ScriptedModel::new([ScriptedResponse::text("answered")]));
    let mut recovery = runtime.recover().await.unwrap();
    assert_eq!(recovery.settled, std::slice::from_ref(&thread_id));
    assert_eq!(recovery.resumed, std::slice::from_ref(&thread_id));
    recovery.wait_for_inboxes().await;

    let messages = store.messages(&thread_id).await.unwrap();
    assert_provider_valid(&messages);
    let interrupted = messages.iter().find(|m| m.tool_call_id.as_deref() == Some("call_open")).unwrap();
    assert_eq!(interrupted.extra.get("tool_status"), Some(&serde_json::json!("error")));
    assert_eq!(interrupted.extra.get("tool_interrupted"), Some(&serde_json::json!(true)), "G12: marked, not a failure");
    assert_eq!(texts(&messages)[3..], ["second", "answered"]);
    assert!(store.inbox().unwrap().pending_inputs(&thread_id).await.unwrap().is_empty());
    assert_eq!(store.load_thread(&thread_id).await.unwrap().unwrap().status, ThreadStatus::Idle);
    assert!(store.unsettled_threads().await.unwrap().is_empty());
    // Nothing left to do: a second recovery settles nothing.
    assert!(runtime.recover().await.unwrap().settled.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recovery_settles_a_running_thread_and_runs_its_inbox_in_memory() {
    recovery_settles_and_runs_the_inbox(Arc::new(InMemoryStore::new())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recovery_settles_a_running_thread_and_runs_its_inbox_on_sqlite() {
    recovery_settles_and_runs_the_inbox(Arc::new(SqliteStore::in_memory().unwrap())).await;
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recovery_settles_a_running_thread_and_runs_its_inbox_on_postgres() {
    use hooks_runtime::store::{PostgresOptions, PostgresStore};
    let (url, schema) = support_store::fresh_postgres_schema().await;
    let store = PostgresStore::connect_with(&url, PostgresOptions::new().schema(&schema).max_connections(4))
        .await
        .unwrap_or_else(|error| panic!("{error}; start PostgreSQL or set HOOKS_DATABASE_URL"));
    recovery_settles_and_runs_the_inbox(Arc::new(store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_use_of_a_runtime_recovers_without_a_new_send() {
    let store: Arc<dyn MessageStore> = Arc::new(SqliteStore::in_memory().unwrap());
    let thread_id = leave_a_crashed_run(store.as_ref()).await;
    let runtime = runtime_on(store.clone(), ScriptedModel::new([ScriptedResponse::text("answered")]));
    let thread = runtime.open_thread(&thread_id).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !store.inbox().unwrap().pending_inputs(&thread_id).await.unwrap().is_empty()
        || store.load_thread(&thread_id).await.unwrap().unwrap().status != ThreadStatus::Idle
    {
        assert!(Instant::now() < deadline, "the inbox never ran");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_provider_valid(&thread.messages().await.unwrap());
}

/// O8: under the default policy the interrupted turn goes on by itself: the open call keeps its
/// interrupted result, the model is asked again and replies, then the inbox runs.
async fn a_crashed_turn_resumes_to_a_reply(store: Arc<dyn MessageStore>) {
    let thread_id = leave_a_crashed_run(store.as_ref()).await;
    let model = ScriptedModel::new([ScriptedResponse::text("resumed"), ScriptedResponse::text("answered")]);
    let runtime = runtime_with(store.clone(), model.clone(), RecoveryPolicy::default());
    let mut recovery = runtime.recover().await.unwrap();
    assert_eq!(recovery.settled, std::slice::from_ref(&thread_id));
    assert_eq!(recovery.continued, std::slice::from_ref(&thread_id));
    recovery.wait_for_inboxes().await;
    let messages = store.messages(&thread_id).await.unwrap();
    assert_provider_valid(&messages);
    let interrupted = messages.iter().find(|m| m.tool_call_id.as_deref() == Some("call_open")).unwrap();
    assert!(interrupted.content.as_deref().unwrap().contains("interrupted"), "{:?}", interrupted.content);
    assert_eq!(texts(&messages)[3..], ["resumed", "second", "answered"]);
    assert_eq!(model.requests().len(), 2, "asked again once, then for the input; the tool never ran");
    ScriptedModel::check_messages(&model.requests()[0].messages).unwrap();
    assert_eq!(store.load_thread(&thread_id).await.unwrap().unwrap().status, ThreadStatus::Idle);
    assert!(runtime.recover().await.unwrap().continued.is_empty(), "a finished turn is not resumed twice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn o8_a_crashed_turn_resumes_to_a_reply_in_memory() {
    a_crashed_turn_resumes_to_a_reply(Arc::new(InMemoryStore::new())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn o8_a_crashed_turn_resumes_to_a_reply_on_sqlite() {
    a_crashed_turn_resumes_to_a_reply(Arc::new(SqliteStore::in_memory().unwrap())).await;
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn o8_a_crashed_turn_resumes_to_a_reply_on_postgres() {
    use hooks_runtime::store::{PostgresOptions, PostgresStore};
    let (url, schema) = support_store::fresh_postgres_schema().await;
    let store = PostgresStore::connect_with(&url, PostgresOptions::new().schema(&schema).max_connections(4))
        .await
        .unwrap_or_else(|error| panic!("{error}; start PostgreSQL or set HOOKS_DATABASE_URL"));
    a_crashed_turn_resumes_to_a_reply(Arc::new(store)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn o8_the_settle_policy_leaves_a_recovered_thread_without_inputs_failed_owner_lost() {
    let store: Arc<dyn MessageStore> = Arc::new(InMemoryStore::new());
    let thread_id = leave_a_crashed_run(store.as_ref()).await;
    // No input: the settlement is the last word.
    let input = store.inbox().unwrap().pending_inputs(&thread_id).await.unwrap().remove(0);
    assert!(store.inbox().unwrap().take_input(&thread_id, &InputTake::new(&input.id)).await.unwrap());
    let runtime = runtime_on(store.clone(), ScriptedModel::new([]));
    let recovery = runtime.recover().await.unwrap();
    assert_eq!(recovery.settled, std::slice::from_ref(&thread_id));
    assert!(recovery.resumed.is_empty());
    let owner_lost = ThreadStatus::Failed(FailReason::OwnerLost);
    assert_eq!(store.load_thread(&thread_id).await.unwrap().unwrap().status, owner_lost);
}

// ---------------------------------------------------------------------------------------------
// Abort that stops.

/// A model that streams a word every 20 ms and never ends.
struct EndlessStream;

struct Endless;

#[hooks_runtime::async_trait]
impl ModelStream for Endless {
    async fn next_event(&mut self) -> Option<Result<ModelEvent, ModelError>> {
        tokio::time::sleep(Duration::from_millis(20)).await;
        Some(Ok(ModelEvent::TextDelta("word ".into())))
    }
}

#[hooks_runtime::async_trait]
impl Model for EndlessStream {
    async fn stream(&self, _request: ModelRequest) -> Result<Box<dyn ModelStream>, ModelError> {
        Ok(Box::new(Endless))
    }
}

/// A model whose `stream()` never answers.
struct HungModel;

#[hooks_runtime::async_trait]
impl Model for HungModel {
    async fn stream(&self, _request: ModelRequest) -> Result<Box<dyn ModelStream>, ModelError> {
        std::future::pending().await
    }
}

/// Sends, waits until the run is `running` and `settle` has passed, aborts, and returns the
/// outcome, which must come within `ABORT_BOUND` of the abort.
async fn abort_after(thread: &Thread, settle: Duration) -> hooks_runtime::RunOutcome {
    let mut events = thread.subscribe();
    let run = thread.clone();
    let send = tokio::spawn(async move { run.send("go").await });
    loop {
        if let Ok(ThreadEvent::Status { status: ThreadStatus::Running }) = events.recv().await {
            break;
        }
    }
    tokio::time::sleep(settle).await;
    thread.abort();
    tokio::time::timeout(ABORT_BOUND, send).await.expect("the run stopped within the abort's bound").unwrap().unwrap()
}

// Paused time: the stream's, the tool's and the abort poll's timers are tokio's.
#[tokio::test(start_paused = true)]
async fn abort_stops_a_streaming_reply_and_stores_none_of_it() {
    let runtime = runtime_on(Arc::new(InMemoryStore::new()), EndlessStream);
    let thread = runtime.create_thread("durable_agent", ThreadOptions::default()).await.unwrap();
    let outcome = abort_after(&thread, Duration::from_millis(100)).await;
    assert_eq!(outcome.status, ThreadStatus::Stopped(StopReason::Aborted));
    assert_eq!(texts(&thread.messages().await.unwrap()), ["go"], "the partial reply is dropped");
}

// Paused time: the stream's, the tool's and the abort poll's timers are tokio's.
#[tokio::test(start_paused = true)]
async fn abort_stops_a_model_that_never_answers() {
    let runtime = runtime_on(Arc::new(InMemoryStore::new()), HungModel);
    let thread = runtime.create_thread("durable_agent", ThreadOptions::default()).await.unwrap();
    let outcome = abort_after(&thread, Duration::from_millis(50)).await;
    assert_eq!(outcome.status, ThreadStatus::Stopped(StopReason::Aborted));
    assert_eq!(thread.status(), ThreadStatus::Stopped(StopReason::Aborted));
    // The thread is free again.
    assert!(
        tokio::time::timeout(Duration::from_secs(5), thread.inject_message(MessageRecord::new(Role::User, "x")))
            .await
            .is_ok()
    );
}

// Paused time: the stream's, the tool's and the abort poll's timers are tokio's.
#[tokio::test(start_paused = true)]
async fn abort_stops_a_slow_tool_and_answers_its_call() {
    let model = ScriptedModel::new([ScriptedResponse::tool_call("call_slow", "durable_tool", "{}")]);
    let runtime = Runtime::builder()
        .agent::<durable_agent>()
        .model("m", model)
        .tool(slow_tool())
        .store(SqliteStore::in_memory().unwrap())
        .build()
        .unwrap();
    let thread = runtime.create_thread("durable_agent", ThreadOptions::default()).await.unwrap();
    let outcome = abort_after(&thread, Duration::from_millis(100)).await;
    assert_eq!(outcome.status, ThreadStatus::Stopped(StopReason::Aborted));
    let messages = thread.messages().await.unwrap();
    assert_provider_valid(&messages);
    let result = messages.iter().find(|m| m.tool_call_id.as_deref() == Some("call_slow")).unwrap();
    assert_eq!(result.content.as_deref(), Some("the tool call was aborted before it finished"));
    assert_eq!(result.extra.get("tool_status"), Some(&serde_json::json!("error")));
}

// ---------------------------------------------------------------------------------------------
// Caps on any model.

/// A model that streams `text` in one delta, or one tool call with `arguments`.
struct OneShot {
    text: String,
    arguments: Option<String>,
}

struct OneShotStream(Vec<ModelEvent>);

#[hooks_runtime::async_trait]
impl ModelStream for OneShotStream {
    async fn next_event(&mut self) -> Option<Result<ModelEvent, ModelError>> {
        (!self.0.is_empty()).then(|| Ok(self.0.remove(0)))
    }
}

#[hooks_runtime::async_trait]
impl Model for OneShot {
    async fn stream(&self, _request: ModelRequest) -> Result<Box<dyn ModelStream>, ModelError> {
        let events = match &self.arguments {
            Some(arguments) => vec![
                ModelEvent::ToolCallStart { index: 0, id: "call_big".into(), name: "durable_tool".into() },
                ModelEvent::ToolCallArguments { index: 0, fragment: arguments.clone() },
                ModelEvent::ToolCallEnd { index: 0 },
            ],
            None => vec![ModelEvent::TextDelta(self.text.clone())],
        };
        Ok(Box::new(OneShotStream(events)))
    }
}

fn capped(model: OneShot) -> RuntimeBuilder {
    Runtime::builder()
        .agent::<durable_agent>()
        .model("m", model)
        .tool(quick_tool())
        .max_reply_bytes(16)
        .max_tool_argument_bytes(16)
}

#[tokio::test]
async fn the_reply_cap_applies_to_a_custom_model() {
    let runtime = capped(OneShot { text: "x".repeat(17), arguments: None }).build().unwrap();
    let thread = runtime.create_thread("durable_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("go").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Failed(FailReason::ModelError));
    let error = outcome.error.unwrap().to_string();
    assert!(error.contains("cap of 16 bytes") && error.contains("RuntimeBuilder::max_reply_bytes"), "{error}");

    let runtime = capped(OneShot { text: "x".repeat(16), arguments: None }).build().unwrap();
    let thread = runtime.create_thread("durable_agent", ThreadOptions::default()).await.unwrap();
    assert_eq!(thread.send("go").await.unwrap().status, ThreadStatus::Idle, "at the cap is allowed");
}

#[tokio::test]
async fn the_tool_argument_cap_applies_to_a_custom_model() {
    let arguments = format!("{{\"a\":\"{}\"}}", "x".repeat(20));
    let runtime = capped(OneShot { text: String::new(), arguments: Some(arguments) }).build().unwrap();
    let thread = runtime.create_thread("durable_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("go").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Failed(FailReason::ModelError));
    let error = outcome.error.unwrap().to_string();
    assert!(error.contains("RuntimeBuilder::max_tool_argument_bytes"), "{error}");
    assert_provider_valid(&thread.messages().await.unwrap());
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_postgres_sweeper_recovers_a_dead_owners_thread_once_its_lease_expires() {
    use hooks_runtime::__test::PostgresLeases;
    use hooks_runtime::store::{PostgresOptions, PostgresStore};
    let ttl = Duration::from_millis(1500);
    let sweep = Duration::from_millis(100);
    let (url, schema) = support_store::fresh_postgres_schema().await;
    let options = PostgresOptions::new().schema(&schema).max_connections(4).run_lease_ttl(ttl).recovery_sweep(sweep);
    let store = Arc::new(
        PostgresStore::connect_with(&url, options)
            .await
            .unwrap_or_else(|error| panic!("{error}; start PostgreSQL or set HOOKS_DATABASE_URL")),
    );
    let thread_id = leave_a_crashed_run(store.as_ref()).await;
    // The dead owner's lease, never renewed: live for one more ttl. (Acquiring it settles the
    // `running` left before, so the dead owner's own run sets it again.)
    store.try_acquire_lease(&thread_id, "dead-owner", ttl).await.unwrap().unwrap();
    store.set_status(&thread_id, &ThreadStatus::Running).await.unwrap();
    let died = Instant::now();

    let runtime = runtime_on(store.clone(), ScriptedModel::new([ScriptedResponse::text("answered")]));
    // Any first use starts the sweeper; the dead owner's thread is not touched by it.
    runtime.create_thread("durable_agent", ThreadOptions::default()).await.unwrap();
    let status = store.load_thread(&thread_id).await.unwrap().unwrap().status;
    assert_eq!(status, ThreadStatus::Running, "the lease is still live after {:?}", died.elapsed());
    // The lease expires on PostgreSQL's clock, which nothing here can await: polled, with a
    // generous deadline. How soon (about the ttl and one sweep) is printed, not asserted.
    let deadline = Instant::now() + Duration::from_secs(30);
    while store.load_thread(&thread_id).await.unwrap().unwrap().status == ThreadStatus::Running {
        assert!(Instant::now() < deadline, "the sweeper never recovered the thread");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    println!("settled {:?} after the owner died (ttl {ttl:?}, sweep {sweep:?})", died.elapsed());
    let deadline = Instant::now() + Duration::from_secs(10);
    while !store.inbox().unwrap().pending_inputs(&thread_id).await.unwrap().is_empty()
        || store.load_thread(&thread_id).await.unwrap().unwrap().status != ThreadStatus::Idle
    {
        assert!(Instant::now() < deadline, "the inbox never ran");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let messages = store.messages(&thread_id).await.unwrap();
    assert_provider_valid(&messages);
    assert_eq!(texts(&messages)[3..], ["second", "answered"]);
    // The settlement is an event every process sees.
    let events = store.events_after(&thread_id, 0).await.unwrap();
    let owner_lost = serde_json::json!({ "type": "status", "status": "failed", "reason": "owner_lost" });
    assert!(events.iter().any(|event| event.event == owner_lost), "{events:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recovery_leaves_a_run_of_this_process_alone() {
    let model = ScriptedModel::new([ScriptedResponse::tool_call("call_slow", "durable_tool", "{}")]);
    let runtime = Runtime::builder()
        .agent::<durable_agent>()
        .model("m", model)
        .tool(slow_tool())
        .store(SqliteStore::in_memory().unwrap())
        .build()
        .unwrap();
    let thread = runtime.create_thread("durable_agent", ThreadOptions::default()).await.unwrap();
    let mut events = thread.subscribe();
    let run = thread.clone();
    let send = tokio::spawn(async move { run.send("go").await });
    while !matches!(events.recv().await, Ok(ThreadEvent::ToolCallStarted { .. })) {}
    let recovery = runtime.recover().await.unwrap();
    assert!(recovery.settled.is_empty(), "a live run is not a lost one: {recovery:?}");
    assert_eq!(runtime.store().load_thread(thread.id()).await.unwrap().unwrap().status, ThreadStatus::Running);
    thread.abort();
    let outcome = send.await.unwrap().unwrap();
    assert_eq!(outcome.status, ThreadStatus::Stopped(StopReason::Aborted));
}

// Paused time: the point at which the second run would have stored its message is the one at
// which every task waits (`until_every_task_waits`).
#[tokio::test(start_paused = true)]
async fn two_handles_of_one_thread_take_turns() {
    // A server's handle and recovery's (or any `open_thread`) are two handles of one thread:
    // their runs must not interleave.
    let runtime = runtime_on(Arc::new(InMemoryStore::new()), HungModel);
    let first = runtime.create_thread("durable_agent", ThreadOptions::default()).await.unwrap();
    let second = runtime.open_thread(first.id()).await.unwrap();
    let mut events = first.subscribe();
    let run = first.clone();
    let one = tokio::spawn(async move { run.send("one").await });
    loop {
        if let Ok(ThreadEvent::Status { status: ThreadStatus::Running }) = events.recv().await {
            break;
        }
    }
    let run = second.clone();
    let two = tokio::spawn(async move { run.send("two").await });
    until_every_task_waits().await;
    assert_eq!(texts(&first.messages().await.unwrap()), ["one"], "the second handle's run waits for its turn");
    first.abort();
    let outcome = tokio::time::timeout(Duration::from_secs(10), one).await.unwrap().unwrap().unwrap();
    assert_eq!(outcome.status, ThreadStatus::Stopped(StopReason::Aborted));
    // Now the second run has the thread: it stores its message and waits on the model.
    until_every_task_waits().await;
    assert_eq!(texts(&second.messages().await.unwrap()), ["one", "two"], "the second run took its turn");
    second.abort();
    let outcome = tokio::time::timeout(Duration::from_secs(10), two).await.unwrap().unwrap().unwrap();
    assert_eq!(outcome.status, ThreadStatus::Stopped(StopReason::Aborted));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_handle_of_a_thread_sees_its_run_and_can_abort_it() {
    // A server's handle and recovery's are two handles of one thread: a client of the first
    // must see the run of the second, its status, and be able to stop it.
    let runtime = runtime_on(Arc::new(InMemoryStore::new()), HungModel);
    let first = runtime.create_thread("durable_agent", ThreadOptions::default()).await.unwrap();
    let second = runtime.open_thread(first.id()).await.unwrap();
    let mut events = second.subscribe();
    let run = first.clone();
    let one = tokio::spawn(async move { run.send("one").await });
    let seen = tokio::time::timeout(Duration::from_secs(10), async {
        let mut seen = Vec::new();
        loop {
            match events.recv().await.unwrap() {
                ThreadEvent::Status { status: ThreadStatus::Running } => return seen,
                ThreadEvent::MessageCreated { role, .. } => seen.push(role),
                _ => {}
            }
        }
    })
    .await
    .expect("the other handle's run is seen");
    assert!(seen.is_empty(), "running comes first: {seen:?}");
    assert_eq!(second.status(), ThreadStatus::Running);
    let user_message = tokio::time::timeout(Duration::from_secs(10), events.recv()).await.unwrap().unwrap();
    assert!(
        matches!(user_message, ThreadEvent::MessageCreated { ref role, .. } if *role == Role::User),
        "{user_message:?}"
    );
    second.abort();
    let outcome = tokio::time::timeout(Duration::from_secs(10), one).await.unwrap().unwrap().unwrap();
    assert_eq!(outcome.status, ThreadStatus::Stopped("aborted".into()));
    assert_eq!(second.status(), ThreadStatus::Stopped("aborted".into()));
}
