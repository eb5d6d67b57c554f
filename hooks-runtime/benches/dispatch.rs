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
    println!("| target | measured | met |");
    println!("|---|---|---|");
    let empty = find(sync_title(0));
    let empty_diff = empty.difference(RUNTIME_PLAIN, DIRECT);
    let async_empty = find(async_title(0));
    let async_empty_diff = async_empty.difference(RUNTIME_ASYNC, BOXED);
    let worst_empty = empty_diff.max(async_empty_diff);
    println!(
        "| empty chain within 1 ns of no call | sync {empty_diff:+.2} ns, async (awaited in a tokio task) \
         {async_empty_diff:+.2} ns; caller checks `is_empty()` first: {:+.2} ns | {} |",
        empty.difference(LEN_CHECK, DIRECT),
        verdict(worst_empty <= 1.0, format!("by {:.2} ns", worst_empty - 1.0)),
    );
    let lengths: Vec<usize> = LENGTHS.into_iter().filter(|&n| n > 0).collect();
    let row = |label: &str, target: f64, values: Vec<f64>| {
        let worst = values.iter().copied().fold(f64::NAN, f64::max);
        let shown: Vec<String> = values.iter().map(|v| format!("{v:.2}x")).collect();
        println!(
            "| {label} | {} ({}) | {} |",
            shown.join(" / "),
            lengths.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(" / "),
            verdict(worst <= target, format!("worst {worst:.2}x against {target:.1}x")),
        );
    };
    row(
        "sync, plain-returning hooks (1 copy per chain) within 1.1x of direct calls",
        1.1,
        lengths.iter().map(|&n| find(sync_title(n)).ratio(RUNTIME_PLAIN, DIRECT)).collect(),
    );
    row(
        "sync, `Result`-returning hooks (1 copy per hook) within 1.1x of direct calls",
        1.1,
        lengths.iter().map(|&n| find(fallible_title(n)).ratio(RUNTIME_FALLIBLE, DIRECT)).collect(),
    );
    row(
        "sync `before_create_message`, Prevent (no copy) within 1.1x of direct calls",
        1.1,
        lengths.iter().map(|&n| find(record_title(n)).ratio(PREVENT, DIRECT)).collect(),
    );
    row(
        "sync `before_create_message`, KeepLastGood (1 copy per chain) within 1.1x of direct calls",
        1.1,
        lengths.iter().map(|&n| find(record_title(n)).ratio(KEEP, DIRECT)).collect(),
    );
    row(
        "async hooks (1 copy per hook) within 1.1x of hand-written boxed futures",
        1.1,
        lengths.iter().map(|&n| find(async_title(n)).ratio(RUNTIME_ASYNC, BOXED)).collect(),
    );
    let all: Vec<String> = LENGTHS.into_iter().map(|n| n.to_string()).collect();
    let registry_row = |label: &str, values: Vec<f64>| {
        let worst = values.iter().copied().fold(f64::NAN, f64::max);
        let shown: Vec<String> = values.iter().map(|v| format!("{v:.2}x")).collect();
        println!(
            "| {label} | {} ({}) | {} |",
            shown.join(" / "),
            all.join(" / "),
            verdict(worst < 1.0, format!("worst {worst:.2}x")),
        );
    };
    registry_row(
        "faster than the dynamic registry: sync, plain-returning",
        LENGTHS.into_iter().map(|n| find(sync_title(n)).ratio(RUNTIME_PLAIN, REGISTRY)).collect(),
    );
    registry_row(
        "faster than the dynamic registry: sync, `Result`-returning",
        LENGTHS.into_iter().map(|n| find(fallible_title(n)).ratio(RUNTIME_FALLIBLE, REGISTRY)).collect(),
    );
    registry_row(
        "faster than the dynamic registry: async",
        LENGTHS.into_iter().map(|n| find(async_title(n)).ratio(RUNTIME_ASYNC, REGISTRY)).collect(),
    );
    let assembly = find(assembly_title());
    let assembly_ratio = assembly.ratio(NO_HOOKS, PLAIN);
    println!(
        "| context assembly, {ASSEMBLY_MESSAGES} messages, no hooks, within 1.1x of no hook machinery | {assembly_ratio:.2}x \
         ({:+.0} ns); 1 sync hook per point: {:.2}x | {} |",
        assembly.difference(NO_HOOKS, PLAIN),
        assembly.ratio(ONE_HOOK, PLAIN),
        verdict(assembly_ratio <= 1.1, format!("{assembly_ratio:.2}x")),
    );

    let per_hook = |title: String, a: &str, b: &str, n: usize| find(title).difference(a, b) / n as f64;
    let machinery: Vec<String> = lengths
        .iter()
        .map(|&n| {
            format!(
                "{n}: {:.2}x, {:.1} ns per hook",
                find(record_title(n)).ratio(PREVENT, DIRECT),
                per_hook(record_title(n), PREVENT, DIRECT, n)
            )
        })
        .collect();
    println!(
        "\nPure dispatch machinery (before_create_message, Prevent: no copy), over direct calls: {}",
        machinery.join("; ")
    );
    let copies = find(copy_title());
    println!(
        "E1 copy alone, over a move: Vec of {CHAIN_MESSAGES} messages {:+.1} ns ({:.1}x), MessageRecord {:+.1} ns",
        copies.difference(COPY_VEC, MOVE),
        copies.ratio(COPY_VEC, MOVE),
        copies.difference(COPY_RECORD, MOVE),
    );
    let fallible: Vec<String> = lengths
        .iter()
        .map(|&n| format!("{n}: {:.1} ns", per_hook(fallible_title(n), RUNTIME_FALLIBLE, DIRECT, n)))
        .collect();
    println!("Result-returning sync hooks, runtime over direct calls, per hook: {}", fallible.join(", "));
    let plain: Vec<String> =
        lengths.iter().map(|&n| format!("{n}: {:.1} ns", per_hook(sync_title(n), RUNTIME_PLAIN, DIRECT, n))).collect();
    println!("Plain-returning sync hooks, runtime over direct calls, per hook: {}", plain.join(", "));
    println!("\n`ok`: target met; `MISS`: target missed. The machine has shared cores: compare ratios, not times.");
}

fn verdict(met: bool, otherwise: String) -> String {
    if met { "ok".to_owned() } else { format!("MISS ({otherwise})") }
}
