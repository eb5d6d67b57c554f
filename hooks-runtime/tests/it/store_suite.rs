//! One message-store suite, run against every store so that they cannot drift: each test is a
//! generic function over a [`Fixture`], and [`suite!`] instantiates all of them per store
//! (`memory::`, `sqlite::`, `postgres::`). The PostgreSQL instance needs feature `postgres` and
//! a server (`HOOKS_DATABASE_URL`); it fails, never skips, when the server is unreachable.

use std::sync::Arc;

use hooks_runtime::approvals::{ApprovalOutcome, ApprovalState, ParkedToolCall, ToolCallChange};
use hooks_runtime::store::{
    FailReason, InMemoryStore, InboxEntry, InputTake, MessageStore, StopReason, StoreError, StoreErrorKind, TakeStatus,
    ThreadStatus,
};
use hooks_runtime::types::{HookMessage, MessageRecord, MessageUpdate, Role};
use serde_json::json;

#[cfg(feature = "postgres")]
use crate::postgres_support;
use crate::store_fixtures;

use store_fixtures::{full_message, message, thread};

/// A store under test and whatever it needs cleaned up afterwards.
trait Fixture: Sized {
    /// Opens a fresh, empty store.
    async fn open() -> Self;
    /// The store, as the runtime holds it.
    fn store(&self) -> Arc<dyn MessageStore>;
    /// Cleans up (a test that panics leaves its temporary data behind).
    async fn finish(self) {}
}

struct Memory(Arc<InMemoryStore>);

impl Fixture for Memory {
    async fn open() -> Self {
        Memory(Arc::new(InMemoryStore::new()))
    }

    fn store(&self) -> Arc<dyn MessageStore> {
        self.0.clone()
    }
}

#[cfg(feature = "sqlite")]
struct Sqlite {
    store: Arc<hooks_runtime::store::SqliteStore>,
    dir: std::path::PathBuf,
}

