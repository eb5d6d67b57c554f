//! Scoping and resolution (S1-S10) and provenance (C3), on the guide's coordinator and
//! mail_agent example and variations of it.

use std::borrow::Cow;

use hooks_runtime::__private::{self, Adapter, EnabledRelationships, HookHandler};
use hooks_runtime::definition::{
    AgentDef, HookDef, ParentHookRequirement, ParentHookStage, Participant, PromptDef, SideDef, SubagentRelationship,
};
use hooks_runtime::prelude::*;
use hooks_runtime::resolution::{ActiveContext, ResolutionError};
use hooks_runtime::types::{PackageSignature, Side};
use mail_pkg::mail_agent;

mod hooks {
    use hooks_runtime::prelude::*;

    #[hook(after_tool_call_success, id = "log_tool_calls")]
    pub(crate) fn log_tool_calls(
        _state: &ThreadState,
        _call: &HookToolCall,
        _result: &HookToolResult,
    ) -> Option<HookToolResult> {
        None
    }

    #[hook(filter_messages, id = "limit_recent")]
    pub(crate) fn limit_recent(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
        messages
    }

    #[hook(filter_messages, id = "drop_silent")]
    pub(crate) fn drop_silent(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
        messages.into_iter().filter(|m| !m.is_silent()).collect()
    }

    #[hook(after_system_message, id = "agent_banner")]
    pub(crate) fn agent_banner(_state: &ThreadState, _system: &str) -> Option<String> {
        None
    }

    #[hook(after_system_message, id = "calendar_context")]
    pub(crate) fn calendar_context(_state: &ThreadState, _system: &str) -> Option<String> {
        None
    }

    #[hook(tool_call_done, id = "calendar_first")]
    pub(crate) fn calendar_first(_state: &ThreadState, _call: &HookToolCall, _result: &HookToolResult) {}

    #[hook(filter_messages, id = "never_listed")]
    pub(crate) fn never_listed(_state: &ThreadState, _messages: Vec<HookMessage>) -> Vec<HookMessage> {
        Vec::new()
    }
}

use hooks::*;

define_prompt! {
    name: coordinator_prompt,
    model: "tool-reasoning",
    prompt: "You coordinate the user's assistants.",
    tools: ["calendar_agent"],
    hooks: [limit_recent, drop_silent],
}

define_prompt! {
    name: plain_prompt,
    model: "tool-reasoning",
    prompt: "You answer.",
}

define_agent! {
    name: calendar_agent,
    expose_as_tool: true,
    tool_description: "Reads the calendar.",
    parent_hooks: [
        { hook: calendar_context, reason: "Shows today's meetings." },
        { hook: calendar_first, reason: "Records tool calls before the parent does.", stage: before_parent },
    ],
    side_a: { prompt: plain_prompt },
    side_b: { human: true },
}

// The guide's coordinator: mail_agent (another crate) as a subagent on side A.
define_agent! {
    name: coordinator,
    side_a: { prompt: coordinator_prompt, subagents: [{ agent: mail_agent, as: mailbox, max_instances: 1 }] },
    side_b: { human: true },
    hooks: [log_tool_calls, agent_banner],
}

// A relationship on side B, and one on side A: side A's come first whichever side is active.
define_agent! {
    name: two_sided,
    side_a: { prompt: plain_prompt, subagents: [{ agent: mail_agent }] },
    side_b: { prompt: coordinator_prompt, subagents: [{ agent: calendar_agent, hidden: true }] },
    hooks: [agent_banner],
}

define_agent! {
    name: with_optional,
    side_a: { prompt: plain_prompt, subagents: [{ agent: calendar_agent, optional: true }, { agent: mail_agent }] },
    side_b: { human: true },
    hooks: [agent_banner],
}

// Coordinator's parent: must not receive mail_agent's requirements (S5).
define_agent! {
    name: chief,
    expose_as_tool: true,
    side_a: { prompt: plain_prompt, subagents: [{ agent: coordinator }] },
    side_b: { human: true },
}

fn resolve(agent: &'static AgentDef) -> ResolvedAgent {
    ResolvedAgent::resolve(agent, &Registry::linked()).expect("resolves")
}

fn ids(resolved: &ResolvedAgent, active: ActiveContext, kind: HookKind) -> Vec<&'static str> {
    resolved.hook_chain(active, kind).ids()
}

const SIDE_A: ActiveContext = ActiveContext::Side(Side::A);
const SIDE_B: ActiveContext = ActiveContext::Side(Side::B);

