//! H3: command hooks (settings-file commands and YAML `command` actions) run with the runtime's
//! environment minus the variables the application names as secrets, checked with a real
//! child printing its environment (`env`). The MCP servers' side is in `mcp_bounds`.

#![cfg(feature = "declarative")]

use crate::declarative_support::{ScratchDir, ctx};

use hooks_runtime::declarative::{
    DeclarativeHookRegistry, DefaultHookExecutor, HookAction, HookConfig, HookEvent, SettingsHooks,
};
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::{Runtime, ThreadOptions};
use serde_json::json;

define_prompt! { name: h3_prompt, model: "scripted", prompt: "Reply." }
define_agent! { name: h3_agent, side_a: { prompt: h3_prompt, stop_on_response: true } }

/// Cargo sets both for this test process: one stands for a secret, the other for the rest.
const SECRET: &str = "CARGO_MANIFEST_DIR";
const KEPT: &str = "CARGO_PKG_NAME";

/// The names of the variables in `env`'s output.
fn names(env_output: &str) -> Vec<String> {
    env_output.lines().filter_map(|line| line.split_once('=')).map(|(name, _)| name.to_owned()).collect()
}

async fn settings_hook_env(hooks: SettingsHooks, out: &str) -> Vec<String> {
    let runtime = Runtime::builder()
        .agent::<h3_agent>()
        .model("scripted", ScriptedModel::new([ScriptedResponse::text("Hi.")]))
        .settings_hooks(hooks)
        .build()
        .unwrap();
    let thread = runtime.create_thread("h3_agent", ThreadOptions::default()).await.unwrap();
    thread.send("hello").await.unwrap();
    names(&std::fs::read_to_string(out).unwrap())
}

#[tokio::test]
async fn h3_settings_command_hooks_get_the_environment_without_the_secrets_named() {
    assert!(std::env::var_os(SECRET).is_some() && std::env::var_os(KEPT).is_some());
    let dir = ScratchDir::new("h3-settings");
    let out = dir.file("env");
    let settings =
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": format!("env > '{out}'")}]}]}});

    let everything = settings_hook_env(SettingsHooks::from_json_strict(&settings.to_string()).unwrap(), &out).await;
    for name in [SECRET, KEPT, "PATH", "CLAUDE_PROJECT_DIR"] {
        assert!(everything.contains(&name.to_owned()), "`{name}` by default: {everything:?}");
    }

    let hooks = SettingsHooks::from_json_strict(&settings.to_string()).unwrap().secret_env([SECRET]);
    let without = settings_hook_env(hooks, &out).await;
    assert!(!without.contains(&SECRET.to_owned()), "{without:?}");
    for name in [KEPT, "PATH", "CLAUDE_PROJECT_DIR"] {
        assert!(without.contains(&name.to_owned()), "`{name}` kept: {without:?}");
    }
}

#[tokio::test]
async fn h3_yaml_command_actions_get_the_environment_without_the_secrets_named() {
    let dir = ScratchDir::new("h3-yaml");
    let out = dir.file("env");
    let registry = |executor: DefaultHookExecutor| {
        DeclarativeHookRegistry::of([HookConfig::new(
            HookEvent::OnStop,
            None,
            HookAction::command(format!("env > '{out}'")),
        )])
        .with_executor(executor)
    };
    registry(DefaultHookExecutor::new()).fire_event(HookEvent::OnStop, &ctx(&[])).await;
    let everything = names(&std::fs::read_to_string(&out).unwrap());
    assert!(everything.contains(&SECRET.to_owned()) && everything.contains(&KEPT.to_owned()), "{everything:?}");

    registry(DefaultHookExecutor::new().with_secret_env([SECRET])).fire_event(HookEvent::OnStop, &ctx(&[])).await;
    let without = names(&std::fs::read_to_string(&out).unwrap());
    assert!(!without.contains(&SECRET.to_owned()), "{without:?}");
    assert!(without.contains(&KEPT.to_owned()) && without.contains(&"PATH".to_owned()), "{without:?}");
}
