//! A whole turn: `thread.send` with the scripted model and the in-memory store, on a thread that
//! holds 10 messages, with 16 `filter_messages` hooks of one form against the same turn with no
//! hooks. Each sample builds a runtime; each iteration creates a thread and writes its 10
//! messages (not timed), then times one `send` (the user's message stored, the context assembled
//! with `filter_messages` over 11 messages, the model's scripted reply streamed and stored). So
//! every send sees the same history, and the variants differ only by their hooks.
//!
//! A second group times a turn of the hook-less agent handed over by `send` against one taken
//! through the thread's inbox (`queue_message`, committed, then `run_input`), on an SQLite file
//! and in memory (`cargo bench -p hooks-runtime --bench turn -- durable` runs only that group).
//!
//! A third group times a turn with one tool call (two model steps, the tool, its result) with no
//! `before_tool_call` hook against the same turn governed by 4 runtime-wide guards that allow
//! the call and rewrite nothing (`cargo bench -p hooks-runtime --bench turn -- governed`).
//!
//! A fourth group measures the check of the model's arguments against the tool's schema (G9):
//! one check alone (a compiled schema of five properties against arguments that satisfy it),
//! and a turn with one tool call whose tool declares that schema against the same turn whose
//! tool declares none (`{"type": "object"}`, also checked)
//! (`cargo bench -p hooks-runtime --bench turn -- schema`).
//!
//! A fifth group times `runtime.open_thread(id)` of a thread with a live handle (one live state
//! per thread: a look-up in the runtime's map, no store read) against `thread.clone()`, the
//! `Arc` clone it amounts to (`cargo bench -p hooks-runtime --bench turn -- open`).
//!
//! A sixth group measures a turn against its floor (`benches/floor`): `thread.send` on the
//! in-memory store with the least model against the same turn written by hand around the same
//! `Model`, for a text turn, a text turn with 4 in-place history hooks (called by hand in the
//! hand-written turn), and a turn with one tool call, all six interleaved in one run
//! (`cargo bench -p hooks-runtime --bench turn -- floor`).
//!
//! Run it with `cargo bench -p hooks-runtime --bench turn`; ratios are measured in this run,
//! variants interleaved round by round (10 ms samples, 41 rounds unless `BENCH_SAMPLE_MS` and
//! `BENCH_ROUNDS` say otherwise). No tracing subscriber is installed. The hooks are written as a
//! user would (no `#[inline(never)]`).

#![allow(missing_docs)]

mod floor;
mod harness;

use std::hint::black_box;
use std::time::{Duration, Instant};

use std::sync::Arc;

use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{InMemoryStore, MessageStore, SqliteStore};
use hooks_runtime::{Runtime, ThreadOptions};

use floor::HISTORY;

#[inline(always)]
fn touch<T>(mut value: T) -> T {
    black_box(&mut value);
    value
}

macro_rules! define_hooks {
    ($($ip:ident $ip_id:literal $ir:ident $ir_id:literal $ia:ident $ia_id:literal
       $bp:ident $bp_id:literal $br:ident $br_id:literal $ba:ident $ba_id:literal;)*) => {
        $(
            #[hook(filter_messages, id = $ip_id)]
            fn $ip(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
                black_box(messages);
            }

            #[hook(filter_messages, id = $ir_id)]
            fn $ir(_state: &ThreadState, messages: &mut Vec<HookMessage>) -> Result<(), HookError> {
                black_box(messages);
                Ok(())
            }

            #[hook(filter_messages, id = $ia_id)]
            async fn $ia(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
                black_box(messages);
            }

            #[hook(filter_messages, id = $bp_id)]
            fn $bp(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
                touch(messages)
            }

            #[hook(filter_messages, id = $br_id)]
            fn $br(_state: &ThreadState, messages: Vec<HookMessage>) -> Result<Vec<HookMessage>, HookError> {
                Ok(touch(messages))
            }

            #[hook(filter_messages, id = $ba_id)]
            async fn $ba(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
                touch(messages)
            }
        )*

        define_prompt! { name: p_none, model: "scripted", prompt: "Reply.", tools: [] }
        define_prompt! { name: p_in_place_plain, model: "scripted", prompt: "Reply.", tools: [], hooks: [$($ip),*] }
        define_prompt! { name: p_in_place_result, model: "scripted", prompt: "Reply.", tools: [], hooks: [$($ir),*] }
        define_prompt! { name: p_in_place_async, model: "scripted", prompt: "Reply.", tools: [], hooks: [$($ia),*] }
        define_prompt! { name: p_by_value_plain, model: "scripted", prompt: "Reply.", tools: [], hooks: [$($bp),*] }
        define_prompt! { name: p_by_value_result, model: "scripted", prompt: "Reply.", tools: [], hooks: [$($br),*] }
        define_prompt! { name: p_by_value_async, model: "scripted", prompt: "Reply.", tools: [], hooks: [$($ba),*] }
    };
}

