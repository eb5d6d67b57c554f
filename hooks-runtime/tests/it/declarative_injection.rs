//! Y15: in safe mode no context value changes which commands run, and no value keeps an audit
//! hook from running: NULs are replaced (in shell mode too), long values are cut, and a tool
//! name the model made up reaches the hooks as it is.

#![cfg(feature = "declarative")]

use crate::declarative_support;

use std::path::Path;

use declarative_support::{ScratchDir, TestAgent, ctx, journal};
use hooks_runtime::declarative::{
    DeclarativeHookRegistry, HookAction, HookConfig, HookEvent, MAX_COMMAND_VALUE_BYTES, NUL_REPLACEMENT,
};
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::tool::FnTool;
use hooks_runtime::{Runtime, ThreadOptions};

/// What a command receives for `value`.
fn as_received(value: &str) -> String {
    value.replace('\0', NUL_REPLACEMENT)
}

/// Values that would run `touch <pwned>` if they became shell text, in every quoting context.
fn payloads(pwned: &str) -> Vec<String> {
    vec![
        format!("x; touch '{pwned}'"),
        format!("x\0; touch '{pwned}'"),
        format!("\0$(touch '{pwned}')\0"),
        format!("`touch '{pwned}'`"),
        format!("x' ; touch '{pwned}' ; '"),
        format!("x\" ; touch \"{pwned}\" ; \""),
        format!("x\ntouch '{pwned}'\n"),
        format!("x\r\ntouch '{pwned}'"),
        format!("x && touch '{pwned}' || touch '{pwned}' | cat & touch '{pwned}'"),
        format!("x > '{pwned}'"),
        format!("$(touch${{IFS}}'{pwned}')"),
        format!("\\'; touch '{pwned}'; echo \\"),
        format!("${{HOOK_TOOL}}$HOOK_ERROR\\$(touch '{pwned}')"),
        format!("there is no tool named `touch '{pwned}'`"),
        "*".to_owned(),
        "-n".to_owned(),
        String::new(),
        "\0".to_owned(),
    ]
}

#[tokio::test]
async fn y15_hostile_tool_names_and_errors_run_nothing_and_reach_every_audit_hook_whole() {
    let dir = ScratchDir::new("y15-payloads");
    let pwned = dir.file("pwned");
    let (pre, error_tool, error_text) = (dir.file("pre"), dir.file("error-tool"), dir.file("error-text"));
    // One audit hook per event, each value in another quoting context.
    let registry = DeclarativeHookRegistry::of([
        HookConfig::new(
            HookEvent::PreToolUse,
            None,
            HookAction::command_safe(format!("printf '%s' ${{tool}} > '{pre}'")),
        ),
        HookConfig::new(
            HookEvent::OnError,
            None,
            HookAction::command_safe(format!(
                "printf '%s' \"${{tool}}\" > '{error_tool}'; printf '%s' '${{error}}' > '{error_text}'"
            )),
        ),
    ]);
    let payloads = payloads(&pwned);
    let agent = TestAgent::new("a1", &payloads.iter().map(String::as_str).collect::<Vec<_>>(), journal());
    registry.apply_to(&agent).await;

    for payload in &payloads {
        for file in [&pre, &error_tool, &error_text] {
            let _ = std::fs::remove_file(file);
        }
        let failure = format!("failed: {payload}");
        agent.call_tool(payload, || Err(failure.clone())).await.unwrap_err();
        let read = |file: &str| std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{payload:?}: {file}: {e}"));
        assert_eq!(read(&pre), as_received(payload), "PRE audit of {payload:?}");
        assert_eq!(read(&error_tool), as_received(payload), "ON_ERROR audit of {payload:?}");
        assert_eq!(read(&error_text), as_received(&failure), "ON_ERROR audit of {payload:?}");
        assert!(!Path::new(&pwned).exists(), "{payload:?} ran a command");
    }
}

#[tokio::test]
async fn y15_a_nul_in_an_unused_value_does_not_stop_a_shell_mode_command() {
    let dir = ScratchDir::new("y15-shell-nul");
    let out = dir.file("out");
    // Every value goes to the environment, also in shell mode and also when not referenced.
    DeclarativeHookRegistry::of([HookConfig::new(
        HookEvent::OnStop,
        None,
        HookAction::command(format!("printf '%s|%s' '${{agent}}' \"$HOOK_NOTE\" > '{out}'")),
    )])
    .fire_event(HookEvent::OnStop, &ctx(&[("agent", "a\0b"), ("note", "\0")]))
    .await;
    assert_eq!(std::fs::read_to_string(&out).unwrap(), format!("a{NUL_REPLACEMENT}b|{NUL_REPLACEMENT}"));
}

