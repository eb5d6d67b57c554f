//! The events of the settings format that have a counterpart in this runtime, and the ones
//! that do not.

use std::fmt;

/// An event of a Claude Code-format settings file that this runtime fires, named as the file
/// names it.
///
/// ```
/// use hooks_runtime::declarative::SettingsEvent;
///
/// assert_eq!(SettingsEvent::from_name("PreToolUse"), Some(SettingsEvent::PreToolUse));
/// assert_eq!(SettingsEvent::Stop.name(), "Stop");
/// assert_eq!(SettingsEvent::from_name("PreCompact"), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum SettingsEvent {
    /// Before a tool runs, after the agent's authorization check: may allow, deny, ask or
    /// rewrite the arguments.
    PreToolUse,
    /// After a tool succeeded: may add context to the result the model reads.
    PostToolUse,
    /// After a tool failed: may add context to the error the model reads.
    PostToolUseFailure,
    /// A user message sent to a thread, before it is stored: may block it or add context.
    UserPromptSubmit,
    /// A thread was created (`after_thread_created`): may add context for its first turn.
    SessionStart,
    /// A turn is about to end with a text reply: may continue it with a reason.
    Stop,
    /// As [`Stop`](Self::Stop), for the turn of a subagent's child thread.
    SubagentStop,
    /// A tool call is about to wait for a person's approval: may decide it at once (`allow`
    /// or `deny` in `hookSpecificOutput.decision.behavior`), recorded as decided by the hook.
    PermissionRequest,
    /// A tool call waits for a person (its approval was requested): observes only.
    Notification,
    /// A subagent's child thread was created: may add context for its first turn.
    SubagentStart,
    /// A top-level thread's session ended
    /// ([`Runtime::end_sessions`](crate::Runtime::end_sessions),
    /// [`Runtime::end_session`](crate::Runtime::end_session)): observes only.
    SessionEnd,
}

impl SettingsEvent {
    /// Every event, in declaration order.
    pub const ALL: [SettingsEvent; 11] = [
        SettingsEvent::PreToolUse,
        SettingsEvent::PostToolUse,
        SettingsEvent::PostToolUseFailure,
        SettingsEvent::UserPromptSubmit,
        SettingsEvent::SessionStart,
        SettingsEvent::Stop,
        SettingsEvent::SubagentStop,
        SettingsEvent::PermissionRequest,
        SettingsEvent::Notification,
        SettingsEvent::SubagentStart,
        SettingsEvent::SessionEnd,
    ];

    /// The name as the settings file writes it (`PreToolUse`).
    pub const fn name(self) -> &'static str {
        match self {
            SettingsEvent::PreToolUse => "PreToolUse",
            SettingsEvent::PostToolUse => "PostToolUse",
            SettingsEvent::PostToolUseFailure => "PostToolUseFailure",
            SettingsEvent::UserPromptSubmit => "UserPromptSubmit",
            SettingsEvent::SessionStart => "SessionStart",
            SettingsEvent::Stop => "Stop",
            SettingsEvent::SubagentStop => "SubagentStop",
            SettingsEvent::PermissionRequest => "PermissionRequest",
            SettingsEvent::Notification => "Notification",
            SettingsEvent::SubagentStart => "SubagentStart",
            SettingsEvent::SessionEnd => "SessionEnd",
        }
    }

    /// Whether it is about one tool call (`PreToolUse`, `PostToolUse`, `PostToolUseFailure`):
    /// its matcher and `if` select tool calls.
    pub const fn is_tool_event(self) -> bool {
        matches!(
            self,
            SettingsEvent::PreToolUse
                | SettingsEvent::PostToolUse
                | SettingsEvent::PostToolUseFailure
                | SettingsEvent::PermissionRequest
        )
    }

    /// The event named `name`, exactly as the file spells it (the format is case-sensitive).
    pub fn from_name(name: &str) -> Option<SettingsEvent> {
        SettingsEvent::ALL.into_iter().find(|event| event.name() == name)
    }
}

impl fmt::Display for SettingsEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Events of the format that this runtime has no point for: a file that uses them is told so
/// at load time, rather than the hook silently never running.
pub(super) const WITHOUT_COUNTERPART: &[&str] = &[
    "PreCompact",
    "PostCompact",
    "Setup",
    "TeammateIdle",
    "TaskCompleted",
    "TaskCreated",
    "ConfigChange",
    "InstructionsLoaded",
    "WorktreeCreate",
    "WorktreeRemove",
    "Elicitation",
    "ElicitationResult",
];
