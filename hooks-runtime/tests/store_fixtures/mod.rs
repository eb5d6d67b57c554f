//! The records every store test writes: a thread, a plain message, and a message with every
//! optional field set at the edges of its range. One set, so that every store is tested on the
//! same data.

// Each test file uses a different subset of these helpers.
#![allow(dead_code)]

use hooks_runtime::store::ThreadRecord;
use hooks_runtime::types::{HookMessage, Role};
use serde_json::json;

pub(crate) fn thread(id: &str) -> ThreadRecord {
    let mut arguments = serde_json::Map::new();
    arguments.insert("topic".into(), json!("billing"));
    arguments.insert("limits".into(), json!({"max": 3, "nested": [1, 2.5, null, true], "unicode": "é✓"}));
    let mut thread = ThreadRecord::new(id, "support", 1_700_000_000_000);
    thread.user_id = Some("u1".into());
    thread.arguments = arguments;
    thread.values = serde_json::Map::from_iter([("seeded".to_owned(), json!({"at": "creation"}))]);
    thread
}

pub(crate) fn message(id: &str, role: Role, content: &str) -> HookMessage {
    HookMessage::new(id, role, content, 1_700_000_000_001)
}

/// A message with every optional field set, at the edges of their ranges.
pub(crate) fn full_message(id: &str) -> HookMessage {
    let mut m = message(id, Role::Assistant, "calling a tool, with \"quotes\", 'apostrophes' and \\ é✓");
    m.name = Some("helper".into());
    m.tool_calls = Some(r#"[{"id":"c1","type":"function","function":{"name":"lookup","arguments":"{}"}}]"#.into());
    m.tool_call_id = Some("c0".into());
    m.created_at = i64::MAX;
    m.parent_id = Some("m0".into());
    m.depth = Some(u32::MAX);
    m.silent = Some(false);
    m.extra.insert("metadata".into(), json!({"step": 1, "tags": ["a", "b"], "score": 0.25, "big": u64::MAX}));
    m.extra.insert("tool_status".into(), json!("success"));
    m
}
