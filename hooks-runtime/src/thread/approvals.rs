//! The approval API of a thread (A1-A5): list the calls that wait, approve or deny them; the
//! last decision of a step resumes the turn.

use serde_json::Value;
use tracing::Instrument as _;

use super::edited_arguments::{self, Regoverned};
use super::resuming::{self, Finish};
use super::{RunOutcome, RuntimeError, Thread, reentry, run_permit, turn};
use crate::admission_record::{ApprovalMatcher, RememberScope};
use crate::approval_records::{ApprovalDecision, ApprovalState, ParkedToolCall, ToolCallChange};
use crate::events::ThreadStatus;
use crate::governing::caps::MAX_REASON_BYTES;
use crate::remembered_approvals::{Remember, RememberedApproval};

/// Who decided, in the ledger, for a decision through [`Thread::record_decision`].
const PERSON: &str = "person";

/// A person's decision on a waiting call, for [`Thread::record_decision`].
///
/// ```
/// use hooks_runtime::approvals::ApprovalChoice;
///
/// let choice = ApprovalChoice::Deny { reason: "not this account".into() };
/// assert!(matches!(choice, ApprovalChoice::Deny { .. }));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ApprovalChoice {
    /// The call runs: with these arguments when given, which must satisfy the tool's schema (G5).
    Approve {
        /// Edited arguments, or `None` for the ones the call waits with.
        arguments: Option<Value>,
    },
    /// The call never runs; the model gets an error result with `reason`.
    Deny {
        /// Why, as the model reads it.
        reason: String,
    },
}

impl Thread {
    /// The tool calls that wait for a person's decision (A1), in the model's call order, as the
    /// store has them: also after a restart, and those another process parked (A2).
    pub async fn pending_approvals(&self) -> Result<Vec<ParkedToolCall>, RuntimeError> {
        let parked = self.shared.journal.parked_calls().await?;
        Ok(parked.into_iter().filter(|call| call.state == ApprovalState::Pending).collect())
    }

    /// Approves waiting call `call_id` with whatever arguments it waits with when the decision
    /// is stored: for code that decides without showing them to a person. A decision on what a
    /// person saw is [`Thread::decide_listed`] (or [`Thread::decide_bound`]), refused as stale
    /// when the arguments differ (A7).
    ///
    /// The call runs, once (A3, A4). While other calls of its step
    /// still wait, the outcome's status is `awaiting_approval`; the last decision resumes the
    /// turn and returns the outcome of the run it resumed.
    ///
    /// ```
    /// use hooks_runtime::prelude::*;
    /// use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
    /// use hooks_runtime::tool::FnTool;
    /// use hooks_runtime::{Runtime, ThreadOptions, store::ThreadStatus};
    ///
    /// define_prompt! { name: pay_prompt, model: "m", prompt: "Pay.", tools: ["pay"] }
    /// define_agent! { name: payer, side_a: { prompt: pay_prompt, stop_on_response: true } }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let pay = FnTool::new("pay", "Pays.", |_args| async { HookToolResult::success("paid") }).with_approval(|_| ToolDecision::ask("payments need a person"));
    /// let model = ScriptedModel::new([
    ///     ScriptedResponse::tool_call("call_1", "pay", r#"{"amount":5}"#),
    ///     ScriptedResponse::text("Paid."),
    /// ]);
    /// let runtime = Runtime::builder().agent::<payer>().model("m", model).tool(pay).build().unwrap();
    /// let thread = runtime.create_thread("payer", ThreadOptions::default()).await.unwrap();
    /// let outcome = thread.send("pay 5").await.unwrap();
    /// assert_eq!(outcome.status, ThreadStatus::AwaitingApproval);
    /// assert_eq!(thread.pending_approvals().await.unwrap()[0].id, "call_1");
    /// let outcome = thread.approve("call_1").await.unwrap();
    /// assert_eq!(outcome.reply.as_deref(), Some("Paid."));
    /// # });
    /// ```
    pub async fn approve(&self, call_id: &str) -> Result<RunOutcome, ApprovalError> {
        self.decide(call_id, ApprovalChoice::Approve { arguments: None }).await
    }

    /// Approves waiting call `call_id` with edited arguments, which must satisfy the tool's
    /// parameters schema (G5) and are governed again as the model's were (G8): a deny of a
    /// runtime-wide guard or a `before_tool_call` hook denies the call and answers
    /// [`ApprovalError::EditDenied`] (after the turn went on), an ask is answered by this
    /// approval; otherwise as [`Thread::approve`].
    pub async fn approve_with(&self, call_id: &str, arguments: Value) -> Result<RunOutcome, ApprovalError> {
        self.decide(call_id, ApprovalChoice::Approve { arguments: Some(arguments) }).await
    }

