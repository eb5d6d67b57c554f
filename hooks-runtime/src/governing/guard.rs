//! Runtime-wide guards (G7): the objects `Runtime::builder().guard::<id>()` adds, which govern
//! every tool call of every thread before the hooks its resolution selects.

use std::time::Duration;

use hooks_core::__private::{Adapter, HookHandler};
use hooks_core::{HookDef, HookExecutionContext, HookToolCall, OnFailure, ThreadState};
use serde_json::Value;

use crate::dispatch::governing::Decided;

/// A runtime-wide guard. `#[hook(before_tool_call)]` functions are adapted into it
/// ([`HookGuard`]); guards loaded at run time (command hooks of a settings file) implement it
/// directly and are added with `RuntimeBuilder::guard_object`.
pub(crate) trait ToolGuard: Send + Sync {
    /// The id the logs and approval reasons name it by.
    fn id(&self) -> &str;
    /// What its failure, timeout or panic decides.
    fn on_failure(&self) -> OnFailure;
    /// Its own timeout; `None` takes the runtime's hook timeout.
    fn timeout(&self) -> Option<Duration> {
        None
    }
    /// Whether it is sync code that blocks its thread (see `HookDef::blocking`).
    fn blocking(&self) -> bool {
        false
    }
    /// Decides about `call`, possibly rewriting `arguments` in place.
    fn decide<'a>(&'a self, thread: &'a ThreadState, call: &'a HookToolCall, arguments: &'a mut Value) -> Decided<'a>;
}

/// The context a runtime-wide guard's hook is given: it was selected by the runtime.
static RUNTIME_CONTEXT: HookExecutionContext = HookExecutionContext::runtime();

/// A `#[hook(before_tool_call)]` function used as a runtime-wide guard.
pub(crate) struct HookGuard(pub(crate) &'static HookDef);

impl ToolGuard for HookGuard {
    fn id(&self) -> &str {
        self.0.id
    }

    fn on_failure(&self) -> OnFailure {
        // A definition built by hand without the policy fails closed.
        self.0.on_failure.unwrap_or(OnFailure::Deny)
    }

    fn timeout(&self) -> Option<Duration> {
        self.0.timeout_ms.map(Duration::from_millis)
    }

    fn blocking(&self) -> bool {
        self.0.blocking
    }

    #[inline]
    fn decide<'a>(&'a self, thread: &'a ThreadState, call: &'a HookToolCall, arguments: &'a mut Value) -> Decided<'a> {
        match hooks_core::__private::handler(self.0) {
            HookHandler::BeforeToolCall(Adapter::Sync(adapter)) => {
                Decided::Ready(adapter(thread, call, arguments, &RUNTIME_CONTEXT))
            }
            HookHandler::BeforeToolCall(Adapter::Async(adapter)) => {
                Decided::Pending(adapter(thread, call, arguments, &RUNTIME_CONTEXT))
            }
            // `RuntimeBuilder::guard` takes only `before_tool_call` hooks (`GuardHook`).
            other => unreachable!("a {} hook as a tool guard", other.kind()),
        }
    }
}
