//! The SQLite message store: the in-memory store's behaviour, plus what a file adds (reopening,
//! two processes, atomic inserts, corrupt rows).
//!
//! The two-process test runs this test binary again as a child, selecting [`child_writer`] with
//! `--exact` and handing it the database path in [`CHILD_DB_ENV`]; without that variable
//! `child_writer` does nothing.

#![cfg(feature = "sqlite")]

use crate::store_fixtures;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use hooks_runtime::store::{
    FailReason, MessageStore, SqliteStore, StopReason, StoreError, StoreErrorKind, ThreadStatus,
};
use hooks_runtime::types::{MessageUpdate, Role};
use serde_json::json;
use store_fixtures::{full_message, message, thread};

/// Set in the child process: the database file it writes to.
const CHILD_DB_ENV: &str = "HOOKS_SQLITE_STORE_CHILD_DB";
/// Set in the child process: the thread it writes.
const CHILD_THREAD_ENV: &str = "HOOKS_SQLITE_STORE_CHILD_THREAD";
/// How many messages the child writes.
const CHILD_MESSAGES: usize = 40;

/// A directory of its own under the system temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(label: &str) -> Self {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("hooks-sqlite-{label}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    fn db(&self) -> PathBuf {
        self.0.join("store.db")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn raw(path: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(path).expect("raw connection")
}

fn count(path: &Path, sql: &str) -> i64 {
    raw(path).query_row(sql, [], |row| row.get(0)).expect("count")
}

#[tokio::test]
async fn creates_and_loads_a_thread() {
    let store = SqliteStore::in_memory().unwrap();
    assert_eq!(store.load_thread("t1").await.unwrap(), None);
    store.create_thread(&thread("t1")).await.unwrap();
    assert_eq!(store.load_thread("t1").await.unwrap(), Some(thread("t1")));
    assert_eq!(store.messages("t1").await.unwrap(), Vec::new());
}

#[tokio::test]
async fn a_duplicate_thread_is_an_error() {
    let store = SqliteStore::in_memory().unwrap();
    store.create_thread(&thread("t1")).await.unwrap();
    let mut other = thread("t1");
    other.agent = "someone else".into();
    let err = store.create_thread(&other).await.unwrap_err();
    assert!(
        err.message().contains("create_thread")
            && err.message().contains("`t1`")
            && err.message().contains("already exists"),
        "{err}"
    );
    assert_eq!(store.load_thread("t1").await.unwrap(), Some(thread("t1")), "the first thread is kept");
}

#[tokio::test]
async fn messages_come_back_in_insertion_order_with_silent_ones() {
    let store = SqliteStore::in_memory().unwrap();
    store.create_thread(&thread("t1")).await.unwrap();
    let mut hidden = message("m2", Role::System, "internal note");
    hidden.silent = Some(true);
    // Ids that sort the other way round: order is insertion order, not id order.
    let inserted = vec![message("m3", Role::User, "hi"), hidden, message("m1", Role::Assistant, "hello")];
    for m in &inserted {
        store.insert_message("t1", m).await.unwrap();
    }
    assert_eq!(store.messages("t1").await.unwrap(), inserted);
}

#[tokio::test]
async fn messages_of_threads_are_kept_apart() {
    let store = SqliteStore::in_memory().unwrap();
    store.create_thread(&thread("a")).await.unwrap();
    store.create_thread(&thread("b")).await.unwrap();
    store.insert_message("a", &message("m1", Role::User, "to a")).await.unwrap();
    // The same message id in another thread is a different message.
    store.insert_message("b", &message("m1", Role::User, "to b")).await.unwrap();
    assert_eq!(store.messages("a").await.unwrap(), vec![message("m1", Role::User, "to a")]);
    assert_eq!(store.messages("b").await.unwrap(), vec![message("m1", Role::User, "to b")]);
}

#[tokio::test]
async fn every_field_and_extra_fields_survive_a_round_trip() {
    let store = SqliteStore::in_memory().unwrap();
    store.create_thread(&thread("t1")).await.unwrap();
    let mut bare = message("m2", Role::Assistant, "");
    bare.content = None;
    store.insert_message("t1", &full_message("m1")).await.unwrap();
    store.insert_message("t1", &bare).await.unwrap();
    let stored = store.messages("t1").await.unwrap();
    assert_eq!(stored, vec![full_message("m1"), bare]);
    assert_eq!(stored[0].extra_str("tool_status"), Some("success"));
    assert_eq!(stored[0].extra["metadata"]["tags"][1], "b");
}

