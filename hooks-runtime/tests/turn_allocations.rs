//! What a whole turn allocates, counted exactly and held to a budget (docs/performance.md, "A
//! turn, counted"): a text turn and a turn with one tool call, on the in-memory store with a
//! minimal model, without hooks and with 4 in-place `filter_messages` hooks, and the text turn
//! handed over through the inbox (`queue_message` + `run_input`, what the HTTP server does).
//! Beside them, the floor they are compared with: the same text and tool turns written by hand
//! around the same model (`benches/floor`), without and with 4 history hooks called by hand.
//!
//! Counts are exact, so each budget is a number to stay at or under, not a timing. What makes
//! them exact: this binary holds one test, so nothing else in the process allocates while a
//! turn is counted; tokio's current-thread runtime runs the turn on this thread; only the turn's
//! future is counted, after a warm-up turn of the same kind (lazy statics, thread locals, the
//! store's first thread); and every counted turn runs on a fresh runtime whose store holds the
//! same threads, so every run allocates the same. The test checks that too: a count that varies
//! between runs fails it.
//!
//! When a change lowers a count, lower the budget with it, so that the next allocation added
//! shows.

use std::alloc::System;
use std::fmt::Write as _;
use std::future::Future;

use hooks_runtime::prelude::*;
use hooks_runtime::store::InMemoryStore;
use hooks_runtime::tool::FnTool;
use hooks_runtime::{RunOutcome, Runtime, Thread, ThreadOptions};
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};

#[path = "../benches/floor/mod.rs"]
mod floor;

use floor::{HISTORY, MinimalModel, REPLY, TOOL, USER_TEXT};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Counted runs of each scenario; all must count the same.
const RUNS: usize = 5;

#[hook(filter_messages, id = "keep_all_0")]
fn keep_all_0(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
    std::hint::black_box(messages);
}

#[hook(filter_messages, id = "keep_all_1")]
fn keep_all_1(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
    std::hint::black_box(messages);
}

#[hook(filter_messages, id = "keep_all_2")]
fn keep_all_2(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
    std::hint::black_box(messages);
}

#[hook(filter_messages, id = "keep_all_3")]
fn keep_all_3(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
    std::hint::black_box(messages);
}

define_prompt! { name: p_text, model: "minimal", prompt: "Reply.", tools: [] }
define_prompt! {
    name: p_text_hooks, model: "minimal", prompt: "Reply.", tools: [],
    hooks: [keep_all_0, keep_all_1, keep_all_2, keep_all_3],
}
define_prompt! { name: p_tool, model: "minimal", prompt: "Use the tool.", tools: ["lookup"] }
define_prompt! {
    name: p_tool_hooks, model: "minimal", prompt: "Use the tool.", tools: ["lookup"],
    hooks: [keep_all_0, keep_all_1, keep_all_2, keep_all_3],
}
define_agent! { name: a_text, side_a: { prompt: p_text, stop_on_response: true }, side_b: { human: true } }
define_agent! { name: a_text_hooks, side_a: { prompt: p_text_hooks, stop_on_response: true }, side_b: { human: true } }
define_agent! { name: a_tool, side_a: { prompt: p_tool, stop_on_response: true }, side_b: { human: true } }
define_agent! { name: a_tool_hooks, side_a: { prompt: p_tool_hooks, stop_on_response: true }, side_b: { human: true } }

/// How the counted message is handed over.
#[derive(Clone, Copy)]
enum HandOver {
    Send,
    /// `queue_message`, then `run_input`.
    Inbox,
    /// No runtime: the same turn written by hand (`benches/floor`), with or without 4 history
    /// hooks called by hand, offering the tool or not. Its counts are the floor the runtime's
    /// are compared with.
    HandWritten {
        hooks: bool,
        tool: bool,
    },
}

struct Scenario {
    name: &'static str,
    agent: &'static str,
    hand_over: HandOver,
    /// At most this many allocations (reallocations included) ...
    allocations: usize,
    /// ... and this many bytes.
    bytes: usize,
}

