//! The admission pipeline (G13-G15): every tool call of every thread is decided here, by one
//! ordered list of deciders fixed when the runtime is built, all behind [`Decider`]. The
//! combination rule lives in [`AdmissionPipeline::admit`] and nowhere else: deny > ask >
//! allow; no later decider's allow lifts an earlier deny or ask; arguments rewritten by any
//! decider are checked again against the tool's schema and every permission rule before the
//! call runs (G14). Each answer is written into the call's [`AdmissionRecord`] (G15).
//!
//! The order: the schema check of the model's arguments (the arguments are parsed once, here),
//! permission rules, the authorizer, a hook format's pre-call hooks, runtime-wide guards, the
//! thread's `before_tool_call` hooks, the tool's own approval rule; for an ask, the deciders of
//! the ask stage (remembered approvals, then a hook format's permission-request hooks), then a
//! person (the thread parks the call). The ask stage is reached only when no decider denied
//! the call, so a remembered approval answers an ask and never lifts a deny (A9).

use std::sync::Arc;

use async_trait::async_trait;
use hooks_core::{HookToolCall, ThreadState, ToolDecision};
use serde_json::Value;

use super::caps::cap_hook_reason;
use super::guard::ToolGuard;
use super::remembered::{AskedCall, RememberedApprovals};
use super::schema::ToolSchemas;
use crate::admission_record::{AdmissionRecord, Hashed};
use crate::approval_records::ApprovalReason;
use crate::dispatch::Dispatch;
use crate::limits::Limits;
use crate::thread_side::ThreadSide;
use crate::tool::{Tool, ToolAuthorizer};

/// One call under review: the thread and its state, the call as the model made it, the called
/// tool (`None` when the runtime has none of that name), and what governs it.
pub(crate) struct Review<'a> {
    pub(crate) state: &'a ThreadState,
    pub(crate) call: &'a HookToolCall,
    pub(crate) tool: Option<&'a Arc<dyn Tool>>,
    pub(crate) thread: &'a dyn ThreadSide,
    /// The thread's `before_tool_call` hooks, `None` when it has none.
    pub(crate) hooks: Option<Dispatch<'a>>,
    /// The runtime-wide guards, in the order they were added.
    pub(crate) guards: &'a [Arc<dyn ToolGuard>],
    /// The tools' parameter schemas.
    pub(crate) schemas: &'a ToolSchemas,
    pub(crate) limits: Limits,
}

/// What a decider's place in the pipeline makes of its answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// The tool's schema: a deny is an invalid call (the model may call again), not a denial.
    Schema,
    /// Permission rules: checked again on rewritten arguments (G14), and an allow stands in
    /// for the tool's own approval (not for any other decider's ask).
    Rules,
    /// A decider like any other (authorizer, hooks, guards).
    Plain,
    /// The tool's own approval rule: its ask is answered by a permission rule's allow.
    ToolApproval,
    /// Asked only when the call would wait for a person: an allow approves it, a deny denies
    /// it, anything else leaves it to the person.
    OnAsk,
}

/// One answer of a decider: who answered (a hook or guard id, a rule's place such as
/// `settings:permissions.deny[0]`; `None` for the tool itself), the rule's text if a rule
/// answered, the decision, and words for the model the call's result should carry.
#[derive(Debug, Clone)]
pub(crate) struct Answer {
    pub(crate) by: Option<String>,
    pub(crate) rule: Option<String>,
    pub(crate) decision: ToolDecision,
    pub(crate) context: Option<String>,
}

impl Answer {
    /// `decision`, given by `by`.
    pub(crate) fn new(by: Option<&str>, decision: ToolDecision) -> Self {
        Answer { by: by.map(str::to_owned), rule: None, decision, context: None }
    }

    /// What the decision record keeps of it: who, the rule, the decision.
    fn parts(&self) -> (Option<&str>, Option<&str>, &ToolDecision) {
        (self.by.as_deref(), self.rule.as_deref(), &self.decision)
    }

    /// The same answer, naming the rule that gave it.
    #[cfg_attr(not(feature = "declarative"), allow(dead_code))]
    pub(crate) fn with_rule(mut self, rule: impl Into<String>) -> Self {
        self.rule = Some(rule.into());
        self
    }
}

