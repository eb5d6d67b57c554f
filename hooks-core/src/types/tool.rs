use serde::{Deserialize, Serialize};

use super::extra::ExtraFields;

/// The `type` of a tool call; the specification defines only `"function"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ToolCallType {
    /// A function call, the only kind the specification defines.
    #[default]
    Function,
}

/// The called function of a tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolCallFunction {
    /// The tool's name.
    pub name: String,
    /// The arguments as JSON text; possibly empty or incomplete while the call streams.
    pub arguments: String,
}

impl ToolCallFunction {
    /// The function `name` called with `arguments` (JSON text).
    pub fn new(name: impl Into<String>, arguments: impl Into<String>) -> Self {
        ToolCallFunction { name: name.into(), arguments: arguments.into() }
    }
}

/// A tool call as hooks see it (spec §6.2): `{"id","type":"function","function":{name,arguments}}`.
///
/// ```
/// use hooks_runtime::types::HookToolCall;
///
/// let call = HookToolCall::new("call_1", "get_github_issue", r#"{"number":7}"#);
/// let json = serde_json::to_string(&call).unwrap();
/// assert_eq!(
///     json,
///     r#"{"id":"call_1","type":"function","function":{"name":"get_github_issue","arguments":"{\"number\":7}"}}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct HookToolCall {
    /// The call id.
    pub id: String,
    /// Always `function`.
    #[serde(rename = "type", default)]
    pub call_type: ToolCallType,
    /// The called function.
    pub function: ToolCallFunction,
}

impl HookToolCall {
    /// A function call with its id, tool name and argument text.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: impl Into<String>) -> Self {
        HookToolCall {
            id: id.into(),
            call_type: ToolCallType::Function,
            function: ToolCallFunction { name: name.into(), arguments: arguments.into() },
        }
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.function.name
    }
}

/// The tool call given to `before_store_tool_result` (spec §5.2 types it as a record): the
/// call's fields plus any extra ones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolCallRecord {
    /// The call id.
    pub id: String,
    /// Always `function`.
    #[serde(rename = "type", default)]
    pub call_type: ToolCallType,
    /// The called function.
    pub function: ToolCallFunction,
    /// Fields beyond the specification's.
    #[serde(flatten)]
    pub extra: ExtraFields,
}

impl From<HookToolCall> for ToolCallRecord {
    fn from(call: HookToolCall) -> Self {
        ToolCallRecord { id: call.id, call_type: call.call_type, function: call.function, extra: ExtraFields::new() }
    }
}

impl ToolCallRecord {
    /// A function call with its id, tool name and argument text, and no extra field.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: impl Into<String>) -> Self {
        HookToolCall::new(id, name, arguments).into()
    }

    /// The record with the extra field `key` set to `value`.
    #[must_use]
    pub fn with_extra(mut self, key: impl Into<String>, value: serde_json::Value) -> Self {
        self.extra.insert(key.into(), value);
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.function.name
    }
}

/// Whether a tool call succeeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ToolStatus {
    /// The tool returned a result.
    Success,
    /// The tool failed.
    Error,
}

impl ToolStatus {
    /// The status as the specification spells it.
    pub const fn as_str(self) -> &'static str {
        match self {
            ToolStatus::Success => "success",
            ToolStatus::Error => "error",
        }
    }
}

/// A new file returned by a tool, to be stored in the thread's file system.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolAttachment {
    /// The file name.
    pub name: String,
    /// The media type, e.g. `image/png`.
    pub mime_type: String,
    /// The content, base64-encoded.
    pub data: String,
    /// Fields beyond these.
    #[serde(flatten)]
    pub extra: ExtraFields,
}

impl ToolAttachment {
    /// A new file: its name, media type and base64-encoded content.
    pub fn new(name: impl Into<String>, mime_type: impl Into<String>, data: impl Into<String>) -> Self {
        ToolAttachment { name: name.into(), mime_type: mime_type.into(), data: data.into(), extra: ExtraFields::new() }
    }
}

/// A pointer to a file that already exists in the thread's file system.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AttachmentRef {
    /// The file's path in the thread file system.
    pub path: String,
    /// The file name, if it differs from the path's last segment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The media type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Fields beyond these.
    #[serde(flatten)]
    pub extra: ExtraFields,
}

