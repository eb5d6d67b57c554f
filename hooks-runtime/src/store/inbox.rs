//! A thread's inbox: the inputs a caller was told were accepted, committed before the answer,
//! and taken by the run that stores them ([`MessageStore::take_input`](super::MessageStore::take_input)).

use hooks_core::MessageRecord;

/// One accepted input waiting in a thread's inbox: the specification's queued message, kept in
/// the store from the moment it is accepted until a run stores it (or a hook prevents it).
///
/// ```
/// use hooks_core::{MessageRecord, Role};
/// use hooks_runtime::store::InboxEntry;
///
/// let entry = InboxEntry::new(MessageRecord::new(Role::User, "hello"));
/// assert!(entry.id.starts_with("run_"));
/// assert!(entry.enqueued_at > 0);
/// ```
#[derive(Debug, PartialEq)]
#[non_exhaustive]
pub struct InboxEntry {
    /// The entry's id, which is also the id of the run that takes it (an HTTP send's `runId`).
    pub id: String,
    /// The message as it was accepted; `before_create_message` runs when a run takes it.
    pub message: MessageRecord,
    /// When it was accepted, milliseconds since the Unix epoch.
    pub enqueued_at: i64,
}

impl InboxEntry {
    /// A new entry for `message`, with a fresh id and the current time.
    pub fn new(message: MessageRecord) -> Self {
        InboxEntry::from_parts(crate::ids::new_id("run"), message, crate::ids::now_ms())
    }

    /// The entry `id` for `message`, accepted at `enqueued_at`: a store reading one back.
    ///
    /// ```
    /// use hooks_core::{MessageRecord, Role};
    /// use hooks_runtime::store::InboxEntry;
    ///
    /// let entry = InboxEntry::from_parts("run_1".into(), MessageRecord::new(Role::User, "hello"), 1_700_000_000_000);
    /// assert_eq!(entry.id, "run_1");
    /// ```
    pub fn from_parts(id: String, message: MessageRecord, enqueued_at: i64) -> Self {
        InboxEntry { id, message, enqueued_at }
    }
}

/// The entry's message as the stores keep it: JSON text.
pub(super) fn encode(entry: &InboxEntry) -> Result<String, String> {
    serde_json::to_string(&entry.message).map_err(|e| format!("encode the inbox entry `{}`: {e}", entry.id))
}

/// An entry read back; a message that does not decode is an error naming the entry, never its text.
pub(super) fn decode(id: String, message: &str, enqueued_at: i64) -> Result<InboxEntry, String> {
    match serde_json::from_str(message) {
        Ok(message) => Ok(InboxEntry { id, message, enqueued_at }),
        Err(e) => Err(format!(
            "the stored inbox entry `{id}` does not decode (invalid message JSON at line {}, column {})",
            e.line(),
            e.column()
        )),
    }
}