const SCENARIOS: [Scenario; 8] = [
    // Without a `filter_messages` hook the request is built from the store's messages as the
    // store lends them: each message's text is copied once, as the hand-written turn copies it.
    // One allocation of about 3.3 KB is the run's body, boxed (tests/it/future_sizes.rs); a step
    // with tool calls boxes its calls' path, one allocation more per tool turn.
    Scenario { name: "text turn", agent: "a_text", hand_over: HandOver::Send, allocations: 39, bytes: 7_995 },
    // A `filter_messages` chain is handed messages of its own: copied into a buffer an earlier
    // assembly of the runtime used (here the warm-up turn's), reusing its strings.
    Scenario {
        name: "text turn, 4 in-place hooks",
        agent: "a_text_hooks",
        hand_over: HandOver::Send,
        allocations: 39,
        bytes: 7_995,
    },
    Scenario {
        name: "text turn through the inbox",
        agent: "a_text",
        hand_over: HandOver::Inbox,
        allocations: 45,
        bytes: 8_167,
    },
    // The admission pipeline's decision record (the arguments' SHA-256 after each decider that may rewrite them, the
    // record stored with the result) is part of a tool turn: docs/performance.md.
    Scenario { name: "tool turn", agent: "a_tool", hand_over: HandOver::Send, allocations: 141, bytes: 27_335 },
    Scenario {
        name: "tool turn, 4 in-place hooks",
        agent: "a_tool_hooks",
        hand_over: HandOver::Send,
        allocations: 155,
        bytes: 29_060,
    },
    // The floor: no budget to lower, the counts it has (the comparison assumes them).
    Scenario {
        name: "hand-written text turn",
        agent: "",
        hand_over: HandOver::HandWritten { hooks: false, tool: false },
        allocations: 29,
        bytes: 3_989,
    },
    Scenario {
        name: "hand-written text turn, 4 hooks",
        agent: "",
        hand_over: HandOver::HandWritten { hooks: true, tool: false },
        allocations: 29,
        bytes: 3_989,
    },
    Scenario {
        name: "hand-written tool turn",
        agent: "",
        hand_over: HandOver::HandWritten { hooks: false, tool: true },
        allocations: 100,
        bytes: 11_732,
    },
];

fn runtime() -> Runtime {
    let lookup = FnTool::new(TOOL, "Looks a number up.", |_arguments| async { HookToolResult::success("42") });
    Runtime::builder()
        .store(InMemoryStore::new())
        .agent::<a_text>()
        .agent::<a_text_hooks>()
        .agent::<a_tool>()
        .agent::<a_tool_hooks>()
        .model("minimal", MinimalModel)
        .tool(lookup)
        .build()
        .expect("the test's agents resolve")
}

async fn thread_with_history(runtime: &Runtime, agent: &str) -> Thread {
    let thread = runtime.create_thread(agent, ThreadOptions::default()).await.unwrap();
    for i in 0..HISTORY {
        let role = if i % 2 == 0 { Role::User } else { Role::Assistant };
        thread.inject_message(MessageRecord::new(role, floor::history_text(i))).await.unwrap();
    }
    thread
}

async fn turn(thread: &Thread, hand_over: HandOver) -> RunOutcome {
    match hand_over {
        HandOver::Send => thread.send(USER_TEXT).await.unwrap(),
        HandOver::Inbox => {
            let input = thread.queue_message(MessageRecord::new(Role::User, USER_TEXT)).await.unwrap();
            thread.run_input(&input).await.unwrap().expect("the input is in the inbox")
        }
        HandOver::HandWritten { .. } => unreachable!("a hand-written turn has no thread"),
    }
}

/// Allocations (reallocations included) and bytes `future` makes until it is ready.
async fn counted<T>(future: impl Future<Output = T>) -> (T, usize, usize) {
    let before = GLOBAL.stats();
    let output = Counted(std::pin::pin!(future)).await;
    let after = GLOBAL.stats();
    let allocations = (after.allocations + after.reallocations) - (before.allocations + before.reallocations);
    (output, allocations, after.bytes_allocated - before.bytes_allocated)
}

