//! Compile-time clauses (D1-D12): each case in `tests/ui/` is named after its clause, and its
//! `.stderr` was read and judged helpful before it was committed.
//!
//! A test binary of its own without the libtest harness (`harness = false` in `Cargo.toml`), so
//! that trybuild's progress (one line per case) shows while the suite runs instead of minutes of
//! silence. The expected output is rustc's own, which changes between releases: the suite runs on
//! the toolchain the snapshots were written with (rustc 1.95 stable) and says it skipped
//! anywhere else. To regenerate the snapshots after a deliberate change, run
//! `TRYBUILD=overwrite cargo test -p ui_cases --test ui` and read every changed `.stderr`.

#[rustversion::stable(1.95)]
fn main() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
    // The cases run when `cases` is dropped; a failing case panics, and the process fails.
}

#[rustversion::not(stable(1.95))]
fn main() {
    println!("ui: skipped: the compile-error snapshots are for rustc 1.95 stable, and this is another rustc");
}
