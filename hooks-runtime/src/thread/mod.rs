//! Threads: identity, state, events, and the pipelines that run hooks where the specification
//! says. Each pipeline stage is its own module with its error rule in one place:
//! `context` (R1-R8), `messages` (M1-M10), `tool_calls` (T1-T7), `turn` (the loop), `step` (one
//! model step and its messages), `agents` (handoffs), `children` (subagents as child threads).
//! The graph is one-way: `turn -> step -> agents -> tool_calls -> children`, each using the
//! stages below it.
//!
//! This module only declares and re-exports. At the bottom, the types every stage returns:
//! `outcome` (how a run or a turn ended), `error` (`RuntimeError`), `options` (`ThreadOptions`,
//! `InputId`); then `links` (a thread's live parts), `live_threads` (the runtime's map of
//! live threads), `journal` (the one door to a thread's durable writes, with the ordering
//! rules they keep, its events and its values), `shared` (the state a thread's handles share,
//! split by job into `active_agent`, `handle_records` and the journal) and `handle` (`Thread`,
//! its creation and reads); the stages use these. On top, `runs` and `approvals` hold the
//! `Thread` methods that take a run, so that `handle` needs no stage that needs it back.

mod accepted_inputs;
mod active_agent;
mod agents;
mod approvals;
mod call_end;
mod children;
pub(crate) mod context;
mod edited_arguments;
mod error;
mod event_hooks;
mod handle;
mod handle_records;
mod hook_services;
mod journal;
mod links;
mod live_threads;
mod messages;
mod model_step;
mod options;
mod outcome;
mod parking;
mod pipeline;
mod recovery;
mod reentry;
mod resuming;
mod run_permit;
mod runs;
mod shared;
mod step;
mod stored_calls;
mod tool_calls;
mod tool_stream;
mod turn;

pub use approvals::{ApprovalChoice, ApprovalError};
pub use error::RuntimeError;
pub use handle::Thread;
pub(crate) use live_threads::LiveThreads;
pub use options::{InputId, ThreadOptions};
pub(crate) use outcome::{Prevented, TurnEnd};
pub use outcome::{RunFailed, RunOutcome};
pub use recovery::{Recovery, RecoveryPolicy};
pub(crate) use recovery::{on_first_use as recovery_on_first_use, recover, start_sweeping};
pub(crate) use shared::ThreadShared;