#[cfg(feature = "sqlite")]
impl Fixture for Sqlite {
    async fn open() -> Self {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("hooks-store-suite-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        let path = dir.join("store.db");
        let store = tokio::task::spawn_blocking(move || hooks_runtime::store::SqliteStore::open(path))
            .await
            .expect("open task")
            .expect("open the SQLite store");
        Sqlite { store: Arc::new(store), dir }
    }

    fn store(&self) -> Arc<dyn MessageStore> {
        self.store.clone()
    }

    async fn finish(self) {
        drop(self.store);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(feature = "postgres")]
struct Postgres {
    store: Arc<hooks_runtime::store::PostgresStore>,
    schema: postgres_support::PgSchema,
}

#[cfg(feature = "postgres")]
impl Fixture for Postgres {
    async fn open() -> Self {
        let schema = postgres_support::PgSchema::new("suite");
        let store = Arc::new(schema.store().await);
        Postgres { store, schema }
    }

    fn store(&self) -> Arc<dyn MessageStore> {
        self.store.clone()
    }

    async fn finish(self) {
        drop(self.store);
        self.schema.drop().await;
    }
}

// ---------------------------------------------------------------------------------------------
// Data

fn now_ms() -> i64 {
    let elapsed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    i64::try_from(elapsed.as_millis()).unwrap()
}

fn ids(messages: &[HookMessage]) -> Vec<&str> {
    messages.iter().map(|m| m.id.as_str()).collect()
}

// ---------------------------------------------------------------------------------------------
// The suite

fn entry(text: &str) -> InboxEntry {
    let mut record = MessageRecord::new(Role::User, text);
    record.extra.insert("channel".into(), json!("web"));
    InboxEntry::new(record)
}

async fn the_inbox_keeps_inputs_in_order_until_a_run_takes_each_once<F: Fixture>() {
    let f = F::open().await;
    let store = f.store();
    let inbox = store.inbox().unwrap();
    store.create_thread(&thread("t1")).await.unwrap();
    let (a, b) = (entry("a"), entry("b"));
    inbox.enqueue_input("t1", &a).await.unwrap();
    inbox.enqueue_input("t1", &b).await.unwrap();
    assert_eq!(inbox.pending_inputs("t1").await.unwrap(), [entry_like(&a), entry_like(&b)], "in order, whole");

    // Taken with its message: out of the inbox and into the history in one step.
    assert!(
        inbox.take_input("t1", &InputTake::new(&a.id).with_message(&message("m1", Role::User, "a"))).await.unwrap()
    );
    assert_eq!(inbox.pending_inputs("t1").await.unwrap(), [entry_like(&b)]);
    assert_eq!(ids(&store.messages("t1").await.unwrap()), ["m1"]);
    // Taken again (another run got there first): nothing is stored twice.
    assert!(
        !inbox.take_input("t1", &InputTake::new(&a.id).with_message(&message("m2", Role::User, "a"))).await.unwrap()
    );
    assert_eq!(ids(&store.messages("t1").await.unwrap()), ["m1"]);
    // Taken without a message (a hook prevented it): gone, nothing stored.
    assert!(inbox.take_input("t1", &InputTake::new(&b.id)).await.unwrap());
    assert!(inbox.pending_inputs("t1").await.unwrap().is_empty());
    assert_eq!(store.messages("t1").await.unwrap().len(), 1);

    let error = inbox.enqueue_input("missing", &entry("c")).await.unwrap_err();
    assert!(error.to_string().contains("missing"), "{error}");
    assert_eq!(error.kind(), StoreErrorKind::NotFound, "{error}");
    inbox.enqueue_input("t1", &a).await.unwrap();
    let error = inbox.enqueue_input("t1", &a).await.unwrap_err();
    assert!(error.to_string().contains("already exists"), "{error}");
    assert_eq!(error.kind(), StoreErrorKind::Conflict, "{error}");
    f.finish().await;
}

fn entry_like(entry: &InboxEntry) -> InboxEntry {
    let message = serde_json::from_value(serde_json::to_value(&entry.message).unwrap()).unwrap();
    InboxEntry::from_parts(entry.id.clone(), message, entry.enqueued_at)
}

async fn a_take_whose_insert_fails_leaves_the_input_in_the_inbox<F: Fixture>() {
    let f = F::open().await;
    let store = f.store();
    let inbox = store.inbox().unwrap();
    store.create_thread(&thread("t1")).await.unwrap();
    store.insert_message("t1", &message("m1", Role::User, "first")).await.unwrap();
    let a = entry("a");
    inbox.enqueue_input("t1", &a).await.unwrap();
    // The message id is taken: the insert fails, and with it the removal.
    assert!(
        inbox.take_input("t1", &InputTake::new(&a.id).with_message(&message("m1", Role::User, "a"))).await.is_err()
    );
    assert_eq!(inbox.pending_inputs("t1").await.unwrap(), [entry_like(&a)]);
    assert_eq!(store.messages("t1").await.unwrap().len(), 1);
    f.finish().await;
}

async fn one_pending_input_is_read_alone_while_it_is_in_the_inbox<F: Fixture>() {
    let f = F::open().await;
    let store = f.store();
    let inbox = store.inbox().unwrap();
    store.create_thread(&thread("t1")).await.unwrap();
    let (a, b) = (entry("a"), entry("b"));
    inbox.enqueue_input("t1", &a).await.unwrap();
    inbox.enqueue_input("t1", &b).await.unwrap();
    assert_eq!(inbox.pending_input("t1", &b.id).await.unwrap(), Some(entry_like(&b)));
    assert_eq!(inbox.pending_input("t1", "run_unknown").await.unwrap(), None);
    assert!(inbox.take_input("t1", &InputTake::new(&b.id)).await.unwrap());
    assert_eq!(inbox.pending_input("t1", &b.id).await.unwrap(), None, "taken");
    assert_eq!(inbox.pending_input("t1", &a.id).await.unwrap(), Some(entry_like(&a)));
    f.finish().await;
}

async fn a_running_take_sets_the_status_with_the_take_and_only_then<F: Fixture>() {
    let f = F::open().await;
    let store = f.store();
    let inbox = store.inbox().unwrap();
    store.create_thread(&thread("t1")).await.unwrap();
    let a = entry("a");
    inbox.enqueue_input("t1", &a).await.unwrap();
    let m1 = message("m1", Role::User, "a");
    let take = InputTake::new(&a.id).with_message(&m1).with_status(TakeStatus::Running);
    assert!(inbox.take_input("t1", &take).await.unwrap());
    assert_eq!(store.load_thread("t1").await.unwrap().unwrap().status, ThreadStatus::Running);
    assert_eq!(ids(&store.messages("t1").await.unwrap()), ["m1"]);
    assert!(inbox.pending_inputs("t1").await.unwrap().is_empty());

    // Taken already: neither the message nor the status is written.
    store.set_status("t1", &ThreadStatus::Idle).await.unwrap();
    let m2 = message("m2", Role::User, "a");
    let take = InputTake::new(&a.id).with_message(&m2).with_status(TakeStatus::Running);
    assert!(!inbox.take_input("t1", &take).await.unwrap());
    assert_eq!(store.load_thread("t1").await.unwrap().unwrap().status, ThreadStatus::Idle);
    assert_eq!(ids(&store.messages("t1").await.unwrap()), ["m1"]);

    // A take whose insert fails changes nothing: the input stays, and so does the status.
    let b = entry("b");
    inbox.enqueue_input("t1", &b).await.unwrap();
    let m1 = message("m1", Role::User, "b");
    let take = InputTake::new(&b.id).with_message(&m1).with_status(TakeStatus::Running);
    assert!(inbox.take_input("t1", &take).await.is_err());
    assert_eq!(inbox.pending_inputs("t1").await.unwrap(), [entry_like(&b)]);
    assert_eq!(store.load_thread("t1").await.unwrap().unwrap().status, ThreadStatus::Idle);
    f.finish().await;
}

async fn a_thread_left_running_is_unsettled_and_a_settled_one_is_not<F: Fixture>() {
    let f = F::open().await;
    let store = f.store();
    for id in ["running", "idle", "failed"] {
        store.create_thread(&thread(id)).await.unwrap();
    }
    store.set_status("running", &ThreadStatus::Running).await.unwrap();
    store.set_status("failed", &ThreadStatus::Failed(FailReason::ModelError)).await.unwrap();
    assert_eq!(store.unsettled_threads().await.unwrap(), ["running"]);
    store.set_status("running", &ThreadStatus::Idle).await.unwrap();
    assert!(store.unsettled_threads().await.unwrap().is_empty());
    f.finish().await;
}

async fn o2_a_handoff_is_stored_with_its_message_and_alone<F: Fixture>() {
    let f = F::open().await;
    let store = f.store();
    store.create_thread(&thread("t1")).await.unwrap();
    store.hand_off("t1", "billing", Some(&message("m1", Role::User, "over to billing"))).await.unwrap();
    assert_eq!(store.load_thread("t1").await.unwrap().unwrap().agent, "billing");
    assert_eq!(ids(&store.messages("t1").await.unwrap()), ["m1"]);
    // A handoff whose message a hook prevented changes the agent alone.
    store.hand_off("t1", "refunds", None).await.unwrap();
    assert_eq!(store.load_thread("t1").await.unwrap().unwrap().agent, "refunds");
    // One transaction: a message that cannot be stored leaves the agent as it was.
    assert!(store.hand_off("t1", "sales", Some(&message("m1", Role::User, "again"))).await.is_err());
    assert_eq!(store.load_thread("t1").await.unwrap().unwrap().agent, "refunds");
    assert_eq!(store.hand_off("nope", "sales", None).await.unwrap_err().kind(), StoreErrorKind::NotFound);
    f.finish().await;
}

fn tool_result(id: &str, call: &str, text: &str) -> HookMessage {
    message(id, Role::Tool, text).with_tool_call_id(call)
}

async fn o4_a_tool_call_has_one_stored_result<F: Fixture>() {
    let f = F::open().await;
    let store = f.store();
    let inbox = store.inbox().unwrap();
    store.create_thread(&thread("t1")).await.unwrap();
    store.create_thread(&thread("t2")).await.unwrap();
    store.insert_message("t1", &tool_result("r1", "call_1", "refunded")).await.unwrap();
    let second = store.insert_message("t1", &tool_result("r2", "call_1", "interrupted")).await.unwrap_err();
    assert_eq!(second.kind(), StoreErrorKind::Conflict, "{second}");
    // Through an inbox take and a handoff too.
    inbox.enqueue_input("t1", &entry("next")).await.unwrap();
    let input = inbox.pending_inputs("t1").await.unwrap().remove(0);
    assert!(
        inbox
            .take_input("t1", &InputTake::new(&input.id).with_message(&tool_result("r3", "call_1", "again")))
            .await
            .is_err()
    );
    assert!(store.hand_off("t1", "billing", Some(&tool_result("r4", "call_1", "again"))).await.is_err());
    // Another call, or the same call id in another thread, is another call.
    store.insert_message("t1", &tool_result("r5", "call_2", "done")).await.unwrap();
    store.insert_message("t2", &tool_result("r1", "call_1", "done")).await.unwrap();
    assert_eq!(ids(&store.messages("t1").await.unwrap()), ["r1", "r5"]);
    f.finish().await;
}

async fn o7_a_settled_call_stays_in_the_ledger_and_is_never_decided_again<F: Fixture>() {
    let f = F::open().await;
    let store = f.store();
    store.create_thread(&thread("t1")).await.unwrap();
    let waiting = ParkedToolCall::new("call_1", "refund", json!({"amount": 250}), 0, ApprovalState::Pending);
    store.approvals().unwrap().park_tool_calls("t1", &[waiting]).await.unwrap();
    let approve = ToolCallChange::new("call_1", ApprovalState::Pending, ApprovalState::Approved)
        .with_arguments(json!({"amount": 200}))
        .by("person");
    assert!(store.approvals().unwrap().advance_tool_call("t1", &approve).await.unwrap());
    let done = ToolCallChange::new("call_1", ApprovalState::Approved, ApprovalState::Done)
        .with_result(json!({"result": {}, "denied": false}));
    assert!(store.approvals().unwrap().advance_tool_call("t1", &done).await.unwrap());
    store.approvals().unwrap().settle_parked_tool_calls("t1").await.unwrap();
    assert!(
        store.approvals().unwrap().parked_tool_calls("t1").await.unwrap().is_empty(),
        "a settled step no longer waits"
    );
    let record = store.approvals().unwrap().tool_call("t1", "call_1").await.unwrap().expect("the ledger keeps it");
    assert_eq!((record.state, record.settled), (ApprovalState::Done, true));
    assert_eq!((record.decided_by.as_deref(), record.arguments["amount"].as_i64()), (Some("person"), Some(200)));
    assert!(record.decided_at.is_some());
    assert_eq!(record.outcome(), Some(ApprovalOutcome::Ran));
    // A settled call never moves again, whoever tries.
    let late = ToolCallChange::new("call_1", ApprovalState::Done, ApprovalState::Denied).by("person");
    assert!(!store.approvals().unwrap().advance_tool_call("t1", &late).await.unwrap());
    assert!(store.approvals().unwrap().tool_call("t1", "nope").await.unwrap().is_none());
    // A later step that reuses the id parks it again; the ledger then answers for the new one.
    let again = ParkedToolCall::new("call_1", "refund", json!({"amount": 5}), 0, ApprovalState::Pending);
    store.approvals().unwrap().park_tool_calls("t1", &[again]).await.unwrap();
    assert_eq!(
        store.approvals().unwrap().tool_call("t1", "call_1").await.unwrap().unwrap().state,
        ApprovalState::Pending
    );
    assert_eq!(store.approvals().unwrap().parked_tool_calls("t1").await.unwrap().len(), 1);
    f.finish().await;
}

async fn o6_a_thread_waiting_with_every_call_decided_is_unsettled<F: Fixture>() {
    let f = F::open().await;
    let store = f.store();
    for id in ["decided", "waiting", "just_decided"] {
        store.create_thread(&thread(id)).await.unwrap();
        store.set_status(id, &ThreadStatus::AwaitingApproval).await.unwrap();
    }
    let mut decided = ParkedToolCall::new("c1", "refund", json!({}), 0, ApprovalState::Approved);
    decided.decided_at = Some(now_ms() - 60_000);
    store.approvals().unwrap().park_tool_calls("decided", &[decided.clone()]).await.unwrap();
    let pending = ParkedToolCall::new("c1", "refund", json!({}), 0, ApprovalState::Pending);
    store.approvals().unwrap().park_tool_calls("waiting", &[decided, pending.clone()]).await.unwrap_err();
    store.approvals().unwrap().park_tool_calls("waiting", &[pending]).await.unwrap();
    // Decided a moment ago: its decider resumes the turn itself.
    let mut fresh = ParkedToolCall::new("c1", "refund", json!({}), 0, ApprovalState::Approved);
    fresh.decided_at = Some(now_ms());
    store.approvals().unwrap().park_tool_calls("just_decided", &[fresh]).await.unwrap();
    assert_eq!(store.unsettled_threads().await.unwrap(), ["decided"]);
    f.finish().await;
}

async fn creates_and_loads_a_thread<F: Fixture>() {
    let f = F::open().await;
    let store = f.store();
    let record = thread("t1");
    store.create_thread(&record).await.unwrap();
    assert_eq!(store.load_thread("t1").await.unwrap(), Some(record));
    let mut bare = thread("t2");
    bare.user_id = None;
    bare.arguments.clear();
    bare.values.clear();
    store.create_thread(&bare).await.unwrap();
    assert_eq!(store.load_thread("t2").await.unwrap(), Some(bare));
    assert_eq!(store.load_thread("missing").await.unwrap(), None, "a missing thread is no thread, not an error");
    f.finish().await;
}

async fn a_users_threads_are_listed_oldest_first_with_their_status_and_values<F: Fixture>() {
    let f = F::open().await;
    let store = f.store();
    // Created out of order; `b` and `a` share a creation time, so the id decides.
    for (id, user, created_at) in [("late", "u1", 30), ("b", "u1", 20), ("other", "u2", 10), ("a", "u1", 20)] {
        let mut record = thread(id);
        record.user_id = Some(user.into());
        record.created_at = created_at;
        store.create_thread(&record).await.unwrap();
    }
    let mut anonymous = thread("nobody");
    anonymous.user_id = None;
    store.create_thread(&anonymous).await.unwrap();
    store.set_status("b", &ThreadStatus::Stopped(StopReason::MaxSteps)).await.unwrap();
    store.set_value("late", "seen", &json!(true)).await.unwrap();

    let listed = store.threads_of_user("u1").await.unwrap();
    let ids: Vec<&str> = listed.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["a", "b", "late"]);
    for record in &listed {
        assert_eq!(Some(record), store.load_thread(&record.id).await.unwrap().as_ref(), "as loaded");
    }
    assert_eq!(listed[1].status, ThreadStatus::Stopped(StopReason::MaxSteps));
    assert_eq!(listed[2].values["seen"], json!(true));
    let others: Vec<String> = store.threads_of_user("u2").await.unwrap().into_iter().map(|t| t.id).collect();
    assert_eq!(others, ["other"]);
    assert!(store.threads_of_user("nobody").await.unwrap().is_empty(), "a user without threads has none");
    f.finish().await;
}

async fn a_duplicate_thread_is_an_error_and_keeps_the_first<F: Fixture>() {
    let f = F::open().await;
    let store = f.store();
    store.create_thread(&thread("t1")).await.unwrap();
    let mut second = thread("t1");
    second.agent = "other".into();
    let error = store.create_thread(&second).await.unwrap_err();
    assert!(error.to_string().contains("t1"), "{error}");
    assert_eq!(error.kind(), StoreErrorKind::Conflict, "{error}");
    assert_eq!(store.load_thread("t1").await.unwrap().unwrap().agent, "support");
    f.finish().await;
}

async fn messages_come_back_in_insertion_order_with_silent_ones<F: Fixture>() {
    let f = F::open().await;
    let store = f.store();
    store.create_thread(&thread("t1")).await.unwrap();
    assert!(store.messages("t1").await.unwrap().is_empty());
    // Ids out of alphabetical order, and the same timestamp: the order is insertion order.
    let mut inserted = Vec::new();
    for (id, role) in [("m3", Role::System), ("m1", Role::User), ("m2", Role::Assistant), ("m0", Role::Tool)] {
        let mut m = message(id, role, id);
        if id == "m2" {
            m.silent = Some(true);
        }
        store.insert_message("t1", &m).await.unwrap();
        inserted.push(m);
    }
    let messages = store.messages("t1").await.unwrap();
    assert_eq!(messages, inserted, "a message reads back as it was inserted");
    assert_eq!(ids(&messages), ["m3", "m1", "m2", "m0"]);
    assert!(messages[2].is_silent());
    assert_eq!(
        messages.iter().map(|m| m.role).collect::<Vec<_>>(),
        [Role::System, Role::User, Role::Assistant, Role::Tool]
    );
    f.finish().await;
}

async fn messages_of_threads_are_kept_apart_and_ids_are_per_thread<F: Fixture>() {
    let f = F::open().await;
    let store = f.store();
    store.create_thread(&thread("a")).await.unwrap();
    store.create_thread(&thread("b")).await.unwrap();
    store.insert_message("a", &message("m1", Role::User, "to a")).await.unwrap();
    store.insert_message("b", &message("m1", Role::User, "to b")).await.unwrap();
    store.insert_message("a", &message("m2", Role::User, "to a again")).await.unwrap();
    assert_eq!(ids(&store.messages("a").await.unwrap()), ["m1", "m2"]);
    let b = store.messages("b").await.unwrap();
    assert_eq!(b.len(), 1);
    assert_eq!(b[0].content.as_deref(), Some("to b"));
    f.finish().await;
}

async fn every_field_and_extra_fields_survive_a_round_trip<F: Fixture>() {
    let f = F::open().await;
    let store = f.store();
    store.create_thread(&thread("t1")).await.unwrap();
    let full = full_message("m1");
    let mut empty = message("m2", Role::Assistant, "");
    empty.content = None;
    store.insert_message("t1", &full).await.unwrap();
    store.insert_message("t1", &empty).await.unwrap();
    assert_eq!(store.messages("t1").await.unwrap(), vec![full, empty]);
    f.finish().await;
}

async fn an_update_applies_content_flags_and_extra_fields_in_place<F: Fixture>() {
    let f = F::open().await;
    let store = f.store();
    store.create_thread(&thread("t1")).await.unwrap();
    store.insert_message("t1", &full_message("m1")).await.unwrap();
    store.insert_message("t1", &message("m2", Role::User, "after")).await.unwrap();
    let mut update = MessageUpdate::new().with_content("edited").with_tool_calls("[]").with_silent(true);
    update.extra.insert("tool_status".into(), json!("error"));
    update.extra.insert("status".into(), json!({"code": 3}));
    let updated = store.update_message("t1", "m1", &update).await.unwrap();
    let mut expected = full_message("m1");
    update.apply_to(&mut expected);
    assert_eq!(updated, expected, "update returns the message as stored");
    let messages = store.messages("t1").await.unwrap();
    assert_eq!(ids(&messages), ["m1", "m2"], "an update keeps the message's place");
    assert_eq!(messages[0], expected);
    assert_eq!(messages[0].extra_str("tool_status"), Some("error"));
    assert_eq!(messages[0].extra["metadata"]["step"], 1, "untouched extra fields stay");
    // An empty update changes nothing.
    let same = store.update_message("t1", "m1", &MessageUpdate::default()).await.unwrap();
    assert_eq!(same, expected);
    f.finish().await;
}

async fn a_missing_thread_or_message_is_an_error_for_every_method<F: Fixture>() {
    let f = F::open().await;
    let store = f.store();
    let m = message("m1", Role::User, "hi");
    let not_found = |result: Result<_, StoreError>, method: &str| {
        let error = result.expect_err(method);
        assert_eq!(error.kind(), StoreErrorKind::NotFound, "{method}: {error}");
    };
    not_found(store.insert_message("nope", &m).await.map(drop), "insert_message");
    not_found(store.messages("nope").await.map(drop), "messages");
    not_found(store.set_status("nope", &ThreadStatus::Running).await, "set_status");
    not_found(store.set_value("nope", "k", &json!(1)).await, "set_value");
    not_found(store.update_message("nope", "m1", &MessageUpdate::default()).await.map(drop), "update_message");
    store.create_thread(&thread("t1")).await.unwrap();
    let error = store.update_message("t1", "m9", &MessageUpdate::default()).await.unwrap_err();
    assert!(error.to_string().contains("m9"), "names the message: {error}");
    assert_eq!(error.kind(), StoreErrorKind::NotFound, "{error}");
    assert_eq!(store.load_thread("nope").await.unwrap(), None);
    f.finish().await;
}

async fn a_duplicate_message_is_an_error_and_keeps_the_first<F: Fixture>() {
    let f = F::open().await;
    let store = f.store();
    store.create_thread(&thread("t1")).await.unwrap();
    store.insert_message("t1", &message("m1", Role::User, "first")).await.unwrap();
    let error = store.insert_message("t1", &message("m1", Role::User, "second secret")).await.unwrap_err();
    assert_eq!(error.kind(), StoreErrorKind::Conflict, "{error}");
    let text = error.to_string();
    assert!(text.contains("m1"), "names the message: {text}");
    assert!(!text.contains("secret") && !text.contains("first"), "never quotes contents: {text}");
    let messages = store.messages("t1").await.unwrap();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].content.as_deref(), Some("first"));
    f.finish().await;
}