    /// Denies waiting call `call_id`: it never runs, and the model gets an error result with
    /// `reason` (A3); otherwise as [`Thread::approve`].
    pub async fn deny(&self, call_id: &str, reason: &str) -> Result<RunOutcome, ApprovalError> {
        self.decide(call_id, ApprovalChoice::Deny { reason: reason.to_owned() }).await
    }

    /// Decides the waiting call `listed`, as [`Thread::pending_approvals`] listed it, bound to
    /// the arguments it was listed with (A7): when the call's stored arguments no longer hash to
    /// [`listed.arguments_sha256()`](ParkedToolCall::arguments_sha256), the decision is refused
    /// as [`ApprovalError::Stale`] and nothing changes. Otherwise as [`Thread::approve`],
    /// [`Thread::approve_with`] or [`Thread::deny`], by `choice`.
    ///
    /// ```
    /// use hooks_runtime::prelude::*;
    /// use hooks_runtime::approvals::ApprovalChoice;
    /// use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
    /// use hooks_runtime::tool::FnTool;
    /// use hooks_runtime::{Runtime, ThreadOptions};
    ///
    /// define_prompt! { name: bound_prompt, model: "m", prompt: "Pay.", tools: ["pay"] }
    /// define_agent! { name: bound_payer, side_a: { prompt: bound_prompt, stop_on_response: true } }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let pay = FnTool::new("pay", "Pays.", |_args| async { HookToolResult::success("paid") }).with_approval(|_| ToolDecision::ask("payments need a person"));
    /// let model = ScriptedModel::new([
    ///     ScriptedResponse::tool_call("call_1", "pay", r#"{"amount":5}"#),
    ///     ScriptedResponse::text("Paid."),
    /// ]);
    /// let runtime = Runtime::builder().agent::<bound_payer>().model("m", model).tool(pay).build().unwrap();
    /// let thread = runtime.create_thread("bound_payer", ThreadOptions::default()).await.unwrap();
    /// thread.send("pay 5").await.unwrap();
    /// let listed = thread.pending_approvals().await.unwrap().remove(0);
    /// let outcome = thread.decide_listed(&listed, ApprovalChoice::Approve { arguments: None }).await.unwrap();
    /// assert_eq!(outcome.reply.as_deref(), Some("Paid."));
    /// # });
    /// ```
    pub async fn decide_listed(
        &self,
        listed: &ParkedToolCall,
        choice: ApprovalChoice,
    ) -> Result<RunOutcome, ApprovalError> {
        self.decide_bound(&listed.id, &listed.arguments_sha256(), choice).await
    }

    /// Decides waiting call `call_id` only if its stored arguments hash to `arguments_sha256`
    /// ([`ParkedToolCall::arguments_sha256`]), the hash of the arguments the person saw (A7); a
    /// mismatch is [`ApprovalError::Stale`] and changes nothing. [`Thread::decide_listed`] with
    /// the hash given directly, as a server receives it.
    pub async fn decide_bound(
        &self,
        call_id: &str,
        arguments_sha256: &str,
        choice: ApprovalChoice,
    ) -> Result<RunOutcome, ApprovalError> {
        let recorded = self.record(call_id, Some(arguments_sha256), choice, &Remember::default()).await;
        self.finish_decision(recorded.map(drop)).await
    }

