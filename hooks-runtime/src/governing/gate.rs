//! The gate (G2-G6): every tool call, once it has streamed and passed `authorize_tools`, is
//! decided by the runtime-wide guards and then the `before_tool_call` hooks its thread's
//! resolution selects, each on the arguments the previous one left.

use std::sync::Arc;
use std::time::Duration;

use hooks_core::__private::{Adapter, HookHandler, ResolvedHook};
use hooks_core::{HookError, HookToolCall, OnFailure, ThreadState, ToolDecision};
use serde_json::Value;

use super::governors::Governors;
use super::guard::ToolGuard;
use crate::approval_records::ApprovalReason;
use crate::dispatch::governing::Decided;
use crate::dispatch::{self, Dispatch, HookFailure};
use crate::limits::Limits;
use crate::tool::Tool;

/// What the gate decided about one call.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Verdict {
    /// The call runs.
    Allow,
    /// The call does not run; `reason` goes to the model.
    Deny {
        /// The deciding hook's id.
        hook: String,
        /// Why.
        reason: String,
    },
    /// A person decides; every `Ask` of the chain, and the tool's own requirement, with who asked.
    Ask(Vec<ApprovalReason>),
}

/// The gate's answer: the verdict and the arguments as the hooks left them.
pub(crate) struct Governed {
    pub(crate) verdict: Verdict,
    /// The arguments the tool runs with; `Err` with the parser's message when the model's text
    /// is not JSON (the tool pipeline answers such a call with an error, and nothing governs it).
    pub(crate) arguments: Result<Value, String>,
}

/// One link of the gate: a runtime-wide guard or a resolved hook.
enum Link<'a> {
    Guard(&'a dyn ToolGuard),
    Hook(&'a ResolvedHook, Duration),
}

impl Link<'_> {
    fn id(&self) -> &str {
        match self {
            Link::Guard(guard) => guard.id(),
            Link::Hook(entry, _) => entry.hook.id,
        }
    }

    fn on_failure(&self) -> OnFailure {
        match self {
            Link::Guard(guard) => guard.on_failure(),
            // A definition built by hand without the policy fails closed.
            Link::Hook(entry, _) => entry.hook.on_failure.unwrap_or(OnFailure::Deny),
        }
    }

    fn source(&self) -> String {
        match self {
            Link::Guard(_) => "runtime".to_owned(),
            Link::Hook(entry, _) => dispatch::source_label(entry),
        }
    }
}

/// The arguments text as JSON: empty text is an empty object, as the tool gets it.
pub(crate) fn parse_arguments(text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    serde_json::from_str(text).map_err(|error| error.to_string())
}

/// What every call is governed with: the runtime's guards and schemas, and its limits (the
/// timeout of a guard without its own).
#[derive(Clone, Copy)]
pub(crate) struct Gate<'a> {
    pub(crate) governors: &'a Governors,
    pub(crate) limits: Limits,
}

/// One call before the gate: what governs it, the called tool and the call itself.
#[derive(Clone, Copy)]
struct Governing<'a> {
    gate: Gate<'a>,
    tool: Option<&'a Arc<dyn Tool>>,
    state: &'a ThreadState,
    call: &'a HookToolCall,
}

/// Governs `call`, whose `arguments` the caller parsed (and checked against the tool's schema,
/// G9). `tool` is the called tool, `None` when the runtime has none of that name. With no
/// guard, no hook and a tool that asks for no approval, this does nothing.
pub(crate) async fn govern(
    gate: Gate<'_>,
    tool: Option<Arc<dyn Tool>>,
    chain: Option<Dispatch<'_>>,
    state: &ThreadState,
    call: &HookToolCall,
    arguments: Result<Value, String>,
) -> Governed {
    let mut arguments = match arguments {
        Ok(arguments) => arguments,
        Err(error) => return Governed { verdict: Verdict::Allow, arguments: Err(error) },
    };
    let governing = Governing { gate, tool: tool.as_ref(), state, call };
    let mut verdict = Verdict::Allow;
    let mut decided = false;
    // G10: asked once per call, so a gate nobody traces builds no span.
    let traced = (!gate.governors.guards.is_empty() || chain.is_some()) && dispatch::spans_wanted();
    for guard in &gate.governors.guards {
        let link = Link::Guard(guard.as_ref());
        if apply(governing, link, &mut arguments, &mut verdict, traced).await {
            decided = true;
            break;
        }
    }
    if !decided && let Some(dispatch) = chain {
        for entry in dispatch.chain {
            if !entry.is_active(&dispatch.enabled) {
                continue;
            }
            let link = Link::Hook(entry, dispatch.timeout_of(entry));
            if apply(governing, link, &mut arguments, &mut verdict, traced).await {
                break;
            }
        }
    }
    // G11: the tool's own decision, in the same type, combined as G4 says.
    if !matches!(verdict, Verdict::Deny { .. })
        && let Some(tool) = tool
    {
        match tool.requires_approval(&arguments) {
            ToolDecision::Deny { reason } => verdict = Verdict::Deny { hook: tool.name().to_owned(), reason },
            ToolDecision::Ask { reason } => {
                let reason = ApprovalReason::new(None, reason);
                match &mut verdict {
                    Verdict::Ask(reasons) => reasons.push(reason),
                    _ => verdict = Verdict::Ask(vec![reason]),
                }
            }
            _ => {}
        }
    }
    Governed { verdict, arguments: Ok(arguments) }
}

