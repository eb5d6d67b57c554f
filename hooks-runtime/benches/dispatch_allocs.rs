//! Allocations per dispatch for every scenario of the `dispatch` benchmark, counted by a global
//! allocator that wraps `System` (`stats_alloc`), in this binary only, so that counting does not
//! slow the timed runs of `dispatch`.

#![allow(missing_docs)]

mod harness;
mod scenarios;

use std::alloc::System;

use scenarios::Form;
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn allocations() -> u64 {
    let stats = GLOBAL.stats();
    (stats.allocations + stats.reallocations) as u64
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    harness::count_allocations_with(allocations);
    let fixture = scenarios::Fixture::new();
    println!("Allocations per dispatch (allocations + reallocations; no tracing subscriber installed)");
    let groups: Vec<harness::Group> =
        scenarios::groups(&fixture).into_iter().map(|(title, variants)| harness::measure(title, variants)).collect();
    let find = |title: String| groups.iter().find(|g| g.title == title).unwrap();

    println!("\n## Targets: in place, async 1 allocation per hook; in place, sync 0\n");
    println!(
        "| hooks | boxed futures | in place async | per hook | in place sync plain | in place sync Result | met |"
    );
    println!("|---:|---:|---:|---:|---:|---:|:---|");
    for n in scenarios::LENGTHS {
        let asynchronous = find(scenarios::async_title(n));
        let sync = find(scenarios::sync_title(n));
        let in_place_async = asynchronous.allocs(Form::InPlaceAsync.name());
        let per_hook = if n == 0 { 0.0 } else { in_place_async / n as f64 };
        let (plain, result) = (sync.allocs(Form::InPlacePlain.name()), sync.allocs(Form::InPlaceResult.name()));
        let met = (per_hook - 1.0).abs() < 1e-9 || (n == 0 && in_place_async == 0.0);
        let met = met && plain == 0.0 && result == 0.0;
        println!(
            "| {n} | {:.2} | {in_place_async:.2} | {per_hook:.2} | {plain:.2} | {result:.2} | {} |",
            asynchronous.allocs(scenarios::BOXED),
            if met { "ok" } else { "MISS" },
        );
    }
    println!("\n## By value (reported): one snapshot per by-value hook, into one buffer per chain\n");
    println!("| hooks | direct calls | by value sync plain | by value sync Result | by value async |");
    println!("|---:|---:|---:|---:|---:|");
    for n in scenarios::LENGTHS {
        let asynchronous = find(scenarios::async_title(n));
        let sync = find(scenarios::sync_title(n));
        println!(
            "| {n} | {:.2} | {:.2} | {:.2} | {:.2} |",
            sync.allocs(scenarios::DIRECT),
            sync.allocs(Form::ByValuePlain.name()),
            sync.allocs(Form::ByValueResult.name()),
            asynchronous.allocs(Form::ByValueAsync.name()),
        );
    }
    let snapshot = find(scenarios::snapshot_title());
    println!(
        "\nOne snapshot of {} messages: clone_from into a reused buffer {:.2} allocations, fresh clone() {:.2}, \
         field-by-field clone_from {:.2}",
        scenarios::CHAIN_MESSAGES,
        snapshot.allocs(scenarios::CLONE_FROM),
        snapshot.allocs(scenarios::FRESH_CLONE),
        snapshot.allocs(scenarios::FIELD_BY_FIELD),
    );
}
