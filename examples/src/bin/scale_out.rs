//! Scale-out: two runtimes share one PostgreSQL database, as two processes behind a load
//! balancer would. Runtime A shows the thread's lease and runs a turn (its send holds the lease);
//! a subscriber attached to runtime B's store sees A's run as it happens (messages, tool calls,
//! status), B cannot take the thread while A holds it, and afterwards B reopens the thread and
//! reads its history.
//!
//! Each runtime has its own `PostgresStore` (its own connection pool), so nothing is shared in
//! memory between them: what B sees went through the database. A's runtime publishes its
//! thread's events through its store by itself; B reads them with `PostgresStore::subscribe`.
//!
//! ```text
//! HOOKS_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \
//!     cargo run -p examples --features postgres --bin scale_out
//! ```

use std::time::Duration;

use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::store::{PostgresOptions, PostgresStore, RunOwnership};
use hooks_runtime::tool::FnTool;
use hooks_runtime::types::HookToolResult;
use hooks_runtime::{Runtime, ThreadOptions};
use serde_json::{Value, json};

mod prompts {
    use hooks_runtime::prelude::*;

    define_prompt! {
        name: weather_prompt,
        model: "scripted",
        prompt: "You answer questions about the weather. Use get_weather.",
        tools: ["get_weather"],
    }
}

mod agents {
    use hooks_runtime::prelude::*;

    define_agent! {
        name: weather_agent,
        side_a: { prompt: crate::prompts::weather_prompt, stop_on_response: true, max_steps: 3 },
        side_b: { human: true },
    }
}

/// The schema the example keeps its tables in, apart from anything else in the database.
const SCHEMA: &str = "hooks_scale_out_example";

/// One "process": a store with its own pool, and a runtime on it. A run waits up to `run_wait`
/// for a thread that another process runs.
async fn process(url: &str, run_wait: Duration) -> Result<(PostgresStore, Runtime), Box<dyn std::error::Error>> {
    let store = PostgresStore::connect_with(url, PostgresOptions::new().schema(SCHEMA).run_wait(run_wait)).await?;
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_1", "get_weather", r#"{"city":"Lisbon"}"#),
        ScriptedResponse::text("It is 18 °C and sunny in Lisbon."),
    ]);
    let get_weather = FnTool::new("get_weather", "The current weather in a city.", |args: Value| async move {
        let city = args["city"].as_str().unwrap_or("nowhere").to_owned();
        HookToolResult::success(json!({ "city": city, "celsius": 18 }).to_string())
    })
    .with_parameters(json!({
        "type": "object",
        "properties": { "city": { "type": "string" } },
        "required": ["city"],
    }));
    let runtime = Runtime::builder()
        .agent::<agents::weather_agent>()
        .model("scripted", model)
        .tool(get_weather)
        .store(store.clone())
        .build()?;
    Ok((store, runtime))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    examples::init_logging();
    let url = std::env::var("HOOKS_DATABASE_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
    let (store_a, runtime_a) = process(&url, Duration::from_secs(30)).await?;
    // B gives up soon on a thread that A runs, so that the example shows the refusal.
    let (store_b, runtime_b) = process(&url, Duration::from_millis(500)).await?;
    println!("both runtimes use {}", store_a.target());

    let thread = runtime_a.create_thread("weather_agent", ThreadOptions::default()).await?;
    let thread_id = thread.id().to_owned();

    examples::heading("Runtime B subscribes to the thread");
    let mut events = store_b.subscribe(&thread_id, 0).await?;
    let watcher = tokio::spawn(async move {
        while let Some(event) = events.next().await {
            match event {
                Ok(event) => {
                    println!("  B sees #{:<2} {}", event.seq, event.event);
                    let finished = event.event["type"] == "status" && event.event["status"] != "running";
                    if finished {
                        return;
                    }
                }
                Err(error) => println!("  B: {error}"),
            }
        }
    });

    examples::heading("One owner per thread: the lease");
    // Every run holds its thread's lease (`RunOwnership::hold_run`, which `send` takes); held
    // here by hand, it shows what another process meets meanwhile.
    let hold = store_a.hold_run(&thread_id).await?;
    println!("A holds the lease");
    match store_b.hold_run(&thread_id).await {
        Ok(_) => println!("B tries to take the thread: taken (wrong!)"),
        Err(error) => println!("B tries to take the thread: refused, {error}"),
    }
    hold.release().await;

    examples::heading("Runtime A runs a turn (its send holds the lease while it runs)");

    let outcome = thread.send("What's the weather in Lisbon?").await?.into_result()?;
    println!("A's reply: {}", outcome.reply.as_deref().unwrap_or("(none)"));
    drop(thread);

    tokio::time::timeout(Duration::from_secs(30), watcher).await??;

    examples::heading("Runtime B reopens the thread");
    let hold_b = store_b.hold_run(&thread_id).await?;
    println!("B takes the lease after A's run released it");
    let reopened = runtime_b.open_thread(&thread_id).await?;
    for message in reopened.messages().await? {
        println!("  {}", examples::describe_message(&message, 60));
    }
    hold_b.release().await;

    // The example leaves nothing behind: its stores close, then its schema goes.
    drop((reopened, runtime_a, runtime_b, store_a, store_b));
    drop_schema(&url).await?;
    println!("dropped the schema `{SCHEMA}`");
    Ok(())
}

/// Drops the example's schema and everything in it, over a connection of its own.
async fn drop_schema(url: &str) -> Result<(), Box<dyn std::error::Error>> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await?;
    let driver = tokio::spawn(connection);
    // At WARNING: the NOTICE listing what the drop cascades to is no news here.
    client.batch_execute(&format!("SET client_min_messages = warning; DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")).await?;
    drop(client);
    let _ = driver.await;
    Ok(())
}