define_hooks! {
    ip00 "ip00" ir00 "ir00" ia00 "ia00" bp00 "bp00" br00 "br00" ba00 "ba00";
    ip01 "ip01" ir01 "ir01" ia01 "ia01" bp01 "bp01" br01 "br01" ba01 "ba01";
    ip02 "ip02" ir02 "ir02" ia02 "ia02" bp02 "bp02" br02 "br02" ba02 "ba02";
    ip03 "ip03" ir03 "ir03" ia03 "ia03" bp03 "bp03" br03 "br03" ba03 "ba03";
    ip04 "ip04" ir04 "ir04" ia04 "ia04" bp04 "bp04" br04 "br04" ba04 "ba04";
    ip05 "ip05" ir05 "ir05" ia05 "ia05" bp05 "bp05" br05 "br05" ba05 "ba05";
    ip06 "ip06" ir06 "ir06" ia06 "ia06" bp06 "bp06" br06 "br06" ba06 "ba06";
    ip07 "ip07" ir07 "ir07" ia07 "ia07" bp07 "bp07" br07 "br07" ba07 "ba07";
    ip08 "ip08" ir08 "ir08" ia08 "ia08" bp08 "bp08" br08 "br08" ba08 "ba08";
    ip09 "ip09" ir09 "ir09" ia09 "ia09" bp09 "bp09" br09 "br09" ba09 "ba09";
    ip10 "ip10" ir10 "ir10" ia10 "ia10" bp10 "bp10" br10 "br10" ba10 "ba10";
    ip11 "ip11" ir11 "ir11" ia11 "ia11" bp11 "bp11" br11 "br11" ba11 "ba11";
    ip12 "ip12" ir12 "ir12" ia12 "ia12" bp12 "bp12" br12 "br12" ba12 "ba12";
    ip13 "ip13" ir13 "ir13" ia13 "ia13" bp13 "bp13" br13 "br13" ba13 "ba13";
    ip14 "ip14" ir14 "ir14" ia14 "ia14" bp14 "bp14" br14 "br14" ba14 "ba14";
    ip15 "ip15" ir15 "ir15" ia15 "ia15" bp15 "bp15" br15 "br15" ba15 "ba15";
}

macro_rules! agents {
    ($($agent:ident: $prompt:ident;)*) => {
        $(define_agent! {
            name: $agent,
            side_a: { prompt: $prompt, stop_on_response: true },
            side_b: { human: true },
        })*
    };
}

agents! {
    a_floor_text: p_floor_text;
    a_floor_hooks: p_floor_hooks;
    a_floor_tool: p_floor_tool;
    a_tool: p_tool;
    a_none: p_none;
    a_in_place_plain: p_in_place_plain;
    a_in_place_result: p_in_place_result;
    a_in_place_async: p_in_place_async;
    a_by_value_plain: p_by_value_plain;
    a_by_value_result: p_by_value_result;
    a_by_value_async: p_by_value_async;
}

#[hook(before_tool_call, id = "guard0", on_failure = deny)]
fn guard0(_state: &ThreadState, call: &HookToolCall, arguments: &mut serde_json::Value) -> ToolDecision {
    black_box((call, arguments));
    ToolDecision::allow()
}

#[hook(before_tool_call, id = "guard1", on_failure = deny)]
fn guard1(_state: &ThreadState, call: &HookToolCall, arguments: &mut serde_json::Value) -> ToolDecision {
    black_box((call, arguments));
    ToolDecision::allow()
}

#[hook(before_tool_call, id = "guard2", on_failure = allow)]
fn guard2(_state: &ThreadState, call: &HookToolCall, arguments: &mut serde_json::Value) -> ToolDecision {
    black_box((call, arguments));
    ToolDecision::allow()
}

