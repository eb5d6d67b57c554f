use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{BuildHasher as _, BuildHasherDefault, Hasher};
use std::sync::{Mutex, PoisonError};

use foldhash::quality::RandomState;
use hooks_core::{HookMessage, MessageUpdate};
use serde_json::Value;

use super::{
    ApprovalStore, InboxEntry, InboxStore, InputTake, MessageStore, RememberedApprovalStore, StoreError, TakeStatus,
    ThreadRecord, ThreadStatus, UserValue, inbox,
};
use crate::approval_records::{ApprovalState, ParkedToolCall, ToolCallChange};
use crate::remembered_approvals::RememberedApproval;

/// A [`MessageStore`] in memory: for tests, examples and short-lived programs.
#[derive(Debug, Default)]
pub struct InMemoryStore {
    /// Threads by id, hashed with a seed of this store's (foldhash).
    threads: Mutex<HashMap<String, StoredThread, RandomState>>,
    /// Each user's values.
    users: Mutex<HashMap<String, UserValues, RandomState>>,
    /// The remembered approvals, oldest first (A9).
    remembered: Mutex<Vec<RememberedApproval>>,
}

/// One user's values by key, each with the time it was set.
type UserValues = BTreeMap<String, (Value, i64)>;

#[derive(Debug)]
struct StoredThread {
    record: ThreadRecord,
    messages: Vec<HookMessage>,
    /// The hashes of the ids of `messages`, so that an insert checks for a duplicate in
    /// constant time (a step with many tool calls stores as many results) without a copy of
    /// each id. A hash seen before is confirmed against the messages themselves: two ids of one
    /// hash cost a scan, never a wrong answer.
    ids: HashSet<u64, BuildHasherDefault<Hashed>>,
    /// The hashes of the tool calls that have a stored result, so that a second one is refused
    /// (O4), also in constant time and confirmed the same way.
    answered: HashSet<u64, BuildHasherDefault<Hashed>>,
    /// The keys of both hashes.
    hasher: RandomState,
    /// The inbox, oldest first: id, message as JSON (as the durable stores keep it), time.
    inbox: Vec<(String, String, i64)>,
    /// The calls parked for approvals, in call order, settled ones (the ledger) included.
    parked: Vec<ParkedToolCall>,
}

/// The hasher of sets whose values are hashes already (keyed by the thread's `RandomState`):
/// the value is its own hash.
#[derive(Default)]
struct Hashed(u64);

impl Hasher for Hashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is called, by the sets of `u64`; any other input is folded in.
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
}

/// The tool call a message is the result of.
fn tool_result_of(message: &HookMessage) -> Option<&str> {
    if message.role == hooks_core::Role::Tool { message.tool_call_id.as_deref() } else { None }
}

impl StoredThread {
    /// Appends `message`, refusing a second message of its id and a second result of its tool
    /// call (O4).
    fn push_message(&mut self, message: &HookMessage) -> Result<(), StoreError> {
        self.admit(message)?;
        self.messages.push(message.clone());
        Ok(())
    }

    /// [`push_message`](Self::push_message) of a message handed over: kept as it is.
    fn push_owned_message(&mut self, message: HookMessage) -> Result<(), StoreError> {
        self.admit(&message)?;
        self.messages.push(message);
        Ok(())
    }

    /// Refuses a message whose id is taken, or a second result of one tool call (O4), and
    /// otherwise notes its id and the call it answers.
    fn admit(&mut self, message: &HookMessage) -> Result<(), StoreError> {
        let id = self.hasher.hash_one(message.id.as_str());
        if self.ids.contains(&id) && self.messages.iter().any(|stored| stored.id == message.id) {
            return Err(StoreError::conflict(format!("message `{}` already exists", message.id)));
        }
        let call = tool_result_of(message).map(|call| (call, self.hasher.hash_one(call)));
        if let Some((call, hash)) = call
            && self.answered.contains(&hash)
            && self.messages.iter().any(|stored| tool_result_of(stored) == Some(call))
        {
            return Err(StoreError::conflict(format!(
                "thread `{}`: a result of tool call `{call}` is already stored; a tool call has one result",
                self.record.id
            )));
        }
        self.ids.insert(id);
        if let Some((_, hash)) = call {
            self.answered.insert(hash);
        }
        Ok(())
    }

