//! User scope across processes: three runtimes on one PostgreSQL schema (as three processes
//! would be, each with its own pool). `user_value_changed` runs in every runtime where a client
//! of the user is attached, once per change, wherever the change was made; a runtime without one
//! of the user's clients runs nothing, and still reads the new value (from the store).
//!
//! Then the same between two OS processes: the parent runs this test binary again as a child,
//! selecting [`user_scope_child`] with `--exact`; without [`CHILD_ENV`] the child test does
//! nothing.
#![cfg(feature = "postgres")]

mod postgres_support;

use std::sync::{LazyLock, Mutex};
use std::time::Duration;

use hooks_runtime::Runtime;
use hooks_runtime::model::ScriptedModel;
use hooks_runtime::prelude::*;
use hooks_runtime::store::{PostgresOptions, PostgresStore};
use hooks_runtime::types::UserEvent;
use postgres_support::{PgSchema, database_url};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::Notify;

/// One run of the hook: the user, the clients attached where it ran, the key and the new value.
type Seen = (String, Vec<String>, String, Option<Value>);

/// Every run of the hook.
static SEEN: Mutex<Vec<Seen>> = Mutex::new(Vec::new());
/// Wakes whoever waits for a run of the hook.
static RAN: LazyLock<Notify> = LazyLock::new(Notify::new);

#[hook(user_value_changed, id = "record_value_change")]
fn record_value_change(user: &UserState) {
    if let UserEvent::ValueChanged { key, new, .. } = &user.event {
        SEEN.lock().unwrap().push((user.user_id.clone(), user.clients.clone(), key.clone(), new.clone()));
        RAN.notify_waiters();
    }
}

define_prompt! { name: user_prompt, model: "scripted", prompt: "p" }
define_agent! { name: user_agent, side_a: { prompt: user_prompt, stop_on_response: true } }

async fn runtime(schema: &PgSchema) -> Runtime {
    runtime_on(schema.store().await)
}

fn runtime_on(store: PostgresStore) -> Runtime {
    Runtime::builder().agent::<user_agent>().model("scripted", ScriptedModel::default()).store(store).build().unwrap()
}

/// `(key, new value)` of the hook runs for `user` in the runtime whose clients are `clients`.
fn seen_by(user: &str, clients: &[&str]) -> Vec<(String, Option<Value>)> {
    SEEN.lock()
        .unwrap()
        .iter()
        .filter(|(seen_user, seen_clients, ..)| seen_user == user && seen_clients == clients)
        .map(|(_, _, key, new)| (key.clone(), new.clone()))
        .collect()
}

