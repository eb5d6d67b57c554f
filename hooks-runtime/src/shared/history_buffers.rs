//! The buffers a runtime copies a thread's history into for its `filter_messages` chains.
//!
//! A chain is handed messages of its own (R3, R4): the stored messages, copied. Copied into a
//! buffer that served an earlier assembly (of any thread of the runtime), the copy reuses that
//! buffer's strings (`clone_from`) and allocates only where a message is longer than the one
//! it replaces or the history longer than the buffer; copied afresh, it allocates two strings
//! a message (its id and text). The runtime keeps at most [`KEPT`] buffers, none of more than
//! [`LONGEST`] messages: what it holds between turns is bounded, a copy of at most that many
//! messages each, which the next assembly overwrites.

use std::sync::{Mutex, PoisonError};

use hooks_core::HookMessage;

/// How many buffers a runtime keeps between assemblies.
const KEPT: usize = 4;

/// The longest history whose buffer is kept.
const LONGEST: usize = 256;

/// A runtime's kept buffers.
#[derive(Default)]
pub(crate) struct HistoryBuffers(Mutex<Vec<Vec<HookMessage>>>);

impl HistoryBuffers {
    /// A buffer that served an earlier assembly, or a new one.
    pub(crate) fn take(&self) -> Vec<HookMessage> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).pop().unwrap_or_default()
    }

    /// Keeps `buffer` for a later assembly, unless enough are kept or it is too long.
    pub(crate) fn give_back(&self, buffer: Vec<HookMessage>) {
        if buffer.capacity() > LONGEST {
            return;
        }
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.len() < KEPT {
            kept.push(buffer);
        }
    }
}

/// `buffer` made equal to `stored`, reusing the strings of the messages it held (`clone_from`).
pub(crate) fn copy_into(buffer: &mut Vec<HookMessage>, stored: &[HookMessage]) {
    buffer.truncate(stored.len());
    let (warm, new) = stored.split_at(buffer.len());
    buffer.clone_from_slice(warm);
    buffer.extend_from_slice(new);
}

#[cfg(test)]
mod tests {
    use super::*;
    use hooks_core::Role;

    fn history(texts: &[&str]) -> Vec<HookMessage> {
        texts.iter().enumerate().map(|(i, text)| HookMessage::new(format!("m{i}"), Role::User, *text, 0)).collect()
    }

    #[test]
    fn a_copy_into_a_kept_buffer_equals_the_history_whatever_the_buffer_held() {
        let buffers = HistoryBuffers::default();
        for stored in [history(&["a", "bb", "ccc"]), history(&["a much longer text"]), history(&["x", "y", "z", "w"])] {
            let mut buffer = buffers.take();
            copy_into(&mut buffer, &stored);
            assert_eq!(buffer, stored);
            buffer[0].content = Some("changed by a hook".into());
            buffer.pop();
            buffers.give_back(buffer);
        }
    }

    #[test]
    fn only_a_few_short_buffers_are_kept() {
        let buffers = HistoryBuffers::default();
        for _ in 0..KEPT + 2 {
            buffers.give_back(Vec::with_capacity(8));
        }
        buffers.give_back(Vec::with_capacity(LONGEST + 1));
        let kept = (0..KEPT + 3).map(|_| buffers.take()).filter(|buffer| buffer.capacity() > 0).count();
        assert_eq!(kept, KEPT);
    }
}
