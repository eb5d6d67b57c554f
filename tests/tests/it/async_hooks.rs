//! E3's timeout around an async hook must not change how the hook runs: a hook that yields lets
//! other tasks run before it goes on, exactly as it would without a timeout.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::{Runtime, ThreadOptions};

static OTHER_TASK_RAN: AtomicBool = AtomicBool::new(false);
static SAW_OTHER_TASK: AtomicUsize = AtomicUsize::new(0);

#[hook(after_create_message, id = "yield_once", timeout_ms = 5_000)]
async fn yield_once(_state: &ThreadState, _message: &MessageRecord) {
    OTHER_TASK_RAN.store(false, Ordering::SeqCst);
    tokio::spawn(async { OTHER_TASK_RAN.store(true, Ordering::SeqCst) });
    tokio::task::yield_now().await;
    if OTHER_TASK_RAN.load(Ordering::SeqCst) {
        SAW_OTHER_TASK.fetch_add(1, Ordering::SeqCst);
    }
}

define_prompt! { name: yielding_prompt, model: "scripted", prompt: "p", hooks: [yield_once] }
define_agent! { name: yielding_agent, side_a: { prompt: yielding_prompt, stop_on_response: true } }

#[tokio::test(flavor = "current_thread")]
async fn e3_a_hook_under_its_timeout_yields_for_real() {
    let runtime = Runtime::builder()
        .agent::<yielding_agent>()
        .model("scripted", ScriptedModel::new([ScriptedResponse::text("ok")]))
        .build()
        .unwrap();
    let thread = runtime.create_thread("yielding_agent", ThreadOptions::default()).await.unwrap();
    thread.send("hello").await.unwrap();
    // Two messages were created (the user's and the reply); on one worker thread, the spawned
    // task can only have run if the hook's yield reached the executor each time.
    assert_eq!(SAW_OTHER_TASK.load(Ordering::SeqCst), 2);
}
