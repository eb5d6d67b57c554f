//! A whole turn in hooks-runtime against the same turn in rig (rig-core and rig-agent 0.46.0),
//! each framework calling the same minimal in-process fake model: a text turn on a history of 10
//! messages, the same with 4 history hooks that keep every message, the same with a hook that
//! keeps the last 4, and a turn with one tool call. See `docs/performance.md`, "Against rig".
//!
//! Each round times `BENCH_TURNS` turns (default 512) of each framework per scenario, the two
//! frameworks interleaved and alternating which goes first; `BENCH_ROUNDS` rounds (default 41)
//! after one warm-up round. What a round prepares is not timed: hooks-runtime's runtime (in-memory
//! store) and a thread per turn holding the 10 messages; rig's agent and a history `Vec` per
//! turn. Timed: hooks-runtime's `thread.send`, rig's `agent.chat(prompt, &mut history)`, each
//! to its reply, on one current-thread tokio runtime. No tracing subscriber is installed.
//!
//! Run with `cargo run --release --ignore-rust-version` in this directory (rig 0.46.0 declares
//! rust-version 1.97.1; it builds with 1.95.0).

#[path = "scenarios.rs"]
mod scenarios;

use std::hint::black_box;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use scenarios::{HISTORY, KEEP, SENT, Scenario, hr, rig};

fn env(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|value| value.parse().ok()).unwrap_or(default)
}

/// hooks-runtime: `turns` turns, each on a fresh thread of 10 messages, on a fresh runtime.
async fn time_hooks(scenario: Scenario, turns: usize) -> Duration {
    let runtime = hr::runtime();
    let mut threads = Vec::with_capacity(turns);
    for _ in 0..turns {
        threads.push(hr::thread(&runtime, scenario).await);
    }
    let start = Instant::now();
    for thread in &threads {
        black_box(hr::turn(thread).await);
    }
    let elapsed = start.elapsed();
    drop(threads);
    drop(runtime);
    elapsed
}

/// rig: `turns` turns, each on a fresh history of 10 messages, with a fresh agent.
async fn time_rig(scenario: Scenario, turns: usize) -> Duration {
    let agent = rig::agent(scenario);
    let mut histories: Vec<_> = (0..turns).map(|_| rig::history()).collect();
    let start = Instant::now();
    for history in &mut histories {
        black_box(rig::turn(&agent, history).await);
    }
    let elapsed = start.elapsed();
    drop(histories);
    drop(agent);
    elapsed
}

/// One turn of each, checked: the reply, the messages the turn added, and how many messages
/// each sent the model.
async fn check(scenario: Scenario) -> (usize, usize) {
    let runtime = hr::runtime();
    let thread = hr::thread(&runtime, scenario).await;
    hr::check(&hr::turn(&thread).await);
    let hooks_sent = SENT.load(Ordering::Relaxed);
    let agent = rig::agent(scenario);
    let mut history = rig::history();
    let response = rig::turn(&agent, &mut history).await;
    rig::check(&response, &history, scenario);
    let rig_sent = SENT.load(Ordering::Relaxed);
    (hooks_sent, rig_sent)
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let rounds = env("BENCH_ROUNDS", 41);
    let turns = env("BENCH_TURNS", 512);
    let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    println!("hooks-runtime against rig 0.46.0: {rounds} rounds of {turns} turns of each, history {HISTORY}");
    for scenario in Scenario::ALL {
        let (hooks_sent, rig_sent) = tokio.block_on(check(scenario));
        // The last call of the tool turn answers the tool: history, prompt, call, result.
        let expected = match scenario {
            Scenario::Trim => KEEP,
            Scenario::Tool => HISTORY + 3,
            _ => HISTORY + 1,
        };
        assert_eq!((hooks_sent, rig_sent), (expected, expected), "{}: messages sent to the model", scenario.name());
    }
    println!();
    println!("| scenario | hooks-runtime per turn | rig per turn | ratio (median) | min | max |");
    println!("|---|---:|---:|---:|---:|---:|");
    for scenario in Scenario::ALL {
        let mut hooks = Vec::with_capacity(rounds);
        let mut rig = Vec::with_capacity(rounds);
        let mut ratios = Vec::with_capacity(rounds);
        // Round 0 warms up and is not recorded.
        for round in 0..=rounds {
            let (h, r) = tokio.block_on(async {
                if round % 2 == 0 {
                    let h = time_hooks(scenario, turns).await;
                    (h, time_rig(scenario, turns).await)
                } else {
                    let r = time_rig(scenario, turns).await;
                    (time_hooks(scenario, turns).await, r)
                }
            });
            if round == 0 {
                continue;
            }
            let per_turn = |elapsed: Duration| elapsed.as_secs_f64() * 1e6 / turns as f64;
            hooks.push(per_turn(h));
            rig.push(per_turn(r));
            ratios.push(h.as_secs_f64() / r.as_secs_f64());
        }
        let hooks_median = median(&mut hooks);
        let rig_median = median(&mut rig);
        let ratio_median = median(&mut ratios);
        let (min, max) = (ratios[0], ratios[ratios.len() - 1]);
        println!(
            "| {} | {hooks_median:.2} µs | {rig_median:.2} µs | {ratio_median:.3}x | {min:.3}x | {max:.3}x |",
            scenario.name()
        );
    }
}