#[hook(before_tool_call, id = "guard3", on_failure = allow)]
fn guard3(_state: &ThreadState, call: &HookToolCall, arguments: &mut serde_json::Value) -> ToolDecision {
    black_box((call, arguments));
    ToolDecision::allow()
}

define_prompt! { name: p_tool, model: "scripted", prompt: "Use the tool.", tools: ["lookup"] }
define_prompt! { name: p_floor_text, model: "minimal", prompt: "Reply.", tools: [] }
define_prompt! { name: p_floor_hooks, model: "minimal", prompt: "Reply.", tools: [], hooks: [ip00, ip01, ip02, ip03] }
define_prompt! { name: p_floor_tool, model: "minimal", prompt: "Use the tool.", tools: ["lookup"] }

/// One variant: its label, its agent, and the target against no hooks (`None`: reported only).
struct Case {
    label: &'static str,
    agent: &'static str,
    target: Option<f64>,
}

const NO_HOOKS: &str = "no hooks";
const CASES: [Case; 7] = [
    Case { label: NO_HOOKS, agent: "a_none", target: None },
    Case { label: "16 hooks, in place, plain", agent: "a_in_place_plain", target: Some(1.05) },
    Case { label: "16 hooks, in place, Result", agent: "a_in_place_result", target: Some(1.05) },
    Case { label: "16 hooks, in place, async", agent: "a_in_place_async", target: Some(1.15) },
    Case { label: "16 hooks, by value, plain", agent: "a_by_value_plain", target: Some(1.50) },
    Case { label: "16 hooks, by value, Result", agent: "a_by_value_result", target: Some(1.50) },
    Case { label: "16 hooks, by value, async", agent: "a_by_value_async", target: None },
];

fn build_runtime(model: &ScriptedModel) -> Runtime {
    build_runtime_on(model, Arc::new(InMemoryStore::new()))
}

fn build_runtime_on(model: &ScriptedModel, store: Arc<dyn MessageStore>) -> Runtime {
    Runtime::builder()
        .store(store)
        .agent::<a_none>()
        .agent::<a_in_place_plain>()
        .agent::<a_in_place_result>()
        .agent::<a_in_place_async>()
        .agent::<a_by_value_plain>()
        .agent::<a_by_value_result>()
        .agent::<a_by_value_async>()
        .model("scripted", model.clone())
        .build()
        .expect("the bench's agents resolve")
}

/// A new thread of `agent` holding [`HISTORY`] messages, written through `inject_message` (the
/// agent has no message hooks).
async fn thread_with_history(runtime: &Runtime, agent: &str) -> hooks_runtime::Thread {
    let thread = runtime.create_thread(agent, ThreadOptions::default()).await.unwrap();
    for i in 0..HISTORY {
        let role = if i % 2 == 0 { Role::User } else { Role::Assistant };
        thread.inject_message(MessageRecord::new(role, floor::history_text(i))).await.unwrap();
    }
    thread
}

/// Sends per runtime: the store keeps every thread, so a new runtime (and store) every this many
/// sends keeps the store's size, and the memory a send touches, the same whatever the number of
/// iterations a variant is calibrated to.
const SENDS_PER_RUNTIME: u64 = 64;

/// Times `n` sends, each on a new thread of `agent` with [`HISTORY`] messages; only the sends
/// are timed.
fn run(tokio: &tokio::runtime::Runtime, agent: &'static str, n: u64) -> Duration {
    tokio.block_on(async move {
        let mut model = ScriptedModel::default();
        let mut runtime = build_runtime(&model);
        let mut total = Duration::ZERO;
        for i in 0..n {
            if i % SENDS_PER_RUNTIME == SENDS_PER_RUNTIME - 1 {
                model = ScriptedModel::default();
                runtime = build_runtime(&model);
            }
            let thread = thread_with_history(&runtime, agent).await;
            model.push_all([ScriptedResponse::text("A short reply.")]);
            let started = Instant::now();
            let outcome = thread.send("What did we say?").await;
            total += started.elapsed();
            black_box(outcome.unwrap());
        }
        total
    })
}

/// Where a durable-turn variant keeps its threads.
#[derive(Clone, Copy, PartialEq)]
enum StoreKind {
    Memory,
    /// A database file in the temporary directory (WAL, as `SqliteStore::open` sets it up).
    SqliteFile,
}

