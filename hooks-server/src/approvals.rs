//! Approval endpoints (A6): the tool calls of a thread that wait for a person, and the person's
//! decision on each. Only the thread's owner reaches them; to anyone else the thread does not
//! exist ([`AppState::thread_of`]).

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use hooks_runtime::approvals::{
    ApprovalChoice, ApprovalError, MAX_REASON_BYTES, ParkedToolCall, Remember, RememberScope,
};
use serde_json::Value;

use crate::auth::User;
use crate::body::AnyJson;
use crate::dto::approvals::{
    ApprovalList, Decision, DecisionAnswer, DecisionRequest, RememberRequest, RememberedList, RememberedView,
    WaitingCall,
};
use crate::error::{ApiError, printable};
use crate::state::AppState;
use crate::thread_entry::ThreadEntry;

/// The reason the model reads when a person denies a call without giving one.
const DENIED_WITHOUT_REASON: &str = "a person denied this tool call";

/// `GET /threads/{id}/approvals`: the calls that wait, in the model's call order, as the store
/// has them (also those another process parked, or parked before a restart).
pub(crate) async fn list(
    State(state): State<AppState>,
    User(user): User,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let entry = state.thread_of(&user, &id).await?;
    let pending = entry.thread.pending_approvals().await.map_err(|error| ApiError::store(&error))?;
    Ok(Json(ApprovalList { approvals: pending.iter().map(WaitingCall::from).collect() }).into_response())
}

/// `POST /threads/{id}/approvals/{callId}` `{"decision": "approve" | "deny",
/// "arguments_sha256", "reason"?, "arguments"?, "remember"?}`: decides one waiting call.
///
/// `remember` (`{"scope": "once" | "thread" | "user" | "always", "pattern"?}`, with an approval)
/// keeps the approval beyond this call (A9): for the exact arguments, or for the calls
/// `pattern` selects (a permission rule, `Bash(npm test:*)`). A pattern that does not parse or
/// does not select the call, or a `user` scope on a thread without a user, is 400
/// `invalid_remember` naming the problem, and nothing is decided; the answer's `remembered`
/// is the approval kept.
///
/// `arguments_sha256` is the hash the listing gave for the call, of the arguments the person
/// saw (A7); it is required (400 `missing_field`), and one that is not the hash of the
/// arguments the call waits with is 409 `stale_approval`: nothing is decided, nothing runs.
///
/// Edited `arguments` must satisfy the tool's schema (422 `invalid_arguments`, nothing
/// decided) and are governed again by the guards and hooks (G8): a deny answers 409
/// `edit_denied` with the reason, and the call is denied as a person's denial would deny it
/// (the turn goes on in the background once no call waits). A `reason` over
/// `MAX_REASON_BYTES` is 413 `reason_too_large`, nothing decided.
///
/// The answer comes once the decision is stored, and the turn it resumes runs in the
/// background, as `POST /threads/{id}/messages` runs its turn: a resumed turn runs tools and
/// model steps for as long as any run does, so a client that waited on the request would hold
/// a connection (and a request timeout) for it, and would learn of the run's progress from the
/// event stream anyway. So the last decision of a step answers 202 `{"runId", ...}` and the
/// run goes on between `run_started` and `run_finished` with that id, taking its turn among
/// the thread's runs and counted among its queued inputs; a decision while other calls of the
/// step still wait answers 200 with `runId` `null` and those calls in `pending`.
pub(crate) async fn decide(
    State(state): State<AppState>,
    User(user): User,
    Path((id, call_id)): Path<(String, String)>,
    AnyJson(body): AnyJson,
) -> Result<Response, ApiError> {
    let entry = state.thread_of(&user, &id).await?;
    let mut request: DecisionRequest = crate::body::parse(&body)?;
    let decision = request.decision.past_tense();
    let seen = request.arguments_sha256.clone();
    if !is_sha256(&seen) {
        return Err(ApiError::bad_request(
            "invalid_field",
            "field `arguments_sha256` is the SHA-256 of the listed arguments: 64 hexadecimal digits",
        ));
    }
    let remember = remember(request.decision, request.remember.take(), &user, state.config.allow_remember_always)?;
    let choice = choice(request)?;
    let slot = entry.take_queue_slot(state.config.max_queued_inputs)?;
    // G8: edited arguments a guard denies deny the call; the turn goes on as after a denial,
    // and the answer says why.
    let mut edit_denied = None;
    let mut remembered = None;
    match entry.thread.record_bound_decision_remembering(&call_id, &seen, choice, remember).await {
        Ok(made) => remembered = made.map(RememberedView::owned),
        Err(error @ (ApprovalError::EditDenied { .. } | ApprovalError::PolicyDenied { .. })) => {
            edit_denied = Some(decision_error(&entry, &error));
        }
        // A call of a finished step is `AlreadyDecided` from the runtime's ledger, as one
        // decided during the step is.
        Err(error) => return Err(decision_error(&entry, &error)),
    }
    // A failed read resumes all the same: with calls still waiting, the run does nothing.
    let pending = entry.thread.pending_approvals().await.map(|calls| ids(&calls)).unwrap_or_default();
    if let Some(denied) = edit_denied {
        if pending.is_empty() {
            let run_id = crate::ids::resume_run_id();
            crate::runs::spawn(
                entry,
                slot,
                run_id,
                |entry| async move { entry.thread.resume_approvals().await.map(Some) },
            );
        }
        return Err(denied);
    }
    if !pending.is_empty() {
        let body = DecisionAnswer { call_id, decision, run_id: None, pending, remembered };
        return Ok((StatusCode::OK, Json(body)).into_response());
    }
    let run_id = crate::ids::resume_run_id();
    crate::runs::spawn(
        entry,
        slot,
        run_id.clone(),
        |entry| async move { entry.thread.resume_approvals().await.map(Some) },
    );
    let body = DecisionAnswer { call_id, decision, run_id: Some(run_id), pending: Vec::new(), remembered };
    Ok((StatusCode::ACCEPTED, Json(body)).into_response())
}

