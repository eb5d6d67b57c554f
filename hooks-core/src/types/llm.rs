use std::borrow::Cow;

use serde::{Deserialize, Serialize};

/// A message in the provider's chat format (spec §6.4), as `prefilter_llm_history` sees it.
///
/// Built with [`new`](Self::new) and the `with_*` methods; its fields are read and set directly.
///
/// ```
/// use hooks_runtime::types::LlmMessage;
///
/// let message = LlmMessage::new("user", "Is #12 a duplicate?");
/// assert_eq!(
///     serde_json::to_string(&message).unwrap(),
///     r#"{"role":"user","content":"Is #12 a duplicate?"}"#
/// );
/// ```
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LlmMessage {
    /// The provider's role name (`system`, `user`, `assistant`, `tool`, ...). A `Cow`, so that
    /// the roles the runtime writes are static text: a request of many messages allocates no
    /// role name. Compare it with a `&str` as it is (`message.role == "user"`), read it with
    /// `&*message.role`.
    pub role: Cow<'static, str>,
    /// The text, or `null`.
    pub content: Option<String>,
    /// The provider's tool-call array, as the provider shapes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<serde_json::Value>,
    /// For a tool message, the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// An optional author name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl LlmMessage {
    /// A message with a role and text, every other field empty. A message without text (an
    /// assistant message that only calls tools) sets [`content`](Self::content) to `None`
    /// afterwards.
    ///
    /// ```
    /// use hooks_runtime::types::LlmMessage;
    ///
    /// let message = LlmMessage::new("developer", "Be brief.");
    /// assert_eq!((&*message.role, message.content.as_deref()), ("developer", Some("Be brief.")));
    /// ```
    pub fn new(role: impl Into<Cow<'static, str>>, content: impl Into<String>) -> Self {
        LlmMessage {
            role: role.into(),
            content: Some(content.into()),
            tool_calls: None,
            tool_call_id: None,
            name: None,
        }
    }

    /// The message with the provider's tool-call array.
    ///
    /// ```
    /// use hooks_runtime::types::LlmMessage;
    ///
    /// let calls = serde_json::json!([{"id": "call_1", "type": "function",
    ///     "function": {"name": "lookup", "arguments": "{}"}}]);
    /// let mut call = LlmMessage::new("assistant", "").with_tool_calls(calls.clone());
    /// call.content = None;
    /// assert_eq!(call.tool_calls, Some(calls));
    /// ```
    #[must_use]
    pub fn with_tool_calls(mut self, tool_calls: serde_json::Value) -> Self {
        self.tool_calls = Some(tool_calls);
        self
    }

    /// The message with the id of the call it answers (a tool message).
    ///
    /// ```
    /// use hooks_runtime::types::LlmMessage;
    ///
    /// let result = LlmMessage::new("tool", "42").with_tool_call_id("call_1");
    /// assert_eq!(result.tool_call_id.as_deref(), Some("call_1"));
    /// ```
    #[must_use]
    pub fn with_tool_call_id(mut self, tool_call_id: impl Into<String>) -> Self {
        self.tool_call_id = Some(tool_call_id.into());
        self
    }

    /// The message with an author name.
    ///
    /// ```
    /// use hooks_runtime::types::LlmMessage;
    ///
    /// let message = LlmMessage::new("user", "hi").with_name("ada");
    /// assert_eq!(message.name.as_deref(), Some("ada"));
    /// ```
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

clone_field_by_field!(LlmMessage { role, content, tool_calls, tool_call_id, name });
