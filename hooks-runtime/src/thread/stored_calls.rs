//! The stored form of a step's tool calls, an assistant message's `tool_calls`: JSON text with
//! the keys in the order a `serde_json::Value` keeps them (sorted), the form stores have always
//! held. Written straight from the calls into one buffer: through a `Value` it took a dozen
//! allocations a call. Read back ([`read`]) as the JSON value a provider is sent.

use std::borrow::Cow;

use hooks_core::{HookToolCall, ToolCallType};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

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

/// The tool calls of the model step last stored, kept as the JSON value of their stored text, so
/// that the next request's assembly takes the value rather than reading the text back (a
/// tool-calling step's message is in the very next request). One step's calls at most, taken
/// by the next assembly; a text that differs (a hook changed the message before it was stored)
/// is read as any other.
#[derive(Default)]
pub(crate) struct LastCalls {
    calls: std::sync::Mutex<Option<(String, Value)>>,
    /// Whether `calls` holds some, written under its lock: most assemblies follow a step without
    /// calls and find none without taking the lock.
    kept: std::sync::atomic::AtomicBool,
}

impl LastCalls {
    /// Keeps `calls`, stored as `text`.
    pub(crate) fn keep(&self, text: &str, calls: &[HookToolCall]) {
        let value = calls
            .iter()
            .map(|call| {
                let call_type = match call.call_type {
                    ToolCallType::Function => "function",
                    // A kind this crate does not name: the text is read back instead.
                    _ => return None,
                };
                let call = StoredCall {
                    function: StoredFunction {
                        arguments: Cow::Borrowed(&call.function.arguments),
                        name: Cow::Borrowed(&call.function.name),
                    },
                    id: Cow::Borrowed(&call.id),
                    call_type: Cow::Borrowed(call_type),
                };
                Some(call.into_value())
            })
            .collect::<Option<Vec<Value>>>()
            .map(|calls| (text.to_owned(), Value::Array(calls)));
        let mut calls = self.calls.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        self.kept.store(value.is_some(), std::sync::atomic::Ordering::Release);
        *calls = value;
    }

    /// What [`keep`](Self::keep) kept, taken.
    pub(crate) fn take(&self) -> Option<(String, Value)> {
        if !self.kept.load(std::sync::atomic::Ordering::Acquire) {
            return None;
        }
        let mut calls = self.calls.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        self.kept.store(false, std::sync::atomic::Ordering::Release);
        calls.take()
    }
}

/// The value of a stored `tool_calls` text: `kept`'s when it is the text kept, else read (the
/// text itself, as a string, when it is not JSON).
pub(crate) fn value_of(text: &str, kept: &mut Option<(String, Value)>) -> Value {
    if kept.as_ref().is_some_and(|(kept, _)| kept == text)
        && let Some((_, value)) = kept.take()
    {
        return value;
    }
    read(text).or_else(|| serde_json::from_str(text).ok()).unwrap_or_else(|| Value::String(text.to_owned()))
}

/// The stored form read back as the JSON value it holds, read as the calls it is written as:
/// each text borrowed from `text` where it needs no unescaping, then one map per call built
/// directly, where reading a `Value` classifies every key and token. `None` for any other
/// shape (a missing, extra or repeated key, a value of another type, text that is not JSON),
/// which the caller reads as a `Value` instead; so the value is always the one
/// `serde_json::from_str` gives.
pub(crate) fn read(text: &str) -> Option<Value> {
    let calls: Vec<StoredCall<'_>> = serde_json::from_str(text).ok()?;
    Some(Value::Array(calls.into_iter().map(StoredCall::into_value).collect()))
}

/// A call of the stored form, as read.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredCall<'a> {
    #[serde(borrow)]
    function: StoredFunction<'a>,
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(borrow, rename = "type")]
    call_type: Cow<'a, str>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredFunction<'a> {
    #[serde(borrow)]
    arguments: Cow<'a, str>,
    #[serde(borrow)]
    name: Cow<'a, str>,
}

impl StoredCall<'_> {
    fn into_value(self) -> Value {
        let mut function = Map::new();
        function.insert("arguments".to_owned(), Value::String(self.function.arguments.into_owned()));
        function.insert("name".to_owned(), Value::String(self.function.name.into_owned()));
        let mut call = Map::new();
        call.insert("function".to_owned(), Value::Object(function));
        call.insert("id".to_owned(), Value::String(self.id.into_owned()));
        call.insert("type".to_owned(), Value::String(self.call_type.into_owned()));
        Value::Object(call)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Calls whose texts need escaping: quotes, a newline, non-ASCII, a control character, a
    /// backslash, U+2028.
    fn awkward_calls() -> [HookToolCall; 3] {
        [
            HookToolCall::new("call_1", "lookup", r#"{"key":"an \"answer\"\n","n":[1,2]}"#),
            HookToolCall::new("call_\u{e9}", "write_file", ""),
            HookToolCall::new("c\u{1}", "t\\ab", "{\"path\":\"/tmp/\u{2028}\"}"),
        ]
    }

    #[test]
    fn reading_the_stored_form_gives_what_serde_json_reads() {
        let calls = awkward_calls();
        let mut texts: Vec<String> =
            [&calls[..], &calls[..1], &[]].iter().map(|calls| stored_tool_calls(calls)).collect();
        texts.extend(
            [
                // Not the stored form: read as a `Value` all the same.
                r#"[{"function":{"arguments":"{}","name":"a"},"id":"1","type":"function","extra":true}]"#,
                r#"[{"function":{"arguments":{"k":1},"name":"a"},"id":"1","type":"function"}]"#,
                r#"[{"function":{"arguments":"{}","name":"a"},"id":"1","id":"2","type":"function"}]"#,
                r#"[{"id":"1"}]"#,
                r#"{"id":"1"}"#,
                r#"[]"#,
                "not json",
            ]
            .map(str::to_owned),
        );
        for text in &texts {
            let expected = serde_json::from_str::<Value>(text).ok();
            let fast = read(text);
            assert!(fast.is_none() || fast == expected, "{text}: {fast:?} against {expected:?}");
            assert_eq!(read(text).or_else(|| serde_json::from_str(text).ok()), expected, "{text}");
        }
        assert!(read(&texts[0]).is_some(), "the stored form is read directly");
    }

    #[test]
    fn the_calls_kept_are_the_value_their_stored_text_reads_as() {
        let calls = [
            HookToolCall::new("call_1", "lookup", r#"{"key":"an \"answer\"\n","n":[1,2]}"#),
            HookToolCall::new("call_2", "write_file", "not json"),
        ];
        let text = stored_tool_calls(&calls);
        let last = LastCalls::default();
        last.keep(&text, &calls);
        let mut kept = last.take();
        assert!(last.take().is_none(), "taken once");
        // Another text is read, and leaves what was kept.
        let other = stored_tool_calls(&calls[..1]);
        assert_eq!(value_of(&other, &mut kept), serde_json::from_str::<Value>(&other).unwrap());
        assert!(kept.is_some());
        assert_eq!(value_of(&text, &mut kept), serde_json::from_str::<Value>(&text).unwrap());
        assert!(kept.is_none(), "the kept value is moved out");
        assert_eq!(value_of("{oops", &mut kept), Value::String("{oops".into()));
    }

    #[test]
    fn the_stored_form_is_what_a_json_value_of_the_calls_writes() {
        let calls = awkward_calls();
        for calls in [&calls[..], &calls[..1], &[]] {
            assert_eq!(stored_tool_calls(calls), serde_json::json!(calls).to_string());
        }
    }
}
