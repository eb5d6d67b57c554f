//! The decision record of one call's admission (G15): every decider of the admission pipeline
//! (`governing::admission`) that answered, in order. Stored with the call: on its tool message
//! (`extra.admission`) and, while it waits for a person, on its first approval reason.

use hooks_core::ToolDecision;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use sha2::{Digest, Sha256};

/// How one tool call was admitted: every answer of every decider of the admission pipeline, in
/// the order they were given.
///
/// Each entry carries the SHA-256 of the arguments before and after its decider ran, over
/// their canonical JSON: serde_json's compact text (no spaces) with every object's keys sorted.
///
/// ```
/// use hooks_runtime::AdmissionRecord;
///
/// let record: AdmissionRecord = serde_json::from_str(r#"{"entries": []}"#).unwrap();
/// assert!(record.entries.is_empty());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AdmissionRecord {
    /// The answers, in order.
    pub entries: Vec<AdmissionEntry>,
    /// For a call that waits for a person, the fingerprint of the policy it was governed under
    /// (A7): the SHA-256 of every decider of the pipeline in order, each with the permission
    /// rules' texts or the guards' ids it applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_fingerprint: Option<String>,
    /// The remembered approval that answered the call's ask (A10), when one did; its entry is
    /// the one of decider `remembered_approvals`. Boxed: a call no remembered approval
    /// answered carries one pointer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remembered: Option<Box<RememberedUse>>,
}

/// The decider name of a remembered approval's entry in the decision record.
pub(crate) const REMEMBERED_DECIDER: &str = "remembered_approvals";

/// One answer in an [`AdmissionRecord`].
///
/// ```
/// use hooks_runtime::AdmissionEntry;
///
/// let entry: AdmissionEntry = serde_json::from_str(
///     r#"{"decider": "permissions", "by": "settings:permissions.deny[0]", "rule": "Bash(rm:*)",
///         "decision": "deny", "reason": "no", "arguments_before": "ab", "arguments_after": "ab"}"#,
/// )
/// .unwrap();
/// assert_eq!(entry.by.as_deref(), Some("settings:permissions.deny[0]"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AdmissionEntry {
    /// The decider: `schema`, `permissions`, `authorize_tools`, `pre_tool_use_hooks`, `guards`,
    /// `before_tool_call`, `tool`, `remembered_approvals`, `permission_request_hooks`, or
    /// `schema (rewritten arguments)`.
    pub decider: String,
    /// Who answered: a hook's or guard's id, a rule's place (`settings:permissions.deny[0]`),
    /// a tool's name; `None` for the tool's own ask.
    pub by: Option<String>,
    /// The rule's text, when a rule answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// `allow`, `deny` or `ask`.
    pub decision: String,
    /// Why, for a deny or an ask.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// SHA-256 (hex) of the canonical arguments before the decider ran.
    pub arguments_before: String,
    /// SHA-256 (hex) of the canonical arguments after it ran: different when it rewrote them.
    pub arguments_after: String,
}

/// The remembered approval that answered a call's ask, as its [`AdmissionRecord`] names it
/// (A10): its id (for revoking it), its scope and its matcher.
///
/// ```
/// use hooks_runtime::approvals::{ApprovalMatcher, RememberScope};
/// use hooks_runtime::RememberedUse;
///
/// let used: RememberedUse = serde_json::from_str(
///     r#"{"id": "ra_1", "scope": "user", "matcher": {"kind": "pattern", "rule": "Bash(npm test:*)"}}"#,
/// )
/// .unwrap();
/// assert_eq!(used.scope, RememberScope::User);
/// assert_eq!(used.matcher, ApprovalMatcher::Pattern { rule: "Bash(npm test:*)".into() });
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RememberedUse {
    /// The remembered approval's id.
    pub id: String,
    /// Its scope.
    pub scope: RememberScope,
    /// Its matcher: the arguments' hash or the rule.
    pub matcher: ApprovalMatcher,
}

/// How far an approval reaches: `once` (the call decided, nothing kept: the default), `thread`
/// (later calls of that thread), `user` (calls of every thread of the thread's user) or
/// `always` (calls of every thread of every runtime on the store).
///
/// ```
/// use hooks_runtime::approvals::RememberScope;
///
/// assert_eq!(RememberScope::default(), RememberScope::Once);
/// assert_eq!(RememberScope::from_name("user"), Some(RememberScope::User));
/// assert_eq!(RememberScope::Always.as_str(), "always");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RememberScope {
    /// This call only: nothing is remembered.
    #[default]
    Once,
    /// Later calls of the same thread.
    Thread,
    /// Later calls of every thread of the same user.
    User,
    /// Later calls of every thread, kept in the store.
    Always,
}

