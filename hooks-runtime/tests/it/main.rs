//! hooks-runtime's integration tests, one module per suite, in one binary: each test binary
//! links the whole crate (SQLite, reqwest, rustls, rmcp...), so one link here replaces one per
//! file. A test's full name is `module::test` (`cargo test -p hooks-runtime --test runtime_it --
//! store_suite::`). Suites gated by a feature are gated inside (`#![cfg(feature = ...)]` at the
//! top of the module, or on its `mod` line here).
//!
//! Tests that re-run this binary as a child process name the child test by its full name
//! (`sqlite_store::child_writer`). The suites that must stay alone in a binary are listed, with
//! the reason, in `hooks-runtime/Cargo.toml`.

#[cfg(feature = "declarative")]
#[path = "../declarative_support/mod.rs"]
mod declarative_support;
#[cfg(feature = "openai")]
#[path = "../openai_support/mod.rs"]
mod openai_support;
#[cfg(feature = "otel")]
#[path = "../otlp_support/mod.rs"]
mod otlp_support;
#[cfg(feature = "postgres")]
#[path = "../postgres_support/mod.rs"]
mod postgres_support;
#[path = "../store_fixtures/mod.rs"]
mod store_fixtures;
#[cfg(all(feature = "mcp-tests", feature = "declarative", feature = "sqlite", target_os = "linux"))]
#[path = "../support_mcp/mod.rs"]
mod support_mcp;
#[cfg(all(feature = "declarative", target_os = "linux"))]
#[path = "../support_processes/mod.rs"]
mod support_processes;

mod child_env;
mod conformance_mcp;
mod contents_canary;
mod declarative_actions;
mod declarative_cli;
mod declarative_events;
mod declarative_fuzz;
mod declarative_injection;
mod declarative_loading;
mod declarative_process_group;
mod declarative_robustness;
mod future_sizes;
mod lent_history;
mod mcp_bounds;
mod openai_client;
mod openai_limits;
mod openai_provider;
#[cfg(feature = "otel")]
mod otel_export;
mod postgres_lease_loss;
mod postgres_runs;
mod postgres_scale_out;
mod postgres_store;
mod settings_drop_in;
mod settings_loading;
mod settings_rules;
mod settings_runtime;
mod settings_trust;
mod sqlite_store;
mod store_suite;
mod tool_call_assembly;
