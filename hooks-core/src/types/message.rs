use serde::{Deserialize, Serialize};

use super::extra::ExtraFields;

/// The author of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Role {
    /// The system prompt.
    System,
    /// A person or the side acting as one.
    User,
    /// The model.
    Assistant,
    /// A tool result.
    Tool,
}

impl Role {
    /// The role as the specification spells it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// Declares [`HookMessage`] or [`MessageRecord`] (`non_exhaustive`, with `Debug`, `PartialEq` and
/// serde derived) and its field-by-field `Clone`. The invocation gives the fields whose docs and
/// serde defaults differ between a stored message and a record about to be stored (`id`,
/// `role`, `content`, `created_at`); the optional fields both carry are written here once, so that they cannot drift apart, in the specification's order (the
/// order they serialize in). The structs stay plain structs: `extra` is the one flattened field,
/// so deserializing a message buffers nothing beyond it.
macro_rules! message_struct {
    (
        $(#[$attr:meta])*
        pub struct $type:ident {
            $(#[$id_attr:meta])* pub id: String,
            $(#[$role_attr:meta])* pub role: Role,
            $(#[$content_attr:meta])* pub content: Option<String>,
            $(#[$created_at_attr:meta])* pub created_at: i64,
        }
    ) => {
        $(#[$attr])*
        #[derive(Debug, PartialEq, Serialize, Deserialize)]
        #[non_exhaustive]
        pub struct $type {
            $(#[$id_attr])*
            pub id: String,
            $(#[$role_attr])*
            pub role: Role,
            $(#[$content_attr])*
            pub content: Option<String>,
            /// An optional author name.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub name: Option<String>,
            /// The assistant's tool calls, as a JSON array encoded in a string (the spec's shape).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub tool_calls: Option<String>,
            /// For a tool message, the id of the call it answers.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub tool_call_id: Option<String>,
            $(#[$created_at_attr])*
            pub created_at: i64,
            /// The parent message, for nested executions.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub parent_id: Option<String>,
            /// Nesting depth.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub depth: Option<u32>,
            /// A silent message is stored and sent to the model but not shown to people.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub silent: Option<bool>,
            /// Fields beyond the specification's (`status`, `tool_status`, `metadata`, ...), kept
            /// through every hook and into the store.
            #[serde(flatten)]
            pub extra: ExtraFields,
        }

        clone_field_by_field!($type {
            id,
            role,
            content,
            name,
            tool_calls,
            tool_call_id,
            created_at,
            parent_id,
            depth,
            silent;
            extra
        });
    };
}

message_struct! {
    /// A persisted message as hooks see it (spec §6.1).
    ///
    /// Built with [`new`](Self::new) and the `with_*` methods, or from a [`MessageRecord`] with
    /// [`MessageRecord::into_message`]; its fields are read and set directly.
    ///
    /// ```
    /// use hooks_runtime::types::{HookMessage, Role};
    ///
    /// let message: HookMessage = serde_json::from_str(
    ///     r#"{"id":"m1","role":"user","content":"hi","created_at":1700000000000}"#,
    /// ).unwrap();
    /// assert_eq!(message, HookMessage::new("m1", Role::User, "hi", 1_700_000_000_000));
    /// assert_eq!(message.content.as_deref(), Some("hi"));
    /// ```
    pub struct HookMessage {
        /// The message id.
        pub id: String,
        /// Who wrote it.
        pub role: Role,
        /// Its text; `null` for an assistant message that only calls tools.
        pub content: Option<String>,
        // `name`, `tool_calls`, `tool_call_id`: `message_struct!`'s.
        /// Creation time, in milliseconds since the Unix epoch.
        pub created_at: i64,
        // `parent_id`, `depth`, `silent`, `extra`: `message_struct!`'s.
    }
}

impl HookMessage {
    /// A stored message: its id, role, text and creation time (in milliseconds since the Unix
    /// epoch), every optional field empty. A message without text (an assistant message that
    /// only calls tools) sets [`content`](Self::content) to `None` afterwards.
    ///
    /// ```
    /// use hooks_runtime::types::{HookMessage, Role};
    ///
    /// let message = HookMessage::new("msg_1", Role::User, "Where is my order?", 1_700_000_000_000);
    /// assert_eq!(message.id, "msg_1");
    /// assert_eq!(message.content.as_deref(), Some("Where is my order?"));
    /// assert_eq!(message.name, None);
    /// ```
    pub fn new(id: impl Into<String>, role: Role, content: impl Into<String>, created_at: i64) -> Self {
        MessageRecord::new(role, content).with_id(id).with_created_at(created_at).into_message()
    }

    /// Whether the message is silent (an absent flag counts as not silent).
    ///
    /// ```
    /// use hooks_runtime::types::{HookMessage, Role};
    ///
    /// let message = HookMessage::new("msg_1", Role::User, "hi", 0);
    /// assert!(!message.is_silent());
    /// assert!(message.with_silent(true).is_silent());
    /// ```
    pub fn is_silent(&self) -> bool {
        self.silent.unwrap_or(false)
    }

    /// A string field among the extra fields, such as `tool_status`.
    ///
    /// ```
    /// use hooks_runtime::types::{HookMessage, Role};
    ///
    /// let message = HookMessage::new("msg_1", Role::Tool, "42", 0).with_extra("tool_status", "error".into());
    /// assert_eq!(message.extra_str("tool_status"), Some("error"));
    /// assert_eq!(message.extra_str("status"), None);
    /// ```
    pub fn extra_str(&self, field: &str) -> Option<&str> {
        self.extra.get(field).and_then(serde_json::Value::as_str)
    }
}

message_struct! {
    /// A message about to be inserted, as `before_create_message` transforms it (spec §4.1).
    ///
    /// The spec types it as a record; this struct has the spec's fields plus [`extra`](Self::extra),
    /// so a hook that adds `metadata` gets it stored. Built with [`new`](Self::new) and the `with_*`
    /// methods; its fields are read and set directly.
    ///
    /// ```
    /// use hooks_runtime::types::{MessageRecord, Role};
    ///
    /// let mut record = MessageRecord::new(Role::User, "hello");
    /// record.extra.insert("metadata".into(), serde_json::json!({"step": 1}));
    /// let json = serde_json::to_value(&record).unwrap();
    /// assert_eq!(json["metadata"]["step"], 1);
    /// ```
    pub struct MessageRecord {
        /// The message id; the store assigns one when it is empty.
        #[serde(default)]
        pub id: String,
        /// Who writes it.
        pub role: Role,
        /// Its text.
        pub content: Option<String>,
        // `name`, `tool_calls`, `tool_call_id`: `message_struct!`'s.
        /// Creation time in milliseconds since the Unix epoch; the store sets it when it is 0.
        #[serde(default)]
        pub created_at: i64,
        // `parent_id`, `depth`, `silent`, `extra`: `message_struct!`'s.
    }
}

impl MessageRecord {
    /// A record with a role and text, every other field empty. A record without text (an
    /// assistant message that only calls tools) sets [`content`](Self::content) to `None`
    /// afterwards.
    ///
    /// ```
    /// use hooks_runtime::types::{MessageRecord, Role};
    ///
    /// let record = MessageRecord::new(Role::User, "hello");
    /// assert_eq!((record.id.as_str(), record.created_at), ("", 0));
    /// assert_eq!(record.content.as_deref(), Some("hello"));
    /// ```
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        MessageRecord {
            id: String::new(),
            role,
            content: Some(content.into()),
            name: None,
            tool_calls: None,
            tool_call_id: None,
            created_at: 0,
            parent_id: None,
            depth: None,
            silent: None,
            extra: ExtraFields::new(),
        }
    }

    /// The record with its id (the store assigns one when it is empty).
    ///
    /// ```
    /// use hooks_runtime::types::{MessageRecord, Role};
    ///
    /// assert_eq!(MessageRecord::new(Role::User, "hi").with_id("msg_1").id, "msg_1");
    /// ```
    #[must_use]
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = id.into();
        self
    }

    /// The record with its creation time, in milliseconds since the Unix epoch.
    ///
    /// ```
    /// use hooks_runtime::types::{MessageRecord, Role};
    ///
    /// let record = MessageRecord::new(Role::User, "hi").with_created_at(1_700_000_000_000);
    /// assert_eq!(record.created_at, 1_700_000_000_000);
    /// ```
    #[must_use]
    pub fn with_created_at(mut self, created_at: i64) -> Self {
        self.created_at = created_at;
        self
    }

    /// The message this record becomes once stored, every field as it is.
    ///
    /// ```
    /// use hooks_runtime::types::{HookMessage, MessageRecord, Role};
    ///
    /// let message = MessageRecord::new(Role::User, "hi").with_id("msg_1").with_created_at(7).into_message();
    /// assert_eq!(message, HookMessage::new("msg_1", Role::User, "hi", 7));
    /// ```
    pub fn into_message(self) -> HookMessage {
        // The one struct literal of a message (its `Clone` aside): `HookMessage::new` comes here too.
        HookMessage {
            id: self.id,
            role: self.role,
            content: self.content,
            name: self.name,
            tool_calls: self.tool_calls,
            tool_call_id: self.tool_call_id,
            created_at: self.created_at,
            parent_id: self.parent_id,
            depth: self.depth,
            silent: self.silent,
            extra: self.extra,
        }
    }
}

/// The changes of one message update, as `before_update_message` transforms them (spec §4.3).
///
/// Absent fields are left as they are; `extra` carries any other field to set.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MessageUpdate {
    /// New text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// New tool calls (JSON array encoded in a string).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<String>,
    /// New silent flag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub silent: Option<bool>,
    /// Any other field to set, such as `status` or `metadata`.
    #[serde(flatten)]
    pub extra: ExtraFields,
}

impl MessageUpdate {
    /// An update that changes nothing yet: add changes with the `with_*` methods.
    ///
    /// ```
    /// use hooks_runtime::types::MessageUpdate;
    ///
    /// let update = MessageUpdate::new().with_content("edited").with_extra("status", "done".into());
    /// assert_eq!(update.content.as_deref(), Some("edited"));
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// The update with new text.
    #[must_use]
    pub fn with_content(mut self, content: impl Into<String>) -> Self {
        self.content = Some(content.into());
        self
    }

    /// The update with new tool calls (a JSON array encoded in a string).
    #[must_use]
    pub fn with_tool_calls(mut self, tool_calls: impl Into<String>) -> Self {
        self.tool_calls = Some(tool_calls.into());
        self
    }

    /// The update with a new silent flag.
    #[must_use]
    pub fn with_silent(mut self, silent: bool) -> Self {
        self.silent = Some(silent);
        self
    }

    /// The update with another field to set, such as `status` or `metadata`.
    #[must_use]
    pub fn with_extra(mut self, key: impl Into<String>, value: serde_json::Value) -> Self {
        self.extra.insert(key.into(), value);
        self
    }

    /// Applies the update to a stored message.
    pub fn apply_to(&self, message: &mut HookMessage) {
        if let Some(content) = &self.content {
            message.content = Some(content.clone());
        }
        if let Some(tool_calls) = &self.tool_calls {
            message.tool_calls = Some(tool_calls.clone());
        }
        if let Some(silent) = self.silent {
            message.silent = Some(silent);
        }
        for (key, value) in &self.extra {
            message.extra.insert(key.clone(), value.clone());
        }
    }
}

/// The `with_*` setters of the optional fields a [`HookMessage`] and a [`MessageRecord`] share,
/// written once for both (as std writes one method for every integer type). `$what` names the
/// value in the docs; an example's value is `$before`, a role, then `$after`.
macro_rules! optional_field_setters {
    ($type:ident, $what:literal, $before:literal, $after:literal) => {
        impl $type {
            #[doc = concat!("The ", $what, " with an author name.")]
            ///
            /// ```
            #[doc = concat!("use hooks_runtime::types::{", stringify!($type), ", Role};")]
            ///
            #[doc = concat!("let named = ", $before, "Role::User", $after, ".with_name(\"ada\");")]
            /// assert_eq!(named.name.as_deref(), Some("ada"));
            /// ```
            #[must_use]
            pub fn with_name(mut self, name: impl Into<String>) -> Self {
                self.name = Some(name.into());
                self
            }

            #[doc = concat!("The ", $what, " with the assistant's tool calls (a JSON array encoded in a string).")]
            ///
            /// ```
            #[doc = concat!("use hooks_runtime::types::{", stringify!($type), ", Role};")]
            ///
            /// let calls = r#"[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{}"}}]"#;
            #[doc = concat!("let mut call = ", $before, "Role::Assistant", $after, ".with_tool_calls(calls);")]
            /// call.content = None;
            /// assert_eq!(call.tool_calls.as_deref(), Some(calls));
            /// ```
            #[must_use]
            pub fn with_tool_calls(mut self, tool_calls: impl Into<String>) -> Self {
                self.tool_calls = Some(tool_calls.into());
                self
            }

            #[doc = concat!("The ", $what, " with the id of the call it answers (a tool message).")]
            ///
            /// ```
            #[doc = concat!("use hooks_runtime::types::{", stringify!($type), ", Role};")]
            ///
            #[doc = concat!("let result = ", $before, "Role::Tool", $after, ".with_tool_call_id(\"call_1\");")]
            /// assert_eq!(result.tool_call_id.as_deref(), Some("call_1"));
            /// ```
            #[must_use]
            pub fn with_tool_call_id(mut self, tool_call_id: impl Into<String>) -> Self {
                self.tool_call_id = Some(tool_call_id.into());
                self
            }

            #[doc = concat!("The ", $what, " with its parent message and nesting depth.")]
            ///
            /// ```
            #[doc = concat!("use hooks_runtime::types::{", stringify!($type), ", Role};")]
            ///
            #[doc = concat!("let nested = ", $before, "Role::User", $after, ".with_parent(\"msg_0\", 1);")]
            /// assert_eq!((nested.parent_id.as_deref(), nested.depth), (Some("msg_0"), Some(1)));
            /// ```
            #[must_use]
            pub fn with_parent(mut self, parent_id: impl Into<String>, depth: u32) -> Self {
                self.parent_id = Some(parent_id.into());
                self.depth = Some(depth);
                self
            }

            #[doc = concat!("The ", $what, " with its silent flag: stored and sent to the model, not shown to people.")]
            ///
            /// ```
            #[doc = concat!("use hooks_runtime::types::{", stringify!($type), ", Role};")]
            ///
            #[doc = concat!("let hidden = ", $before, "Role::User", $after, ".with_silent(true);")]
            /// assert_eq!(hidden.silent, Some(true));
            /// ```
            #[must_use]
            pub fn with_silent(mut self, silent: bool) -> Self {
                self.silent = Some(silent);
                self
            }

            #[doc = concat!("The ", $what, " with the extra field `key` set to `value`.")]
            ///
            /// ```
            #[doc = concat!("use hooks_runtime::types::{", stringify!($type), ", Role};")]
            ///
            /// let metadata = serde_json::json!({"step": 1});
            #[doc = concat!("let tagged = ", $before, "Role::User", $after, ".with_extra(\"metadata\", metadata);")]
            /// assert_eq!(tagged.extra["metadata"]["step"], 1);
            /// ```
            #[must_use]
            pub fn with_extra(mut self, key: impl Into<String>, value: serde_json::Value) -> Self {
                self.extra.insert(key.into(), value);
                self
            }
        }
    };
}

optional_field_setters!(HookMessage, "message", r#"HookMessage::new("msg_1", "#, r#", "hello", 0)"#);
optional_field_setters!(MessageRecord, "record", "MessageRecord::new(", r#", "hello")"#);

clone_field_by_field!(MessageUpdate { content, tool_calls, silent; extra });
