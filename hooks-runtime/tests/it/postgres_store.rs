//! What the PostgreSQL store adds to the shared suite (`store_suite.rs`): schema versions and
//! migrations, connection errors, thread events across store instances (two pools, as two
//! processes would have) and leases. Every test has a schema of its own on the server
//! `HOOKS_DATABASE_URL` names, and fails when that server is unreachable.

#![cfg(feature = "postgres")]

use crate::postgres_support;
use crate::store_fixtures;

use std::time::Duration;

use hooks_runtime::__test::PostgresLeases;
use hooks_runtime::ThreadEvent;
use hooks_runtime::store::{
    EventSubscription, FailReason, MessageStore, PostgresOptions, PostgresStore, StopReason, StoreErrorKind,
    StoredEvent, ThreadStatus,
};
use hooks_runtime::types::HookMessage;
use hooks_runtime::types::Role;
use hooks_runtime::types::ToolStatus;
use postgres_support::{PgSchema, database_url, raw_client};
use serde_json::json;
use store_fixtures::{message, thread};
use tracing::instrument::WithSubscriber as _;

/// How long a test waits for an event that should come at once (generous: shared machine).
const EVENT_WAIT: Duration = Duration::from_secs(30);

async fn connect(schema: &PgSchema) -> Result<PostgresStore, String> {
    PostgresStore::connect_with(&database_url(), PostgresOptions::new().schema(&schema.name).max_connections(4))
        .await
        .map_err(|e| e.to_string())
}

/// A store whose subscriptions never poll within a test: events reach them by notification only.
async fn notified_only(schema: &PgSchema) -> PostgresStore {
    let options = PostgresOptions::new().schema(&schema.name).event_poll_interval(Duration::from_secs(3600));
    PostgresStore::connect_with(&database_url(), options).await.expect("connect")
}

async fn schema_version(schema: &PgSchema) -> i32 {
    let client = raw_client().await;
    client
        .query_one(&format!("SELECT version FROM {}.hooks_schema_version", schema.name), &[])
        .await
        .expect("read the schema version")
        .get(0)
}

/// The schema version this build writes: what a new schema gets.
async fn latest_version() -> i32 {
    let fresh = PgSchema::new("fresh_version");
    drop(fresh.store().await);
    let version = schema_version(&fresh).await;
    fresh.drop().await;
    version
}

// ---------------------------------------------------------------------------------------------
// Schema and connection

#[tokio::test]
async fn a_schema_of_a_newer_version_is_refused() {
    let schema = PgSchema::new("newer");
    drop(schema.store().await);
    let current = schema_version(&schema).await;
    raw_client()
        .await
        .batch_execute(&format!("UPDATE {}.hooks_schema_version SET version = 99", schema.name))
        .await
        .unwrap();
    let error = connect(&schema).await.unwrap_err();
    assert!(error.contains("version 99") && error.contains(&format!("version {current}")), "{error}");
    assert!(error.contains("newer hooks-runtime"), "says what to do: {error}");
    assert_eq!(schema_version(&schema).await, 99, "left as it was");
    schema.drop().await;
}

#[tokio::test]
async fn m11_a_version_1_schema_is_migrated_and_keeps_its_threads() {
    let schema = PgSchema::new("v1");
    let client = raw_client().await;
    // Version 1 as the first build wrote it: no events, no leases.
    client
        .batch_execute(&format!(
            "CREATE SCHEMA {s};
             CREATE TABLE {s}.hooks_schema_version (version INTEGER NOT NULL);
             INSERT INTO {s}.hooks_schema_version VALUES (1);
             CREATE TABLE {s}.threads (id TEXT PRIMARY KEY, agent TEXT NOT NULL, user_id TEXT,
                 created_at BIGINT NOT NULL, arguments JSON NOT NULL, status TEXT NOT NULL, status_reason TEXT);
             CREATE TABLE {s}.messages (thread_id TEXT NOT NULL REFERENCES {s}.threads(id), seq BIGINT NOT NULL,
                 id TEXT NOT NULL, role TEXT NOT NULL, content TEXT, name TEXT, tool_calls TEXT, tool_call_id TEXT,
                 created_at BIGINT NOT NULL, parent_id TEXT, depth BIGINT, silent BOOLEAN, extra JSON NOT NULL,
                 PRIMARY KEY (thread_id, id), UNIQUE (thread_id, seq));
             CREATE TABLE {s}.thread_values (thread_id TEXT NOT NULL REFERENCES {s}.threads(id), key TEXT NOT NULL,
                 value JSON NOT NULL, PRIMARY KEY (thread_id, key));
             INSERT INTO {s}.threads VALUES ('old', 'support', NULL, 1, '{{}}', 'stopped', 'max_steps');
             INSERT INTO {s}.messages VALUES ('old', 1, 'm1', 'user', 'kept', NULL, NULL, NULL, 2, NULL, NULL, NULL, '{{}}');
             INSERT INTO {s}.thread_values VALUES ('old', 'k', '[1,2]');",
            s = schema.name
        ))
        .await
        .unwrap();
    let store = schema.store().await;
    let latest = latest_version().await;
    assert_eq!(schema_version(&schema).await, latest);
    let old = store.load_thread("old").await.unwrap().unwrap();
    assert_eq!(old.status, ThreadStatus::Stopped(StopReason::MaxSteps));
    assert_eq!(old.values["k"], json!([1, 2]));
    assert_eq!(store.messages("old").await.unwrap()[0].content.as_deref(), Some("kept"));
    // Version 2's tables work on the migrated thread.
    store.publish("old", &ThreadEvent::Status { status: ThreadStatus::Idle }).await.unwrap();
    assert!(store.try_acquire_lease("old", "a", Duration::from_secs(5)).await.unwrap().is_some());
    // The inbox works on the migrated thread.
    let entry = hooks_runtime::store::InboxEntry::new(hooks_runtime::types::MessageRecord::new(
        hooks_runtime::types::Role::User,
        "late",
    ));
    store.inbox().unwrap().enqueue_input("old", &entry).await.unwrap();
    assert_eq!(store.inbox().unwrap().pending_inputs("old").await.unwrap(), [entry]);
    // And every later step's: user values.
    assert_eq!(store.set_user_value("alice", "k", Some(&json!(1))).await.unwrap(), None);
    assert_eq!(store.user_values("alice").await.unwrap()[0].value, json!(1));
    // Connecting again changes nothing.
    drop(schema.store().await);
    assert_eq!(schema_version(&schema).await, latest);
    schema.drop().await;
}

