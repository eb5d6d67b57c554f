//! D5: a missing parameter is found by the types written, not by position: the help names the
//! one that is missing and where it goes, and a transform kind's both forms are shown.
use hooks_runtime::prelude::*;

#[hook(before_store_tool_result, id = "redact_by_value")]
fn redact_by_value(_state: &ThreadState, result: HookToolResult) -> HookToolResult {
    result
}

#[hook(before_store_tool_result, id = "redact_in_place")]
fn redact_in_place(_state: &ThreadState, _result: &mut HookToolResult) {}

#[hook(after_tool_call_failure, id = "explain_in_place")]
fn explain_in_place(_state: &ThreadState, _result: &mut HookToolResult) {}

#[hook(before_update_message, id = "stamp_in_place")]
fn stamp_in_place(_state: &ThreadState, _update: &mut MessageUpdate) {}

#[hook(tool_call_done, id = "audit_done")]
fn audit_done(_state: &ThreadState, _result: &HookToolResult) {}

#[hook(filter_messages, id = "keep_all")]
fn keep_all(_state: &ThreadState) {}

fn main() {}
