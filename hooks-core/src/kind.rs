//! The hook kinds of the specification, with their scope and role.

use std::fmt;

/// Where a hook runs: on a thread (composed by prompts, agents and parent requirements) or in the
/// user scope (every linked hook of the kind runs, no composition).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HookScope {
    /// Receives a `ThreadState`; runs only when a prompt, agent or child requirement selects it.
    Thread,
    /// Receives a `UserState`; runs for every linked hook of its kind.
    User,
}

/// Whether a hook changes the value it is given or only observes an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HookRole {
    /// Returns a value that replaces the one it was given (or keeps it, for `Option` returns).
    Transform,
    /// Returns nothing; its failure never affects the operation it observes.
    Event,
}

macro_rules! hook_kinds {
    ($($variant:ident = $name:literal, $scope:ident, $role:ident, $doc:literal;)*) => {
        /// One of the hook kinds: the 17 of the guide's quick reference (14 thread kinds and 3
        /// user-scope kinds) and `before_tool_call`, this project's thread kind that governs
        /// tool calls.
        ///
        /// ```
        /// use hooks_runtime::{HookKind, HookRole, HookScope};
        ///
        /// let kind = HookKind::from_name("filter_messages").unwrap();
        /// assert_eq!(kind, HookKind::FilterMessages);
        /// assert_eq!(kind.scope(), HookScope::Thread);
        /// assert_eq!(kind.role(), HookRole::Transform);
        /// assert_eq!(HookKind::ALL.len(), 18);
        /// ```
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum HookKind {
            $(#[doc = $doc] $variant,)*
        }

        impl HookKind {
            /// Every kind, in the order of the guide's quick reference.
            pub const ALL: [HookKind; 18] = [$(HookKind::$variant,)*];

            /// The kind's name as the specification writes it, e.g. `"filter_messages"`.
            pub const fn name(self) -> &'static str {
                match self { $(HookKind::$variant => $name,)* }
            }

            /// Whether the kind runs on a thread or in the user scope.
            pub const fn scope(self) -> HookScope {
                match self { $(HookKind::$variant => HookScope::$scope,)* }
            }

            /// Whether the kind transforms a value or observes an event.
            pub const fn role(self) -> HookRole {
                match self { $(HookKind::$variant => HookRole::$role,)* }
            }

            /// The kind named `name`, or `None` for a name the specification does not define.
            pub fn from_name(name: &str) -> Option<HookKind> {
                match name { $($name => Some(HookKind::$variant),)* _ => None }
            }
        }
    };
}

hook_kinds! {
    AfterThreadCreated = "after_thread_created", Thread, Event,
        "After thread creation, before execution.";
    AfterSubagentCreated = "after_subagent_created", Thread, Event,
        "On the parent, after a child thread was created.";
    AfterSystemMessage = "after_system_message", Thread, Transform,
        "After the system message is rendered, before the history snapshot.";
    FilterMessages = "filter_messages", Thread, Transform,
        "Once per model-context assembly, on a stable history snapshot.";
    PrefilterLlmHistory = "prefilter_llm_history", Thread, Transform,
        "After provider-message transformation, before dispatch.";
    BeforeCreateMessage = "before_create_message", Thread, Transform,
        "Before a message insert.";
    BeforeUpdateMessage = "before_update_message", Thread, Transform,
        "Before a message update.";
    BeforeStoreToolResult = "before_store_tool_result", Thread, Transform,
        "Before a tool result is stored.";
    AfterCreateMessage = "after_create_message", Thread, Event,
        "After a message insert.";
    AfterUpdateMessage = "after_update_message", Thread, Event,
        "After a message update.";
    AfterToolCallSuccess = "after_tool_call_success", Thread, Transform,
        "After a successful tool call; may replace the result.";
    AfterToolCallFailure = "after_tool_call_failure", Thread, Transform,
        "After a failed tool call; may replace the result.";
    ToolCallStarted = "tool_call_started", Thread, Event,
        "When a tool call starts to stream, before the tool runs.";
    BeforeToolCall = "before_tool_call", Thread, Transform,
        "After a tool call has streamed and passed `authorize_tools`, before the tool runs: decides whether it runs (beyond the specification).";
    ToolCallDone = "tool_call_done", Thread, Event,
        "After a tool call executed, success or failure.";
    UserClientAttached = "user_client_attached", User, Event,
        "A client connects to the user event stream.";
    UserClientDetached = "user_client_detached", User, Event,
        "A client disconnects from the user event stream.";
    UserValueChanged = "user_value_changed", User, Event,
        "A user value changes.";
}

impl HookKind {
    /// The kind's position in [`HookKind::ALL`]; const-comparable, used by the static tables.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Whether the kind is a thread kind (composable by prompts, agents and parent hooks).
    pub const fn is_thread(self) -> bool {
        matches!(self.scope(), HookScope::Thread)
    }
}

impl fmt::Display for HookKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn d1_eighteen_kinds_fifteen_thread_three_user() {
        assert_eq!(HookKind::ALL.len(), 18);
        let user = HookKind::ALL.iter().filter(|k| k.scope() == HookScope::User).count();
        assert_eq!(user, 3);
        for (index, kind) in HookKind::ALL.iter().enumerate() {
            assert_eq!(kind.index(), index);
            assert_eq!(HookKind::from_name(kind.name()), Some(*kind));
        }
        assert_eq!(HookKind::from_name("filter_message"), None);
    }
}