    /// [`Thread::decide_listed`], remembering an approval beyond this call (A9): with
    /// `remember`'s scope (`thread`, `user`, `always`; `once` remembers nothing) for the exact
    /// arguments the call runs with, or for the calls `remember.pattern` selects (a rule in the
    /// permission-rule syntax, read as an `allow` rule). The remembered approval answers later
    /// asks within its scope; any deny still denies them. A pattern that does not parse or does
    /// not select this call, a denial, a `user` scope on a thread without a user, or a store that
    /// keeps no remembered approvals is [`ApprovalError::RememberRefused`], and nothing is
    /// decided.
    ///
    /// ```
    /// use hooks_runtime::prelude::*;
    /// use hooks_runtime::approvals::{ApprovalChoice, ApprovalMatcher, Remember, RememberScope};
    /// use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
    /// use hooks_runtime::tool::FnTool;
    /// use hooks_runtime::{Runtime, ThreadOptions, store::ThreadStatus};
    ///
    /// define_prompt! { name: npm_prompt, model: "m", prompt: "Test.", tools: ["Bash"] }
    /// define_agent! { name: npm_agent, side_a: { prompt: npm_prompt, stop_on_response: true } }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let bash = FnTool::new("Bash", "Runs a command.", |_args| async { HookToolResult::success("ok") })
    ///     .with_approval(|_| ToolDecision::ask("commands need a person"));
    /// let model = ScriptedModel::new([
    ///     ScriptedResponse::tool_call("call_1", "Bash", r#"{"command":"npm test"}"#),
    ///     ScriptedResponse::text("Tested."),
    ///     ScriptedResponse::tool_call("call_2", "Bash", r#"{"command":"npm test --watch"}"#),
    ///     ScriptedResponse::text("Tested again."),
    /// ]);
    /// let runtime = Runtime::builder().agent::<npm_agent>().model("m", model).tool(bash).build().unwrap();
    /// let thread = runtime.create_thread("npm_agent", ThreadOptions::default()).await.unwrap();
    /// thread.send("test").await.unwrap();
    /// let listed = thread.pending_approvals().await.unwrap().remove(0);
    /// let remember = Remember::new(RememberScope::Thread).with_pattern("Bash(npm test:*)");
    /// let choice = ApprovalChoice::Approve { arguments: None };
    /// thread.decide_listed_remembering(&listed, choice, remember).await.unwrap();
    /// // The next `npm test` call of this thread is answered by the remembered approval.
    /// let outcome = thread.send("test again").await.unwrap();
    /// assert_eq!(outcome.status, ThreadStatus::Idle);
    /// let kept = runtime.remembered_approvals().await.unwrap();
    /// assert_eq!(kept[0].matcher, ApprovalMatcher::Pattern { rule: "Bash(npm test:*)".into() });
    /// # });
    /// ```
    pub async fn decide_listed_remembering(
        &self,
        listed: &ParkedToolCall,
        choice: ApprovalChoice,
        remember: Remember,
    ) -> Result<RunOutcome, ApprovalError> {
        let recorded = self.record(&listed.id, Some(&listed.arguments_sha256()), choice, &remember).await;
        self.finish_decision(recorded.map(drop)).await
    }

    /// [`Thread::approve`], remembering the approval with `remember` as
    /// [`Thread::decide_listed_remembering`] does.
    ///
    /// ```
    /// use hooks_runtime::prelude::*;
    /// use hooks_runtime::approvals::{Remember, RememberScope};
    /// use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
    /// use hooks_runtime::tool::FnTool;
    /// use hooks_runtime::{Runtime, ThreadOptions, store::ThreadStatus};
    ///
    /// define_prompt! { name: fee_prompt, model: "m", prompt: "Pay.", tools: ["fee"] }
    /// define_agent! { name: fee_agent, side_a: { prompt: fee_prompt, stop_on_response: true } }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let fee = FnTool::new("fee", "Pays a fee.", |_args| async { HookToolResult::success("paid") })
    ///     .with_approval(|_| ToolDecision::ask("fees need a person"));
    /// let model = ScriptedModel::new([
    ///     ScriptedResponse::tool_call("call_1", "fee", r#"{"amount":5}"#),
    ///     ScriptedResponse::text("Paid."),
    ///     ScriptedResponse::tool_call("call_2", "fee", r#"{"amount":5}"#),
    ///     ScriptedResponse::text("Paid again."),
    /// ]);
    /// let runtime = Runtime::builder().agent::<fee_agent>().model("m", model).tool(fee).build().unwrap();
    /// let thread = runtime.create_thread("fee_agent", ThreadOptions::default()).await.unwrap();
    /// thread.send("pay the fee").await.unwrap();
    /// // The exact arguments, for every thread: the same fee is paid without waiting.
    /// thread.approve_remembering("call_1", Remember::new(RememberScope::Always)).await.unwrap();
    /// let other = runtime.create_thread("fee_agent", ThreadOptions::default()).await.unwrap();
    /// assert_eq!(other.send("pay it again").await.unwrap().status, ThreadStatus::Idle);
    /// # });
    /// ```
    pub async fn approve_remembering(&self, call_id: &str, remember: Remember) -> Result<RunOutcome, ApprovalError> {
        let recorded = self.record(call_id, None, ApprovalChoice::Approve { arguments: None }, &remember).await;
        self.finish_decision(recorded.map(drop)).await
    }

    async fn decide(&self, call_id: &str, choice: ApprovalChoice) -> Result<RunOutcome, ApprovalError> {
        let recorded = self.record(call_id, None, choice, &Remember::default()).await;
        self.finish_decision(recorded.map(drop)).await
    }

