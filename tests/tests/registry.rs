//! The registry of linked hooks, seen from a test binary that defines one hook of every kind:
//! each is found with its kind and where it was written. Only hooks linked into this binary are
//! there (the hooks of `tests`' dependencies only when this binary uses them).

use hooks_runtime::__private::{self, HookHandler};
use hooks_runtime::definition::{HookDef, HookLocation, HookScope};
use hooks_runtime::prelude::*;
use hooks_runtime::types::PackageSignature;

/// The line of `greet_thread`'s `#[hook]` attribute, just below.
const GREET_THREAD_LINE: u32 = line!() + 1;
#[hook(after_thread_created, id = "greet_thread")]
fn greet_thread(_state: &ThreadState) {}

#[hook(after_subagent_created, id = "note_child", timeout_ms = 250)]
async fn note_child(_state: &ThreadState, _child: &ThreadState, _ctx: &HookExecutionContext) {}

#[hook(after_system_message, id = "append_date")]
fn append_date(_state: &ThreadState, system: &str) -> String {
    format!("{system}\nToday is Monday.")
}

#[hook(filter_messages, id = "limit_to_20_messages")]
async fn limit(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    let skip = messages.len().saturating_sub(20);
    messages.into_iter().skip(skip).collect()
}

#[hook(filter_messages, id = "remove_failed_tool_messages")]
fn remove_failed(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    messages.into_iter().filter(|m| m.extra_str("tool_status") != Some("error")).collect()
}

#[hook(prefilter_llm_history, id = "drop_system")]
fn drop_system(_state: &ThreadState, messages: Vec<LlmMessage>) -> Result<Vec<LlmMessage>, HookError> {
    Ok(messages)
}

#[hook(before_create_message, id = "add_execution_metadata")]
fn add_metadata(_state: &ThreadState, message: MessageRecord) -> MessageRecord {
    message
}

#[hook(before_update_message, id = "stamp_update")]
fn stamp_update(_state: &ThreadState, _message_id: &str, update: MessageUpdate) -> MessageUpdate {
    update
}

#[hook(after_create_message, id = "audit_created")]
fn audit_created(_state: &ThreadState, _message: &MessageRecord) {}

#[hook(after_update_message, id = "audit_updated")]
fn audit_updated(_state: &ThreadState, _message: &HookMessage) {}

/// Tool hooks in a module of their own, so the registry's module paths can be checked.
mod tool_hooks {
    use hooks_runtime::prelude::*;

    #[hook(before_store_tool_result, id = "redact_emails")]
    pub(crate) fn redact(_state: &ThreadState, _call: &ToolCallRecord, result: HookToolResult) -> HookToolResult {
        result
    }

    #[hook(after_tool_call_success, id = "keep_success")]
    fn keep_success(_state: &ThreadState, _call: &HookToolCall, _result: &HookToolResult) -> Option<HookToolResult> {
        None
    }

    #[hook(after_tool_call_failure, id = "explain_failure", timeout_ms = 30000)]
    async fn explain_failure(_state: &ThreadState, _call: &HookToolCall, result: &HookToolResult) -> HookToolResult {
        result.clone()
    }

    #[hook(tool_call_started, id = "show_progress")]
    fn show_progress(_state: &ThreadState, _call: &HookToolCall, _progress: Option<&str>) {}

    #[hook(tool_call_done, id = "log_tool_done")]
    fn log_tool_done(_state: &ThreadState, _call: &HookToolCall, _result: &HookToolResult) {}

    #[hook(before_tool_call, id = "no_force_push", on_failure = deny)]
    fn no_force_push(_state: &ThreadState, _call: &HookToolCall, _arguments: &mut serde_json::Value) -> ToolDecision {
        ToolDecision::allow()
    }
}

mod user_hooks {
    use hooks_runtime::prelude::*;

    #[hook(user_client_attached, id = "welcome_client")]
    fn welcome(_user: &UserState) {}

    #[hook(user_client_detached, id = "farewell_client")]
    async fn farewell(_user: &UserState) {}

    #[hook(user_value_changed, id = "sync_values")]
    fn sync_values(_user: &UserState) -> Result<(), HookError> {
        Ok(())
    }
}

