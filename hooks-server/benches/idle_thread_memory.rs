//! Bytes held per live idle thread, counted by a global allocator that wraps `System`
//! (`stats_alloc`), in this binary only: the runtime's thread alone, then the server's (a thread
//! created and read once through the router, so that the server holds its entry and event log).
//! The figure is the growth of bytes allocated and not freed, divided by the number of threads.

#![allow(missing_docs)]

use std::alloc::System;

use axum::body::Body;
use axum::http::Request;
use hooks_runtime::model::ScriptedModel;
use hooks_runtime::prelude::*;
use hooks_runtime::{Runtime, ThreadEvent, ThreadOptions};
use hooks_server::{ServerConfig, StaticTokens};
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};
use tower_service::Service;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

define_prompt! { name: idle_prompt, model: "scripted", prompt: "Answer." }
define_agent! { name: idle_agent, side_a: { prompt: idle_prompt, stop_on_response: true } }

const THREADS: usize = 1_000;

/// Bytes allocated and not yet freed.
fn held() -> i64 {
    let stats = GLOBAL.stats();
    stats.bytes_allocated as i64 - stats.bytes_deallocated as i64 + stats.bytes_reallocated as i64
}

fn runtime() -> Runtime {
    Runtime::builder().agent::<idle_agent>().model("scripted", ScriptedModel::default()).build().expect("runtime")
}

async fn call(router: &mut axum::Router, request: Request<Body>) -> serde_json::Value {
    let response = router.call(request).await.expect("infallible");
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20).await.expect("body");
    serde_json::from_slice(&bytes).expect("JSON")
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    // The runtime's threads alone, each handle kept.
    let runtime_alone = runtime();
    let warm = runtime_alone.create_thread("idle_agent", ThreadOptions::new()).await.expect("thread");
    let mut threads = Vec::with_capacity(THREADS);
    let after_vec = held();
    for _ in 0..THREADS {
        threads.push(runtime_alone.create_thread("idle_agent", ThreadOptions::new()).await.expect("thread"));
    }
    let runtime_only = (held() - after_vec) / THREADS as i64;
    drop((threads, warm));

    // Through the server: created and read once, as a client opening threads would.
    let auth = StaticTokens::new([("token", "alice")]);
    let mut router =
        hooks_server::router_with(runtime(), auth, ServerConfig::default().max_threads_per_user(THREADS + 10))
            .expect("router");
    let create = || {
        Request::post("/threads")
            .header("authorization", "Bearer token")
            .header("content-type", "application/json")
            .body(Body::from(r#"{"agent":"idle_agent"}"#))
            .unwrap()
    };
    let warm = call(&mut router, create()).await;
    let read = |id: &str| {
        Request::get(format!("/threads/{id}")).header("authorization", "Bearer token").body(Body::empty()).unwrap()
    };
    call(&mut router, read(warm["id"].as_str().unwrap())).await;
    let before = held();
    for _ in 0..THREADS {
        let thread = call(&mut router, create()).await;
        call(&mut router, read(thread["id"].as_str().unwrap())).await;
    }
    let server = (held() - before) / THREADS as i64;
    // What a thread's two broadcast channels (256 event slots, 1,024 delta slots) hold once
    // made: tokio allocates every slot up front, so the runtime makes each at its first
    // subscription (a server's thread subscribes to the events, never to the deltas).
    let before = held();
    let channels =
        (tokio::sync::broadcast::channel::<ThreadEvent>(256), tokio::sync::broadcast::channel::<ThreadEvent>(1024));
    let broadcast = held() - before;
    drop(channels);
    println!("bytes held per live idle thread, {THREADS} threads, in-memory store:");
    println!("  runtime thread (handle kept):             {runtime_only} B");
    println!("  its two broadcast channels, once made:    {broadcast} B");
    println!("  server thread (store, runtime and entry): {server} B");
}
