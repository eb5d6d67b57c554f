//! A settings file's `permissions` rules as a runtime applies them (CONFORMANCE B1-B8, G16):
//! command rules that read the command as bash does, path rules through real symbolic links,
//! tool globs and rules that could never select a call, and what the docs say rules cannot see.
//! The table of cases proved against a real `bash -c` is the crate's unit test `b7_...`.

#![cfg(all(feature = "declarative", unix))]

use crate::declarative_support;

use std::sync::{Arc, Mutex};

use declarative_support::{Logs, ScratchDir};
use hooks_runtime::declarative::{PermissionRule, SettingsHooks, SettingsReport};
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::tool::FnTool;
use hooks_runtime::{Runtime, ThreadOptions};
use serde_json::{Value, json};

define_prompt! { name: rules_prompt, model: "scripted", prompt: "Ops.", tools: ["Bash", "mcp__h__open"] }
define_agent! { name: rules_agent, side_a: { prompt: rules_prompt, stop_on_response: true, max_steps: 30 }, side_b: { human: true } }

/// Runs `calls` (`(tool, arguments)`) under the settings file `settings`: the commands that
/// reached the tools, and the tool results' texts.
async fn run(settings: &Value, calls: &[(&str, Value)]) -> (Vec<(String, Value)>, Vec<String>) {
    let registry = SettingsHooks::from_json_strict(&settings.to_string()).expect("valid settings");
    let mut script: Vec<ScriptedResponse> = calls
        .iter()
        .enumerate()
        .map(|(i, (tool, arguments))| ScriptedResponse::tool_call(&format!("call_{i}"), tool, &arguments.to_string()))
        .collect();
    script.push(ScriptedResponse::text("done"));
    let ran = Arc::new(Mutex::new(Vec::new()));
    let tool = |name: &'static str| {
        let ran = ran.clone();
        FnTool::new(name, "Records its arguments.", move |arguments| {
            let ran = ran.clone();
            async move {
                ran.lock().unwrap().push((name.to_owned(), arguments));
                HookToolResult::success("ok")
            }
        })
    };
    let runtime = Runtime::builder()
        .agent::<rules_agent>()
        .model("scripted", ScriptedModel::new(script))
        .tool(tool("Bash"))
        .tool(tool("mcp__h__open"))
        .settings_hooks(registry)
        .build()
        .unwrap();
    let thread = runtime.create_thread("rules_agent", ThreadOptions::default()).await.unwrap();
    thread.send("go").await.unwrap();
    let results = thread
        .messages()
        .await
        .unwrap()
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.content.clone().unwrap_or_default())
        .collect();
    let ran = ran.lock().unwrap().clone();
    (ran, results)
}

fn bash(command: &str) -> (&'static str, Value) {
    ("Bash", json!({"command": command}))
}

#[tokio::test]
async fn b1_b3_a_denied_command_never_reaches_the_tool_however_it_is_spelled() {
    let settings = json!({"permissions": {"deny": ["Bash(git push:*)"]}, "hooks": {}});
    let spellings = [
        "git  push",
        "FOO=1 sudo \"git\" push",
        "ls && (timeout 5 /usr/bin/git push)",
        "echo $(g\\it push)",
        "bash -c 'eval git push'",
        "echo | xargs git push",
        "find . -exec git push \\;",
        "f(){ git push; }; f",
    ];
    for spelling in spellings {
        // One run each: a turn stops after a few denials in a row.
        let (ran, results) = run(&settings, &[bash(spelling), bash("git status")]).await;
        assert_eq!(ran, [("Bash".to_owned(), json!({"command": "git status"}))], "{spelling}: {results:?}");
        assert!(results[0].contains("settings:permissions.deny[0]"), "{spelling}: {}", results[0]);
    }
}

#[tokio::test]
async fn b5_a_command_that_cannot_be_known_is_denied_saying_what_could_not_be_known() {
    let settings = json!({"permissions": {"deny": ["Bash(git push:*)"]}, "hooks": {}});
    let (ran, results) = run(&settings, &[bash("$(echo git) push"), bash("echo 'unclosed")]).await;
    assert!(ran.is_empty(), "{ran:?}");
    assert!(
        results[0].contains("cannot be known before it runs") && results[0].contains("$(echo git)"),
        "{}",
        results[0]
    );
    assert!(results[1].contains("the shell parser rejects"), "{}", results[1]);
}

