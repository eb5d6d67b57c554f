//! Error alerting (spec 8.5): `alert_payment_failures` (`after_tool_call_failure`) raises a
//! critical alert when the `payment_process` tool fails, and keeps the original error.
//!
//! Other tools fail without an alert. The hook returns `None`, so the error the tool returned
//! is what gets stored and what the model reads.
//!
//! ```text
//! cargo run -p examples --bin error_alerting
//! ```

use examples::{Options, describe_message, heading};
use hooks_runtime::model::ScriptedResponse;
use hooks_runtime::tool::FnTool;
use hooks_runtime::types::{HookToolResult, Role};
use hooks_runtime::{Runtime, ThreadOptions};
use serde_json::{Value, json};

mod alerts {
    use std::sync::{Mutex, PoisonError};

    /// An alert for the on-call person.
    #[derive(Debug, Clone)]
    pub(crate) struct Alert {
        pub(crate) level: &'static str,
        pub(crate) message: String,
        pub(crate) thread_id: String,
    }

    static SENT: Mutex<Vec<Alert>> = Mutex::new(Vec::new());

    /// Sends an alert. A real one would call a paging service; this one prints and keeps it.
    pub(crate) async fn send_alert(alert: Alert) {
        println!("🚨 ALERT [{}] {} (thread {})", alert.level, alert.message, alert.thread_id);
        SENT.lock().unwrap_or_else(PoisonError::into_inner).push(alert);
    }

    /// Every alert sent so far.
    pub(crate) fn sent() -> Vec<Alert> {
        SENT.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

mod hooks {
    use hooks_runtime::prelude::*;

    use crate::alerts::{Alert, send_alert};

    /// Sends a critical alert for a failed payment; the error itself is left as it is.
    #[hook(after_tool_call_failure, id = "alert_payment_failures")]
    pub(crate) async fn alert_payment_failures(
        state: &ThreadState,
        call: &HookToolCall,
        result: &HookToolResult,
    ) -> Option<HookToolResult> {
        if call.function.name == "payment_process" {
            send_alert(Alert {
                level: "critical",
                message: format!("Payment tool failed: {}", result.error.as_deref().unwrap_or("unknown error")),
                thread_id: state.thread_id.clone(),
            })
            .await;
        }
        None // keep the original error
    }
}

mod prompts {
    use hooks_runtime::prelude::*;

    define_prompt! {
        name: billing_prompt,
        model: "tool-reasoning",
        prompt: "You settle invoices. Look the invoice up with lookup_invoice, then charge it with payment_process. \
                 If a tool fails, say so.",
        tools: ["lookup_invoice", "payment_process"],
        hooks: [crate::hooks::alert_payment_failures],
    }
}

mod agents {
    use hooks_runtime::prelude::*;

    define_agent! {
        name: billing_agent,
        side_a: { prompt: crate::prompts::billing_prompt, stop_on_response: true, max_steps: 5 },
        side_b: { human: true },
    }
}

const QUESTION: &str = "Please pay invoice INV-7 with the card on file.";

fn script() -> Vec<ScriptedResponse> {
    vec![
        ScriptedResponse::tool_call("call_1", "lookup_invoice", r#"{"invoice":"INV-9"}"#), // wrong number: fails
        ScriptedResponse::tool_call("call_2", "lookup_invoice", r#"{"invoice":"INV-7"}"#),
        ScriptedResponse::tool_call("call_3", "payment_process", r#"{"invoice":"INV-7","amount_cents":12900}"#),
        ScriptedResponse::text("I could not pay INV-7: the card on file was declined. Please update it."),
    ]
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    examples::init_logging();
    let options = Options::from_args();
    let model = options.model(script());
    let invoice_schema = json!({
        "type": "object",
        "properties": { "invoice": { "type": "string", "description": "The invoice id, such as INV-7" } },
        "required": ["invoice"],
    });
    let lookup_invoice = FnTool::new("lookup_invoice", "Looks an invoice up.", |args: Value| async move {
        match args["invoice"].as_str() {
            Some("INV-7") => HookToolResult::success(r#"{"invoice":"INV-7","amount_cents":12900,"status":"open"}"#),
            other => HookToolResult::error(format!("no invoice {}", other.unwrap_or("(none given)"))),
        }
    })
    .with_parameters(invoice_schema);
    // The payment provider declines every card here.
    let payment_process = FnTool::new("payment_process", "Charges an invoice to the card on file.", |_| async {
        HookToolResult::error("card declined (code 51: insufficient funds)")
    })
    .with_parameters(json!({
        "type": "object",
        "properties": {
            "invoice": { "type": "string", "description": "The invoice id" },
            "amount_cents": { "type": "integer", "description": "The amount to charge, in cents" },
        },
        "required": ["invoice", "amount_cents"],
    }));
    let runtime = Runtime::builder()
        .agent::<agents::billing_agent>()
        .model("tool-reasoning", model.clone())
        .tool(lookup_invoice)
        .tool(payment_process)
        .build()?;

    heading("A payment that fails");
    println!("model: {}", model.description());
    let thread = runtime.create_thread("billing_agent", ThreadOptions::default()).await?;
    println!("you:   {QUESTION}");
    let outcome = thread.send(QUESTION).await?.into_result()?;
    println!("agent: {}", outcome.reply.as_deref().unwrap_or("(no reply)"));

    heading("Tool results as stored (the hook kept each error as it was)");
    let mut failed = Vec::new();
    for message in thread.messages().await?.iter().filter(|m| m.role == Role::Tool) {
        println!("{}", describe_message(message, 100));
        if message.extra_str("tool_status") == Some("error") {
            failed.push(message.name.clone().unwrap_or_default());
        }
    }
    println!("\nFailed tool calls: {}", failed.join(", "));
    println!("Alerts sent: {} (alert_payment_failures alerts for payment_process only)", alerts::sent().len());
    Ok(())
}