/// The arguments a decider decides on. Reading them ([`get`](Self::get)) leaves them as they
/// were; the one way to change them, [`for_change`](Self::for_change), keeps a copy of them as
/// they were first, and the pipeline hashes them again only after a decider that changed them
/// from that copy: a decider that only read them, or reached them and wrote nothing new (an
/// in-place guard is handed them mutably whatever it does), leaves its "after" hash its
/// "before" one, and every rewrite is still seen and rechecked (G14). The copy is the
/// pipeline's own, never a decider's word; a comparison costs less than a SHA-256 of the same
/// arguments.
pub(crate) struct Arguments {
    value: Value,
    /// The value as it was when first reached for a change since the last look.
    before: Option<Value>,
}

impl Arguments {
    /// `value`, not yet reached for a change.
    pub(crate) fn new(value: Value) -> Self {
        Arguments { value, before: None }
    }

    /// The arguments, to read.
    pub(crate) fn get(&self) -> &Value {
        &self.value
    }

    /// The arguments, to change: keeps them as they are, for [`take_changed`](Self::take_changed).
    pub(crate) fn for_change(&mut self) -> &mut Value {
        if self.before.is_none() {
            self.before = Some(self.value.clone());
        }
        &mut self.value
    }

    /// Whether they were changed since the last call, so that their canonical JSON (and so
    /// their hash) may differ; forgets the copy.
    fn take_changed(&mut self) -> bool {
        self.before.take().is_some_and(|before| !same_json(&before, &self.value))
    }

    /// The arguments as they stand.
    fn into_value(self) -> Value {
        self.value
    }
}

/// One step of the admission pipeline. A decider answers with what each of its parts decided
/// (a chain of hooks answers once per hook, up to the first deny), and may rewrite `arguments`
/// in place; `asked` is every ask so far (the ask stage reads it).
#[async_trait]
pub(crate) trait Decider: Send + Sync {
    /// What it is, for the record when no part of it answered by its own id.
    fn name(&self) -> &'static str;
    /// What the pipeline makes of its answers.
    fn role(&self) -> Role {
        Role::Plain
    }
    /// Whether it reads the parsed arguments; one that does not (the authorizer reads the call)
    /// also decides a call whose arguments are not JSON.
    fn reads_arguments(&self) -> bool {
        true
    }
    /// Whether its runs make their own hook spans (a chain of hooks makes one per hook); the
    /// pipeline makes one for every other decider's run, named after the answer that decided.
    fn traces_itself(&self) -> bool {
        false
    }
    /// What it applies beyond its name, for the policy fingerprint (A7): a rule list's rule
    /// texts, the guards' ids. Nothing for a decider whose behaviour only a rebuild changes.
    fn policy(&self, _guards: &[Arc<dyn ToolGuard>]) -> Vec<String> {
        Vec::new()
    }
    /// Decides `review` on `arguments`.
    async fn decide(&self, review: &Review<'_>, arguments: &mut Arguments, asked: &[ApprovalReason]) -> Vec<Answer>;
}

/// What the pipeline decided about one call.
pub(crate) enum Admission {
    /// Its arguments fail the tool's schema (G9): this error result, and nothing else runs for
    /// it (no decider, listener, tool or tool hook).
    Invalid(hooks_core::HookToolResult),
    /// The run was aborted before it was governed: this error result, no decider, no listener,
    /// no tool.
    Refused(hooks_core::HookToolResult),
    /// A decider denied it.
    Denied {
        /// The deciding hook, guard, rule or tool.
        hook: String,
        /// Why.
        reason: String,
    },
    /// It runs, with these arguments (or the parser's message for text that is not JSON).
    Run {
        /// The arguments as the deciders left them.
        arguments: Result<Value, String>,
        /// Context for the model from a decider, added to the result.
        context: Option<String>,
    },
    /// It waits for a person (A1).
    Ask {
        /// Who asked and why; the first carries the context for the model.
        reasons: Vec<ApprovalReason>,
        /// The arguments as the deciders left them.
        arguments: Value,
    },
}

/// The name a decision of `authorize_tools` is recorded under, as a hook's id would be.
pub(crate) const AUTHORIZER: &str = "authorize_tools";

/// The ordered deciders every tool call passes, fixed at `Runtime::build`.
#[derive(Default)]
pub(crate) struct AdmissionPipeline {
    deciders: Vec<Box<dyn Decider>>,
    /// The remembered approvals, consulted first at the ask stage (A9).
    remembered: Option<RememberedApprovals>,
}

impl AdmissionPipeline {
    /// The pipeline of these deciders, in this order (the ask stage's deciders, `Role::OnAsk`,
    /// are asked after every other, whatever their place).
    pub(crate) fn new(deciders: Vec<Box<dyn Decider>>) -> Self {
        AdmissionPipeline { deciders, remembered: None }
    }

