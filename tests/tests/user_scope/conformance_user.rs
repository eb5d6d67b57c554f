//! User scope (CONFORMANCE U1, U2) against the real runtime: user-scope hooks run for every
//! linked hook of their kind without any reference, and are never part of a thread chain.
//!
//! User-scope hooks run for every linked hook of their kind, so each test uses its own user id
//! and looks only at what the hooks recorded for it.

use crate::support_tools;

use std::sync::Mutex;

use hooks_runtime::definition::{AgentDef, HookDef, Participant, SideDef};
use hooks_runtime::model::ScriptedModel;
use hooks_runtime::prelude::*;
use hooks_runtime::resolution::{ActiveContext, ResolutionError};
use hooks_runtime::types::{PackageSignature, Side, UserEvent};
use hooks_runtime::{BuildError, Runtime};
use serde_json::json;
use support_tools::lock;

static U1_SEEN: Mutex<Vec<(&'static str, UserState)>> = Mutex::new(Vec::new());

fn u1_record(hook: &'static str, user: &UserState) {
    lock(&U1_SEEN).push((hook, user.clone()));
}

#[hook(user_client_attached, id = "u1_attached_first")]
fn u1_attached_first(user: &UserState) {
    u1_record("attached_first", user);
}

/// A second hook of the same kind runs too, and its failure stops nothing.
#[hook(user_client_attached, id = "u1_attached_second")]
async fn u1_attached_second(user: &UserState) -> Result<(), HookError> {
    tokio::task::yield_now().await;
    u1_record("attached_second", user);
    Err(HookError::new("the second attach hook fails on purpose"))
}

#[hook(user_client_detached, id = "u1_detached")]
async fn u1_detached(user: &UserState) {
    u1_record("detached", user);
}

#[hook(user_value_changed, id = "u1_value_changed")]
fn u1_value_changed(user: &UserState) {
    u1_record("value_changed", user);
}

/// An agent whose prompt and agent lists hold thread hooks only; the user-scope hooks above are
/// linked but referenced by nothing.
#[hook(filter_messages, id = "u2_thread_filter")]
fn u2_thread_filter(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    messages
}

#[hook(after_create_message, id = "u2_thread_created")]
fn u2_thread_created(_state: &ThreadState, _message: &MessageRecord) {}

define_prompt! {
    name: u_prompt,
    model: "scripted",
    prompt: "U.",
    hooks: [u2_thread_filter],
}

define_agent! {
    name: u_agent,
    side_a: { prompt: u_prompt, stop_on_response: true },
    side_b: { human: true },
    hooks: [u2_thread_created],
}

fn runtime() -> Runtime {
    Runtime::builder().agent::<u_agent>().model("scripted", ScriptedModel::default()).build().unwrap()
}

fn values(pairs: &[(&str, serde_json::Value)]) -> serde_json::Map<String, serde_json::Value> {
    pairs.iter().map(|(key, value)| ((*key).to_owned(), value.clone())).collect()
}

fn user(
    user_id: &str,
    clients: &[&str],
    values: serde_json::Map<String, serde_json::Value>,
    event: UserEvent,
) -> UserState {
    UserState::new(user_id, event)
        .with_values(values)
        .with_clients(clients.iter().map(|client| (*client).to_owned()).collect())
}

#[tokio::test]
async fn u1_user_scope_hooks_run_for_every_call_with_the_user_state() {
    let runtime = runtime();
    let id = "u1-user";
    runtime.attach_client(id, "c1").await;
    runtime.attach_client(id, "c2").await;
    runtime.set_user_value(id, "theme", Some(json!("dark"))).await.unwrap();
    runtime.set_user_value(id, "theme", Some(json!("light"))).await.unwrap();
    runtime.detach_client(id, "c1").await;
    runtime.set_user_value(id, "theme", None).await.unwrap();

    let seen: Vec<(&str, UserState)> =
        lock(&U1_SEEN).iter().filter(|(_, state)| state.user_id == id).cloned().collect();
    let attached = |client: &str| UserEvent::ClientAttached { client_id: client.to_owned() };
    let changed = |old: Option<&str>, new: Option<&str>| UserEvent::ValueChanged {
        key: "theme".to_owned(),
        old: old.map(|value| json!(value)),
        new: new.map(|value| json!(value)),
    };
    let expected = vec![
        ("attached_first", user(id, &["c1"], values(&[]), attached("c1"))),
        ("attached_second", user(id, &["c1"], values(&[]), attached("c1"))),
        ("attached_first", user(id, &["c1", "c2"], values(&[]), attached("c2"))),
        ("attached_second", user(id, &["c1", "c2"], values(&[]), attached("c2"))),
        ("value_changed", user(id, &["c1", "c2"], values(&[("theme", json!("dark"))]), changed(None, Some("dark")))),
        (
            "value_changed",
            user(id, &["c1", "c2"], values(&[("theme", json!("light"))]), changed(Some("dark"), Some("light"))),
        ),
        (
            "detached",
            user(
                id,
                &["c2"],
                values(&[("theme", json!("light"))]),
                UserEvent::ClientDetached { client_id: "c1".to_owned() },
            ),
        ),
        ("value_changed", user(id, &["c2"], values(&[]), changed(Some("light"), None))),
    ];
    assert_eq!(seen, expected);
    assert_eq!(runtime.user_value(id, "theme").await.unwrap(), None);
}

#[tokio::test]
async fn u1_user_scope_hooks_see_each_user_separately() {
    let runtime = runtime();
    runtime.set_user_value("u1-alice", "lang", Some(json!("fr"))).await.unwrap();
    runtime.attach_client("u1-bob", "phone").await;

    let seen = lock(&U1_SEEN).clone();
    let alice: Vec<_> = seen.iter().filter(|(_, state)| state.user_id == "u1-alice").collect();
    let bob: Vec<_> = seen.iter().filter(|(_, state)| state.user_id == "u1-bob").collect();
    assert_eq!(alice.len(), 1, "{alice:?}");
    assert_eq!(alice[0].1.values, values(&[("lang", json!("fr"))]));
    assert!(alice[0].1.clients.is_empty(), "bob's client is not alice's");
    assert_eq!(bob.iter().map(|(hook, _)| *hook).collect::<Vec<_>>(), ["attached_first", "attached_second"]);
    assert!(bob.iter().all(|(_, state)| state.values.is_empty() && state.clients == ["phone"]));
    assert_eq!(runtime.user_value("u1-alice", "lang").await.unwrap(), Some(json!("fr")));
}

const USER_HOOK_IDS: [&str; 4] = ["u1_attached_first", "u1_attached_second", "u1_detached", "u1_value_changed"];

#[test]
fn u2_user_scope_hooks_are_never_in_a_resolved_thread_chain() {
    let runtime = runtime();
    let agent = runtime.agent("u_agent").unwrap();
    let resolved = agent.resolved();
    let mut thread_hooks = 0;
    for active in [ActiveContext::Side(Side::A), ActiveContext::Side(Side::B), ActiveContext::AtRest] {
        for &kind in HookKind::ALL {
            let chain = resolved.hook_chain(active, kind);
            if !kind.is_thread() {
                assert!(chain.is_empty(), "{kind} in {active:?}: {chain:?}");
            }
            for entry in chain {
                assert!(entry.kind().is_thread(), "{} in the {kind} chain of {active:?}", entry.id());
                assert!(!USER_HOOK_IDS.contains(&entry.id()), "{} in a thread chain", entry.id());
                thread_hooks += 1;
            }
        }
    }
    assert!(thread_hooks >= 2, "the agent's thread hooks are resolved");
    // The user-scope hooks are linked all the same.
    let linked: Vec<&str> = Registry::linked().hooks().iter().map(|hook| hook.id).collect();
    for id in USER_HOOK_IDS {
        assert!(linked.contains(&id), "{id} is linked");
    }
}

static U2_LISTING_USER_HOOK: AgentDef = AgentDef::new(
    "u2_hand_built",
    PackageSignature::new_static("u2_hand_built", "0.0.0"),
    SideDef::new(Participant::Human),
    SideDef::new(Participant::Human),
)
.with_hooks(&[<u2_thread_created as Hook>::DEF, <u1_value_changed as Hook>::DEF])
.with_expose_as_tool(false);

#[test]
fn u2_a_hand_built_agent_listing_a_user_scope_hook_fails_to_build() {
    // The macros refuse this at compile time (tests/crates/ui_cases/tests/ui/fail/d7_*, d11_*); a
    // definition built by hand is refused when the runtime is built, before any thread runs.
    let def: &'static HookDef = <u1_value_changed as Hook>::DEF;
    assert!(!def.kind().is_thread());
    let error = Runtime::builder().agent_def(&U2_LISTING_USER_HOOK).build().unwrap_err();
    match error {
        BuildError::Resolution(ResolutionError::UserScopeHookListed { agent, hook, .. }) => {
            assert_eq!((agent, hook), ("u2_hand_built", "u1_value_changed"));
        }
        other => panic!("expected UserScopeHookListed, got {other}"),
    }
}