#[test]
fn s1_child_before_then_prompt_then_child_after() {
    let resolved = resolve(<coordinator as Agent>::DEF);
    // mail_context is before_parent; the prompt has no after_system_message hook, so the base set
    // for that kind comes from the prompt (non-empty list) and contributes nothing of that kind.
    assert_eq!(ids(&resolved, SIDE_A, HookKind::AfterSystemMessage), ["mail_context"]);
    assert_eq!(ids(&resolved, SIDE_A, HookKind::FilterMessages), ["limit_recent", "drop_silent"]);
    // mail_audit is after_parent.
    assert_eq!(ids(&resolved, SIDE_A, HookKind::ToolCallDone), ["mail_audit"]);

    let resolved = resolve(<two_sided as Agent>::DEF);
    // before_parent (mail_context is before_parent), agent base (agent_banner), after_parent (calendar_context).
    assert_eq!(
        ids(&resolved, SIDE_A, HookKind::AfterSystemMessage),
        ["mail_context", "agent_banner", "calendar_context"]
    );
}

#[test]
fn s2_unreferenced_hook_never_resolves() {
    let registry = Registry::linked();
    assert!(registry.get("never_listed").is_some(), "linked into the binary");
    for agent in [
        <coordinator as Agent>::DEF,
        <two_sided as Agent>::DEF,
        <with_optional as Agent>::DEF,
        <chief as Agent>::DEF,
        <calendar_agent as Agent>::DEF,
    ] {
        let resolved = resolve(agent);
        for active in [SIDE_A, SIDE_B, ActiveContext::AtRest] {
            for &kind in HookKind::ALL {
                assert!(!ids(&resolved, active, kind).contains(&"never_listed"), "{} {active:?} {kind}", agent.name);
            }
        }
    }
}

#[test]
fn s3_empty_prompt_hooks_fall_back_to_agent_hooks_non_empty_replace_them() {
    let resolved = resolve(<coordinator as Agent>::DEF);
    // Side A's prompt lists hooks: they replace the agent's (no log_tool_calls, no agent_banner).
    assert!(ids(&resolved, SIDE_A, HookKind::AfterToolCallSuccess).is_empty());
    // Side B is human: no prompt, so the agent's hooks apply.
    assert_eq!(ids(&resolved, SIDE_B, HookKind::AfterToolCallSuccess), ["log_tool_calls"]);
    let resolved = resolve(<two_sided as Agent>::DEF);
    // plain_prompt lists no hooks: the agent's apply.
    assert!(ids(&resolved, SIDE_A, HookKind::AfterSystemMessage).contains(&"agent_banner"));
    // coordinator_prompt lists hooks: agent_banner is replaced.
    assert!(!ids(&resolved, SIDE_B, HookKind::AfterSystemMessage).contains(&"agent_banner"));
}

#[test]
fn s4_disabled_optional_contributes_none_hidden_still_contributes() {
    let resolved = resolve(<with_optional as Agent>::DEF);
    let slot = resolved.optional_slot("calendar_agent").expect("optional relationship has a slot");
    let chain = __private::chain(&resolved, SIDE_A, HookKind::AfterSystemMessage);
    let active = |enabled: &EnabledRelationships| -> Vec<&str> {
        chain.iter().filter(|entry| entry.is_active(enabled)).map(|entry| entry.hook.id).collect()
    };
    let mut enabled = EnabledRelationships::NONE;
    assert_eq!(active(&enabled), ["mail_context", "agent_banner"]);
    enabled.set(slot, true);
    assert_eq!(active(&enabled), ["mail_context", "agent_banner", "calendar_context"]);
    enabled.set(slot, false);
    assert_eq!(active(&enabled), ["mail_context", "agent_banner"]);
    // The public view names the optional relationship a hook depends on.
    let optional: Vec<_> = resolved
        .hook_chain(SIDE_A, HookKind::AfterSystemMessage)
        .iter()
        .map(|entry| (entry.id(), entry.optional_relationship()))
        .collect();
    assert_eq!(
        optional,
        [("mail_context", None), ("agent_banner", None), ("calendar_context", Some("calendar_agent"))]
    );

    // two_sided's calendar relationship is hidden and still contributes.
    let resolved = resolve(<two_sided as Agent>::DEF);
    assert!(<two_sided as Agent>::DEF.side_b.subagents[0].hidden);
    assert!(ids(&resolved, SIDE_A, HookKind::AfterSystemMessage).contains(&"calendar_context"));
}