    /// The same pipeline, whose ask stage first consults `remembered` (A9): an approval a
    /// person remembered answers the ask before any ask-stage decider or person is asked.
    pub(crate) fn with_remembered(mut self, remembered: RememberedApprovals) -> Self {
        self.remembered = Some(remembered);
        self
    }

    /// The policy fingerprint (A7): the SHA-256 of the canonical JSON of every decider in
    /// order, each as its name followed by what it applies ([`Decider::policy`]: the texts of
    /// the permission rules with their list, the runtime-wide guards' ids).
    pub(crate) fn fingerprint(&self, guards: &[Arc<dyn ToolGuard>]) -> String {
        let deciders: Vec<Value> = self
            .deciders
            .iter()
            .map(|decider| {
                let mut parts = vec![Value::String(decider.name().to_owned())];
                parts.extend(decider.policy(guards).into_iter().map(Value::String));
                Value::Array(parts)
            })
            .collect();
        Hashed::of(&Value::Array(deciders)).0
    }

    /// Decides one call whose arguments have fully streamed; the record holds every answer.
    pub(crate) async fn admit(&self, review: &Review<'_>) -> (Admission, AdmissionRecord) {
        let mut record = AdmissionRecord::default();
        // The one parse of the model's arguments.
        let mut arguments = match parse_arguments(&review.call.function.arguments) {
            Ok(arguments) => Arguments::new(arguments),
            Err(error) => {
                // Only what does not read the arguments decides a call whose text is not JSON;
                // the tool answers it with the parser's message.
                let mut empty = Arguments::new(Value::Object(serde_json::Map::new()));
                for decider in self.deciders.iter().filter(|decider| !decider.reads_arguments()) {
                    let hashed = Hashed::of(empty.get());
                    for answer in run(decider.as_ref(), review, &mut empty, &[]).await {
                        record.push(decider.name(), answer.parts(), &hashed, &hashed);
                        if let ToolDecision::Deny { reason } = answer.decision {
                            return (denied(decider.name(), answer.by, reason), record);
                        }
                    }
                }
                return (Admission::Run { arguments: Err(error), context: None }, record);
            }
        };
        let mut asked: Vec<ApprovalReason> = Vec::new();
        let mut tool_asks: Vec<ApprovalReason> = Vec::new();
        let mut context: Option<String> = None;
        let mut rule_allowed = false;
        let mut rewritten = false;
        // The arguments' hash as they stand: hashed once, then again after each decider that
        // reached them for a change (a SHA-256 of a call's arguments is about 2,300
        // instructions; most deciders only read them).
        let mut current = Hashed::of(arguments.get());
        for decider in self.deciders.iter().filter(|decider| decider.role() != Role::OnAsk) {
            let answers = run(decider.as_ref(), review, &mut arguments, &asked).await;
            let replaced = arguments.take_changed().then(|| {
                let after = Hashed::of(arguments.get());
                rewritten |= after != current;
                std::mem::replace(&mut current, after)
            });
            let before = replaced.as_ref().unwrap_or(&current);
            for answer in answers {
                record.push(decider.name(), answer.parts(), before, &current);
                if answer.context.is_some() {
                    context.clone_from(&answer.context);
                }
                match answer.decision {
                    ToolDecision::Deny { reason } if decider.role() == Role::Schema => {
                        return (Admission::Invalid(hooks_core::HookToolResult::error(reason)), record);
                    }
                    ToolDecision::Deny { reason } => return (denied(decider.name(), answer.by, reason), record),
                    ToolDecision::Ask { reason } if decider.role() == Role::ToolApproval => {
                        tool_asks.push(ApprovalReason::new(answer.by.as_deref(), reason));
                    }
                    ToolDecision::Ask { reason } => asked.push(ApprovalReason::new(answer.by.as_deref(), reason)),
                    _ if decider.role() == Role::Rules => rule_allowed = true,
                    _ => {}
                }
            }
        }
        // G14: rewritten arguments pass the schema and every rule again before anything runs.
        if rewritten {
            match self.recheck(review, arguments.get(), &mut record, &mut asked).await {
                Err(denial) => return (denial, record),
                // The rules' answer on the arguments as they now stand is the one that counts.
                Ok(allowed) => rule_allowed = allowed,
            }
        }
        // A permission rule's allow stands in for the tool's own approval only.
        if !rule_allowed {
            asked.extend(tool_asks);
        }
        for reason in &mut asked {
            let hook = reason.hook.as_deref().unwrap_or("the tool");
            reason.reason = cap_hook_reason(hook, std::mem::take(&mut reason.reason));
        }
        let Some(first) = asked.first_mut() else {
            return (Admission::Run { arguments: Ok(arguments.into_value()), context }, record);
        };
        // The parked call keeps the context for the model, for when it is approved.
        first.context.clone_from(&context);
        // A9: every decider said its word and none denied: a remembered approval answers the
        // ask, and the record names it (A10).
        if let Some(remembered) = &self.remembered
            && let Some(used) = remembered.find(asked_call(review), arguments.get(), &current).await
        {
            record.push_remembered(used, &current);
            return (Admission::Run { arguments: Ok(arguments.into_value()), context }, record);
        }
        for decider in self.deciders.iter().filter(|decider| decider.role() == Role::OnAsk) {
            let before = &current;
            let mut proposed = Arguments::new(arguments.get().clone());
            let answers = run(decider.as_ref(), review, &mut proposed, &asked).await;
            let after = if proposed.take_changed() { Hashed::of(proposed.get()) } else { before.clone() };
            for answer in answers {
                record.push(decider.name(), answer.parts(), before, &after);
                match answer.decision {
                    ToolDecision::Deny { reason } => return (denied(decider.name(), answer.by, reason), record),
                    ToolDecision::Allow => {
                        // An approval of rewritten arguments approves them only if they pass
                        // the schema and no rule denies them (G14).
                        if after != *before {
                            let mut more = Vec::new();
                            if let Err(denial) = self.recheck(review, proposed.get(), &mut record, &mut more).await {
                                return (denial, record);
                            }
                        }
                        return (Admission::Run { arguments: Ok(proposed.into_value()), context }, record);
                    }
                    _ => {}
                }
            }
        }
        // A7: a call that waits carries the policy it was governed under.
        record.policy_fingerprint = Some(self.fingerprint(review.guards));
        (Admission::Ask { reasons: asked, arguments: arguments.into_value() }, record)
    }