/// How a durable-turn variant hands the message over.
#[derive(Clone, Copy, PartialEq)]
enum HandOver {
    /// `thread.send`: the run stores the message.
    Send,
    /// `thread.queue_message` (committed to the inbox) then `thread.run_input`: what the HTTP
    /// server does for every message, accepted before its 202.
    Inbox,
}

fn new_store(kind: StoreKind, dir: &std::path::Path, generation: u64) -> Arc<dyn MessageStore> {
    match kind {
        StoreKind::Memory => Arc::new(InMemoryStore::new()),
        StoreKind::SqliteFile => {
            let path = dir.join(format!("turn-{generation}.db"));
            let _ = std::fs::remove_file(&path);
            Arc::new(SqliteStore::open(path).expect("open the bench's SQLite file"))
        }
    }
}

/// Times `n` turns of the hook-less agent handed over by `hand_over` on `kind`, each on a new thread with
/// [`HISTORY`] messages; only the hand-over and the run are timed.
fn run_durable(tokio: &tokio::runtime::Runtime, kind: StoreKind, hand_over: HandOver, n: u64) -> Duration {
    let dir = std::env::temp_dir().join(format!("hooks-bench-turn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let total = tokio.block_on(async {
        let mut generation = 0;
        let mut model = ScriptedModel::default();
        let mut runtime = build_runtime_on(&model, new_store(kind, &dir, generation));
        let mut total = Duration::ZERO;
        for i in 0..n {
            if i % SENDS_PER_RUNTIME == SENDS_PER_RUNTIME - 1 {
                generation += 1;
                model = ScriptedModel::default();
                runtime = build_runtime_on(&model, new_store(kind, &dir, generation));
            }
            let thread = thread_with_history(&runtime, "a_none").await;
            model.push_all([ScriptedResponse::text("A short reply.")]);
            let started = Instant::now();
            let outcome = match hand_over {
                HandOver::Send => thread.send("What did we say?").await.unwrap(),
                HandOver::Inbox => {
                    let input = thread.queue_message(MessageRecord::new(Role::User, "What did we say?")).await.unwrap();
                    thread.run_input(&input).await.unwrap().expect("in the inbox")
                }
            };
            total += started.elapsed();
            black_box(outcome);
        }
        total
    });
    let _ = std::fs::remove_dir_all(&dir);
    total
}

/// The durable-turn variants: label, store, hand-over, and the target against the same store's
/// `send` (`None`: the reference).
const DURABLE: [(&str, StoreKind, HandOver, Option<f64>); 4] = [
    ("SQLite file, send", StoreKind::SqliteFile, HandOver::Send, None),
    ("SQLite file, inbox", StoreKind::SqliteFile, HandOver::Inbox, Some(1.10)),
    ("in memory, send", StoreKind::Memory, HandOver::Send, None),
    ("in memory, inbox", StoreKind::Memory, HandOver::Inbox, None),
];

/// The durable-turn group: a turn on SQLite and in memory, handed over by `send` and through
/// the inbox, interleaved.
fn durable_turns(tokio: &tokio::runtime::Runtime) {
    println!(
        "\nDurable turn: the hook-less agent, scripted model, a thread of {HISTORY} messages; send against \
         queue_message + run_input (the inbox), on an SQLite file and in memory"
    );
    // One group per store: an SQLite file's runtime leaves work behind a turn (its events go to
    // the file's event log from a task of their own, off the turn's path), which must not land
    // in an in-memory turn's samples.
    println!("\n| turn | us per turn | x send, same store | target | met |");
    println!("|---|---:|---:|---:|:---|");
    for store in [StoreKind::SqliteFile, StoreKind::Memory] {
        let cases: Vec<_> = DURABLE.iter().filter(|case| case.1 == store).collect();
        let variants = cases
            .iter()
            .map(|&&(label, kind, hand_over, _)| {
                harness::Variant::new(label, move |n| run_durable(tokio, kind, hand_over, n))
            })
            .collect();
        let group = harness::measure("a turn through the inbox against send", variants);
        let reference = cases[0].0;
        for &&(label, _, _, target) in &cases {
            let ratio = group.ratio(label, reference);
            let (target, met) = match target {
                Some(target) => (format!("≤ {target:.2}x"), if ratio <= target { "ok" } else { "MISS" }),
                None => ("-".to_owned(), "-"),
            };
            println!("| {label} | {:.1} | {ratio:.3}x | {target} | {met} |", group.ns(label) / 1000.0);
        }
    }
}