#[test]
fn s5_requirements_reach_the_direct_parent_only() {
    let resolved = resolve(<chief as Agent>::DEF);
    for active in [SIDE_A, SIDE_B, ActiveContext::AtRest] {
        for &kind in HookKind::ALL {
            let chain = ids(&resolved, active, kind);
            assert!(!chain.contains(&"mail_context") && !chain.contains(&"mail_audit"), "{active:?} {kind}: {chain:?}");
        }
    }
}

#[test]
fn s6_relationship_order_side_a_before_side_b_then_declaration_order() {
    let resolved = resolve(<two_sided as Agent>::DEF);
    // tool_call_done: calendar_first is before_parent (side B child), mail_audit after_parent (side A child).
    assert_eq!(ids(&resolved, SIDE_A, HookKind::ToolCallDone), ["calendar_first", "mail_audit"]);
    // Both after_parent after_system_message? mail_context is before_parent; calendar_context after.
    // With both children after_parent in one kind, side A's child comes first:
    let resolved = resolve(<with_optional as Agent>::DEF);
    let mut enabled = EnabledRelationships::NONE;
    enabled.set(resolved.optional_slot("calendar_agent").unwrap(), true);
    let done: Vec<&str> = __private::chain(&resolved, SIDE_A, HookKind::ToolCallDone)
        .iter()
        .filter(|entry| entry.is_active(&enabled))
        .map(|entry| entry.hook.id)
        .collect();
    // calendar_first is before_parent; mail_audit after_parent.
    assert_eq!(done, ["calendar_first", "mail_audit"]);
    // Within one child, the parent_hooks order holds: mail_agent declares mail_context then mail_audit.
    let requirements: Vec<&str> = <mail_agent as Agent>::DEF.parent_hooks.iter().map(|r| r.hook.id).collect();
    assert_eq!(requirements, ["mail_context", "mail_audit"]);
}

#[test]
fn s6_two_children_same_stage_follow_relationship_order() {
    define_agent! {
        name: ordered,
        side_a: { prompt: plain_prompt, subagents: [{ agent: calendar_agent }, { agent: mail_agent }] },
        side_b: { human: true },
    }
    define_agent! {
        name: reversed,
        side_a: { prompt: plain_prompt, subagents: [{ agent: mail_agent }, { agent: calendar_agent }] },
        side_b: { human: true },
    }
    // after_parent tool_call_done... calendar_first is before_parent, so compare after_system_message:
    // mail_context is before_parent and calendar_context after_parent; use tool_call_done's
    // before_parent (calendar_first) and after_parent (mail_audit) mixed with a same-stage pair:
    let ordered = resolve(<ordered as Agent>::DEF);
    let reversed = resolve(<reversed as Agent>::DEF);
    let before_ordered: Vec<_> = ordered
        .hook_chain(SIDE_A, HookKind::AfterSystemMessage)
        .iter()
        .chain(ordered.hook_chain(SIDE_A, HookKind::ToolCallDone))
        .filter(|e| e.requirement().is_some_and(|r| r.stage == ParentHookStage::AfterParent))
        .map(|e| e.id())
        .collect();
    let before_reversed: Vec<_> = reversed
        .hook_chain(SIDE_A, HookKind::AfterSystemMessage)
        .iter()
        .chain(reversed.hook_chain(SIDE_A, HookKind::ToolCallDone))
        .filter(|e| e.requirement().is_some_and(|r| r.stage == ParentHookStage::AfterParent))
        .map(|e| e.id())
        .collect();
    assert_eq!(before_ordered, ["calendar_context", "mail_audit"]);
    assert_eq!(before_reversed, ["calendar_context", "mail_audit"]);
    // Same kind, same stage, two children: relationship order decides.
    #[allow(unreachable_pub)]
    mod second_child {
        use hooks_runtime::prelude::*;

        #[hook(after_system_message, id = "weather_context")]
        pub fn weather_context(_state: &ThreadState, _system: &str) -> Option<String> {
            None
        }

        define_prompt! { name: weather_prompt, model: "m", prompt: "Weather." }

        define_agent! {
            name: weather_agent,
            expose_as_tool: true,
            parent_hooks: [{ hook: weather_context, reason: "Shows the forecast." }],
            side_a: { prompt: weather_prompt },
        }
    }
    define_agent! {
        name: weather_then_calendar,
        side_a: { prompt: plain_prompt, subagents: [{ agent: second_child::weather_agent }, { agent: calendar_agent }] },
    }
    define_agent! {
        name: calendar_then_weather,
        side_a: { prompt: plain_prompt, subagents: [{ agent: calendar_agent }, { agent: second_child::weather_agent }] },
    }
    assert_eq!(
        ids(&resolve(<weather_then_calendar as Agent>::DEF), SIDE_A, HookKind::AfterSystemMessage),
        ["weather_context", "calendar_context"]
    );
    assert_eq!(
        ids(&resolve(<calendar_then_weather as Agent>::DEF), SIDE_A, HookKind::AfterSystemMessage),
        ["calendar_context", "weather_context"]
    );
}

