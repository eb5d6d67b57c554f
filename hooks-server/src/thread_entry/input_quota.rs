//! The inputs a thread has accepted and not finished, the running one included, within
//! [`ServerConfig::max_queued_inputs`](crate::ServerConfig::max_queued_inputs).

use std::sync::atomic::{AtomicUsize, Ordering};

use axum::http::StatusCode;

use crate::error::ApiError;

/// The `Retry-After` of a `queue_full` answer, in seconds: the queue frees a place as each run
/// finishes, so a retry soon may be accepted.
pub(crate) const QUEUE_FULL_RETRY_AFTER: u32 = 1;

/// The count of accepted inputs.
#[derive(Debug, Default)]
pub(crate) struct InputQuota(AtomicUsize);

impl InputQuota {
    /// Counts one more input, or 429 `queue_full` when `limit` are already counted.
    pub(crate) fn take(&self, limit: usize) -> Result<(), ApiError> {
        self.0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |queued| (queued < limit).then_some(queued + 1))
            .map(drop)
            .map_err(|queued| {
                ApiError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    "queue_full",
                    format!(
                        "the thread has {queued} inputs accepted and not finished; the limit is {limit} \
                         (ServerConfig::max_queued_inputs); send again once a run finishes"
                    ),
                )
                .retry_after(QUEUE_FULL_RETRY_AFTER)
            })
    }

    /// One input finished.
    pub(crate) fn give_back(&self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.load(Ordering::Acquire) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_quota_refuses_until_an_input_is_given_back() {
        let quota = InputQuota::default();
        quota.take(2).unwrap();
        quota.take(2).unwrap();
        let refused = quota.take(2).unwrap_err();
        assert_eq!((refused.code, refused.retry_after), ("queue_full", Some(QUEUE_FULL_RETRY_AFTER)));
        quota.give_back();
        quota.take(2).unwrap();
        quota.give_back();
        quota.give_back();
        assert!(quota.is_empty());
    }
}