/// The governed-turn runtime: the tool agent, with `guards` runtime-wide guards (0 or 4).
fn governed_runtime(model: &ScriptedModel, guards: usize) -> Runtime {
    let lookup = hooks_runtime::tool::FnTool::new("lookup", "Looks a number up.", |_args| async {
        HookToolResult::success("42")
    });
    let builder = Runtime::builder().agent::<a_tool>().model("scripted", model.clone()).tool(lookup);
    let builder = if guards == 4 {
        builder.guard::<guard0>().guard::<guard1>().guard::<guard2>().guard::<guard3>()
    } else {
        builder
    };
    builder.build().expect("the bench's agents resolve")
}

/// Times `n` sends of a turn with one tool call, each on a new thread with [`HISTORY`] messages.
fn run_governed(tokio: &tokio::runtime::Runtime, guards: usize, n: u64) -> Duration {
    tokio.block_on(async move {
        let mut model = ScriptedModel::default();
        let mut runtime = governed_runtime(&model, guards);
        let mut total = Duration::ZERO;
        for i in 0..n {
            if i % SENDS_PER_RUNTIME == SENDS_PER_RUNTIME - 1 {
                model = ScriptedModel::default();
                runtime = governed_runtime(&model, guards);
            }
            let thread = thread_with_history(&runtime, "a_tool").await;
            model.push_all([
                ScriptedResponse::tool_call("call_1", "lookup", r#"{"key":"answer"}"#),
                ScriptedResponse::text("It is 42."),
            ]);
            let started = Instant::now();
            let outcome = thread.send("Look it up.").await;
            total += started.elapsed();
            black_box(outcome.unwrap());
        }
        total
    })
}

/// The governed-turn group: a turn with one tool call, 0 against 4 allowing in-place guards.
fn governed_turns(tokio: &tokio::runtime::Runtime) {
    tokio.block_on(async {
        for guards in [0, 4] {
            let model = ScriptedModel::default();
            let runtime = governed_runtime(&model, guards);
            let thread = thread_with_history(&runtime, "a_tool").await;
            model
                .push_all([ScriptedResponse::tool_call("call_1", "lookup", "{}"), ScriptedResponse::text("It is 42.")]);
            let outcome = thread.send("Look it up.").await.unwrap();
            assert_eq!(outcome.reply.as_deref(), Some("It is 42."));
        }
    });
    println!(
        "\nGoverned turn: one tool call, scripted model, in-memory store; no guard against 4 allowing in-place guards"
    );
    let variants = vec![
        harness::Variant::new("one tool call, no guards", move |n| run_governed(tokio, 0, n)),
        harness::Variant::new("one tool call, 4 guards", move |n| run_governed(tokio, 4, n)),
    ];
    let group = harness::measure("a turn with one tool call, 4 guards against none", variants);
    let ratio = group.ratio("one tool call, 4 guards", "one tool call, no guards");
    println!("\n| turn | us per turn | x no guards | target | met |");
    println!("|---|---:|---:|---:|:---|");
    println!("| one tool call, no guards | {:.1} | 1.000x | - | - |", group.ns("one tool call, no guards") / 1000.0);
    println!(
        "| one tool call, 4 guards | {:.1} | {ratio:.3}x | ≤ 1.05x | {} |",
        group.ns("one tool call, 4 guards") / 1000.0,
        if ratio <= 1.05 { "ok" } else { "MISS" }
    );
}

/// The parameters of the schema group's tool: five properties of four types, one required,
/// nothing else allowed.
fn bench_schema() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "key": {"type": "string", "minLength": 1, "maxLength": 200},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
            "exact": {"type": "boolean"},
            "note": {"type": "string"},
        },
        "required": ["key"],
        "additionalProperties": false,
    })
}

/// The arguments the schema group's model writes: they satisfy [`bench_schema`].
const SCHEMA_ARGUMENTS: &str = r#"{"key":"answer","limit":10,"tags":["a","b"],"exact":true}"#;

