//! G8: arguments a person edits on approval are governed again before the call runs, as the
//! model's arguments were: the schema (G5, G9), `authorize_tools`, the settings file's
//! `PreToolUse` hooks, the runtime-wide guards and the `before_tool_call` hooks. Otherwise an
//! approval would be a way around every guard: a guard that denies refunds over 1000 would let
//! through a refund of 250 edited to 5000.

use hooks_core::__private::ActiveContext;
use hooks_core::HookToolCall;
use serde_json::Value;

use super::pipeline::{AgentHeld, Pipeline};
use super::tool_calls::{self, Admission};
use super::{ThreadShared, reentry};
use crate::approval_records::ParkedToolCall;

/// What governing the edited arguments decided.
pub(crate) enum Regoverned {
    /// The call runs with these arguments (as the hooks left them). An `Ask` is answered by the
    /// approval that brought them.
    Approved(Value),
    /// A decider denied them: the call is denied.
    Denied {
        /// The deciding hook or guard (`authorize_tools` for the authorizer).
        hook: String,
        /// Why.
        reason: String,
    },
}

/// Governs `arguments`, edited on approval of `parked`, under the thread's run (the hooks read
/// the thread's state as a run would give it, and a hook calling back into the thread is
/// refused rather than deadlocked, E8).
pub(crate) async fn regovern(shared: &ThreadShared, parked: &ParkedToolCall, arguments: Value) -> Regoverned {
    reentry::holding_run(shared, async {
        let state = shared.lock_run().await;
        let agent = shared.agent.current();
        // The hooks of the side whose step parked the call, as when it was first governed.
        let side = super::Thread::responding_side(&agent);
        let pipeline = Pipeline::new(shared, AgentHeld::Lent(&agent), ActiveContext::Side(side));
        let call = HookToolCall::new(parked.id.clone(), parked.tool.clone(), arguments.to_string());
        match tool_calls::admit(&pipeline, &state, &call).await.0 {
            // The schema was checked before; what is left is an abort, which is no approval.
            Admission::Refused(result) | Admission::Invalid(result) => {
                Regoverned::Denied { hook: "the runtime".to_owned(), reason: result.error.unwrap_or_default() }
            }
            Admission::Denied { hook, reason } => Regoverned::Denied { hook, reason },
            Admission::Run { arguments: Ok(arguments), .. } | Admission::Ask { arguments, .. } => {
                Regoverned::Approved(arguments)
            }
            // Arguments serialized from a JSON value always parse.
            Admission::Run { arguments: Err(_), .. } => Regoverned::Approved(arguments),
        }
    })
    .await
}