    async fn finish_decision(&self, recorded: Result<(), ApprovalError>) -> Result<RunOutcome, ApprovalError> {
        match recorded {
            Ok(()) => Ok(self.finish_parked(Finish::Resume).await?),
            // G8: the call is denied as a person's denial would deny it, and the turn goes on
            // when it was the last to decide; the decider learns why from the error.
            Err(denied @ (ApprovalError::EditDenied { .. } | ApprovalError::PolicyDenied { .. })) => {
                self.finish_parked(Finish::Resume).await?;
                Err(denied)
            }
            Err(error) => Err(error),
        }
    }

    /// Stores a decision on waiting call `call_id` (one conditional write, A4) and sends
    /// `approval_resolved`, without resuming the turn: [`Thread::resume_approvals`] does that,
    /// once the step's last call is decided. For a caller that answers as soon as the decision
    /// is kept and runs the turn later, as a server does; [`Thread::approve`] and
    /// [`Thread::deny`] are the two together. A process that stops in between leaves the
    /// decision kept and the turn waiting, as it would stop in the middle of `approve`.
    ///
    /// ```
    /// use hooks_runtime::prelude::*;
    /// use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
    /// use hooks_runtime::tool::FnTool;
    /// use hooks_runtime::{Runtime, ThreadOptions};
    /// use hooks_runtime::approvals::ApprovalChoice;
    ///
    /// define_prompt! { name: wire_prompt, model: "m", prompt: "Wire.", tools: ["wire"] }
    /// define_agent! { name: wirer, side_a: { prompt: wire_prompt, stop_on_response: true } }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let wire = FnTool::new("wire", "Wires money.", |_args| async { HookToolResult::success("sent") }).with_approval(|_| ToolDecision::ask("payments need a person"));
    /// let model = ScriptedModel::new([
    ///     ScriptedResponse::tool_call("call_1", "wire", r#"{"amount":5}"#),
    ///     ScriptedResponse::text("Not sent."),
    /// ]);
    /// let runtime = Runtime::builder().agent::<wirer>().model("m", model).tool(wire).build().unwrap();
    /// let thread = runtime.create_thread("wirer", ThreadOptions::default()).await.unwrap();
    /// thread.send("wire 5").await.unwrap();
    /// thread.record_decision("call_1", ApprovalChoice::Deny { reason: "not today".into() }).await.unwrap();
    /// assert!(thread.pending_approvals().await.unwrap().is_empty());
    /// let outcome = thread.resume_approvals().await.unwrap();
    /// assert_eq!(outcome.reply.as_deref(), Some("Not sent."));
    /// # });
    /// ```
    pub async fn record_decision(&self, call_id: &str, choice: ApprovalChoice) -> Result<(), ApprovalError> {
        self.record(call_id, None, choice, &Remember::default()).await.map(drop)
    }

    /// [`Thread::record_decision`] bound to the arguments the person saw (A7): refused as
    /// [`ApprovalError::Stale`], changing nothing, when the call's stored arguments do not hash
    /// to `arguments_sha256` ([`ParkedToolCall::arguments_sha256`]). The server's decision
    /// route takes this form.
    pub async fn record_bound_decision(
        &self,
        call_id: &str,
        arguments_sha256: &str,
        choice: ApprovalChoice,
    ) -> Result<(), ApprovalError> {
        self.record(call_id, Some(arguments_sha256), choice, &Remember::default()).await.map(drop)
    }

