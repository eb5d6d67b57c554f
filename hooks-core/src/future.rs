//! `HookFuture`: a hook's answer, ready at once for a sync hook, boxed once for an async one.

use std::future::Future;
use std::pin::Pin;

/// The boxed future of an async hook.
pub type BoxedHookFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a hook adapter returns. A sync hook answers `Ready` without allocating; an async hook's
/// future is boxed once, and a chain only awaits when it meets one.
pub enum HookFuture<'a, T> {
    /// The sync hook's result.
    Ready(T),
    /// The async hook's future.
    Pending(BoxedHookFuture<'a, T>),
}

impl<'a, T> HookFuture<'a, T> {
    /// Boxes the future of an async hook.
    pub fn boxed(future: impl Future<Output = T> + Send + 'a) -> Self {
        HookFuture::Pending(Box::pin(future))
    }

    /// The value, awaiting the future when there is one.
    pub async fn resolve(self) -> T {
        match self {
            HookFuture::Ready(value) => value,
            HookFuture::Pending(future) => future.await,
        }
    }
}

impl<T> std::fmt::Debug for HookFuture<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            HookFuture::Ready(_) => "HookFuture::Ready(..)",
            HookFuture::Pending(_) => "HookFuture::Pending(..)",
        })
    }
}
