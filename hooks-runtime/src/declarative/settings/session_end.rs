//! `SessionEnd` (K11): a session here is a top-level thread's use by one runtime. It begins when
//! the runtime creates the thread or opens it ([`Runtime::create_thread`](crate::Runtime::create_thread),
//! [`Runtime::open_thread`](crate::Runtime::open_thread)) and ends when the application says so
//! ([`Runtime::end_sessions`](crate::Runtime::end_sessions) at shutdown,
//! [`Runtime::end_session`](crate::Runtime::end_session) for one thread), with the reason it
//! gives. A handle dropped, or a server evicting an idle thread, ends nothing: the thread is
//! still there to be opened again. Subagents' child threads have no session of their own, as in
//! Claude Code. The hooks observe only: their answers decide nothing, as in Claude Code.

use std::fmt;
use std::path::Path;

use serde_json::Value;

use super::event::SettingsEvent;
use super::fire::{fire, input};
use super::hook::SettingsHook;
use super::state::SettingsState;
use super::transcript::render as render_transcript;
use crate::declarative::LOG_TARGET;
use crate::store::MessageStore;

/// Why a thread's session ends: the `reason` of the `SessionEnd` input, which its hooks' matchers
/// select on, as Claude Code gives it.
///
/// | reason | in Claude Code | here, pass it when |
/// |---|---|---|
/// | `clear` | `/clear` | the person cleared the conversation to start anew |
/// | `logout` | `/logout` | the person signed out |
/// | `prompt_input_exit` | the person left at the prompt (`/exit`, Ctrl-D) | the person closed the conversation |
/// | `other` | any other end (the terminal closed) | anything else: the application shuts down |
///
/// ```
/// use hooks_runtime::declarative::SessionEndReason;
///
/// assert_eq!(SessionEndReason::PromptInputExit.name(), "prompt_input_exit");
/// assert_eq!(SessionEndReason::Other.to_string(), "other");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SessionEndReason {
    /// The conversation was cleared to start anew (`clear`).
    Clear,
    /// The person signed out (`logout`).
    Logout,
    /// The person closed the conversation (`prompt_input_exit`).
    PromptInputExit,
    /// Any other end, the application's shutdown among them (`other`).
    Other,
}

impl SessionEndReason {
    /// The reason as the input writes it (`prompt_input_exit`).
    pub const fn name(self) -> &'static str {
        match self {
            SessionEndReason::Clear => "clear",
            SessionEndReason::Logout => "logout",
            SessionEndReason::PromptInputExit => "prompt_input_exit",
            SessionEndReason::Other => "other",
        }
    }
}

impl fmt::Display for SessionEndReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Records that the session of the top-level thread `thread` began, when a `SessionEnd` hook
/// would run for it (otherwise there is nothing to remember).
pub(crate) fn begin(hooks: &[SettingsHook], state: &SettingsState, thread: &str) {
    if hooks.iter().any(|hook| hook.event == SettingsEvent::SessionEnd) {
        state.begin_session(thread);
    }
}

/// Fires `SessionEnd` for each of `threads` (sessions already taken from `state`), all at once,
/// each hook within its timeout; returns when every hook that holds the event has ended.
pub(crate) async fn end(
    hooks: &[SettingsHook],
    state: &SettingsState,
    store: &dyn MessageStore,
    threads: Vec<String>,
    reason: SessionEndReason,
) {
    let cwd = std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("."));
    let ends = threads.iter().map(|thread| end_one(hooks, state, store, thread, reason, &cwd));
    futures_util::future::join_all(ends).await;
}

async fn end_one(
    hooks: &[SettingsHook],
    state: &SettingsState,
    store: &dyn MessageStore,
    thread: &str,
    reason: SessionEndReason,
    cwd: &Path,
) {
    let event = SettingsEvent::SessionEnd;
    let mut fields = vec![("reason", Value::from(reason.name()))];
    let reads = hooks.iter().any(|hook| hook.cannot_run.is_none() && hook.selects(event, Some(reason.name()), None));
    if reads {
        match transcript(state, store, thread, cwd).await {
            Ok(path) => fields.push(("transcript_path", Value::from(path.to_string_lossy().into_owned()))),
            Err(error) => tracing::warn!(
                target: LOG_TARGET,
                "[HOOK] the transcript for SessionEnd hooks of thread {thread} could not be written: {error}"
            ),
        }
    }
    let input = input(event, thread, cwd, fields);
    let verdict = fire(hooks, Some((state, thread)), event, Some(reason.name()), None, &input, cwd, None).await;
    // Observe only: nothing is left to decide. A failure was logged where it was read.
    for given in verdict.messages {
        tracing::info!(target: LOG_TARGET, "[HOOK] {} (SessionEnd) says to the person: {}", given.hook, given.reason);
    }
}

/// Writes the transcript of `thread` as the store holds it now; its path.
async fn transcript(
    state: &SettingsState,
    store: &dyn MessageStore,
    thread: &str,
    cwd: &Path,
) -> std::io::Result<std::path::PathBuf> {
    let path = state.transcript_path(thread)?;
    let messages = store.messages(thread).await.map_err(std::io::Error::other)?;
    let text = render_transcript(thread, cwd, &messages);
    let target = path.clone();
    tokio::task::spawn_blocking(move || std::fs::write(target, text)).await.map_err(std::io::Error::other)??;
    Ok(path)
}
