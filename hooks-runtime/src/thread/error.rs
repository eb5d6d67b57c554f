//! What goes wrong outside the hooks: [`RuntimeError`] and its sentences.

use std::fmt;

use crate::store::StoreError;

/// What went wrong outside the hooks: an unknown agent or relationship, a missing argument, or
/// the store. Its `Display` (and its `Debug`, so a `main` that returns it prints a sentence) says
/// what is wrong and how to fix it.
///
/// ```
/// # use hooks_runtime::RuntimeError;
/// let error = RuntimeError::UnknownAgent("support".into());
/// assert_eq!(format!("{error:?}"), error.to_string());
/// assert!(error.to_string().contains("add it with `.agent::<support>()`"));
/// ```
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// No agent of this name was added to the runtime.
    #[error("no agent named `{0}` was added to the runtime; add it with `.agent::<{0}>()` on the runtime builder")]
    UnknownAgent(String),
    /// No thread with this id in the store.
    #[error("no thread `{0}` in the store; check the id (`Thread::id` of a thread this runtime's store holds)")]
    UnknownThread(String),
    /// The agent has no (optional) subagent relationship of this name.
    #[error("{}", unknown_relationship_sentence(agent, name, known, *optional))]
    UnknownRelationship {
        /// The agent.
        agent: &'static str,
        /// The name asked for.
        name: String,
        /// The names it does have, of the kind asked for.
        known: Vec<&'static str>,
        /// Whether an optional relationship was asked for.
        optional: bool,
    },
    /// The relationship already has `max_instances` child threads.
    #[error(
        "relationship `{relationship}` already has its maximum of {max} child threads; reuse one of them or raise `max_instances`"
    )]
    MaxInstances {
        /// The relationship.
        relationship: String,
        /// Its limit.
        max: u32,
    },
    /// A prompt of the agent has a `{{name}}` placeholder and the thread options have no
    /// argument of that name: the model would get the placeholder as written.
    #[error(
        "prompt `{prompt}` of agent `{agent}` uses `{{{{{argument}}}}}`, but the thread has no argument `{argument}`; \
         pass it with `ThreadOptions::new().argument(\"{argument}\", ..)`"
    )]
    MissingArgument {
        /// The agent.
        agent: &'static str,
        /// The prompt whose text has the placeholder.
        prompt: &'static str,
        /// The placeholder's name.
        argument: String,
    },
    /// The store failed.
    #[error(transparent)]
    Store(StoreError),
    /// The thread's tool calls wait for approvals (A5): a message is refused, and nothing is
    /// stored, until they are decided (`Thread::approve`, `Thread::deny`) or the run aborted.
    #[error(
        "the thread waits for approvals of the tool calls {}; decide them with Thread::approve or Thread::deny (or abort the run) before sending a message",
        calls.iter().map(|call| format!("`{call}`")).collect::<Vec<_>>().join(", ")
    )]
    AwaitingApproval {
        /// The ids of the calls that wait.
        calls: Vec<String>,
    },
    /// A hook (or a tool) called this `Thread` method on the thread whose run is calling it.
    /// That run holds the thread until the hook returns, so the call would wait for itself.
    #[error("{}", held_by_caller(method))]
    HeldByCaller {
        /// The method called, such as `send`.
        method: &'static str,
    },
}

impl fmt::Debug for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

fn unknown_relationship_sentence(agent: &str, name: &str, known: &[&str], optional: bool) -> String {
    let kind = if optional { "optional subagent relationship" } else { "subagent relationship" };
    let known = if known.is_empty() {
        "none".to_owned()
    } else {
        known.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
    };
    format!(
        "agent `{agent}` has no {kind} named `{name}`; its {kind}s are: {known} (a relationship is named by its `as`, or else by its agent's name)"
    )
}

impl RuntimeError {
    pub(crate) fn unknown_relationship(agent: &'static hooks_core::AgentDef, name: &str, optional: bool) -> Self {
        let known = agent.relationships().filter(|r| !optional || r.optional).map(|r| r.name).collect();
        RuntimeError::UnknownRelationship { agent: agent.name, name: name.to_owned(), known, optional }
    }
}

/// Why a `Thread` method called from inside its own thread's run fails at once. Plain words, no
/// quoting characters: the text can reach a tool result, and from there a shell command.
pub(super) fn held_by_caller(method: &str) -> String {
    format!(
        "Thread::{method} was called from inside a hook or tool of the same thread, whose run holds the thread \
         until the hook returns: it would wait for itself; from a hook use state.inject_message or \
         state.update_message, or Thread::queue_message for a later run_queued"
    )
}

impl From<StoreError> for RuntimeError {
    fn from(error: StoreError) -> Self {
        RuntimeError::Store(error)
    }
}