#[tokio::test]
async fn y15_a_value_too_long_for_the_environment_is_cut_and_the_hook_still_runs() {
    let dir = ScratchDir::new("y15-long");
    let out = dir.file("out");
    // 1 MiB: far past Linux's 128 KiB limit for one environment string.
    let error = "é".repeat(512 * 1024);
    DeclarativeHookRegistry::of([HookConfig::new(
        HookEvent::OnStop,
        None,
        HookAction::command_safe(format!("printf '%s' ${{error}} > '{out}'")),
    )])
    .fire_event(HookEvent::OnStop, &ctx(&[("error", &error)]))
    .await;
    let received = std::fs::read_to_string(&out).expect("the hook did not run");
    let kept = MAX_COMMAND_VALUE_BYTES / 2 * 2;
    assert_eq!(received, format!("{}… {} bytes cut", &error[..kept], error.len() - kept));
}

// ---------------------------------------------------------------------------------------------
// On the real runtime: a tool name the model made up fires the audit hooks with that name.

define_prompt! {
    name: y15_prompt,
    model: "scripted",
    prompt: "Y15.",
    tools: ["y15_known"],
}

define_agent! {
    name: y15_agent,
    side_a: { prompt: y15_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

#[tokio::test]
async fn y15_a_tool_name_the_model_invented_is_audited_as_it_is_and_runs_nothing() {
    let dir = ScratchDir::new("y15-invented");
    let audit = dir.file("audit");
    let pwned = dir.file("PWNED");
    let invented = format!("x;touch '{pwned}'\0`touch '{pwned}'`");
    let model =
        ScriptedModel::new([ScriptedResponse::tool_call("call_1", &invented, "{}"), ScriptedResponse::text("done")]);
    let known = FnTool::new("y15_known", "Never called.", |_| async { HookToolResult::success("ok") });
    let runtime = Runtime::builder().agent::<y15_agent>().model("scripted", model).tool(known).build().unwrap();
    let registry = DeclarativeHookRegistry::from_yaml_strict(&format!(
        r#"
hooks:
  - event: preToolUse
    action: {{type: command, mode: safe, command: "printf 'pre %s\n' ${{tool}} >> '{audit}'"}}
  - event: onError
    action: {{type: command, mode: safe, command: "printf 'error %s: %s\n' ${{tool}} ${{error}} >> '{audit}'"}}
"#
    ))
    .unwrap();
    registry.apply_to(&runtime.agent("y15_agent").unwrap()).await;
    let thread = runtime.create_thread("y15_agent", ThreadOptions::default()).await.unwrap();
    thread.send("go").await.unwrap();

    let shown = as_received(&invented);
    let written = std::fs::read_to_string(&audit).expect("no audit hook ran");
    let lines: Vec<&str> = written.lines().collect();
    assert_eq!(lines.len(), 2, "{written}");
    assert_eq!(lines[0], format!("pre {shown}"));
    assert!(lines[1].starts_with(&format!("error {shown}: ")), "{written}");
    assert!(lines[1].contains(&shown[..10]), "the error names the tool: {written}");
    assert!(!Path::new(&pwned).exists(), "the invented name ran a command");
}

// ---------------------------------------------------------------------------------------------
// Shell mode: the runtime's own error texts put no shell syntax of their own around a value.

define_prompt! {
    name: runtime_texts_prompt,
    model: "scripted",
    prompt: "Runtime texts.",
    tools: ["runtime_texts_known"],
}

define_agent! {
    name: runtime_texts_agent,
    side_a: { prompt: runtime_texts_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

#[tokio::test]
async fn runtime_error_texts_carry_no_shell_syntax_of_their_own() {
    // The case this guards: with "there is no tool named `whoami`", `echo ${error}` must not run `whoami`.
    // `pwd` prints something, so a text that quoted it in backticks would show here.
    let dir = ScratchDir::new("runtime-texts");
    let out = dir.file("errors");
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_1", "pwd", "{}")
            .then_tool_call("call_2", "runtime_texts_known", "{not json")
            .then_tool_call("call_3", "runtime_texts_denied", "{}"),
        ScriptedResponse::text("done"),
    ]);
    let known = FnTool::new("runtime_texts_known", "Never called.", |_| async { HookToolResult::success("ok") });
    let runtime = Runtime::builder()
        .agent::<runtime_texts_agent>()
        .model("scripted", model)
        .tool(known)
        .authorize_tools(|_state, call| {
            if call.function.name == "runtime_texts_denied" {
                ToolDecision::deny("not authorized")
            } else {
                ToolDecision::allow()
            }
        })
        .build()
        .unwrap();
    DeclarativeHookRegistry::of([HookConfig::new(
        HookEvent::OnError,
        None,
        HookAction::command(format!("echo ${{error}} >> '{out}'")),
    )])
    .apply_to(&runtime.agent("runtime_texts_agent").unwrap())
    .await;
    let thread = runtime.create_thread("runtime_texts_agent", ThreadOptions::default()).await.unwrap();
    thread.send("go").await.unwrap();

    let written = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = written.lines().collect();
    assert_eq!(lines[0], "there is no tool named pwd", "{written}");
    assert!(lines[1].starts_with("the arguments of the tool call are not valid JSON: "), "{written}");
    assert_eq!(lines.len(), 2, "a denied call fires no hooks: {written}");
}
