//! Thread event streams on PostgreSQL under connection loss, and what one process holds of the
//! database: every stored message reaches each server's stream once and in order while the
//! database terminates the servers' connections, and a process that follows 150 threads listens
//! on one connection.
//!
//! Two servers in this process, each with its own runtime and store (its own pool and listening
//! connection) on one schema, as two processes would be. Needs feature `postgres` and the server
//! `HOOKS_DATABASE_URL` names (default `postgres://postgres@127.0.0.1:5432/test`); fails, never
//! skips, when it is unreachable.

use crate::support;

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hooks_runtime::Runtime;
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{PostgresOptions, PostgresStore};
use hooks_server::ServerConfig;
use support::{ALICE, Server, SseReader};

define_prompt! {
    name: pg_prompt,
    model: "scripted",
    prompt: "Answer.",
}

define_agent! {
    name: pg_agent,
    side_a: { prompt: pg_prompt, stop_on_response: true, max_steps: 2 },
    side_b: { human: true },
}

/// Sends in the connection-loss test, alternating between the two servers.
const SENDS: usize = 40;

fn database_url() -> String {
    std::env::var("HOOKS_DATABASE_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

/// A client of the server outside any store, for setup and for terminating connections.
async fn raw_client() -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(&database_url(), tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| panic!("PostgreSQL (HOOKS_DATABASE_URL) is unreachable: {e}"));
    tokio::spawn(connection);
    client
}

/// A schema of its own; its name is also the `application_name` of its stores' pooled
/// connections (their listening connections are `hooks_events_<schema>`), so that the test can
/// find them in `pg_stat_activity`.
struct Schema(String);

impl Schema {
    fn new(what: &str) -> Schema {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
        Schema(format!("t_srv_{what}_{}_{nanos}", std::process::id()))
    }

    async fn store(&self) -> PostgresStore {
        let separator = if database_url().contains('?') { '&' } else { '?' };
        let url = format!("{}{separator}application_name={}", database_url(), self.0);
        let options =
            PostgresOptions::new().schema(&self.0).max_connections(6).event_poll_interval(Duration::from_millis(300));
        PostgresStore::connect_with(&url, options)
            .await
            .unwrap_or_else(|e| panic!("{e}; start PostgreSQL or set HOOKS_DATABASE_URL"))
    }

    /// The connections the schema's stores hold now.
    async fn connections(&self, client: &tokio_postgres::Client) -> i64 {
        client
            .query_one(
                "SELECT COUNT(*) FROM pg_stat_activity WHERE application_name IN ($1, 'hooks_events_' || $1, 'hooks_users_' || $1)",
                &[&self.0],
            )
            .await
            .expect("count connections")
            .get(0)
    }

    /// Terminates every connection of the schema's stores; how many there were.
    async fn terminate(&self, client: &tokio_postgres::Client) -> i64 {
        client
            .query_one(
                "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity \
                 WHERE application_name IN ($1, 'hooks_events_' || $1) AND pid <> pg_backend_pid()",
                &[&self.0],
            )
            .await
            .map(|row| row.get(0))
            .unwrap_or(0)
    }

    async fn drop(self) {
        raw_client()
            .await
            .batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.0))
            .await
            .expect("drop the schema");
    }
}

async fn runtime(schema: &Schema, replies: usize) -> Runtime {
    let script = (0..replies).map(|n| ScriptedResponse::text(&format!("Answer {n}.")));
    Runtime::builder()
        .agent::<pg_agent>()
        .model("scripted", ScriptedModel::new(script))
        .store(schema.store().await)
        .build()
        .expect("runtime")
}

/// The id of a `message_created` event's message.
fn created_id(event: &support::SseEvent) -> Option<String> {
    (event.kind() == "message_created").then(|| event.data["message"]["id"].as_str().expect("a message id").to_owned())
}

/// Reads `stream` until it has shown `runs` `run_finished` events (this server's runs); the
/// ids of the messages it showed meanwhile, in its order.
async fn until_runs_finished(stream: &mut SseReader, runs: usize) -> Vec<String> {
    let mut seen = Vec::new();
    let mut finished = 0;
    while finished < runs {
        let event = stream.next().await;
        finished += usize::from(event.kind() == "run_finished");
        seen.extend(created_id(&event));
    }
    seen
}