#[tokio::test]
async fn a_schema_with_foreign_tables_of_our_names_is_refused_and_left_alone() {
    let schema = PgSchema::new("foreign");
    let client = raw_client().await;
    client
        .batch_execute(&format!("CREATE SCHEMA {s}; CREATE TABLE {s}.threads (x INTEGER)", s = schema.name))
        .await
        .unwrap();
    let error = connect(&schema).await.unwrap_err();
    assert!(error.contains("`threads`") && error.contains("hooks_schema_version"), "{error}");
    let stamped: bool = client
        .query_one(&format!("SELECT to_regclass('{}.hooks_schema_version') IS NOT NULL", schema.name), &[])
        .await
        .unwrap()
        .get(0);
    assert!(!stamped, "the foreign schema was changed");
    schema.drop().await;
}

#[tokio::test]
async fn processes_starting_at_once_migrate_one_after_the_other() {
    let schema = PgSchema::new("race");
    let attempts: Vec<_> = (0..6)
        .map(|_| {
            let name = schema.name.clone();
            async move {
                PostgresStore::connect_with(&database_url(), PostgresOptions::new().schema(name).max_connections(1))
                    .await
                    .map(drop)
            }
        })
        .collect();
    for (n, result) in futures_join_all(attempts).await.into_iter().enumerate() {
        assert!(result.is_ok(), "store {n}: {result:?}");
    }
    assert_eq!(schema_version(&schema).await, latest_version().await);
    schema.drop().await;
}

/// Runs the futures concurrently on this task (the tests need no `futures` crate for it).
async fn futures_join_all<F: std::future::Future + Send + 'static>(futures: Vec<F>) -> Vec<F::Output>
where
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futures.into_iter().map(tokio::spawn).collect();
    let mut outputs = Vec::new();
    for handle in handles {
        outputs.push(handle.await.expect("task"));
    }
    outputs
}

#[tokio::test]
async fn a_connection_error_names_the_server_but_never_the_password() {
    // Port 1 on this machine: nothing listens, so the connection is refused at once.
    let error = PostgresStore::connect("postgres://hooks:s3cr3t-pw@127.0.0.1:1/somedb").await.unwrap_err();
    assert_eq!(error.kind(), StoreErrorKind::Connection, "{error}");
    let error = error.to_string();
    assert!(error.contains("postgres://hooks@127.0.0.1:1/somedb"), "{error}");
    assert!(!error.contains("s3cr3t-pw"), "{error}");
    let error = PostgresStore::connect("host=127.0.0.1 port=1 user=hooks password=s3cr3t-pw dbname=somedb")
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("127.0.0.1:1") && !error.contains("s3cr3t-pw"), "{error}");
    let error =
        PostgresStore::connect("postgres://hooks:s3cr3t-pw@127.0.0.1:notaport/db").await.unwrap_err().to_string();
    assert!(!error.contains("s3cr3t-pw"), "{error}");
}

#[tokio::test]
async fn a_schema_name_that_needs_quoting_is_refused() {
    for bad in ["Upper", "1digit", "semi;colon", "", "a-b", &"x".repeat(41)] {
        let error = PostgresStore::connect_with(&database_url(), PostgresOptions::new().schema(bad))
            .await
            .unwrap_err()
            .to_string();
        assert!(error.contains("schema name"), "{bad}: {error}");
    }
}