/// Every hook this file defines: id, kind, module path, function.
const DEFINED: [(&str, HookKind, &str, &str); 19] = [
    ("greet_thread", HookKind::AfterThreadCreated, "registry", "greet_thread"),
    ("note_child", HookKind::AfterSubagentCreated, "registry", "note_child"),
    ("append_date", HookKind::AfterSystemMessage, "registry", "append_date"),
    ("limit_to_20_messages", HookKind::FilterMessages, "registry", "limit"),
    ("remove_failed_tool_messages", HookKind::FilterMessages, "registry", "remove_failed"),
    ("drop_system", HookKind::PrefilterLlmHistory, "registry", "drop_system"),
    ("add_execution_metadata", HookKind::BeforeCreateMessage, "registry", "add_metadata"),
    ("stamp_update", HookKind::BeforeUpdateMessage, "registry", "stamp_update"),
    ("audit_created", HookKind::AfterCreateMessage, "registry", "audit_created"),
    ("audit_updated", HookKind::AfterUpdateMessage, "registry", "audit_updated"),
    ("redact_emails", HookKind::BeforeStoreToolResult, "registry::tool_hooks", "redact"),
    ("keep_success", HookKind::AfterToolCallSuccess, "registry::tool_hooks", "keep_success"),
    ("explain_failure", HookKind::AfterToolCallFailure, "registry::tool_hooks", "explain_failure"),
    ("show_progress", HookKind::ToolCallStarted, "registry::tool_hooks", "show_progress"),
    ("log_tool_done", HookKind::ToolCallDone, "registry::tool_hooks", "log_tool_done"),
    ("no_force_push", HookKind::BeforeToolCall, "registry::tool_hooks", "no_force_push"),
    ("welcome_client", HookKind::UserClientAttached, "registry::user_hooks", "welcome"),
    ("farewell_client", HookKind::UserClientDetached, "registry::user_hooks", "farewell"),
    ("sync_values", HookKind::UserValueChanged, "registry::user_hooks", "sync_values"),
];

/// Whether `def` was written in this file. Hooks of other crates are linked only when this
/// binary uses something of theirs; the checks below do not depend on it.
fn defined_here(def: &HookDef) -> bool {
    def.location.package.name == "tests" && def.location.file == file!()
}

#[test]
fn d1_registry_finds_a_hook_of_every_kind() {
    let registry = Registry::linked();
    for &kind in HookKind::ALL {
        assert!(registry.of_kind(kind).any(defined_here), "no linked `{kind}` hook of this binary");
    }
    for (id, kind, _, _) in DEFINED {
        let def = registry.get(id).unwrap_or_else(|| panic!("`{id}` is not in the registry"));
        assert_eq!(def.id, id);
        assert_eq!(def.kind(), kind, "kind of `{id}`");
        assert_eq!(__private::handler(def).kind(), kind);
        assert_eq!(kind.scope() == HookScope::User, matches!(id, "welcome_client" | "farewell_client" | "sync_values"));
    }
}

#[test]
fn registry_holds_every_hook_of_this_file_sorted_by_id() {
    let registry = Registry::linked();
    let all: Vec<&str> = registry.hooks().iter().map(|def| def.id).collect();
    let linked: Vec<&str> = registry.hooks().iter().filter(|def| defined_here(def)).map(|def| def.id).collect();
    let sorted = {
        let mut ids = all.clone();
        ids.sort_unstable();
        ids
    };
    assert_eq!(all, sorted, "hooks() is sorted by id");
    let mut expected: Vec<&str> = DEFINED.iter().map(|(id, ..)| *id).collect();
    expected.sort_unstable();
    assert_eq!(linked, expected);
}

