//! The macro crate's table of hook kinds: names, scopes and the Rust signature of each.
//!
//! A proc-macro crate cannot use the types of the crates its output names, so this one carries
//! its own table, as strings. Two checks keep it the same as hooks-core's: the unit test
//! `d1_table_matches_hooks_core` compares every kind's name, variant, scope, in-place form and
//! adapter signature with hooks-core's table, and the all-kinds pass case
//! (`tests/crates/ui_cases/tests/ui/pass/d1_every_kind.rs`) builds a hook of every kind and form
//! through it.

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
    /// For a kind that transforms a value, that value's parameter.
    pub(crate) value: Option<ValueParam>,
}

/// The parameter of a transform kind that carries the value its chain transforms. The runtime
/// always hands it over as `&mut ty`; the user may write that in-place form or the by-value form
/// of the kind's `params`.
#[derive(Debug)]
pub(crate) struct ValueParam {
    /// Its index in `params`.
    pub(crate) index: usize,
    /// The value's type, as the in-place form takes it behind `&mut`.
    pub(crate) ty: &'static str,
    /// How the by-value form receives it and gives it back.
    pub(crate) by_value: ByValue,
}

/// How a by-value transform hook receives the chain's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ByValue {
    /// Moved in (`messages: Vec<HookMessage>`); the hook returns the new value.
    Moved,
    /// Borrowed (`system: &str`); the hook returns `Some(replacement)` or `None`.
    Replaced,
}

/// Which of a transform kind's two forms a hook is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// Takes and returns the value (or an optional replacement); also every event kind.
    ByValue,
    /// Takes `&mut` value and returns `()` or `Result<(), HookError>`.
    InPlace,
}

/// The context parameter every thread hook may take last.
pub(crate) const CONTEXT: Param = Param { name: "ctx", ty: "&HookExecutionContext" };

macro_rules! kinds {
    (@value) => { None };
    (@value $index:literal $by_value:ident $ty:literal) => {
        Some(ValueParam { index: $index, ty: $ty, by_value: ByValue::$by_value })
    };
    ($($name:literal $variant:literal $scope:ident [$($pname:literal : $pty:literal),*] -> $out:literal [$($extra:literal => $conv:literal),*] {$($value:tt)*};)*) => {
        pub(crate) const KINDS: &[KindSpec] = &[$(KindSpec {
            name: $name,
            variant: $variant,
            scope: Scope::$scope,
            params: &[$(Param { name: $pname, ty: $pty }),*],
            output: $out,
            extra_returns: &[$(($extra, $conv)),*],
            value: kinds!(@value $($value)*),
        }),*];
    };
}

