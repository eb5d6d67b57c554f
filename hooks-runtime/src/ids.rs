//! Identifiers and clock readings: the one place the crate reads the wall clock for them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Time since the Unix epoch; zero for a clock set before it.
fn since_epoch() -> Duration {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default()
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> i64 {
    i64::try_from(since_epoch().as_millis()).unwrap_or(i64::MAX)
}

/// A new id with `prefix`, unique in this process and, through the clock, across processes
/// that share a store one after the other.
pub(crate) fn new_id(prefix: &str) -> String {
    use std::fmt::Write as _;
    let nanos = since_epoch().as_nanos();
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    // Sized for the longest id up front: `format!` would grow the string twice on the way.
    let mut id = String::with_capacity(prefix.len() + 1 + 32 + 16 + 4);
    let _ = write!(id, "{prefix}_{nanos:x}{count:06x}{:04x}", std::process::id() & 0xffff);
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_keep_their_prefix() {
        let ids: std::collections::HashSet<String> = (0..1000).map(|_| new_id("msg")).collect();
        assert_eq!(ids.len(), 1000);
        assert!(ids.iter().all(|id| id.starts_with("msg_")));
    }

    #[test]
    fn now_ms_reads_the_wall_clock_in_milliseconds() {
        let before = i64::try_from(since_epoch().as_millis()).unwrap();
        let now = now_ms();
        assert!(now >= before && now > 1_600_000_000_000, "{now}");
    }
}
