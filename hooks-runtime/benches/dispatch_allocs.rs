//! Allocations per dispatch for every scenario of the `dispatch` benchmark, counted by a global
//! allocator that wraps `System` (`stats_alloc`), in this binary only, so that counting does not
//! slow the timed runs of `dispatch`.

#![allow(missing_docs)]

mod harness;
mod scenarios;

use std::alloc::System;

use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn allocations() -> u64 {
    let stats = GLOBAL.stats();
    (stats.allocations + stats.reallocations) as u64
}

fn main() {
    harness::count_allocations_with(allocations);
    let fixture = scenarios::Fixture::new();
    println!("Allocations per dispatch (allocations + reallocations; no tracing subscriber installed)");
    let groups: Vec<harness::Group> =
        scenarios::groups(&fixture).into_iter().map(|(title, variants)| harness::measure(title, variants)).collect();

    println!("\nTarget: async chains at most one allocation per async hook");
    println!("| hooks | hand-written boxed | runtime (1 copy per hook) | runtime, per async hook | met |");
    println!("|---:|---:|---:|---:|:---|");
    for n in scenarios::LENGTHS {
        let group = find(&groups, &scenarios::async_title(n));
        let runtime = group.allocs(scenarios::RUNTIME_ASYNC);
        let per_hook = if n == 0 { 0.0 } else { runtime / n as f64 };
        println!(
            "| {n} | {:.2} | {:.2} | {:.2} | {} |",
            group.allocs(scenarios::BOXED),
            runtime,
            per_hook,
            if per_hook <= 1.0 + 1e-9 { "ok".to_owned() } else { format!("MISS ({per_hook:.0} per hook)") }
        );
    }
    println!("\nSync chains: allocations per dispatch");
    println!(
        "| hooks | direct | runtime, plain-returning (1 copy per chain) | runtime, Result-returning (1 copy per hook) | \
         before_create_message Prevent | before_create_message KeepLastGood | registry |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    for n in scenarios::LENGTHS {
        let plain = find(&groups, &scenarios::sync_title(n));
        let fallible = find(&groups, &scenarios::fallible_title(n));
        let record = find(&groups, &scenarios::record_title(n));
        println!(
            "| {n} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
            plain.allocs(scenarios::DIRECT),
            plain.allocs(scenarios::RUNTIME_PLAIN),
            fallible.allocs(scenarios::RUNTIME_FALLIBLE),
            record.allocs(scenarios::PREVENT),
            record.allocs(scenarios::KEEP),
            plain.allocs(scenarios::REGISTRY),
        );
    }
    let copies = find(&groups, &scenarios::copy_title());
    println!(
        "\nOne E1 copy: Vec of {} messages {:.2} allocations, MessageRecord {:.2}",
        scenarios::CHAIN_MESSAGES,
        copies.allocs(scenarios::COPY_VEC),
        copies.allocs(scenarios::COPY_RECORD),
    );
}

fn find<'g>(groups: &'g [harness::Group], title: &str) -> &'g harness::Group {
    groups.iter().find(|g| g.title == title).unwrap()
}
