//! When a failed request is tried again, and after how long: exponential backoff with jitter,
//! or the wait the endpoint asked for with `Retry-After`, never past the total deadline.
//!
//! Retried, before the first byte of a stream: HTTP 408, 409, 429 (not a 429 that says the
//! quota is used up), 5xx, and connections that failed. Not retried: any other status, and
//! anything after the stream started (what was streamed may already have run hooks).

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, SystemTime};

use reqwest::header::{HeaderMap, RETRY_AFTER};

use crate::model::{ModelError, ModelRequest, ProviderErrorKind};

/// The longest backoff between two attempts, whatever the attempt count (as the OpenAI SDKs).
const MAX_BACKOFF: Duration = Duration::from_secs(8);

/// Whether a failed attempt may be tried again.
pub(super) fn is_retryable(error: &ModelError, connection_failed: bool) -> bool {
    match error {
        ModelError::Provider(error) => {
            matches!(error.status(), Some(408 | 409 | 429 | 500..=599))
                && error.kind() != ProviderErrorKind::QuotaExceeded
        }
        ModelError::Transport { .. } | ModelError::Timeout(_) => connection_failed,
        _ => false,
    }
}

/// The wait before retry number `retry` (1 for the first): `Retry-After` when the endpoint
/// gave one, else `base * 2^(retry-1)`, at most [`MAX_BACKOFF`], less up to a quarter at random
/// so that many clients do not retry in step.
pub(super) fn backoff(retry: u32, base: Duration, retry_after: Option<Duration>) -> Duration {
    if let Some(wait) = retry_after {
        return wait;
    }
    let doubled = base.saturating_mul(1u32.checked_shl(retry.saturating_sub(1)).unwrap_or(u32::MAX));
    let capped = doubled.min(MAX_BACKOFF.max(base));
    capped.mul_f64(1.0 - 0.25 * random_fraction())
}

/// A number in `[0, 1)`, from the standard library's randomly keyed hasher: jitter needs no
/// more than that.
fn random_fraction() -> f64 {
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u128(SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default().as_nanos());
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// The wait a `Retry-After` header (seconds, or an HTTP date) or `retry-after-ms` asks for.
pub(super) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| headers.get(name).and_then(|value| value.to_str().ok()).map(str::trim);
    if let Some(millis) = text("retry-after-ms").and_then(|millis| millis.parse::<f64>().ok())
        && millis.is_finite()
        && millis >= 0.0
    {
        return Some(Duration::from_secs_f64(millis / 1000.0));
    }
    let value = text(RETRY_AFTER.as_str())?;
    parse_retry_after(value, SystemTime::now())
}

fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Waits `wait`, or less if the request's abort signal fires; `Err(Cancelled)` then.
pub(super) async fn sleep_unless_aborted(wait: Duration, request: &ModelRequest) -> Result<(), ModelError> {
    let Some(abort) = &request.abort else {
        tokio::time::sleep(wait).await;
        return Ok(());
    };
    if abort.is_aborted() {
        return Err(ModelError::Cancelled);
    }
    tokio::select! {
        biased;
        () = abort.aborted() => Err(ModelError::Cancelled),
        () = tokio::time::sleep(wait) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ProviderError;

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777);
        assert_eq!(parse_retry_after("1", now), Some(Duration::from_secs(1)));
        assert_eq!(parse_retry_after("0.5", now), Some(Duration::from_millis(500)));
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", now), Some(Duration::from_secs(10)));
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:49:27 GMT", now), Some(Duration::ZERO), "a past date");
        assert_eq!(parse_retry_after("-3", now), None);
        assert_eq!(parse_retry_after("soon", now), None);
    }

    #[test]
    fn backoff_doubles_to_a_cap_with_at_most_a_quarter_of_jitter() {
        let base = Duration::from_millis(500);
        for (retry, full) in [(1, 500), (2, 1000), (3, 2000), (5, 8000), (40, 8000)] {
            let wait = backoff(retry, base, None);
            let full = Duration::from_millis(full);
            assert!(wait <= full && wait >= full.mul_f64(0.75), "retry {retry}: {wait:?}");
        }
        assert_eq!(backoff(1, base, Some(Duration::from_secs(3))), Duration::from_secs(3));
    }

    #[test]
    fn only_transient_statuses_and_failed_connections_are_retried() {
        let provider = |status| ModelError::from(ProviderError::new(status, ""));
        for status in [408, 409, 429, 500, 503] {
            assert!(is_retryable(&provider(status), false), "{status}");
        }
        for status in [400, 401, 403, 404, 422] {
            assert!(!is_retryable(&provider(status), false), "{status}");
        }
        let quota = ModelError::from(ProviderError::new(429, "").with_code("insufficient_quota"));
        assert!(!is_retryable(&quota, false));
        assert!(is_retryable(&ModelError::transport("refused"), true));
        assert!(!is_retryable(&ModelError::timeout("no answer"), false));
        assert!(!is_retryable(&ModelError::malformed("x"), true));
    }
}