kinds! {
    "after_thread_created" "AfterThreadCreated" Thread ["state": "&ThreadState"] -> "()" [] {};
    "after_subagent_created" "AfterSubagentCreated" Thread ["state": "&ThreadState", "child": "&ThreadState"] -> "()" [] {};
    "after_system_message" "AfterSystemMessage" Thread ["state": "&ThreadState", "system": "&str"] -> "Option<String>"
        ["String" => "Some(value)"] {1 Replaced "String"};
    "filter_messages" "FilterMessages" Thread ["state": "&ThreadState", "messages": "Vec<HookMessage>"] -> "Vec<HookMessage>" []
        {1 Moved "Vec<HookMessage>"};
    "prefilter_llm_history" "PrefilterLlmHistory" Thread ["state": "&ThreadState", "messages": "Vec<LlmMessage>"] -> "Vec<LlmMessage>" []
        {1 Moved "Vec<LlmMessage>"};
    "before_create_message" "BeforeCreateMessage" Thread ["state": "&ThreadState", "message": "MessageRecord"] -> "MessageRecord" []
        {1 Moved "MessageRecord"};
    "before_update_message" "BeforeUpdateMessage" Thread ["state": "&ThreadState", "message_id": "&str", "update": "MessageUpdate"] -> "MessageUpdate" []
        {2 Moved "MessageUpdate"};
    "before_store_tool_result" "BeforeStoreToolResult" Thread ["state": "&ThreadState", "call": "&ToolCallRecord", "result": "HookToolResult"] -> "HookToolResult" []
        {2 Moved "HookToolResult"};
    "after_create_message" "AfterCreateMessage" Thread ["state": "&ThreadState", "message": "&MessageRecord"] -> "()" [] {};
    "after_update_message" "AfterUpdateMessage" Thread ["state": "&ThreadState", "message": "&HookMessage"] -> "()" [] {};
    "after_tool_call_success" "AfterToolCallSuccess" Thread ["state": "&ThreadState", "call": "&HookToolCall", "result": "&HookToolResult"] -> "Option<HookToolResult>"
        ["HookToolResult" => "Some(value)"] {2 Replaced "HookToolResult"};
    "after_tool_call_failure" "AfterToolCallFailure" Thread ["state": "&ThreadState", "call": "&HookToolCall", "result": "&HookToolResult"] -> "Option<HookToolResult>"
        ["HookToolResult" => "Some(value)"] {2 Replaced "HookToolResult"};
    "tool_call_started" "ToolCallStarted" Thread ["state": "&ThreadState", "call": "&HookToolCall", "progress": "Option<&str>"] -> "()" [] {};
    "before_tool_call" "BeforeToolCall" Thread ["state": "&ThreadState", "call": "&HookToolCall", "arguments": "&mut serde_json::Value"] -> "ToolDecision" [] {};
    "tool_call_done" "ToolCallDone" Thread ["state": "&ThreadState", "call": "&HookToolCall", "result": "&HookToolResult"] -> "()" [] {};
    "user_client_attached" "UserClientAttached" User ["user": "&UserState"] -> "()" [] {};
    "user_client_detached" "UserClientDetached" User ["user": "&UserState"] -> "()" [] {};
    "user_value_changed" "UserValueChanged" User ["user": "&UserState"] -> "()" [] {};
}