    /// G14: `arguments`, rewritten by a decider, against the tool's schema and every
    /// permission rule: the denial if one refuses them; else whether a rule allows them. A
    /// rule's ask joins `asked`.
    async fn recheck(
        &self,
        review: &Review<'_>,
        arguments: &Value,
        record: &mut AdmissionRecord,
        asked: &mut Vec<ApprovalReason>,
    ) -> Result<bool, Admission> {
        let hashed = Hashed::of(arguments);
        if let Err(violation) = review.schemas.check(review.tool, arguments) {
            let answer = Answer::new(
                Some(RECHECK),
                ToolDecision::deny(format!("the rewritten arguments fail the tool's schema: {violation}")),
            );
            record.push(RECHECK, answer.parts(), &hashed, &hashed);
            let ToolDecision::Deny { reason } = answer.decision else { unreachable!("built as a deny") };
            return Err(Admission::Denied { hook: RECHECK.to_owned(), reason });
        }
        let mut allowed = false;
        for decider in self.deciders.iter().filter(|decider| decider.role() == Role::Rules) {
            // A rule reads the arguments; it never rewrites them.
            let mut copy = Arguments::new(arguments.clone());
            for answer in run(decider.as_ref(), review, &mut copy, asked).await {
                record.push(decider.name(), answer.parts(), &hashed, &hashed);
                match answer.decision {
                    ToolDecision::Deny { reason } => return Err(denied(decider.name(), answer.by, reason)),
                    ToolDecision::Ask { reason } => {
                        let known = asked.iter().any(|given| given.hook == answer.by);
                        if !known {
                            asked.push(ApprovalReason::new(answer.by.as_deref(), reason));
                        }
                    }
                    _ => allowed = true,
                }
            }
        }
        Ok(allowed)
    }
}

/// Runs one decider. Unless it traces itself (or is the schema check, which answers every
/// call), an answer it gave is a hook span (G10, G15) like a hook's: its id is the deciding
/// answer's (`settings:permissions.deny[0]` for a rule), with the rule and the decision.
async fn run(
    decider: &dyn Decider,
    review: &Review<'_>,
    arguments: &mut Arguments,
    asked: &[ApprovalReason],
) -> Vec<Answer> {
    if decider.traces_itself() || decider.role() == Role::Schema || !crate::dispatch::spans_wanted() {
        return decider.decide(review, arguments, asked).await;
    }
    let started_at = std::time::Instant::now();
    let answers = decider.decide(review, arguments, asked).await;
    trace(decider, &answers, started_at);
    answers
}

/// The hook span of a decider's run that gave `answers` (none for no answer).
#[cold]
fn trace(decider: &dyn Decider, answers: &[Answer], started_at: std::time::Instant) {
    let strength = |answer: &&Answer| match answer.decision {
        ToolDecision::Deny { .. } => 2,
        ToolDecision::Ask { .. } => 1,
        _ => 0,
    };
    // The strongest answer decided; the first of equals.
    let Some(deciding) = answers.iter().rev().max_by_key(strength) else { return };
    let id = deciding.by.as_deref().unwrap_or(decider.name());
    let decision = match deciding.decision {
        ToolDecision::Deny { .. } => "deny",
        ToolDecision::Ask { .. } => "ask",
        _ => "allow",
    };
    let span = tracing::info_span!(
        target: crate::dispatch::TARGET,
        "hook",
        otel.name = format!("hook {id}"),
        hook.id = id,
        hook.kind = hooks_core::HookKind::BeforeToolCall.name(),
        hook.source = decider.name(),
        hook.rule = deciding.rule.as_deref(),
        hook.decision = decision,
        duration_us = tracing::field::Empty,
    );
    // Signed: OpenTelemetry integers are `i64` (an unsigned field is exported as text).
    span.record("duration_us", i64::try_from(started_at.elapsed().as_micros()).unwrap_or(i64::MAX));
}

/// The name the schema check of rewritten arguments is recorded under (G14).
pub(crate) const RECHECK: &str = "schema (rewritten arguments)";

/// A denial by `by`, or by the decider itself when no part of it is named.
fn denied(decider: &'static str, by: Option<String>, reason: String) -> Admission {
    let hook = by.unwrap_or_else(|| decider.to_owned());
    let reason = cap_hook_reason(&hook, reason);
    Admission::Denied { hook, reason }
}

/// The arguments text as JSON: empty text is an empty object, as the tool gets it.
pub(crate) fn parse_arguments(text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    serde_json::from_str(text).map_err(|error| error.to_string())
}

/// G9: arguments the tool's schema refuses reach no other decider and no tool; the model reads
/// where they are wrong (never their values) and may call again in its next step.
pub(crate) struct SchemaCheck;

#[async_trait]
impl Decider for SchemaCheck {
    fn name(&self) -> &'static str {
        "schema"
    }

