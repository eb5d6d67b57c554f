//! The hook kinds of the specification, with their scope and role.

use std::fmt;

use crate::error::HookResult;
use crate::future::BoxedHookFuture;
use crate::state::ThreadState;
use crate::types::{
    HookExecutionContext, HookMessage, HookToolCall, HookToolResult, LlmMessage, MessageRecord, MessageUpdate,
    ToolCallRecord, ToolDecision, UserEvent, UserState,
};

/// Where a hook runs: on a thread (composed by prompts, agents and parent requirements) or in the
/// user scope (every linked hook of the kind runs, no composition).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HookScope {
    /// Receives a `ThreadState`; runs only when a prompt, agent or child requirement selects it.
    Thread,
    /// Receives a `UserState`; runs for every linked hook of its kind.
    User,
}

/// Whether a hook changes the value it is given or only observes an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HookRole {
    /// Returns a value that replaces the one it was given (or keeps it, for `Option` returns).
    Transform,
    /// Returns nothing; its failure never affects the operation it observes.
    Event,
}

/// The kind table: each row declares a kind (variant, spec name, scope, role, doc) and the
/// arguments its adapter takes, from which the kind enum and the adapters' types are generated.
/// Adding a kind is one row here, one in hooks-macros' table (`kinds.rs`, the signatures a user
/// writes) and its hook point in the runtime's dispatch. The per-kind lists elsewhere are checked
/// against this table by tests: hooks-macros' `d1_table_matches_hooks_core` (names, variants,
/// scopes, signatures) and hooks-runtime's plain-chain and transform-marker tests (every kind
/// that `transforms_in_place` has its fast path).
macro_rules! hook_kinds {
    ($lt:lifetime; $($variant:ident = $name:literal, $scope:ident, $role:ident, $doc:literal,
        fn($($arg:ty),*) -> $out:ty;)*) => {
        /// One of the hook kinds: the 17 of the guide's quick reference (14 thread kinds and 3
        /// user-scope kinds) and `before_tool_call`, this project's thread kind that governs
        /// tool calls.
        ///
        /// ```
        /// use hooks_runtime::definition::{HookKind, HookRole, HookScope};
        ///
        /// let kind = HookKind::from_name("filter_messages").unwrap();
        /// assert_eq!(kind, HookKind::FilterMessages);
        /// assert_eq!(kind.scope(), HookScope::Thread);
        /// assert_eq!(kind.role(), HookRole::Transform);
        /// assert_eq!(HookKind::ALL.len(), 18);
        /// ```
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        #[non_exhaustive]
        pub enum HookKind {
            $(#[doc = $doc] $variant,)*
        }

        impl HookKind {
            /// Every kind, in the order of the guide's quick reference. A slice, so that a kind
            /// added in a minor release changes no public type.
            pub const ALL: &'static [HookKind] = &[$(HookKind::$variant,)*];

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

            /// Whether the kind's chain transforms one value in place and answers nothing else:
            /// every transform kind but `before_tool_call`, whose chain answers a decision. The
            /// kinds the runtime keeps typed chains of plain sync hooks for, and the kinds
            /// `#[hook]` accepts an in-place form of.
            pub(crate) const fn transforms_in_place(self) -> bool {
                match self {
                    $(HookKind::$variant => matches!(HookRole::$role, HookRole::Transform)
                        && <$out as KindAnswer>::NOTHING,)*
                }
            }

            /// The adapter's signature as the table writes it, e.g.
            /// `fn(&'a UserState) -> ()`; what the macros' own table is checked against.
            pub(crate) const fn adapter_signature(self) -> &'static str {
                match self { $(HookKind::$variant => stringify!(fn($($arg),*) -> $out),)* }
            }
        }

        /// The typed adapter of a hook, one variant per kind: a sync hook's adapter answers its
        /// outcome (one register wide, see `HookError`), an async hook's its boxed future.
        ///
        /// A kind that transforms a value takes it as `&mut T`, whichever form the user wrote:
        /// an in-place hook gets the reference itself, and the adapter of a by-value hook moves
        /// the value out, calls the hook and moves its answer back (see `HookDef::moves_value`).
        /// The chain therefore runs on one value that is never copied or moved through its
        /// layers. Values a hook only observes are borrowed.
        #[derive(Clone, Copy)]
        #[allow(clippy::type_complexity)]
        pub enum HookHandler {
            $(#[doc = $doc] $variant(Adapter<
                for<$lt> fn($($arg),*) -> HookResult<$out>,
                for<$lt> fn($($arg),*) -> BoxedHookFuture<$lt, HookResult<$out>>,
            >),)*
        }

        /// Each kind's sync adapter type, named by its variant: what a table of plain sync hooks
        /// of one kind holds.
        pub mod sync_adapter {
            #![allow(clippy::type_complexity)]
            use super::*;
            $(#[doc = $doc] pub type $variant = for<$lt> fn($($arg),*) -> HookResult<$out>;)*
        }

        impl HookHandler {
            /// The kind the adapter serves.
            pub const fn kind(&self) -> HookKind {
                match self { $(HookHandler::$variant(_) => HookKind::$variant,)* }
            }

            /// Whether the hook is an `async fn`: its adapter answers a future.
            pub const fn is_async(&self) -> bool {
                match self { $(HookHandler::$variant(adapter) => adapter.is_async(),)* }
            }
        }
    };
}

