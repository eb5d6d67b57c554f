//! The future of an async hook.

use std::future::Future;
use std::pin::Pin;

/// The boxed future of an async hook: boxed once, so that every async hook of a kind has one
/// adapter type.
pub type BoxedHookFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
