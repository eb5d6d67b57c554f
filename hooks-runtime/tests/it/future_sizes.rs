//! The size of a run's future, which is copied when the run starts: a wrapper that held the run
//! twice (an `async fn` taking the run's future as an argument keeps it apart from what it
//! awaits) once made it 30 KB, and its copies half of a text turn's instructions
//! (docs/performance.md, "A turn, counted"). Sizes are fixed at compile time, so this is an
//! exact check, not a timing.

use hooks_runtime::model::ScriptedModel;
use hooks_runtime::prelude::*;
use hooks_runtime::{Runtime, ThreadOptions};

define_prompt! { name: future_size_prompt, model: "scripted", prompt: "Reply." }
define_agent! {
    name: future_size_agent,
    side_a: { prompt: future_size_prompt, stop_on_response: true },
    side_b: { human: true },
}

/// At most this many bytes for a run's future: about 1.8 KB today (the run's body is boxed, and
/// so are the paths of a dead owner's run, of a failed run and of a store's permit), with room
/// for the turn to grow, and far below what a run held twice, or its body inline, takes (6.4 KB).
const RUN_FUTURE_BUDGET: usize = 3 * 1024;

#[tokio::test]
async fn a_runs_future_stays_within_its_budget() {
    let runtime = Runtime::builder()
        .agent::<future_size_agent>()
        .model("scripted", ScriptedModel::new(vec![]))
        .build()
        .expect("the agent resolves");
    let thread = runtime.create_thread("future_size_agent", ThreadOptions::default()).await.unwrap();
    let input = thread.queue_message(MessageRecord::new(Role::User, "hi")).await.unwrap();
    let sizes = [
        ("send", std::mem::size_of_val(&thread.send("hi"))),
        ("send_message", std::mem::size_of_val(&thread.send_message(MessageRecord::new(Role::User, "hi")))),
        ("run_input", std::mem::size_of_val(&thread.run_input(&input))),
        ("run_queued", std::mem::size_of_val(&thread.run_queued())),
    ];
    let over: Vec<String> = sizes
        .iter()
        .filter(|(_, size)| *size > RUN_FUTURE_BUDGET)
        .map(|(method, size)| format!("`{method}`: {size} bytes"))
        .collect();
    assert!(over.is_empty(), "over the budget of {RUN_FUTURE_BUDGET} bytes a run's future: {}", over.join(", "));
}