/// The schema-group runtime: the tool agent, its tool with [`bench_schema`] or with none.
fn schema_runtime(model: &ScriptedModel, schema: bool) -> Runtime {
    let lookup = hooks_runtime::tool::FnTool::new("lookup", "Looks a number up.", |_args| async {
        HookToolResult::success("42")
    });
    let lookup = if schema { lookup.with_parameters(bench_schema()) } else { lookup };
    Runtime::builder().agent::<a_tool>().model("scripted", model.clone()).tool(lookup).build().expect("resolves")
}

/// Times `n` sends of a turn with one tool call whose tool has the schema or none.
fn run_schema(tokio: &tokio::runtime::Runtime, schema: bool, n: u64) -> Duration {
    tokio.block_on(async move {
        let mut model = ScriptedModel::default();
        let mut runtime = schema_runtime(&model, schema);
        let mut total = Duration::ZERO;
        for i in 0..n {
            if i % SENDS_PER_RUNTIME == SENDS_PER_RUNTIME - 1 {
                model = ScriptedModel::default();
                runtime = schema_runtime(&model, schema);
            }
            let thread = thread_with_history(&runtime, "a_tool").await;
            model.push_all([
                ScriptedResponse::tool_call("call_1", "lookup", SCHEMA_ARGUMENTS),
                ScriptedResponse::text("It is 42."),
            ]);
            let started = Instant::now();
            let outcome = thread.send("Look it up.").await;
            total += started.elapsed();
            black_box(outcome.unwrap());
        }
        total
    })
}

/// The schema group (G9): one check alone, then a turn with the schema against one without.
fn schema_turns(tokio: &tokio::runtime::Runtime) {
    let arguments: serde_json::Value = serde_json::from_str(SCHEMA_ARGUMENTS).unwrap();
    let with = hooks_runtime::__bench::SchemaCheck::new(bench_schema());
    let without = hooks_runtime::__bench::SchemaCheck::new(serde_json::json!({"type": "object"}));
    assert!(with.check(&arguments) && without.check(&arguments));
    assert!(!with.check(&serde_json::json!({"key": 5})), "the schema refuses what it should");
    tokio.block_on(async {
        for schema in [false, true] {
            let model = ScriptedModel::default();
            let runtime = schema_runtime(&model, schema);
            let thread = thread_with_history(&runtime, "a_tool").await;
            model.push_all([
                ScriptedResponse::tool_call("call_1", "lookup", SCHEMA_ARGUMENTS),
                ScriptedResponse::text("It is 42."),
            ]);
            let outcome = thread.send("Look it up.").await.unwrap();
            assert_eq!(outcome.reply.as_deref(), Some("It is 42."));
            let messages = thread.messages().await.unwrap();
            assert!(messages.iter().any(|m| m.content.as_deref() == Some("42")), "the tool ran");
        }
    });
    println!("\nSchema check (G9): one check, then a turn with one tool call, schema of 5 properties against none");
    let (with, without, arguments) = (&with, &without, &arguments);
    let checks = harness::measure(
        "one check of the arguments",
        vec![
            harness::Variant::new("check, schema of 5 properties", move |n| {
                harness::time(n, || _ = black_box(with.check(black_box(arguments))))
            }),
            harness::Variant::new("check, {\"type\": \"object\"}", move |n| {
                harness::time(n, || _ = black_box(without.check(black_box(arguments))))
            }),
        ],
    );
    let turns = harness::measure(
        "a turn with one tool call, schema against none",
        vec![
            harness::Variant::new("one tool call, no schema", move |n| run_schema(tokio, false, n)),
            harness::Variant::new("one tool call, schema of 5 properties", move |n| run_schema(tokio, true, n)),
        ],
    );
    println!("\n| measured | ns | x reference |");
    println!("|---|---:|---:|");
    println!("| check, `{{\"type\": \"object\"}}` | {:.0} | - |", checks.ns("check, {\"type\": \"object\"}"));
    println!("| check, schema of 5 properties | {:.0} | - |", checks.ns("check, schema of 5 properties"));
    println!("| turn, one tool call, no schema | {:.0} | 1.000x |", turns.ns("one tool call, no schema"));
    println!(
        "| turn, one tool call, schema of 5 properties | {:.0} | {:.3}x |",
        turns.ns("one tool call, schema of 5 properties"),
        turns.ratio("one tool call, schema of 5 properties", "one tool call, no schema")
    );
}

