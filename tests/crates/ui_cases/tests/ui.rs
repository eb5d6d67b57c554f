//! Compile-time clauses (D1-D12): each case in `tests/ui/` is named after its clause, and its
//! `.stderr` was read and judged helpful before it was committed.
//!
//! A test binary of its own without the libtest harness (`harness = false` in `Cargo.toml`), so
//! that trybuild's progress (one line per case) shows while the suite runs instead of minutes of
//! silence. The expected output is rustc's own, which changes between releases: the suite runs on
//! the toolchain the snapshots were written with (rustc 1.95 stable) and says it skipped
//! anywhere else. To regenerate the snapshots after a deliberate change, run
//! `TRYBUILD=overwrite cargo test -p ui_cases --test ui` and read every changed `.stderr`.
//!
//! The binary runs the cases in a child of itself, whose environment settles two things of
//! trybuild's build that its project (under the target folder's `tests/trybuild`) cannot:
//! - the rustflags: trybuild builds the dependencies with one set, then the cases with that set
//!   and `--diagnostic-width=140`; rustflags are part of a build's hash, so every dependency was
//!   compiled twice. `CARGO_ENCODED_RUSTFLAGS`, which cargo reads before trybuild's `--config`,
//!   gives both builds the second set, exactly as trybuild 1.0 spells it;
//! - the profile: the project has no `[profile]`, so its dependencies would carry full debuginfo,
//!   which no case needs (`CARGO_PROFILE_DEV_DEBUG=false`).

#[rustversion::stable(1.95)]
use std::process::{Command, ExitCode};

/// Set in the child that runs the cases.
#[rustversion::stable(1.95)]
const CHILD: &str = "UI_CASES_CHILD";

/// The rustflags trybuild 1.0 passes when it builds the cases (`rustflags.rs` and `cargo.rs`).
#[rustversion::stable(1.95)]
const RUSTFLAGS: [&str; 6] = ["--cfg", "trybuild", "--verbose", "-A", "dead_code", "--diagnostic-width=140"];

#[rustversion::stable(1.95)]
fn main() -> ExitCode {
    if std::env::var_os(CHILD).is_none() {
        return run_in_child();
    }
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
    // The cases run when `cases` is dropped; a failing case panics, and the process fails.
    drop(cases);
    ExitCode::SUCCESS
}

/// Runs this binary again with the environment above, and fails when it fails.
#[rustversion::stable(1.95)]
fn run_in_child() -> ExitCode {
    let status = Command::new(std::env::current_exe().expect("the path of the test binary"))
        .args(std::env::args_os().skip(1))
        .env(CHILD, "1")
        .env("CARGO_ENCODED_RUSTFLAGS", RUSTFLAGS.join("\u{1f}"))
        .env("CARGO_PROFILE_DEV_DEBUG", "false")
        .status()
        .expect("the test binary runs itself");
    if status.success() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

#[rustversion::not(stable(1.95))]
fn main() {
    println!("ui: skipped: the compile-error snapshots are for rustc 1.95 stable, and this is another rustc");
}
