//! Dispatch cost: chains of 0, 1, 4 and 16 hooks moving a `Vec` through, sync and async,
//! dispatched by the runtime's real dispatch functions (`hooks_runtime::__bench`), against the
//! same functions called directly, hand-written boxed futures and a string-keyed dynamic
//! registry; and a whole context assembly with no hooks against no hook machinery at all.
//!
//! Every number printed is a ratio measured in this run (or a difference, for the empty chain):
//! run it with `cargo bench -p hooks-runtime --bench dispatch`. No tracing subscriber is
//! installed, so each hook's span is the disabled check it is in a program without one.
//! Allocation counts come from the `dispatch_allocs` binary.

#![allow(missing_docs)]

mod harness;
mod scenarios;

use harness::Group;
use scenarios::*;

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    let fixture = Fixture::new();
    println!(
        "Dispatch benchmark: {} ms per sample, {} rounds, variants interleaved; median ns per dispatch and \
         median of per-round ratios to the first variant of each group",
        harness::sample_ms(),
        harness::rounds()
    );
    {
        let (state, chain) = (&fixture.state, &fixture.sync_chains[1][..]);
        let sizes = [
            (
                "__bench::filter_messages (real)",
                std::mem::size_of_val(&hooks_runtime::__bench::filter_messages(chain, state, Vec::new())),
            ),
            (
                "__bench::before_create_message (real)",
                std::mem::size_of_val(&hooks_runtime::__bench::before_create_message(
                    chain,
                    state,
                    fixture.record.clone(),
                    hooks_runtime::__bench::WriteRule::Prevent,
                )),
            ),
            (
                "experimental::filter_messages (bench copy)",
                std::mem::size_of_val(&hooks_runtime::__bench::experimental::filter_messages(
                    chain,
                    state,
                    Vec::new(),
                    hooks_runtime::__bench::experimental::Backup::None,
                    false,
                )),
            ),
            ("hand-written boxed futures, 16 hooks", std::mem::size_of_val(&async_boxed::<16>(state, Vec::new()))),
            ("MessageRecord", std::mem::size_of::<hooks_runtime::MessageRecord>()),
        ];
        for (name, size) in sizes {
            println!("size of {name}: {size} bytes");
        }
    }
    let filter = std::env::var("BENCH_FILTER").ok();
    let selected: Vec<_> =
        groups(&fixture).into_iter().filter(|(title, _)| filter.as_deref().is_none_or(|f| title.contains(f))).collect();
    let complete = filter.is_none();
    let groups: Vec<Group> = selected.into_iter().map(|(title, variants)| harness::measure(title, variants)).collect();
    if !complete {
        return;
    }
    let find = |title: String| groups.iter().find(|g| g.title == title).unwrap();

    println!("\n## Summary (ratios measured in this run)\n");
    let empty = find(sync_title(0));
    let empty_diff = empty.difference(RUNTIME, DIRECT);
    println!(
        "Empty chain: {:+.2} ns against no call (target: within 1 ns) -> {}",
        empty_diff,
        verdict(empty_diff <= 1.0, format!("missed by {:.2} ns", empty_diff - 1.0))
    );
    let async_empty = find(async_title(0));
    println!(
        "Empty chain, awaited inside a tokio task: {:+.2} ns against no call",
        async_empty.difference(RUNTIME, BOXED)
    );

    println!("\nSync chains against direct calls (target 1.1x):");
    println!(
        "| hooks | runtime (E1 copy) | no copy [bench copy] | 1 copy per chain [bench copy] | MessageRecord, Prevent (real, no copy) | MessageRecord, KeepLastGood (real) |"
    );
    println!("|---:|---:|---:|---:|---:|---:|");
    for n in LENGTHS.into_iter().filter(|&n| n > 0) {
        let g = find(sync_title(n));
        let r = find(record_title(n));
        println!(
            "| {n} | {} | {} | {} | {} | {} |",
            ratio(g.ratio(RUNTIME, DIRECT), 1.1),
            ratio(g.ratio(NO_COPY, DIRECT), 1.1),
            ratio(g.ratio(PER_CHAIN, DIRECT), 1.1),
            ratio(r.ratio(PREVENT, DIRECT), 1.1),
            ratio(r.ratio(KEEP, DIRECT), 1.1),
        );
    }
    println!("\nAsync chains against hand-written boxed futures (target 1.1x):");
    println!(
        "| hooks | runtime (E1 copy) | no copy [bench copy] | no copy, poll before arming the timeout [bench copy] |"
    );
    println!("|---:|---:|---:|---:|");
    for n in LENGTHS.into_iter().filter(|&n| n > 0) {
        let g = find(async_title(n));
        println!(
            "| {n} | {} | {} | {} |",
            ratio(g.ratio(RUNTIME, BOXED), 1.1),
            ratio(g.ratio(NO_COPY, BOXED), 1.1),
            ratio(g.ratio(FAST_PATH, BOXED), 1.1),
        );
    }
    println!("\nAgainst the dynamic registry (target below 1.0x at every length):");
    println!(
        "| hooks | sync runtime (E1 copy) | sync, no copy [bench copy] | async runtime (E1 copy) | async, no copy, poll first [bench copy] |"
    );
    println!("|---:|---:|---:|---:|---:|");
    for n in LENGTHS {
        let s = find(sync_title(n));
        let a = find(async_title(n));
        println!(
            "| {n} | {} | {} | {} | {} |",
            ratio(s.ratio(RUNTIME, REGISTRY), 1.0),
            ratio(s.ratio(NO_COPY, REGISTRY), 1.0),
            ratio(a.ratio(RUNTIME, REGISTRY), 1.0),
            ratio(a.ratio(FAST_PATH, REGISTRY), 1.0),
        );
    }
    let copy_check: Vec<String> = LENGTHS
        .into_iter()
        .filter(|&n| n > 0)
        .map(|n| format!("{n}: {:.2}x", find(sync_title(n)).ratio(PER_HOOK_COPY, RUNTIME)))
        .collect();
    println!(
        "\nBench copy of the loop with a copy per hook, against the real dispatch (should be ~1.0x): {}",
        copy_check.join(", ")
    );
    let assembly = find(assembly_title());
    println!(
        "\nContext assembly of {ASSEMBLY_MESSAGES} messages, no hooks, against no hook machinery: {} ({:+.0} ns); \
         with one sync hook at each of its three points: {:.2}x",
        ratio(assembly.ratio(NO_HOOKS, PLAIN), 1.1),
        assembly.difference(NO_HOOKS, PLAIN),
        assembly.ratio(ONE_HOOK, PLAIN),
    );
    println!("\n`ok`: target met; `MISS`: target missed. The machine has shared cores: compare ratios, not times.");
}

fn ratio(value: f64, target: f64) -> String {
    format!("{value:.2}x {}", if value <= target { "ok" } else { "MISS" })
}

fn verdict(met: bool, otherwise: String) -> String {
    if met { "ok".to_owned() } else { format!("MISS ({otherwise})") }
}