/// Times `n` handles of one live thread: by `open_thread` or by a clone of a handle.
fn run_open(tokio: &tokio::runtime::Runtime, by_open: bool, n: u64) -> Duration {
    tokio.block_on(async move {
        let runtime = build_runtime(&ScriptedModel::default());
        let thread = runtime.create_thread(CASES[0].agent, ThreadOptions::default()).await.unwrap();
        let id = thread.id().to_owned();
        let started = Instant::now();
        for _ in 0..n {
            if by_open {
                black_box(runtime.open_thread(black_box(&id)).await.unwrap());
            } else {
                black_box(black_box(&thread).clone());
            }
        }
        started.elapsed()
    })
}

fn open_handles(tokio: &tokio::runtime::Runtime) {
    println!("\nA handle of a live thread: runtime.open_thread(id) against thread.clone()");
    let variants = vec![
        harness::Variant::new("thread.clone()", move |n| run_open(tokio, false, n)),
        harness::Variant::new("runtime.open_thread(id)", move |n| run_open(tokio, true, n)),
    ];
    let group = harness::measure("a handle of a live thread", variants);
    println!("\n| handle | ns each | x clone |");
    println!("|---|---:|---:|");
    for label in ["thread.clone()", "runtime.open_thread(id)"] {
        println!("| {label} | {:.0} | {:.2}x |", group.ns(label), group.ratio(label, "thread.clone()"));
    }
}

/// The floor group's runtime: its three agents, the least model, the `lookup` tool.
fn floor_runtime() -> Runtime {
    let lookup = hooks_runtime::tool::FnTool::new(floor::TOOL, "Looks a number up.", |_args| async {
        HookToolResult::success("42")
    });
    Runtime::builder()
        .store(InMemoryStore::new())
        .agent::<a_floor_text>()
        .agent::<a_floor_hooks>()
        .agent::<a_floor_tool>()
        .model("minimal", floor::MinimalModel)
        .tool(lookup)
        .build()
        .expect("the bench's agents resolve")
}

/// A floor scenario: its label, the runtime's agent, and the hand-written turn's hooks and tool.
struct FloorCase {
    label: &'static str,
    agent: &'static str,
    hooks: bool,
    tool: bool,
}

const FLOOR: [FloorCase; 3] = [
    FloorCase { label: "text turn", agent: "a_floor_text", hooks: false, tool: false },
    FloorCase { label: "text turn, 4 history hooks", agent: "a_floor_hooks", hooks: true, tool: false },
    FloorCase { label: "one tool call", agent: "a_floor_tool", hooks: false, tool: true },
];

/// Times `n` sends of `case`'s agent, each on a new thread with [`HISTORY`] messages.
fn run_floor_send(tokio: &tokio::runtime::Runtime, case: &FloorCase, n: u64) -> Duration {
    tokio.block_on(async move {
        let mut runtime = floor_runtime();
        let mut total = Duration::ZERO;
        for i in 0..n {
            if i % SENDS_PER_RUNTIME == SENDS_PER_RUNTIME - 1 {
                runtime = floor_runtime();
            }
            let thread = thread_with_history(&runtime, case.agent).await;
            let started = Instant::now();
            let outcome = thread.send(floor::USER_TEXT).await;
            total += started.elapsed();
            black_box(outcome.unwrap());
        }
        total
    })
}

/// Times `n` hand-written turns of `case`, each on a new history of [`HISTORY`] messages.
fn run_floor_hand(tokio: &tokio::runtime::Runtime, case: &FloorCase, n: u64) -> Duration {
    tokio.block_on(async move {
        let mut total = Duration::ZERO;
        for _ in 0..n {
            let mut messages = floor::history();
            let started = Instant::now();
            let reply = floor::scenario_turn(&mut messages, case.hooks, case.tool).await;
            total += started.elapsed();
            black_box((reply, messages));
        }
        total
    })
}

