//! Dispatch cost: `filter_messages` chains of 0, 1, 4 and 16 hooks on a `Vec` of 10 messages, in
//! each of the six forms a hook can take (in place or by value; sync plain, sync `Result` or
//! async), dispatched by the runtime's real dispatch function (`hooks_runtime::__bench`), against
//! the floor of any runtime-resolved, panic-isolated chain (opaque fn pointers, `catch_unwind` per
//! hook), direct by-value calls, and hand-written boxed futures with `catch_unwind` and a lazy
//! timeout; the by-value snapshot against a deep copy; a context assembly with no hooks.
//!
//! Every ratio printed is measured in this run, variants interleaved round by round: run it with
//! `cargo bench -p hooks-runtime --bench dispatch`. No tracing subscriber is installed, so hook
//! spans are never built. The Node figures are fixed reference figures, not measured here.
//! Allocation counts come from the `dispatch_allocs` binary.

#![allow(missing_docs)]

mod harness;
mod scenarios;

use harness::Group;
use scenarios::*;

/// The project's dispatch targets (docs/performance.md).
const FLOOR_TARGET: f64 = 1.5;
const DIRECT_TARGET: f64 = 1.0;
const NODE_TARGET: f64 = 10.0;
const BOXED_TARGET: f64 = 1.2;
const EMPTY_TARGET_NS: f64 = 1.0;

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
    let chain = fixture.chain(Form::InPlacePlain, 1);
    println!(
        "size of the dispatch future (__bench::filter_messages): {} bytes",
        std::mem::size_of_val(&hooks_runtime::__bench::filter_messages(chain, &fixture.state, &mut Vec::new()))
    );
    let filter = std::env::var("BENCH_FILTER").ok();
    let selected: Vec<_> =
        groups(&fixture).into_iter().filter(|(title, _)| filter.as_deref().is_none_or(|f| title.contains(f))).collect();
    let complete = filter.is_none();
    let groups: Vec<Group> = selected.into_iter().map(|(title, variants)| harness::measure(title, variants)).collect();
    if !complete {
        return;
    }
    let find = |title: String| groups.iter().find(|g| g.title == title).unwrap();
    let lengths: Vec<usize> = LENGTHS.into_iter().filter(|&n| n > 0).collect();
    let lengths_label = lengths.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(" / ");

    println!("\n## Targets (measured in this run)\n");
    println!("| target | measured ({lengths_label} hooks) | met |");
    println!("|---|---|---|");
    let empty = find(sync_title(0));
    let empty_diff = empty.difference(Form::InPlacePlain.name(), NO_CALL);
    let checked_diff = empty.difference(LEN_CHECK, NO_CALL);
    println!(
        "| empty chain ≤ {EMPTY_TARGET_NS:.0} ns over no call | awaited dispatch {empty_diff:+.2} ns | {} |",
        verdict(empty_diff <= EMPTY_TARGET_NS, format!("by {:.2} ns", empty_diff - EMPTY_TARGET_NS))
    );
    println!(
        "| empty chain ≤ {EMPTY_TARGET_NS:.0} ns over no call, caller checks `is_empty()` | {checked_diff:+.2} ns | {} |",
        verdict(checked_diff <= EMPTY_TARGET_NS, format!("by {:.2} ns", checked_diff - EMPTY_TARGET_NS))
    );
    let row = |label: String, target: f64, values: Vec<f64>| {
        let worst = values.iter().copied().fold(f64::NAN, f64::max);
        let shown: Vec<String> = values.iter().map(|v| format!("{v:.2}x")).collect();
        println!(
            "| {label} | {} | {} |",
            shown.join(" / "),
            verdict(worst <= target, format!("worst {worst:.2}x against {target:.1}x")),
        );
    };
    let sync_ratio = |form: Form, baseline: &str| -> Vec<f64> {
        lengths.iter().map(|&n| find(sync_title(n)).ratio(form.name(), baseline)).collect()
    };
    row(
        format!("in place, sync plain ≤ {FLOOR_TARGET}x the floor"),
        FLOOR_TARGET,
        sync_ratio(Form::InPlacePlain, FLOOR),
    );
    row(
        format!("in place, sync `Result` ≤ {FLOOR_TARGET}x the floor (`Result` functions)"),
        FLOOR_TARGET,
        sync_ratio(Form::InPlaceResult, FLOOR_RESULT),
    );
    row(
        format!("in place, sync plain ≤ {DIRECT_TARGET:.1}x direct by-value calls"),
        DIRECT_TARGET,
        sync_ratio(Form::InPlacePlain, DIRECT),
    );
    row(
        format!("in place, sync `Result` ≤ {DIRECT_TARGET:.1}x direct by-value calls (with `?`)"),
        DIRECT_TARGET,
        sync_ratio(Form::InPlaceResult, DIRECT_RESULT),
    );
    // Against futures that read E6's clock: a baseline without it does not give E6's guarantee.
    row(
        format!("in place, async ≤ {BOXED_TARGET}x hand-written boxed futures reading E6's clock (one read per hook)"),
        BOXED_TARGET,
        lengths.iter().map(|&n| find(async_title(n)).ratio(Form::InPlaceAsync.name(), BOXED_CLOCK_SHARED)).collect(),
    );
    let ns = |form: Form, n: usize| {
        let title = if Form::ASYNC.contains(&form) { async_title(n) } else { sync_title(n) };
        find(title).ns(form.name())
    };
    for form in Form::ALL {
        let factors: Vec<f64> = NODE_NS.iter().map(|&(n, node)| node / ns(form, n)).collect();
        let worst = factors.iter().copied().fold(f64::NAN, f64::min);
        let shown: Vec<String> = NODE_NS
            .iter()
            .zip(&factors)
            .map(|(&(n, _), factor)| format!("{:.0} ns, {factor:.1}x", ns(form, n)))
            .collect();
        // The target is the in-place sync chain's; the other forms are reported beside it.
        let held = matches!(form, Form::InPlacePlain | Form::InPlaceResult);
        println!(
            "| {} ≥ {NODE_TARGET:.0}x faster than Node (221 / 421 / 1,093 ns) | {} | {} |",
            form.name().trim_start_matches("runtime, "),
            shown.join(" / "),
            if held { verdict(worst >= NODE_TARGET, format!("worst {worst:.1}x")) } else { "reported".to_owned() },
        );
    }

    println!("\n## Every sync row, ns per dispatch and ratios to the floor and to direct by-value calls\n");
    println!("| hooks | form | ns | x floor | x direct by-value | Node speed-up |");
    println!("|---:|---|---:|---:|---:|---:|");
    for &n in &LENGTHS {
        let group = find(sync_title(n));
        for (name, floor, direct) in [
            (FLOOR, FLOOR, DIRECT),
            (FLOOR_RESULT, FLOOR_RESULT, DIRECT_RESULT),
            (DIRECT, FLOOR, DIRECT),
            (DIRECT_RESULT, FLOOR_RESULT, DIRECT_RESULT),
            (Form::InPlacePlain.name(), FLOOR, DIRECT),
            (Form::InPlaceResult.name(), FLOOR_RESULT, DIRECT_RESULT),
            (Form::ByValuePlain.name(), FLOOR, DIRECT),
            (Form::ByValueResult.name(), FLOOR_RESULT, DIRECT_RESULT),
        ] {
            println!(
                "| {n} | {name} | {:.1} | {:.2}x | {:.2}x | {} |",
                group.ns(name),
                group.ratio(name, floor),
                group.ratio(name, direct),
                node_factor(n, group.ns(name)),
            );
        }
    }
    println!(
        "\n(`Result` rows are compared with the floor and direct calls of `Result` functions; plain rows with \
         plain ones.)"
    );
    println!("\n## Every async row, ns per dispatch and ratios to the hand-written boxed futures\n");
    println!("| hooks | variant | ns | x boxed | Node speed-up |");
    println!("|---:|---|---:|---:|---:|");
    for &n in &LENGTHS {
        let group = find(async_title(n));
        for name in [BOXED, BOXED_CLOCK, BOXED_CLOCK_SHARED, Form::InPlaceAsync.name(), Form::ByValueAsync.name()] {
            println!(
                "| {n} | {name} | {:.1} | {:.2}x | {} |",
                group.ns(name),
                group.ratio(name, BOXED),
                node_factor(n, group.ns(name))
            );
        }
    }

    let snapshot = find(snapshot_title());
    println!("\n## By-value snapshot of {CHAIN_MESSAGES} messages (one per by-value hook that can fail)\n");
    println!("| variant | ns | over a move | x clone_from |");
    println!("|---|---:|---:|---:|");
    for name in [MOVE, CLONE_FROM, FRESH_CLONE, FIELD_BY_FIELD, COW_CLONE_FROM, COW_FRESH_CLONE] {
        println!(
            "| {name} | {:.1} | {:+.1} ns | {:.2}x |",
            snapshot.ns(name),
            snapshot.difference(name, MOVE),
            snapshot.ratio(name, CLONE_FROM),
        );
    }
    let assembly = find(assembly_title());
    println!(
        "\nContext assembly, {ASSEMBLY_MESSAGES} messages, no hooks: {:.2}x no hook machinery ({:+.0} ns); one \
         in-place sync hook at each of its three points: {:.2}x",
        assembly.ratio(NO_HOOKS, PLAIN),
        assembly.difference(NO_HOOKS, PLAIN),
        assembly.ratio(ONE_HOOK, PLAIN),
    );
    println!("\n`ok`: target met; `MISS`: target missed. The machine is shared and noisy: compare ratios, not times.");
}

fn node_factor(n: usize, ns: f64) -> String {
    NODE_NS.iter().find(|&&(len, _)| len == n).map_or_else(|| "-".to_owned(), |&(_, node)| format!("{:.1}x", node / ns))
}

fn verdict(met: bool, otherwise: String) -> String {
    if met { "ok".to_owned() } else { format!("MISS ({otherwise})") }
}
