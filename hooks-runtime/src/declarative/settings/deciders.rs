//! The settings format's deciders of the admission pipeline: its `permissions` rules (and
//! rules given in code), its `PreToolUse` hooks, and its `PermissionRequest` hooks for a call
//! about to wait for a person.

use async_trait::async_trait;
use hooks_core::ToolDecision;
use serde_json::Value;

use super::answer::Permission;
use super::event::SettingsEvent;
use super::permissions::{RuleKind, RuleMatch, SettingsPermissions};
use super::pre_tool_use::{self, ToolCallInput, ToolVerdict};
use super::settings_hooks::SettingsHooks;
use super::thread_hooks::{cwd, fire, request_stop, selected, tell_person, transcript};
use crate::approval_records::ApprovalReason;
use crate::events::ThreadEvent;
use crate::governing::admission::{Answer, Arguments, Decider, Review, Role};

/// Where a list of permission rules comes from, which names its rules' ids.
enum RulesOf {
    /// A settings file's `permissions` (`settings:permissions.deny[0]`).
    File(SettingsHooks),
    /// Rules given in code with `RuntimeBuilder::permission_rules` (`code:permissions.deny[0]`).
    Code(SettingsPermissions),
}

/// Permission rules (K9, G14): deny > ask > allow on the arguments as they stand; checked again
/// on arguments any later decider rewrites.
pub(crate) struct PermissionRules(RulesOf);

impl PermissionRules {
    /// The `permissions` of a settings file.
    pub(crate) fn of_file(settings: SettingsHooks) -> Self {
        PermissionRules(RulesOf::File(settings))
    }

    /// Rules given in code.
    pub(crate) fn of_code(permissions: SettingsPermissions) -> Self {
        PermissionRules(RulesOf::Code(permissions))
    }
}

#[async_trait]
impl Decider for PermissionRules {
    fn name(&self) -> &'static str {
        "permissions"
    }

    fn role(&self) -> Role {
        Role::Rules
    }

    fn policy(&self, _guards: &[std::sync::Arc<dyn crate::governing::guard::ToolGuard>]) -> Vec<String> {
        let (permissions, origin) = match &self.0 {
            RulesOf::File(settings) => (settings.permissions(), "settings"),
            RulesOf::Code(permissions) => (permissions, "code"),
        };
        let lists = [("allow", &permissions.allow), ("ask", &permissions.ask), ("deny", &permissions.deny)];
        lists
            .into_iter()
            .flat_map(|(list, rules)| rules.iter().map(move |rule| format!("{origin}:{list}:{}", rule.text())))
            .collect()
    }

    async fn decide(&self, review: &Review<'_>, arguments: &mut Arguments, _asked: &[ApprovalReason]) -> Vec<Answer> {
        let (permissions, code) = match &self.0 {
            RulesOf::File(settings) => (settings.permissions(), false),
            RulesOf::Code(permissions) => (permissions, true),
        };
        let name = &review.call.function.name;
        let Some(RuleMatch { kind, id, rule, reason }) = permissions.decide(name, arguments.get()) else {
            return Vec::new();
        };
        let id = if code { id.replacen("settings:", "code:", 1) } else { id };
        let decision = match kind {
            RuleKind::Deny => {
                tracing::info!(target: "hooks_runtime::thread", thread = %review.thread.id(), call = %review.call.id, "the rule {id} `{rule}` denied the tool call {name}");
                ToolDecision::deny(reason)
            }
            RuleKind::Ask => ToolDecision::ask(reason),
            RuleKind::Allow => ToolDecision::allow(),
        };
        vec![Answer::new(Some(&id), decision).with_rule(rule.text())]
    }
}

/// The reason a call is denied with once a hook has stopped the turn.
const STOPPING: &str = "the turn is stopping: a hook answered `continue: false`";

/// `PreToolUse`: may deny the call, ask, or rewrite its arguments (`updatedInput`, which must
/// satisfy the tool's schema, G5) and give context for the model.
pub(crate) struct PreToolUseHooks(pub(crate) SettingsHooks);