    /// [`Thread::record_bound_decision`], remembering the approval with `remember` as
    /// [`Thread::decide_listed_remembering`] does: the remembered approval, for a scope other
    /// than `once`. The server's decision route takes this form.
    ///
    /// ```
    /// use hooks_runtime::prelude::*;
    /// use hooks_runtime::approvals::{ApprovalChoice, Remember, RememberScope};
    /// use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
    /// use hooks_runtime::tool::FnTool;
    /// use hooks_runtime::{Runtime, ThreadOptions};
    ///
    /// define_prompt! { name: ship_prompt, model: "m", prompt: "Ship.", tools: ["ship"] }
    /// define_agent! { name: shipper, side_a: { prompt: ship_prompt, stop_on_response: true } }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let ship = FnTool::new("ship", "Ships a parcel.", |_args| async { HookToolResult::success("shipped") })
    ///     .with_approval(|_| ToolDecision::ask("shipping needs a person"));
    /// let model = ScriptedModel::new([ScriptedResponse::tool_call("call_1", "ship", r#"{"to":"Lyon"}"#)]);
    /// let runtime = Runtime::builder().agent::<shipper>().model("m", model).tool(ship).build().unwrap();
    /// let options = ThreadOptions::default().user("alice");
    /// let thread = runtime.create_thread("shipper", options).await.unwrap();
    /// thread.send("ship it").await.unwrap();
    /// let listed = thread.pending_approvals().await.unwrap().remove(0);
    /// let remember = Remember::new(RememberScope::User).with_pattern("ship(Lyon)").by("alice");
    /// let approve = ApprovalChoice::Approve { arguments: None };
    /// let kept = thread
    ///     .record_bound_decision_remembering("call_1", &listed.arguments_sha256(), approve, remember)
    ///     .await
    ///     .unwrap()
    ///     .expect("a `user` approval is kept");
    /// assert_eq!((kept.user_id.as_deref(), kept.created_by.as_str()), (Some("alice"), "alice"));
    /// # });
    /// ```
    pub async fn record_bound_decision_remembering(
        &self,
        call_id: &str,
        arguments_sha256: &str,
        choice: ApprovalChoice,
        remember: Remember,
    ) -> Result<Option<RememberedApproval>, ApprovalError> {
        self.record(call_id, Some(arguments_sha256), choice, &remember).await
    }

    async fn record(
        &self,
        call_id: &str,
        bound_to: Option<&str>,
        choice: ApprovalChoice,
        remember: &Remember,
    ) -> Result<Option<RememberedApproval>, ApprovalError> {
        self.refuse_if_held("approve")?;
        let shared = &self.shared;
        let parked = shared.journal.parked_calls().await?;
        let Some(call) = parked.iter().find(|call| call.id == call_id) else {
            // O7: a call of a finished step is in the ledger, decided; only a call that never
            // waited here is unknown.
            return Err(match shared.journal.ledger(call_id).await? {
                Some(call) => ApprovalError::AlreadyDecided { call: call_id.to_owned(), state: call.state },
                None => ApprovalError::UnknownCall { thread: shared.id.clone(), call: call_id.to_owned() },
            });
        };
        if call.state != ApprovalState::Pending {
            return Err(ApprovalError::AlreadyDecided { call: call_id.to_owned(), state: call.state });
        }
        // A7: a decision on other arguments than the ones the call waits with decides nothing.
        // A pending call's arguments change only with the decision's own conditional write.
        if let Some(seen) = bound_to {
            let current = call.arguments_sha256();
            if !seen.eq_ignore_ascii_case(&current) {
                return Err(ApprovalError::Stale { call: call_id.to_owned(), seen: seen.to_owned(), current });
            }
        }
        // A9: what is to be remembered is checked before anything is decided.
        let remembering = match remember.scope {
            RememberScope::Once => None,
            _ => Some(self.check_remember(call, &choice, remember).await?),
        };
        // A decision moves a pending call.
        let decide = |to| ToolCallChange::new(call_id, ApprovalState::Pending, to);
        let (change, resolved) = match choice {
            ApprovalChoice::Approve { arguments: None } if policy_changed(shared, call) => {
                // A8: the policy changed while the call waited: the current one decides first.
                match edited_arguments::regovern(shared, call, call.arguments.clone()).await {
                    Regoverned::Approved(arguments) => {
                        (decide(ApprovalState::Approved).with_arguments(arguments), ApprovalDecision::Approved)
                    }
                    Regoverned::Denied { hook, reason } => {
                        let denial = format!(
                            "the policy changed while the call waited, and under the current one `{hook}` denied it: {reason}"
                        );
                        let change = decide(ApprovalState::Denied).with_reason(denial).by(hook.as_str());
                        self.advance(change, ApprovalDecision::Denied).await?;
                        return Err(ApprovalError::PolicyDenied { call: call_id.to_owned(), hook, reason });
                    }
                }
            }
            ApprovalChoice::Approve { arguments: None } => {
                (decide(ApprovalState::Approved), ApprovalDecision::Approved)
            }
            ApprovalChoice::Approve { arguments: Some(arguments) } => {
                crate::governing::gate::check_edited(
                    &shared.runtime.governors,
                    shared.runtime.registries.tools.get(&call.tool).as_ref(),
                    &arguments,
                )
                .map_err(|problem| ApprovalError::InvalidArguments { call: call_id.to_owned(), problem })?;
                // G8: the edit is governed again; a deny denies the call, and says why.
                match edited_arguments::regovern(shared, call, arguments).await {
                    Regoverned::Approved(arguments) => {
                        (decide(ApprovalState::Approved).with_arguments(arguments), ApprovalDecision::Approved)
                    }
                    Regoverned::Denied { hook, reason } => {
                        let denial = format!("the arguments edited on approval were denied by `{hook}`: {reason}");
                        // The ledger names the hook that denied the edit (O7).
                        let change = decide(ApprovalState::Denied).with_reason(denial).by(hook.as_str());
                        self.advance(change, ApprovalDecision::Denied).await?;
                        return Err(ApprovalError::EditDenied { call: call_id.to_owned(), hook, reason });
                    }
                }
            }
            ApprovalChoice::Deny { reason } if reason.len() > MAX_REASON_BYTES => {
                return Err(ApprovalError::ReasonTooLong { call: call_id.to_owned(), bytes: reason.len() });
            }
            ApprovalChoice::Deny { reason } => {
                (decide(ApprovalState::Denied).with_reason(reason), ApprovalDecision::Denied)
            }
        };
        let runs_with = change.arguments.clone().unwrap_or_else(|| call.arguments.clone());
        self.advance(change.by(PERSON), resolved).await?;
        let Some(remembering) = remembering else { return Ok(None) };
        // Kept once the decision is: a store that fails here leaves the decision made and
        // nothing remembered, and says so.
        let approval = remembering.finish(&runs_with);
        shared.journal.remember_approval(&approval).await?;
        Ok(Some(approval))
    }