    /// Whether the thread waits for approvals with no call left to decide (O6), its last
    /// decision older than `decided_before`: the decider resumes the turn at once itself.
    fn awaits_nothing(&self, decided_before: i64) -> bool {
        self.record.status == ThreadStatus::AwaitingApproval
            && !self.parked.iter().any(|call| {
                !call.settled
                    && (call.state == ApprovalState::Pending || call.decided_at.is_some_and(|at| at > decided_before))
            })
    }
}

impl InMemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn with_thread<T>(
        &self,
        thread_id: &str,
        action: impl FnOnce(&mut StoredThread) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut threads = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
        let thread =
            threads.get_mut(thread_id).ok_or_else(|| StoreError::not_found(format!("no thread `{thread_id}`")))?;
        action(thread)
    }
}

#[async_trait::async_trait]
impl MessageStore for InMemoryStore {
    async fn threads_of_user(&self, user_id: &str) -> Result<Vec<ThreadRecord>, StoreError> {
        let threads = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
        let mut mine: Vec<ThreadRecord> = threads
            .values()
            .filter(|thread| thread.record.user_id.as_deref() == Some(user_id))
            .map(|thread| thread.record.clone())
            .collect();
        mine.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        Ok(mine)
    }

    async fn create_thread(&self, thread: &ThreadRecord) -> Result<(), StoreError> {
        let mut threads = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
        if threads.contains_key(&thread.id) {
            return Err(StoreError::conflict(format!("thread `{}` already exists", thread.id)));
        }
        threads.insert(
            thread.id.clone(),
            StoredThread {
                record: thread.clone(),
                messages: Vec::new(),
                ids: HashSet::default(),
                answered: HashSet::default(),
                hasher: RandomState::default(),
                inbox: Vec::new(),
                parked: Vec::new(),
            },
        );
        Ok(())
    }

    async fn load_thread(&self, thread_id: &str) -> Result<Option<ThreadRecord>, StoreError> {
        let threads = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(threads.get(thread_id).map(|thread| thread.record.clone()))
    }

    async fn set_value(&self, thread_id: &str, key: &str, value: &serde_json::Value) -> Result<(), StoreError> {
        self.with_thread(thread_id, |thread| {
            thread.record.values.insert(key.to_owned(), value.clone());
            Ok(())
        })
    }

    async fn set_status(&self, thread_id: &str, status: &ThreadStatus) -> Result<(), StoreError> {
        self.with_thread(thread_id, |thread| {
            thread.record.status = status.clone();
            Ok(())
        })
    }

    async fn insert_message(&self, thread_id: &str, message: &HookMessage) -> Result<(), StoreError> {
        self.with_thread(thread_id, |thread| thread.push_message(message))
    }

    async fn insert_owned_message(&self, thread_id: &str, message: HookMessage) -> Result<(), StoreError> {
        self.with_thread(thread_id, |thread| thread.push_owned_message(message))
    }

    async fn hand_off(&self, thread_id: &str, agent: &str, message: Option<&HookMessage>) -> Result<(), StoreError> {
        self.with_thread(thread_id, |thread| {
            if let Some(message) = message {
                thread.push_message(message)?;
            }
            thread.record.agent = agent.to_owned();
            Ok(())
        })
    }

    async fn update_message(
        &self,
        thread_id: &str,
        message_id: &str,
        update: &MessageUpdate,
    ) -> Result<HookMessage, StoreError> {
        self.with_thread(thread_id, |thread| {
            let message =
                thread.messages.iter_mut().find(|m| m.id == message_id).ok_or_else(|| {
                    StoreError::not_found(format!("no message `{message_id}` in thread `{thread_id}`"))
                })?;
            update.apply_to(message);
            Ok(message.clone())
        })
    }