/// Runs one link on `arguments` and folds its decision into `verdict`; `true` when the chain
/// ends here (a `Deny`, or a failure that fails closed). With `traced`, the run is a hook span
/// like any other hook's (id, kind, source, duration), with its decision (G10).
async fn apply(
    governing: Governing<'_>,
    link: Link<'_>,
    arguments: &mut Value,
    verdict: &mut Verdict,
    traced: bool,
) -> bool {
    if !traced {
        return decide_and_fold(governing, &link, arguments, verdict).await.0;
    }
    traced_apply(governing, link, arguments, verdict).await
}

/// [`apply`] inside a hook span: the path taken when someone listens for hook spans.
#[cold]
async fn traced_apply(governing: Governing<'_>, link: Link<'_>, arguments: &mut Value, verdict: &mut Verdict) -> bool {
    use tracing::Instrument;
    let span = tracing::info_span!(
        target: dispatch::TARGET,
        "hook",
        otel.name = format!("hook {}", link.id()),
        hook.id = link.id(),
        hook.kind = hooks_core::HookKind::BeforeToolCall.name(),
        hook.source = link.source(),
        hook.decision = tracing::field::Empty,
        duration_us = tracing::field::Empty,
    );
    let started_at = std::time::Instant::now();
    let (ends, decision) = decide_and_fold(governing, &link, arguments, verdict).instrument(span.clone()).await;
    span.record("hook.decision", decision);
    // Signed: OpenTelemetry integers are `i64` (an unsigned field is exported as text).
    span.record("duration_us", i64::try_from(started_at.elapsed().as_micros()).unwrap_or(i64::MAX));
    ends
}

/// One link's run and its fold into `verdict`: whether the chain ends here, and the link's
/// decision in a word (`allow`, `deny`, `ask`, or what its failure decided).
async fn decide_and_fold(
    governing: Governing<'_>,
    link: &Link<'_>,
    arguments: &mut Value,
    verdict: &mut Verdict,
) -> (bool, &'static str) {
    let Governing { gate, tool, state, call } = governing;
    let before = arguments.clone();
    let outcome = match link {
        Link::Guard(guard) => {
            let timeout = guard.timeout().unwrap_or(gate.limits.hook_timeout);
            dispatch::governing::decide(guard.blocking(), timeout, || guard.decide(state, call, arguments)).await
        }
        Link::Hook(entry, timeout) => {
            let HookHandler::BeforeToolCall(adapter) = hooks_core::__private::handler(entry.hook) else {
                unreachable!("a {} hook in a before_tool_call chain", entry.hook.kind())
            };
            dispatch::governing::decide(entry.hook.blocking, *timeout, || match adapter {
                Adapter::Sync(adapter) => Decided::Ready(adapter(state, call, arguments, &entry.context)),
                Adapter::Async(adapter) => Decided::Pending(adapter(state, call, arguments, &entry.context)),
            })
            .await
        }
    };
    // G5: a rewrite must satisfy the tool's schema; a violation is the hook's failure.
    let outcome = match outcome {
        Ok(decision) if *arguments != before => match gate.governors.schemas.check(tool, arguments) {
            Ok(()) => Ok(decision),
            Err(violation) => Err(HookFailure::Error(HookError::new(format!(
                "its rewrite of the arguments is rejected: {violation}"
            )))),
        },
        other => other,
    };
    match outcome {
        Ok(ToolDecision::Deny { reason }) => {
            *verdict = Verdict::Deny { hook: link.id().to_owned(), reason };
            (true, "deny")
        }
        Ok(ToolDecision::Ask { reason }) => {
            let reason = ApprovalReason::new(Some(link.id()), reason);
            match verdict {
                Verdict::Ask(reasons) => reasons.push(reason),
                _ => *verdict = Verdict::Ask(vec![reason]),
            }
            (false, "ask")
        }
        Ok(_) => (false, "allow"),
        Err(failure) => {
            // The failed hook's changes are undone, whatever its policy (E7).
            *arguments = before;
            let on_failure = link.on_failure();
            dispatch::governing::log_failure(link.id(), &link.source(), &failure, on_failure);
            if on_failure != OnFailure::Deny {
                return (false, "allow (on_failure)");
            }
            *verdict = Verdict::Deny {
                hook: link.id().to_owned(),
                reason: format!(
                    "the guard `{}` could not decide ({}), and it fails closed",
                    link.id(),
                    failure_word(&failure)
                ),
            };
            (true, "deny (on_failure)")
        }
    }
}

/// What went wrong, in a word the model may read: never the hook's own message.
fn failure_word(failure: &HookFailure) -> &'static str {
    match failure {
        HookFailure::Error(_) => "it failed",
        HookFailure::Panic(_) => "it panicked",
        HookFailure::Timeout(_) => "it timed out",
    }
}

/// Checks arguments edited on approval against the tool's schema (G5).
pub(crate) fn check_edited(
    governors: &Governors,
    tool: Option<&Arc<dyn Tool>>,
    arguments: &Value,
) -> Result<(), String> {
    governors.schemas.check(tool, arguments).map_err(|violation| violation.to_string())
}
