//! The state of the store's one `LISTEN`ing connection that the store's clones share: the
//! senders its subscriptions take a receiver of. The connection itself and its task are in
//! `events`, which starts and stops it.

use std::sync::Arc;

use tokio::sync::{Mutex, broadcast};

/// How many notifications the hub holds for a subscription that has not looked yet; one that
/// falls further behind reads the table anyway.
pub(super) const HUB_BUFFER: usize = 1024;
/// What the hub tells every subscription after it reconnected: read, a notification may be lost.
pub(super) const WAKE_ALL: &str = "*";
/// What the hub tells every subscription when it lost its connection (each reports it).
pub(super) const LOST: &str = "!";

/// The store's one `LISTEN`ing connection, on the thread events' channel and the user
/// channel, shared by all its subscriptions: the senders they take a receiver of, while the hub
/// runs.
#[derive(Default)]
pub(super) struct Hub {
    pub(super) senders: Mutex<Option<HubSenders>>,
}

/// Where the hub passes notifications: thread event payloads to thread subscriptions, user
/// channel payloads to user change subscriptions; [`WAKE_ALL`] and [`LOST`] to both.
#[derive(Clone)]
pub(super) struct HubSenders {
    pub(super) threads: broadcast::Sender<Arc<str>>,
    pub(super) users: broadcast::Sender<Arc<str>>,
}

impl HubSenders {
    pub(super) fn listened_to(&self) -> bool {
        self.threads.receiver_count() > 0 || self.users.receiver_count() > 0
    }

    pub(super) fn send_to_all(&self, payload: &str) {
        let _ = self.threads.send(payload.into());
        let _ = self.users.send(payload.into());
    }
}

/// Which of the hub's channels a subscription follows.
#[derive(Clone, Copy)]
pub(super) enum Follow {
    Threads,
    Users,
}
