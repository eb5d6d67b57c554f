//! Tool telemetry: `tool_call_started` and `tool_call_done` observe every tool call, and the
//! thread's event stream carries the same moments to connected clients.
//!
//! `read_file` declares `path` as its progress argument, so `log_tool_start` runs as soon as
//! `path` has streamed, with its value, while the rest of the call is still streaming.
//! `run_tests` declares none: its hook runs when the call appears, before any argument.
//! `record_tool_completion` runs after each tool, on success and on failure alike.
//!
//! ```text
//! cargo run -p examples --bin tool_telemetry
//! ```

use examples::{Options, heading};
use hooks_runtime::model::ScriptedResponse;
use hooks_runtime::tool::FnTool;
use hooks_runtime::types::HookToolResult;
use hooks_runtime::{Runtime, ThreadOptions};
use serde_json::{Value, json};

mod hooks {
    use std::time::{SystemTime, UNIX_EPOCH};

    use hooks_runtime::prelude::*;
    use serde_json::json;

    fn now_us() -> u64 {
        SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_micros() as u64)
    }

    /// Shows what a tool call is about to do, before the call has finished streaming.
    #[hook(tool_call_started, id = "log_tool_start")]
    pub(crate) fn log_tool_start(state: &ThreadState, call: &HookToolCall, progress: Option<&str>) {
        match progress {
            Some(progress) => println!("▸ {}: {progress}", call.function.name),
            None => println!("▸ {}", call.function.name),
        }
        println!("    arguments streamed so far: {:?}", call.function.arguments);
        // Context values last for the current execution: a place to keep the start time.
        state.set_context_value(format!("started:{}", call.id), json!(now_us()));
    }

    /// Records each finished call, whether it succeeded or failed.
    #[hook(tool_call_done, id = "record_tool_completion")]
    pub(crate) fn record_tool_completion(state: &ThreadState, call: &HookToolCall, result: &HookToolResult) {
        let started = state.context_value(&format!("started:{}", call.id)).and_then(|v| v.as_u64());
        let elapsed = started.map_or_else(String::new, |us| {
            format!(", {:.2} ms after it started", now_us().saturating_sub(us) as f64 / 1e3)
        });
        let detail = result.error.as_deref().or(result.result.as_deref()).unwrap_or_default();
        println!("■ {} {}{elapsed}: {}", call.function.name, result.status.as_str(), examples::shorten(detail, 70));
    }
}

mod prompts {
    use hooks_runtime::prelude::*;

    define_prompt! {
        name: coder_prompt,
        model: "tool-reasoning",
        prompt: "You fix bugs. Read code with read_file and run the tests with run_tests, then say what is wrong.",
        tools: ["read_file", "run_tests"],
        hooks: [crate::hooks::log_tool_start, crate::hooks::record_tool_completion],
    }
}

mod agents {
    use hooks_runtime::prelude::*;

    define_agent! {
        name: coder,
        side_a: { prompt: crate::prompts::coder_prompt, stop_on_response: true, max_steps: 4 },
        side_b: { human: true },
    }
}

const QUESTION: &str = "The parser tests fail. Can you look at src/parser.rs?";

/// One response with two tool calls, then the reply.
fn script() -> Vec<ScriptedResponse> {
    vec![
        ScriptedResponse::tool_call("call_1", "read_file", r#"{"path":"src/parser.rs","max_lines":40}"#)
            .then_tool_call("call_2", "run_tests", r#"{"filter":"parser"}"#),
        ScriptedResponse::text("`parse` indexes the input without checking that it is empty; see the two failures."),
    ]
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    examples::init_logging();
    let options = Options::from_args();
    let model = options.model(script());
    let read_file = FnTool::new("read_file", "Reads a source file.", |args: Value| async move {
        match args["path"].as_str() {
            Some("src/parser.rs") => {
                HookToolResult::success("pub fn parse(input: &str) -> char {\n    input.chars().next().unwrap()\n}")
            }
            Some(path) => HookToolResult::error(format!("no file {path}")),
            None => HookToolResult::error("`path` is required"),
        }
    })
    .with_progress_argument("path")
    .with_parameters(json!({
        "type": "object",
        "properties": {
            "path": { "type": "string", "description": "The file to read" },
            "max_lines": { "type": "integer", "description": "At most this many lines" },
        },
        "required": ["path"],
    }));
    let run_tests = FnTool::new("run_tests", "Runs the test suite, or the tests matching a filter.", |_args| async {
        HookToolResult::error("2 of 14 tests failed: parser::empty_input, parser::only_whitespace")
    })
    .with_parameters(json!({
        "type": "object",
        "properties": { "filter": { "type": "string", "description": "Run only tests whose name contains this" } },
    }));
    let runtime = Runtime::builder()
        .agent::<agents::coder>()
        .model("tool-reasoning", model.clone())
        .tool(read_file)
        .tool(run_tests)
        .build()?;

    heading("The hooks, as the tool calls stream and run");
    println!("model: {}", model.description());
    let thread = runtime.create_thread("coder", ThreadOptions::default()).await?;
    // A client subscribes before the run; the events wait in the channel until read.
    let mut events = thread.subscribe();
    println!("you:   {QUESTION}");
    let outcome = thread.send(QUESTION).await?.into_result()?;
    println!("agent: {}", outcome.reply.as_deref().unwrap_or("(no reply)"));

    heading("The thread's events, as a connected client receives them");
    while let Ok(event) = events.try_recv() {
        println!("{}", serde_json::to_string(&event)?);
    }
    Ok(())
}
