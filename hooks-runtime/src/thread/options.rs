//! What a new thread starts with ([`ThreadOptions`]) and the id of an accepted input
//! ([`InputId`]).

use std::fmt;

use serde_json::Value;

/// The id of an input accepted with [`Thread::queue_message`](crate::Thread::queue_message): its
/// inbox entry's id, which is also the id of the run that takes it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
// Only the thread's modules make one, from an inbox entry they committed or read.
pub struct InputId(pub(super) String);

impl InputId {
    /// The id as text, such as `run_18b2...`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for InputId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Options of a new thread: its user and its arguments.
///
/// Every `{{name}}` placeholder in the agent's prompts needs an argument `name`:
/// [`Runtime::create_thread`](crate::Runtime::create_thread) refuses a thread without one
/// ([`RuntimeError::MissingArgument`](crate::RuntimeError::MissingArgument)). An argument is
/// substituted as it is (a string) or as JSON (any other value), and its text is not scanned
/// again, so an argument whose value is `"{{name}}"` is how a prompt sends those braces literally.
///
/// ```
/// use hooks_runtime::ThreadOptions;
/// use serde_json::json;
///
/// let options = ThreadOptions::new()
///     .user("user_7")
///     .argument("customer", "Bob")
///     .argument("order", json!({ "id": 42, "items": 3 }));
/// assert_eq!(options.user_id.as_deref(), Some("user_7"));
/// assert_eq!(options.arguments["customer"], "Bob");
///
/// // Or several at once: pairs, or the members of a `serde_json::Map`.
/// let pairs = ThreadOptions::new().arguments([("customer", "Bob"), ("city", "Lyon")]);
/// assert_eq!(pairs.arguments["city"], "Lyon");
/// ```
#[derive(Debug, Clone, Default)]
pub struct ThreadOptions {
    /// The associated user.
    pub user_id: Option<String>,
    /// Invocation arguments, readable by hooks and interpolated into the prompt as `{{name}}`.
    pub arguments: serde_json::Map<String, Value>,
}

impl ThreadOptions {
    /// No user, no arguments.
    pub fn new() -> Self {
        ThreadOptions::default()
    }

    /// The thread's user: the user-scope hooks and `GET /threads` of `hooks-server` find the
    /// thread under it.
    pub fn user(mut self, user_id: impl Into<String>) -> Self {
        self.user_id = Some(user_id.into());
        self
    }

    /// Sets the argument `name` (replacing an earlier value): a string, a number, or any JSON
    /// value.
    pub fn argument(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.arguments.insert(name.into(), value.into());
        self
    }

    /// Sets every `(name, value)` pair, such as the members of a `serde_json::Map`.
    pub fn arguments<K: Into<String>, V: Into<Value>>(mut self, arguments: impl IntoIterator<Item = (K, V)>) -> Self {
        self.arguments.extend(arguments.into_iter().map(|(name, value)| (name.into(), value.into())));
        self
    }
}