    /// What `remember` would keep for waiting call `call` decided with `choice` (A9), or why it
    /// cannot be kept.
    async fn check_remember(
        &self,
        call: &ParkedToolCall,
        choice: &ApprovalChoice,
        remember: &Remember,
    ) -> Result<Remembering, ApprovalError> {
        let shared = &self.shared;
        let refused = |problem: String| ApprovalError::RememberRefused { call: call.id.clone(), problem };
        let ApprovalChoice::Approve { arguments } = choice else {
            return Err(refused("only an approval can be remembered; a denial decides this call only".to_owned()));
        };
        if shared.runtime.store.remembered_approvals().is_none() {
            return Err(refused(
                "this store keeps no remembered approvals (implement RememberedApprovalStore and return it from \
                 MessageStore::remembered_approvals)"
                    .to_owned(),
            ));
        }
        let arguments = arguments.as_ref().unwrap_or(&call.arguments);
        if let Some(pattern) = &remember.pattern {
            let patterns = shared.runtime.governors.patterns;
            crate::governing::remembered::check_pattern(patterns, pattern, &call.tool, arguments).map_err(refused)?;
        }
        let record = shared.runtime.store.load_thread(&shared.id).await?;
        let user_id = record.and_then(|record| record.user_id);
        if remember.scope == RememberScope::User && user_id.is_none() {
            return Err(refused(format!(
                "the thread `{}` has no user, so a `user` approval would reach no thread; remember it for the thread or always",
                shared.id
            )));
        }
        Ok(Remembering {
            scope: remember.scope,
            tool: call.tool.clone(),
            pattern: remember.pattern.clone(),
            thread_id: shared.id.clone(),
            user_id,
            made_by: remember.made_by.clone().unwrap_or_else(|| PERSON.to_owned()),
        })
    }

    /// A4: one conditional write; of two deciders (an abort too), in any processes, one wins.
    /// The journal announces the winner's decision.
    async fn advance(&self, change: ToolCallChange, resolved: ApprovalDecision) -> Result<(), ApprovalError> {
        let journal = &self.shared.journal;
        if !journal.decide(&change, resolved).await? {
            let now = journal.ledger(&change.call_id).await?;
            let state = now.map_or(ApprovalState::Done, |call| call.state);
            return Err(ApprovalError::AlreadyDecided { call: change.call_id, state });
        }
        Ok(())
    }

