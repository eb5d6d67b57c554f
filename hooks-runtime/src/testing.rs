//! Testing a hook without a runtime. `#[hook]` re-emits the function unchanged, so a test calls
//! it directly with a [`ThreadState::detached`](crate::types::ThreadState::detached) state, whose
//! operations work in memory; a test that reads back what the hook did keeps the
//! [`DetachedThread`] under the state
//! ([`ThreadState::detached_with_services`](crate::types::ThreadState::detached_with_services)).
//!
//! ```
//! use hooks_runtime::prelude::*;
//!
//! #[hook(after_create_message, id = "remember_last_message")]
//! async fn remember(state: &ThreadState, message: &MessageRecord) -> Result<(), HookError> {
//!     state.set_value("last_message", message.id.clone().into()).await
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let (state, thread) = ThreadState::detached_with_services("thread_1", "support_agent");
//! let message = MessageRecord::new(Role::User, "hello");
//! remember(&state, &message).await.unwrap();
//! assert_eq!(thread.values().get("last_message"), Some(&message.id.clone().into()));
//! # });
//! ```

pub use hooks_core::DetachedThread;
