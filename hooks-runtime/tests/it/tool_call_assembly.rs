//! The runtime assembles the tool calls of one response: each argument fragment finds its
//! call, however many calls came before it. How the time grows with the number of calls (linear,
//! not a scan per fragment) is measured by the `tool_call_assembly` bench.

use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{StopReason, ThreadStatus};
use hooks_runtime::{Runtime, ThreadOptions};

define_prompt! { name: many_calls_prompt, model: "scripted", prompt: "Call tools." }
define_agent! { name: many_calls_agent, side_a: { prompt: many_calls_prompt, max_steps: 1 } }

#[tokio::test]
async fn ten_thousand_tool_calls_in_one_response_are_each_assembled_with_their_arguments() {
    const CALLS: usize = 10_000;
    let mut response = ScriptedResponse::default();
    for index in 0..CALLS {
        // No tool has this name: the first call fails and, with a limit of one failure, the turn
        // stops there, with results that say the other calls were not run.
        response = response.then_tool_call(&format!("call_{index}"), "missing", &format!(r#"{{"n":{index}}}"#));
    }
    let runtime = Runtime::builder()
        .agent::<many_calls_agent>()
        .model("scripted", ScriptedModel::new([response]))
        .repeated_tool_error_limit(1)
        .build()
        .unwrap();
    let thread = runtime.create_thread("many_calls_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("go").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Stopped(StopReason::RepeatedToolError), "{outcome:?}");
    let assistant = thread.messages().await.unwrap().into_iter().find(|message| message.tool_calls.is_some());
    let calls: Vec<serde_json::Value> =
        serde_json::from_str(assistant.unwrap().tool_calls.as_deref().unwrap()).unwrap();
    assert_eq!(calls.len(), CALLS);
    for (index, call) in calls.iter().enumerate() {
        assert_eq!(call["id"], format!("call_{index}"));
        assert_eq!(call["function"]["arguments"], format!(r#"{{"n":{index}}}"#), "call {index}");
    }
}
