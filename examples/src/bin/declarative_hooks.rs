//! Declarative tool-call hooks: `examples/hooks.yaml` attached to an agent with
//! `DeclarativeHookRegistry::from_yaml` and `apply_to`.
//!
//! The file's hooks write `[HOOK]` log lines before and after tool calls (with matchers that
//! pick tools by name) and run two harmless shell commands, in safe mode, that append a line to
//! a log file in the temp directory when a file is written and when a tool fails. `onStart`
//! fires when the hooks are attached; `onStop` fires only when the program fires it.
//!
//! ```text
//! cargo run -p examples --bin declarative_hooks
//! ```

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use examples::{Options, heading};
use hooks_runtime::declarative::{DeclarativeHookRegistry, HookContext, HookEvent};
use hooks_runtime::model::ScriptedResponse;
use hooks_runtime::tool::FnTool;
use hooks_runtime::types::HookToolResult;
use hooks_runtime::{Runtime, ThreadOptions};
use serde_json::{Value, json};

mod prompts {
    use hooks_runtime::prelude::*;

    define_prompt! {
        name: notes_prompt,
        model: "tool-reasoning",
        prompt: "You keep the user's notes in the notes/ folder. Use list_dir, file_read and file_write.",
        tools: ["list_dir", "file_read", "file_write"],
    }
}

mod agents {
    use hooks_runtime::prelude::*;

    define_agent! {
        name: notes_agent,
        side_a: { prompt: crate::prompts::notes_prompt, stop_on_response: true, max_steps: 8 },
        side_b: { human: true },
    }
}

const HOOKS_FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/hooks.yaml");
const QUESTION: &str = "Move the finished items of notes/todo.md to notes/done.md.";

fn script() -> Vec<ScriptedResponse> {
    vec![
        ScriptedResponse::tool_call("call_1", "list_dir", r#"{"path":"notes"}"#),
        ScriptedResponse::tool_call("call_2", "file_read", r#"{"path":"notes/todo.md"}"#),
        ScriptedResponse::tool_call("call_3", "file_read", r#"{"path":"notes/done.md"}"#), // does not exist
        ScriptedResponse::tool_call("call_4", "file_write", r#"{"path":"notes/done.md","content":"- [x] buy milk\n"}"#),
        ScriptedResponse::tool_call("call_5", "file_write", r#"{"path":"notes/todo.md","content":"- [ ] call Sam\n"}"#),
        ScriptedResponse::text("Done: \"buy milk\" is now in notes/done.md, and notes/todo.md keeps \"call Sam\"."),
    ]
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    examples::init_logging(); // `log` actions write `[HOOK] ...` through `tracing`, at INFO
    let options = Options::from_args();
    let model = options.model(script());
    let log_file = std::env::temp_dir().join("agent-hooks-declarative.log");
    let _ = std::fs::remove_file(&log_file);

    let files = Arc::new(Mutex::new(BTreeMap::from([(
        "notes/todo.md".to_owned(),
        "- [x] buy milk\n- [ ] call Sam\n".to_owned(),
    )])));
    let runtime = Runtime::builder()
        .agent::<agents::notes_agent>()
        .model("tool-reasoning", model.clone())
        .tool(list_dir(files.clone()))
        .tool(file_read(files.clone()))
        .tool(file_write(files.clone()))
        .build()?;

    heading("The hooks of examples/hooks.yaml");
    // `from_yaml` never fails: a bad entry is skipped with a WARN (`from_yaml_strict` lists them all).
    let hooks = DeclarativeHookRegistry::from_yaml(&std::fs::read_to_string(HOOKS_FILE)?);
    for hook in hooks.hooks() {
        println!("{hook}");
    }

    heading("Attaching them to notes_agent (fires onStart)");
    let agent = runtime.agent("notes_agent").ok_or("added above")?;
    hooks.apply_to(&agent).await;

    heading("A run: each tool call fires the matching hooks");
    println!("model: {}", model.description());
    let thread = runtime.create_thread("notes_agent", ThreadOptions::default()).await?;
    println!("you:   {QUESTION}");
    let outcome = thread.send(QUESTION).await?.into_result()?;
    println!("agent: {}", outcome.reply.as_deref().unwrap_or("(no reply)"));

    heading("Stopping (the program fires onStop itself)");
    hooks.fire_event(HookEvent::OnStop, &HookContext::from([("agent".to_owned(), "notes_agent".to_owned())])).await;

    heading(&format!("What the commands appended to {}", log_file.display()));
    print!("{}", std::fs::read_to_string(&log_file).unwrap_or_else(|_| "(nothing)\n".to_owned()));

    heading("The notes after the run (kept in memory)");
    for (path, text) in files.lock().unwrap_or_else(PoisonError::into_inner).iter() {
        println!("{path}: {text:?}");
    }
    Ok(())
}

type Files = Arc<Mutex<BTreeMap<String, String>>>;

/// The arguments' JSON schema: a `path`, and a `content` for writes.
fn path_schema(with_content: bool) -> Value {
    let mut schema = json!({
        "type": "object",
        "properties": { "path": { "type": "string", "description": "A path such as notes/todo.md" } },
        "required": ["path"],
    });
    if with_content {
        schema["properties"]["content"] = json!({ "type": "string", "description": "The new text" });
        schema["required"] = json!(["path", "content"]);
    }
    schema
}

fn list_dir(files: Files) -> FnTool {
    FnTool::new("list_dir", "Lists the files in a folder.", move |args: Value| {
        let files = files.clone();
        async move {
            let folder = format!("{}/", args["path"].as_str().unwrap_or("").trim_end_matches('/'));
            let files = files.lock().unwrap_or_else(PoisonError::into_inner);
            let names: Vec<&str> = files.keys().filter_map(|path| path.strip_prefix(folder.as_str())).collect();
            HookToolResult::success(json!(names).to_string())
        }
    })
    .with_parameters(path_schema(false))
}

fn file_read(files: Files) -> FnTool {
    FnTool::new("file_read", "Reads a file.", move |args: Value| {
        let files = files.clone();
        async move {
            let path = args["path"].as_str().unwrap_or("");
            match files.lock().unwrap_or_else(PoisonError::into_inner).get(path) {
                Some(text) => HookToolResult::success(text.clone()),
                None => HookToolResult::error(format!("no such file: {path}")),
            }
        }
    })
    .with_parameters(path_schema(false))
}

fn file_write(files: Files) -> FnTool {
    FnTool::new("file_write", "Writes a file, replacing what it held.", move |args: Value| {
        let files = files.clone();
        async move {
            let (Some(path), Some(content)) = (args["path"].as_str(), args["content"].as_str()) else {
                return HookToolResult::error("`path` and `content` are required");
            };
            files.lock().unwrap_or_else(PoisonError::into_inner).insert(path.to_owned(), content.to_owned());
            HookToolResult::success(format!("wrote {} bytes to {path}", content.len()))
        }
    })
    .with_parameters(path_schema(true))
}
