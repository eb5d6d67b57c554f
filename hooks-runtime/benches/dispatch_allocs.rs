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
    println!(
        "| hooks | hand-written boxed | runtime (E1 copy) | runtime, no copy [bench copy] | per async hook, no copy | met |"
    );
    println!("|---:|---:|---:|---:|---:|:---|");
    for n in scenarios::LENGTHS {
        let group = find(&groups, &scenarios::async_title(n));
        let no_copy = group.allocs(scenarios::NO_COPY);
        let per_hook = if n == 0 { 0.0 } else { no_copy / n as f64 };
        let real_per_hook = if n == 0 { 0.0 } else { group.allocs(scenarios::RUNTIME) / n as f64 };
        println!(
            "| {n} | {:.2} | {:.2} | {:.2} | {:.2} | {} |",
            group.allocs(scenarios::BOXED),
            group.allocs(scenarios::RUNTIME),
            no_copy,
            per_hook,
            if real_per_hook <= 1.0 + 1e-9 {
                "yes".to_owned()
            } else {
                format!("no: {real_per_hook:.0} per hook with the E1 copy; {per_hook:.0} without it")
            }
        );
    }
    println!("\nSync chains: allocations per dispatch");
    println!(
        "| hooks | direct | runtime (E1 copy) | no copy [bench copy] | 1 copy per chain [bench copy] | registry |"
    );
    println!("|---:|---:|---:|---:|---:|---:|");
    for n in scenarios::LENGTHS {
        let group = find(&groups, &scenarios::sync_title(n));
        println!(
            "| {n} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
            group.allocs(scenarios::DIRECT),
            group.allocs(scenarios::RUNTIME),
            group.allocs(scenarios::NO_COPY),
            group.allocs(scenarios::PER_CHAIN),
            group.allocs(scenarios::REGISTRY),
        );
    }
}

fn find<'g>(groups: &'g [harness::Group], title: &str) -> &'g harness::Group {
    groups.iter().find(|g| g.title == title).unwrap()
}
