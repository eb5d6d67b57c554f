//! The gate's deciders (G2-G6): the runtime-wide guards, then the `before_tool_call` hooks a
//! thread's resolution selects, each on the arguments the previous one left; a `Deny` ends
//! the chain. Both are steps of the admission pipeline (`admission.rs`).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use hooks_core::__private::{Adapter, HookHandler, ResolvedHook};
use hooks_core::{HookError, OnFailure, ToolDecision};
use serde_json::Value;

use super::admission::{Answer, Arguments, Decider, Review};
use super::governors::Governors;
use super::guard::ToolGuard;
use crate::approval_records::ApprovalReason;
use crate::dispatch::governing::Decided;
use crate::dispatch::{self, HookFailure};
use crate::tool::Tool;

/// The runtime-wide guards (`Runtime::builder().guard::<id>()`): every call of every thread.
pub(crate) struct Guards;

#[async_trait]
impl Decider for Guards {
    fn name(&self) -> &'static str {
        "guards"
    }

    fn traces_itself(&self) -> bool {
        true
    }

    fn policy(&self, guards: &[Arc<dyn ToolGuard>]) -> Vec<String> {
        guards.iter().map(|guard| guard.id().to_owned()).collect()
    }

    async fn decide(&self, review: &Review<'_>, arguments: &mut Arguments, _asked: &[ApprovalReason]) -> Vec<Answer> {
        let guards = review.guards;
        // G10: asked once per call, so a gate nobody traces builds no span.
        let traced = !guards.is_empty() && dispatch::spans_wanted();
        run_links(review, guards.iter().map(|guard| Link::Guard(guard.as_ref())), arguments, traced).await
    }
}

/// The thread's `before_tool_call` hooks, in resolution order.
pub(crate) struct BeforeToolCallHooks;

#[async_trait]
impl Decider for BeforeToolCallHooks {
    fn name(&self) -> &'static str {
        "before_tool_call"
    }

    fn traces_itself(&self) -> bool {
        true
    }

    async fn decide(&self, review: &Review<'_>, arguments: &mut Arguments, _asked: &[ApprovalReason]) -> Vec<Answer> {
        let Some(dispatch) = &review.hooks else { return Vec::new() };
        let traced = dispatch::spans_wanted();
        let links = dispatch
            .chain
            .iter()
            .filter(|entry| entry.is_active(&dispatch.enabled))
            .map(|entry| Link::Hook(entry, dispatch.timeout_of(entry)));
        run_links(review, links, arguments, traced).await
    }
}

/// Runs `links` in order on `arguments`, each answer recorded, up to the first deny.
async fn run_links<'a>(
    review: &Review<'_>,
    links: impl Iterator<Item = Link<'a>>,
    arguments: &mut Arguments,
    traced: bool,
) -> Vec<Answer> {
    let mut answers = Vec::new();
    for link in links {
        // A link may rewrite the arguments: reached for a change only when a link runs.
        let answer = apply(review, link, arguments.for_change(), traced).await;
        let ends = matches!(answer.decision, ToolDecision::Deny { .. });
        answers.push(answer);
        if ends {
            break;
        }
    }
    answers
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

/// Runs one link on `arguments`: its answer (a failure answers as its policy says). With
/// `traced`, the run is a hook span like any other hook's (id, kind, source, duration), with
/// its decision (G10).
async fn apply(review: &Review<'_>, link: Link<'_>, arguments: &mut Value, traced: bool) -> Answer {
    if !traced {
        return decide(review, &link, arguments).await.0;
    }
    traced_apply(review, link, arguments).await
}

/// [`apply`] inside a hook span: the path taken when someone listens for hook spans.
#[cold]
async fn traced_apply(review: &Review<'_>, link: Link<'_>, arguments: &mut Value) -> Answer {
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
    let (answer, decision) = decide(review, &link, arguments).instrument(span.clone()).await;
    span.record("hook.decision", decision);
    // Signed: OpenTelemetry integers are `i64` (an unsigned field is exported as text).
    span.record("duration_us", i64::try_from(started_at.elapsed().as_micros()).unwrap_or(i64::MAX));
    answer
}

/// One link's run: its answer, and its decision in a word (`allow`, `deny`, `ask`, or what its
/// failure decided).
async fn decide(review: &Review<'_>, link: &Link<'_>, arguments: &mut Value) -> (Answer, &'static str) {
    let Review { state, call, tool, schemas, limits, .. } = *review;
    let before = arguments.clone();
    let outcome = match link {
        Link::Guard(guard) => {
            let timeout = guard.timeout().unwrap_or(limits.hook_timeout);
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
        Ok(decision) if *arguments != before => match schemas.check(tool, arguments) {
            Ok(()) => Ok(decision),
            Err(violation) => Err(HookFailure::Error(HookError::new(format!(
                "its rewrite of the arguments is rejected: {violation}"
            )))),
        },
        other => other,
    };
    let by = Some(link.id());
    match outcome {
        Ok(decision @ ToolDecision::Deny { .. }) => (Answer::new(by, decision), "deny"),
        Ok(decision @ ToolDecision::Ask { .. }) => (Answer::new(by, decision), "ask"),
        Ok(decision) => (Answer::new(by, decision), "allow"),
        Err(failure) => {
            // The failed hook's changes are undone, whatever its policy (E7).
            *arguments = before;
            let on_failure = link.on_failure();
            dispatch::governing::log_failure(link.id(), &link.source(), &failure, on_failure);
            if on_failure != OnFailure::Deny {
                return (Answer::new(by, ToolDecision::allow()), "allow (on_failure)");
            }
            let reason =
                format!("the guard `{}` could not decide ({}), and it fails closed", link.id(), failure_word(&failure));
            (Answer::new(by, ToolDecision::deny(reason)), "deny (on_failure)")
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
