//! The guide's duplicate finder, with its `redact_emails` hook on the prompt.
//!
//! The agent reads a GitHub issue, searches for older ones, reads the closest match and closes
//! the new issue as a duplicate. The issue bodies hold email addresses; `redact_emails`
//! (`before_store_tool_result`) replaces them before each tool result is stored, so neither the
//! history nor the model ever sees them. The program prints the stored tool messages to show it.
//!
//! ```text
//! cargo run -p examples --bin duplicate_finder
//! cargo run -p examples --bin duplicate_finder -- --base-url https://api.openai.com/v1 --model gpt-4o-mini
//! ```

mod finder;

use examples::{Options, describe_message, heading};
use hooks_runtime::types::Role;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    examples::init_logging();
    let options = Options::from_args();
    let (builder, model, github) = finder::runtime(&options);
    let runtime = builder.build()?;

    heading("Duplicate finder");
    let (thread, outcome) = finder::ask(&runtime, model.description()).await?;
    println!("({outcome})");

    heading("Tool results as stored, after redact_emails");
    let messages = thread.messages().await?;
    let tool_results: Vec<_> = messages.iter().filter(|message| message.role == Role::Tool).collect();
    for message in &tool_results {
        println!("{}", describe_message(message, 400));
    }
    let left = tool_results.iter().filter(|m| m.content.as_deref().unwrap_or("").contains('@')).count();
    println!(
        "The canned issues hold {} email addresses; stored tool results still holding one: {left}.",
        github.email_addresses()
    );

    heading("The canned repository octo-org/widgets after the run");
    for line in github.summary() {
        println!("{line}");
    }
    Ok(())
}