    /// The ledger's record of tool call `call_id` (O7): a call that waits, or one that waited
    /// and was decided, for as long as the thread lives: its decision (`state`), who decided
    /// ([`decided_by`](ParkedToolCall::decided_by)), the arguments it ran with (edited ones
    /// included) and, once its step is finished, what became of it
    /// ([`outcome`](ParkedToolCall::outcome)). `None` for a call that never waited for approval.
    ///
    /// ```
    /// use hooks_runtime::prelude::*;
    /// use hooks_runtime::approvals::ApprovalOutcome;
    /// use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
    /// use hooks_runtime::tool::FnTool;
    /// use hooks_runtime::{Runtime, ThreadOptions};
    ///
    /// define_prompt! { name: ledger_prompt, model: "m", prompt: "Pay.", tools: ["pay"] }
    /// define_agent! { name: ledger_agent, side_a: { prompt: ledger_prompt, stop_on_response: true } }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let pay = FnTool::new("pay", "Pays.", |_args| async { HookToolResult::success("paid") }).with_approval(|_| ToolDecision::ask("payments need a person"));
    /// let model = ScriptedModel::new([
    ///     ScriptedResponse::tool_call("call_1", "pay", r#"{"amount":5}"#),
    ///     ScriptedResponse::text("Paid."),
    /// ]);
    /// let runtime = Runtime::builder().agent::<ledger_agent>().model("m", model).tool(pay).build().unwrap();
    /// let thread = runtime.create_thread("ledger_agent", ThreadOptions::default()).await.unwrap();
    /// thread.send("pay 5").await.unwrap();
    /// thread.approve("call_1").await.unwrap();
    /// let record = thread.approval("call_1").await.unwrap().expect("the ledger keeps it");
    /// assert_eq!(record.decided_by.as_deref(), Some("person"));
    /// assert_eq!(record.outcome(), Some(ApprovalOutcome::Ran));
    /// // Deciding it again is refused as already decided, here or in any other process.
    /// assert!(thread.approve("call_1").await.is_err());
    /// # });
    /// ```
    pub async fn approval(&self, call_id: &str) -> Result<Option<ParkedToolCall>, RuntimeError> {
        Ok(self.shared.journal.ledger(call_id).await?)
    }

    /// Resumes the turn of a parked step whose calls are all decided ([`Thread::record_decision`]):
    /// the approved calls run, the results are stored in the model's call order and the turn
    /// goes on. While calls still wait, or with nothing parked, it runs nothing and the outcome
    /// reports the thread's status.
    pub async fn resume_approvals(&self) -> Result<RunOutcome, RuntimeError> {
        self.refuse_if_held("resume_approvals")?;
        self.finish_parked(Finish::Resume).await
    }

    /// Finishes the parked step under the run lock and the store's permit, as a run; with calls
    /// still waiting (or nothing parked) the outcome just reports the thread's status.
    pub(crate) async fn finish_parked(&self, how: Finish) -> Result<RunOutcome, RuntimeError> {
        let shared = &self.shared;
        let span = crate::spans::run(|| shared.agent.current().def.name, &shared.id, "resume_approvals");
        reentry::holding_run(shared, async {
            let mut state = shared.lock_run().await;
            let permit = shared.journal.hold_run().await?;
            run_permit::holding(shared, permit, || async {
                super::recovery::settle_a_dead_run(shared, &state).await?;
                let mut run = turn::RunGuard::new(shared, &mut state);
                let result = resuming::finish_step(shared, run.state(), how).await;
                match result {
                    Ok(Some(outcome)) => run.settle(Ok(outcome)).await,
                    Ok(None) => {
                        if how == Finish::Abort {
                            // Nothing waited: the abort is done with, not kept for a later run.
                            shared.journal.forget_abort();
                        }
                        let outcome = RunOutcome { status: waiting_status(shared).await, ..RunOutcome::running() };
                        run.settle(Ok(outcome)).await
                    }
                    Err(error) => run.settle(Err(error)).await,
                }
            })
            .await
        })
        .instrument(span)
        .await
    }
}

/// A remembered approval checked before its decision, made once the decision is kept.
struct Remembering {
    scope: RememberScope,
    tool: String,
    pattern: Option<String>,
    thread_id: String,
    user_id: Option<String>,
    made_by: String,
}

impl Remembering {
    /// The approval, for the arguments the call runs with when no pattern was given.
    fn finish(self, runs_with: &Value) -> RememberedApproval {
        let matcher = match self.pattern {
            Some(rule) => ApprovalMatcher::Pattern { rule },
            None => ApprovalMatcher::Arguments { sha256: crate::admission_record::Hashed::of(runs_with).0 },
        };
        RememberedApproval::new(crate::ids::new_id("ra"), self.scope, self.tool, matcher)
            .for_thread(&self.thread_id, self.user_id.as_deref())
            .by(self.made_by)
    }
}

/// Whether the policy `call` parked under (its fingerprint) is not the runtime's now (A8). A
/// call parked by an older build, with no fingerprint, is governed again too: its policy is
/// unknown, and a security property fails closed.
fn policy_changed(shared: &super::ThreadShared, call: &ParkedToolCall) -> bool {
    let governors = &shared.runtime.governors;
    call.policy_fingerprint() != Some(governors.admission.fingerprint(&governors.guards).as_str())
}