/// Waits, up to 10 s, until `check` holds: it is checked again at each run of the hook
/// (another process's change arrives within about 100 ms).
async fn eventually(what: &str, check: impl Fn() -> bool) {
    let until = async {
        loop {
            // Registered before the check, so a run between the check and the wait still wakes it.
            let mut ran = std::pin::pin!(RAN.notified());
            ran.as_mut().enable();
            if check() {
                return;
            }
            ran.await;
        }
    };
    if tokio::time::timeout(Duration::from_secs(10), until).await.is_err() {
        panic!("{what} did not happen within 10 s");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn u1_user_value_changed_runs_once_per_change_wherever_the_users_clients_are_attached() {
    let schema = PgSchema::new("user_scope");
    let (a, b, c) = (runtime(&schema).await, runtime(&schema).await, runtime(&schema).await);
    let user = "user-across-processes";
    a.attach_client(user, "client-a").await;
    b.attach_client(user, "client-b").await;
    // C listens too (a client of someone else), but has none of this user's.
    c.attach_client("someone-else", "client-c").await;

    a.set_user_value(user, "theme", Some(json!("dark"))).await.unwrap();
    a.set_user_value(user, "theme", Some(json!("light"))).await.unwrap();
    b.set_user_value(user, "ping", Some(json!(true))).await.unwrap();
    // Changes arrive in order, so once A and C have B's change they have had their own
    // and A's.
    eventually("A running its hook for B's change", || seen_by(user, &["client-a"]).len() >= 3).await;
    eventually("B running its hook for A's changes", || seen_by(user, &["client-b"]).len() >= 3).await;
    // The values are in the store: C reads B's change at once, with no client of the user.
    assert_eq!(c.user_value(user, "ping").await.unwrap(), Some(json!(true)));
    // Each runtime follows the store's changes in order: once it has the last change below, it
    // has had every earlier one, so a second run of the hook for any of them would be in by then.
    let end = |value: &str| ("end".to_owned(), Some(json!(value)));
    a.set_user_value(user, "end", Some(json!("a"))).await.unwrap();
    b.set_user_value(user, "end", Some(json!("b"))).await.unwrap();
    a.set_user_value("someone-else", "end", Some(json!("a"))).await.unwrap();
    eventually("A running its hook for B's last change", || seen_by(user, &["client-a"]).contains(&end("b"))).await;
    eventually("B running its hook for A's last change", || seen_by(user, &["client-b"]).contains(&end("a"))).await;
    eventually("C running its hook for A's change of its client's user", || {
        seen_by("someone-else", &["client-c"]) == [end("a")]
    })
    .await;
    let before_the_end = |clients: &[&str]| {
        let (mut ends, seen): (Vec<_>, Vec<_>) = seen_by(user, clients).into_iter().partition(|(key, _)| key == "end");
        ends.sort_by(|x, y| x.1.as_ref().and_then(Value::as_str).cmp(&y.1.as_ref().and_then(Value::as_str)));
        assert_eq!(ends, [end("a"), end("b")], "{clients:?}: each last change once");
        seen
    };

    let theme = |value: &str| ("theme".to_owned(), Some(json!(value)));
    let ping = ("ping".to_owned(), Some(json!(true)));
    assert_eq!(
        before_the_end(&["client-a"]),
        [theme("dark"), theme("light"), ping.clone()],
        "A: its own changes once each (not again when the store delivers them back), then B's"
    );
    let mut in_b = before_the_end(&["client-b"]);
    in_b.sort_by_key(|(key, _)| key.clone());
    assert_eq!(in_b.len(), 3, "B: each change once: {in_b:?}");
    assert_eq!(in_b[0], ping, "{in_b:?}");
    assert_eq!(
        before_the_end(&["client-b"]).iter().filter(|(key, _)| key == "theme").cloned().collect::<Vec<_>>(),
        [theme("dark"), theme("light")]
    );
    assert_eq!(seen_by(user, &[]), [], "C has no client of the user: no hook runs there");
    for runtime in [&a, &b, &c] {
        assert_eq!(
            runtime.user_value(user, "theme").await.unwrap(),
            Some(json!("light")),
            "every runtime has the value"
        );
        assert_eq!(runtime.user_value(user, "ping").await.unwrap(), Some(json!(true)));
    }
    schema.drop().await;
}

// ---------------------------------------------------------------------------------------------
// Two OS processes.

/// Set in the child: the schema.
const CHILD_ENV: &str = "HOOKS_PG_USER_SCOPE_CHILD";
/// The user of the two-process test.
const PROCESS_USER: &str = "user-of-two-processes";

/// The child half: attaches a client of [`PROCESS_USER`], makes a change of its own, says
/// `READY`, and once the parent's last change arrived prints every hook run it saw as a `SEEN`
/// line of JSON, then makes a last change for the parent to wait for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_scope_child() {
    let Ok(schema) = std::env::var(CHILD_ENV) else {
        return;
    };
    let store = PostgresStore::connect_with(&database_url(), PostgresOptions::new().schema(schema)).await.unwrap();
    let runtime = runtime_on(store);
    runtime.attach_client(PROCESS_USER, "client-child").await;
    // Published before READY, so the parent's changes come after it in every listener.
    runtime.set_user_value(PROCESS_USER, "from_child", Some(json!(1))).await.unwrap();
    println!("READY");
    eventually("the parent's last change", || {
        seen_by(PROCESS_USER, &["client-child"]).last() == Some(&("theme".to_owned(), Some(json!("light"))))
    })
    .await;
    for (key, new) in seen_by(PROCESS_USER, &["client-child"]) {
        println!("SEEN {}", json!([key, new]));
    }
    runtime.set_user_value(PROCESS_USER, "child_done", Some(json!(true))).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn u1_user_value_changed_reaches_another_os_process_once_per_change() {
    let schema = PgSchema::new("user_processes");
    let parent = runtime(&schema).await;
    parent.attach_client(PROCESS_USER, "client-parent").await;
    let mut child = tokio::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "user_scope_child", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, &schema.name)
        .env("HOOKS_DATABASE_URL", database_url())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the child process");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen_in_child = Vec::new();
    let mut ready = false;
    let reading = async {
        while let Some(line) = lines.next_line().await.unwrap() {
            // libtest may have written the test's name on the same line.
            if line.ends_with("READY") {
                ready = true;
                // The parent's own changes run its hook at once, the child's when the store
                // delivers them: wait for the child's, so that the order below is the store's.
                eventually("the child's first change", || {
                    seen_by(PROCESS_USER, &["client-parent"]).iter().any(|(key, _)| key == "from_child")
                })
                .await;
                parent.set_user_value(PROCESS_USER, "theme", Some(json!("dark"))).await.unwrap();
                parent.set_user_value(PROCESS_USER, "theme", Some(json!("light"))).await.unwrap();
            } else if let Some(seen) = line.strip_prefix("SEEN ") {
                let seen: (String, Option<Value>) = serde_json::from_str(seen).unwrap();
                seen_in_child.push(seen);
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(60), reading).await.expect("the child finishes");
    let status = child.wait().await.unwrap();
    assert!(status.success() && ready, "the child process failed: {status}");
    // The child's last change comes after every earlier one, the parent's own included.
    eventually("the child's last change", || {
        seen_by(PROCESS_USER, &["client-parent"]).iter().any(|(key, _)| key == "child_done")
    })
    .await;

    let change = |key: &str, value: Value| (key.to_owned(), Some(value));
    assert_eq!(
        seen_in_child,
        [change("from_child", json!(1)), change("theme", json!("dark")), change("theme", json!("light"))],
        "the child: its own change once, then each of the parent's once"
    );
    assert_eq!(
        seen_by(PROCESS_USER, &["client-parent"]),
        [
            change("from_child", json!(1)),
            change("theme", json!("dark")),
            change("theme", json!("light")),
            change("child_done", json!(true)),
        ],
        "the parent: each change once, its own not again when the store delivers them back"
    );
    schema.drop().await;
}