#[tokio::test]
async fn an_update_applies_content_and_extra_fields() {
    let store = SqliteStore::in_memory().unwrap();
    store.create_thread(&thread("t1")).await.unwrap();
    store.insert_message("t1", &full_message("m1")).await.unwrap();
    store.insert_message("t1", &message("m2", Role::User, "untouched")).await.unwrap();

    let mut update = MessageUpdate::new().with_content("done").with_silent(true);
    update.extra.insert("tool_status".into(), json!("error"));
    update.extra.insert("status".into(), json!("completed"));
    let updated = store.update_message("t1", "m1", &update).await.unwrap();

    let mut expected = full_message("m1");
    update.apply_to(&mut expected);
    assert_eq!(updated, expected);
    assert_eq!(updated.content.as_deref(), Some("done"));
    assert_eq!(updated.extra_str("tool_status"), Some("error"));
    assert_eq!(updated.extra["metadata"]["step"], 1, "untouched extra fields stay");
    assert_eq!(store.messages("t1").await.unwrap(), vec![expected, message("m2", Role::User, "untouched")]);
}

#[tokio::test]
async fn unknown_threads_and_messages_are_errors() {
    let store = SqliteStore::in_memory().unwrap();
    store.create_thread(&thread("t1")).await.unwrap();
    let err = store.update_message("t1", "nope", &MessageUpdate::default()).await.unwrap_err();
    assert!(err.message().contains("`nope`") && err.message().contains("`t1`"), "{err}");
    assert!(store.update_message("missing", "m1", &MessageUpdate::default()).await.is_err());
    assert!(store.insert_message("missing", &message("m1", Role::User, "hi")).await.is_err());
    assert!(store.messages("missing").await.is_err());
    assert!(store.set_status("missing", &ThreadStatus::Running).await.is_err());
}

#[tokio::test]
async fn a_duplicate_message_is_an_error() {
    let store = SqliteStore::in_memory().unwrap();
    store.create_thread(&thread("t1")).await.unwrap();
    store.insert_message("t1", &message("m1", Role::User, "first")).await.unwrap();
    let err = store.insert_message("t1", &message("m1", Role::User, "secret second")).await.unwrap_err();
    assert!(
        err.message().contains("insert_message")
            && err.message().contains("`m1`")
            && err.message().contains("already exists"),
        "{err}"
    );
    assert!(!err.message().contains("secret"), "errors never quote contents: {err}");
    assert_eq!(store.messages("t1").await.unwrap(), vec![message("m1", Role::User, "first")]);
}

#[tokio::test]
async fn status_is_set_and_read_back() {
    let store = SqliteStore::in_memory().unwrap();
    store.create_thread(&thread("t1")).await.unwrap();
    for status in [
        ThreadStatus::Running,
        ThreadStatus::Stopped(StopReason::MaxSteps),
        ThreadStatus::Failed(FailReason::MessageHookError),
    ] {
        store.set_status("t1", &status).await.unwrap();
        assert_eq!(store.load_thread("t1").await.unwrap().unwrap().status, status);
    }
    store.set_status("t1", &ThreadStatus::Idle).await.unwrap();
    assert_eq!(store.load_thread("t1").await.unwrap().unwrap().status, ThreadStatus::Idle);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn works_on_a_multi_thread_runtime_through_a_trait_object() {
    let store: std::sync::Arc<dyn MessageStore> = std::sync::Arc::new(SqliteStore::in_memory().unwrap());
    store.create_thread(&thread("t1")).await.unwrap();
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let store = std::sync::Arc::clone(&store);
            tokio::spawn(async move { store.insert_message("t1", &message(&format!("m{i}"), Role::User, "x")).await })
        })
        .collect();
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    assert_eq!(store.messages("t1").await.unwrap().len(), 8);
}

#[tokio::test]
async fn a_reopened_file_has_the_thread_and_its_history() {
    let dir = TempDir::new("reopen");
    let path = dir.db();
    {
        let store = SqliteStore::open(&path).unwrap();
        assert_eq!(store.path(), Some(path.as_path()));
        store.create_thread(&thread("t1")).await.unwrap();
        store.insert_message("t1", &message("m1", Role::User, "hi")).await.unwrap();
        store.insert_message("t1", &full_message("m2")).await.unwrap();
        store.set_status("t1", &ThreadStatus::Failed(FailReason::MessageHookError)).await.unwrap();
    }
    let store = SqliteStore::open(&path).unwrap();
    let mut expected_thread = thread("t1");
    expected_thread.status = ThreadStatus::Failed(FailReason::MessageHookError);
    assert_eq!(store.load_thread("t1").await.unwrap(), Some(expected_thread));
    assert_eq!(store.messages("t1").await.unwrap(), vec![message("m1", Role::User, "hi"), full_message("m2")]);
    store.insert_message("t1", &message("m3", Role::User, "again")).await.unwrap();
    assert_eq!(store.messages("t1").await.unwrap().last().unwrap().id, "m3");

    let mode: String = raw(&path).query_row("PRAGMA journal_mode", [], |row| row.get(0)).unwrap();
    assert_eq!(mode, "wal");
}