/// The counted turn's future, polled through a function of its own that is never inlined:
/// `scripts/turn_instructions.py` has callgrind count instructions inside it only
/// (`--toggle-collect`).
struct Counted<F>(F);

impl<F: Future + Unpin> Future for Counted<F> {
    type Output = F::Output;

    #[inline(never)]
    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<F::Output> {
        std::pin::Pin::new(&mut self.0).poll(cx)
    }
}

/// One counted turn of `scenario`: a fresh runtime, two threads with the same history, an
/// uncounted turn on the first and the counted one on the second.
fn count_turn(tokio: &tokio::runtime::Runtime, scenario: &Scenario) -> (usize, usize) {
    if let HandOver::HandWritten { hooks, tool } = scenario.hand_over {
        return tokio.block_on(async {
            let (mut warm, mut messages) = (floor::history(), floor::history());
            floor::scenario_turn(&mut warm, hooks, tool).await;
            let (reply, allocations, bytes) = counted(floor::scenario_turn(&mut messages, hooks, tool)).await;
            assert_eq!(reply, REPLY, "{}: the turn replied", scenario.name);
            assert_eq!(messages.len(), HISTORY + if tool { 4 } else { 2 }, "{}: the turn's messages", scenario.name);
            (allocations, bytes)
        });
    }
    tokio.block_on(async {
        let runtime = runtime();
        let warm = thread_with_history(&runtime, scenario.agent).await;
        let thread = thread_with_history(&runtime, scenario.agent).await;
        turn(&warm, scenario.hand_over).await;
        let (outcome, allocations, bytes) = counted(turn(&thread, scenario.hand_over)).await;
        assert_eq!(outcome.reply.as_deref(), Some(REPLY), "{}: the turn replied", scenario.name);
        (allocations, bytes)
    })
}

#[test]
fn a_turn_allocates_within_its_budget() {
    let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut report = String::new();
    let mut failures = Vec::new();
    // One scenario alone, by name, for `scripts/turn_instructions.py`.
    let only = std::env::var("TURN_SCENARIO").ok();
    let mut text_turn = (None, None);
    for scenario in SCENARIOS.iter().filter(|scenario| only.as_deref().is_none_or(|name| name == scenario.name)) {
        // A first run of the scenario, not compared: it may be the process's first turn of its kind.
        count_turn(&tokio, scenario);
        let counts: Vec<(usize, usize)> = (0..RUNS).map(|_| count_turn(&tokio, scenario)).collect();
        let (allocations, bytes) = counts[0];
        // How many turns went through `Counted`, for the instructions script to divide by.
        let turns = RUNS + 1;
        writeln!(report, "{}: {allocations} allocations, {bytes} bytes, each of {turns} counted turns", scenario.name)
            .unwrap();
        if counts.iter().any(|&count| count != counts[0]) {
            failures.push(format!("{}: the count varies between runs: {counts:?}", scenario.name));
        }
        match scenario.name {
            "text turn" => text_turn.0 = Some(allocations),
            "text turn through the inbox" => text_turn.1 = Some(allocations),
            _ => {}
        }
        if allocations > scenario.allocations || bytes > scenario.bytes {
            failures.push(format!(
                "{}: {allocations} allocations and {bytes} bytes, over its budget of {} and {}",
                scenario.name, scenario.allocations, scenario.bytes
            ));
        }
    }
    // The durable path (what every HTTP message takes) costs at most 6 allocations more than
    // `send`, a fixed cost whatever the history: the inbox entry's 5, and the copy of the
    // message the take stores in the same transaction as it removes the entry (`send` hands its
    // message to the store uncopied).
    if let (Some(send), Some(inbox)) = text_turn
        && inbox > send + 6
    {
        failures.push(format!("the text turn through the inbox allocates {inbox} times, over `send`'s {send} + 6"));
    }
    // Shown on failure too, with the counts of the scenarios within their budget.
    println!("{report}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
