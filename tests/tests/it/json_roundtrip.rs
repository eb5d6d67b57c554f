//! JSON round trips of the specification's types (hooks-spec.md §2.2, §2.4, §6, §8.6, and the
//! guide's `tool_status` / `status` rows): each JSON literal is written in the documents' own
//! shape, deserialized, checked field by field, serialized back and compared as a
//! `serde_json::Value`, so a renamed, dropped or added field fails the test.

use hooks_runtime::types::{
    Attachment, ExecutionState, HookExecutionContext, HookMessage, HookSource, HookToolCall, HookToolResult,
    LlmMessage, MessageRecord, MessageUpdate, PackageSignature, Role, Side, ToolCallRecord, ToolCallType, ToolStatus,
    UserEvent, UserState,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// Deserializes `json` as `T`, serializes it back and asserts the two JSON values are equal.
fn roundtrip<T: Serialize + DeserializeOwned>(json: Value) -> T {
    let typed: T = serde_json::from_value(json.clone())
        .unwrap_or_else(|error| panic!("{} does not read {json}: {error}", std::any::type_name::<T>()));
    let back = serde_json::to_value(&typed).unwrap();
    assert_eq!(back, json, "{} does not write back what it read", std::any::type_name::<T>());
    typed
}

// §6.1 HookMessage

#[test]
fn spec_6_1_hook_message_roundtrip_all_fields() {
    let message: HookMessage = roundtrip(json!({
        "id": "msg_2",
        "role": "assistant",
        "content": "Looking up the issue.",
        "name": "triage_bot",
        "tool_calls": "[{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"get_github_issue\",\"arguments\":\"{\\\"number\\\":12}\"}}]",
        "tool_call_id": "call_0",
        "created_at": 1_700_000_000_123_i64,
        "parent_id": "msg_1",
        "depth": 1,
        "silent": true
    }));
    assert_eq!(message.id, "msg_2");
    assert_eq!(message.role, Role::Assistant);
    assert_eq!(message.content.as_deref(), Some("Looking up the issue."));
    assert_eq!(message.name.as_deref(), Some("triage_bot"));
    // `tool_calls` is a JSON array encoded in a string, as the spec types it.
    let calls: Vec<HookToolCall> = serde_json::from_str(message.tool_calls.as_deref().unwrap()).unwrap();
    assert_eq!(calls, vec![HookToolCall::new("call_1", "get_github_issue", r#"{"number":12}"#)]);
    assert_eq!(message.tool_call_id.as_deref(), Some("call_0"));
    assert_eq!(message.created_at, 1_700_000_000_123);
    assert_eq!(message.parent_id.as_deref(), Some("msg_1"));
    assert_eq!(message.depth, Some(1));
    assert_eq!(message.silent, Some(true));
    assert!(message.is_silent());
    assert!(message.extra.is_empty());
}

#[test]
fn spec_6_1_hook_message_roundtrip_minimal() {
    let message: HookMessage =
        roundtrip(json!({"id": "msg_1", "role": "user", "content": "Is #12 a duplicate?", "created_at": 1}));
    assert_eq!(message.role, Role::User);
    assert_eq!(message.name, None);
    assert_eq!(message.tool_calls, None);
    assert_eq!(message.tool_call_id, None);
    assert_eq!(message.parent_id, None);
    assert_eq!(message.depth, None);
    assert_eq!(message.silent, None);
    assert!(!message.is_silent());
}

#[test]
fn spec_6_1_hook_message_every_role() {
    for role in ["system", "user", "assistant", "tool"] {
        let message: HookMessage = roundtrip(json!({"id": "m", "role": role, "content": "x", "created_at": 0}));
        assert_eq!(message.role.as_str(), role);
    }
    assert!(
        serde_json::from_value::<HookMessage>(json!({"id": "m", "role": "robot", "content": "x", "created_at": 0}))
            .is_err()
    );
}

#[test]
fn spec_6_1_hook_message_null_content() {
    // An assistant message that only calls tools has `content: null`; `null` must stay `null`,
    // not disappear, since the spec's field is required.
    let message: HookMessage = roundtrip(json!({
        "id": "msg_3",
        "role": "assistant",
        "content": null,
        "tool_calls": "[]",
        "created_at": 5
    }));
    assert_eq!(message.content, None);
    assert_eq!(serde_json::to_value(&message).unwrap()["content"], Value::Null);
}

#[test]
fn spec_6_1_hook_message_keeps_guide_extra_fields() {
    // The guide's filters read `row.tool_status === 'error'` and `row.status === 'completed'`.
    let message: HookMessage = roundtrip(json!({
        "id": "msg_4",
        "role": "tool",
        "content": "GitHub returned 404",
        "tool_call_id": "call_1",
        "created_at": 7,
        "tool_status": "error",
        "status": "completed",
        "metadata": "{\"flow_id\":\"flow_1\"}",
        "custom": {"nested": [1, 2, 3]}
    }));
    assert_eq!(message.extra_str("tool_status"), Some("error"));
    assert_eq!(message.extra_str("status"), Some("completed"));
    assert_eq!(message.extra["custom"], json!({"nested": [1, 2, 3]}));
    assert_eq!(message.extra.len(), 4);
}

// §6.2 HookToolCall and the before_store_tool_result record

#[test]
fn spec_6_2_hook_tool_call_roundtrip() {
    let call: HookToolCall = roundtrip(json!({
        "id": "call_1",
        "type": "function",
        "function": {"name": "search_github_issues", "arguments": "{\"query\":\"crash on start\"}"}
    }));
    assert_eq!(call.id, "call_1");
    assert_eq!(call.call_type, ToolCallType::Function);
    assert_eq!(call.name(), "search_github_issues");
    assert_eq!(call.function.arguments, r#"{"query":"crash on start"}"#);
    assert_eq!(call, HookToolCall::new("call_1", "search_github_issues", r#"{"query":"crash on start"}"#));
}

#[test]
fn spec_6_2_hook_tool_call_streaming_arguments_stay_text() {
    // While a call streams, `arguments` may be empty or incomplete JSON (tool_call_started).
    for arguments in ["", "{\"query\":\"cra"] {
        let call: HookToolCall = roundtrip(json!({
            "id": "call_2",
            "type": "function",
            "function": {"name": "search_github_issues", "arguments": arguments}
        }));
        assert_eq!(call.function.arguments, arguments);
    }
}

#[test]
fn spec_5_2_tool_call_record_roundtrip_with_extra_fields() {
    let record: ToolCallRecord = roundtrip(json!({
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_github_issue", "arguments": "{\"number\":7}"},
        "status": "completed",
        "started_at": 1_700_000_000_000_i64
    }));
    assert_eq!(record.name(), "get_github_issue");
    assert_eq!(record.call_type, ToolCallType::Function);
    assert_eq!(record.extra["status"], "completed");
    assert_eq!(record.extra["started_at"], 1_700_000_000_000_i64);

    let from_call = ToolCallRecord::from(HookToolCall::new("call_1", "get_github_issue", "{}"));
    assert_eq!(
        serde_json::to_value(&from_call).unwrap(),
        json!({"id": "call_1", "type": "function", "function": {"name": "get_github_issue", "arguments": "{}"}})
    );
}

// §6.3 HookToolResult

#[test]
fn spec_6_3_hook_tool_result_success_roundtrip() {
    let result: HookToolResult =
        roundtrip(json!({"status": "success", "result": "{\"number\":12,\"state\":\"open\"}"}));
    assert_eq!(result.status, ToolStatus::Success);
    assert!(result.is_success());
    assert_eq!(result.result.as_deref(), Some(r#"{"number":12,"state":"open"}"#));
    assert_eq!((result.error, result.stack, result.attachments), (None, None, None));
}

#[test]
fn spec_6_3_hook_tool_result_error_with_stack_roundtrip() {
    let result: HookToolResult = roundtrip(json!({
        "status": "error",
        "error": "GitHub returned 404",
        "stack": "Error: GitHub returned 404\n    at get_github_issue (tools/get_github_issue.ts:12:13)"
    }));
    assert_eq!(result.status, ToolStatus::Error);
    assert!(!result.is_success());
    assert_eq!(result.error.as_deref(), Some("GitHub returned 404"));
    assert!(result.stack.as_deref().unwrap().contains("get_github_issue"));
    assert_eq!(result.result, None);
}

#[test]
fn spec_6_3_hook_tool_result_attachments_of_both_kinds_survive() {
    let result: HookToolResult = roundtrip(json!({
        "status": "success",
        "result": "Rendered the chart and reused the logo.",
        "attachments": [
            {"name": "chart.png", "mime_type": "image/png", "data": "iVBORw0KGgo=", "width": 640},
            {"path": "/files/logo.svg", "name": "logo.svg", "mime_type": "image/svg+xml"},
            {"path": "/files/report.pdf"}
        ]
    }));
    let attachments = result.attachments.as_deref().unwrap();
    assert_eq!(attachments.len(), 3);
    match &attachments[0] {
        Attachment::New(file) => {
            assert_eq!(file.name, "chart.png");
            assert_eq!(file.mime_type, "image/png");
            assert_eq!(file.data, "iVBORw0KGgo=");
            assert_eq!(file.extra["width"], 640);
        }
        other => panic!("a new file with `data` read as {other:?}"),
    }
    match &attachments[1] {
        Attachment::Ref(file) => {
            assert_eq!(file.path, "/files/logo.svg");
            assert_eq!(file.name.as_deref(), Some("logo.svg"));
            assert_eq!(file.mime_type.as_deref(), Some("image/svg+xml"));
        }
        other => panic!("a reference with `path` read as {other:?}"),
    }
    match &attachments[2] {
        Attachment::Ref(file) => {
            assert_eq!(file.path, "/files/report.pdf");
            assert_eq!((file.name.as_deref(), file.mime_type.as_deref()), (None, None));
        }
        other => panic!("a bare reference read as {other:?}"),
    }

    // A hook that rewrites only the text (spec §8.7) keeps the attachments.
    let mut sanitized = result.clone();
    sanitized.result = Some("Rendered the chart.".into());
    let json = serde_json::to_value(&sanitized).unwrap();
    assert_eq!(json["attachments"], serde_json::to_value(&result.attachments).unwrap());
}

#[test]
fn spec_6_3_hook_tool_result_rejects_unknown_status() {
    assert!(serde_json::from_value::<HookToolResult>(json!({"status": "pending"})).is_err());
    assert_eq!(
        serde_json::to_value(HookToolResult::error("boom")).unwrap(),
        json!({"status": "error", "error": "boom"})
    );
}

// §6.4 LLMMessage

#[test]
fn spec_6_4_llm_message_roundtrip_with_tool_calls() {
    // `tool_calls` is `unknown`: whatever the provider sends, kept as JSON.
    let tool_calls = json!([{
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_github_issue", "arguments": "{\"number\":12}"},
        "provider_extra": {"index": 0, "cache": null}
    }]);
    let message: LlmMessage =
        roundtrip(json!({"role": "assistant", "content": null, "tool_calls": tool_calls, "name": "triage_bot"}));
    assert_eq!(message.role, "assistant");
    assert_eq!(message.content, None);
    assert_eq!(message.tool_calls, Some(tool_calls));
    assert_eq!(message.name.as_deref(), Some("triage_bot"));
    assert_eq!(message.tool_call_id, None);
}

#[test]
fn spec_6_4_llm_message_roundtrip_tool_answer() {
    let message: LlmMessage =
        roundtrip(json!({"role": "tool", "content": "{\"number\":12}", "tool_call_id": "call_1"}));
    assert_eq!(message.role, "tool");
    assert_eq!(message.tool_call_id.as_deref(), Some("call_1"));
    assert_eq!(message.tool_calls, None);
    // A role the spec does not list (providers have `developer`, `function`, ...) is kept as text.
    let developer: LlmMessage = roundtrip(json!({"role": "developer", "content": "Be brief."}));
    assert_eq!(developer, LlmMessage::new("developer", "Be brief."));
}

// §4.1 / §8.6 MessageRecord and §4.3 MessageUpdate

#[test]
fn spec_8_6_message_record_metadata_survives() {
    // §8.6 `add_execution_metadata` returns `{...message, metadata: JSON.stringify({...})}`.
    let record: MessageRecord = roundtrip(json!({
        "id": "",
        "role": "assistant",
        "content": "Issue #12 duplicates #7.",
        "created_at": 0,
        "metadata": "{\"flow_id\":\"flow_1\",\"step\":3,\"side\":\"a\"}"
    }));
    assert_eq!(record.role, Role::Assistant);
    let metadata: Value = serde_json::from_str(record.extra["metadata"].as_str().unwrap()).unwrap();
    assert_eq!(metadata, json!({"flow_id": "flow_1", "step": 3, "side": "a"}));

    // The metadata a hook adds in Rust reaches the stored message.
    let mut added = MessageRecord::new(Role::User, "hello");
    added.extra.insert("metadata".into(), json!({"flow_id": "flow_1", "step": 3, "side": "a"}));
    let stored = added.into_message();
    assert_eq!(stored.extra["metadata"]["step"], 3);
    assert_eq!(
        serde_json::to_value(&stored).unwrap()["metadata"],
        json!({"flow_id": "flow_1", "step": 3, "side": "a"})
    );
}

#[test]
fn spec_4_1_message_record_all_fields_roundtrip() {
    let record: MessageRecord = roundtrip(json!({
        "id": "msg_9",
        "role": "tool",
        "content": "done",
        "name": "close_as_duplicate",
        "tool_calls": "[]",
        "tool_call_id": "call_9",
        "created_at": 1_700_000_000_000_i64,
        "parent_id": "msg_8",
        "depth": 2,
        "silent": false,
        "tool_status": "success"
    }));
    assert_eq!(record.name.as_deref(), Some("close_as_duplicate"));
    assert_eq!(record.tool_call_id.as_deref(), Some("call_9"));
    assert_eq!(record.depth, Some(2));
    assert_eq!(record.silent, Some(false));
    assert_eq!(record.extra["tool_status"], "success");

    // The stored message carries every field the record had.
    let message_json = serde_json::to_value(record.clone().into_message()).unwrap();
    assert_eq!(message_json, serde_json::to_value(&record).unwrap());
}

#[test]
fn spec_4_1_message_record_defaults_id_and_created_at() {
    let record: MessageRecord = serde_json::from_value(json!({"role": "user", "content": "hi"})).unwrap();
    assert_eq!(record.id, "");
    assert_eq!(record.created_at, 0);
    assert_eq!(record, MessageRecord::new(Role::User, "hi"));
}

#[test]
fn spec_4_3_message_update_roundtrip() {
    let update: MessageUpdate = roundtrip(json!({
        "content": "Edited text",
        "tool_calls": "[]",
        "silent": true,
        "status": "completed",
        "metadata": {"edited_by": "moderation"}
    }));
    assert_eq!(update.content.as_deref(), Some("Edited text"));
    assert_eq!(update.tool_calls.as_deref(), Some("[]"));
    assert_eq!(update.silent, Some(true));
    assert_eq!(update.extra["status"], "completed");

    let empty: MessageUpdate = roundtrip(json!({}));
    assert_eq!(empty, MessageUpdate::default());

    // Applying the update changes exactly its fields and keeps the rest.
    let mut message: HookMessage = serde_json::from_value(
        json!({"id": "m1", "role": "assistant", "content": "draft", "created_at": 3, "status": "pending"}),
    )
    .unwrap();
    update.apply_to(&mut message);
    assert_eq!(
        serde_json::to_value(&message).unwrap(),
        json!({
            "id": "m1",
            "role": "assistant",
            "content": "Edited text",
            "tool_calls": "[]",
            "created_at": 3,
            "silent": true,
            "status": "completed",
            "metadata": {"edited_by": "moderation"}
        })
    );
}

// §2.4 HookExecutionContext

#[test]
fn c3_source_json_shapes() {
    let prompt: HookExecutionContext =
        roundtrip(json!({"source": {"kind": "prompt", "promptName": "duplicate_finder"}}));
    assert_eq!(prompt, HookExecutionContext::prompt("duplicate_finder"));
    assert!(matches!(&prompt.source, HookSource::Prompt { prompt_name } if prompt_name == "duplicate_finder"));

    let agent: HookExecutionContext = roundtrip(json!({"source": {"kind": "agent", "agentName": "coordinator"}}));
    assert_eq!(agent, HookExecutionContext::agent("coordinator"));

    let child: HookExecutionContext = roundtrip(json!({
        "source": {
            "kind": "child",
            "relationshipName": "mailbox",
            "agentName": "mail_agent",
            "package": {"name": "mail_pkg", "version": "1.2.0"}
        }
    }));
    assert_eq!(
        child,
        HookExecutionContext::child("mailbox", "mail_agent", PackageSignature::new_static("mail_pkg", "1.2.0"))
    );
    match &child.source {
        HookSource::Child { relationship_name, agent_name, package } => {
            assert_eq!(relationship_name, "mailbox");
            assert_eq!(agent_name, "mail_agent");
            let package = package.as_ref().unwrap();
            assert_eq!((&*package.name, &*package.version), ("mail_pkg", "1.2.0"));
        }
        other => panic!("child source read as {other:?}"),
    }

    // `package?` is optional in the spec: absent stays absent.
    let no_package: HookExecutionContext =
        roundtrip(json!({"source": {"kind": "child", "relationshipName": "mail_agent", "agentName": "mail_agent"}}));
    assert!(matches!(no_package.source, HookSource::Child { package: None, .. }));
}

#[test]
fn c3_source_rejects_unknown_kind_and_snake_case_fields() {
    assert!(
        serde_json::from_value::<HookExecutionContext>(json!({"source": {"kind": "tool", "toolName": "x"}})).is_err()
    );
    assert!(
        serde_json::from_value::<HookExecutionContext>(json!({"source": {"kind": "prompt", "prompt_name": "x"}}))
            .is_err()
    );
}

// §2.2 ExecutionState

#[test]
fn spec_2_2_execution_state_roundtrip() {
    let execution: ExecutionState =
        roundtrip(json!({"flowId": "flow_1", "currentSide": "a", "stepCount": 3, "stopped": false, "aborted": false}));
    assert_eq!(execution.flow_id, "flow_1");
    assert_eq!(execution.current_side, Side::A);
    assert_eq!(execution.step_count, 3);
    assert!(!execution.stopped);
    assert!(!execution.abort_signal.is_aborted());

    let stopped: ExecutionState =
        roundtrip(json!({"flowId": "flow_2", "currentSide": "b", "stepCount": 0, "stopped": true, "aborted": true}));
    assert_eq!(stopped.current_side, Side::B);
    assert!(stopped.stopped);
    assert!(stopped.abort_signal.is_aborted());

    assert_eq!(
        serde_json::to_value(ExecutionState::new("flow_3", Side::A)).unwrap(),
        json!({"flowId": "flow_3", "currentSide": "a", "stepCount": 0, "stopped": false, "aborted": false})
    );
    assert!(
        serde_json::from_value::<ExecutionState>(
            json!({"flowId": "f", "currentSide": "c", "stepCount": 0, "stopped": false, "aborted": false})
        )
        .is_err()
    );
}

// UserState (user-scope hooks)

#[test]
fn user_state_roundtrip_every_event() {
    let attached: UserState = roundtrip(json!({
        "userId": "user_1",
        "values": {"theme": "dark", "limits": {"daily": 20}},
        "clients": ["client_a", "client_b"],
        "event": {"type": "client_attached", "clientId": "client_b"}
    }));
    assert_eq!(attached.user_id, "user_1");
    assert_eq!(attached.value("theme"), Some(&json!("dark")));
    assert_eq!(attached.value("limits"), Some(&json!({"daily": 20})));
    assert_eq!(attached.clients, ["client_a", "client_b"]);
    assert_eq!(attached.event, UserEvent::ClientAttached { client_id: "client_b".into() });

    let detached: UserState = roundtrip(json!({
        "userId": "user_1",
        "values": {},
        "clients": [],
        "event": {"type": "client_detached", "clientId": "client_a"}
    }));
    assert_eq!(detached.event, UserEvent::ClientDetached { client_id: "client_a".into() });

    let changed: UserState = roundtrip(json!({
        "userId": "user_1",
        "values": {"theme": "light"},
        "clients": ["client_a"],
        "event": {"type": "value_changed", "key": "theme", "old": "dark", "new": "light"}
    }));
    assert_eq!(
        changed.event,
        UserEvent::ValueChanged { key: "theme".into(), old: Some(json!("dark")), new: Some(json!("light")) }
    );

    let removed: UserState = roundtrip(json!({
        "userId": "user_1",
        "values": {},
        "clients": [],
        "event": {"type": "value_changed", "key": "theme", "old": "light", "new": null}
    }));
    assert!(matches!(removed.event, UserEvent::ValueChanged { new: None, .. }));
}