/// The runtime's choice of a decision body: `reason` goes with a denial and `arguments` with an
/// approval; errors name the field, never echo a value.
fn choice(request: DecisionRequest) -> Result<ApprovalChoice, ApiError> {
    let DecisionRequest { decision, reason, arguments, .. } = request;
    let misplaced = |field: &str, goes_with: &str| {
        ApiError::bad_request(
            "invalid_field",
            format!("field `{field}` of an approval decision goes with `\"decision\": \"{goes_with}\"`"),
        )
    };
    match decision {
        Decision::Approve if reason.is_some() => Err(misplaced("reason", "deny")),
        Decision::Approve => Ok(ApprovalChoice::Approve { arguments: arguments.map(Value::Object) }),
        Decision::Deny if arguments.is_some() => Err(misplaced("arguments", "approve")),
        Decision::Deny => {
            Ok(ApprovalChoice::Deny { reason: reason.unwrap_or_else(|| DENIED_WITHOUT_REASON.to_owned()) })
        }
    }
}

/// What a decision's `remember` asks (A9), made by `user`: `once` without one. A scope other
/// than the four words, or one with a denial, is 400 naming the field; `always`, which would
/// answer other users' calls, is 403 unless the server allows it
/// ([`ServerConfig::allow_remember_always`](crate::ServerConfig::allow_remember_always)).
fn remember(
    decision: Decision,
    request: Option<RememberRequest>,
    user: &str,
    allow_always: bool,
) -> Result<Remember, ApiError> {
    let Some(RememberRequest { scope, pattern }) = request else { return Ok(Remember::default()) };
    let Some(scope) = RememberScope::from_name(&scope) else {
        return Err(ApiError::bad_request(
            "invalid_field",
            "field `remember.scope` is one of `once`, `thread`, `user` and `always`",
        ));
    };
    if decision == Decision::Deny && scope != RememberScope::Once {
        return Err(ApiError::bad_request(
            "invalid_field",
            "field `remember` of an approval decision goes with `\"decision\": \"approve\"`: a denial decides one call",
        ));
    }
    if scope == RememberScope::Always && !allow_always {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "remember_scope_forbidden",
            "an `always` approval would answer every user's calls, and this server does not let a user make one; \
             remember it for the thread or the user",
        ));
    }
    let remember = Remember::new(scope).by(user);
    Ok(match pattern {
        Some(pattern) => remember.with_pattern(pattern),
        None => remember,
    })
}

/// `GET /approvals/remembered`: the caller's remembered approvals (A9), oldest first: those made
/// on the caller's threads, through this server or any other on the store.
pub(crate) async fn list_remembered(State(state): State<AppState>, User(user): User) -> Result<Response, ApiError> {
    let kept = state.runtime.remembered_approvals_of_user(&user).await.map_err(|error| ApiError::store(&error))?;
    Ok(Json(RememberedList { remembered: kept.iter().map(RememberedView::from).collect() }).into_response())
}