/// The child half of [`two_processes_share_one_file`]; does nothing unless the parent started it.
#[tokio::test]
async fn child_writer() {
    let (Some(path), Some(thread_id)) = (std::env::var_os(CHILD_DB_ENV), std::env::var(CHILD_THREAD_ENV).ok()) else {
        return;
    };
    let store = SqliteStore::open(PathBuf::from(path)).unwrap();
    store.create_thread(&thread(&thread_id)).await.unwrap();
    for i in 0..CHILD_MESSAGES {
        store
            .insert_message(&thread_id, &message(&format!("{thread_id}-m{i}"), Role::User, "from the child"))
            .await
            .unwrap();
    }
    store.set_status(&thread_id, &ThreadStatus::Stopped(StopReason::MaxSteps)).await.unwrap();
}

fn spawn_child(path: &Path, thread_id: &str) -> tokio::process::Child {
    tokio::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "sqlite_store::child_writer", "--nocapture", "--test-threads=1"])
        .env(CHILD_DB_ENV, path)
        .env(CHILD_THREAD_ENV, thread_id)
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("spawn the child process")
}

#[tokio::test]
async fn two_processes_share_one_file() {
    let dir = TempDir::new("two-processes");
    let path = dir.db();

    // One after the other: the child creates the file and writes; the parent writes more.
    let status = spawn_child(&path, "child").wait().await.unwrap();
    assert!(status.success(), "the child failed: {status}");
    let store = SqliteStore::open(&path).unwrap();
    let child_thread = store.load_thread("child").await.unwrap().unwrap();
    assert_eq!(child_thread.status, ThreadStatus::Stopped(StopReason::MaxSteps));
    store.insert_message("child", &message("parent-m", Role::Assistant, "from the parent")).await.unwrap();
    let history = store.messages("child").await.unwrap();
    assert_eq!(history.len(), CHILD_MESSAGES + 1);
    let expected_ids: Vec<String> =
        (0..CHILD_MESSAGES).map(|i| format!("child-m{i}")).chain(["parent-m".to_owned()]).collect();
    assert_eq!(history.iter().map(|m| m.id.clone()).collect::<Vec<_>>(), expected_ids);

    // Overlapping: the child writes its thread while the parent writes another; the busy
    // timeout makes each wait for the other's transactions instead of failing.
    let mut child = spawn_child(&path, "overlap");
    store.create_thread(&thread("parent")).await.unwrap();
    for i in 0..CHILD_MESSAGES {
        store.insert_message("parent", &message(&format!("parent-m{i}"), Role::User, "x")).await.unwrap();
    }
    let status = child.wait().await.unwrap();
    assert!(status.success(), "the overlapping child failed: {status}");
    assert_eq!(store.messages("overlap").await.unwrap().len(), CHILD_MESSAGES);
    assert_eq!(store.messages("parent").await.unwrap().len(), CHILD_MESSAGES);
    assert_eq!(count(&path, "SELECT COUNT(*) FROM messages"), (3 * CHILD_MESSAGES + 1) as i64);
}

#[tokio::test]
async fn a_failed_insert_leaves_no_partial_row() {
    let dir = TempDir::new("atomic");
    let path = dir.db();
    let store = SqliteStore::open(&path).unwrap();
    store.create_thread(&thread("t1")).await.unwrap();
    store.insert_message("t1", &message("m1", Role::User, "first")).await.unwrap();
    let before = count(&path, "SELECT COUNT(*) FROM messages");
    let max_seq_before = count(&path, "SELECT MAX(seq) FROM messages");

    assert!(store.insert_message("t1", &full_message("m1")).await.is_err());
    assert!(store.insert_message("no-thread", &full_message("m9")).await.is_err());

    assert_eq!(count(&path, "SELECT COUNT(*) FROM messages"), before);
    assert_eq!(count(&path, "SELECT MAX(seq) FROM messages"), max_seq_before);
    assert_eq!(store.messages("t1").await.unwrap(), vec![message("m1", Role::User, "first")]);
    // The store still works afterwards: no transaction was left open.
    store.insert_message("t1", &message("m2", Role::User, "second")).await.unwrap();
    assert_eq!(count(&path, "SELECT COUNT(*) FROM messages"), before + 1);
}

