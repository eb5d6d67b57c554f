//! When declarative hooks fire on an agent's tool-call pipeline, and with what context
//! (Y3 to Y7, Y11 to Y13). Hooks are recorded by a custom executor into the same journal in which
//! the test agent writes its tool runs, so the order of the two is checked too.

#![cfg(feature = "declarative")]

use crate::declarative_support;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use declarative_support::{CallError, CountingListener, Logs, ScratchDir, TestAgent, ctx, journal, recorder};
use hooks_runtime::declarative::{DeclarativeHookRegistry, HookAction, HookConfig, HookEvent, HookMatcher};
use hooks_runtime::tool::ToolCallListenerTarget;

fn hook(event: HookEvent, matcher: Option<&str>, message: &str) -> HookConfig {
    HookConfig::new(event, matcher.map(HookMatcher::new), HookAction::log(message))
}

fn every_event_hooks() -> Vec<HookConfig> {
    vec![
        hook(HookEvent::PreToolUse, None, "pre"),
        hook(HookEvent::PostToolUse, None, "post"),
        hook(HookEvent::OnError, None, "error"),
        hook(HookEvent::OnStart, None, "start"),
        hook(HookEvent::OnStop, None, "stop"),
    ]
}

/// Replaces the `latencyMs` value, which varies, by `N` after checking it is a number.
fn normalize_latency(entries: Vec<String>) -> Vec<String> {
    entries
        .into_iter()
        .map(|entry| match entry.find("\"latencyMs\": \"") {
            Some(start) => {
                let value_start = start + "\"latencyMs\": \"".len();
                let value_end = value_start + entry[value_start..].find('"').unwrap();
                entry[value_start..value_end].parse::<u128>().expect("latencyMs is a number");
                format!("{}N{}", &entry[..value_start], &entry[value_end..])
            }
            None => entry,
        })
        .collect()
}

#[tokio::test]
async fn y3_pre_post_and_error_hooks_run_around_tool_calls_with_their_context() {
    let log = journal();
    let registry = DeclarativeHookRegistry::of(every_event_hooks()).with_executor(recorder(&log));
    let agent = TestAgent::new("a1", &["read", "write"], Arc::clone(&log));
    registry.apply_to(&agent).await;
    log.lock().unwrap().clear();

    assert_eq!(agent.call_tool("read", || Ok("data".into())).await, Ok("data".into()));
    assert_eq!(agent.call_tool("write", || Err("disk full".into())).await, Err(CallError::Failed("disk full".into())));

    let entries = normalize_latency(log.lock().unwrap().clone());
    assert_eq!(
        entries,
        [
            r#"log pre {"event": "preToolUse", "tool": "read"}"#,
            "tool read",
            r#"log post {"event": "postToolUse", "latencyMs": "N", "success": "true", "tool": "read"}"#,
            r#"log pre {"event": "preToolUse", "tool": "write"}"#,
            "tool write",
            r#"log post {"event": "postToolUse", "latencyMs": "N", "success": "false", "tool": "write"}"#,
            r#"log error {"error": "disk full", "event": "postToolUse", "latencyMs": "N", "success": "false", "tool": "write"}"#,
        ]
    );
}

#[tokio::test]
async fn y3_latency_is_the_tool_duration_in_milliseconds() {
    let log = journal();
    let registry =
        DeclarativeHookRegistry::of([hook(HookEvent::PostToolUse, None, "post")]).with_executor(recorder(&log));
    let agent = TestAgent::new("a1", &["slow"], Arc::clone(&log));
    registry.apply_to(&agent).await;
    agent
        .call_tool("slow", || {
            std::thread::sleep(Duration::from_millis(60));
            Ok(String::new())
        })
        .await
        .unwrap();
    let entry = log.lock().unwrap().last().cloned().unwrap();
    let start = entry.find("\"latencyMs\": \"").unwrap() + "\"latencyMs\": \"".len();
    let ms: u64 = entry[start..start + entry[start..].find('"').unwrap()].parse().unwrap();
    assert!((60..5_000).contains(&ms), "{entry}");
}

