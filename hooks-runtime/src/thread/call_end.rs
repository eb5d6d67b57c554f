//! How a tool call ended, apart from its result's status (G3, G9, G12).

use hooks_core::HookToolResult;

/// How a call ended, apart from its result's status: the stored result, the kept result of a
/// parked call and `tool_call_done` say which (G3, G12).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CallEnd {
    /// It ran (or failed to, or was refused before any decider): its result is the tool's.
    Ran,
    /// A decider denied it (G3).
    Denied,
    /// Its process died while it ran, or before its result was kept (G12).
    Interrupted,
    /// Its arguments failed the tool's schema (G9): no decider, tool or tool hook ran for it.
    Invalid,
}

impl CallEnd {
    pub(crate) fn denied(self) -> bool {
        self == CallEnd::Denied
    }

    pub(crate) fn interrupted(self) -> bool {
        self == CallEnd::Interrupted
    }

    /// The call's outcome in a word, for its span: `success`, `error`, `denied`, `interrupted`
    /// or `invalid`.
    pub(crate) fn outcome(self, result: &HookToolResult) -> &'static str {
        match self {
            CallEnd::Ran if result.is_success() => "success",
            CallEnd::Ran => "error",
            CallEnd::Denied => "denied",
            CallEnd::Interrupted => "interrupted",
            CallEnd::Invalid => "invalid",
        }
    }
}
