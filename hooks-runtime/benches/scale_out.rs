//! Scale-out: sends per second with 1, 2 and 4 runtime processes on one PostgreSQL database,
//! against one process on an SQLite file, printed as ratios measured in one run (rounds
//! interleaved, median of the per-round ratios).
//!
//! The workload is fixed: `BENCH_SENDS` sends (default 480), spread over the processes, each
//! running its share on `BENCH_TASKS` threads at once (default 8 per process, one conversation
//! thread each). A PostgreSQL send takes the thread's lease, runs with its writes checked against
//! it, and releases it (`Thread::send` does all three, as a runtime on a shared database must);
//! the SQLite send has no lease (one process owns the file).
//! A model that answers at once keeps the model out of the figure, so this measures the runtime
//! and the store. Processes are this bench binary run again; they connect first and start
//! together at a time the parent gives. Throughput is the sends over the slowest process's time.
//!
//! ```text
//! HOOKS_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \
//!     cargo bench -p hooks-runtime --features postgres --bench scale_out
//! ```
//!
//! `BENCH_ROUNDS` (default 3) sets the rounds. Every round uses a fresh schema, dropped after.

#![allow(missing_docs)]

use std::collections::VecDeque;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hooks_runtime::model::{Model, ModelError, ModelEvent, ModelRequest, ModelStream};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{MessageStore, PostgresOptions, PostgresStore, SqliteStore};
use hooks_runtime::{Runtime, ThreadOptions};

const CHILD_ENV: &str = "HOOKS_BENCH_SCALE_OUT_CHILD";

define_prompt! {
    name: s_prompt,
    model: "instant",
    prompt: "Answer at once.",
}

define_agent! {
    name: s_agent,
    side_a: { prompt: s_prompt, stop_on_response: true, max_steps: 2 },
    side_b: { human: true },
}

/// Replies `ok` at once.
struct InstantModel;

#[hooks_runtime::async_trait]
impl Model for InstantModel {
    async fn stream(&self, _request: ModelRequest) -> Result<Box<dyn ModelStream>, ModelError> {
        Ok(Box::new(Events(VecDeque::from([ModelEvent::TextDelta("ok".into())]))))
    }
}

struct Events(VecDeque<ModelEvent>);

