//! One running owner per thread on an SQLite file that several processes share (O3).
//!
//! Each store opened on a file is an owner with an id of its own, and holds an exclusive OS lock
//! (`flock` on Unix, `LockFileEx` on Windows) on the file `<id>.lock` in the folder
//! `<database>.owners` beside the database, for as long as the store lives. The operating system
//! releases that lock when the process dies, however it dies (SIGKILL included), so another
//! process tells a live owner from a dead one at once, by trying the lock: no heartbeat to
//! write and no lease to wait out. A thread's owner is written in `thread_owners` while a run
//! holds it; recovery settles a thread only when that owner's lock is free.

use std::collections::HashSet;
use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// This store's identity as an owner, with its lock held.
#[derive(Debug)]
pub(super) struct ProcessOwner {
    id: String,
    folder: PathBuf,
    /// Held (locked) for the store's life; closing it releases the lock.
    _lock: File,
    /// The threads a run of this store holds now: a `thread_owners` row of this owner for a
    /// thread not in here was left by a run whose release never ran, and is free.
    holding: Mutex<HashSet<String>>,
}

impl ProcessOwner {
    /// A new owner for the database at `database`, its lock taken.
    pub(super) fn register(database: &Path) -> io::Result<Self> {
        let mut folder = database.as_os_str().to_owned();
        folder.push(".owners");
        let folder = PathBuf::from(folder);
        std::fs::create_dir_all(&folder)?;
        let id = crate::ids::new_id("owner");
        let lock = OpenOptions::new().create_new(true).write(true).open(folder.join(format!("{id}.lock")))?;
        lock.try_lock().map_err(|error| match error {
            TryLockError::Error(error) => error,
            TryLockError::WouldBlock => io::Error::other("a new owner's lock file is locked by another process"),
        })?;
        Ok(ProcessOwner { id, folder, _lock: lock, holding: Mutex::default() })
    }

    pub(super) fn id(&self) -> &str {
        &self.id
    }

    /// Whether `owner` (an id from the database) is a live process's store. This store is alive
    /// while a run of it holds the thread. An id this store never writes (a file edited by
    /// hand) has no lock, so it is taken for dead. An error other than "locked" while trying the
    /// lock counts as alive: a live run is never settled on a guess.
    pub(super) fn is_alive(&self, owner: &str, thread_id: &str) -> bool {
        if owner == self.id {
            return self.holding.lock().unwrap_or_else(PoisonError::into_inner).contains(thread_id);
        }
        if !is_owner_id(owner) {
            return false;
        }
        let path = self.folder.join(format!("{owner}.lock"));
        let file = match OpenOptions::new().write(true).open(&path) {
            Ok(file) => file,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return false,
            Err(error) => {
                tracing::warn!(target: "hooks_runtime::store", owner, "cannot open an owner's lock file, so the owner counts as alive: {error}");
                return true;
            }
        };
        match file.try_lock() {
            Ok(()) => {
                // Dead: its lock file goes with it.
                let _ = std::fs::remove_file(&path);
                false
            }
            Err(TryLockError::WouldBlock) => true,
            Err(TryLockError::Error(error)) => {
                tracing::warn!(target: "hooks_runtime::store", owner, "cannot try an owner's lock, so the owner counts as alive: {error}");
                true
            }
        }
    }

    /// A run of this store holds `thread_id` now (`true`) or no longer (`false`).
    pub(super) fn note_holding(&self, thread_id: &str, holding: bool) {
        let mut threads = self.holding.lock().unwrap_or_else(PoisonError::into_inner);
        if holding {
            threads.insert(thread_id.to_owned());
        } else {
            threads.remove(thread_id);
        }
    }
}

impl ProcessOwner {
    /// Whether a run of this store holds `thread_id` now.
    pub(super) fn holds(&self, thread_id: &str) -> bool {
        self.holding.lock().unwrap_or_else(PoisonError::into_inner).contains(thread_id)
    }
}

impl Drop for ProcessOwner {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.folder.join(format!("{}.lock", self.id)));
    }
}

/// Whether `owner` has the shape of an id this store writes, and so is safe as a file name.
fn is_owner_id(owner: &str) -> bool {
    owner.len() <= 64
        && owner.starts_with("owner_")
        && owner.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owner_is_alive_while_its_store_lives_and_dead_after() {
        let folder = std::env::temp_dir().join(crate::ids::new_id("owners_test"));
        std::fs::create_dir_all(&folder).unwrap();
        let database = folder.join("threads.db");
        let first = ProcessOwner::register(&database).unwrap();
        let second = ProcessOwner::register(&database).unwrap();
        assert!(second.is_alive(first.id(), "t1"), "a live store's lock is held");
        assert!(!first.is_alive(first.id(), "t1"), "its own id is alive only while a run of it holds the thread");
        first.note_holding("t1", true);
        assert!(first.is_alive(first.id(), "t1"));
        let gone = first.id().to_owned();
        drop(first);
        assert!(!second.is_alive(&gone, "t1"), "a dropped store's lock is free");
        assert!(!second.is_alive("../../etc/passwd", "t1"), "an id it never writes is no file name");
        std::fs::remove_dir_all(&folder).unwrap();
    }
}
