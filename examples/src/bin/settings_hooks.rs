//! Hooks people already wrote: a Claude Code-format settings file,
//! `examples/settings/settings.json`, loaded unchanged with
//! `SettingsHooks::from_json_strict` and applied to the whole runtime with
//! `RuntimeBuilder::settings_hooks`.
//!
//! Its `PreToolUse` hook runs `examples/settings/guard.sh` before every call of the `Bash`
//! tool (which here only echoes what it would run). The script reads the call as JSON on
//! stdin: it denies `rm -rf` (exit code 2, the reason on stderr) and asks for a person before
//! `git push --force` (a JSON `permissionDecision`); everything else runs. The ask parks the
//! call as an approval, the same as a `before_tool_call` hook's `ToolDecision::ask`: the run
//! stops `awaiting_approval`, the call is listed by `Thread::pending_approvals` with the hook's
//! id and reason, and here the person approves it, so it runs and the turn goes on. The hook is marked
//! `"onFailure": "block"`: were the script missing or crashing, calls would be denied, not let
//! through.
//!
//! The commands run in the process working directory with `CLAUDE_PROJECT_DIR` set to it, as
//! the format's project hooks expect; this program works from `examples/`.
//!
//! ```text
//! cargo run -p examples --bin settings_hooks
//! ```

use examples::{Options, heading};
use hooks_runtime::declarative::SettingsHooks;
use hooks_runtime::model::ScriptedResponse;
use hooks_runtime::store::ThreadStatus;
use hooks_runtime::tool::FnTool;
use hooks_runtime::types::{HookToolResult, Role};
use hooks_runtime::{Runtime, ThreadOptions};
use serde_json::{Value, json};

mod prompts {
    use hooks_runtime::prelude::*;

    define_prompt! {
        name: shell_prompt,
        model: "tool-reasoning",
        prompt: "You maintain the user's repository with the Bash tool.",
        tools: ["Bash"],
    }
}

mod agents {
    use hooks_runtime::prelude::*;

    define_agent! {
        name: shell_agent,
        side_a: { prompt: crate::prompts::shell_prompt, stop_on_response: true, max_steps: 8 },
        side_b: { human: true },
    }
}

const PROJECT_DIR: &str = env!("CARGO_MANIFEST_DIR");
const QUESTION: &str = "Clean the build output, then publish my branch.";

fn bash(id: &str, command: &str) -> ScriptedResponse {
    ScriptedResponse::tool_call(id, "Bash", &json!({ "command": command }).to_string())
}

fn script() -> Vec<ScriptedResponse> {
    vec![
        bash("call_1", "ls target"),
        bash("call_2", "rm -rf target"),
        bash("call_3", "git push --force origin main"),
        bash("call_4", "git status"),
        ScriptedResponse::text(
            "I listed target/, force-pushed once you approved, and checked the status; deleting target/ was refused.",
        ),
    ]
}

/// A `Bash`-like tool that runs nothing: it answers with what it would have run.
fn echo_bash() -> FnTool {
    FnTool::new("Bash", "Runs a shell command.", |arguments: Value| async move {
        let command = arguments["command"].as_str().unwrap_or_default();
        HookToolResult::success(format!("(would run) {command}"))
    })
    .with_parameters(json!({
        "type": "object",
        "properties": { "command": { "type": "string", "description": "The command to run" } },
        "required": ["command"],
    }))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    examples::init_logging();
    let options = Options::from_args();
    let model = options.model(script());
    // The format's project hooks run from the project's root; here, `examples/`.
    std::env::set_current_dir(PROJECT_DIR)?;

    heading("The hooks of examples/settings/settings.json");
    let settings = std::fs::read_to_string("settings/settings.json")?;
    // Strict: a hook this runtime cannot run (an unknown event or type) is an error, not a WARN.
    let hooks = SettingsHooks::from_json_strict(&settings)?;
    for hook in hooks.hooks() {
        println!("{} {hook}", hook.location());
    }

    let runtime = Runtime::builder()
        .agent::<agents::shell_agent>()
        .model("tool-reasoning", model.clone())
        .tool(echo_bash())
        .settings_hooks(hooks)
        .build()?;

    heading("A run: guard.sh decides every Bash call");
    println!("model: {}", model.description());
    let thread = runtime.create_thread("shell_agent", ThreadOptions::default()).await?;
    println!("you:   {QUESTION}");
    let mut outcome = thread.send(QUESTION).await?.into_result()?;
    // guard.sh asks before a force push: the run stops with the call waiting for a person, who
    // approves it here (`thread.deny(id, reason)` would refuse it).
    while outcome.status == ThreadStatus::AwaitingApproval {
        for waiting in thread.pending_approvals().await? {
            for reason in &waiting.reasons {
                let by = reason.hook.as_deref().unwrap_or("the tool");
                println!("waits: {} {} ({by}: {})", waiting.tool, waiting.arguments, reason.reason);
            }
            println!("you:   approve {}", waiting.id);
            outcome = thread.approve(&waiting.id).await?.into_result()?;
        }
    }

    for message in thread.messages().await? {
        if message.role == Role::Tool {
            let status = message.extra_str("tool_status").unwrap_or("?");
            println!("tool {:<7} {}", status, message.content.as_deref().unwrap_or_default());
        }
    }
    println!("agent: {}", outcome.reply.as_deref().unwrap_or("(no reply)"));
    Ok(())
}