#[async_trait]
impl Decider for PreToolUseHooks {
    fn name(&self) -> &'static str {
        "pre_tool_use_hooks"
    }

    async fn decide(&self, review: &Review<'_>, arguments: &mut Arguments, _asked: &[ApprovalReason]) -> Vec<Answer> {
        let settings = &self.0;
        let thread = review.thread;
        // K10: after a hook's `continue: false` no further call of the turn runs.
        if let Some(stop) = settings.state().stop_pending(thread.id()) {
            return vec![Answer::new(Some(&stop.hook), ToolDecision::deny(STOPPING))];
        }
        let Some(hooks) = selected(settings) else { return Vec::new() };
        let call = review.call;
        let name = &call.function.name;
        let event = SettingsEvent::PreToolUse;
        let transcript = transcript(settings, thread, hooks, event, Some(name), Some(arguments.get())).await;
        let input = ToolCallInput {
            once: Some((settings.state(), thread.id())),
            session_id: thread.id(),
            tool_name: name,
            tool_use_id: &call.id,
            arguments: arguments.get(),
            transcript_path: transcript.as_ref().and_then(|(_, path)| path.as_str()),
        };
        let schema =
            |arguments: &Value| review.schemas.check(review.tool, arguments).map_err(|violation| violation.to_string());
        let answer = pre_tool_use::evaluate(hooks, &input, &cwd(), &schema).await;
        tell_person(thread, "PreToolUse", answer.messages);
        for stop in answer.stops {
            request_stop(settings, thread, "PreToolUse", stop);
        }
        let mut answers = match answer.verdict {
            ToolVerdict::Allow => Vec::new(),
            ToolVerdict::Deny { hook, reason } => {
                // The audit line of a refusal: which call and why, never its arguments.
                tracing::info!(target: "hooks_runtime::thread", thread = %thread.id(), call = %call.id, "the PreToolUse hook {hook} denied the tool call {name}: {reason}");
                return vec![Answer::new(Some(&hook), ToolDecision::deny(reason))];
            }
            ToolVerdict::Ask(given) => {
                given.into_iter().map(|given| Answer::new(Some(&given.hook), ToolDecision::ask(given.reason))).collect()
            }
        };
        if let Some(rewritten) = answer.arguments {
            *arguments.for_change() = rewritten;
        }
        match answers.first_mut() {
            Some(first) => first.context = answer.context,
            None => {
                let mut allowed = Answer::new(Some("settings:hooks.PreToolUse"), ToolDecision::allow());
                allowed.context = answer.context;
                answers.push(allowed);
            }
        }
        answers
    }
}

/// K11: `PermissionRequest` for a call about to wait for a person: a hook's `allow` or `deny`
/// decides the approval at once, in the hook's name (deny > allow); no answer leaves it to a
/// person.
pub(crate) struct PermissionRequestHooks(pub(crate) SettingsHooks);

#[async_trait]
impl Decider for PermissionRequestHooks {
    fn name(&self) -> &'static str {
        "permission_request_hooks"
    }

    fn role(&self) -> Role {
        Role::OnAsk
    }

    async fn decide(&self, review: &Review<'_>, arguments: &mut Arguments, asked: &[ApprovalReason]) -> Vec<Answer> {
        let settings = &self.0;
        let thread = review.thread;
        let Some(hooks) = selected(settings) else { return Vec::new() };
        let call = review.call;
        let event = SettingsEvent::PermissionRequest;
        let name = call.function.name.as_str();
        let suggestions: Vec<Value> =
            asked.iter().map(|reason| serde_json::json!({"hook": reason.hook, "reason": reason.reason})).collect();
        let fields = vec![
            ("tool_name", Value::from(name)),
            ("tool_input", arguments.get().clone()),
            ("tool_use_id", Value::from(call.id.as_str())),
            ("permission_suggestions", Value::Array(suggestions)),
        ];
        let verdict = fire(settings, thread, hooks, event, Some(name), Some(arguments.get()), fields).await;
        let Some((permission, given)) = verdict.permission else { return Vec::new() };
        let Some(first) = given.into_iter().next() else { return Vec::new() };
        let (decision, word) = match permission {
            Permission::Deny => {
                tracing::info!(target: "hooks_runtime::thread", thread = %thread.id(), call = %call.id, "the PermissionRequest hook {} denied the approval of {name}", first.hook);
                let reason = if first.reason.trim().is_empty() {
                    "denied by a PermissionRequest hook".to_owned()
                } else {
                    first.reason
                };
                (ToolDecision::deny(reason), "denied")
            }
            Permission::Allow => {
                tracing::info!(target: "hooks_runtime::thread", thread = %thread.id(), call = %call.id, "the PermissionRequest hook {} approved {name}", first.hook);
                if let Some(updated) = verdict.updated_input {
                    *arguments.for_change() = Value::Object(updated);
                }
                (ToolDecision::allow(), "approved")
            }
            _ => return Vec::new(),
        };
        thread.emit(ThreadEvent::Custom {
            event: "settings_hook_approval".to_owned(),
            data: serde_json::json!({"hook": first.hook, "call": call.id, "decision": word}),
        });
        vec![Answer::new(Some(&first.hook), decision)]
    }
}