#[test]
fn d3_registry_records_where_each_hook_is_defined() {
    let registry = Registry::linked();
    for (id, _, module_path, function) in DEFINED {
        let def = registry.get(id).unwrap();
        let HookLocation { package, module_path: module, file, line, function: func, .. } = &def.location;
        assert_eq!(package, &PackageSignature::new_static("tests", env!("CARGO_PKG_VERSION")), "package of `{id}`");
        assert_eq!(*module, module_path, "module of `{id}`");
        assert_eq!(*file, file!(), "file of `{id}`");
        assert!(*line > GREET_THREAD_LINE - 1 && *line < line!(), "line of `{id}`: {line}");
        assert_eq!(*func, function, "function of `{id}`");
    }
    let greet = registry.get("greet_thread").unwrap();
    assert_eq!(greet.location.line, GREET_THREAD_LINE, "the line of the `#[hook]` attribute");
    assert_eq!(
        greet.location.to_string(),
        format!("registry::greet_thread ({}:{GREET_THREAD_LINE})", file!()),
        "Display names module, function, file and line"
    );
    // The registry holds the definition the companion item carries (a const: compared by
    // value, since each use of a const may be its own copy).
    let linked = registry.get("redact_emails").unwrap();
    let companion = <tool_hooks::redact_emails as Hook>::DEF;
    assert_eq!((linked.id, &linked.location, linked.kind()), (companion.id, &companion.location, companion.kind()));
}

#[test]
fn registry_records_asyncness_and_timeouts() {
    let registry = Registry::linked();
    let note_child = registry.get("note_child").unwrap();
    assert!(note_child.is_async);
    assert_eq!(note_child.timeout_ms, Some(250));
    let explain = registry.get("explain_failure").unwrap();
    assert!(explain.is_async);
    assert_eq!(explain.timeout_ms, Some(30000));
    let greet = registry.get("greet_thread").unwrap();
    assert!(!greet.is_async);
    assert_eq!(greet.timeout_ms, None);
}

#[test]
fn registry_of_kind_lists_every_hook_of_that_kind() {
    let registry = Registry::linked();
    let filters: Vec<&str> =
        registry.of_kind(HookKind::FilterMessages).filter(|def| defined_here(def)).map(|def| def.id).collect();
    assert_eq!(filters, ["limit_to_20_messages", "remove_failed_tool_messages"]);
    assert!(
        registry
            .of_kind(HookKind::FilterMessages)
            .all(|def| matches!(__private::handler(def), HookHandler::FilterMessages(_)))
    );
    for &kind in HookKind::ALL {
        let expected = DEFINED.iter().filter(|(_, k, ..)| *k == kind).count();
        assert_eq!(registry.of_kind(kind).filter(|def| defined_here(def)).count(), expected, "hooks of kind `{kind}`");
    }
    let user: Vec<&str> = HookKind::ALL
        .iter()
        .copied()
        .filter(|k| !k.is_thread())
        .flat_map(|k| registry.of_kind(k))
        .filter(|d| defined_here(d))
        .map(|d| d.id)
        .collect();
    assert_eq!(user, ["welcome_client", "farewell_client", "sync_values"]);
    assert!(registry.get("no_such_hook").is_none());
}

#[test]
fn d3_registry_verify_passes_for_unique_ids() {
    Registry::linked().verify().expect("every id of this binary is unique");
}

/// A definition with `audit_created`'s id from another package, as a second crate linked into
/// the same binary would register it.
static AUDIT_CREATED_ELSEWHERE: HookDef = __private::hook_def(
    "audit_created",
    __private::handler(<audit_created as Hook>::DEF),
    0,
    0,
    ("audit_pkg", "2.0.0"),
    "audit_pkg::hooks",
    "audit_pkg/src/hooks.rs",
    12,
    "audit",
);

#[test]
fn d3_registry_verify_fails_closed_naming_both_locations() {
    let defs = Registry::linked().hooks().to_vec();
    let registry = Registry::from_defs(defs.into_iter().chain([&AUDIT_CREATED_ELSEWHERE]));
    let error = registry.verify().expect_err("`audit_created` is defined twice");
    assert_eq!(error.duplicates.len(), 1);
    let duplicate = &error.duplicates[0];
    let packages = [&*duplicate.first.location.package.name, &*duplicate.second.location.package.name];
    assert!(packages.contains(&"tests") && packages.contains(&"audit_pkg"), "{packages:?}");
    let text = error.to_string();
    assert!(text.contains("hook id `audit_created` is defined twice"), "{text}");
    assert!(text.contains("crate `tests`") && text.contains("registry::audit_created"), "{text}");
    assert!(
        text.contains("crate `audit_pkg`") && text.contains("audit_pkg::hooks::audit (audit_pkg/src/hooks.rs:12)"),
        "{text}"
    );
}
