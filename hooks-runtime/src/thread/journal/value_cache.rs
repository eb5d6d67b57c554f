//! A thread's values as last written to the store (M11), read without a store round trip. The
//! journal writes a value to the store, then here, under [`ValueCache::writing`].

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde_json::Value;

pub(crate) struct ValueCache {
    /// A std mutex, taken only inside these methods and never held across `.await`.
    values: Mutex<HashMap<String, Value>>,
    /// Held from a value's store write to its cache update, so that the cache ends in the
    /// order the store did.
    writes: tokio::sync::Mutex<()>,
}

impl ValueCache {
    /// The cache of the values a thread's record had at opening.
    pub(crate) fn new(values: impl IntoIterator<Item = (String, Value)>) -> Self {
        ValueCache { values: Mutex::new(values.into_iter().collect()), writes: tokio::sync::Mutex::new(()) }
    }

    fn values(&self) -> MutexGuard<'_, HashMap<String, Value>> {
        self.values.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Held across a value's store write and its [`insert`](Self::insert).
    pub(crate) async fn writing(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.writes.lock().await
    }

    /// A value just written to the store.
    pub(crate) fn insert(&self, key: &str, value: Value) {
        self.values().insert(key.to_owned(), value);
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
