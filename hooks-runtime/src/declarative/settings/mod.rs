//! Hooks in the command-hook format of Claude Code settings files, which Codex reads in the
//! same shape: loaded unchanged and run with that format's protocol.
//!
//! ```json
//! {"hooks": {"PreToolUse": [{"matcher": "Bash",
//!   "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 30, "onFailure": "block"}]}]}}
//! ```
//!
//! Load with [`SettingsHooks::from_json`](super::SettingsHooks::from_json)
//! (or its strict variant) and give the registry to
//! [`RuntimeBuilder::settings_hooks`](crate::RuntimeBuilder::settings_hooks): the format has no
//! per-agent scoping, so its hooks govern every agent of the runtime, subagent threads included.
//!
//! A command runs `sh -c` in the process working directory, or, for a file found by
//! [`Discovery`](super::Discovery), in its project folder (`CLAUDE_PROJECT_DIR` is set to that
//! folder, for the format's project hooks), in a process group of its own,
//! with the event as JSON on stdin; it is killed with its group at its timeout (60 s unless the
//! entry says) or, once the shell has exited, after a short grace for output, so a background
//! child holding stdout open cannot hold the call. Each of stdout and stderr is kept up to
//! [`MAX_SETTINGS_HOOK_OUTPUT_BYTES`]; the rest is dropped with a WARN. Exit code 2 blocks with
//! stderr as the reason; exit 0 applies the JSON on stdout; any other exit, JSON that does not
//! parse or a timeout is logged at WARN and ignored, or, for a hook marked
//! `"onFailure": "block"`, denies. Matching hooks of one event run at once; decisions combine
//! deny > ask > allow, and an `updatedInput` replaces the input (two hooks that give different
//! ones: the later one has failed, and its rewrite is dropped; so is a rewrite that the tool's
//! `parameters()` schema rejects). A `PreToolUse` `ask` is an approval of the
//! runtime's (`Thread::pending_approvals`), asked under the hook's [`SettingsHook::id`].

mod answer;
mod deciders;
mod discover;
mod event;
mod fire;
mod hook;
mod http;
mod loader;
mod matcher;
mod mcp_spec;
mod paths;
mod permissions;
pub(crate) mod pre_tool_use;
mod runner;
mod session_end;
mod settings_hooks;
mod shell;
mod state;
mod thread_hooks;
mod transcript;
mod trust;
mod variables;
mod words;
mod wrappers;

pub use discover::{
    DEFAULT_MANAGED_SETTINGS, Discovered, DiscoveredFile, Discovery, MANAGED_SETTINGS_ENV, SettingsLayer, TrustState,
};
pub use event::SettingsEvent;
pub use hook::{DEFAULT_SETTINGS_HOOK_TIMEOUT, SettingsHook};
pub use loader::SettingsReport;
pub use matcher::SettingsMatcher;
pub use mcp_spec::McpServerSpec;
pub use permissions::{PermissionRule, SettingsPermissions};
pub(crate) use permissions::{RuleKind, remembered_pattern};
pub use runner::MAX_SETTINGS_HOOK_OUTPUT_BYTES;
pub use session_end::SessionEndReason;
pub use settings_hooks::SettingsHooks;
pub use trust::{TRUST_FILE_ENV, TrustStore};

pub(crate) use deciders::{PermissionRequestHooks, PermissionRules, PreToolUseHooks};
pub(crate) use session_end::{begin as begin_session, end as end_sessions};

pub(crate) use state::SettingsState;
pub use thread_hooks::{SETTINGS_MESSAGE_EVENT, SETTINGS_STOP_EVENT};
pub(crate) use transcript::remove_stale as remove_stale_transcripts;

#[cfg(all(test, unix))]
mod shell_proof;
#[cfg(test)]
mod tests;
