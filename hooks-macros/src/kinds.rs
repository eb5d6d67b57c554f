//! The macro crate's table of hook kinds: names, scopes and the Rust signature of each.
//!
//! This crate depends on no crate of the project, so it carries its own table; the `tests`
//! crate's `kinds_agree_with_core` test and the all-kinds pass case keep it in step with
//! `hooks_core::HookKind` and `hooks_core::HookHandler`.

/// Whether a kind runs on a thread or in the user scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    Thread,
    User,
}

/// One parameter of a kind's signature.
#[derive(Debug)]
pub(crate) struct Param {
    pub(crate) name: &'static str,
    /// The type as the user writes it; `'a` is added to references when the traits are built.
    pub(crate) ty: &'static str,
}

/// One hook kind.
#[derive(Debug)]
pub(crate) struct KindSpec {
    pub(crate) name: &'static str,
    /// The `HookHandler` variant and the prefix of the signature traits.
    pub(crate) variant: &'static str,
    pub(crate) scope: Scope,
    /// Every parameter before the optional context, the state first.
    pub(crate) params: &'static [Param],
    /// What the chain carries on: `()` for event kinds.
    pub(crate) output: &'static str,
    /// Further return types accepted and how each becomes `output` (an expression over `value`).
    pub(crate) extra_returns: &'static [(&'static str, &'static str)],
}

/// The context parameter every thread hook may take last.
pub(crate) const CONTEXT: Param = Param { name: "ctx", ty: "&HookExecutionContext" };

macro_rules! kinds {
    ($($name:literal $variant:literal $scope:ident [$($pname:literal : $pty:literal),*] -> $out:literal [$($extra:literal => $conv:literal),*];)*) => {
        pub(crate) const KINDS: &[KindSpec] = &[$(KindSpec {
            name: $name,
            variant: $variant,
            scope: Scope::$scope,
            params: &[$(Param { name: $pname, ty: $pty }),*],
            output: $out,
            extra_returns: &[$(($extra, $conv)),*],
        }),*];
    };
}

kinds! {
    "after_thread_created" "AfterThreadCreated" Thread ["state": "&ThreadState"] -> "()" [];
    "after_subagent_created" "AfterSubagentCreated" Thread ["state": "&ThreadState", "child": "&ThreadState"] -> "()" [];
    "after_system_message" "AfterSystemMessage" Thread ["state": "&ThreadState", "system": "&str"] -> "Option<String>"
        ["String" => "Some(value)"];
    "filter_messages" "FilterMessages" Thread ["state": "&ThreadState", "messages": "Vec<HookMessage>"] -> "Vec<HookMessage>" [];
    "prefilter_llm_history" "PrefilterLlmHistory" Thread ["state": "&ThreadState", "messages": "Vec<LlmMessage>"] -> "Vec<LlmMessage>" [];
    "before_create_message" "BeforeCreateMessage" Thread ["state": "&ThreadState", "message": "MessageRecord"] -> "MessageRecord" [];
    "before_update_message" "BeforeUpdateMessage" Thread ["state": "&ThreadState", "message_id": "&str", "update": "MessageUpdate"] -> "MessageUpdate" [];
    "before_store_tool_result" "BeforeStoreToolResult" Thread ["state": "&ThreadState", "call": "&ToolCallRecord", "result": "HookToolResult"] -> "HookToolResult" [];
    "after_create_message" "AfterCreateMessage" Thread ["state": "&ThreadState", "message": "&MessageRecord"] -> "()" [];
    "after_update_message" "AfterUpdateMessage" Thread ["state": "&ThreadState", "message": "&HookMessage"] -> "()" [];
    "after_tool_call_success" "AfterToolCallSuccess" Thread ["state": "&ThreadState", "call": "&HookToolCall", "result": "&HookToolResult"] -> "Option<HookToolResult>"
        ["HookToolResult" => "Some(value)"];
    "after_tool_call_failure" "AfterToolCallFailure" Thread ["state": "&ThreadState", "call": "&HookToolCall", "result": "&HookToolResult"] -> "Option<HookToolResult>"
        ["HookToolResult" => "Some(value)"];
    "tool_call_started" "ToolCallStarted" Thread ["state": "&ThreadState", "call": "&HookToolCall", "progress": "Option<&str>"] -> "()" [];
    "tool_call_done" "ToolCallDone" Thread ["state": "&ThreadState", "call": "&HookToolCall", "result": "&HookToolResult"] -> "()" [];
    "user_client_attached" "UserClientAttached" User ["user": "&UserState"] -> "()" [];
    "user_client_detached" "UserClientDetached" User ["user": "&UserState"] -> "()" [];
    "user_value_changed" "UserValueChanged" User ["user": "&UserState"] -> "()" [];
}

