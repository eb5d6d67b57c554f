//! Who is asking: bearer tokens mapped to user ids by a pluggable [`Authenticator`].

use std::collections::HashMap;
use std::fmt;

use std::sync::Arc;

use axum::extract::{FromRef, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};

use crate::error::ApiError;
use crate::user_limits::UserLimits;

/// Maps a bearer token to the id of the user it belongs to.
///
/// Implement it over your session store, JWT verifier or identity provider; the router asks it
/// once per request and never stores tokens. Return `None` for a token you do not accept.
///
/// ```
/// use hooks_server::{Authenticator, async_trait};
///
/// struct Prefixed;
///
/// #[async_trait]
/// impl Authenticator for Prefixed {
///     async fn authenticate(&self, token: &str) -> Option<String> {
///         token.strip_prefix("user:").map(str::to_owned)
///     }
/// }
/// ```
#[async_trait::async_trait]
pub trait Authenticator: Send + Sync + 'static {
    /// The user id of `token`, or `None` when the token is not valid.
    async fn authenticate(&self, token: &str) -> Option<String>;
}

/// A fixed table of tokens, for development and tests. Do not use it in production: the tokens
/// live in memory and never expire.
///
/// ```
/// use hooks_server::StaticTokens;
///
/// let tokens = StaticTokens::new([("dev-token-alice", "alice"), ("dev-token-bob", "bob")]);
/// # let _ = tokens;
/// ```
#[derive(Clone, Default)]
pub struct StaticTokens {
    users: HashMap<String, String>,
}

impl StaticTokens {
    /// A table of `(token, user id)` pairs.
    pub fn new<T: Into<String>, U: Into<String>>(pairs: impl IntoIterator<Item = (T, U)>) -> Self {
        StaticTokens { users: pairs.into_iter().map(|(token, user)| (token.into(), user.into())).collect() }
    }
}

/// Never prints the tokens.
impl fmt::Debug for StaticTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticTokens").field("tokens", &self.users.len()).finish()
    }
}

#[async_trait::async_trait]
impl Authenticator for StaticTokens {
    async fn authenticate(&self, token: &str) -> Option<String> {
        self.users.get(token).cloned()
    }
}

/// The authenticated user of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct User(pub(crate) String);

/// Any state that holds the authenticator extracts a user (axum's `FromRef`), so this module
/// needs nothing of the server's state.
impl<S> FromRequestParts<S> for User
where
    S: Send + Sync,
    Arc<dyn Authenticator>: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let auth = Arc::<dyn Authenticator>::from_ref(state);
        let unauthorized = |message: &str| ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", message);
        let header = parts
            .headers
            .get(header::AUTHORIZATION)
            .ok_or_else(|| unauthorized("missing `Authorization: Bearer <token>` header"))?;
        let token = header
            .to_str()
            .ok()
            .and_then(bearer_token)
            .ok_or_else(|| unauthorized("the `Authorization` header is not `Bearer <token>`"))?;
        let user = auth.authenticate(token).await.ok_or_else(|| unauthorized("the bearer token is not valid"))?;
        // The router's per-user limits, when it has them: this connection becomes the user's.
        if let Some(limits) = parts.extensions.get::<Arc<UserLimits>>().cloned() {
            limits.admit(parts, &user)?;
        }
        Ok(User(user))
    }
}

/// The token of an `Authorization` value `Bearer <token>`. The scheme is case-insensitive
/// (RFC 9110, section 11.1): `bearer` and `BEARER` are `Bearer` too.
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim_start().split_once([' ', '\t'])?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::bearer_token;

    #[test]
    fn the_scheme_is_case_insensitive_and_the_token_is_kept_as_sent() {
        for value in ["Bearer abc", "bearer abc", "BEARER abc", "BeArEr  abc ", "Bearer\tabc"] {
            assert_eq!(bearer_token(value), Some("abc"), "{value:?}");
        }
        assert_eq!(bearer_token("Bearer AbC"), Some("AbC"), "the token is case-sensitive");
        for value in ["Basic abc", "Bearer", "Bearer ", "Bearerabc", "abc", ""] {
            assert_eq!(bearer_token(value), None, "{value:?}");
        }
    }
}
