//! Approvals: a guard denies a destructive shell command, a hook asks a person before a payment
//! over 100, the run stops `awaiting_approval`, and this process exits. A second process opens
//! the same SQLite file, sees the waiting payment with the SHA-256 of its arguments, has a
//! decision on other arguments refused as stale, approves it remembering the approval for every
//! payment to ACME (`pay(ACME)`, for every thread), and finishes the turn. The next payment to
//! ACME runs without waiting, its decision record naming the remembered approval; listed and
//! revoked, the one after waits for a person again.
//!
//! ```text
//! cargo run -p examples --bin approvals
//! ```
//!
//! The first process starts the second itself (the same program with `HOOKS_APPROVALS_DB` set
//! to the file), so one command shows both.

use std::path::PathBuf;

use examples::{Options, heading};
use hooks_runtime::approvals::{ApprovalChoice, ApprovalError, Remember, RememberScope};
use hooks_runtime::model::ScriptedResponse;
use hooks_runtime::store::{SqliteStore, ThreadStatus};
use hooks_runtime::tool::FnTool;
use hooks_runtime::types::HookToolResult;
use hooks_runtime::{AdmissionRecord, Runtime, ThreadOptions};
use serde_json::{Value, json};

mod guards;

mod agents {
    use hooks_runtime::prelude::*;

    define_prompt! {
        name: ops_prompt,
        model: "ops",
        prompt: "You run operations: shell commands and payments.",
        tools: ["shell", "pay"],
        hooks: [crate::guards::large_payments_need_a_person],
    }

    define_agent! { name: ops, side_a: { prompt: ops_prompt, stop_on_response: true, max_steps: 4 } }
}

fn tools() -> [FnTool; 2] {
    let shell = FnTool::new("shell", "Runs a shell command.", |args: Value| async move {
        HookToolResult::success(format!("ran `{}`", args["command"].as_str().unwrap_or_default()))
    })
    .with_parameters(json!({
        "type": "object",
        "properties": { "command": { "type": "string" } },
        "required": ["command"],
    }));
    let pay = FnTool::new("pay", "Pays an invoice.", |args: Value| async move {
        println!("    (the payment tool runs: {} to {})", args["amount"], args["to"].as_str().unwrap_or("?"));
        HookToolResult::success(format!("paid {} to {}", args["amount"], args["to"].as_str().unwrap_or("?")))
    })
    .with_parameters(json!({
        "type": "object",
        "properties": { "amount": { "type": "number" }, "to": { "type": "string" } },
        "required": ["amount", "to"],
    }));
    [shell, pay]
}

fn runtime(
    options: &Options,
    store: SqliteStore,
    script: Vec<ScriptedResponse>,
) -> Result<Runtime, Box<dyn std::error::Error>> {
    Ok(Runtime::builder()
        .agent::<agents::ops>()
        .model("ops", options.model(script))
        .tools(tools())
        .guard::<guards::no_destructive_commands>()
        .store(store)
        .build()?)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    examples::init_logging();
    let options = Options::from_args();
    match std::env::var_os("HOOKS_APPROVALS_DB") {
        Some(db) => approve(&options, PathBuf::from(db)).await,
        None => ask(&options).await,
    }
}