    fn role(&self) -> Role {
        Role::Schema
    }

    async fn decide(&self, review: &Review<'_>, arguments: &mut Arguments, _asked: &[ApprovalReason]) -> Vec<Answer> {
        let decision = match review.schemas.check(review.tool, arguments.get()) {
            Ok(()) => ToolDecision::allow(),
            Err(violation) => ToolDecision::deny(format!(
                "the tool call {} was not run: {violation}; call it again with arguments that satisfy it",
                review.call.function.name
            )),
        };
        vec![Answer::new(Some("schema"), decision)]
    }
}

/// `authorize_tools` (Y5, G11): reads the call, answers in the type every decider answers with.
pub(crate) struct Authorizer(pub(crate) Arc<ToolAuthorizer>);

#[async_trait]
impl Decider for Authorizer {
    fn name(&self) -> &'static str {
        AUTHORIZER
    }

    fn reads_arguments(&self) -> bool {
        false
    }

    async fn decide(&self, review: &Review<'_>, _arguments: &mut Arguments, _asked: &[ApprovalReason]) -> Vec<Answer> {
        let authorize = &self.0;
        // E9: an authorizer that panicked has not authorized the call.
        let decision = crate::dispatch::panics::catch(|| authorize(review.state, review.call)).unwrap_or_else(|_| {
            tracing::error!(
                target: "hooks_runtime::hook",
                thread = %review.thread.id(),
                "[Hooks] ✗ the tool authorizer (`authorize_tools`) of agent `{}` panicked; the panic is its own failure, the run goes on",
                review.thread.agent_name()
            );
            ToolDecision::deny(format!(
                "the authorizer panicked, so the call {} is not authorized",
                review.call.function.name
            ))
        });
        vec![Answer::new(Some(AUTHORIZER), decision)]
    }
}

