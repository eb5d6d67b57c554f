//! The runtime on the embedded SQLite store: a prevented message leaves no row, a reopened
//! thread continues with its history and its values, and two processes one after the other share
//! one file.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{FailReason, InMemoryStore, MessageStore, SqliteStore, ThreadStatus};
use hooks_runtime::{Runtime, ThreadOptions};
use serde_json::json;

/// Refuses user messages that contain "forbidden"; lets everything else through.
#[hook(before_create_message, id = "refuse_forbidden")]
fn refuse_forbidden(_state: &ThreadState, message: MessageRecord) -> Result<MessageRecord, HookError> {
    if message.content.as_deref().is_some_and(|text| text.contains("forbidden")) {
        return Err(HookError::new("refused"));
    }
    Ok(message)
}

define_prompt! { name: archive_prompt, model: "scripted", prompt: "You keep notes.", hooks: [refuse_forbidden] }
define_agent! { name: archivist, side_a: { prompt: archive_prompt, stop_on_response: true } }

/// The guide's use of `after_thread_created`: initialize the thread's values.
#[hook(after_thread_created, id = "m11_initialize_values")]
async fn m11_initialize_values(state: &ThreadState) -> Result<(), HookError> {
    state.set_value("plan", json!({"tier": "pro", "seats": 3})).await
}

/// Counts the thread's turns in a value, read and written by the hook during each run.
#[hook(after_create_message, id = "m11_count_turns")]
async fn m11_count_turns(state: &ThreadState, message: &MessageRecord) -> Result<(), HookError> {
    if message.role == Role::User {
        let turns = state.get_value("turns").await.and_then(|v| v.as_u64()).unwrap_or(0);
        state.set_value("turns", json!(turns + 1)).await?;
    }
    Ok(())
}

define_prompt! { name: m11_prompt, model: "scripted", prompt: "You remember.", hooks: [m11_count_turns] }
define_agent! {
    name: m11_agent,
    side_a: { prompt: m11_prompt, stop_on_response: true },
    hooks: [m11_initialize_values],
}

fn m11_runtime(store: impl MessageStore, model: ScriptedModel) -> Runtime {
    Runtime::builder().agent::<m11_agent>().model("scripted", model).store(store).build().expect("runtime builds")
}

static NEXT_DIR: AtomicUsize = AtomicUsize::new(0);

fn temp_db(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "agent-hooks-sqlite-runtime-{}-{}-{test}",
        std::process::id(),
        NEXT_DIR.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("threads.db")
}

fn runtime(path: &PathBuf, model: ScriptedModel) -> Runtime {
    Runtime::builder()
        .agent::<archivist>()
        .model("scripted", model)
        .store(SqliteStore::open(path).expect("open the database"))
        .build()
        .expect("runtime builds")
}

#[tokio::test]
async fn m6_prevented_message_leaves_no_row_in_sqlite() {
    let path = temp_db("prevented");
    let model = ScriptedModel::new([ScriptedResponse::text("noted")]);
    let runtime = runtime(&path, model.clone());
    let thread = runtime.create_thread("archivist", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("this is forbidden").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Failed(FailReason::MessageHookError));
    assert!(model.requests().is_empty(), "no turn started");
    drop(runtime);
    // A fresh connection to the file: the thread exists, no message row does.
    let store = SqliteStore::open(&path).unwrap();
    assert!(store.messages(thread.id()).await.unwrap().is_empty());
    let stored = store.load_thread(thread.id()).await.unwrap().unwrap();
    assert_eq!(stored.status, ThreadStatus::Failed(FailReason::MessageHookError));
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
}

#[tokio::test]
async fn reopened_thread_continues_with_its_history() {
    let path = temp_db("reopen");
    let thread_id = {
        let runtime = runtime(&path, ScriptedModel::new([ScriptedResponse::text("first answer")]));
        let thread = runtime.create_thread("archivist", ThreadOptions::default()).await.unwrap();
        thread.send("first question").await.unwrap();
        thread.id().to_owned()
    };
    let model = ScriptedModel::new([ScriptedResponse::text("second answer")]);
    let runtime = runtime(&path, model.clone());
    let thread = runtime.open_thread(&thread_id).await.unwrap();
    let outcome = thread.send("second question").await.unwrap();
    assert_eq!(outcome.reply.as_deref(), Some("second answer"));
    let request = &model.requests()[0];
    let contents: Vec<Option<&str>> = request.messages.iter().map(|m| m.content.as_deref()).collect();
    assert_eq!(
        contents,
        [Some("You keep notes."), Some("first question"), Some("first answer"), Some("second question")],
        "the reopened thread's request carries the earlier history"
    );
    assert_eq!(thread.messages().await.unwrap().len(), 4);
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
}