/// A database of its own (the default schema is one name for every store of a database, so a
/// test of it cannot share `test`); dropped, with its connections, by [`drop_database`].
async fn fresh_database(label: &str) -> (String, String) {
    let name = postgres_support::unique_schema(label);
    raw_client().await.batch_execute(&format!("CREATE DATABASE {name}")).await.expect("create database");
    let url = database_url();
    let base = url.rsplit_once('/').map_or(url.as_str(), |(base, _)| base);
    (name.clone(), format!("{base}/{name}"))
}

async fn drop_database(name: &str) {
    raw_client()
        .await
        .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .await
        .expect("drop database");
}

async fn tables_of(url: &str) -> Vec<String> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.expect("connect");
    tokio::spawn(connection);
    let rows = client
        .query(
            "SELECT table_schema || '.' || table_name FROM information_schema.tables \
             WHERE table_name IN ('hooks_schema_version', 'threads') ORDER BY 1",
            &[],
        )
        .await
        .expect("list tables");
    rows.iter().map(|row| row.get(0)).collect()
}

#[tokio::test]
async fn connect_keeps_the_tables_in_the_agent_hooks_schema_and_creates_it() {
    let (name, url) = fresh_database("default_schema").await;
    let store = PostgresStore::connect(&url).await.expect("connect with the defaults");
    assert!(store.target().ends_with("(schema `agent_hooks`)"), "{}", store.target());
    store.create_thread(&thread("t1")).await.unwrap();
    assert!(store.load_thread("t1").await.unwrap().is_some());
    drop(store);
    assert_eq!(tables_of(&url).await, ["agent_hooks.hooks_schema_version", "agent_hooks.threads"]);
    // Connecting again finds them there.
    let again = PostgresStore::connect(&url).await.expect("reconnect");
    assert!(again.load_thread("t1").await.unwrap().is_some());
    drop(again);
    drop_database(&name).await;
}

#[tokio::test]
async fn connect_refuses_to_start_over_beside_tables_in_public_and_says_how_to_use_them() {
    let (name, url) = fresh_database("public_tables").await;
    let public = PostgresStore::connect_with(&url, PostgresOptions::new().search_path()).await.expect("search_path");
    public.create_thread(&thread("kept")).await.unwrap();
    drop(public);
    assert_eq!(tables_of(&url).await, ["public.hooks_schema_version", "public.threads"]);
    let error = PostgresStore::connect(&url).await.unwrap_err().to_string();
    assert!(error.contains("schema `public` has this store's tables and schema `agent_hooks` has none"), "{error}");
    assert!(error.contains("PostgresOptions::new().search_path()"), "{error}");
    assert_eq!(tables_of(&url).await, ["public.hooks_schema_version", "public.threads"], "nothing created");
    let public = PostgresStore::connect_with(&url, PostgresOptions::new().search_path()).await.unwrap();
    assert!(public.load_thread("kept").await.unwrap().is_some(), "the thread is where it was");
    drop(public);
    drop_database(&name).await;
}

#[tokio::test]
async fn a_write_after_the_runs_lease_was_taken_over_is_refused_as_lease_lost() {
    let schema = PgSchema::new("fenced");
    let store = schema.store().await;
    store.create_thread(&thread("t1")).await.unwrap();
    let hold = store.run_ownership().expect("a shared store holds a lease").hold_run("t1").await.unwrap();
    raw_client()
        .await
        .execute(&format!("UPDATE {}.thread_leases SET owner = 'another', epoch = epoch + 1", schema.name), &[])
        .await
        .unwrap();
    let error = store.insert_message("t1", &message("m1", Role::User, "late")).await.unwrap_err();
    assert_eq!(error.kind(), StoreErrorKind::LeaseLost, "{error}");
    assert!(error.message().contains("lease") && error.message().contains("nothing was written"), "{error}");
    assert!(hold.is_lost(), "the refusal marks the hold lost");
    assert!(store.messages("t1").await.unwrap().is_empty());
    drop(hold);
    schema.drop().await;
}

#[tokio::test]
async fn a_content_postgresql_cannot_hold_is_an_error_that_does_not_quote_it() {
    let schema = PgSchema::new("nul");
    let store = schema.store().await;
    store.create_thread(&thread("t1")).await.unwrap();
    let error = store.insert_message("t1", &message("m1", Role::User, "private\0words")).await.unwrap_err().to_string();
    assert!(error.contains("m1") && error.contains("t1"), "{error}");
    assert!(!error.contains("private") && !error.contains("words"), "{error}");
    assert!(store.messages("t1").await.unwrap().is_empty(), "nothing half-written");
    schema.drop().await;
}

