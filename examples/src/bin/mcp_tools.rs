//! Tools from an MCP server, governed by the same hooks as any tool: the reference server
//! `@modelcontextprotocol/server-everything`, over stdio, added with
//! `RuntimeBuilder::mcp_server("everything", ...)`. Its tools are offered to the prompt all at
//! once with `tools: ["mcp__everything__*"]`, each as `mcp__everything__<tool>` with the
//! server's description and input schema.
//!
//! Two governors stand before every MCP call, as before any tool's:
//! - a runtime-wide guard, `no_env_to_the_model` (a `before_tool_call` hook), denies the server's
//!   `get-env` tool;
//! - a Claude Code-format settings file, `examples/settings/mcp_settings.json`, whose
//!   `PreToolUse` hook has the matcher `mcp__.*` (every MCP tool), denies a call whose arguments
//!   mention a password (exit code 2, the reason on stderr).
//!
//! The long-running operation reports progress, which arrives as `tool_call_progress` events;
//! the tiny image arrives as an attachment.
//!
//! The server is the pinned install of `.ci/mcp` (`npm ci` of `.ci/mcp/package-lock.json`),
//! run with `node`; install it once from the workspace root, then run the example:
//!
//! ```text
//! .ci/mcp/install
//! cargo run -p examples --bin mcp_tools
//! ```
//!
//! `HOOKS_MCP_SERVERS` names another install folder. Without an install, `npx -y
//! @modelcontextprotocol/server-everything@2026.8.31 stdio` runs the same server (it downloads it).

use examples::{Options, heading};
use hooks_runtime::ThreadEvent;
use hooks_runtime::declarative::SettingsHooks;
use hooks_runtime::mcp::McpTransport;
use hooks_runtime::model::ScriptedResponse;
use hooks_runtime::types::Role;
use hooks_runtime::{Runtime, ThreadOptions};
use serde_json::json;

mod hooks {
    use hooks_runtime::prelude::*;

    /// A guard over MCP calls: the server's environment stays out of the conversation.
    #[hook(before_tool_call, id = "no_env_to_the_model", on_failure = deny)]
    pub(crate) fn no_env_to_the_model(
        _state: &ThreadState,
        call: &HookToolCall,
        _arguments: &mut serde_json::Value,
    ) -> ToolDecision {
        if call.function.name == "mcp__everything__get-env" {
            return ToolDecision::deny("the server's environment stays private");
        }
        ToolDecision::allow()
    }
}

mod prompts {
    use hooks_runtime::prelude::*;

    define_prompt! {
        name: mcp_prompt,
        model: "tool-reasoning",
        prompt: "You help with the tools of the `everything` MCP server.",
        // Every tool the server lists, now and after it changes its list.
        tools: ["mcp__everything__*"],
    }
}

mod agents {
    use hooks_runtime::prelude::*;

    define_agent! {
        name: mcp_agent,
        side_a: { prompt: crate::prompts::mcp_prompt, stop_on_response: true, max_steps: 4 },
    }
}

const QUESTION: &str = "Echo a greeting, add 2 and 40, show the server's environment, run a short operation, \
                        send my password to the echo tool and show me the tiny image.";

fn script() -> Vec<ScriptedResponse> {
    let call =
        |id: &str, tool: &str, arguments: serde_json::Value| (id.to_owned(), tool.to_owned(), arguments.to_string());
    let calls = [
        call("call_1", "mcp__everything__echo", json!({"message": "hello from the runtime"})),
        call("call_2", "mcp__everything__get-sum", json!({"a": 2, "b": 40})),
        call("call_3", "mcp__everything__get-env", json!({})),
        call("call_4", "mcp__everything__trigger-long-running-operation", json!({"duration": 0.3, "steps": 3})),
        call("call_5", "mcp__everything__echo", json!({"message": "my password is hunter2"})),
        call("call_6", "mcp__everything__get-tiny-image", json!({})),
    ];
    let mut step = ScriptedResponse::tool_call(&calls[0].0, &calls[0].1, &calls[0].2);
    for (id, tool, arguments) in &calls[1..] {
        step = step.then_tool_call(id, tool, arguments);
    }
    vec![step, ScriptedResponse::text("Done: two answers, a sum, progress and an image; two calls were refused.")]
}

/// server-everything as `.ci/mcp/install` installs it.
fn everything() -> Result<McpTransport, String> {
    let dir = match std::env::var_os("HOOKS_MCP_SERVERS") {
        Some(dir) => std::path::PathBuf::from(dir),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../.ci/mcp"),
    };
    let js = dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if !js.exists() {
        return Err(format!(
            "{} is missing: install the pinned MCP servers with `.ci/mcp/install` from the workspace root",
            js.display()
        ));
    }
    Ok(McpTransport::stdio("node").arg(js).arg("stdio"))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    examples::init_logging();
    let options = Options::from_args();
    let model = options.model(script());
    let settings = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/settings/mcp_settings.json"))?;
    let runtime = Runtime::builder()
        .agent::<agents::mcp_agent>()
        .model("tool-reasoning", model.clone())
        .mcp_server("everything", everything()?)
        .guard::<hooks::no_env_to_the_model>()
        .settings_hooks(SettingsHooks::from_json_strict(&settings)?)
        .build()?;

    heading("A run: six MCP calls, each through the guard and the settings file's mcp__.* matcher");
    println!("model: {}", model.description());
    let thread = runtime.create_thread("mcp_agent", ThreadOptions::default()).await?;
    let mut events = thread.subscribe();
    println!("you:   {QUESTION}");
    let outcome = thread.send(QUESTION).await?.into_result()?;
    while let Ok(event) = events.try_recv() {
        if let ThreadEvent::ToolCallProgress { id, progress, total, .. } = event {
            println!("progress {id}: {progress} of {}", total.unwrap_or(f64::NAN));
        }
    }
    for message in thread.messages().await? {
        if message.role == Role::Tool {
            let status = message.extra_str("tool_status").unwrap_or("?");
            let text = message.content.as_deref().unwrap_or_default().replace('\n', " | ");
            println!(
                "tool {:<7} {} {}",
                status,
                message.name.as_deref().unwrap_or_default(),
                examples::shorten(&text, 110)
            );
        }
    }
    println!("agent: {}", outcome.reply.as_deref().unwrap_or("(no reply)"));

    heading("The server, as the inspector shows it");
    for server in runtime.mcp_servers() {
        println!(
            "{} ({}): {:?}, started {} time(s), {} tools",
            server.name,
            server.transport,
            server.state,
            server.starts,
            server.tools.len()
        );
    }
    Ok(())
}
