//! Runtime processes on one PostgreSQL schema. First, two of them each send a message to every
//! one of the same threads at once; each send runs under the thread's lease, which
//! `Thread::send` takes itself (`RunOwnership::hold_run`). Every message must be
//! stored exactly once, and each thread's history must be turns one after the other: user,
//! reply, user, reply, each reply answering the message just before it, which two turns run at
//! once on one thread would break.
//!
//! The parent runs this test binary twice more as children, selecting [`scale_child`] with
//! `--exact`; without [`CHILD_ENV`] the child test does nothing. `HOOKS_SCALE_THREADS` sets the
//! number of threads (default 1,000).
//!
//! Second, a runtime process killed with SIGKILL mid-run, 20 times: every acknowledged message
//! is stored once with its reply, every row reads back, the thread is never left `running`, and
//! this process takes the thread over once the lease expires and continues it.

#![cfg(feature = "postgres")]

use crate::postgres_support;

use std::collections::VecDeque;
use std::time::Duration;

use hooks_runtime::__test::PostgresLeases;
use hooks_runtime::Runtime;
use hooks_runtime::model::{Model, ModelError, ModelEvent, ModelRequest, ModelStream};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{FailReason, MessageStore, PostgresOptions, PostgresStore, ThreadRecord, ThreadStatus};
use hooks_runtime::types::Role;
use postgres_support::{PgSchema, database_url};

/// Set in a child: `<schema>,<process label>,<threads>`.
const CHILD_ENV: &str = "HOOKS_PG_SCALE_CHILD";
/// How many runtime processes send to every thread.
const PROCESSES: usize = 2;
/// How many threads each process works on at once.
const TASKS: usize = 8;

define_prompt! {
    name: scale_prompt,
    model: "echo",
    prompt: "Answer the message.",
}

define_agent! {
    name: scale_agent,
    side_a: { prompt: scale_prompt, stop_on_response: true, max_steps: 2 },
    side_b: { human: true },
}

/// Replies `re: <the last message>`.
struct EchoModel;

#[hooks_runtime::async_trait]
impl Model for EchoModel {
    async fn stream(&self, request: ModelRequest) -> Result<Box<dyn ModelStream>, ModelError> {
        let last = request.messages.last().and_then(|m| m.content.clone()).unwrap_or_default();
        Ok(Box::new(Events(VecDeque::from([ModelEvent::TextDelta(format!("re: {last}"))]))))
    }
}

struct Events(VecDeque<ModelEvent>);

#[hooks_runtime::async_trait]
impl ModelStream for Events {
    async fn next_event(&mut self) -> Option<Result<ModelEvent, ModelError>> {
        self.0.pop_front().map(Ok)
    }
}

fn thread_count() -> usize {
    std::env::var("HOOKS_SCALE_THREADS").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000)
}

fn thread_id(n: usize) -> String {
    format!("scale-{n:04}")
}

