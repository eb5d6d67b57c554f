//! What the hooks of one settings file remember while a runtime runs them: the turns a hook
//! asked to stop (`continue: false`), which the turn loop reads at its next step.

use std::collections::HashMap;
use std::sync::Mutex;

use super::fire::Given;

/// Per runtime, by thread id.
#[derive(Debug, Default)]
pub(crate) struct SettingsState {
    /// The first hook that asked each thread's turn to stop, not yet acted on.
    stops: Mutex<HashMap<String, Given>>,
}

impl SettingsState {
    /// Records that `given.hook` asked the turn of `thread` to stop; the first request stands.
    pub(crate) fn request_stop(&self, thread: &str, given: Given) {
        lock(&self.stops).entry(thread.to_owned()).or_insert(given);
    }

    /// The stop asked for `thread`, left in place.
    pub(crate) fn stop_pending(&self, thread: &str) -> Option<Given> {
        lock(&self.stops).get(thread).cloned()
    }

    /// The stop asked for `thread`, taken: the turn acts on it once.
    pub(crate) fn take_stop(&self, thread: &str) -> Option<Given> {
        lock(&self.stops).remove(thread)
    }
}

/// The map even when a thread panicked holding it: each entry is written whole.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