#[hooks_runtime::async_trait]
impl ModelStream for Events {
    async fn next_event(&mut self) -> Option<Result<ModelEvent, ModelError>> {
        self.0.pop_front().map(Ok)
    }
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn database_url() -> String {
    std::env::var("HOOKS_DATABASE_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(0))
}

fn runtime(store: impl MessageStore) -> Runtime {
    Runtime::builder().agent::<s_agent>().model("instant", InstantModel).store(store).build().unwrap()
}

/// Runs `sends` sends on `tasks` threads at once. On PostgreSQL each send takes and releases its
/// thread's lease itself (`RunOwnership::hold_run`), its writes checked against it.
async fn work(runtime: Runtime, tasks: usize, sends: usize) {
    let per_task = sends.div_ceil(tasks);
    let mut handles = Vec::new();
    for task in 0..tasks {
        let runtime = runtime.clone();
        let count = per_task.min(sends.saturating_sub(task * per_task));
        handles.push(tokio::spawn(async move {
            let thread = runtime.create_thread("s_agent", ThreadOptions::default()).await.unwrap();
            for n in 0..count {
                let outcome = thread.send(&format!("message {n}")).await.unwrap();
                assert!(outcome.reply.is_some());
            }
        }));
    }
    for handle in handles {
        handle.await.expect("a send task panicked");
    }
}

/// The child: connects, waits for the common start, runs its share, prints its time in ms.
fn child(spec: &str) {
    let mut parts = spec.split(',');
    let mut next = || parts.next().expect("child spec").to_owned();
    let (schema, sends, tasks, start_at) = (next(), next(), next(), next());
    let (sends, tasks, start_at): (usize, usize, u64) =
        (sends.parse().unwrap(), tasks.parse().unwrap(), start_at.parse().unwrap());
    let tokio = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    tokio.block_on(async move {
        let options = PostgresOptions::new().schema(&schema).max_connections(tasks);
        let store = PostgresStore::connect_with(&database_url(), options).await.expect("connect");
        let runtime = runtime(store);
        tokio::time::sleep(Duration::from_millis(start_at.saturating_sub(now_ms()))).await;
        let started = Instant::now();
        work(runtime, tasks, sends).await;
        println!("ELAPSED_MS {}", started.elapsed().as_secs_f64() * 1000.0);
    });
}

/// `processes` children on a fresh schema; returns sends per second.
fn postgres_round(processes: usize, sends: usize, tasks: usize, round: usize) -> f64 {
    let schema = format!("bench_scale_out_{}_{round}_{processes}", std::process::id());
    let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    tokio.block_on(async {
        let options = PostgresOptions::new().schema(&schema).max_connections(1);
        drop(PostgresStore::connect_with(&database_url(), options).await.expect("PostgreSQL unreachable"));
    });
    let start_at = now_ms() + 1_500;
    let children: Vec<_> = (0..processes)
        .map(|p| {
            let share = sends / processes + usize::from(p < sends % processes);
            std::process::Command::new(std::env::current_exe().unwrap())
                .env(CHILD_ENV, format!("{schema},{share},{tasks},{start_at}"))
                .stdout(std::process::Stdio::piped())
                .spawn()
                .expect("spawn a bench process")
        })
        .collect();
    let mut slowest: f64 = 0.0;
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "a bench process failed: {}", output.status);
        let text = String::from_utf8_lossy(&output.stdout);
        let ms: f64 = text
            .lines()
            .find_map(|line| line.strip_prefix("ELAPSED_MS "))
            .expect("the child's time")
            .trim()
            .parse()
            .unwrap();
        slowest = slowest.max(ms);
    }
    tokio.block_on(async {
        let (client, connection) = tokio_postgres::connect(&database_url(), tokio_postgres::NoTls).await.unwrap();
        tokio::spawn(connection);
        client.batch_execute(&format!("DROP SCHEMA {schema} CASCADE")).await.unwrap();
    });
    sends as f64 / (slowest / 1000.0)
}

/// One process on an SQLite file; returns sends per second.
fn sqlite_round(sends: usize, tasks: usize) -> f64 {
    let dir = std::env::temp_dir().join(format!("hooks-bench-scale-out-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let store = SqliteStore::open(dir.join("store.db")).unwrap();
    let tokio = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let elapsed = tokio.block_on(async {
        let started = Instant::now();
        work(runtime(store), tasks, sends).await;
        started.elapsed()
    });
    let _ = std::fs::remove_dir_all(&dir);
    sends as f64 / elapsed.as_secs_f64()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    if let Ok(spec) = std::env::var(CHILD_ENV) {
        child(&spec);
        return;
    }
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    let sends = env_usize("BENCH_SENDS", 480);
    let tasks = env_usize("BENCH_TASKS", 8);
    let rounds = env_usize("BENCH_ROUNDS", 3).max(1);
    let process_counts = [1usize, 2, 4];
    println!("scale_out: {sends} sends, {tasks} threads at once per process, {rounds} rounds");
    let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); process_counts.len()];
    let mut figures: Vec<Vec<f64>> = vec![Vec::new(); process_counts.len() + 1];
    for round in 0..rounds {
        let sqlite = sqlite_round(sends, tasks);
        figures[0].push(sqlite);
        print!("round {round}: SQLite 1 process {sqlite:.0}/s");
        for (i, &processes) in process_counts.iter().enumerate() {
            let pg = postgres_round(processes, sends, tasks, round);
            figures[i + 1].push(pg);
            ratios[i].push(pg / sqlite);
            print!(", PostgreSQL {processes} {pg:.0}/s");
        }
        println!();
    }
    println!("\nmedian sends per second, and the median per-round ratio to SQLite in one process:");
    println!("  {:<25} {:>8.0}/s  1.00x", "SQLite, 1 process:", median(figures[0].clone()));
    for (i, processes) in process_counts.iter().enumerate() {
        let label = format!("PostgreSQL, {processes} process{}:", if *processes == 1 { "" } else { "es" });
        println!("  {label:<25} {:>8.0}/s  {:.2}x", median(figures[i + 1].clone()), median(ratios[i].clone()));
    }
}