impl KindSpec {
    /// The kind named `name`.
    pub(crate) fn find(name: &str) -> Option<&'static KindSpec> {
        KINDS.iter().find(|kind| kind.name == name)
    }

    /// The known kind closest to a misspelt `name`, if one is close enough to suggest.
    pub(crate) fn nearest(name: &str) -> Option<&'static KindSpec> {
        KINDS
            .iter()
            .map(|kind| (strsim::jaro_winkler(name, kind.name), kind))
            .filter(|(score, _)| *score > 0.8)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, kind)| kind)
    }

    /// Whether the hook may take a trailing `&HookExecutionContext`.
    pub(crate) fn takes_context(&self) -> bool {
        self.scope == Scope::Thread
    }

    /// The parameters including the context, when the kind has one.
    pub(crate) fn all_params(&self) -> impl Iterator<Item = &'static Param> {
        self.params.iter().chain(self.takes_context().then_some(&CONTEXT))
    }

    /// The expected signature, as the error messages print it.
    pub(crate) fn signature(&self) -> String {
        let params: Vec<String> = self.all_params().map(|p| format!("{}: {}", p.name, p.ty)).collect();
        let ret = if self.output == "()" { String::new() } else { format!(" -> {}", self.output) };
        format!("fn({}){ret}", params.join(", "))
    }

    /// `a` or `an`, for the kind's name.
    pub(crate) fn article(&self) -> &'static str {
        // By sound: `an after_...`, but `a user_...`.
        if self.name.starts_with(['a', 'e', 'i', 'o']) { "an" } else { "a" }
    }

    /// The accepted return types as a phrase: "`A` or `B`", "one of `A`, `B`, `C` or `D`".
    pub(crate) fn accepted_returns_phrase(&self) -> String {
        let mut types = vec![format!("`{}`", self.output), format!("`Result<{}, HookError>`", self.output)];
        for (extra, _) in self.extra_returns {
            types.push(format!("`{extra}`"));
            types.push(format!("`Result<{extra}, HookError>`"));
        }
        let last = types.pop().expect("at least two types");
        if types.len() == 1 {
            format!("{} or {last}", types[0])
        } else {
            format!("one of {} or {last}", types.join(", "))
        }
    }

    /// The list of every kind name, for error messages.
    pub(crate) fn all_names() -> String {
        KINDS.iter().map(|k| format!("`{}`", k.name)).collect::<Vec<_>>().join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn d1_table_has_fourteen_thread_and_three_user_kinds() {
        assert_eq!(KINDS.len(), 17);
        assert_eq!(KINDS.iter().filter(|k| k.scope == Scope::User).count(), 3);
        assert!(
            KINDS.iter().all(|k| k.params[0].ty == if k.scope == Scope::User { "&UserState" } else { "&ThreadState" })
        );
    }

    #[test]
    fn d1_nearest_kind_is_suggested() {
        assert_eq!(KindSpec::nearest("filter_message").map(|k| k.name), Some("filter_messages"));
        assert_eq!(KindSpec::nearest("before_create").map(|k| k.name), Some("before_create_message"));
        assert!(KindSpec::nearest("zzz").is_none());
    }

    #[test]
    fn d5_signature_text_names_every_parameter() {
        let kind = KindSpec::find("tool_call_started").unwrap();
        assert_eq!(
            kind.signature(),
            "fn(state: &ThreadState, call: &HookToolCall, progress: Option<&str>, ctx: &HookExecutionContext)"
        );
    }
}