/// `DELETE /approvals/remembered/{id}`: revokes the caller's remembered approval `id` (204);
/// later asks it answered wait for a person again. Another user's, like a missing one, is 404
/// `remembered_approval_not_found`, so ids do not leak.
pub(crate) async fn revoke_remembered(
    State(state): State<AppState>,
    User(user): User,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let revoked =
        state.runtime.revoke_remembered_approval_of_user(&user, &id).await.map_err(|error| ApiError::store(&error))?;
    if !revoked {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "remembered_approval_not_found",
            format!("you have no remembered approval `{}`; GET /approvals/remembered lists yours", printable(&id)),
        ));
    }
    Ok(StatusCode::NO_CONTENT)
}

/// The API error of a refused decision.
fn decision_error(entry: &ThreadEntry, error: &ApprovalError) -> ApiError {
    match error {
        ApprovalError::UnknownCall { call, .. } => ApiError::new(
            StatusCode::NOT_FOUND,
            "approval_not_found",
            format!(
                "thread `{}` has no tool call `{}` waiting for approval; GET /threads/{}/approvals lists them",
                entry.record.id,
                printable(call),
                entry.record.id
            ),
        ),
        ApprovalError::AlreadyDecided { call, state } => ApiError::new(
            StatusCode::CONFLICT,
            "already_decided",
            format!(
                "the tool call `{}` was already decided (it is {}); a call is decided once",
                printable(call),
                state.as_str()
            ),
        ),
        // The problem names schema paths and rules, never the values.
        ApprovalError::InvalidArguments { call, problem } => ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_arguments",
            format!("the edited arguments of `{}` do not satisfy the tool's schema: {problem}", printable(call)),
        ),
        // G8: the reason is the guard's, written for people and the model; never the values.
        ApprovalError::EditDenied { call, hook, reason } => ApiError::new(
            StatusCode::CONFLICT,
            "edit_denied",
            format!(
                "the edited arguments of `{}` were denied by `{hook}`: {reason}; the call is denied and the turn goes on",
                printable(call)
            ),
        ),
        // A8: governed again under the policy that changed while the call waited.
        ApprovalError::PolicyDenied { call, hook, reason } => ApiError::new(
            StatusCode::CONFLICT,
            "policy_denied",
            format!(
                "the policy changed while `{}` waited, and under the current one `{hook}` denied it: {reason}; the call is denied and the turn goes on",
                printable(call)
            ),
        ),
        // A7: the hashes are of the arguments, never the values.
        ApprovalError::Stale { call, current, .. } => ApiError::new(
            StatusCode::CONFLICT,
            "stale_approval",
            format!(
                "the decision on `{}` names other arguments than the ones it waits with (SHA-256 {current}); \
                 nothing was decided: GET /threads/{}/approvals lists the call as it is now",
                printable(call),
                entry.record.id
            ),
        ),
        // A9: the problem names the pattern the client sent, or the scope.
        ApprovalError::RememberRefused { problem, .. } => ApiError::bad_request(
            "invalid_remember",
            format!(
                "the approval cannot be remembered as asked: {}; nothing was decided",
                problem.chars().filter(|c| !c.is_control()).collect::<String>()
            ),
        ),
        ApprovalError::ReasonTooLong { bytes, .. } => ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "reason_too_large",
            format!("field `reason` is {bytes} bytes; the limit is {MAX_REASON_BYTES} bytes"),
        ),
        other => ApiError::store(other),
    }
}

/// 409 `awaiting_approval`, naming the waiting calls, when the thread's tool calls wait (A5).
pub(crate) async fn refuse_while_waiting(entry: &ThreadEntry) -> Result<(), ApiError> {
    let pending = entry.thread.pending_approvals().await.map_err(|error| ApiError::store(&error))?;
    if pending.is_empty() {
        return Ok(());
    }
    let calls: Vec<String> = ids(&pending).iter().map(|id| format!("`{}`", printable(id))).collect();
    let thread = &entry.record.id;
    Err(ApiError::new(
        StatusCode::CONFLICT,
        "awaiting_approval",
        format!(
            "the thread waits for approvals of the tool calls {}; decide them with POST /threads/{thread}/approvals/{{callId}} \
             (or stop the run with POST /threads/{thread}/abort) before sending a message",
            calls.join(", ")
        ),
    ))
}

/// Whether `text` is written as a SHA-256: 64 hexadecimal digits.
fn is_sha256(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|byte| byte.is_ascii_hexdigit())
}

fn ids(calls: &[ParkedToolCall]) -> Vec<String> {
    calls.iter().map(|call| call.id.clone()).collect()
}