impl RememberScope {
    /// Every scope, in the order of reach.
    pub const ALL: [RememberScope; 4] =
        [RememberScope::Once, RememberScope::Thread, RememberScope::User, RememberScope::Always];

    /// The scope as stored and as JSON names it: `once`, `thread`, `user` or `always`.
    pub const fn as_str(self) -> &'static str {
        match self {
            RememberScope::Once => "once",
            RememberScope::Thread => "thread",
            RememberScope::User => "user",
            RememberScope::Always => "always",
        }
    }

    /// The scope named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|scope| scope.as_str() == name)
    }
}

/// Which calls of its tool a remembered approval answers: those whose arguments hash to the
/// approved call's ([`ParkedToolCall::arguments_sha256`](crate::approvals::ParkedToolCall::arguments_sha256)),
/// or those a permission rule selects as an `allow` rule would (every simple command of a
/// shell command must match; see `PermissionRule`).
///
/// ```
/// use hooks_runtime::approvals::ApprovalMatcher;
///
/// let exact = ApprovalMatcher::Arguments { sha256: "ab".repeat(32) };
/// assert!(exact.text().starts_with("sha256:"));
/// let pattern = ApprovalMatcher::Pattern { rule: "Bash(npm test:*)".into() };
/// assert_eq!(pattern.text(), "Bash(npm test:*)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ApprovalMatcher {
    /// The exact arguments: the SHA-256 (lower-case hex) of their canonical JSON.
    Arguments {
        /// The hash.
        sha256: String,
    },
    /// A rule in the permission-rule syntax (`Bash(npm test:*)`, `Read(./docs/**)`).
    Pattern {
        /// The rule as written.
        rule: String,
    },
}

impl ApprovalMatcher {
    /// The matcher as one line: `sha256:` and the hash, or the rule's text.
    pub fn text(&self) -> String {
        match self {
            ApprovalMatcher::Arguments { sha256 } => format!("sha256:{sha256}"),
            ApprovalMatcher::Pattern { rule } => rule.clone(),
        }
    }
}

impl AdmissionRecord {
    /// The record a stored tool message carries (`extra.admission`, the record's JSON as one
    /// string, so that a message's copies cost one allocation each), if any: every call whose
    /// result the runtime stored after admitting it.
    ///
    /// ```
    /// use hooks_runtime::AdmissionRecord;
    /// use hooks_runtime::prelude::*;
    ///
    /// let message = HookMessage::new("m1", Role::Tool, "ran", 0);
    /// assert_eq!(AdmissionRecord::of_message(&message), None);
    /// ```
    pub fn of_message(message: &hooks_core::HookMessage) -> Option<AdmissionRecord> {
        serde_json::from_str(message.extra.get(MESSAGE_FIELD)?.as_str()?).ok()
    }

    /// Adds what `by` (its `rule`, if a rule answered) of `decider` decided, with the hashes
    /// of the arguments before and after the decider ran.
    pub(crate) fn push(
        &mut self,
        decider: &str,
        (by, rule, decision): (Option<&str>, Option<&str>, &ToolDecision),
        before: &Hashed,
        after: &Hashed,
    ) {
        let (decision, reason) = match decision {
            ToolDecision::Allow => ("allow", None),
            ToolDecision::Deny { reason } => ("deny", Some(reason.clone())),
            ToolDecision::Ask { reason } => ("ask", Some(reason.clone())),
            _ => ("allow", None),
        };
        self.entries.push(AdmissionEntry {
            decider: decider.to_owned(),
            by: by.map(str::to_owned),
            rule: rule.map(str::to_owned),
            decision: decision.to_owned(),
            reason,
            arguments_before: before.0.clone(),
            arguments_after: after.0.clone(),
        });
    }

