//! Remembered approvals (A9, A10): a person's approval kept beyond the one call it decided,
//! with a scope (a thread, a user's threads, every thread) and a matcher (the exact arguments'
//! SHA-256, or a pattern in the permission-rule syntax such as `Bash(npm test:*)`). The stores,
//! the admission pipeline and the thread's decision API all use these records, so they live
//! below all three: this module imports none of them.

use serde::{Deserialize, Serialize};

// The scope and the matcher are the decision record's vocabulary too (A10: an entry names
// them), so they are defined with it, below this module, and are this module's words as well.
use crate::admission_record::{ApprovalMatcher, RememberScope};

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
