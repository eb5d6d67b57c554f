//! The in-memory records of a thread handle that change in short steps: tool calls queued by
//! hooks, files stored from tools' attachments, child threads.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde_json::Value;

/// Behind one std mutex, taken only inside these methods and never held across `.await` or
/// while another lock is taken. Generic over the child thread (`Arc<ThreadShared>`), so that
/// this module needs nothing of the shared state that holds it.
pub(crate) struct HandleRecords<Child> {
    records: Mutex<Records<Child>>,
    /// How many tool calls are queued, written under the lock: every run asks, and most find
    /// none without taking the lock.
    queued: AtomicUsize,
}

struct Records<Child> {
    queued_tools: VecDeque<(String, Value)>,
    /// Files stored from tools' attachments, by path.
    files: HashMap<String, String>,
    /// Child threads, with the relationship each was created for.
    children: Vec<(&'static str, Child)>,
}

impl<Child: Clone> HandleRecords<Child> {
    pub(crate) fn new() -> Self {
        HandleRecords {
            records: Mutex::new(Records { queued_tools: VecDeque::new(), files: HashMap::new(), children: Vec::new() }),
            queued: AtomicUsize::new(0),
        }
    }

    fn records(&self) -> MutexGuard<'_, Records<Child>> {
        self.records.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn queue_tool(&self, tool: &str, arguments: Value) {
        let mut records = self.records();
        records.queued_tools.push_back((tool.to_owned(), arguments));
        self.queued.store(records.queued_tools.len(), Ordering::Release);
    }

    pub(crate) fn next_queued_tool(&self) -> Option<(String, Value)> {
        if self.queued.load(Ordering::Acquire) == 0 {
            return None;
        }
        let mut records = self.records();
        let next = records.queued_tools.pop_front();
        self.queued.store(records.queued_tools.len(), Ordering::Release);
        next
    }

    pub(crate) fn clear_queued_tools(&self) {
        let mut records = self.records();
        records.queued_tools.clear();
        self.queued.store(0, Ordering::Release);
    }

    pub(crate) fn file(&self, path: &str) -> Option<String> {
        self.records().files.get(path).cloned()
    }

    pub(crate) fn keep_file(&self, path: String, data: String) {
        self.records().files.insert(path, data);
    }

    /// The child thread of `relationship` created first, if any.
    pub(crate) fn child(&self, relationship: &str) -> Option<Child> {
        self.records().children.iter().find(|(name, _)| *name == relationship).map(|(_, child)| child.clone())
    }

    /// How many child threads `relationship` has.
    pub(crate) fn child_count(&self, relationship: &str) -> usize {
        self.records().children.iter().filter(|(name, _)| *name == relationship).count()
    }

    pub(crate) fn add_child(&self, relationship: &'static str, child: Child) {
        self.records().children.push((relationship, child));
    }
}
