//! User scope across processes on one SQLite file: three runtimes, each on its own
//! `SqliteStore::open` of the file (its own connection and owner, as three processes would
//! have). `user_value_changed` runs in every runtime where a client of the user is attached,
//! once per change, wherever the change was made; a runtime without one of the user's clients
//! runs nothing, and still reads the new value from the file.
#![cfg(feature = "sqlite")]

use std::sync::{LazyLock, Mutex};
use std::time::Duration;

use hooks_runtime::Runtime;
use hooks_runtime::model::ScriptedModel;
use hooks_runtime::prelude::*;
use hooks_runtime::store::SqliteStore;
use hooks_runtime::types::UserEvent;
use serde_json::{Value, json};
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

fn runtime_on(path: &std::path::Path) -> Runtime {
    let store = SqliteStore::open(path).unwrap();
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

/// Waits, up to 5 s, until `check` holds: it is checked again at each run of the hook
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
    if tokio::time::timeout(Duration::from_secs(5), until).await.is_err() {
        panic!("{what} did not happen within 5 s");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn u1_user_value_changed_runs_once_per_change_in_every_runtime_of_one_sqlite_file() {
    let dir = std::env::temp_dir().join(format!("hooks-sqlite-user-scope-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("threads.db");
    let (a, b, c) = (runtime_on(&path), runtime_on(&path), runtime_on(&path));
    let user = "user-on-one-file";
    a.attach_client(user, "client-a").await;
    b.attach_client(user, "client-b").await;
    // C listens too (a client of someone else), but has none of this user's.
    c.attach_client("someone-else", "client-c").await;

    a.set_user_value(user, "theme", Some(json!("dark"))).await.unwrap();
    a.set_user_value(user, "theme", Some(json!("light"))).await.unwrap();
    b.set_user_value(user, "ping", Some(json!(true))).await.unwrap();
    eventually("A running its hook for B's change", || seen_by(user, &["client-a"]).len() >= 3).await;
    eventually("B running its hook for A's changes", || seen_by(user, &["client-b"]).len() >= 3).await;
    assert_eq!(c.user_value(user, "ping").await.unwrap(), Some(json!(true)), "the value is in the file");
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
        "A: its own changes once each (not again when the file delivers them back), then B's"
    );
    // B's own change and A's race (A's reach B while B makes its own), so only A's keep
    // their order.
    let in_b = before_the_end(&["client-b"]);
    assert_eq!(in_b.len(), 3, "B: each change once: {in_b:?}");
    assert!(in_b.contains(&ping), "{in_b:?}");
    let themes: Vec<_> = in_b.iter().filter(|(key, _)| key == "theme").cloned().collect();
    assert_eq!(themes, [theme("dark"), theme("light")]);
    assert_eq!(seen_by(user, &[]), [], "C has no client of the user: no hook runs there");
    drop((a, b, c));
    std::fs::remove_dir_all(dir).unwrap();
}
