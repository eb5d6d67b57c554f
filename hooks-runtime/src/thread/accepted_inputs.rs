//! The inputs a runtime accepted into a thread's inbox and no run of it has taken yet, kept so
//! that the run about to take one is handed it instead of reading it back from the store (on
//! a store one process owns, see `ThreadShared::accepted_input`).

use crate::store::InboxEntry;

/// Accepted inputs, oldest first. The first is kept in place: a thread usually has one input
/// in flight (a server accepts a message, then runs it), and holding it costs no allocation.
#[derive(Default)]
pub(crate) struct AcceptedInputs {
    first: Option<InboxEntry>,
    more: Vec<InboxEntry>,
}

impl AcceptedInputs {
    /// Keeps `entry` until a run takes it.
    pub(crate) fn insert(&mut self, entry: InboxEntry) {
        if self.first.is_none() {
            self.first = Some(entry);
        } else {
            self.more.push(entry);
        }
    }

    /// The input `id`, no longer kept, if it was.
    pub(crate) fn remove(&mut self, id: &str) -> Option<InboxEntry> {
        if self.first.as_ref().is_some_and(|entry| entry.id == id) {
            // The oldest of the others, if any, moves into the first place.
            let next = if self.more.is_empty() { None } else { Some(self.more.remove(0)) };
            return std::mem::replace(&mut self.first, next);
        }
        let place = self.more.iter().position(|entry| entry.id == id)?;
        Some(self.more.remove(place))
    }
}

#[cfg(test)]
mod tests {
    use hooks_core::{MessageRecord, Role};

    use super::*;

    fn entry(id: &str) -> InboxEntry {
        InboxEntry::from_parts(id.to_owned(), MessageRecord::new(Role::User, id), 0)
    }

    #[test]
    fn each_input_is_handed_out_once_whatever_the_order() {
        let mut accepted = AcceptedInputs::default();
        for id in ["a", "b", "c"] {
            accepted.insert(entry(id));
        }
        assert_eq!(accepted.remove("b").map(|e| e.id), Some("b".to_owned()));
        assert_eq!(accepted.remove("a").map(|e| e.id), Some("a".to_owned()));
        assert!(accepted.remove("a").is_none(), "taken once");
        accepted.insert(entry("d"));
        assert_eq!(accepted.remove("d").map(|e| e.id), Some("d".to_owned()));
        assert_eq!(accepted.remove("c").map(|e| e.id), Some("c".to_owned()));
        assert!(accepted.remove("x").is_none());
        assert!(accepted.first.is_none() && accepted.more.is_empty());
    }
}