#[test]
fn s7_child_hooks_resolve_in_the_child_crate() {
    let resolved = resolve(<coordinator as Agent>::DEF);
    let entry = resolved.hook_chain(SIDE_A, HookKind::AfterSystemMessage).get(0).unwrap();
    assert_eq!(entry.def().location.package.name, "mail_pkg");
    assert!(entry.def().location.module_path.starts_with("mail_pkg"));
    assert!(std::ptr::eq(entry.def(), <mail_pkg::mail_context as Hook>::DEF));
}

#[test]
fn c3_source_is_prompt_agent_or_child_with_relationship_agent_and_package() {
    let resolved = resolve(<coordinator as Agent>::DEF);
    let child = resolved.hook_chain(SIDE_A, HookKind::AfterSystemMessage).get(0).unwrap();
    assert_eq!(
        child.source(),
        &HookSource::Child {
            relationship_name: Cow::Borrowed("mailbox"),
            agent_name: Cow::Borrowed("mail_agent"),
            package: Some(PackageSignature::new_static("mail_pkg", "0.3.1")),
        }
    );
    assert_eq!(child.context().source, *child.source(), "the context the hook receives carries it");
    let prompt = resolved.hook_chain(SIDE_A, HookKind::FilterMessages).get(0).unwrap();
    assert_eq!(prompt.source(), &HookSource::Prompt { prompt_name: Cow::Borrowed("coordinator_prompt") });
    let agent = resolved.hook_chain(SIDE_B, HookKind::AfterToolCallSuccess).get(0).unwrap();
    assert_eq!(agent.source(), &HookSource::Agent { agent_name: Cow::Borrowed("coordinator") });
    // Without `as`, the relationship name is the agent's name.
    let resolved = resolve(<two_sided as Agent>::DEF);
    let HookSource::Child { relationship_name, .. } =
        resolved.hook_chain(SIDE_A, HookKind::AfterSystemMessage).get(0).unwrap().source()
    else {
        panic!("child source expected")
    };
    assert_eq!(relationship_name, "mail_agent");
}

#[test]
fn s9_at_rest_resolves_from_agent_hooks() {
    let resolved = resolve(<coordinator as Agent>::DEF);
    assert_eq!(ids(&resolved, ActiveContext::AtRest, HookKind::AfterToolCallSuccess), ["log_tool_calls"]);
    assert_eq!(ids(&resolved, ActiveContext::AtRest, HookKind::AfterSystemMessage), ["agent_banner"]);
    assert!(ids(&resolved, ActiveContext::AtRest, HookKind::FilterMessages).is_empty(), "no prompt at rest");
}

#[test]
fn s10_handoff_target_in_prompt_tools_does_not_activate_parent_hooks() {
    // coordinator_prompt lists `calendar_agent` among its tools (a handoff), not as a subagent.
    assert!(<coordinator_prompt as Prompt>::DEF.tools.contains(&"calendar_agent"));
    let resolved = resolve(<coordinator as Agent>::DEF);
    for &kind in HookKind::ALL {
        let chain = ids(&resolved, SIDE_A, kind);
        assert!(!chain.contains(&"calendar_context") && !chain.contains(&"calendar_first"), "{kind}: {chain:?}");
    }
}

static USER_HOOK: HookDef = __private::hook_def(
    "announce_client",
    HookHandler::UserClientAttached(Adapter::Sync(|_user| Ok(()))),
    0,
    0,
    ("hand_built", "0.0.0"),
    "hand_built",
    "hand_built.rs",
    1,
    "announce_client",
);

static UNLINKED_HOOK: HookDef = __private::hook_def(
    "not_linked",
    HookHandler::AfterThreadCreated(Adapter::Sync(|_state, _ctx| Ok(()))),
    0,
    0,
    ("hand_built", "0.0.0"),
    "hand_built",
    "hand_built.rs",
    2,
    "not_linked",
);