const CHILD_DB: &str = "AGENT_HOOKS_SQLITE_RUNTIME_CHILD_DB";

/// Not a test on its own: the first process of the test below, which runs it with `--ignored`.
#[tokio::test]
#[ignore = "run by runs_from_two_processes_one_after_the_other_share_the_file in a second process"]
async fn child_process_run() {
    let path = std::env::var_os(CHILD_DB).expect("run by the two-process test, which sets the database path");
    let path = PathBuf::from(path);
    let runtime = runtime(&path, ScriptedModel::new([ScriptedResponse::text("answer from the first process")]));
    let thread = runtime.create_thread("archivist", ThreadOptions::default()).await.unwrap();
    thread.send("question from the first process").await.unwrap();
    std::fs::write(path.with_extension("thread"), thread.id()).unwrap();
}

#[tokio::test]
async fn runs_from_two_processes_one_after_the_other_share_the_file() {
    let path = temp_db("processes");
    let status = tokio::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "sqlite_runtime::child_process_run", "--ignored", "--nocapture"])
        .env(CHILD_DB, &path)
        .status()
        .await
        .unwrap();
    assert!(status.success(), "the first process ran");
    let thread_id =
        std::fs::read_to_string(path.with_extension("thread")).expect("the first process wrote its thread id");
    let runtime = runtime(&path, ScriptedModel::new([ScriptedResponse::text("answer from the second process")]));
    let thread = runtime.open_thread(&thread_id).await.unwrap();
    thread.send("question from the second process").await.unwrap();
    let contents: Vec<String> =
        thread.messages().await.unwrap().into_iter().map(|m| m.content.unwrap_or_default()).collect();
    assert_eq!(
        contents,
        [
            "question from the first process",
            "answer from the first process",
            "question from the second process",
            "answer from the second process"
        ]
    );
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
}

#[tokio::test]
async fn m11_values_set_in_after_thread_created_survive_reopening_from_sqlite() {
    let path = temp_db("values");
    let thread_id = {
        let runtime =
            m11_runtime(SqliteStore::open(&path).unwrap(), ScriptedModel::new([ScriptedResponse::text("hi")]));
        let thread = runtime.create_thread("m11_agent", ThreadOptions::default()).await.unwrap();
        assert_eq!(thread.value("plan"), Some(json!({"tier": "pro", "seats": 3})));
        thread.send("hello").await.unwrap().into_result().unwrap();
        thread.set_value("note", json!("set from outside a run")).await.unwrap();
        thread.id().to_owned()
    };
    // A new runtime on a new connection: what the creating process set is there.
    let model = ScriptedModel::new([ScriptedResponse::text("again")]);
    let runtime = m11_runtime(SqliteStore::open(&path).unwrap(), model);
    let thread = runtime.open_thread(&thread_id).await.unwrap();
    assert_eq!(thread.value("plan"), Some(json!({"tier": "pro", "seats": 3})));
    assert_eq!(thread.value("note"), Some(json!("set from outside a run")));
    assert_eq!(thread.value("turns"), Some(json!(1)));
    thread.send("hello again").await.unwrap().into_result().unwrap();
    assert_eq!(thread.value("turns"), Some(json!(2)), "the hook read the persisted count and added to it");
    let stored = SqliteStore::open(&path).unwrap().load_thread(&thread_id).await.unwrap().unwrap();
    assert_eq!(stored.values.get("turns"), Some(&json!(2)));
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
}

#[tokio::test]
async fn m11_values_persist_with_the_thread_in_the_in_memory_store() {
    let store = std::sync::Arc::new(InMemoryStore::new());
    let runtime = Runtime::builder()
        .agent::<m11_agent>()
        .model("scripted", ScriptedModel::new([ScriptedResponse::text("hi")]))
        .store(store.clone())
        .build()
        .unwrap();
    let thread = runtime.create_thread("m11_agent", ThreadOptions::default()).await.unwrap();
    thread.send("hello").await.unwrap().into_result().unwrap();
    let stored = store.load_thread(thread.id()).await.unwrap().unwrap();
    assert_eq!(stored.values.get("plan"), Some(&json!({"tier": "pro", "seats": 3})));
    assert_eq!(stored.values.get("turns"), Some(&json!(1)));
    let reopened = runtime.open_thread(thread.id()).await.unwrap();
    assert_eq!(reopened.value("plan"), Some(json!({"tier": "pro", "seats": 3})));
}
