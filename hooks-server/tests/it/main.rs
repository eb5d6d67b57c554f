//! hooks-server's integration tests, one binary (each binary links the whole tree): a module
//! per area. The browser and PostgreSQL tests are modules behind their features; `.ci/run`
//! selects them by name (`inspector_browser::`, `postgres_`).
//!
//! Two tests stay binaries of their own, for what they set process-wide: `eviction` counts the
//! thread entries and event log writers of the whole process, and `otel_trace_context`
//! installs an OTLP exporter as the process's `tracing` subscriber.

#[path = "../support/mod.rs"]
mod support;

mod approvals;
mod blocked_messages;
mod contents_canary;
mod durable_send;
mod governing;
mod hook_runs;
#[cfg(feature = "browser-tests")]
mod inspector_browser;
#[cfg(feature = "postgres")]
mod postgres_scale_out;
#[cfg(feature = "postgres")]
mod postgres_streams;
mod quotas;
mod shutdown;
mod slow_clients;
mod sqlite_processes;
mod threads;
mod user_scope;
mod watched_store;