async fn status_is_set_and_read_back<F: Fixture>() {
    let f = F::open().await;
    let store = f.store();
    store.create_thread(&thread("t1")).await.unwrap();
    for status in [
        ThreadStatus::Running,
        ThreadStatus::Stopped(StopReason::HookBlocked),
        ThreadStatus::Failed(FailReason::MessageHookError),
        ThreadStatus::Failed(FailReason::LeaseLost),
        ThreadStatus::AwaitingApproval,
        ThreadStatus::Idle,
    ] {
        store.set_status("t1", &status).await.unwrap();
        assert_eq!(store.load_thread("t1").await.unwrap().unwrap().status, status);
    }
    // A reason this version does not know (a newer one wrote it) reads back as written.
    let mut running = thread("t2");
    running.status = ThreadStatus::Failed(FailReason::Other("lease_expired".into()));
    store.create_thread(&running).await.unwrap();
    let status = store.load_thread("t2").await.unwrap().unwrap().status;
    assert!(
        matches!(&status, ThreadStatus::Failed(FailReason::Other(reason)) if reason == "lease_expired"),
        "{status:?}"
    );
    let mut waiting = thread("t3");
    waiting.status = ThreadStatus::AwaitingApproval;
    store.create_thread(&waiting).await.unwrap();
    assert_eq!(store.load_thread("t3").await.unwrap().unwrap().status, ThreadStatus::AwaitingApproval);
    f.finish().await;
}

