//! The runtime on the embedded SQLite store: a prevented message leaves no row, a reopened
//! thread continues with its history, and two processes one after the other share one file.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{MessageStore, SqliteStore, ThreadStatus};
use hooks_runtime::{Runtime, ThreadOptions};

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
    assert_eq!(outcome.status, ThreadStatus::Failed("message_hook_error".into()));
    assert!(model.requests().is_empty(), "no turn started");
    drop(runtime);
    // A fresh connection to the file: the thread exists, no message row does.
    let store = SqliteStore::open(&path).unwrap();
    assert!(store.messages(thread.id()).await.unwrap().is_empty());
    let stored = store.load_thread(thread.id()).await.unwrap().unwrap();
    assert_eq!(stored.status, ThreadStatus::Failed("message_hook_error".into()));
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
        .args(["--exact", "child_process_run", "--ignored", "--nocapture"])
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