    async fn messages(&self, thread_id: &str) -> Result<Vec<HookMessage>, StoreError> {
        self.with_thread(thread_id, |thread| Ok(thread.messages.clone()))
    }

    /// The messages where they are kept, under the store's lock: no copy.
    async fn lend_messages(
        &self,
        thread_id: &str,
        read: &mut (dyn for<'m> FnMut(&'m [HookMessage]) + Send),
    ) -> Result<(), StoreError> {
        self.with_thread(thread_id, |thread| {
            read(&thread.messages);
            Ok(())
        })
    }

    async fn user_values(&self, user_id: &str) -> Result<Vec<UserValue>, StoreError> {
        let users = self.users.lock().unwrap_or_else(PoisonError::into_inner);
        let values = users.get(user_id).into_iter().flatten();
        Ok(values
            .map(|(key, (value, updated_at))| UserValue {
                key: key.clone(),
                value: value.clone(),
                updated_at: *updated_at,
            })
            .collect())
    }

    async fn set_user_value(
        &self,
        user_id: &str,
        key: &str,
        value: Option<&Value>,
    ) -> Result<Option<Value>, StoreError> {
        let mut users = self.users.lock().unwrap_or_else(PoisonError::into_inner);
        let old = match value {
            Some(value) => users
                .entry(user_id.to_owned())
                .or_default()
                .insert(key.to_owned(), (value.clone(), crate::ids::now_ms())),
            None => {
                let Some(values) = users.get_mut(user_id) else { return Ok(None) };
                let old = values.remove(key);
                if values.is_empty() {
                    users.remove(user_id);
                }
                old
            }
        };
        Ok(old.map(|(value, _)| value))
    }

    /// Threads left `running`, threads with inputs, and threads waiting for approvals with no
    /// call left to decide: a runtime rebuilt over a store that outlived the previous one (a
    /// clone of its `Arc`) recovers them.
    async fn unsettled_threads(&self) -> Result<Vec<String>, StoreError> {
        let decided_before =
            crate::ids::now_ms() - i64::try_from(crate::approval_records::RESUME_GRACE.as_millis()).unwrap_or(i64::MAX);
        let threads = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
        let mut unsettled: Vec<String> = threads
            .values()
            .filter(|thread| {
                thread.record.status == ThreadStatus::Running
                    || !thread.inbox.is_empty()
                    || thread.awaits_nothing(decided_before)
            })
            .map(|thread| thread.record.id.clone())
            .collect();
        unsettled.sort();
        Ok(unsettled)
    }

    fn inbox(&self) -> Option<&dyn InboxStore> {
        Some(self)
    }

    fn approvals(&self) -> Option<&dyn ApprovalStore> {
        Some(self)
    }

    fn remembered_approvals(&self) -> Option<&dyn RememberedApprovalStore> {
        Some(self)
    }
}

#[async_trait::async_trait]
impl RememberedApprovalStore for InMemoryStore {
    async fn remember_approval(&self, approval: &RememberedApproval) -> Result<(), StoreError> {
        let mut remembered = self.remembered.lock().unwrap_or_else(PoisonError::into_inner);
        if remembered.iter().any(|kept| kept.id == approval.id) {
            return Err(StoreError::conflict(format!("remembered approval `{}` already exists", approval.id)));
        }
        remembered.push(approval.clone());
        remembered.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        Ok(())
    }

    async fn list_remembered_approvals(&self, tool: Option<&str>) -> Result<Vec<RememberedApproval>, StoreError> {
        let remembered = self.remembered.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(remembered.iter().filter(|kept| tool.is_none_or(|tool| kept.tool == tool)).cloned().collect())
    }

    async fn revoke_remembered_approval(&self, id: &str) -> Result<bool, StoreError> {
        let mut remembered = self.remembered.lock().unwrap_or_else(PoisonError::into_inner);
        let before = remembered.len();
        remembered.retain(|kept| kept.id != id);
        Ok(remembered.len() != before)
    }
}