const fn hand_built_child(requirement: &'static [ParentHookRequirement]) -> AgentDef {
    AgentDef::new(
        "hand_built_child",
        PackageSignature::new_static("hand_built", "0.0.0"),
        SideDef::new(Participant::Human),
        SideDef::new(Participant::Human),
    )
    .with_parent_hooks(requirement)
}

static USER_SCOPE_CHILD: AgentDef = hand_built_child(&[
    ParentHookRequirement::new(<mail_pkg::mail_context as Hook>::DEF, "fine", ParentHookStage::BeforeParent),
    ParentHookRequirement::new(&USER_HOOK, "not allowed", ParentHookStage::AfterParent),
]);
static UNLINKED_CHILD: AgentDef =
    hand_built_child(&[ParentHookRequirement::new(&UNLINKED_HOOK, "missing", ParentHookStage::AfterParent)]);

const fn parent_of(relationship: &'static [SubagentRelationship]) -> AgentDef {
    AgentDef::new(
        "hand_built_parent",
        PackageSignature::new_static("hand_built", "0.0.0"),
        SideDef::new(Participant::Human).with_subagents(relationship),
        SideDef::new(Participant::Human),
    )
    .with_expose_as_tool(false)
}

const fn relationship_to(child: &'static AgentDef) -> SubagentRelationship {
    SubagentRelationship::new(child, "child")
}

static USER_SCOPE_PARENT: AgentDef = parent_of(&[relationship_to(&USER_SCOPE_CHILD)]);
static UNLINKED_PARENT: AgentDef = parent_of(&[relationship_to(&UNLINKED_CHILD)]);

#[test]
fn s8_unresolvable_requirement_fails_the_whole_resolution() {
    let registry = Registry::linked();
    let error = ResolvedAgent::resolve(&USER_SCOPE_PARENT, &registry).expect_err("user-scope requirement");
    assert_eq!(
        error,
        ResolutionError::UserScopeRequirement {
            parent: "hand_built_parent",
            child: "hand_built_child",
            hook: "announce_client"
        }
    );
    let error = ResolvedAgent::resolve(&UNLINKED_PARENT, &registry).expect_err("unlinked requirement");
    assert!(matches!(error, ResolutionError::UnregisteredHook { hook: "not_linked", .. }), "{error}");
    assert!(error.to_string().contains("not linked into this binary"), "{error}");
}

#[test]
fn u2_user_scope_hook_is_never_a_parent_hook() {
    // The compile-time half is tests/crates/ui_cases/tests/ui/fail/d11_*; a hand-built definition
    // fails at resolution.
    let error = ResolvedAgent::resolve(&USER_SCOPE_PARENT, &Registry::linked()).unwrap_err();
    assert!(error.to_string().contains("user-scope hook"), "{error}");
}

/// A hand-built agent named `name` whose side A is `side` and side B a person.
const fn hand_built(name: &'static str, side: SideDef) -> AgentDef {
    AgentDef::new(name, PackageSignature::new_static("hand_built", "0.0.0"), side, SideDef::new(Participant::Human))
}

static PLAIN_PROMPT: PromptDef = PromptDef::new("plain", "m", "Help.");
static PROMPT_LISTING_TWICE: PromptDef =
    PromptDef::new("twice", "m", "Help.").with_hooks(&[<limit_recent as Hook>::DEF, <limit_recent as Hook>::DEF]);
static HOOK_TWICE_IN_PROMPT: AgentDef =
    hand_built("hook_twice_in_prompt", SideDef::new(Participant::Prompt(&PROMPT_LISTING_TWICE)));
static HOOK_TWICE_IN_AGENT: AgentDef =
    hand_built("hook_twice_in_agent", SideDef::new(Participant::Prompt(&PLAIN_PROMPT))).with_hooks(&[
        <drop_silent as Hook>::DEF,
        <limit_recent as Hook>::DEF,
        <drop_silent as Hook>::DEF,
    ]);
static REQUIRING_UNEXPOSED: AgentDef =
    hand_built("requiring_unexposed", SideDef::new(Participant::Prompt(&PLAIN_PROMPT)))
        .with_expose_as_tool(false)
        .with_parent_hooks(&[ParentHookRequirement::new(
            <limit_recent as Hook>::DEF,
            "recent only",
            ParentHookStage::AfterParent,
        )]);