async fn m11_values_are_kept_with_the_thread<F: Fixture>() {
    let f = F::open().await;
    let store = f.store();
    store.create_thread(&thread("t1")).await.unwrap();
    store.create_thread(&thread("t2")).await.unwrap();
    store.set_value("t1", "count", &json!(1)).await.unwrap();
    store.set_value("t1", "count", &json!(2)).await.unwrap();
    store.set_value("t1", "profile", &json!({"name": "Ada", "tags": ["x"], "ratio": 0.5, "none": null})).await.unwrap();
    store.set_value("t1", "empty", &json!("")).await.unwrap();
    let loaded = store.load_thread("t1").await.unwrap().unwrap();
    assert_eq!(loaded.values.len(), 4, "{:?}", loaded.values);
    assert_eq!(loaded.values["seeded"], json!({"at": "creation"}), "values given at creation are kept");
    assert_eq!(loaded.values["count"], json!(2), "a second set replaces the value");
    assert_eq!(loaded.values["profile"], json!({"name": "Ada", "tags": ["x"], "ratio": 0.5, "none": null}));
    assert_eq!(loaded.values["empty"], json!(""));
    assert_eq!(store.load_thread("t2").await.unwrap().unwrap().values.len(), 1, "values are per thread");
    f.finish().await;
}