/// The status of a thread whose step was not finished: waiting while calls wait.
async fn waiting_status(shared: &super::ThreadShared) -> ThreadStatus {
    match resuming::waiting_calls(shared).await {
        Ok(calls) if !calls.is_empty() => ThreadStatus::AwaitingApproval,
        _ => shared.status(),
    }
}

/// Why a decision on a parked call was refused (A4, G5).
///
/// ```
/// use hooks_runtime::approvals::{ApprovalError, ApprovalState};
///
/// let error = ApprovalError::AlreadyDecided { call: "call_1".into(), state: ApprovalState::Approved };
/// assert!(error.to_string().contains("already decided"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ApprovalError {
    /// No call of this id ever waited for approval on the thread.
    #[error(
        "the thread `{thread}` has no tool call `{call}` that waits or waited for approval; list the waiting ones with `pending_approvals`"
    )]
    UnknownCall {
        /// The thread.
        thread: String,
        /// The call id asked for.
        call: String,
    },
    /// The call was decided before (here or in another process, by a person or an abort); its
    /// record stays readable through [`Thread::approval`].
    #[error("the tool call `{call}` was already decided (it is {}); a call is decided once, and `Thread::approval` reads its decision", state.as_str())]
    AlreadyDecided {
        /// The call.
        call: String,
        /// Where it stands now.
        state: ApprovalState,
    },
    /// Arguments edited on approval were denied when governed again (G8): by a runtime-wide
    /// guard, a `before_tool_call` hook, a settings file's `PreToolUse` hook or rule, or
    /// `authorize_tools`. The call is denied (the model reads the reason) and the turn goes on
    /// as after a denial; [`Thread::approve_with`] resumes it before answering with this.
    #[error("the edited arguments of `{call}` were denied by `{hook}`: {reason}; the call is denied")]
    EditDenied {
        /// The call.
        call: String,
        /// The deciding hook or guard's id (`authorize_tools` for the authorizer).
        hook: String,
        /// Why, as the decider gave it.
        reason: String,
    },
    /// A denial's reason is longer than [`MAX_REASON_BYTES`]: it would reach the model's next
    /// request and the store. Nothing was decided.
    #[error("the reason given to deny `{call}` is {bytes} bytes; the limit is {} bytes", MAX_REASON_BYTES)]
    ReasonTooLong {
        /// The call.
        call: String,
        /// The reason's length in bytes.
        bytes: usize,
    },
    /// Arguments edited on approval do not satisfy the tool's schema.
    #[error("the edited arguments of `{call}` are refused: {problem}")]
    InvalidArguments {
        /// The call.
        call: String,
        /// Where the schema is violated (paths only, never values).
        problem: String,
    },
    /// The decision named other arguments than the ones the call waits with (A7): the hash
    /// it gave is not [`ParkedToolCall::arguments_sha256`] of the call as stored. Nothing was
    /// decided; list the call again and decide on what it now holds.
    #[error(
        "the decision on `{call}` is stale: it names arguments with SHA-256 {seen}, the call waits with {current}; list the waiting calls again and decide on what they hold"
    )]
    Stale {
        /// The call.
        call: String,
        /// The hash the decision named.
        seen: String,
        /// The hash of the arguments the call waits with.
        current: String,
    },
    /// The policy changed while the call waited (its fingerprint is not the runtime's now) and,
    /// governed again on approval under the current one, it was denied (A8): by a permission
    /// rule, `authorize_tools`, a guard or a hook. The call is denied, the model reads why, and
    /// the turn goes on as after a denial.
    #[error("the policy changed while `{call}` waited, and under the current one `{hook}` denied it: {reason}")]
    PolicyDenied {
        /// The call.
        call: String,
        /// The deciding rule, hook or guard.
        hook: String,
        /// Why, as the decider gave it.
        reason: String,
    },
    /// The approval could not be remembered as asked (A9): its pattern does not parse or does
    /// not select the call, it was a denial, a `user` scope on a thread without a user, or a
    /// store that keeps no remembered approvals. Nothing was decided.
    #[error("the approval of `{call}` cannot be remembered as asked: {problem}; nothing was decided")]
    RememberRefused {
        /// The call.
        call: String,
        /// What is wrong, naming the pattern or the scope.
        problem: String,
    },
    /// The store or the run failed.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
}

impl From<crate::store::StoreError> for ApprovalError {
    fn from(error: crate::store::StoreError) -> Self {
        ApprovalError::Runtime(RuntimeError::Store(error))
    }
}