#[tokio::test]
async fn corrupt_extra_json_is_an_error_naming_the_message() {
    let dir = TempDir::new("corrupt");
    let path = dir.db();
    let store = SqliteStore::open(&path).unwrap();
    store.create_thread(&thread("t1")).await.unwrap();
    store.insert_message("t1", &message("m1", Role::User, "fine")).await.unwrap();
    store.insert_message("t1", &message("m2", Role::User, "about to break")).await.unwrap();
    raw(&path)
        .execute("UPDATE messages SET extra = '{\"secret\": unquoted' WHERE thread_id = 't1' AND id = 'm2'", [])
        .unwrap();

    let check = |err: StoreError| {
        assert_eq!(err.kind(), StoreErrorKind::Corrupt, "{err}");
        assert!(
            err.message().contains("`t1`") && err.message().contains("`m2` (row 2)") && err.message().contains("extra"),
            "{err}"
        );
        assert!(
            !err.message().contains("secret") && !err.message().contains("unquoted"),
            "errors never quote contents: {err}"
        );
    };
    check(store.messages("t1").await.unwrap_err());
    check(store.update_message("t1", "m2", &MessageUpdate::default()).await.unwrap_err());

    // Valid JSON of the wrong shape is an error too.
    raw(&path).execute("UPDATE messages SET extra = '[1, 2]' WHERE id = 'm2'", []).unwrap();
    check(store.messages("t1").await.unwrap_err());

    // An unknown role and bad thread arguments are errors, not panics.
    raw(&path).execute("UPDATE messages SET extra = '{}', role = 'robot' WHERE id = 'm2'", []).unwrap();
    let err = store.messages("t1").await.unwrap_err();
    assert!(err.message().contains("`m2`") && err.message().contains("role"), "{err}");
    assert_eq!(err.kind(), StoreErrorKind::Corrupt, "{err}");
    raw(&path).execute("UPDATE threads SET arguments = 'not json' WHERE id = 't1'", []).unwrap();
    let err = store.load_thread("t1").await.unwrap_err();
    assert!(err.message().contains("`t1`") && err.message().contains("arguments"), "{err}");
    assert_eq!(err.kind(), StoreErrorKind::Corrupt, "{err}");
}

#[tokio::test]
async fn a_file_from_a_newer_schema_is_refused() {
    let dir = TempDir::new("newer");
    let path = dir.db();
    drop(SqliteStore::open(&path).unwrap());
    raw(&path).pragma_update(None, "user_version", 99).unwrap();
    let err = SqliteStore::open(&path).unwrap_err();
    assert!(err.message().contains("schema version 99") && err.message().contains("newer"), "{err}");
    assert_eq!(err.kind(), StoreErrorKind::Corrupt, "{err}");
}

#[tokio::test]
async fn a_file_that_is_not_a_database_is_an_error() {
    let dir = TempDir::new("garbage");
    let path = dir.db();
    std::fs::write(&path, vec![b'x'; 4096]).unwrap();
    let err = SqliteStore::open(&path).unwrap_err();
    assert!(err.message().contains("open"), "{err}");
    assert_eq!(err.kind(), StoreErrorKind::Corrupt, "a file that is not a database: {err}");
}

#[tokio::test]
async fn m11_values_are_kept_with_the_thread_and_read_back_after_reopening() {
    let dir = TempDir::new("values");
    let path = dir.db();
    {
        let store = SqliteStore::open(&path).unwrap();
        store.create_thread(&thread("t1")).await.unwrap();
        store.create_thread(&thread("t2")).await.unwrap();
        store.set_value("t1", "plan", &json!({"tier": "pro"})).await.unwrap();
        store.set_value("t1", "count", &json!(1)).await.unwrap();
        store.set_value("t1", "count", &json!(2)).await.unwrap();
    }
    let store = SqliteStore::open(&path).unwrap();
    let t1 = store.load_thread("t1").await.unwrap().unwrap();
    assert_eq!(
        t1.values,
        serde_json::Map::from_iter([
            ("count".to_owned(), json!(2)),
            ("plan".to_owned(), json!({"tier": "pro"})),
            ("seeded".to_owned(), json!({"at": "creation"})),
        ])
    );
    assert_eq!(store.load_thread("t2").await.unwrap().unwrap().values, thread("t2").values, "kept apart");
    let err = store.set_value("nope", "k", &json!(1)).await.unwrap_err();
    assert!(
        err.message().contains("set_value")
            && err.message().contains("`nope`")
            && err.message().contains("no such thread"),
        "{err}"
    );
    assert_eq!(count(&path, "SELECT COUNT(*) FROM thread_values WHERE thread_id = 'nope'"), 0);
}