#[tokio::test]
async fn y4_on_start_fires_once_per_apply_to_and_on_stop_only_through_fire_event() {
    let log = journal();
    let registry = DeclarativeHookRegistry::of(every_event_hooks()).with_executor(recorder(&log));
    let agent = TestAgent::new("agent-7", &["read"], Arc::clone(&log));

    registry.apply_to(&agent).await;
    assert_eq!(*log.lock().unwrap(), [r#"log start {"agent": "agent-7"}"#]);
    registry.apply_to(&agent).await;
    assert_eq!(log.lock().unwrap().len(), 2);

    // Tool calls, success or failure, never fire ON_START or ON_STOP.
    log.lock().unwrap().clear();
    agent.call_tool("read", || Ok(String::new())).await.unwrap();
    agent.call_tool("read", || Err("boom".into())).await.unwrap_err();
    let entries = log.lock().unwrap().clone();
    assert!(entries.iter().all(|e| !e.starts_with("log start") && !e.starts_with("log stop")), "{entries:?}");

    log.lock().unwrap().clear();
    registry.fire_event(HookEvent::OnStop, &ctx(&[("agent", agent.agent_id()), ("reason", "shutdown")])).await;
    assert_eq!(*log.lock().unwrap(), [r#"log stop {"agent": "agent-7", "reason": "shutdown"}"#]);
}

#[tokio::test]
async fn y5_denied_tool_call_fires_no_hooks() {
    let log = journal();
    let registry = DeclarativeHookRegistry::of(every_event_hooks()).with_executor(recorder(&log));
    let agent = TestAgent::new("a1", &["read"], Arc::clone(&log));
    registry.apply_to(&agent).await;
    log.lock().unwrap().clear();

    let mut ran = false;
    let denied = agent
        .call_tool("delete_everything", || {
            ran = true;
            Ok(String::new())
        })
        .await;
    assert_eq!(denied, Err(CallError::Denied));
    assert!(!ran);
    assert_eq!(*log.lock().unwrap(), ["denied delete_everything"]);

    // The same agent's allowed calls still fire hooks, so the silence above is the denial's.
    agent.call_tool("read", || Ok(String::new())).await.unwrap();
    assert_eq!(log.lock().unwrap().len(), 4);
}

#[tokio::test]
async fn y6_fire_event_runs_every_hook_of_the_event_with_the_given_context() {
    let log = journal();
    let registry = DeclarativeHookRegistry::of([
        hook(HookEvent::PreToolUse, Some("file_*"), "files"),
        hook(HookEvent::PreToolUse, Some("nothing_matches_me"), "never"),
        hook(HookEvent::PreToolUse, None, "any"),
        hook(HookEvent::PostToolUse, None, "post"),
    ])
    .with_executor(recorder(&log));

    registry.fire_event(HookEvent::PreToolUse, &ctx(&[("k", "v")])).await;
    assert_eq!(*log.lock().unwrap(), [r#"log files {"k": "v"}"#, r#"log never {"k": "v"}"#, r#"log any {"k": "v"}"#]);
}

#[tokio::test]
async fn y6_fire_tool_event_applies_matchers_and_adds_tool() {
    let log = journal();
    let registry = DeclarativeHookRegistry::of([
        hook(HookEvent::PreToolUse, Some("file_*"), "files"),
        hook(HookEvent::PreToolUse, Some("web_*"), "web"),
        hook(HookEvent::PreToolUse, None, "any"),
    ])
    .with_executor(recorder(&log));

    registry.fire_tool_event(HookEvent::PreToolUse, "file_read", &ctx(&[("k", "v"), ("tool", "overridden")])).await;
    assert_eq!(
        *log.lock().unwrap(),
        [r#"log files {"k": "v", "tool": "file_read"}"#, r#"log any {"k": "v", "tool": "file_read"}"#]
    );
}

#[tokio::test]
async fn y7_matcher_is_case_insensitive_glob() {
    let yes = [
        ("file_*", "file_read"),
        ("file_*", "FILE_READ"),
        ("FILE_*", "file_write"),
        ("file_*", "file_"),
        ("*", ""),
        ("*", "anything at all"),
        ("*_file", "read_FILE"),
        ("a*b*c", "a--b--c"),
        ("read", "ReAd"),
        ("f.le", "F.LE"),
        ("f?le", "f?le"),
    ];
    let no = [
        ("file_*", "read_file"),
        ("file_*", "file"),
        ("read", "read2"),
        ("read", "xread"),
        ("f.le", "file"),
        ("f?le", "file"),
        ("[fg]ile", "file"),
        ("a*b*c", "a--c--b"),
    ];
    for (glob, name) in yes {
        assert!(HookMatcher::new(glob).matches(name), "{glob} should match {name}");
    }
    for (glob, name) in no {
        assert!(!HookMatcher::new(glob).matches(name), "{glob} should not match {name}");
    }
    assert_eq!(HookMatcher::ALL, HookMatcher::new("*"));
}

#[tokio::test]
async fn y7_matchers_filter_pre_and_post_only_and_no_matcher_matches_every_tool() {
    let log = journal();
    let registry = DeclarativeHookRegistry::of([
        hook(HookEvent::PreToolUse, Some("FILE_*"), "pre files"),
        hook(HookEvent::PostToolUse, Some("file_*"), "post files"),
        hook(HookEvent::PreToolUse, None, "pre any"),
        hook(HookEvent::OnError, Some("nothing_matches_me"), "error"),
        hook(HookEvent::OnStart, Some("nothing_matches_me"), "start"),
    ])
    .with_executor(recorder(&log));
    let agent = TestAgent::new("a1", &["file_read", "search"], Arc::clone(&log));
    registry.apply_to(&agent).await;
    agent.call_tool("file_read", || Ok(String::new())).await.unwrap();
    agent.call_tool("search", || Err("no results".into())).await.unwrap_err();
    registry.fire_tool_event(HookEvent::OnStart, "search", &ctx(&[])).await;

    let entries: Vec<String> = log.lock().unwrap().iter().map(|e| e.split(" {").next().unwrap().to_owned()).collect();
    assert_eq!(
        entries,
        [
            "log start",
            "log pre files",
            "log pre any",
            "tool file_read",
            "log post files",
            "log pre any",
            "tool search",
            "log error",
            "log start",
        ]
    );
}

#[tokio::test]
async fn y11_pre_tool_use_hooks_finish_before_the_tool_runs() {
    let dir = ScratchDir::new("y11");
    let marker = dir.file("pre-hook-done");
    let registry = DeclarativeHookRegistry::of([HookConfig::new(
        HookEvent::PreToolUse,
        None,
        HookAction::command(format!("sleep 0.3; echo done > '{marker}'")),
    )]);
    let agent = TestAgent::new("a1", &["read"], journal());
    registry.apply_to(&agent).await;

    // The hook writes the marker at its end, after its `sleep 0.3`: a tool that ran before the
    // hook finished would read nothing.
    let seen_by_tool =
        agent.call_tool("read", || Ok(std::fs::read_to_string(&marker).unwrap_or_default())).await.unwrap();
    assert_eq!(seen_by_tool, "done\n");
}

#[tokio::test]
async fn y11_a_failing_pre_hook_cannot_veto_the_call() {
    let (logs, _guard) = Logs::capture();
    let registry = DeclarativeHookRegistry::of([HookConfig::new(
        HookEvent::PreToolUse,
        None,
        HookAction::command("echo no way; exit 1"),
    )]);
    let agent = TestAgent::new("a1", &["read"], journal());
    registry.apply_to(&agent).await;
    assert_eq!(agent.call_tool("read", || Ok("ran".into())).await, Ok("ran".into()));
    assert_eq!(*agent.journal.lock().unwrap(), ["tool read"]);
    assert_eq!(logs.events("WARN").len(), 1, "{}", logs.text());
}

#[tokio::test]
async fn y12_custom_executor_receives_every_matching_action_in_place_of_log_and_shell() {
    let (logs, _guard) = Logs::capture();
    let dir = ScratchDir::new("y12");
    let marker = dir.file("should-not-exist");
    let log = journal();
    let registry = DeclarativeHookRegistry::of([
        hook(HookEvent::PreToolUse, Some("read"), "${tool} starting"),
        hook(HookEvent::PreToolUse, Some("write"), "not for read"),
        HookConfig::new(HookEvent::PreToolUse, None, HookAction::command(format!("touch '{marker}'"))),
    ])
    .with_executor(recorder(&log));
    let agent = TestAgent::new("a1", &["read"], Arc::clone(&log));
    registry.apply_to(&agent).await;
    agent.call_tool("read", || Ok(String::new())).await.unwrap();

    assert_eq!(
        *log.lock().unwrap(),
        [
            // Templates arrive unsubstituted, with the context beside them.
            r#"log ${tool} starting {"event": "preToolUse", "tool": "read"}"#,
            &format!(r#"command touch '{marker}' {{"event": "preToolUse", "tool": "read"}}"#),
            "tool read",
        ]
    );
    // The default executor did not run: no `[HOOK]` line, no command.
    assert!(!logs.text().contains("[HOOK]"), "{}", logs.text());
    assert!(!std::path::Path::new(&marker).exists());
}

#[tokio::test]
async fn y12_a_panicking_executor_does_not_stop_the_call_or_the_other_hooks() {
    let (logs, _guard) = Logs::capture();
    let log = journal();
    let sink = Arc::clone(&log);
    let registry = DeclarativeHookRegistry::of([
        hook(HookEvent::PreToolUse, None, "explode"),
        hook(HookEvent::PreToolUse, None, "fine"),
    ])
    .with_executor(hooks_runtime::declarative::executor_fn(move |action, _| {
        if action.template() == "explode" {
            panic!("executor bug");
        }
        sink.lock().unwrap().push(action.template().to_owned());
    }));
    let agent = TestAgent::new("a1", &["read"], Arc::clone(&log));
    registry.apply_to(&agent).await;
    assert!(agent.call_tool("read", || Ok(String::new())).await.is_ok());
    assert_eq!(*log.lock().unwrap(), ["fine", "tool read"]);
    let error = &logs.events("ERROR")[0];
    assert!(error.contains("action panicked at ") && !error.contains("executor bug"), "by location only: {error}");
}

#[tokio::test]
async fn y13_apply_to_replaces_the_agents_one_listener() {
    let log = journal();
    let agent = TestAgent::new("a1", &["read"], Arc::clone(&log));
    let previous = Arc::new(CountingListener::default());
    agent.set_tool_call_listener(Some(previous.clone()));
    agent.call_tool("read", || Ok(String::new())).await.unwrap();
    assert_eq!(previous.calls.load(Ordering::SeqCst), 2);

    let registry =
        DeclarativeHookRegistry::of([hook(HookEvent::PreToolUse, None, "pre")]).with_executor(recorder(&log));
    registry.apply_to(&agent).await;
    log.lock().unwrap().clear();
    agent.call_tool("read", || Ok(String::new())).await.unwrap();
    assert_eq!(previous.calls.load(Ordering::SeqCst), 2, "old listener still called");
    assert_eq!(log.lock().unwrap().len(), 2);

    // A later listener removes the hooks.
    agent.set_tool_call_listener(None);
    log.lock().unwrap().clear();
    agent.call_tool("read", || Ok(String::new())).await.unwrap();
    assert_eq!(*log.lock().unwrap(), ["tool read"]);
}

#[tokio::test]
async fn y13_empty_registry_sets_no_listener_and_fires_no_on_start() {
    let (logs, _guard) = Logs::capture();
    let agent = TestAgent::new("a1", &["read"], journal());
    let previous = Arc::new(CountingListener::default());
    agent.set_tool_call_listener(Some(previous.clone()));
    let sets_before = agent.listener_sets.load(Ordering::SeqCst);

    for registry in [
        DeclarativeHookRegistry::of([]),
        DeclarativeHookRegistry::from_yaml("hooks: []"),
        DeclarativeHookRegistry::from_yaml("not: [valid"),
    ] {
        registry.apply_to(&agent).await;
    }
    assert_eq!(agent.listener_sets.load(Ordering::SeqCst), sets_before);
    agent.call_tool("read", || Ok(String::new())).await.unwrap();
    assert_eq!(previous.calls.load(Ordering::SeqCst), 2, "the old listener stays");
    assert!(!logs.text().contains("[HOOK]"));

    let fresh = TestAgent::new("a2", &[], journal());
    DeclarativeHookRegistry::default().apply_to(&fresh).await;
    assert!(!fresh.has_listener());
}

#[tokio::test]
async fn y13_one_registry_serves_several_agents() {
    let log = journal();
    let registry = DeclarativeHookRegistry::of(every_event_hooks()).with_executor(recorder(&log));
    let alice = TestAgent::new("alice", &["read"], Arc::clone(&log));
    let bob = TestAgent::new("bob", &["read"], Arc::clone(&log));
    registry.apply_to(&alice).await;
    registry.clone().apply_to(&bob).await;
    alice.call_tool("read", || Ok(String::new())).await.unwrap();
    bob.call_tool("read", || Err("bob's error".into())).await.unwrap_err();

    let entries: Vec<String> = normalize_latency(log.lock().unwrap().clone());
    assert_eq!(
        entries,
        [
            r#"log start {"agent": "alice"}"#,
            r#"log start {"agent": "bob"}"#,
            r#"log pre {"event": "preToolUse", "tool": "read"}"#,
            "tool read",
            r#"log post {"event": "postToolUse", "latencyMs": "N", "success": "true", "tool": "read"}"#,
            r#"log pre {"event": "preToolUse", "tool": "read"}"#,
            "tool read",
            r#"log post {"event": "postToolUse", "latencyMs": "N", "success": "false", "tool": "read"}"#,
            r#"log error {"error": "bob's error", "event": "postToolUse", "latencyMs": "N", "success": "false", "tool": "read"}"#,
        ]
    );
    assert!(alice.has_listener() && bob.has_listener());
}