#[async_trait::async_trait]
impl InboxStore for InMemoryStore {
    async fn enqueue_input(&self, thread_id: &str, entry: &InboxEntry) -> Result<(), StoreError> {
        let message =
            inbox::encode(entry).map_err(|e| StoreError::other(format!("enqueue_input: thread `{thread_id}`: {e}")))?;
        self.with_thread(thread_id, |thread| {
            if thread.inbox.iter().any(|(id, ..)| *id == entry.id) {
                return Err(StoreError::conflict(format!("inbox entry `{}` already exists", entry.id)));
            }
            thread.inbox.push((entry.id.clone(), message, entry.enqueued_at));
            Ok(())
        })
    }

    async fn pending_inputs(&self, thread_id: &str) -> Result<Vec<InboxEntry>, StoreError> {
        self.with_thread(thread_id, |thread| {
            thread
                .inbox
                .iter()
                .map(|(id, message, at)| inbox::decode(id.clone(), message, *at))
                .collect::<Result<_, _>>()
                .map_err(|e| StoreError::corrupt(format!("pending_inputs: thread `{thread_id}`: {e}")))
        })
    }

    async fn take_input(&self, thread_id: &str, take: &InputTake<'_>) -> Result<bool, StoreError> {
        self.with_thread(thread_id, |thread| {
            let Some(place) = thread.inbox.iter().position(|(id, ..)| id == take.input_id) else { return Ok(false) };
            if let Some(message) = take.message {
                thread.push_message(message)?;
            }
            thread.inbox.remove(place);
            if take.status == TakeStatus::Running {
                thread.record.status = ThreadStatus::Running;
            }
            Ok(true)
        })
    }
}

#[async_trait::async_trait]
impl ApprovalStore for InMemoryStore {
    async fn park_tool_calls(&self, thread_id: &str, calls: &[ParkedToolCall]) -> Result<(), StoreError> {
        self.with_thread(thread_id, |thread| {
            // One row per call id, as the durable stores' keys say; nothing is parked otherwise.
            for (place, call) in calls.iter().enumerate() {
                let twice = calls[..place].iter().any(|earlier| earlier.id == call.id);
                if twice || thread.parked.iter().any(|old| !old.settled && old.id == call.id) {
                    return Err(StoreError::conflict(format!("tool call `{}` is already parked", call.id)));
                }
            }
            // A settled call of a reused id gives way to the new one.
            thread.parked.retain(|old| !(old.settled && calls.iter().any(|call| call.id == old.id)));
            let (settled, mut step): (Vec<_>, Vec<_>) =
                std::mem::take(&mut thread.parked).into_iter().partition(|call| call.settled);
            step.extend(calls.iter().cloned());
            step.sort_by_key(|call| call.position);
            thread.parked = settled;
            thread.parked.append(&mut step);
            Ok(())
        })
    }

    async fn parked_tool_calls(&self, thread_id: &str) -> Result<Vec<ParkedToolCall>, StoreError> {
        let threads = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
        let parked = threads.get(thread_id).map(|thread| thread.parked.as_slice()).unwrap_or_default();
        Ok(parked.iter().filter(|call| !call.settled).cloned().collect())
    }

    async fn tool_call(&self, thread_id: &str, call_id: &str) -> Result<Option<ParkedToolCall>, StoreError> {
        let threads = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
        let parked = threads.get(thread_id).map(|thread| thread.parked.as_slice()).unwrap_or_default();
        Ok(parked.iter().rev().find(|call| call.id == call_id).cloned())
    }

    async fn advance_tool_call(&self, thread_id: &str, change: &ToolCallChange) -> Result<bool, StoreError> {
        self.with_thread(thread_id, |thread| match thread.parked.iter_mut().find(|call| change.applies_to(call)) {
            Some(call) => {
                change.apply(call);
                Ok(true)
            }
            None => Ok(false),
        })
    }

    async fn settle_parked_tool_calls(&self, thread_id: &str) -> Result<(), StoreError> {
        self.with_thread(thread_id, |thread| {
            thread.parked.iter_mut().for_each(|call| call.settled = true);
            Ok(())
        })
    }
}
