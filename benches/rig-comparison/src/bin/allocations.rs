//! What one turn of each scenario allocates in each framework, counted exactly as
//! `hooks-runtime/tests/turn_allocations.rs` counts hooks-runtime's: a counting global allocator
//! (`stats_alloc`), a current-thread tokio runtime, only the turn's future counted, after a
//! warm-up turn of the same kind, each count repeated on fresh state and required to be the same.
//!
//! Run with `cargo run --release --ignore-rust-version --bin allocations` in this directory.

#[path = "../scenarios.rs"]
mod scenarios;

use std::alloc::System;

use scenarios::{Scenario, hr, rig};
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const RUNS: usize = 5;

/// Allocations (reallocations included) and bytes between two snapshots.
fn since(before: stats_alloc::Stats) -> (usize, usize) {
    let after = GLOBAL.stats();
    let allocations = (after.allocations + after.reallocations) - (before.allocations + before.reallocations);
    (allocations, after.bytes_allocated - before.bytes_allocated)
}

async fn count_hooks(scenario: Scenario) -> (usize, usize) {
    let runtime = hr::runtime();
    let warm = hr::thread(&runtime, scenario).await;
    let thread = hr::thread(&runtime, scenario).await;
    hr::turn(&warm).await;
    let before = GLOBAL.stats();
    let outcome = hr::turn(&thread).await;
    let counted = since(before);
    hr::check(&outcome);
    counted
}

async fn count_rig(scenario: Scenario) -> (usize, usize) {
    let agent = rig::agent(scenario);
    let mut warm = rig::history();
    let mut history = rig::history();
    rig::turn(&agent, &mut warm).await;
    let before = GLOBAL.stats();
    let response = rig::turn(&agent, &mut history).await;
    let counted = since(before);
    rig::check(&response, &history, scenario);
    counted
}

fn same(counts: Vec<(usize, usize)>, what: &str) -> String {
    let first = counts[0];
    if counts.iter().all(|&count| count == first) {
        format!("{} ({} B)", first.0, first.1)
    } else {
        format!("{what} varies: {counts:?}")
    }
}

fn main() {
    let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    println!("| scenario | hooks-runtime allocations (bytes) | rig allocations (bytes) |");
    println!("|---|---:|---:|");
    for scenario in Scenario::ALL {
        // First runs, not compared: the process's first turn of their kind.
        tokio.block_on(count_hooks(scenario));
        tokio.block_on(count_rig(scenario));
        let hooks: Vec<_> = (0..RUNS).map(|_| tokio.block_on(count_hooks(scenario))).collect();
        let rig: Vec<_> = (0..RUNS).map(|_| tokio.block_on(count_rig(scenario))).collect();
        println!("| {} | {} | {} |", scenario.name(), same(hooks, "hooks-runtime"), same(rig, "rig"));
    }
}