static REQUIRING_TWICE: AgentDef = hand_built("requiring_twice", SideDef::new(Participant::Prompt(&PLAIN_PROMPT)))
    .with_parent_hooks(&[
        ParentHookRequirement::new(<limit_recent as Hook>::DEF, "recent only", ParentHookStage::AfterParent),
        ParentHookRequirement::new(<limit_recent as Hook>::DEF, "again", ParentHookStage::BeforeParent),
    ]);

fn invalid(agent: &'static AgentDef) -> String {
    match ResolvedAgent::resolve(agent, &Registry::linked()) {
        Err(error @ ResolutionError::InvalidDefinition { .. }) => error.to_string(),
        other => panic!("agent `{}` resolved to {other:?}, not an invalid definition", agent.name),
    }
}

#[test]
fn d4_a_hand_built_list_naming_a_hook_twice_fails_to_resolve() {
    let error = invalid(&HOOK_TWICE_IN_PROMPT);
    assert!(error.contains("`limit_recent` is listed twice in prompt `twice`'s `hooks`"), "{error}");
    let error = invalid(&HOOK_TWICE_IN_AGENT);
    assert!(error.contains("`drop_silent` is listed twice in the agent's `hooks`"), "{error}");
}

#[test]
fn d8_a_hand_built_agent_requiring_parent_hooks_unexposed_fails_to_resolve() {
    let error = invalid(&REQUIRING_UNEXPOSED);
    assert!(error.contains("not exposed as a tool") && error.contains("with_expose_as_tool(true)"), "{error}");
}

#[test]
fn d9_a_hand_built_agent_requiring_one_hook_twice_fails_to_resolve() {
    let error = invalid(&REQUIRING_TWICE);
    assert!(error.contains("`limit_recent` is required twice"), "{error}");
}

static NAMELESS: AgentDef = hand_built("", SideDef::new(Participant::Human));
static ZERO_STEPS: AgentDef =
    hand_built("zero_steps", SideDef::new(Participant::Prompt(&PLAIN_PROMPT)).with_max_steps(0));
static BAD_RELATIONSHIP: AgentDef = hand_built(
    "bad_relationship",
    SideDef::new(Participant::Prompt(&PLAIN_PROMPT))
        .with_subagents(&[SubagentRelationship::new(<mail_agent as Agent>::DEF, "read mail!")]),
);
static SAME_RELATIONSHIP_NAME: AgentDef = hand_built(
    "same_relationship_name",
    SideDef::new(Participant::Prompt(&PLAIN_PROMPT)).with_subagents(&[
        SubagentRelationship::new(<mail_agent as Agent>::DEF, "mail"),
        SubagentRelationship::new(<mail_agent as Agent>::DEF, "mail").with_hidden(true),
    ]),
);
static NO_CHILD_THREADS: AgentDef = hand_built(
    "no_child_threads",
    SideDef::new(Participant::Prompt(&PLAIN_PROMPT)).with_subagents(&[SubagentRelationship::new(
        <mail_agent as Agent>::DEF,
        "mail",
    )
    .with_max_instances(0)]),
);

#[test]
fn a_hand_built_definition_is_held_to_the_rules_the_macros_check() {
    assert!(invalid(&NAMELESS).contains("has no name"));
    assert!(invalid(&ZERO_STEPS).contains("side_a allows 0 model steps"));
    assert!(invalid(&BAD_RELATIONSHIP).contains("`read mail!` is not usable as a tool name"));
    assert!(invalid(&SAME_RELATIONSHIP_NAME).contains("two subagent relationships are named `mail`"));
    assert!(invalid(&NO_CHILD_THREADS).contains("relationship `mail` allows 0 child threads"));
    // What the macros build keeps every rule.
    for agent in [<coordinator as Agent>::DEF, <mail_agent as Agent>::DEF] {
        ResolvedAgent::resolve(agent, &Registry::linked()).unwrap();
    }
}

#[test]
fn explain_snapshot_of_the_coordinator() {
    let resolved = resolve(<coordinator as Agent>::DEF);
    let text = hooks_runtime::explain(&resolved);
    let json = serde_json::to_string_pretty(&hooks_runtime::explain_json(&resolved)).unwrap() + "\n";
    check_snapshot("coordinator_explain.txt", &text);
    check_snapshot("coordinator_explain.json", &json);
}

fn check_snapshot(name: &str, actual: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots").join(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("missing snapshot {}; run with UPDATE_SNAPSHOTS=1 and review it", path.display()));
    assert_eq!(actual, expected, "snapshot {name} changed; review and re-run with UPDATE_SNAPSHOTS=1");
}
