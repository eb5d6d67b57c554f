//! Load benchmark: 1,000 concurrent SSE clients on 200 threads, over real HTTP on 127.0.0.1.
//!
//! Every client must receive every event of its thread's run exactly once, in id order, and the
//! same sequence as the other clients of that thread; the benchmark fails otherwise. It prints
//! the time from the first send to the last client's `run_finished`, and the memory an idle
//! client costs (resident set growth while the streams are open, divided by the clients; client
//! and server share the process, so this is an upper bound on the server's share).
//!
//! ```text
//! cargo bench -p hooks-server --bench sse_fanout            # 200 threads, 1,000 clients
//! cargo bench -p hooks-server --bench sse_fanout -- 50 250  # threads, clients
//! ```

use std::time::{Duration, Instant};

use hooks_runtime::Runtime;
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_server::{ServerConfig, StaticTokens};
use serde_json::Value;

define_prompt! { name: fanout_prompt, model: "scripted", prompt: "Answer." }
define_agent! { name: fanout_agent, side_a: { prompt: fanout_prompt, stop_on_response: true } }

const TOKEN: &str = "bench-token";
/// The bound on the whole run: a benchmark that hangs is a failed benchmark.
const LIMIT: Duration = Duration::from_secs(300);

fn resident_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status.lines().find_map(|line| {
                line.strip_prefix("VmRSS:").and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            })
        })
        .unwrap_or(0)
}

/// Reads SSE events until `run_finished`; returns (id, data) pairs.
async fn read_run(mut response: reqwest::Response) -> Vec<(u64, String)> {
    let mut buffer = String::new();
    let mut events = Vec::new();
    loop {
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            let mut id = None;
            let mut data = String::new();
            for line in block.lines() {
                if let Some(value) = line.strip_prefix("id: ") {
                    id = value.parse().ok();
                } else if let Some(value) = line.strip_prefix("data: ") {
                    data.push_str(value);
                }
            }
            let (Some(id), false) = (id, data.is_empty()) else { continue };
            let finished = serde_json::from_str::<Value>(&data).map(|v| v["type"] == "run_finished").unwrap_or(false);
            events.push((id, data));
            if finished {
                return events;
            }
        }
        match response.chunk().await {
            Ok(Some(chunk)) => buffer.push_str(&String::from_utf8_lossy(&chunk)),
            _ => panic!("a stream ended before run_finished after {} events", events.len()),
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1).filter(|arg| !arg.starts_with('-'));
    let threads: usize = args.next().and_then(|v| v.parse().ok()).unwrap_or(200);
    let clients: usize = args.next().and_then(|v| v.parse().ok()).unwrap_or(1000);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio");
    runtime.block_on(async {
        tokio::time::timeout(LIMIT, run(threads, clients)).await.expect("the benchmark finished within its bound");
    });
}

async fn run(threads: usize, clients: usize) {
    let model = ScriptedModel::new((0..threads).map(|_| ScriptedResponse::text("All good, nothing to report.")));
    let hooks = Runtime::builder().agent::<fanout_agent>().model("scripted", model).build().expect("runtime");
    let app = hooks_server::router_with(hooks, StaticTokens::new([(TOKEN, "bench")]), ServerConfig::default())
        .expect("router");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    tokio::spawn(async move { axum::serve(listener, app).await.expect("serve") });
    let http = reqwest::Client::builder().pool_max_idle_per_host(0).build().expect("client");
    let auth = format!("Bearer {TOKEN}");

    let mut ids = Vec::with_capacity(threads);
    for _ in 0..threads {
        let created: Value = serde_json::from_str(
            &http
                .post(format!("{base}/threads"))
                .header("authorization", &auth)
                .body(r#"{"agent":"fanout_agent"}"#)
                .send()
                .await
                .expect("create")
                .text()
                .await
                .expect("body"),
        )
        .expect("JSON");
        ids.push(created["id"].as_str().expect("id").to_owned());
    }

    let before = resident_kib();
    let mut streams = Vec::with_capacity(clients);
    for client in 0..clients {
        let thread = client % threads;
        let response = http
            .get(format!("{base}/threads/{}/events", ids[thread]))
            .header("authorization", &auth)
            .send()
            .await
            .expect("stream");
        assert_eq!(response.status().as_u16(), 200);
        streams.push((thread, response));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let open = resident_kib();

    let started = Instant::now();
    let readers: Vec<_> = streams
        .into_iter()
        .map(|(thread, response)| tokio::spawn(async move { (thread, read_run(response).await) }))
        .collect();
    for id in &ids {
        let response = http
            .post(format!("{base}/threads/{id}/messages"))
            .header("authorization", &auth)
            .body(r#"{"content":"status?"}"#)
            .send()
            .await
            .expect("send");
        assert_eq!(response.status().as_u16(), 202);
    }
    let mut per_thread: Vec<Option<Vec<(u64, String)>>> = vec![None; threads];
    let mut events = 0;
    for reader in readers {
        let (thread, received) = reader.await.expect("reader");
        let numbers: Vec<u64> = received.iter().map(|(id, _)| *id).collect();
        assert!(numbers.windows(2).all(|pair| pair[1] == pair[0] + 1), "a gap or a duplicate: {numbers:?}");
        assert_eq!(numbers.first(), Some(&1), "the first event of the thread");
        match &per_thread[thread] {
            Some(first) => assert_eq!(first, &received, "two clients of one thread saw different events"),
            None => per_thread[thread] = Some(received.clone()),
        }
        events += received.len();
    }
    let elapsed = started.elapsed();
    let per_client = (open.saturating_sub(before) * 1024) / clients.max(1) as u64;
    println!("sse_fanout: {threads} threads, {clients} clients, {events} events delivered, each once and in order");
    println!("sse_fanout: first send to last run_finished: {:.1} ms", elapsed.as_secs_f64() * 1e3);
    println!(
        "sse_fanout: resident memory {before} KiB before the streams, {open} KiB with {clients} idle streams open: \
         about {:.1} KiB per idle client (client and server sides together)",
        per_client as f64 / 1024.0
    );
}