/// The tool's own approval rule (`Tool::requires_approval`, G11).
pub(crate) struct ToolApproval;

#[async_trait]
impl Decider for ToolApproval {
    fn name(&self) -> &'static str {
        "tool"
    }

    fn role(&self) -> Role {
        Role::ToolApproval
    }

    async fn decide(&self, review: &Review<'_>, arguments: &mut Arguments, _asked: &[ApprovalReason]) -> Vec<Answer> {
        let Some(tool) = review.tool else { return Vec::new() };
        match tool.requires_approval(arguments.get()) {
            // A denial names the tool; an ask is the tool's (no hook id); an allow is no answer.
            decision @ ToolDecision::Deny { .. } => vec![Answer::new(Some(tool.name()), decision)],
            decision @ ToolDecision::Ask { .. } => vec![Answer::new(None, decision)],
            _ => Vec::new(),
        }
    }
}

/// The call of `review` as a remembered approval sees it (A9).
fn asked_call<'a>(review: &'a Review<'_>) -> AskedCall<'a> {
    AskedCall {
        tool: review.call.function.name.as_str(),
        thread: review.thread.id(),
        user: review.state.user_id.as_deref(),
    }
}

/// Whether `a` and `b` have the same canonical JSON text (and so the same hash): `Value`'s own
/// equality, except for numbers, which it holds equal where their texts differ (`0.0` and
/// `-0.0`); an object's keys in any order, as the canonical text sorts them.
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => a == b && a.as_f64().map(f64::to_bits) == b.as_f64().map(f64::to_bits),
        (Value::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same_json(a, b)),
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(key, a)| b.get(key).is_some_and(|b| same_json(a, b)))
        }
        (a, b) => a == b,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Arguments;
    use crate::admission_record::Hashed;

    #[test]
    fn g14_arguments_changed_are_seen_until_taken() {
        let mut arguments = Arguments::new(json!({"command": "ls"}));
        assert_eq!(arguments.get(), &json!({"command": "ls"}));
        assert!(!arguments.take_changed(), "reading changes nothing");
        arguments.for_change()["command"] = json!("ls -la");
        assert!(arguments.take_changed(), "a change is seen");
        assert!(!arguments.take_changed(), "a change is seen once");
        assert_eq!(arguments.into_value(), json!({"command": "ls -la"}));
    }

    #[test]
    fn g14_arguments_reached_and_written_back_unchanged_are_not_changed() {
        let mut arguments = Arguments::new(json!({"command": "ls", "n": [1, 2.5]}));
        let same = arguments.for_change().clone();
        *arguments.for_change() = same;
        assert!(!arguments.take_changed(), "the same value written back");
        // Changed, then changed back, between two looks: what counts is the value at the look.
        arguments.for_change()["command"] = json!("rm -rf /");
        arguments.for_change()["command"] = json!("ls");
        assert!(!arguments.take_changed(), "changed back before the look");
    }

    #[test]
    fn g14_a_change_is_what_changes_the_arguments_hash() {
        // The expected answer is the hash itself (the record's SHA-256 of the canonical JSON):
        // a rewrite counts exactly when the hash before and after it differ. `Value`'s own
        // equality holds 0.0 and -0.0 equal, whose canonical texts differ.
        let cases = [
            (json!({"x": 0.0}), json!({"x": -0.0})),
            (json!({"x": 1}), json!({"x": 1.0})),
            (json!({"x": 1}), json!({"x": 1})),
            (json!({"x": [1.5, -0.0]}), json!({"x": [1.5, 0.0]})),
            (json!({"a": 1, "b": {"c": [true, null]}}), json!({"b": {"c": [true, null]}, "a": 1})),
            (json!({"a": "x"}), json!({"a": "x", "b": null})),
            (json!({"n": 18446744073709551615u64}), json!({"n": 18446744073709551615.0})),
            (json!({"n": -3}), json!({"n": -3})),
        ];
        assert_eq!(json!({"x": 0.0}), json!({"x": -0.0}), "Value's equality, which is not enough");
        for (before, after) in cases {
            let hashes_differ = Hashed::of(&before) != Hashed::of(&after);
            let mut arguments = Arguments::new(before.clone());
            *arguments.for_change() = after.clone();
            assert_eq!(arguments.take_changed(), hashes_differ, "{before} to {after}");
        }
    }
}