async fn m11_a_value_for_an_unknown_thread_creates_nothing<F: Fixture>() {
    let f = F::open().await;
    let store = f.store();
    let error = store.set_value("ghost", "k", &json!("v")).await.unwrap_err();
    assert!(error.to_string().contains("ghost"), "{error}");
    assert_eq!(error.kind(), StoreErrorKind::NotFound, "{error}");
    assert_eq!(store.load_thread("ghost").await.unwrap(), None);
    // Creating the thread later does not bring the refused value back.
    let mut ghost = thread("ghost");
    ghost.values.clear();
    store.create_thread(&ghost).await.unwrap();
    assert!(store.load_thread("ghost").await.unwrap().unwrap().values.is_empty());
    f.finish().await;
}

/// Four writers, one thread: every message lands once, and each writer's messages keep their
/// order (the store never reorders or loses a concurrent insert).
async fn concurrent_inserts_each_land_once_in_a_valid_order<F: Fixture>() {
    const WRITERS: usize = 4;
    const EACH: usize = 25;
    let f = F::open().await;
    let store = f.store();
    store.create_thread(&thread("t1")).await.unwrap();
    let mut tasks = Vec::new();
    for writer in 0..WRITERS {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            for n in 0..EACH {
                store.insert_message("t1", &message(&format!("w{writer}-{n:02}"), Role::User, "x")).await.unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let messages = store.messages("t1").await.unwrap();
    assert_eq!(messages.len(), WRITERS * EACH);
    let mut seen = std::collections::HashSet::new();
    for m in &messages {
        assert!(seen.insert(m.id.clone()), "stored twice: {}", m.id);
    }
    for writer in 0..WRITERS {
        let prefix = format!("w{writer}-");
        let own: Vec<&str> = messages.iter().map(|m| m.id.as_str()).filter(|id| id.starts_with(&prefix)).collect();
        let mut sorted = own.clone();
        sorted.sort_unstable();
        assert_eq!(own, sorted, "writer {writer}'s messages out of order");
    }
    // A second read returns the same order.
    assert_eq!(store.messages("t1").await.unwrap(), messages);
    f.finish().await;
}

/// Writers on many threads at once do not see each other's messages.
async fn concurrent_threads_do_not_mix<F: Fixture>() {
    let f = F::open().await;
    let store = f.store();
    let mut tasks = Vec::new();
    for t in 0..8 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let id = format!("t{t}");
            store.create_thread(&thread(&id)).await.unwrap();
            for n in 0..10 {
                store.insert_message(&id, &message(&format!("m{n}"), Role::User, &id)).await.unwrap();
                store.set_value(&id, "last", &json!(n)).await.unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    for t in 0..8 {
        let id = format!("t{t}");
        let messages = store.messages(&id).await.unwrap();
        assert_eq!(ids(&messages), (0..10).map(|n| format!("m{n}")).collect::<Vec<_>>());
        assert!(messages.iter().all(|m| m.content.as_deref() == Some(id.as_str())));
        assert_eq!(store.load_thread(&id).await.unwrap().unwrap().values["last"], json!(9));
    }
    f.finish().await;
}

async fn u1_user_values_are_kept_per_user_ordered_by_key_with_their_time<F: Fixture>() {
    let f = F::open().await;
    let store = f.store();
    assert!(store.user_values("alice").await.unwrap().is_empty(), "a user with no values has none");
    let before = now_ms();
    assert_eq!(store.set_user_value("alice", "theme", Some(&json!("dark"))).await.unwrap(), None);
    assert_eq!(store.set_user_value("alice", "lang", Some(&json!({"code": "fr", "n": 0.5}))).await.unwrap(), None);
    assert_eq!(store.set_user_value("bob", "theme", Some(&json!("light"))).await.unwrap(), None);
    let alice = store.user_values("alice").await.unwrap();
    let keys: Vec<&str> = alice.iter().map(|value| value.key.as_str()).collect();
    assert_eq!(keys, ["lang", "theme"], "ordered by key");
    assert_eq!(alice[0].value, json!({"code": "fr", "n": 0.5}));
    assert_eq!(alice[1].value, json!("dark"));
    assert!(alice.iter().all(|value| value.updated_at >= before && value.updated_at <= now_ms()), "{alice:?}");
    let bob = store.user_values("bob").await.unwrap();
    assert_eq!(bob.len(), 1, "values are per user: {bob:?}");
    assert_eq!(bob[0].value, json!("light"));
    f.finish().await;
}

async fn u1_set_user_value_returns_the_value_it_replaced_and_none_removes<F: Fixture>() {
    let f = F::open().await;
    let store = f.store();
    assert_eq!(store.set_user_value("alice", "n", Some(&json!(1))).await.unwrap(), None);
    assert_eq!(store.set_user_value("alice", "n", Some(&json!(2))).await.unwrap(), Some(json!(1)));
    assert_eq!(store.set_user_value("alice", "n", None).await.unwrap(), Some(json!(2)));
    assert!(store.user_values("alice").await.unwrap().is_empty(), "removed");
    assert_eq!(store.set_user_value("alice", "n", None).await.unwrap(), None, "removing nothing is no error");
    assert_eq!(store.set_user_value("alice", "null", Some(&json!(null))).await.unwrap(), None);
    assert_eq!(store.user_values("alice").await.unwrap()[0].value, json!(null), "a JSON null is a value");
    f.finish().await;
}

/// Eight writers set one key at once: each set reports the value the set before it left, so the
/// old values form one chain from "none" to the final value, every value in it once.
async fn u1_concurrent_sets_of_one_key_each_report_the_value_before_them<F: Fixture>() {
    const WRITERS: usize = 8;
    const EACH: usize = 10;
    let f = F::open().await;
    let store = f.store();
    let mut tasks = Vec::new();
    for writer in 0..WRITERS {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let mut olds = Vec::new();
            for n in 0..EACH {
                let value = json!(format!("w{writer}-{n}"));
                olds.push((store.set_user_value("alice", "k", Some(&value)).await.unwrap(), value));
            }
            olds
        }));
    }
    let mut next: std::collections::HashMap<Option<serde_json::Value>, serde_json::Value> =
        std::collections::HashMap::new();
    for task in tasks {
        for (old, new) in task.await.unwrap() {
            assert!(next.insert(old.clone(), new).is_none(), "two sets both replaced {old:?}");
        }
    }
    // Walk the chain from "none": it passes every value once and ends at the stored one.
    let mut at = None;
    let mut steps = 0;
    while let Some(new) = next.get(&at) {
        at = Some(new.clone());
        steps += 1;
    }
    assert_eq!(steps, WRITERS * EACH, "every set is in one chain");
    assert_eq!(store.user_values("alice").await.unwrap()[0].value, at.unwrap());
    f.finish().await;
}

