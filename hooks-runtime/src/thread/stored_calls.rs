//! The stored form of a step's tool calls, an assistant message's `tool_calls`: JSON text with
//! the keys in the order a `serde_json::Value` keeps them (sorted), the form stores have always
//! held. Written straight from the calls into one buffer: through a `Value` it took a dozen
//! allocations a call.

use hooks_core::{HookToolCall, ToolCallType};
use serde::{Serialize, Serializer};

/// `calls` as stored.
pub(crate) fn stored_tool_calls(calls: &[HookToolCall]) -> String {
    // Room for the keys and quotes, and for arguments escaped at about twice their length.
    let size =
        calls.iter().map(|call| 64 + call.id.len() + call.function.name.len() + 2 * call.function.arguments.len());
    let mut json = Vec::with_capacity(size.sum::<usize>() + 2);
    // Writing to a `Vec` fails only when serializing does, and these fields always serialize.
    serde_json::to_writer(&mut json, &Calls(calls)).expect("tool calls serialize");
    String::from_utf8(json).expect("serde_json writes UTF-8")
}

struct Calls<'a>(&'a [HookToolCall]);

impl Serialize for Calls<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|call| Call {
            function: Function { arguments: &call.function.arguments, name: &call.function.name },
            id: &call.id,
            call_type: call.call_type,
        }))
    }
}

/// `HookToolCall`'s fields, in sorted key order.
#[derive(Serialize)]
struct Call<'a> {
    function: Function<'a>,
    id: &'a str,
    #[serde(rename = "type")]
    call_type: ToolCallType,
}

#[derive(Serialize)]
struct Function<'a> {
    arguments: &'a str,
    name: &'a str,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stored_form_is_what_a_json_value_of_the_calls_writes() {
        let calls = [
            HookToolCall::new("call_1", "lookup", r#"{"key":"an \"answer\"\n","n":[1,2]}"#),
            HookToolCall::new("call_\u{e9}", "write_file", ""),
            HookToolCall::new("c\u{1}", "t\\ab", "{\"path\":\"/tmp/\u{2028}\"}"),
        ];
        for calls in [&calls[..], &calls[..1], &[]] {
            assert_eq!(stored_tool_calls(calls), serde_json::json!(calls).to_string());
        }
    }
}