/// The child half of the test: one runtime process sending once to every thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scale_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let mut parts = spec.split(',');
    let (schema, label, threads) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
    let threads: usize = threads.parse().unwrap();
    let options = PostgresOptions::new().schema(schema).max_connections(TASKS + 2);
    let store = PostgresStore::connect_with(&database_url(), options).await.unwrap();
    let runtime =
        Runtime::builder().agent::<scale_agent>().model("echo", EchoModel).store(store.clone()).build().unwrap();
    let mut tasks = Vec::new();
    for task in 0..TASKS {
        let (runtime, label) = (runtime.clone(), label.to_owned());
        tasks.push(tokio::spawn(async move {
            for n in (task..threads).step_by(TASKS) {
                let id = thread_id(n);
                // `send` takes the thread's lease itself (`RunOwnership::hold_run`).
                let thread = runtime.open_thread(&id).await.unwrap();
                let outcome = thread.send(&format!("{label} to {id}")).await.unwrap();
                assert!(outcome.reply.is_some());
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_message_of_two_processes_is_stored_once_and_no_two_turns_overlap() {
    let threads = thread_count();
    let schema = PgSchema::new("scale");
    let store = schema.store().await;
    for n in 0..threads {
        store.create_thread(&ThreadRecord::new(thread_id(n), "scale_agent", 1_700_000_000_000)).await.unwrap();
    }
    let children: Vec<_> = (0..PROCESSES)
        .map(|p| {
            tokio::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "postgres_scale_out::scale_child", "--nocapture", "--test-threads=1"])
                .env(CHILD_ENV, format!("{},p{p},{threads}", schema.name))
                .env("HOOKS_DATABASE_URL", database_url())
                .stdout(std::process::Stdio::null())
                .kill_on_drop(true)
                .spawn()
                .expect("spawn a runtime process")
        })
        .collect();
    for mut child in children {
        let status = tokio::time::timeout(Duration::from_secs(600), child.wait()).await.expect("hung").unwrap();
        assert!(status.success(), "a runtime process failed: {status}");
    }
    for n in 0..threads {
        let id = thread_id(n);
        let history = store.messages(&id).await.unwrap();
        assert_eq!(history.len(), 2 * PROCESSES, "{id}: every message once");
        let mut senders = Vec::new();
        for turn in history.chunks(2) {
            let (user, reply) = (&turn[0], &turn[1]);
            assert_eq!((user.role, reply.role), (Role::User, Role::Assistant), "{id}: turns interleaved");
            let asked = user.content.clone().unwrap();
            assert_eq!(reply.content.as_deref(), Some(format!("re: {asked}").as_str()), "{id}: overlapping turns");
            senders.push(asked.split(' ').next().unwrap().to_owned());
        }
        senders.sort();
        assert_eq!(senders, (0..PROCESSES).map(|p| format!("p{p}")).collect::<Vec<_>>(), "{id}");
        assert_eq!(store.load_thread(&id).await.unwrap().unwrap().status, ThreadStatus::Idle);
    }
    schema.drop().await;
}

// ---------------------------------------------------------------------------------------------
// A runtime process killed with SIGKILL mid-run, again and again.

/// Set in a child: the schema; the child then sends to [`KILLED_THREAD`] until it is killed.
const KILL_CHILD_ENV: &str = "HOOKS_PG_KILL_CHILD";
/// The thread the killed processes run.
const KILLED_THREAD: &str = "killed";
/// How many times a process is killed.
const KILLS: usize = 20;
/// The lease of a killed process: the takeover waits this long after the kill at most.
const CHILD_TTL: Duration = Duration::from_secs(1);

/// The child half: takes the thread's lease and sends until killed, printing `ACK <text>`
/// once each send has returned (the message is then acknowledged to its sender).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_child() {
    use std::io::Write;

    let Ok(schema) = std::env::var(KILL_CHILD_ENV) else {
        return;
    };
    let options = PostgresOptions::new().schema(schema).max_connections(4).run_lease_ttl(CHILD_TTL);
    let store = PostgresStore::connect_with(&database_url(), options).await.unwrap();
    let runtime =
        Runtime::builder().agent::<scale_agent>().model("echo", EchoModel).store(store.clone()).build().unwrap();
    let owner = format!("child-{}", std::process::id());
    let thread = runtime.open_thread(KILLED_THREAD).await.unwrap();
    for n in 0.. {
        // Each send holds the thread's lease (CHILD_TTL) while it runs.
        let text = format!("{owner}-{n}");
        thread.send(&text).await.unwrap();
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "ACK {text}").unwrap();
        stdout.flush().unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_killed_mid_run_20_times_loses_no_acknowledged_message_and_another_continues() {
    use tokio::io::{AsyncBufReadExt, BufReader};

    let schema = PgSchema::new("kill");
    let store = schema.store().await;
    let runtime =
        Runtime::builder().agent::<scale_agent>().model("echo", EchoModel).store(store.clone()).build().unwrap();
    store.create_thread(&ThreadRecord::new(KILLED_THREAD, "scale_agent", 1_700_000_000_000)).await.unwrap();
    let mut acknowledged = Vec::new();
    let mut dead_runs = 0;
    for kill in 0..KILLS {
        let mut child = tokio::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "postgres_scale_out::kill_child", "--nocapture", "--test-threads=1"])
            .env(KILL_CHILD_ENV, &schema.name)
            .env("HOOKS_DATABASE_URL", database_url())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn a runtime process");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        // Kill after a varying number of acknowledged sends, at a varying moment of the next.
        let wanted = 1 + kill % 4;
        let mut acks = 0;
        while acks < wanted {
            let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
                .await
                .expect("the process stopped acknowledging")
                .unwrap()
                .expect("the process ended before it was killed");
            if let Some(text) = line.strip_prefix("ACK ") {
                acknowledged.push(text.to_owned());
                acks += 1;
            }
        }
        tokio::time::sleep(Duration::from_millis((kill as u64 * 7) % 20)).await;
        child.kill().await.unwrap();
        // A send acknowledged between the last line read and the kill counts too.
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(text) = line.strip_prefix("ACK ") {
                acknowledged.push(text.to_owned());
            }
        }

        // Another process (this one) takes the thread over once the lease expires.
        let guard = store
            .wait_for_lease(KILLED_THREAD, "survivor", Duration::from_secs(60), Duration::from_secs(60))
            .await
            .unwrap()
            .expect("the killed process's lease never expired");
        let status = store.load_thread(KILLED_THREAD).await.unwrap().unwrap().status;
        if guard.lease().took_over_a_dead_run {
            dead_runs += 1;
            assert_eq!(status, ThreadStatus::Failed(FailReason::OwnerLost), "kill {kill}");
        } else {
            assert_ne!(status, ThreadStatus::Running, "kill {kill}: a dead run left the thread running");
        }

        // Every row is readable (nothing half-written) and every acknowledged message is there
        // once, answered by the reply right after it.
        let history = store.messages(KILLED_THREAD).await.unwrap();
        for text in &acknowledged {
            let at: Vec<usize> = (0..history.len()).filter(|&i| history[i].content.as_deref() == Some(text)).collect();
            assert_eq!(at.len(), 1, "kill {kill}: acknowledged message {text} stored {} times", at.len());
            let reply = history.get(at[0] + 1).expect("an acknowledged send has its reply");
            assert_eq!(reply.content.as_deref(), Some(format!("re: {text}").as_str()), "kill {kill}");
        }
        for (i, message) in history.iter().enumerate() {
            if message.role == Role::Assistant {
                let asked = history[i - 1].content.clone().unwrap_or_default();
                assert_eq!(history[i - 1].role, Role::User, "kill {kill}: a reply without its message");
                assert_eq!(message.content.as_deref(), Some(format!("re: {asked}").as_str()), "kill {kill}");
            }
        }

        // The survivor continues the thread: its own send takes the lease again.
        assert!(guard.release().await.unwrap());
        let thread = runtime.open_thread(KILLED_THREAD).await.unwrap();
        let text = format!("survivor-{kill}");
        let outcome = thread.send(&text).await.unwrap();
        assert_eq!(outcome.reply.as_deref(), Some(format!("re: {text}").as_str()));
        acknowledged.push(text);
        drop(thread);
        assert_eq!(store.load_thread(KILLED_THREAD).await.unwrap().unwrap().status, ThreadStatus::Idle);
    }
    assert!(acknowledged.len() >= KILLS * 2);
    eprintln!("{KILLS} kills, {dead_runs} of them mid-run, {} acknowledged messages", acknowledged.len());
    schema.drop().await;
}