#[tokio::test]
async fn m11_the_in_memory_store_keeps_values_with_the_thread() {
    let store = hooks_runtime::store::InMemoryStore::new();
    store.create_thread(&thread("t1")).await.unwrap();
    store.set_value("t1", "plan", &json!("pro")).await.unwrap();
    let loaded = store.load_thread("t1").await.unwrap().unwrap();
    assert_eq!(loaded.values.get("plan"), Some(&json!("pro")));
    assert_eq!(loaded.values.get("seeded"), Some(&json!({"at": "creation"})));
    assert!(store.set_value("nope", "k", &json!(1)).await.unwrap_err().message().contains("`nope`"));
}

#[tokio::test]
async fn m11_a_version_1_file_is_migrated_and_keeps_its_threads() {
    let dir = TempDir::new("migrate");
    let path = dir.db();
    {
        // The version 1 schema, as the previous release wrote it.
        let conn = raw(&path);
        conn.execute_batch(
            "CREATE TABLE threads (id TEXT PRIMARY KEY NOT NULL, agent TEXT NOT NULL, user_id TEXT,
                 created_at INTEGER NOT NULL, arguments TEXT NOT NULL, status TEXT NOT NULL, status_reason TEXT) STRICT;
             CREATE TABLE messages (thread_id TEXT NOT NULL REFERENCES threads(id), seq INTEGER NOT NULL,
                 id TEXT NOT NULL, role TEXT NOT NULL, content TEXT, name TEXT, tool_calls TEXT, tool_call_id TEXT,
                 created_at INTEGER NOT NULL, parent_id TEXT, depth INTEGER, silent INTEGER,
                 extra TEXT NOT NULL DEFAULT '{}', PRIMARY KEY (thread_id, id), UNIQUE (thread_id, seq)) STRICT;
             INSERT INTO threads VALUES ('old', 'support', NULL, 1, '{}', 'idle', NULL);
             INSERT INTO messages (thread_id, seq, id, role, content, created_at) VALUES ('old', 1, 'm1', 'user', 'hi', 2);
             PRAGMA user_version = 1;",
        )
        .unwrap();
    }
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(count(&path, "PRAGMA user_version"), latest_version(&dir));
    let old = store.load_thread("old").await.unwrap().unwrap();
    assert!(old.values.is_empty());
    assert_eq!(store.messages("old").await.unwrap().len(), 1);
    store.set_value("old", "k", &json!(true)).await.unwrap();
    assert_eq!(store.load_thread("old").await.unwrap().unwrap().values.get("k"), Some(&json!(true)));
    // Every later step too: the file takes user values.
    assert_eq!(store.set_user_value("alice", "k", Some(&json!(true))).await.unwrap(), None);
    assert_eq!(store.user_values("alice").await.unwrap()[0].value, json!(true));
    // The inbox works on the migrated thread.
    let entry = hooks_runtime::store::InboxEntry::new(hooks_runtime::types::MessageRecord::new(Role::User, "late"));
    store.inbox().unwrap().enqueue_input("old", &entry).await.unwrap();
    assert_eq!(store.inbox().unwrap().pending_inputs("old").await.unwrap(), [entry]);
}

/// The schema version this build writes: what a new file gets.
fn latest_version(dir: &TempDir) -> i64 {
    let fresh = dir.0.join("fresh-for-version.db");
    drop(SqliteStore::open(&fresh).unwrap());
    count(&fresh, "PRAGMA user_version")
}

