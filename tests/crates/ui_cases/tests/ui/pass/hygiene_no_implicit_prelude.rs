//! Hygiene: the `#[hook]` expansion names nothing from the prelude and reaches the runtime only
//! through the `crate = path` override (or `::hooks_runtime`), so it compiles in a crate with
//! `#![no_implicit_prelude]` that re-exports the runtime under another name.
#![no_implicit_prelude]

mod reexport {
    pub use ::hooks_runtime as hr;
}

use crate::reexport::hr;

#[hr::hook(filter_messages, id = "keep_all", crate = crate::reexport::hr)]
fn keep_all(
    _state: &hr::types::ThreadState,
    messages: ::std::vec::Vec<hr::types::HookMessage>,
) -> ::std::vec::Vec<hr::types::HookMessage> {
    messages
}

#[hr::hook(before_create_message, id = "tag_record", timeout_ms = 50, crate = crate::reexport::hr)]
async fn tag_record(
    _state: &hr::types::ThreadState,
    record: hr::types::MessageRecord,
    _ctx: &hr::types::HookExecutionContext,
) -> ::core::result::Result<hr::types::MessageRecord, hr::types::HookError> {
    ::core::result::Result::Ok(record)
}

#[hr::hook(after_system_message, id = "keep_system", crate = crate::reexport::hr)]
fn keep_system(_state: &hr::types::ThreadState, _system: &str) -> ::core::option::Option<::std::string::String> {
    ::core::option::Option::None
}

#[hr::hook(user_value_changed, id = "watch_values", crate = crate::reexport::hr)]
async fn watch_values(_user: &hr::types::UserState) {}

#[::hooks_runtime::hook(tool_call_done, id = "fully_qualified")]
fn fully_qualified(
    _state: &::hooks_runtime::types::ThreadState,
    _call: &::hooks_runtime::types::HookToolCall,
    _result: &::hooks_runtime::types::HookToolResult,
) {
}

fn main() {
    use hr::definition::Hook;
    ::std::assert_eq!(<keep_all as Hook>::DEF.kind(), hr::definition::HookKind::FilterMessages);
    ::std::assert_eq!(<tag_record as Hook>::DEF.timeout_ms, ::core::option::Option::Some(50));
    ::std::assert!(<tag_record as Hook>::DEF.is_async);
    ::std::assert_eq!(<keep_system as Hook>::DEF.kind(), hr::definition::HookKind::AfterSystemMessage);
    ::std::assert_eq!(<watch_values as Hook>::DEF.kind(), hr::definition::HookKind::UserValueChanged);
    ::std::assert_eq!(<fully_qualified as Hook>::DEF.kind(), hr::definition::HookKind::ToolCallDone);
    ::std::assert!(hr::resolution::Registry::linked().get("fully_qualified").is_some());
}
