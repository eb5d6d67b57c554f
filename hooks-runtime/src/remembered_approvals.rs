//! Remembered approvals (A9, A10): a person's approval kept beyond the one call it decided,
//! with a scope (a thread, a user's threads, every thread) and a matcher (the exact arguments'
//! SHA-256, or a pattern in the permission-rule syntax such as `Bash(npm test:*)`). The stores,
//! the admission pipeline and the thread's decision API all use these records, so they live
//! below all three: this module imports none of them.

use serde::{Deserialize, Serialize};

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

/// What to remember of an approval, given with the decision: its scope, and a pattern in the
/// permission-rule syntax (`None`: the exact arguments approved). A pattern must parse and must
/// select the call being approved, or the decision is refused
/// ([`ApprovalError::RememberRefused`](crate::approvals::ApprovalError::RememberRefused)).
///
/// ```
/// use hooks_runtime::approvals::{Remember, RememberScope};
///
/// assert_eq!(Remember::default().scope, RememberScope::Once);
/// let npm = Remember::new(RememberScope::User).with_pattern("Bash(npm test:*)");
/// assert_eq!(npm.pattern.as_deref(), Some("Bash(npm test:*)"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Remember {
    /// How far the approval reaches.
    pub scope: RememberScope,
    /// The rule whose calls it answers; `None` for the exact arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// Who makes it, as [`RememberedApproval::created_by`] keeps it; `None` for `person`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub made_by: Option<String>,
}

impl Remember {
    /// The exact arguments, remembered with `scope`.
    pub fn new(scope: RememberScope) -> Self {
        Remember { scope, pattern: None, made_by: None }
    }

    /// The same, made by `who` (a user's id, for example).
    #[must_use]
    pub fn by(mut self, who: impl Into<String>) -> Self {
        self.made_by = Some(who.into());
        self
    }

    /// The same scope, for the calls `pattern` selects.
    #[must_use]
    pub fn with_pattern(mut self, pattern: impl Into<String>) -> Self {
        self.pattern = Some(pattern.into());
        self
    }
}

/// An approval a person chose to remember (A9): it answers a later call's ask, within its scope,
/// when the call is of its tool and its matcher matches; a deny of any decider still denies
/// (the ask stage, where it is consulted, is reached only without one). Kept in the store
/// ([`RememberedApprovalStore`](crate::store::RememberedApprovalStore)), listed by
/// [`Runtime::remembered_approvals`](crate::Runtime::remembered_approvals), revoked by
/// [`Runtime::revoke_remembered_approval`](crate::Runtime::revoke_remembered_approval).
///
/// ```
/// use hooks_runtime::approvals::{ApprovalMatcher, RememberScope, RememberedApproval};
///
/// let approval = RememberedApproval::new(
///     "ra_1",
///     RememberScope::Thread,
///     "Bash",
///     ApprovalMatcher::Pattern { rule: "Bash(npm test:*)".into() },
/// )
/// .for_thread("t1", Some("alice"));
/// assert!(approval.reaches("t1", Some("alice")));
/// assert!(!approval.reaches("t2", Some("alice")), "thread scope: that thread only");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RememberedApproval {
    /// Its id (`ra_` and a random part), for revoking it.
    pub id: String,
    /// How far it reaches (never `once`: a `once` approval is not kept).
    pub scope: RememberScope,
    /// The tool whose calls it answers.
    pub tool: String,
    /// Which of the tool's calls it answers.
    pub matcher: ApprovalMatcher,
    /// The owner: the user of the thread it was made on (`None` for a thread without one). A
    /// `user` approval answers that user's threads; the server lists and revokes a user's own.
    pub user_id: Option<String>,
    /// For a `thread` approval, the thread it answers.
    pub thread_id: Option<String>,
    /// When it was made, milliseconds since the Unix epoch.
    pub created_at: i64,
    /// Who made it: `person` from code, the user's id over HTTP.
    pub created_by: String,
}

impl RememberedApproval {
    /// An approval `id` of `scope` for calls of `tool` that `matcher` matches, made now by
    /// `person`, owned by no user and bound to no thread ([`for_thread`](Self::for_thread)
    /// sets both).
    pub fn new(id: impl Into<String>, scope: RememberScope, tool: impl Into<String>, matcher: ApprovalMatcher) -> Self {
        RememberedApproval {
            id: id.into(),
            scope,
            tool: tool.into(),
            matcher,
            user_id: None,
            thread_id: None,
            created_at: crate::ids::now_ms(),
            created_by: "person".to_owned(),
        }
    }

    /// The same approval, made on thread `thread_id` of user `user_id`: owned by that user, and
    /// for a `thread` approval bound to that thread.
    #[must_use]
    pub fn for_thread(mut self, thread_id: &str, user_id: Option<&str>) -> Self {
        self.user_id = user_id.map(str::to_owned);
        self.thread_id = (self.scope == RememberScope::Thread).then(|| thread_id.to_owned());
        self
    }

    /// The same approval, made by `who`.
    #[must_use]
    pub fn by(mut self, who: impl Into<String>) -> Self {
        self.created_by = who.into();
        self
    }

    /// Whether its scope reaches a call of thread `thread_id`, whose user is `user_id`: a
    /// `thread` approval that thread only, a `user` approval the threads of its user (never a
    /// thread without a user), an `always` approval every thread, a `once` approval none.
    pub fn reaches(&self, thread_id: &str, user_id: Option<&str>) -> bool {
        match self.scope {
            RememberScope::Once => false,
            RememberScope::Thread => self.thread_id.as_deref() == Some(thread_id),
            RememberScope::User => user_id.is_some() && self.user_id.as_deref() == user_id,
            RememberScope::Always => true,
        }
    }
}