impl KindSpec {
    /// The kind named `name`.
    pub(crate) fn find(name: &str) -> Option<&'static KindSpec> {
        KINDS.iter().find(|kind| kind.name == name)
    }

    /// The known kind closest to a misspelt `name`, if one is close enough to suggest.
    pub(crate) fn nearest(name: &str) -> Option<&'static KindSpec> {
        crate::suggest::did_you_mean(name, KINDS.iter().map(|kind| kind.name)).and_then(KindSpec::find)
    }

    /// Whether the kind decides whether a tool call runs, and so needs `on_failure` (G1).
    pub(crate) fn governs(&self) -> bool {
        self.name == "before_tool_call"
    }

    /// Whether the hook may take a trailing `&HookExecutionContext`.
    pub(crate) fn takes_context(&self) -> bool {
        self.scope == Scope::Thread
    }

    /// The parameters including the context, when the kind has one.
    pub(crate) fn all_params(&self) -> impl Iterator<Item = &'static Param> {
        self.params.iter().chain(self.takes_context().then_some(&CONTEXT))
    }

    /// The expected signature, as the error messages print it (the by-value form of a
    /// transform kind).
    pub(crate) fn signature(&self) -> String {
        let params: Vec<String> = self.all_params().map(|p| format!("{}: {}", p.name, p.ty)).collect();
        let ret = if self.output == "()" { String::new() } else { format!(" -> {}", self.output) };
        format!("fn({}){ret}", params.join(", "))
    }

    /// The in-place signature of a transform kind: the value behind `&mut`, returning nothing.
    pub(crate) fn in_place_signature(&self) -> Option<String> {
        let value = self.value.as_ref()?;
        let params: Vec<String> = self
            .all_params()
            .enumerate()
            .map(|(index, p)| {
                if index == value.index {
                    format!("{}: &mut {}", p.name, value.ty)
                } else {
                    format!("{}: {}", p.name, p.ty)
                }
            })
            .collect();
        Some(format!("fn({})", params.join(", ")))
    }

    /// What the arity error's `expected signature:` line says: the signature, or for a
    /// transform kind both forms, in place first.
    pub(crate) fn expected_forms(&self) -> String {
        match self.in_place_signature() {
            None => format!("{}, sync or `async`, returning {}", self.signature(), self.accepted_returns_phrase()),
            Some(in_place) => format!(
                "in place, {in_place}, returning `()` or `Result<(), HookError>`, or by value, {}, returning {}; \
                 sync or `async`",
                self.signature(),
                self.accepted_returns_phrase()
            ),
        }
    }

    /// Both accepted forms, as the error notes print them.
    pub(crate) fn forms_phrase(&self) -> String {
        let context = if self.takes_context() { "; the context parameter may be left out" } else { "" };
        match self.in_place_signature() {
            None => format!(
                "{} `{}` hook is `{}`, sync or `async`{context}; it returns {}",
                self.article(),
                self.name,
                self.signature(),
                self.accepted_returns_phrase()
            ),
            Some(in_place) => format!(
                "{} `{}` hook is either in place, `{in_place}` returning `()` or `Result<(), HookError>`, \
                 or by value, `{}` returning {}; sync or `async`{context}",
                self.article(),
                self.name,
                self.signature(),
                self.accepted_returns_phrase()
            ),
        }
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
    fn d1_table_has_fifteen_thread_and_three_user_kinds() {
        assert_eq!(KINDS.len(), 18);
        assert_eq!(KINDS.iter().filter(|k| k.scope == Scope::User).count(), 3);
        assert!(
            KINDS.iter().all(|k| k.params[0].ty == if k.scope == Scope::User { "&UserState" } else { "&ThreadState" })
        );
    }

    /// The adapter signature this table implies for `kind`: the value behind `&mut`, the
    /// context last, the chain's answer; as hooks-core's table writes it, without lifetimes.
    fn adapter_signature(kind: &KindSpec) -> String {
        let params: Vec<String> = kind
            .all_params()
            .enumerate()
            .map(|(index, p)| match &kind.value {
                Some(value) if value.index == index => format!("&mut {}", value.ty),
                _ => p.ty.to_owned(),
            })
            .collect();
        let output = if kind.value.is_some() { "()" } else { kind.output };
        format!("fn({}) -> {output}", params.join(", "))
    }

    /// hooks-core holds the kind table; this crate's copy must agree with it on every kind.
    #[test]
    fn d1_table_matches_hooks_core() {
        use hooks_core::{HookKind, HookScope};

        let core: Vec<&str> = HookKind::ALL.iter().map(|kind| kind.name()).collect();
        let here: Vec<&str> = KINDS.iter().map(|kind| kind.name).collect();
        assert_eq!(here, core, "the kinds, in the table's order");
        let plain = |text: &str| text.replace("'a", "").split_whitespace().collect::<String>();
        for (spec, &kind) in KINDS.iter().zip(HookKind::ALL) {
            assert_eq!(spec.variant, format!("{kind:?}"), "{kind}: variant");
            let scope = if spec.scope == Scope::Thread { HookScope::Thread } else { HookScope::User };
            assert_eq!(scope, kind.scope(), "{kind}: scope");
            assert_eq!(
                spec.value.is_some(),
                hooks_core::__private::transforms_in_place(kind),
                "{kind}: an in-place form exactly when the chain transforms in place"
            );
            assert_eq!(
                plain(&adapter_signature(spec)),
                plain(hooks_core::__private::adapter_signature(kind)),
                "{kind}: adapter signature"
            );
        }
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

    #[test]
    fn d12_every_transform_kind_has_an_in_place_form() {
        let transforms: Vec<&str> = KINDS.iter().filter(|k| k.value.is_some()).map(|k| k.name).collect();
        assert_eq!(
            transforms,
            [
                "after_system_message",
                "filter_messages",
                "prefilter_llm_history",
                "before_create_message",
                "before_update_message",
                "before_store_tool_result",
                "after_tool_call_success",
                "after_tool_call_failure",
            ]
        );
        assert_eq!(
            KindSpec::find("before_update_message").unwrap().in_place_signature().unwrap(),
            "fn(state: &ThreadState, message_id: &str, update: &mut MessageUpdate, ctx: &HookExecutionContext)"
        );
        for kind in KINDS.iter().filter(|k| k.value.is_some()) {
            let value = kind.value.as_ref().unwrap();
            let by_value = kind.params[value.index].ty;
            match value.by_value {
                ByValue::Moved => assert_eq!(by_value, value.ty, "{}", kind.name),
                ByValue::Replaced => assert!(by_value.starts_with('&'), "{}", kind.name),
            }
        }
    }
}