#[tokio::test]
async fn two_pools_on_one_schema_see_each_others_writes() {
    let schema = PgSchema::new("pools");
    let a = schema.store().await;
    let b = schema.store().await;
    a.create_thread(&thread("t1")).await.unwrap();
    b.insert_message("t1", &message("m1", Role::User, "from b")).await.unwrap();
    a.insert_message("t1", &message("m2", Role::User, "from a")).await.unwrap();
    b.set_value("t1", "k", &json!(true)).await.unwrap();
    let ids: Vec<String> = a.messages("t1").await.unwrap().into_iter().map(|m| m.id).collect();
    assert_eq!(ids, ["m1", "m2"]);
    assert_eq!(a.load_thread("t1").await.unwrap().unwrap().values["k"], json!(true));
    schema.drop().await;
}

// ---------------------------------------------------------------------------------------------
// Thread events

async fn next_event(subscription: &mut EventSubscription) -> StoredEvent {
    tokio::time::timeout(EVENT_WAIT, subscription.next())
        .await
        .expect("no event within the wait")
        .expect("the subscription ended")
        .expect("a subscription error")
}

/// A `message_created` event with its message.
fn created(id: &str, role: Role) -> ThreadEvent {
    let message = HookMessage::new(id, role, "text", 0);
    ThreadEvent::MessageCreated { id: id.to_owned(), role, message: message.into() }
}

fn run_events(n: usize) -> Vec<ThreadEvent> {
    (0..n)
        .map(|i| match i % 4 {
            0 => created(&format!("m{i}"), Role::Assistant),
            1 => ThreadEvent::ToolCallStarted { id: format!("c{i}"), name: "lookup".into(), progress: None },
            2 => ThreadEvent::ToolCallDone {
                id: format!("c{i}"),
                name: "lookup".into(),
                status: ToolStatus::Success,
                denied: false,
                interrupted: false,
            },
            _ => ThreadEvent::Status { status: ThreadStatus::Running },
        })
        .collect()
}

#[tokio::test]
async fn events_published_through_one_pool_reach_a_subscriber_of_another_in_order() {
    let schema = PgSchema::new("events");
    let publisher = schema.store().await;
    let subscriber = notified_only(&schema).await;
    publisher.create_thread(&thread("t1")).await.unwrap();
    let mut subscription = subscriber.subscribe("t1", 0).await.unwrap();
    let events = run_events(40);
    for event in &events {
        publisher.publish("t1", event).await.unwrap();
    }
    for (n, event) in events.iter().enumerate() {
        let received = next_event(&mut subscription).await;
        assert_eq!(received.seq, n as u64 + 1);
        assert_eq!(received.thread_id, "t1");
        assert_eq!(received.event, serde_json::to_value(event).unwrap());
    }
    schema.drop().await;
}

#[tokio::test]
async fn subscribe_events_follows_the_thread_from_its_next_event_through_the_trait() {
    let schema = PgSchema::new("follow");
    let a = schema.store().await;
    let b: std::sync::Arc<dyn MessageStore> = std::sync::Arc::new(notified_only(&schema).await);
    a.create_thread(&thread("t1")).await.unwrap();
    let status = |s: ThreadStatus| ThreadEvent::Status { status: s };
    a.publish("t1", &status(ThreadStatus::Running)).await.unwrap();
    a.publish("t1", &status(ThreadStatus::Idle)).await.unwrap();
    let mut subscription = b.event_log().expect("the store carries events").subscribe_events("t1").await.unwrap();
    let later = created("m9", Role::User);
    a.publish("t1", &later).await.unwrap();
    let received = next_event(&mut subscription).await;
    assert_eq!((received.seq, received.event), (3, serde_json::to_value(&later).unwrap()), "only what came after");
    assert!(received_nothing_more(&mut subscription).await);
    let memory = hooks_runtime::store::InMemoryStore::new();
    assert!(memory.event_log().is_none(), "one process's store carries none");
    schema.drop().await;
}

async fn received_nothing_more(subscription: &mut EventSubscription) -> bool {
    tokio::time::timeout(Duration::from_millis(300), subscription.next()).await.is_err()
}

#[tokio::test]
async fn a_subscription_replays_from_the_given_seq_and_skips_other_threads() {
    let schema = PgSchema::new("replay");
    let a = schema.store().await;
    let b = notified_only(&schema).await;
    a.create_thread(&thread("t1")).await.unwrap();
    a.create_thread(&thread("t2")).await.unwrap();
    let status = |s: ThreadStatus| ThreadEvent::Status { status: s };
    a.publish("t1", &status(ThreadStatus::Running)).await.unwrap();
    a.publish("t1", &status(ThreadStatus::Idle)).await.unwrap();
    let mut subscription = b.subscribe("t1", 1).await.unwrap();
    assert_eq!(next_event(&mut subscription).await.seq, 2, "starts after seq 1");
    a.publish("t2", &status(ThreadStatus::Running)).await.unwrap();
    let third = a.publish("t1", &status(ThreadStatus::Failed("x".into()))).await.unwrap();
    assert_eq!(third.seq, 3, "seq is per thread");
    let received = next_event(&mut subscription).await;
    assert_eq!((received.thread_id.as_str(), received.seq), ("t1", 3), "t2's event is not delivered");
    assert_eq!(received.event, json!({"type": "status", "status": "failed", "reason": "x"}));
    assert_eq!(a.events_after("t1", 0).await.unwrap().len(), 3);
    schema.drop().await;
}

