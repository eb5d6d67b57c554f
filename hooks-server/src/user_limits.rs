//! What one user may hold open at once: event streams and connections. The server's own caps
//! ([`HttpServer::max_connections`](crate::HttpServer::max_connections)) are shared by every
//! user; these keep one user's load within its share, so that another user still gets through.
//!
//! A stream holds a [`StreamSlot`] for as long as it is open. A connection served by
//! [`HttpServer`](crate::HttpServer) carries a [`ConnectionClaim`] in each request's extensions;
//! the first request that authenticates on it makes it the user's until it closes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use axum::http::StatusCode;
use axum::http::request::Parts;

use crate::error::ApiError;

/// The per-user counts and their limits, shared by every request of one router.
#[derive(Debug)]
pub(crate) struct UserLimits {
    max_streams: usize,
    max_connections: usize,
    held: Mutex<HashMap<String, Held>>,
}

/// What one user holds now; a user holding nothing has no entry.
#[derive(Debug, Default, Clone, Copy)]
struct Held {
    streams: usize,
    connections: usize,
}

/// Which count a slot holds a place in.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Stream,
    Connection,
}

/// A place in one user's count, given back when dropped.
#[derive(Debug)]
pub(crate) struct Slot {
    limits: Arc<UserLimits>,
    user: String,
    kind: Kind,
}

/// An open event stream's place: dropped with the stream.
pub(crate) type StreamSlot = Slot;

/// The user a connection belongs to, once a request on it authenticated. One per connection,
/// cloned into each of its requests; the user's place is given back when the connection closes
/// (the last clone is dropped).
#[derive(Debug, Clone, Default)]
pub(crate) struct ConnectionClaim(Arc<Mutex<Option<Slot>>>);

impl UserLimits {
    pub(crate) fn new(max_streams: usize, max_connections: usize) -> Arc<Self> {
        Arc::new(UserLimits { max_streams, max_connections, held: Mutex::new(HashMap::new()) })
    }

    /// A place for one more event stream of `user`, or 429 `too_many_streams`.
    pub(crate) fn open_stream(self: &Arc<Self>, user: &str) -> Result<StreamSlot, ApiError> {
        self.take(user, Kind::Stream).ok_or_else(|| {
            ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "too_many_streams",
                format!(
                    "this user has {} event streams open, the most allowed (`ServerConfig::max_streams_per_user`); \
                     close one first",
                    self.max_streams
                ),
            )
            .retry_after(1)
        })
    }

    /// Makes the request's connection one of `user`'s, if it is not yet: 429
    /// `too_many_connections` (and the connection closed) when the user holds the most allowed.
    /// A request that did not come through [`HttpServer`](crate::HttpServer) has no claim and
    /// is not counted.
    pub(crate) fn admit(self: &Arc<Self>, parts: &Parts, user: &str) -> Result<(), ApiError> {
        let Some(claim) = parts.extensions.get::<ConnectionClaim>() else { return Ok(()) };
        let mut owner = claim.0.lock().unwrap_or_else(PoisonError::into_inner);
        if owner.as_ref().is_some_and(|slot| slot.user == user) {
            return Ok(());
        }
        // A connection another user's token used before is counted for the user asking now.
        *owner = None;
        match self.take(user, Kind::Connection) {
            Some(slot) => {
                *owner = Some(slot);
                Ok(())
            }
            None => Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "too_many_connections",
                format!(
                    "this user has {} connections open, the most allowed (`ServerConfig::max_connections_per_user`); \
                     reuse an open connection",
                    self.max_connections
                ),
            )
            .retry_after(1)
            .closing()),
        }
    }

    fn take(self: &Arc<Self>, user: &str, kind: Kind) -> Option<Slot> {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let counts = held.entry(user.to_owned()).or_default();
        let (count, max) = match kind {
            Kind::Stream => (&mut counts.streams, self.max_streams),
            Kind::Connection => (&mut counts.connections, self.max_connections),
        };
        if *count >= max {
            if counts.streams == 0 && counts.connections == 0 {
                held.remove(user);
            }
            return None;
        }
        *count += 1;
        Some(Slot { limits: self.clone(), user: user.to_owned(), kind })
    }

    /// How many streams and connections `user` holds now.
    #[cfg(test)]
    fn held(&self, user: &str) -> (usize, usize) {
        let held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        held.get(user).map_or((0, 0), |counts| (counts.streams, counts.connections))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut held = self.limits.held.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(counts) = held.get_mut(&self.user) else { return };
        match self.kind {
            Kind::Stream => counts.streams -= 1,
            Kind::Connection => counts.connections -= 1,
        }
        if counts.streams == 0 && counts.connections == 0 {
            held.remove(&self.user);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts_with(claim: &ConnectionClaim) -> Parts {
        let (mut parts, ()) = axum::http::Request::new(()).into_parts();
        parts.extensions.insert(claim.clone());
        parts
    }

    #[test]
    fn a_user_at_its_stream_limit_is_refused_and_another_user_is_not() {
        let limits = UserLimits::new(2, 8);
        let held: Vec<_> = (0..2).map(|_| limits.open_stream("alice").unwrap()).collect();
        assert_eq!(limits.open_stream("alice").unwrap_err().code, "too_many_streams");
        let bob = limits.open_stream("bob").unwrap();
        drop(held);
        assert_eq!(limits.held("alice"), (0, 0), "closed streams give their places back");
        limits.open_stream("alice").unwrap();
        drop(bob);
    }

    #[test]
    fn a_connection_counts_once_for_its_user_until_it_closes() {
        let limits = UserLimits::new(8, 2);
        let claims: Vec<ConnectionClaim> = (0..3).map(|_| ConnectionClaim::default()).collect();
        // Many requests on one connection count once.
        for _ in 0..3 {
            limits.admit(&parts_with(&claims[0]), "alice").unwrap();
        }
        limits.admit(&parts_with(&claims[1]), "alice").unwrap();
        assert_eq!(limits.held("alice"), (0, 2));
        let refused = limits.admit(&parts_with(&claims[2]), "alice").unwrap_err();
        assert_eq!(refused.code, "too_many_connections");
        limits.admit(&parts_with(&claims[2]), "bob").unwrap();
        drop(claims);
        assert_eq!(limits.held("alice"), (0, 0));
        assert_eq!(limits.held("bob"), (0, 0));
    }
}
