//! A small measurement harness shared by the benchmarks (no criterion: it keeps CI builds small).
//!
//! Each comparison group is measured together: every variant is calibrated to about
//! `BENCH_SAMPLE_MS` (default 20 ms, or the binary's own) per sample, then `BENCH_ROUNDS`
//! (default 11, or the binary's own) rounds run every variant once, in an order that rotates each
//! round, so that noise on a shared machine hits all variants alike. Ratios are the median of the per-round ratios; times are medians. Allocations
//! are counted in a separate binary (`dispatch_allocs`) whose global allocator counts, so that the
//! counting does not slow the timed runs (the workspace forbids `unsafe`, so the counting
//! allocator is `stats_alloc`'s wrapper of `System`).

#![allow(dead_code, unreachable_pub)]

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Set by a binary that installs a counting global allocator: reads its allocation count.
static ALLOCATION_COUNTER: OnceLock<fn() -> u64> = OnceLock::new();

/// Switches [`measure`] to counting allocations (no timing): the binary's global allocator
/// counts, and `counter` reads its total.
pub fn count_allocations_with(counter: fn() -> u64) {
    let _ = ALLOCATION_COUNTER.set(counter);
}

/// One variant of a comparison: `run(n)` runs `n` iterations and returns the time they took.
pub struct Variant<'a> {
    pub name: String,
    pub run: Box<dyn FnMut(u64) -> Duration + 'a>,
}

impl<'a> Variant<'a> {
    pub fn new(name: impl Into<String>, run: impl FnMut(u64) -> Duration + 'a) -> Self {
        Variant { name: name.into(), run: Box::new(run) }
    }
}

/// Times `n` iterations of `body`.
#[inline(always)]
pub fn time(n: u64, mut body: impl FnMut()) -> Duration {
    let started = Instant::now();
    for _ in 0..n {
        body();
    }
    started.elapsed()
}

/// The measurements of one group.
pub struct Group {
    pub title: String,
    pub names: Vec<String>,
    /// Per variant, per round: nanoseconds per iteration.
    pub samples: Vec<Vec<f64>>,
    /// Per variant: allocations per iteration.
    pub allocations: Vec<f64>,
}

/// A binary's own defaults for `BENCH_SAMPLE_MS` and `BENCH_ROUNDS` (else 20 ms and 11 rounds).
static DEFAULTS: OnceLock<(u64, usize)> = OnceLock::new();

/// Sets this binary's defaults: a benchmark whose samples are noisier than dispatch's (a whole
/// turn) runs shorter samples in more rounds, so that a burst of load on the shared machine
/// lands in fewer of them.
pub fn set_defaults(sample_ms: u64, rounds: usize) {
    let _ = DEFAULTS.set((sample_ms, rounds));
}

pub fn sample_ms() -> u64 {
    let default = DEFAULTS.get().map_or(20, |d| d.0);
    std::env::var("BENCH_SAMPLE_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

pub fn rounds() -> usize {
    let default = DEFAULTS.get().map_or(11, |d| d.1);
    std::env::var("BENCH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn calibrate(run: &mut dyn FnMut(u64) -> Duration, target: Duration) -> u64 {
    let mut n = 1u64;
    loop {
        let took = run(n);
        if took >= target / 10 || n >= 1 << 40 {
            let per = took.as_secs_f64() / n as f64;
            return ((target.as_secs_f64() / per.max(1e-12)) as u64).max(1);
        }
        n *= 4;
    }
}

pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 { sorted[mid] } else { (sorted[mid - 1] + sorted[mid]) / 2.0 }
}

/// Measures every variant of a group: interleaved timings, or, in a counting binary,
/// allocations per iteration (the difference between 2000 and 1000 iterations, so that a fixed
/// cost such as a runtime's `block_on` does not count).
pub fn measure(title: impl Into<String>, mut variants: Vec<Variant<'_>>) -> Group {
    let title = title.into();
    let count = variants.len();
    let names = variants.iter().map(|v| v.name.clone()).collect();
    if let Some(counter) = ALLOCATION_COUNTER.get() {
        let allocations = variants
            .iter_mut()
            .map(|v| {
                (v.run)(100);
                let before = counter();
                (v.run)(1000);
                let middle = counter();
                (v.run)(2000);
                let after = counter();
                ((after - middle) as f64 - (middle - before) as f64) / 1000.0
            })
            .collect();
        let group = Group { title, names, samples: vec![Vec::new(); count], allocations };
        group.print_allocations();
        return group;
    }
    if let Some(fixed) = std::env::var("BENCH_FIXED_ITERS").ok().and_then(|n| n.parse::<u64>().ok()) {
        // For counting instructions under `valgrind --tool=callgrind`, which is repeatable where
        // time on a shared machine is not: the selected variants run exactly `fixed` iterations,
        // and two runs with different counts give the instructions per iteration.
        let wanted = std::env::var("BENCH_VARIANT").ok();
        for variant in variants.iter_mut().filter(|v| wanted.as_deref().is_none_or(|w| v.name == w)) {
            (variant.run)(fixed);
        }
        return Group { title, names, samples: vec![vec![0.0]; count], allocations: vec![f64::NAN; count] };
    }
    let target = Duration::from_millis(sample_ms());
    let iterations: Vec<u64> = variants.iter_mut().map(|v| calibrate(&mut v.run, target)).collect();
    let mut samples = vec![Vec::new(); count];
    for round in 0..rounds() {
        for step in 0..count {
            let index = (step + round) % count;
            let took = (variants[index].run)(iterations[index]);
            samples[index].push(took.as_nanos() as f64 / iterations[index] as f64);
        }
    }
    let group = Group { title, names, samples, allocations: vec![f64::NAN; count] };
    group.print();
    group
}

impl Group {
    pub fn index(&self, name: &str) -> usize {
        self.names.iter().position(|n| n == name).unwrap_or_else(|| panic!("no variant {name} in {}", self.title))
    }

    pub fn ns(&self, name: &str) -> f64 {
        median(&self.samples[self.index(name)])
    }

    pub fn allocs(&self, name: &str) -> f64 {
        self.allocations[self.index(name)]
    }

    /// The median over rounds of `a / b`.
    pub fn ratio(&self, a: &str, b: &str) -> f64 {
        let (a, b) = (&self.samples[self.index(a)], &self.samples[self.index(b)]);
        median(&a.iter().zip(b).map(|(a, b)| a / b).collect::<Vec<_>>())
    }

    /// The median over rounds of `a - b`, in nanoseconds.
    pub fn difference(&self, a: &str, b: &str) -> f64 {
        let (a, b) = (&self.samples[self.index(a)], &self.samples[self.index(b)]);
        median(&a.iter().zip(b).map(|(a, b)| a - b).collect::<Vec<_>>())
    }

    fn print(&self) {
        println!("\n{}", self.title);
        let baseline = &self.names[0];
        for name in &self.names {
            println!(
                "  {:<48} {:>11.1} ns  {:>8.2}x{}",
                name,
                self.ns(name),
                self.ratio(name, baseline),
                if name == baseline { "  (baseline)" } else { "" },
            );
        }
    }

    fn print_allocations(&self) {
        println!("\n{}", self.title);
        for name in &self.names {
            println!("  {:<48} {:>8.2} allocations per dispatch", name, self.allocs(name));
        }
    }
}