#[tokio::test]
async fn concurrent_publishers_in_two_pools_give_gap_free_seqs_delivered_once() {
    let schema = PgSchema::new("pubs");
    let a = schema.store().await;
    let b = schema.store().await;
    a.create_thread(&thread("t1")).await.unwrap();
    let mut subscription = a.subscribe("t1", 0).await.unwrap();
    let mut tasks = Vec::new();
    for (name, store) in [("a", a.clone()), ("b", b.clone())] {
        tasks.push(tokio::spawn(async move {
            for i in 0..20 {
                let event = created(&format!("{name}{i:02}"), Role::User);
                store.publish("t1", &event).await.unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let mut per_publisher: std::collections::HashMap<String, Vec<String>> = Default::default();
    for seq in 1..=40 {
        let received = next_event(&mut subscription).await;
        assert_eq!(received.seq, seq, "in order, no gap, no repeat");
        let id = received.event["id"].as_str().unwrap().to_owned();
        per_publisher.entry(id[..1].to_owned()).or_default().push(id);
    }
    for ids in per_publisher.values() {
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(ids, &sorted, "a publisher's events keep its order");
    }
    assert!(
        tokio::time::timeout(Duration::from_millis(500), subscription.next()).await.is_err(),
        "nothing beyond the 40 events"
    );
    schema.drop().await;
}

#[tokio::test]
async fn an_event_whose_notification_was_lost_is_still_delivered_by_the_poll() {
    let schema = PgSchema::new("poll");
    let options = PostgresOptions::new().schema(&schema.name).event_poll_interval(Duration::from_millis(200));
    let store = PostgresStore::connect_with(&database_url(), options).await.unwrap();
    store.create_thread(&thread("t1")).await.unwrap();
    let mut subscription = store.subscribe("t1", 0).await.unwrap();
    // Written behind the store's back: a row and no NOTIFY.
    raw_client()
        .await
        .batch_execute(&format!(
            "INSERT INTO {}.thread_events (thread_id, seq, event) VALUES ('t1', 1, '{{\"type\":\"custom\"}}')",
            schema.name
        ))
        .await
        .unwrap();
    let received = next_event(&mut subscription).await;
    assert_eq!((received.seq, received.event), (1, json!({"type": "custom"})));
    schema.drop().await;
}

#[tokio::test]
async fn a_subscription_that_loses_its_connection_reconnects_and_misses_nothing() {
    let schema = PgSchema::new("reconnect");
    let store = notified_only(&schema).await;
    store.create_thread(&thread("t1")).await.unwrap();
    let mut subscription = store.subscribe("t1", 0).await.unwrap();
    let status = |s: ThreadStatus| ThreadEvent::Status { status: s };
    store.publish("t1", &status(ThreadStatus::Running)).await.unwrap();
    assert_eq!(next_event(&mut subscription).await.seq, 1);
    // The server drops the listener's connection (a restart, a network cut).
    let killed: i64 = raw_client()
        .await
        .query_one(
            "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1",
            &[&format!("hooks_events_{}", schema.name)],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(killed, 1, "one listener connection");
    for s in [ThreadStatus::Idle, ThreadStatus::Running, ThreadStatus::Idle] {
        store.publish("t1", &status(s)).await.unwrap();
    }
    let mut seqs = Vec::new();
    let mut interruptions = 0;
    while seqs.len() < 3 {
        match tokio::time::timeout(EVENT_WAIT, subscription.next()).await.expect("no event").expect("ended") {
            Ok(event) => seqs.push(event.seq),
            Err(error) => {
                assert!(error.to_string().contains("t1"), "{error}");
                interruptions += 1;
            }
        }
    }
    assert_eq!(seqs, [2, 3, 4], "in order, none lost, none repeated");
    assert!(interruptions >= 1, "the interruption is reported");
    schema.drop().await;
}

#[tokio::test]
async fn publishing_to_an_unknown_thread_is_an_error() {
    let schema = PgSchema::new("pubmissing");
    let store = schema.store().await;
    let error = store.publish("ghost", &ThreadEvent::Status { status: ThreadStatus::Idle }).await.unwrap_err();
    assert!(error.to_string().contains("ghost"), "{error}");
    schema.drop().await;
}

// ---------------------------------------------------------------------------------------------
// Leases

#[tokio::test]
async fn one_owner_at_a_time_holds_a_thread_lease() {
    let schema = PgSchema::new("lease");
    let a = schema.store().await;
    let b = schema.store().await;
    a.create_thread(&thread("t1")).await.unwrap();
    let ttl = Duration::from_secs(60);
    let lease_a = a.try_acquire_lease("t1", "owner-a", ttl).await.unwrap().expect("free thread");
    assert_eq!(lease_a.epoch, 1);
    assert_eq!(b.try_acquire_lease("t1", "owner-b", ttl).await.unwrap(), None, "held by a");
    assert_eq!(a.try_acquire_lease("t1", "owner-a", ttl).await.unwrap(), None, "not re-entrant");
    assert!(a.renew_lease(&lease_a).await.unwrap());
    assert_eq!(b.lease_holder("t1").await.unwrap(), Some(("owner-a".to_owned(), 1)));
    assert!(a.release_lease(&lease_a).await.unwrap());
    assert_eq!(b.lease_holder("t1").await.unwrap(), None);
    let lease_b = b.try_acquire_lease("t1", "owner-b", ttl).await.unwrap().expect("released");
    assert_eq!(lease_b.epoch, 2, "the epoch grows with each owner");
    assert!(!a.renew_lease(&lease_a).await.unwrap(), "a's lease is gone");
    assert!(!a.release_lease(&lease_a).await.unwrap(), "a cannot release b's lease");
    assert_eq!(a.lease_holder("t1").await.unwrap(), Some(("owner-b".to_owned(), 2)));
    schema.drop().await;
}

#[tokio::test]
async fn an_expired_owner_is_taken_over_and_cannot_renew() {
    let schema = PgSchema::new("expiry");
    let a = schema.store().await;
    let b = schema.store().await;
    a.create_thread(&thread("t1")).await.unwrap();
    let stale = a.try_acquire_lease("t1", "owner-a", Duration::from_millis(300)).await.unwrap().unwrap();
    // Owner a stops renewing (as a killed process would); wait, polling, for the expiry.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let lease_b = loop {
        if let Some(lease) = b.try_acquire_lease("t1", "owner-b", Duration::from_secs(60)).await.unwrap() {
            break lease;
        }
        assert!(tokio::time::Instant::now() < deadline, "the lease never expired");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(lease_b.epoch, 2);
    assert!(!a.renew_lease(&stale).await.unwrap(), "an expired owner learns it lost the thread");
    assert_eq!(a.lease_holder("t1").await.unwrap(), Some(("owner-b".to_owned(), 2)));
    schema.drop().await;
}

#[tokio::test]
async fn a_live_owner_that_renews_keeps_its_lease() {
    let schema = PgSchema::new("renew");
    let a = schema.store().await;
    let b = schema.store().await;
    a.create_thread(&thread("t1")).await.unwrap();
    // ttl 3 s, renewed every 300 ms for 4 s: longer than one ttl, far within it per renewal.
    let lease = a.try_acquire_lease("t1", "owner-a", Duration::from_secs(3)).await.unwrap().unwrap();
    for _ in 0..13 {
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(a.renew_lease(&lease).await.unwrap(), "renewal failed");
        assert_eq!(b.try_acquire_lease("t1", "owner-b", Duration::from_secs(3)).await.unwrap(), None);
    }
    schema.drop().await;
}

#[tokio::test]
async fn of_many_concurrent_claimants_exactly_one_gets_the_lease() {
    let schema = PgSchema::new("claims");
    let a = schema.store().await;
    let b = schema.store().await;
    a.create_thread(&thread("t1")).await.unwrap();
    let claims: Vec<_> = (0..10)
        .map(|n| {
            let store = if n % 2 == 0 { a.clone() } else { b.clone() };
            async move { store.try_acquire_lease("t1", &format!("owner-{n}"), Duration::from_secs(60)).await }
        })
        .collect();
    let won = futures_join_all(claims).await.into_iter().filter(|r| r.as_ref().unwrap().is_some()).count();
    assert_eq!(won, 1);
    schema.drop().await;
}

#[tokio::test]
async fn a_held_lease_renews_itself_past_its_ttl_and_is_released_for_the_next_owner() {
    let schema = PgSchema::new("guard");
    let a = schema.store().await;
    let b = schema.store().await;
    a.create_thread(&thread("t1")).await.unwrap();
    let ttl = Duration::from_secs(1);
    let guard = a.hold_lease("t1", "owner-a", ttl).await.unwrap().expect("free thread");
    // Three ttls: without renewal the lease would have expired twice over.
    for _ in 0..15 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(b.try_acquire_lease("t1", "owner-b", ttl).await.unwrap(), None, "renewal lapsed");
    }
    assert!(!guard.is_lost());
    assert!(guard.release().await.unwrap());
    assert!(b.try_acquire_lease("t1", "owner-b", ttl).await.unwrap().is_some(), "released at once");
    schema.drop().await;
}

#[tokio::test]
async fn a_held_lease_that_is_taken_away_reports_itself_lost() {
    let schema = PgSchema::new("guardlost");
    let a = schema.store().await;
    a.create_thread(&thread("t1")).await.unwrap();
    let mut guard = a.hold_lease("t1", "owner-a", Duration::from_secs(3)).await.unwrap().unwrap();
    // Another owner takes the row behind the guard's back (as after a long stall).
    raw_client()
        .await
        .batch_execute(&format!(
            "UPDATE {}.thread_leases SET owner = 'owner-b', epoch = epoch + 1 WHERE thread_id = 't1'",
            schema.name
        ))
        .await
        .unwrap();
    tokio::time::timeout(EVENT_WAIT, guard.lost()).await.expect("the loss was never noticed");
    assert!(guard.is_lost());
    assert!(!guard.release().await.unwrap(), "a lost lease cannot be released");
    assert_eq!(a.lease_holder("t1").await.unwrap(), Some(("owner-b".to_owned(), 2)));
    schema.drop().await;
}

#[tokio::test]
async fn a_dropped_guard_releases_its_lease() {
    let schema = PgSchema::new("guarddrop");
    let a = schema.store().await;
    a.create_thread(&thread("t1")).await.unwrap();
    drop(a.hold_lease("t1", "owner-a", Duration::from_secs(60)).await.unwrap().unwrap());
    let deadline = tokio::time::Instant::now() + EVENT_WAIT;
    while a.lease_holder("t1").await.unwrap().is_some() {
        assert!(tokio::time::Instant::now() < deadline, "the dropped guard's lease was never released");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    schema.drop().await;
}

#[tokio::test]
async fn a_waiting_owner_gets_the_lease_once_it_is_released_and_gives_up_after_its_patience() {
    let schema = PgSchema::new("wait");
    let a = schema.store().await;
    let b = schema.store().await;
    a.create_thread(&thread("t1")).await.unwrap();
    let ttl = Duration::from_secs(60);
    let held = a.hold_lease("t1", "owner-a", ttl).await.unwrap().unwrap();
    let impatient = b.wait_for_lease("t1", "owner-b", ttl, Duration::from_millis(300)).await.unwrap();
    assert!(impatient.is_none(), "a holds the thread throughout");
    // The store logs when b starts waiting; a holds the thread until after that, so b's wait
    // cannot have ended there.
    let (logs, waiting) = postgres_support::log_signal("this owner waits for its release");
    let waiter = {
        let b = b.clone();
        tokio::spawn(async move { b.wait_for_lease("t1", "owner-b", ttl, EVENT_WAIT).await }.with_subscriber(logs))
    };
    tokio::time::timeout(EVENT_WAIT, waiting.notified()).await.expect("b never waited for a's lease");
    assert!(!waiter.is_finished(), "b waits while a holds the thread");
    assert!(held.release().await.unwrap());
    let guard = waiter.await.unwrap().unwrap().expect("b's turn came");
    assert_eq!((guard.lease().owner.as_str(), guard.lease().epoch), ("owner-b", 2));
    schema.drop().await;
}

#[tokio::test]
async fn a_run_whose_owner_lost_its_lease_is_marked_failed_owner_lost_on_takeover() {
    let schema = PgSchema::new("ownerlost");
    let a = schema.store().await;
    let b = schema.store().await;
    a.create_thread(&thread("t1")).await.unwrap();
    // A finished run: status back to idle, lease released. The next owner finds nothing wrong.
    let first = a.try_acquire_lease("t1", "owner-a", Duration::from_secs(60)).await.unwrap().unwrap();
    assert!(!first.took_over_a_dead_run);
    a.set_status("t1", &ThreadStatus::Running).await.unwrap();
    a.set_status("t1", &ThreadStatus::Idle).await.unwrap();
    a.release_lease(&first).await.unwrap();
    let second = b.try_acquire_lease("t1", "owner-b", Duration::from_millis(300)).await.unwrap().unwrap();
    assert!(!second.took_over_a_dead_run);
    assert_eq!(a.load_thread("t1").await.unwrap().unwrap().status, ThreadStatus::Idle);
    // Owner b dies mid-run: status `running`, lease left to expire.
    b.set_status("t1", &ThreadStatus::Running).await.unwrap();
    let deadline = tokio::time::Instant::now() + EVENT_WAIT;
    let third = loop {
        if let Some(lease) = a.try_acquire_lease("t1", "owner-c", Duration::from_secs(60)).await.unwrap() {
            break lease;
        }
        assert!(tokio::time::Instant::now() < deadline, "the lease never expired");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(third.took_over_a_dead_run);
    assert_eq!(a.load_thread("t1").await.unwrap().unwrap().status, ThreadStatus::Failed(FailReason::OwnerLost));
    schema.drop().await;
}

#[tokio::test]
async fn a_lease_on_an_unknown_thread_is_an_error() {
    let schema = PgSchema::new("leasemissing");
    let store = schema.store().await;
    let error = store.try_acquire_lease("ghost", "a", Duration::from_secs(1)).await.unwrap_err();
    assert!(error.to_string().contains("ghost"), "{error}");
    schema.drop().await;
}

// ---------------------------------------------------------------------------------------------
// Two OS processes: this test binary runs itself again as a child, selecting `child_process`
// with `--exact` and handing it its task in these variables; without them the child test does
// nothing.

/// Set in the child: `publish` or `hold_lease`.
const CHILD_MODE_ENV: &str = "HOOKS_PG_CHILD_MODE";
/// Set in the child: the schema to use.
const CHILD_SCHEMA_ENV: &str = "HOOKS_PG_CHILD_SCHEMA";
/// How many events (and messages) the publishing child writes.
const CHILD_EVENTS: usize = 30;
/// What the lease-holding child prints once it holds the lease.
const LEASED_MARKER: &str = "CHILD-HOLDS-THE-LEASE";

/// The child half of the two-process tests; does nothing unless a parent started it.
#[tokio::test]
async fn child_process() {
    let (Ok(mode), Ok(schema)) = (std::env::var(CHILD_MODE_ENV), std::env::var(CHILD_SCHEMA_ENV)) else {
        return;
    };
    let options = PostgresOptions::new().schema(schema).max_connections(2);
    let store = PostgresStore::connect_with(&database_url(), options).await.unwrap();
    match mode.as_str() {
        "publish" => {
            for (n, event) in run_events(CHILD_EVENTS).iter().enumerate() {
                store.insert_message("t1", &message(&format!("m{n:02}"), Role::User, "from the child")).await.unwrap();
                store.publish("t1", event).await.unwrap();
            }
        }
        "hold_lease" => {
            let lease = store.try_acquire_lease("t1", "child", Duration::from_secs(1)).await.unwrap();
            assert!(lease.is_some(), "the parent left the thread free");
            println!("{LEASED_MARKER}");
            // Renew until killed, as a live owner does.
            let lease = lease.unwrap();
            loop {
                tokio::time::sleep(Duration::from_millis(200)).await;
                assert!(store.renew_lease(&lease).await.unwrap(), "lost the lease while alive");
            }
        }
        other => panic!("unknown child mode {other}"),
    }
}

fn spawn_child(mode: &str, schema: &PgSchema) -> tokio::process::Child {
    tokio::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "postgres_store::child_process", "--nocapture", "--test-threads=1"])
        .env(CHILD_MODE_ENV, mode)
        .env(CHILD_SCHEMA_ENV, &schema.name)
        .env("HOOKS_DATABASE_URL", database_url())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the child process")
}

#[tokio::test]
async fn a_subscriber_in_one_process_sees_the_events_of_another_in_order() {
    let schema = PgSchema::new("procs");
    let store = notified_only(&schema).await;
    store.create_thread(&thread("t1")).await.unwrap();
    let mut subscription = store.subscribe("t1", 0).await.unwrap();
    let mut child = spawn_child("publish", &schema);
    for (n, event) in run_events(CHILD_EVENTS).iter().enumerate() {
        let received = next_event(&mut subscription).await;
        assert_eq!(received.seq, n as u64 + 1);
        assert_eq!(received.event, serde_json::to_value(event).unwrap());
    }
    let status = tokio::time::timeout(EVENT_WAIT, child.wait()).await.expect("the child hung").unwrap();
    assert!(status.success(), "the child failed: {status}");
    let ids: Vec<String> = store.messages("t1").await.unwrap().into_iter().map(|m| m.id).collect();
    assert_eq!(ids, (0..CHILD_EVENTS).map(|n| format!("m{n:02}")).collect::<Vec<_>>());
    schema.drop().await;
}

#[tokio::test]
async fn a_lease_of_a_process_killed_with_sigkill_is_taken_over_after_it_expires() {
    use tokio::io::{AsyncBufReadExt, BufReader};

    let schema = PgSchema::new("killed");
    let store = schema.store().await;
    store.create_thread(&thread("t1")).await.unwrap();
    let mut child = spawn_child("hold_lease", &schema);
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    tokio::time::timeout(EVENT_WAIT, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.contains(LEASED_MARKER) {
                return;
            }
        }
        panic!("the child ended without taking the lease");
    })
    .await
    .expect("the child never took the lease");
    let ttl = Duration::from_secs(60);
    assert_eq!(store.try_acquire_lease("t1", "parent", ttl).await.unwrap(), None, "the live child holds it");
    child.kill().await.unwrap();
    let deadline = tokio::time::Instant::now() + EVENT_WAIT;
    let lease = loop {
        if let Some(lease) = store.try_acquire_lease("t1", "parent", ttl).await.unwrap() {
            break lease;
        }
        assert!(tokio::time::Instant::now() < deadline, "the killed child's lease never expired");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(lease.epoch, 2);
    assert_eq!(store.lease_holder("t1").await.unwrap(), Some(("parent".to_owned(), 2)));
    schema.drop().await;
}