#[test]
fn b6_path_rules_follow_symbolic_links_dot_dot_and_the_working_directory() {
    let dir = ScratchDir::new("b6");
    let root = &dir.0;
    std::fs::write(root.join(".env"), "KEY=1").unwrap();
    std::fs::create_dir_all(root.join("secrets")).unwrap();
    std::fs::write(root.join("secrets/key.pem"), "k").unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::os::unix::fs::symlink(".env", root.join("config")).unwrap();
    std::os::unix::fs::symlink("secrets", root.join("public")).unwrap();
    std::os::unix::fs::symlink(".env.local", root.join("later")).unwrap();
    std::os::unix::fs::symlink(root.join("secrets/key.pem"), root.join("src/key")).unwrap();
    let read = |path: &str| json!({"file_path": path});
    let env = PermissionRule::parse("Read(.env*)").unwrap();
    let secrets = PermissionRule::parse("Read(./secrets/**)").unwrap();
    assert!(env.selects_in(root, "Read", &read("config")), "a link to .env");
    assert!(env.selects_in(root, "Read", &read("later")), "a link to a .env file not written yet");
    assert!(secrets.selects_in(root, "Read", &read("public/key.pem")), "a linked folder");
    assert!(secrets.selects_in(root, "Read", &read("src/key")), "an absolute link");
    assert!(secrets.selects_in(root, "Read", &read("src/../secrets/key.pem")), "a `..` walk");
    assert!(secrets.selects_in(root, "Read", &read("src/../public/key.pem")), "a `..` walk into a linked folder");
    let absolute = root.join("public/./key.pem");
    assert!(secrets.selects_in(root, "Read", &json!({"file_path": absolute})), "an absolute path");
    assert!(!secrets.selects_in(root, "Read", &read("src/main.rs")));
    assert!(!env.selects_in(root, "Read", &read("src")));
}

#[tokio::test]
async fn g16_tool_globs_deny_and_rules_that_select_nothing_are_load_errors_or_warns() {
    let settings = json!({"permissions": {"deny": ["mcp__*"]}, "hooks": {}});
    let (ran, results) = run(&settings, &[("mcp__h__open", json!({})), bash("ls")]).await;
    assert_eq!(ran, [("Bash".to_owned(), json!({"command": "ls"}))]);
    assert!(results[0].contains("settings:permissions.deny[0]"), "{}", results[0]);

    for (rule, says) in [
        ("mcp__h__o*(x)", "takes no pattern"),
        ("mcp____o", "no tool is named"),
        ("Bash(ls && rm:*)", "write one rule per command"),
    ] {
        let document = json!({"permissions": {"deny": [rule]}, "hooks": {}}).to_string();
        let error = SettingsHooks::from_json_strict(&document).expect_err(rule).to_string();
        assert!(error.contains("permissions.deny[0]") && error.contains(says), "{rule}: {error}");
        let (logs, _guard) = Logs::capture();
        SettingsHooks::from_json(&document);
        let warnings = logs.events("WARN").join("\n");
        assert!(warnings.contains("permissions.deny[0]") && warnings.contains(says), "{rule}: {warnings}");
    }
    // A deny rule that cannot select what it says still guards the tools it names.
    let report =
        SettingsReport::from_json(&json!({"permissions": {"deny": ["mcp__h__o*(x)"]}, "hooks": {}}).to_string());
    assert!(report.permissions.deny[0].selects("mcp__h__open", &json!({})));
}

#[test]
fn b8_the_readme_and_the_settings_guide_say_what_rules_cannot_see() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    for file in ["README.md", "docs/settings-hooks.md"] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        for statement in [
            "hard link",
            "python -c",
            "node -e",
            "perl -e",
            "script file",
            "alias",
            "every simple command",
            "cannot be known before it runs",
            "symbolic links",
        ] {
            assert!(text.contains(statement), "{file} does not say `{statement}`");
        }
    }
}
