//! What the hooks of one settings file remember while a runtime runs them: the turns a hook
//! asked to stop (`continue: false`), which the turn loop reads at its next step, the threads
//! whose session is open (for `SessionEnd`), and the folder of the threads' transcripts
//! (`transcript_path`), removed with the state.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use super::transcript::TranscriptDir;

/// One hook's reason for a permission decision, with the id of the hook that gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Given {
    /// [`SettingsHook::id`](super::SettingsHook::id).
    pub(crate) hook: String,
    /// The reason as the hook gave it (possibly empty).
    pub(crate) reason: String,
}

/// Per runtime, by thread id.
#[derive(Debug, Default)]
pub(crate) struct SettingsState {
    /// The first hook that asked each thread's turn to stop, not yet acted on.
    stops: Mutex<HashMap<String, Given>>,
    /// The `once` hooks that have run, by thread and location.
    ran_once: Mutex<std::collections::HashSet<(String, String)>>,
    /// The transcripts' folder, made the first time a hook could read one, removed with the
    /// state or by [`remove_transcripts`](Self::remove_transcripts) (H2).
    transcripts: Mutex<Option<TranscriptDir>>,
    /// The top-level threads whose session began and has not ended, kept only while a
    /// `SessionEnd` hook would run for them (K11).
    sessions: Mutex<std::collections::BTreeSet<String>>,
}

impl Drop for SettingsState {
    fn drop(&mut self) {
        let open = self.sessions.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner);
        if !open.is_empty() {
            tracing::warn!(
                target: crate::declarative::LOG_TARGET,
                "[HOOK] the SessionEnd hooks of {} thread session(s) never ran (first: {}): end them with `Runtime::end_sessions` before the runtime is dropped",
                open.len(),
                open.first().map_or("", String::as_str)
            );
        }
    }
}

impl SettingsState {
    /// Where the transcript of `thread` is written: a file in a folder of this state's own
    /// (made now if need be: fresh, readable by this user only, see [`TranscriptDir`]), named
    /// for the thread. Write it with [`write_transcript`](super::write_transcript).
    pub(crate) fn transcript_path(&self, thread: &str) -> std::io::Result<PathBuf> {
        let mut transcripts = lock(&self.transcripts);
        if transcripts.is_none() {
            *transcripts = Some(TranscriptDir::create()?);
        }
        let folder = transcripts.as_ref().expect("made above").path().to_path_buf();
        drop(transcripts);
        let name: String =
            thread.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
        Ok(folder.join(format!("{name}.jsonl")))
    }

    /// Removes the transcripts' folder with its files now (H2); a hook that reads a
    /// transcript later gets a new folder.
    pub(crate) fn remove_transcripts(&self) {
        let folder = lock(&self.transcripts).take();
        drop(folder);
    }

    /// Records that `given.hook` asked the turn of `thread` to stop; the first request stands.
    pub(crate) fn request_stop(&self, thread: &str, given: Given) {
        lock(&self.stops).entry(thread.to_owned()).or_insert(given);
    }

    /// Whether the `once` hook at `location` runs now in `thread`: the first time only.
    pub(crate) fn first_time(&self, thread: &str, location: &str) -> bool {
        lock(&self.ran_once).insert((thread.to_owned(), location.to_owned()))
    }

    /// Records that the session of `thread` is open, until [`end_session`](Self::end_session)
    /// or [`end_sessions`](Self::end_sessions).
    pub(crate) fn begin_session(&self, thread: &str) {
        let mut sessions = lock(&self.sessions);
        if !sessions.contains(thread) {
            sessions.insert(thread.to_owned());
        }
    }

    /// Whether the session of `thread` was open; it is not any more.
    pub(crate) fn end_session(&self, thread: &str) -> bool {
        lock(&self.sessions).remove(thread)
    }

    /// Every open session, taken: each ends once.
    pub(crate) fn end_sessions(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.sessions)).into_iter().collect()
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