// ---------------------------------------------------------------------------------------------
// Instantiation

macro_rules! suite {
    ($module:ident, $fixture:ty) => {
        mod $module {
            suite!(@tests $fixture;
                creates_and_loads_a_thread,
                a_users_threads_are_listed_oldest_first_with_their_status_and_values,
                a_duplicate_thread_is_an_error_and_keeps_the_first,
                messages_come_back_in_insertion_order_with_silent_ones,
                messages_of_threads_are_kept_apart_and_ids_are_per_thread,
                every_field_and_extra_fields_survive_a_round_trip,
                an_update_applies_content_flags_and_extra_fields_in_place,
                a_missing_thread_or_message_is_an_error_for_every_method,
                a_duplicate_message_is_an_error_and_keeps_the_first,
                status_is_set_and_read_back,
                m11_values_are_kept_with_the_thread,
                m11_a_value_for_an_unknown_thread_creates_nothing,
                concurrent_inserts_each_land_once_in_a_valid_order,
                concurrent_threads_do_not_mix,
                u1_user_values_are_kept_per_user_ordered_by_key_with_their_time,
                u1_set_user_value_returns_the_value_it_replaced_and_none_removes,
                u1_concurrent_sets_of_one_key_each_report_the_value_before_them,
                the_inbox_keeps_inputs_in_order_until_a_run_takes_each_once,
                a_take_whose_insert_fails_leaves_the_input_in_the_inbox,
                a_thread_left_running_is_unsettled_and_a_settled_one_is_not,
                one_pending_input_is_read_alone_while_it_is_in_the_inbox,
                a_running_take_sets_the_status_with_the_take_and_only_then,
                o2_a_handoff_is_stored_with_its_message_and_alone,
                o4_a_tool_call_has_one_stored_result,
                o7_a_settled_call_stays_in_the_ledger_and_is_never_decided_again,
                o6_a_thread_waiting_with_every_call_decided_is_unsettled,
            );
        }
    };
    (@tests $fixture:ty; $($test:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $test() {
                super::$test::<$fixture>().await;
            }
        )*
    };
}

suite!(memory, super::Memory);
#[cfg(feature = "sqlite")]
suite!(sqlite, super::Sqlite);
#[cfg(feature = "postgres")]
suite!(postgres, super::Postgres);