/// Reads `stream` on from `seen` until its `message_created` events name every id of
/// `wanted`, or `patience` runs out; the message ids in the order the stream gave them.
async fn created_messages(
    stream: &mut SseReader,
    mut seen: Vec<String>,
    wanted: &HashSet<String>,
    patience: Duration,
) -> Vec<String> {
    let deadline = Instant::now() + patience;
    while !wanted.iter().all(|id| seen.contains(id)) && Instant::now() < deadline {
        let Ok(event) = tokio::time::timeout(Duration::from_millis(500), stream.next()).await else { continue };
        seen.extend(created_id(&event));
    }
    // Anything more that was on its way: a duplicate would show here.
    while let Ok(event) = tokio::time::timeout(Duration::from_millis(700), stream.next()).await {
        seen.extend(created_id(&event));
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_stored_message_streams_once_and_in_order_on_both_servers_while_connections_are_terminated() {
    let schema = Schema::new("drops");
    let a = Server::start(runtime(&schema, SENDS).await, ServerConfig::default()).await;
    let b = Server::start(runtime(&schema, SENDS).await, ServerConfig::default()).await;
    let id = a.create_thread(ALICE, "pg_agent").await;
    let mut on_a = a.stream(&format!("/threads/{id}/events"), ALICE, None).await;
    let mut on_b = b.stream(&format!("/threads/{id}/events"), ALICE, None).await;

    // The database drops every connection of both servers every 0.3 s while they take sends.
    let stop = Arc::new(AtomicBool::new(false));
    let terminated = Arc::new(AtomicU64::new(0));
    let killer = {
        let (stop, terminated, name) = (stop.clone(), terminated.clone(), schema.0.clone());
        tokio::spawn(async move {
            let client = raw_client().await;
            let schema = Schema(name);
            while !stop.load(Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(300)).await;
                terminated.fetch_add(schema.terminate(&client).await.unsigned_abs(), Ordering::Relaxed);
            }
            std::mem::forget(schema);
        })
    };
    // Accepted sends per server: each ends with a `run_finished` on that server's stream.
    let mut accepted = [0usize; 2];
    for n in 0..SENDS {
        let server = if n % 2 == 0 { &a } else { &b };
        let (status, _) =
            server.post(&format!("/threads/{id}/messages"), ALICE, &format!(r#"{{"content":"m{n}"}}"#)).await;
        accepted[n % 2] += usize::from(status == 202);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    stop.store(true, Ordering::Relaxed);
    killer.await.expect("the terminating task");
    let terminated = terminated.load(Ordering::Relaxed);
    assert!(terminated > 0, "no connection was terminated");

    // Once every run is over, the store's history is the truth each stream must match.
    let seen_on_a = until_runs_finished(&mut on_a, accepted[0]).await;
    let seen_on_b = until_runs_finished(&mut on_b, accepted[1]).await;
    // A run whose input another process's run took first (a sweep runs a whole inbox) finishes
    // at once, so its `run_finished` can come before that other run's messages: wait until no
    // run is going or pending in the store.
    let stored = settled_history(&a, &schema, &id).await;
    let accepted = accepted[0] + accepted[1];
    assert!(!stored.is_empty(), "no message was stored ({accepted} sends accepted)");
    let wanted: HashSet<String> = stored.iter().cloned().collect();
    for (name, stream, seen) in [("A", &mut on_a, seen_on_a), ("B", &mut on_b, seen_on_b)] {
        let streamed = created_messages(stream, seen, &wanted, support::PATIENCE).await;
        assert_eq!(streamed, stored, "server {name}: each stored message once, in the store's order");
    }
    println!(
        "{accepted} of {SENDS} sends accepted, {} messages stored and streamed once in order on both servers, \
         {terminated} connections terminated",
        stored.len()
    );
    schema.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_following_160_threads_and_its_users_listens_on_one_connection() {
    let schema = Schema::new("listen");
    let server = Server::start(runtime(&schema, 0).await, ServerConfig::default()).await;
    let client = raw_client().await;
    let mut streams = Vec::new();
    for n in 0..160 {
        let id = server.create_thread(ALICE, "pg_agent").await;
        // Some with a stream open too: a stream costs no connection either.
        if n % 10 == 0 {
            streams.push(server.stream(&format!("/threads/{id}/events"), ALICE, None).await);
        }
    }
    // A user's stream: from its first client on, the runtime follows other processes' user changes.
    streams.push(server.stream("/user/events", ALICE, None).await);
    let listening: i64 = client
        .query_one("SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = 'hooks_events_' || $1", &[&schema.0])
        .await
        .expect("count listeners")
        .get(0);
    let for_users: i64 = client
        .query_one("SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = 'hooks_users_' || $1", &[&schema.0])
        .await
        .expect("count user listeners")
        .get(0);
    let all = schema.connections(&client).await;
    println!("160 threads followed: {listening} listening connection, {all} connections in all (pool of 6)");
    assert_eq!(listening, 1, "one listening connection for all threads");
    // The runtime follows user changes through the same connection.
    assert_eq!(for_users, 0, "user changes come through the one listening connection");
    assert!(all <= 6 + 1, "{all} connections: the pool of 6 and one listener");
    drop(streams);
    schema.drop().await;
}

/// The thread's stored message ids once no run is going or can start: its inbox in the store is
/// empty (every accepted input was taken by a run) and no process holds its lease (every run
/// that took one has ended; a lease its holder could not release, its connection terminated,
/// counts until it expires). Judged from the store's rows, not from how long the history has
/// not changed: a run waiting for a lease leaves the history still for as long as it waits.
async fn settled_history(server: &Server, schema: &Schema, id: &str) -> Vec<String> {
    let client = raw_client().await;
    let query = format!(
        "SELECT NOT EXISTS (SELECT 1 FROM {0}.thread_inbox WHERE thread_id = $1) \
           AND NOT EXISTS (SELECT 1 FROM {0}.thread_leases WHERE thread_id = $1 AND expires_at > clock_timestamp())",
        schema.0
    );
    let deadline = std::time::Instant::now() + support::PATIENCE;
    loop {
        let settled: bool = client.query_one(&query, &[&id]).await.expect("read the inbox and lease").get(0);
        if settled {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the thread's runs never ended");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (status, body) = server.get(&format!("/threads/{id}/messages"), ALICE).await;
    assert_eq!(status, 200, "{body}");
    body["messages"].as_array().unwrap().iter().map(|message| message["id"].as_str().unwrap().to_owned()).collect()
}