#[tokio::test]
async fn u1_user_values_survive_a_restart_of_the_runtime() {
    let dir = TempDir::new("user-values-restart");
    let path = dir.db();
    {
        let runtime = hooks_runtime::Runtime::builder().store(SqliteStore::open(&path).unwrap()).build().unwrap();
        runtime.set_user_value("alice", "theme", Some(json!("dark"))).await.unwrap();
        runtime.set_user_value("alice", "gone", Some(json!(1))).await.unwrap();
        runtime.set_user_value("alice", "gone", None).await.unwrap();
    }
    let runtime = hooks_runtime::Runtime::builder().store(SqliteStore::open(&path).unwrap()).build().unwrap();
    assert_eq!(runtime.user_value("alice", "theme").await.unwrap(), Some(json!("dark")));
    assert_eq!(runtime.user_value("alice", "gone").await.unwrap(), None);
    assert_eq!(runtime.user_values("alice").await.unwrap().len(), 1);
    assert_eq!(
        runtime.set_user_value("alice", "theme", Some(json!("light"))).await.unwrap(),
        Some(json!("dark")),
        "the old value comes from the file"
    );
}

#[tokio::test]
async fn a_foreign_database_without_a_schema_version_is_refused_not_stamped() {
    let dir = TempDir::new("foreign");
    let path = dir.db();
    raw(&path)
        .execute_batch(
            "CREATE TABLE threads (id INTEGER PRIMARY KEY, title TEXT);
             CREATE TABLE messages (id INTEGER PRIMARY KEY, body TEXT);
             INSERT INTO threads (title) VALUES ('forum post');",
        )
        .unwrap();
    let err = SqliteStore::open(&path).unwrap_err();
    assert!(
        err.message().contains("`messages`, `threads`")
            && err.message().contains("user_version 0")
            && err.message().contains("not created by"),
        "{err}"
    );
    assert_eq!(count(&path, "PRAGMA user_version"), 0, "not stamped");
    assert_eq!(count(&path, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'thread_values'"), 0, "not changed");
    // An empty file is ours to set up.
    let empty = dir.0.join("empty.db");
    drop(raw(&empty));
    SqliteStore::open(&empty).unwrap();
    assert!(count(&empty, "PRAGMA user_version") >= 3, "every step applied");
}

#[tokio::test]
async fn a_thread_with_a_corrupt_row_takes_no_more_writes_and_others_are_untouched() {
    let dir = TempDir::new("corrupt-writes");
    let path = dir.db();
    let store = SqliteStore::open(&path).unwrap();
    store.create_thread(&thread("t1")).await.unwrap();
    store.create_thread(&thread("t2")).await.unwrap();
    store.insert_message("t1", &message("m1", Role::User, "fine")).await.unwrap();
    store.insert_message("t1", &message("m2", Role::User, "about to break")).await.unwrap();
    store.insert_message("t2", &message("m1", Role::User, "other thread")).await.unwrap();
    raw(&path)
        .execute("UPDATE messages SET extra = '{\"secret\": 1' WHERE thread_id = 't1' AND id = 'm2'", [])
        .unwrap();

    let read = store.messages("t1").await.unwrap_err();
    assert!(read.message().contains("thread `t1`") && read.message().contains("`m2` (row 2)"), "{read}");
    let write = store.insert_message("t1", &message("m3", Role::User, "more")).await.unwrap_err();
    assert!(
        write.message().contains("`t1`")
            && write.message().contains("`m2` (row 2)")
            && write.message().contains("unreadable"),
        "{write}"
    );
    assert!(!write.message().contains("secret"), "errors never quote contents: {write}");
    assert_eq!(count(&path, "SELECT COUNT(*) FROM messages WHERE thread_id = 't1'"), 2, "nothing was written");
    // Each bad shape that reading rejects, writing refuses too.
    for repair_and_break in [
        "UPDATE messages SET extra = '[1]' WHERE id = 'm2' AND thread_id = 't1'",
        "UPDATE messages SET extra = '{}', role = 'robot' WHERE id = 'm2' AND thread_id = 't1'",
        "UPDATE messages SET role = 'user', depth = -1 WHERE id = 'm2' AND thread_id = 't1'",
    ] {
        raw(&path).execute(repair_and_break, []).unwrap();
        assert!(store.messages("t1").await.is_err(), "{repair_and_break}");
        assert!(store.insert_message("t1", &message("m3", Role::User, "more")).await.is_err(), "{repair_and_break}");
    }
    // Other threads go on, and a repaired thread takes writes again.
    store.insert_message("t2", &message("m2", Role::User, "still fine")).await.unwrap();
    raw(&path).execute("UPDATE messages SET depth = NULL WHERE id = 'm2' AND thread_id = 't1'", []).unwrap();
    store.insert_message("t1", &message("m3", Role::User, "more")).await.unwrap();
    assert_eq!(store.messages("t1").await.unwrap().len(), 3);
}
