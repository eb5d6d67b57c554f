//! The workspace's integration tests, one module per suite, in one binary: each test binary
//! links the whole tree (SQLite, reqwest, rustls...), so one link here replaces one per file.
//! A test's full name is `module::test` (`cargo test -p tests --test tests_it -- one_truth::`).
//!
//! Tests that re-run this binary as a child process name the child test by its full name
//! (`crash_recovery::crash_child`). The suites that must stay alone in a binary are listed, with
//! the reason, in `tests/Cargo.toml`.

#[path = "../support/mod.rs"]
mod support;
#[path = "../support_store/mod.rs"]
mod support_store;
#[path = "../support_tools/mod.rs"]
mod support_tools;

mod admission_pipeline;
mod approval_races;
mod async_hooks;
mod blocking_hooks;
mod cancellation;
mod composition;
mod concurrency;
mod conformance_context;
mod conformance_doc;
mod conformance_errors;
mod conformance_messages;
mod conformance_tools;
mod crash_recovery;
mod declarative_runtime;
mod doctest_ids;
mod durable_runs;
mod governing;
mod governing_round_two;
mod governing_stores;
mod json_roundtrip;
mod last_good_value;
mod message_events;
mod one_truth;
mod packaging;
mod provider_shape;
mod reentrancy;
mod remembered_approvals;
mod run_outcome;
mod runtime_errors;
mod settings_hooks;
mod sqlite_runtime;
mod text_deltas;