/// The first process: the run stops with the payment waiting, then a second process decides.
async fn ask(options: &Options) -> Result<(), Box<dyn std::error::Error>> {
    let db = std::env::temp_dir().join(format!("approvals-{}.db", std::process::id()));
    let script = vec![
        ScriptedResponse::tool_call("call_clean", "shell", r#"{"command":"rm -rf /var/cache"}"#)
            .then_tool_call("call_pay", "pay", r#"{"amount":250,"to":"ACME"}"#)
            .then_tool_call("call_disk", "shell", r#"{"command":"df -h"}"#),
    ];
    let runtime = runtime(options, SqliteStore::open(&db)?, script)?;
    heading("First process: the run stops at the payment");
    let thread = runtime.create_thread("ops", ThreadOptions::default()).await?;
    let outcome = thread.send("Clear the cache, pay ACME's invoice of 250 and check the disk.").await?;
    println!("status: {}", outcome.status);
    for message in thread.messages().await?.iter().filter(|m| m.tool_call_id.is_some()) {
        println!(
            "stored result of {}: {}",
            message.tool_call_id.as_deref().unwrap_or("?"),
            message.content.as_deref().unwrap_or("")
        );
    }
    for waiting in thread.pending_approvals().await? {
        let reasons: Vec<&str> = waiting.reasons.iter().map(|reason| reason.reason.as_str()).collect();
        println!(
            "waiting: {} {} {} ({}) sha256={}",
            waiting.id,
            waiting.tool,
            waiting.arguments,
            reasons.join("; "),
            waiting.arguments_sha256()
        );
    }
    let thread_id = thread.id().to_owned();
    drop(thread);
    drop(runtime);
    println!("this process exits; another one decides");
    let second = std::process::Command::new(std::env::current_exe()?)
        .args(std::env::args().skip(1))
        .env("HOOKS_APPROVALS_DB", &db)
        .env("HOOKS_APPROVALS_THREAD", &thread_id)
        .status()?;
    let _ = std::fs::remove_file(&db);
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    if !second.success() {
        return Err(format!("the approving process exited with {second}").into());
    }
    Ok(())
}

/// The second process: the waiting payment, from the file; approving it finishes the turn.
async fn approve(options: &Options, db: PathBuf) -> Result<(), Box<dyn std::error::Error>> {
    let script = vec![
        ScriptedResponse::text(
            "The cache was not cleared (that command is not allowed), ACME is paid, and the disk has room.",
        ),
        ScriptedResponse::tool_call("call_pay_2", "pay", r#"{"amount":180,"to":"ACME"}"#),
        ScriptedResponse::text("ACME's second invoice is paid."),
        ScriptedResponse::tool_call("call_pay_3", "pay", r#"{"amount":120,"to":"ACME"}"#),
    ];
    let runtime = runtime(options, SqliteStore::open(&db)?, script)?;
    heading("Second process: a person approves the payment");
    let thread_id = std::env::var("HOOKS_APPROVALS_THREAD")?;
    let thread = runtime.open_thread(&thread_id).await?;
    println!("status: {}", thread.status());
    let waiting = thread.pending_approvals().await?;
    println!("waiting: {}", waiting.iter().map(|call| call.id.as_str()).collect::<Vec<_>>().join(", "));
    // The call's id is the model's (a real endpoint makes up its own): found by its tool.
    let payment = waiting.iter().find(|call| call.tool == "pay").ok_or("no payment waits for approval")?;
    println!("the person sees {} {} (sha256={})", payment.tool, payment.arguments, payment.arguments_sha256());
    // A decision names the hash of the arguments the person saw: one made on other arguments
    // (here, an amount of 2500) is refused as stale and decides nothing.
    let mut seen_elsewhere = payment.arguments.clone();
    seen_elsewhere["amount"] = json!(2500);
    let other = hooks_runtime::approvals::ParkedToolCall::new(
        &payment.id,
        &payment.tool,
        seen_elsewhere,
        payment.position,
        payment.state,
    );
    let approve = || ApprovalChoice::Approve { arguments: None };
    match thread.decide_listed(&other, approve()).await {
        Err(stale @ ApprovalError::Stale { .. }) => println!("refused: {stale}"),
        other => return Err(format!("a decision on other arguments was not refused as stale: {other:?}").into()),
    }
    // Approved, and remembered for every payment to ACME in every thread: a rule in the
    // permission-rule syntax, which must cover the call approved.
    let remember = Remember::new(RememberScope::Always).with_pattern("pay(ACME)");
    let outcome = thread.decide_listed_remembering(payment, approve(), remember).await?;
    assert_eq!(outcome.status, ThreadStatus::Idle);
    println!("agent: {}", outcome.reply.as_deref().unwrap_or("(no reply)"));
    heading("The stored results, in the model's call order");
    for message in thread.messages().await?.iter().filter(|m| m.tool_call_id.is_some()) {
        println!("{}: {}", message.tool_call_id.as_deref().unwrap_or("?"), message.content.as_deref().unwrap_or(""));
    }

    heading("A remembered approval answers the next payment to ACME");
    let outcome = thread.send("Pay ACME's second invoice of 180.").await?;
    println!("status: {}", outcome.status);
    println!("agent: {}", outcome.reply.as_deref().unwrap_or("(no reply)"));
    let messages = thread.messages().await?;
    let result = messages.iter().rev().find(|m| m.tool_call_id.is_some()).ok_or("no stored result")?;
    let record = AdmissionRecord::of_message(result).ok_or("no decision record")?;
    for entry in &record.entries {
        println!("  {}: {} by {}", entry.decider, entry.decision, entry.by.as_deref().unwrap_or("the tool"));
    }
    if let Some(used) = &record.remembered {
        println!("answered by remembered approval {} ({}, {})", used.id, used.scope.as_str(), used.matcher.text());
    }

    heading("Listed, revoked: the next payment waits for a person again");
    let remembered = runtime.remembered_approvals().await?;
    for kept in &remembered {
        println!("remembered: {} {} {} {}", kept.id, kept.scope.as_str(), kept.tool, kept.matcher.text());
    }
    for kept in &remembered {
        println!("revoked {}: {}", kept.id, runtime.revoke_remembered_approval(&kept.id).await?);
    }
    let outcome = thread.send("Pay ACME's third invoice of 120.").await?;
    println!("status: {}", outcome.status);
    for waiting in thread.pending_approvals().await? {
        println!("waiting: {} {} {}", waiting.id, waiting.tool, waiting.arguments);
    }
    Ok(())
}
