//! Remembered approvals at the ask stage (A9, A10): a call that every decider left at an ask
//! (none denied it) is approved by a remembered approval of its tool whose scope reaches its
//! thread and whose matcher matches its arguments; the call's decision record names it.

use std::sync::Arc;

use serde_json::Value;

use crate::admission_record::ApprovalMatcher;
use crate::admission_record::{Hashed, RememberedUse};
use crate::remembered_approvals::RememberedApproval;
use crate::store::MessageStore;

/// The remembered approvals of a runtime's store, read at each ask, so that one remembered or
/// revoked by another runtime on the same store counts at once.
pub(crate) struct RememberedApprovals {
    pub(crate) store: Arc<dyn MessageStore>,
    pub(crate) patterns: PatternCheck,
}

impl RememberedApprovals {
    /// The remembered approval that answers `call`'s ask, with `arguments` (hashed
    /// `hashed`), if one does: of its tool, its scope reaching the call's thread, its matcher
    /// matching. A store that keeps none, or fails to be read, answers none: the call waits.
    pub(crate) async fn find(&self, call: AskedCall<'_>, arguments: &Value, hashed: &Hashed) -> Option<RememberedUse> {
        let store = self.store.remembered_approvals()?;
        let AskedCall { tool, thread, user } = call;
        let kept = match store.list_remembered_approvals(Some(tool)).await {
            Ok(kept) => kept,
            Err(error) => {
                tracing::warn!(
                    target: "hooks_runtime::hook",
                    thread = %thread,
                    "remembered approvals could not be read, so the call `{tool}` waits for a person: {error}"
                );
                return None;
            }
        };
        let approval = kept.into_iter().find(|approval| {
            approval.tool == tool
                && approval.reaches(thread, user)
                && matches(approval, self.patterns, tool, arguments, hashed)
        })?;
        Some(RememberedUse { id: approval.id, scope: approval.scope, matcher: approval.matcher })
    }
}

/// The call whose ask a remembered approval may answer: its tool, its thread and the thread's
/// user.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AskedCall<'a> {
    pub(crate) tool: &'a str,
    pub(crate) thread: &'a str,
    pub(crate) user: Option<&'a str>,
}

/// Whether `approval`'s matcher matches a call of `tool` with `arguments` (hashed `hashed`).
fn matches(
    approval: &RememberedApproval,
    patterns: PatternCheck,
    tool: &str,
    arguments: &Value,
    hashed: &Hashed,
) -> bool {
    match &approval.matcher {
        ApprovalMatcher::Arguments { sha256 } => sha256.eq_ignore_ascii_case(&hashed.0),
        ApprovalMatcher::Pattern { rule } => patterns(rule, tool, arguments) == Ok(true),
    }
}

/// How a remembered approval's pattern is read: whether rule `pattern` selects a call of `tool`
/// with `arguments` as an `allow` rule would (every simple command of a shell command must
/// match, and what cannot be known before it runs never does), or why it is not a rule. The
/// rule syntax is a hook format's (`declarative`); the runtime's builder hands its reader in.
pub(crate) type PatternCheck = fn(pattern: &str, tool: &str, arguments: &Value) -> Result<bool, String>;

/// The [`PatternCheck`] of a build without the rule syntax: no pattern is a rule.
#[cfg_attr(feature = "declarative", allow(dead_code))]
pub(crate) fn without_rule_syntax(pattern: &str, _tool: &str, _arguments: &Value) -> Result<bool, String> {
    Err(format!(
        "the pattern `{pattern}` cannot be read: rule patterns need the `declarative` feature; remember the exact arguments instead"
    ))
}

/// Why `pattern` cannot be remembered for a call of `tool` with `arguments`: it is not a rule,
/// or it does not select that call (as an `allow` rule).
pub(crate) fn check_pattern(
    patterns: PatternCheck,
    pattern: &str,
    tool: &str,
    arguments: &Value,
) -> Result<(), String> {
    if patterns(pattern, tool, arguments)? {
        return Ok(());
    }
    Err(format!(
        "the pattern `{pattern}` does not select the call being approved (a call of `{tool}`); \
         a remembered pattern must cover the call it is made on"
    ))
}
