//! What makes a DTO a request body that [`JsonBody`](crate::body::JsonBody) reads.

use serde::de::DeserializeOwned;

/// A typed request body: a JSON object that deserializes into `Self`.
pub(crate) trait RequestBody: DeserializeOwned {
    /// What the body is, for errors: "a new thread".
    const WHAT: &'static str;
}
