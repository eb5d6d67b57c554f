//! The tour: the guide's duplicate finder, end to end, with every hook run on screen.
//!
//! It runs on a scripted model (no network, no key), stores the thread in an SQLite file in
//! the system's temp directory, prints a line each time a hook runs, then the agent's resolved
//! hook table (`explain`) and what the database holds.
//!
//! ```text
//! cargo run -p examples --bin tour
//! ```
//!
//! The hook lines come from the runtime's `tracing` spans (target `hooks_runtime::hook`, one per
//! hook run, with id, kind, source and duration); [`examples::init_logging_with_hook_lines`]
//! prints them.

#[path = "duplicate_finder/finder.rs"]
mod finder;

use examples::{Options, describe_message, heading};
use hooks_runtime::store::{MessageStore as _, SqliteStore};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    examples::init_logging_with_hook_lines();
    let options = Options::from_args();

    println!("Agent hooks tour");
    println!("The guide's duplicate finder checks whether a GitHub issue repeats an older one.");
    println!("Its prompt declares one hook, redact_emails (before_store_tool_result), which removes");
    println!("email addresses from each tool result before it is stored and shown to the model.");

    // A fresh database each run, so the output is the same every time: a file of this run's own
    // in the temporary directory, or the path in HOOKS_TOUR_DB, which must not exist yet (the
    // tour never overwrites a file it did not make).
    let database = match std::env::var_os("HOOKS_TOUR_DB") {
        Some(path) => std::path::PathBuf::from(path),
        None => std::env::temp_dir().join(format!("agent-hooks-tour-{}.db", std::process::id())),
    };
    if database.exists() {
        return Err(format!(
            "{} already exists; the tour writes a new database (set HOOKS_TOUR_DB to another path)",
            database.display()
        )
        .into());
    }

    let (builder, model, github) = finder::runtime(&options);
    let runtime = builder.store(SqliteStore::open(&database)?).build()?;

    heading("1. The run (a line per hook as it runs: id, kind, source, duration)");
    let (thread, _) = finder::ask(&runtime, model.description()).await?;
    println!("The canned repository octo-org/widgets now reads:");
    for line in github.summary() {
        println!("  {line}");
    }

    heading("2. The stored conversation");
    let messages = thread.messages().await?;
    for (number, message) in messages.iter().enumerate() {
        println!("{:>2}. {}", number + 1, describe_message(message, 100));
    }
    println!("\nWhat redact_emails did to the tool results:");
    for (number, message) in messages.iter().enumerate() {
        let content = message.content.as_deref().unwrap_or("");
        if let Some(at) = content.find(REDACTED) {
            println!("{:>2}. …{}…", number + 1, around(content, at, REDACTED.len(), 40));
        }
    }
    let left = messages.iter().filter(|m| m.content.as_deref().unwrap_or("").contains('@')).count();
    println!("The canned issues hold {} addresses; stored messages holding one: {left}.", github.email_addresses());

    heading("3. The agent's hooks (hooks_runtime::explain)");
    let agent = runtime.agent("duplicate_finder").ok_or("the agent was added above")?;
    print!("{}", hooks_runtime::explain(agent.resolved()));

    heading("4. The database");
    // A second connection to the file, as another process would open it.
    let reopened = SqliteStore::open(&database)?;
    let stored = reopened.messages(thread.id()).await?;
    println!("file:     {}", database.display());
    println!("thread:   {} ({:?})", thread.id(), thread.status());
    println!("messages: {} stored", stored.len());
    println!("Reopen it with Runtime::builder().store(SqliteStore::open(path)?) and runtime.open_thread(id).");
    Ok(())
}

const REDACTED: &str = "[email redacted]";

/// The text around `text[at..at + len]`, `radius` characters each side.
fn around(text: &str, at: usize, len: usize, radius: usize) -> &str {
    let start = text[..at].char_indices().rev().nth(radius - 1).map_or(0, |(i, _)| i);
    let end = text[at + len..].char_indices().nth(radius).map_or(text.len(), |(i, _)| at + len + i);
    &text[start..end]
}
