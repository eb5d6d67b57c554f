//! The runtime assembles the tool calls of one response in time proportional to their number:
//! each argument fragment finds its call directly, however many calls came before it.

use std::time::{Duration, Instant};

use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{StopReason, ThreadStatus};
use hooks_runtime::{Runtime, ThreadOptions};

define_prompt! { name: many_calls_prompt, model: "scripted", prompt: "Call tools." }
define_agent! { name: many_calls_agent, side_a: { prompt: many_calls_prompt, max_steps: 1 } }

#[tokio::test]
async fn a_hundred_thousand_tool_calls_in_one_response_are_assembled_in_linear_time() {
    const CALLS: usize = 100_000;
    // The run takes about 2 s here in an unoptimised build; with a scan per fragment, about a minute.
    const LIMIT: Duration = Duration::from_secs(20);
    let mut response = ScriptedResponse::default();
    for index in 0..CALLS {
        // No tool has this name: the first call fails and, with a limit of one failure, the turn
        // stops there; what is measured is the response's assembly and the results that say
        // the other calls were not run (one store insert each).
        response = response.then_tool_call(&format!("call_{index}"), "missing", r#"{"n":1}"#);
    }
    let runtime = Runtime::builder()
        .agent::<many_calls_agent>()
        .model("scripted", ScriptedModel::new([response]))
        .repeated_tool_error_limit(1)
        .build()
        .unwrap();
    let thread = runtime.create_thread("many_calls_agent", ThreadOptions::default()).await.unwrap();
    let started = Instant::now();

    let outcome = tokio::time::timeout(LIMIT * 3, thread.send("go")).await.expect("the run ended").unwrap();

    let elapsed = started.elapsed();
    assert_eq!(outcome.status, ThreadStatus::Stopped(StopReason::RepeatedToolError), "{outcome:?}");
    let assistant = thread.messages().await.unwrap().into_iter().find(|message| message.tool_calls.is_some());
    let calls: Vec<serde_json::Value> =
        serde_json::from_str(assistant.unwrap().tool_calls.as_deref().unwrap()).unwrap();
    assert_eq!(calls.len(), CALLS);
    assert_eq!(calls[CALLS - 1]["function"]["arguments"], r#"{"n":1}"#);
    assert!(elapsed < LIMIT, "{CALLS} calls took {elapsed:?}");
}