hook_kinds! { 'a;
    AfterThreadCreated = "after_thread_created", Thread, Event,
        "After thread creation, before execution.",
        fn(&'a ThreadState, &'a HookExecutionContext) -> ();
    AfterSubagentCreated = "after_subagent_created", Thread, Event,
        "On the parent, after a child thread was created.",
        fn(&'a ThreadState, &'a ThreadState, &'a HookExecutionContext) -> ();
    AfterSystemMessage = "after_system_message", Thread, Transform,
        "After the system message is rendered, before the history snapshot.",
        fn(&'a ThreadState, &'a mut String, &'a HookExecutionContext) -> ();
    FilterMessages = "filter_messages", Thread, Transform,
        "Once per model-context assembly, on a stable history snapshot.",
        fn(&'a ThreadState, &'a mut Vec<HookMessage>, &'a HookExecutionContext) -> ();
    PrefilterLlmHistory = "prefilter_llm_history", Thread, Transform,
        "After provider-message transformation, before dispatch.",
        fn(&'a ThreadState, &'a mut Vec<LlmMessage>, &'a HookExecutionContext) -> ();
    BeforeCreateMessage = "before_create_message", Thread, Transform,
        "Before a message insert.",
        fn(&'a ThreadState, &'a mut MessageRecord, &'a HookExecutionContext) -> ();
    BeforeUpdateMessage = "before_update_message", Thread, Transform,
        "Before a message update.",
        fn(&'a ThreadState, &'a str, &'a mut MessageUpdate, &'a HookExecutionContext) -> ();
    BeforeStoreToolResult = "before_store_tool_result", Thread, Transform,
        "Before a tool result is stored.",
        fn(&'a ThreadState, &'a ToolCallRecord, &'a mut HookToolResult, &'a HookExecutionContext) -> ();
    AfterCreateMessage = "after_create_message", Thread, Event,
        "After a message insert.",
        fn(&'a ThreadState, &'a MessageRecord, &'a HookExecutionContext) -> ();
    AfterUpdateMessage = "after_update_message", Thread, Event,
        "After a message update.",
        fn(&'a ThreadState, &'a HookMessage, &'a HookExecutionContext) -> ();
    AfterToolCallSuccess = "after_tool_call_success", Thread, Transform,
        "After a successful tool call; may replace the result.",
        fn(&'a ThreadState, &'a HookToolCall, &'a mut HookToolResult, &'a HookExecutionContext) -> ();
    AfterToolCallFailure = "after_tool_call_failure", Thread, Transform,
        "After a failed tool call; may replace the result.",
        fn(&'a ThreadState, &'a HookToolCall, &'a mut HookToolResult, &'a HookExecutionContext) -> ();
    ToolCallStarted = "tool_call_started", Thread, Event,
        "When a tool call starts to stream, before the tool runs.",
        fn(&'a ThreadState, &'a HookToolCall, Option<&'a str>, &'a HookExecutionContext) -> ();
    BeforeToolCall = "before_tool_call", Thread, Transform,
        "After a tool call has streamed and passed `authorize_tools`, before the tool runs: decides whether it runs (beyond the specification). The arguments may be rewritten in place; the answer decides whether the call runs.",
        fn(&'a ThreadState, &'a HookToolCall, &'a mut serde_json::Value, &'a HookExecutionContext) -> ToolDecision;
    ToolCallDone = "tool_call_done", Thread, Event,
        "After a tool call executed, success or failure.",
        fn(&'a ThreadState, &'a HookToolCall, &'a HookToolResult, &'a HookExecutionContext) -> ();
    UserClientAttached = "user_client_attached", User, Event,
        "A client connects to the user event stream.",
        fn(&'a UserState) -> ();
    UserClientDetached = "user_client_detached", User, Event,
        "A client disconnects from the user event stream.",
        fn(&'a UserState) -> ();
    UserValueChanged = "user_value_changed", User, Event,
        "A user value changes.",
        fn(&'a UserState) -> ();
}

/// What a kind's chain answers besides the value it transforms: nothing, or (for
/// `before_tool_call`) a decision.
trait KindAnswer {
    const NOTHING: bool;
}

impl KindAnswer for () {
    const NOTHING: bool = true;
}

impl KindAnswer for ToolDecision {
    const NOTHING: bool = false;
}

/// A hook's adapter in its form: a sync hook's is called and answers at once; an async hook's
/// answers the future to await.
#[derive(Clone, Copy)]
pub enum Adapter<S, A> {
    /// A sync hook's adapter.
    Sync(S),
    /// An async hook's adapter.
    Async(A),
}

impl<S, A> Adapter<S, A> {
    /// Whether it is an async hook's.
    pub const fn is_async(&self) -> bool {
        matches!(self, Adapter::Async(_))
    }
}

impl std::fmt::Debug for HookHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let form = if self.is_async() { "Async" } else { "Sync" };
        write!(f, "HookHandler::{}({form}(..))", self.kind().name())
    }
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

// Defined here, beside the kind table, so that the types do not import the kinds.
impl UserEvent {
    /// The user-scope hook kind that runs on the event.
    ///
    /// ```
    /// use hooks_runtime::definition::HookKind;
    /// use hooks_runtime::types::UserEvent;
    ///
    /// let event = UserEvent::ClientAttached { client_id: "tab_1".into() };
    /// assert_eq!(event.kind(), HookKind::UserClientAttached);
    /// ```
    pub const fn kind(&self) -> HookKind {
        match self {
            UserEvent::ClientAttached { .. } => HookKind::UserClientAttached,
            UserEvent::ClientDetached { .. } => HookKind::UserClientDetached,
            UserEvent::ValueChanged { .. } => HookKind::UserValueChanged,
        }
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

    #[test]
    fn d12_transform_kinds_but_before_tool_call_transform_in_place() {
        for &kind in HookKind::ALL {
            let expected = kind.role() == HookRole::Transform && kind != HookKind::BeforeToolCall;
            assert_eq!(kind.transforms_in_place(), expected, "{kind}");
        }
        assert_eq!(
            HookKind::UserValueChanged.adapter_signature().split_whitespace().collect::<String>(),
            "fn(&'aUserState)->()"
        );
    }
}
