//! The ids the server makes itself (the runtime makes those of threads, messages and inputs):
//! unique in this process, which is where they mean something, and ordered by the wall clock.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch; zero for a clock set before it.
fn now_millis() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_millis())
}

/// The id of a client attached to a user's stream: `client_<ms>_<n>`, `<ms>` in hex, `n` counting clients
/// from 1.
pub(crate) fn client_id() -> String {
    static CLIENTS: AtomicU64 = AtomicU64::new(0);
    format!("client_{:x}_{}", now_millis(), CLIENTS.fetch_add(1, Ordering::Relaxed) + 1)
}

/// The id of a run that resumes a thread's approved tool calls.
pub(crate) fn resume_run_id() -> String {
    static RESUMES: AtomicU64 = AtomicU64::new(0);
    format!("resume_{:x}{:06x}", now_millis(), RESUMES.fetch_add(1, Ordering::Relaxed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_in_the_process() {
        let clients: std::collections::HashSet<String> = (0..100).map(|_| client_id()).collect();
        let runs: std::collections::HashSet<String> = (0..100).map(|_| resume_run_id()).collect();
        assert_eq!((clients.len(), runs.len()), (100, 100));
        assert!(clients.iter().all(|id| id.starts_with("client_")));
        assert!(runs.iter().all(|id| id.starts_with("resume_")));
    }
}