impl AttachmentRef {
    /// A reference to the file at `path`.
    pub fn new(path: impl Into<String>) -> Self {
        AttachmentRef { path: path.into(), name: None, mime_type: None, extra: ExtraFields::new() }
    }

    /// The reference with its file name.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The reference with its media type.
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

/// One entry of a tool result's `attachments`: a new file or a reference to an existing one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum Attachment {
    /// A new file (has `data`).
    New(ToolAttachment),
    /// An existing file (has `path`).
    Ref(AttachmentRef),
}

/// A tool result as hooks see it (spec §6.3).
///
/// Built with [`success`](Self::success) or [`error`](Self::error) and the `with_*` methods; its
/// fields are read and set directly.
///
/// ```
/// use hooks_runtime::types::{HookToolResult, ToolStatus};
///
/// let ok = HookToolResult::success("42");
/// assert_eq!(ok.status, ToolStatus::Success);
/// assert_eq!(serde_json::to_string(&ok).unwrap(), r#"{"status":"success","result":"42"}"#);
/// let failed = HookToolResult::error("GitHub returned 404");
/// assert_eq!(failed.error.as_deref(), Some("GitHub returned 404"));
/// ```
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct HookToolResult {
    /// Success or error.
    pub status: ToolStatus,
    /// The result text, on success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// The error message, on failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A stack trace or other diagnostic detail, on failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<String>,
    /// Files the tool returned; a hook that rewrites a result keeps or replaces them deliberately.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attachments: Option<Vec<Attachment>>,
}

impl HookToolResult {
    /// A success result with its text.
    ///
    /// ```
    /// use hooks_runtime::types::{HookToolResult, ToolStatus};
    ///
    /// let ok = HookToolResult::success("42");
    /// assert_eq!((ok.status, ok.result.as_deref(), ok.error), (ToolStatus::Success, Some("42"), None));
    /// ```
    pub fn success(result: impl Into<String>) -> Self {
        HookToolResult {
            status: ToolStatus::Success,
            result: Some(result.into()),
            error: None,
            stack: None,
            attachments: None,
        }
    }

    /// An error result with its message.
    ///
    /// ```
    /// use hooks_runtime::types::{HookToolResult, ToolStatus};
    ///
    /// let failed = HookToolResult::error("GitHub returned 404");
    /// assert_eq!((failed.status, failed.result), (ToolStatus::Error, None));
    /// assert_eq!(failed.error.as_deref(), Some("GitHub returned 404"));
    /// ```
    pub fn error(error: impl Into<String>) -> Self {
        HookToolResult {
            status: ToolStatus::Error,
            result: None,
            error: Some(error.into()),
            stack: None,
            attachments: None,
        }
    }

    /// The result with a stack trace or other diagnostic detail.
    ///
    /// ```
    /// use hooks_runtime::types::HookToolResult;
    ///
    /// let failed = HookToolResult::error("timed out").with_stack("at lookup (lookup.rs:12)");
    /// assert_eq!(failed.stack.as_deref(), Some("at lookup (lookup.rs:12)"));
    /// ```
    #[must_use]
    pub fn with_stack(mut self, stack: impl Into<String>) -> Self {
        self.stack = Some(stack.into());
        self
    }

    /// The result with the files the tool returned.
    ///
    /// ```
    /// use hooks_runtime::types::{Attachment, AttachmentRef, HookToolResult, ToolAttachment};
    ///
    /// let result = HookToolResult::success("Drew the chart.").with_attachments(vec![
    ///     Attachment::New(ToolAttachment::new("chart.png", "image/png", "aGVsbG8=")),
    ///     Attachment::Ref(AttachmentRef::new("/reports/q3.pdf")),
    /// ]);
    /// assert_eq!(result.attachments.map(|files| files.len()), Some(2));
    /// ```
    #[must_use]
    pub fn with_attachments(mut self, attachments: Vec<Attachment>) -> Self {
        self.attachments = Some(attachments);
        self
    }

    /// Whether the status is success.
    ///
    /// ```
    /// use hooks_runtime::types::HookToolResult;
    ///
    /// assert!(HookToolResult::success("42").is_success());
    /// assert!(!HookToolResult::error("no such issue").is_success());
    /// ```
    pub fn is_success(&self) -> bool {
        self.status == ToolStatus::Success
    }
}

clone_field_by_field!(HookToolResult { status, result, error, stack, attachments });
