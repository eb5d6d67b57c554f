//! A thread's values as last written to the store (M11), read without a store round trip.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::Value;

use crate::store::{MessageStore, StoreError};

pub(crate) struct ValueCache {
    thread_id: String,
    store: Arc<dyn MessageStore>,
    /// A std mutex, taken only inside these methods and never held across `.await`.
    values: Mutex<HashMap<String, Value>>,
    /// Held from a value's store write to its cache update, so that the cache ends in the
    /// order the store did.
    writes: tokio::sync::Mutex<()>,
}

impl ValueCache {
    /// The cache of the values the record of `thread_id` had at opening, written through to
    /// `store`.
    pub(crate) fn new(
        thread_id: String,
        store: Arc<dyn MessageStore>,
        values: impl IntoIterator<Item = (String, Value)>,
    ) -> Self {
        ValueCache {
            thread_id,
            store,
            values: Mutex::new(values.into_iter().collect()),
            writes: tokio::sync::Mutex::new(()),
        }
    }

    fn values(&self) -> MutexGuard<'_, HashMap<String, Value>> {
        self.values.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// M11: the store first, in its own transaction, then the cache; a failed write changes
    /// neither.
    pub(crate) async fn set(&self, key: &str, value: Value) -> Result<(), StoreError> {
        let _writing = self.writes.lock().await;
        self.store.set_value(&self.thread_id, key, &value).await?;
        self.values().insert(key.to_owned(), value);
        Ok(())
    }

    /// The values as the store has them now (another process may have written some), in the
    /// order of this process's writes: a write of this process in flight lands after it.
    pub(crate) async fn reload(&self, values: impl IntoIterator<Item = (String, Value)>) {
        let _writing = self.writes.lock().await;
        *self.values() = values.into_iter().collect();
    }

    /// A thread value as this process last wrote it, or as the store had it at opening.
    pub(crate) fn get(&self, key: &str) -> Option<Value> {
        self.values().get(key).cloned()
    }
}