    /// Adds the use of remembered approval `used` (A10), which answered the call's ask with the
    /// arguments hashed `arguments`: an entry of decider `remembered_approvals` naming it (its
    /// id as `by`, its matcher as `rule`, its scope in `reason`), and the record's
    /// [`remembered`](Self::remembered).
    pub(crate) fn push_remembered(&mut self, used: RememberedUse, arguments: &Hashed) {
        self.entries.push(AdmissionEntry {
            decider: REMEMBERED_DECIDER.to_owned(),
            by: Some(used.id.clone()),
            rule: Some(used.matcher.text()),
            decision: "allow".to_owned(),
            reason: Some(format!(
                "the remembered approval `{}` (scope `{}`) answers the ask",
                used.id,
                used.scope.as_str()
            )),
            arguments_before: arguments.0.clone(),
            arguments_after: arguments.0.clone(),
        });
        self.remembered = Some(Box::new(used));
    }

    /// The record as one line of JSON, for a span's field: every entry without its reason
    /// (H1: a hook's reason may quote the call's arguments or output, and spans carry no
    /// contents unless the application opts in, and then only in the attributes documented
    /// for them). The stored record keeps the reasons.
    pub(crate) fn to_line(&self) -> String {
        let entries: Vec<AdmissionEntry> =
            self.entries.iter().map(|entry| AdmissionEntry { reason: None, ..entry.clone() }).collect();
        serde_json::to_string(&entries).unwrap_or_default()
    }

    /// The record as JSON text, as a tool message stores it.
    pub(crate) fn to_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// The field of a tool message's `extra` that holds its call's record.
pub(crate) const MESSAGE_FIELD: &str = "admission";

/// The SHA-256 (lower-case hex) of a JSON value's canonical text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hashed(pub(crate) String);

impl Hashed {
    /// The hash of `value`'s canonical JSON, written straight into the hasher: no copy of the
    /// value and no text of it is made.
    pub(crate) fn of(value: &Value) -> Self {
        let mut hasher = Sha256::new();
        write_canonical(&mut HashWriter(&mut hasher), value);
        Hashed(crate::hex::lower(&hasher.finalize()))
    }
}

/// Feeds what is written to a hasher; never fails.
struct HashWriter<'a>(&'a mut Sha256);

impl std::io::Write for HashWriter<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.update(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `value` as canonical JSON: serde_json's compact text with every object's keys sorted. The
/// writer is a hasher, which never fails, so its results carry nothing to act on.
fn write_canonical(out: &mut HashWriter<'_>, value: &Value) {
    use std::io::Write as _;
    match value {
        Value::Object(map) => {
            let _ = out.write_all(b"{");
            // serde_json's map iterates its keys sorted unless a crate of the build turns on its
            // `preserve_order`: only then are they collected and sorted.
            if map.keys().is_sorted() {
                write_members(out, map.iter());
            } else {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort_unstable();
                write_members(out, keys.into_iter().map(|key| (key, &map[key])));
            }
            let _ = out.write_all(b"}");
        }
        Value::Array(items) => {
            let _ = out.write_all(b"[");
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    let _ = out.write_all(b",");
                }
                write_canonical(out, item);
            }
            let _ = out.write_all(b"]");
        }
        scalar => {
            let _ = serde_json::to_writer(&mut *out, scalar);
        }
    }
}

/// An object's members, in the order given, as canonical JSON.
fn write_members<'v>(out: &mut HashWriter<'_>, members: impl Iterator<Item = (&'v String, &'v Value)>) {
    use std::io::Write as _;
    for (index, (key, value)) in members.enumerate() {
        if index > 0 {
            let _ = out.write_all(b",");
        }
        let _ = serde_json::to_writer(&mut *out, key);
        let _ = out.write_all(b":");
        write_canonical(out, value);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Hashed;

    #[test]
    fn g15_hash_is_sha256_of_sorted_compact_json() {
        // `printf '{"a":1,"b":[2,{"c":3,"d":4}]}' | sha256sum`
        let hashed = Hashed::of(&json!({"b": [2, {"d": 4, "c": 3}], "a": 1}));
        assert_eq!(hashed.0, "88c3cdf568e74603bc9ea42ed03f42ad6dcf46dbfbb56089d8a163f6b84a0c52");
        // The same text as serde_json's own compact writer, quotes and escapes included.
        let value = json!({"z": "a \"quoted\" line\n", "a": [1.5, null, true, {"y": {}, "x": []}]});
        assert_eq!(Hashed::of(&value).0, sha256_hex(&serde_json::to_string(&value).unwrap()));
    }

    fn sha256_hex(text: &str) -> String {
        use sha2::{Digest, Sha256};
        Sha256::digest(text.as_bytes()).iter().map(|byte| format!("{byte:02x}")).collect()
    }
}