/// The floor group: each scenario's `thread.send` against its hand-written turn, all six
/// interleaved in one run.
fn floor_turns(tokio: &tokio::runtime::Runtime) {
    // Each pair is checked once: the same reply, and the same messages kept.
    tokio.block_on(async {
        let runtime = floor_runtime();
        for case in &FLOOR {
            let thread = thread_with_history(&runtime, case.agent).await;
            let outcome = thread.send(floor::USER_TEXT).await.unwrap();
            let mut messages = floor::history();
            let reply = floor::scenario_turn(&mut messages, case.hooks, case.tool).await;
            assert_eq!(outcome.reply.as_deref(), Some(reply.as_str()), "{}", case.label);
            assert_eq!(thread.messages().await.unwrap().len(), messages.len(), "{}", case.label);
        }
    });
    println!(
        "\nFloor: thread.send (in-memory store) against the same turn written by hand, the least model, a thread \
         of {HISTORY} messages; {} ms per sample, {} rounds, all six interleaved",
        harness::sample_ms(),
        harness::rounds()
    );
    let mut variants = Vec::new();
    for case in &FLOOR {
        variants.push(harness::Variant::new(format!("{}, thread.send", case.label), move |n| {
            run_floor_send(tokio, case, n)
        }));
        variants.push(harness::Variant::new(format!("{}, hand-written", case.label), move |n| {
            run_floor_hand(tokio, case, n)
        }));
    }
    let group = harness::measure("thread.send against the hand-written turn", variants);
    println!("\n| turn | thread.send, us | hand-written, us | x hand-written |");
    println!("|---|---:|---:|---:|");
    for case in &FLOOR {
        let (send, hand) = (format!("{}, thread.send", case.label), format!("{}, hand-written", case.label));
        println!(
            "| {} | {:.2} | {:.2} | {:.2}x |",
            case.label,
            group.ns(&send) / 1000.0,
            group.ns(&hand) / 1000.0,
            group.ratio(&send, &hand)
        );
    }
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    if std::env::args().any(|arg| arg == "floor") {
        harness::set_defaults(10, 41);
        let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        floor_turns(&tokio);
        return;
    }
    if std::env::args().any(|arg| arg == "open") {
        harness::set_defaults(10, 41);
        let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        open_handles(&tokio);
        return;
    }
    if std::env::args().any(|arg| arg == "schema") {
        harness::set_defaults(10, 41);
        let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        schema_turns(&tokio);
        return;
    }
    if std::env::args().any(|arg| arg == "governed") {
        harness::set_defaults(10, 41);
        let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        governed_turns(&tokio);
        return;
    }
    let durable_only = std::env::args().any(|arg| arg == "durable");
    harness::set_defaults(10, 41);
    let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    if durable_only {
        durable_turns(&tokio);
        return;
    }
    // Every variant's turn is checked once: a reply, and the history the hooks saw.
    tokio.block_on(async {
        let model = ScriptedModel::default();
        let runtime = build_runtime(&model);
        for case in &CASES {
            let thread = thread_with_history(&runtime, case.agent).await;
            model.push_all([ScriptedResponse::text("A short reply.")]);
            let outcome = thread.send("What did we say?").await.unwrap();
            assert_eq!(outcome.reply.as_deref(), Some("A short reply."), "{}", case.label);
            assert_eq!(thread.messages().await.unwrap().len(), HISTORY + 2, "{}", case.label);
        }
        let sent = model.requests();
        assert!(sent.iter().all(|request| request.messages.len() == sent[0].messages.len()));
    });
    println!(
        "Whole turn: thread.send, scripted model, in-memory store, a thread of {HISTORY} messages; {} ms per sample, \
         {} rounds, variants interleaved",
        harness::sample_ms(),
        harness::rounds()
    );
    let tokio = &tokio;
    let variants =
        CASES.iter().map(|case| harness::Variant::new(case.label, move |n| run(tokio, case.agent, n))).collect();
    let group = harness::measure("thread.send, 16 filter_messages hooks against none", variants);

    println!("\n## Targets (measured in this run)\n");
    println!("| turn | us per send | x no hooks | target | met |");
    println!("|---|---:|---:|---:|:---|");
    for case in &CASES {
        let ratio = group.ratio(case.label, NO_HOOKS);
        let (target, met) = match case.target {
            Some(target) => {
                (format!("≤ {target:.2}x"), if ratio <= target { "ok".to_owned() } else { "MISS".to_owned() })
            }
            None => ("-".to_owned(), "-".to_owned()),
        };
        println!("| {} | {:.1} | {ratio:.3}x | {target} | {met} |", case.label, group.ns(case.label) / 1000.0);
    }
    durable_turns(tokio);
    governed_turns(tokio);
    schema_turns(tokio);
    open_handles(tokio);
    floor_turns(tokio);
    println!("\nThe machine is shared and noisy: compare ratios, not times.");
}
