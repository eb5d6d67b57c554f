//! The cap on reasons handed in by hooks and people (a deny's or an ask's reason, a person's
//! denial): each reaches the model's next request and the store, so an unbounded one would
//! grow both without limit. It is the cap of a message sent to a thread over HTTP, 64 KiB.

/// The largest reason, in bytes, that a hook, a guard or a person may give with a decision.
/// A person's longer denial is refused ([`ApprovalError::ReasonTooLong`]); a hook's longer
/// reason is cut to it, with a note saying so, and a warning names the hook.
///
/// [`ApprovalError::ReasonTooLong`]: crate::approvals::ApprovalError::ReasonTooLong
///
/// ```
/// assert_eq!(hooks_runtime::approvals::MAX_REASON_BYTES, 64 * 1024);
/// ```
pub const MAX_REASON_BYTES: usize = 64 * 1024;

/// `reason` of `hook`, cut to [`MAX_REASON_BYTES`] (at a character boundary) with a note that
/// names the limit.
pub(crate) fn cap_hook_reason(hook: &str, mut reason: String) -> String {
    if reason.len() <= MAX_REASON_BYTES {
        return reason;
    }
    let bytes = reason.len();
    let note = format!(" … (cut: the reason was {bytes} bytes; the limit is {MAX_REASON_BYTES} bytes)");
    let mut end = MAX_REASON_BYTES - note.len();
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    reason.truncate(end);
    reason.push_str(&note);
    tracing::warn!(
        target: "hooks_runtime::hook",
        hook_id = hook,
        "[Hooks] the reason given by `{hook}` was {bytes} bytes; it is cut to the limit of {MAX_REASON_BYTES} bytes"
    );
    reason
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_reason_is_cut_to_the_limit_and_says_so() {
        let cut = cap_hook_reason("guard", "é".repeat(MAX_REASON_BYTES));
        assert!(cut.len() <= MAX_REASON_BYTES);
        assert!(cut.ends_with(&format!("the limit is {MAX_REASON_BYTES} bytes)")));
        assert_eq!(cap_hook_reason("guard", "short".into()), "short");
    }
}
