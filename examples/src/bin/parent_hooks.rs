//! Required parent hooks: the guide's `mail_agent` requires `mail_context` on every parent that
//! composes it, and the `coordinator` gets it by declaring `mail_agent` as a subagent.
//!
//! `mail_context` (`after_system_message`, stage `before_parent`) adds the mailbox summary to
//! the coordinator's system message. The coordinator names no hook of its own: the relationship
//! alone brings it. The program prints `explain` for both agents, then the system message each
//! model request carried, before and after a mail sync stores a summary.
//!
//! ```text
//! cargo run -p examples --bin parent_hooks
//! cargo run -p examples --bin parent_hooks -- --base-url http://localhost:11434/v1 --model llama3.1
//! ```

use examples::{Options, heading, shorten};
use hooks_runtime::model::ScriptedResponse;
use hooks_runtime::tool::FnTool;
use hooks_runtime::types::HookToolResult;
use hooks_runtime::{Runtime, ThreadOptions};
use serde_json::json;

mod hooks {
    use hooks_runtime::prelude::*;

    /// Shows newly synchronized mail to the coordinator.
    #[hook(after_system_message, id = "mail_context")]
    pub(crate) async fn mail_context(state: &ThreadState, system: &str) -> Option<String> {
        // `None` keeps the system message as it is.
        let summary = state.get_value("mail.summary").await?;
        Some(format!("{system}\n\nMailbox: {}", summary.as_str()?))
    }
}

mod prompts {
    use hooks_runtime::prelude::*;

    define_prompt! {
        name: mail_prompt,
        model: "tool-reasoning",
        prompt: "You read and summarize the mailbox. List it with list_mail.",
        tools: ["list_mail"],
    }

    define_prompt! {
        name: coordinator_prompt,
        model: "tool-reasoning",
        prompt: "You coordinate the user's assistants. Ask mail_agent about anything in the mailbox.",
    }
}

mod agents {
    use crate::{hooks, prompts};
    use hooks_runtime::prelude::*;

    define_agent! {
        name: mail_agent,
        expose_as_tool: true,
        tool_description: "Reads and summarizes the mailbox.",
        parent_hooks: [
            {
                hook: hooks::mail_context,
                reason: "Shows newly synchronized mail to the coordinator.",
                stage: before_parent,
            },
        ],
        side_a: { prompt: prompts::mail_prompt },
        side_b: { human: true },
    }

    define_agent! {
        name: coordinator,
        side_a: { prompt: prompts::coordinator_prompt, subagents: [{ agent: mail_agent, max_instances: 1 }] },
        side_b: { human: true },
    }
}

/// Turn 1: a plain reply. Turn 2: the coordinator asks mail_agent (a child thread), which lists
/// the mail, then both reply.
fn script() -> Vec<ScriptedResponse> {
    vec![
        ScriptedResponse::text("Good morning! Your mailbox has not synchronized yet."),
        ScriptedResponse::tool_call("call_1", "mail_agent", r#"{"message":"Which new messages are urgent?"}"#),
        ScriptedResponse::tool_call("call_2", "list_mail", "{}"),
        ScriptedResponse::text("One is urgent: ACME says invoice #881 is overdue."),
        ScriptedResponse::text("Yes: ACME's invoice #881 is overdue. The other two can wait."),
    ]
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    examples::init_logging();
    let options = Options::from_args();
    let model = options.model(script());
    let list_mail = FnTool::new("list_mail", "Lists the new messages in the mailbox.", |_args| async {
        HookToolResult::success(
            json!([
                { "from": "billing@acme.example", "subject": "Invoice #881 is overdue", "urgent": true },
                { "from": "team@widgets.example", "subject": "Standup notes" },
                { "from": "news@letters.example", "subject": "Weekly digest" },
            ])
            .to_string(),
        )
    });
    let runtime = Runtime::builder()
        .agent::<agents::coordinator>() // brings mail_agent, its subagent, along
        .model("tool-reasoning", model.clone())
        .tool(list_mail)
        .build()?;

    heading("The coordinator's hooks (explain)");
    print!("{}", hooks_runtime::explain(runtime.agent("coordinator").ok_or("added above")?.resolved()));
    heading("mail_agent's hooks (explain)");
    print!("{}", hooks_runtime::explain(runtime.agent("mail_agent").ok_or("added above")?.resolved()));

    let thread = runtime.create_thread("coordinator", ThreadOptions::default()).await?;
    println!("\nmodel: {}", model.description());

    heading("Turn 1: no mail synchronized yet, so mail_context changes nothing");
    let seen = model.requests().len();
    ask(&thread, "Good morning. Anything I should know?").await?;
    print_system_messages(&model, seen);

    heading("Turn 2: a mail sync stored mail.summary on the thread");
    // What a sync job would do; `mail_context` reads it with `state.get_value`.
    thread.set_value("mail.summary", json!("3 new messages, 1 urgent: ACME invoice #881 is overdue.")).await?;
    let seen = model.requests().len();
    ask(&thread, "Is anything in my mail urgent?").await?;
    print_system_messages(&model, seen);
    println!("mail_context ran for the coordinator's requests only: a requirement binds the direct parent.");
    Ok(())
}

async fn ask(thread: &hooks_runtime::Thread, text: &str) -> Result<(), Box<dyn std::error::Error>> {
    println!("you:   {text}");
    let outcome = thread.send(text).await?.into_result()?;
    println!("agent: {}", outcome.reply.as_deref().unwrap_or("(no reply)"));
    Ok(())
}

/// The system message of every request after the first `seen`, and whose prompt it was.
fn print_system_messages(model: &examples::ExampleModel, seen: usize) {
    println!("System messages the model received:");
    for request in model.requests().iter().skip(seen) {
        let system = request.messages.first().and_then(|m| m.content.as_deref()).unwrap_or_default();
        let who = if system.starts_with("You coordinate") { "coordinator" } else { "mail_agent " };
        println!("  {who}  {}", shorten(system, 150));
    }
}
