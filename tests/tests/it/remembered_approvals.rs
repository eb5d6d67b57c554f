//! Remembered approvals (A9, A10) on every store: an approval remembered with a scope answers
//! the asks of the calls it covers (its thread, its user's threads, every thread) and no other;
//! a deny of any decider still denies; revoked, it answers nothing and the call waits again; a
//! pattern covers what an `allow` rule would (`Bash(npm test:*)`: `npm test --watch`, not
//! `npm install`, not `npm test && rm -rf /`). On SQLite they survive a restart; on PostgreSQL
//! one made by another process answers here, and its revocation there counts here. Each use is
//! in the call's decision record, naming the approval.
//!
//! Every step builds a fresh runtime on the same store, with a model scripted for that step:
//! what one runtime remembered is read back from the store by the next.

#[cfg(feature = "postgres")]
use crate::support_store;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use hooks_runtime::approvals::{
    ApprovalChoice, ApprovalError, ApprovalMatcher, Remember, RememberScope, RememberedApproval,
};
use hooks_runtime::declarative::{PermissionRule, SettingsPermissions};
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{InMemoryStore, MessageStore, SqliteStore, ThreadStatus};
use hooks_runtime::tool::FnTool;
use hooks_runtime::{AdmissionRecord, Runtime, Thread, ThreadOptions};
use serde_json::json;

define_prompt! { name: a9_prompt, model: "scripted", prompt: "Run commands.", tools: ["Bash"] }
define_agent! { name: a9_agent, side_a: { prompt: a9_prompt, stop_on_response: true } }

/// A guard that denies every command that deploys: a hook's deny.
#[hook(before_tool_call, id = "a9_no_deploy", on_failure = deny)]
fn a9_no_deploy(_state: &ThreadState, _call: &HookToolCall, arguments: &mut serde_json::Value) -> ToolDecision {
    match arguments["command"].as_str() {
        Some(command) if command.contains("deploy") => ToolDecision::deny("deploys need a release"),
        _ => ToolDecision::allow(),
    }
}

/// One store under test, and how many times its `Bash` tool ran.
struct Bench {
    store: Arc<dyn MessageStore>,
    runs: Arc<AtomicUsize>,
}

/// Where a call is made: a new thread of a user (or of none), or an existing thread.
#[derive(Clone, Copy)]
enum On<'a> {
    NewThread(Option<&'a str>),
    Thread(&'a str),
}

impl Bench {
    fn new(store: Arc<dyn MessageStore>) -> Self {
        Bench { store, runs: Arc::new(AtomicUsize::new(0)) }
    }

    /// A runtime on the store whose model calls `Bash` with `command` once as `call_id`, then
    /// answers `done`. Every `Bash` call asks (a rule), `npm publish` is denied by a rule,
    /// a command that deploys by a guard.
    fn runtime(&self, call_id: &str, command: &str) -> Runtime {
        let runs = Arc::clone(&self.runs);
        let bash = FnTool::new("Bash", "Runs a command.", move |_arguments| {
            let runs = Arc::clone(&runs);
            async move {
                runs.fetch_add(1, Ordering::SeqCst);
                HookToolResult::success("ran")
            }
        });
        let mut rules = SettingsPermissions::default();
        rules.ask.push(PermissionRule::parse("Bash").unwrap());
        rules.deny.push(PermissionRule::parse("Bash(npm publish:*)").unwrap());
        let arguments = json!({ "command": command }).to_string();
        let model = ScriptedModel::new([
            ScriptedResponse::tool_call(call_id, "Bash", &arguments),
            ScriptedResponse::text("done"),
        ]);
        Runtime::builder()
            .agent::<a9_agent>()
            .model("scripted", model)
            .tool(bash)
            .guard::<a9_no_deploy>()
            .permission_rules(rules)
            .store(Arc::clone(&self.store))
            .build()
            .unwrap()
    }

    /// Makes the call `call_id` running `command` on `on`: the runtime, the thread and the
    /// status the run ended with (`awaiting_approval` when it waits for a person).
    async fn call(&self, on: On<'_>, call_id: &str, command: &str) -> (Runtime, Thread, ThreadStatus) {
        let runtime = self.runtime(call_id, command);
        let thread = match on {
            On::NewThread(user) => {
                let options = user.map_or_else(ThreadOptions::default, |user| ThreadOptions::default().user(user));
                runtime.create_thread("a9_agent", options).await.unwrap()
            }
            On::Thread(id) => runtime.open_thread(id).await.unwrap(),
        };
        let outcome = thread.send(command).await.unwrap();
        (runtime, thread, outcome.status)
    }

    /// Makes the call, which must wait, and approves it remembering `remember`: the remembered
    /// approval and the thread.
    async fn remember(
        &self,
        on: On<'_>,
        call_id: &str,
        command: &str,
        remember: Remember,
    ) -> (RememberedApproval, Thread) {
        let (runtime, thread, status) = self.call(on, call_id, command).await;
        assert_eq!(status, ThreadStatus::AwaitingApproval, "`{command}` waits before it is remembered");
        let listed = thread.pending_approvals().await.unwrap().remove(0);
        let before = runtime.remembered_approvals().await.unwrap();
        let outcome = thread
            .decide_listed_remembering(&listed, ApprovalChoice::Approve { arguments: None }, remember)
            .await
            .unwrap();
        assert_eq!(outcome.reply.as_deref(), Some("done"), "{outcome}");
        let after = runtime.remembered_approvals().await.unwrap();
        let made = after.into_iter().find(|kept| !before.contains(kept)).expect("one approval remembered");
        (made, thread)
    }

    /// Whether the call of `command` on `on` was answered by a remembered approval (it ran
    /// without waiting), waits for a person, or was denied: checked against the tool's runs.
    async fn answer(&self, on: On<'_>, call_id: &str, command: &str) -> Answer {
        let runs = self.runs.load(Ordering::SeqCst);
        let (_runtime, thread, status) = self.call(on, call_id, command).await;
        let ran = self.runs.load(Ordering::SeqCst) - runs;
        match status {
            ThreadStatus::AwaitingApproval => {
                assert_eq!(ran, 0);
                // Denied, so the next step starts from an idle thread.
                thread.deny(call_id, "not now").await.unwrap();
                Answer::Waits
            }
            ThreadStatus::Idle if ran == 1 => Answer::Ran(record_of(&thread, call_id).await),
            ThreadStatus::Idle if ran == 0 => Answer::Denied(record_of(&thread, call_id).await),
            other => panic!("`{command}`: status {other:?}, ran {ran} times"),
        }
    }
}

#[derive(Debug)]
enum Answer {
    Ran(AdmissionRecord),
    Waits,
    Denied(AdmissionRecord),
}

impl Answer {
    /// The remembered approval that answered the call, from its decision record (A10).
    fn remembered_by(&self) -> Option<String> {
        let Answer::Ran(record) = self else { return None };
        let entry = record.entries.iter().find(|entry| entry.decider == "remembered_approvals")?;
        let named = record.remembered.as_ref().expect("the record names the approval");
        assert_eq!(entry.by.as_ref(), Some(&named.id), "the entry names it too: {record:?}");
        Some(named.id.clone())
    }
}

/// The decision record on call `call_id`'s stored result.
async fn record_of(thread: &Thread, call_id: &str) -> AdmissionRecord {
    let messages = thread.messages().await.unwrap();
    let result = messages
        .iter()
        .find(|message| message.tool_call_id.as_deref() == Some(call_id))
        .unwrap_or_else(|| panic!("no result of `{call_id}`"));
    AdmissionRecord::of_message(result).expect("the result carries its decision record")
}

/// A9 on `bench`'s store: each scope answers the right calls only, a pattern what an `allow`
/// rule would, a deny (a rule's, a guard's) still denies, and a revoked approval answers
/// nothing. Returns the approvals still remembered at the end.
async fn a9_scopes_and_patterns(bench: &Bench) -> Vec<RememberedApproval> {
    // Thread scope, by pattern.
    let npm_test = Remember::new(RememberScope::Thread).with_pattern("Bash(npm test:*)");
    let (on_thread, alice_1) = bench.remember(On::NewThread(Some("alice")), "c1", "npm test", npm_test).await;
    assert_eq!(on_thread.scope, RememberScope::Thread);
    assert_eq!(on_thread.thread_id.as_deref(), Some(alice_1.id()));
    assert_eq!(on_thread.user_id.as_deref(), Some("alice"));
    assert_eq!(on_thread.tool, "Bash");
    let there = On::Thread(alice_1.id());
    let watch = bench.answer(there, "c2", "npm test --watch").await;
    assert_eq!(watch.remembered_by(), Some(on_thread.id.clone()), "{watch:?}");
    assert!(matches!(bench.answer(there, "c3", "npm install").await, Answer::Waits));
    assert!(
        matches!(bench.answer(there, "c4", "npm test && rm -rf /").await, Answer::Waits),
        "a pattern covers a command as an allow rule does: every simple command"
    );
    assert!(matches!(bench.answer(On::NewThread(Some("alice")), "c5", "npm test --watch").await, Answer::Waits));

    // User scope, by exact arguments.
    let exact = Remember::new(RememberScope::User);
    let (for_alice, _) = bench.remember(On::NewThread(Some("alice")), "c6", "cargo test", exact).await;
    assert_eq!(
        for_alice.matcher,
        // `printf '{"command":"cargo test"}' | sha256sum`
        ApprovalMatcher::Arguments {
            sha256: "46b54e632fb509e603362a785238ddd4c8cecbc6f4c9dfab3715c46f37d34d24".into()
        },
        "the canonical arguments' SHA-256"
    );
    let other_thread = bench.answer(On::NewThread(Some("alice")), "c7", "cargo test").await;
    assert_eq!(other_thread.remembered_by(), Some(for_alice.id.clone()), "{other_thread:?}");
    assert!(matches!(bench.answer(On::NewThread(Some("alice")), "c8", "cargo test -q").await, Answer::Waits));
    assert!(matches!(bench.answer(On::NewThread(Some("bob")), "c9", "cargo test").await, Answer::Waits));
    assert!(matches!(bench.answer(On::NewThread(None), "c10", "cargo test").await, Answer::Waits));

    // Always, by a wide pattern: every thread, and still no deny lifted.
    let npm = Remember::new(RememberScope::Always).with_pattern("Bash(npm:*)");
    let (always, _) = bench.remember(On::NewThread(Some("bob")), "c11", "npm ci", npm).await;
    assert_eq!((always.user_id.as_deref(), always.thread_id.as_deref()), (Some("bob"), None));
    for user in [Some("carol"), None] {
        let answer = bench.answer(On::NewThread(user), "c12", "npm run build").await;
        assert_eq!(answer.remembered_by(), Some(always.id.clone()), "{answer:?}");
    }
    let Answer::Denied(by_rule) = bench.answer(On::NewThread(Some("bob")), "c13", "npm publish").await else {
        panic!("a deny rule denies whatever is remembered");
    };
    assert!(by_rule.entries.iter().all(|entry| entry.decider != "remembered_approvals"), "{by_rule:?}");
    assert_eq!(by_rule.entries.last().unwrap().by.as_deref(), Some("code:permissions.deny[0]"));
    let Answer::Denied(by_guard) = bench.answer(On::NewThread(Some("bob")), "c14", "npm run deploy").await else {
        panic!("a guard's deny denies whatever is remembered");
    };
    assert_eq!(by_guard.entries.last().unwrap().by.as_deref(), Some("a9_no_deploy"));

    // Revoked, it answers nothing: the call waits again.
    let runtime = bench.runtime("unused", "unused");
    assert!(runtime.revoke_remembered_approval(&for_alice.id).await.unwrap());
    assert!(!runtime.revoke_remembered_approval(&for_alice.id).await.unwrap(), "already revoked");
    assert!(matches!(bench.answer(On::NewThread(Some("alice")), "c15", "cargo test").await, Answer::Waits));
    let kept = runtime.remembered_approvals().await.unwrap();
    assert_eq!(kept.iter().map(|kept| kept.id.as_str()).collect::<Vec<_>>(), [on_thread.id.as_str(), &always.id]);
    let of_alice = runtime.remembered_approvals_of_user("alice").await.unwrap();
    assert_eq!(of_alice, std::slice::from_ref(&on_thread));
    assert!(!runtime.revoke_remembered_approval_of_user("alice", &always.id).await.unwrap(), "bob's, not alice's");
    kept
}

#[tokio::test]
async fn a9_memory_remembered_scopes_answer_only_their_calls_and_never_lift_a_deny() {
    let bench = Bench::new(Arc::new(InMemoryStore::new()));
    let kept = a9_scopes_and_patterns(&bench).await;
    assert_eq!(kept.len(), 2);
}

#[tokio::test]
async fn a9_sqlite_remembered_approvals_answer_their_calls_and_survive_a_restart() {
    let dir = std::env::temp_dir().join(format!("remembered-{}-sqlite", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("threads.db");
    let kept = {
        let bench = Bench::new(Arc::new(SqliteStore::open(&db).unwrap()));
        a9_scopes_and_patterns(&bench).await
    };
    // A fresh store on the file, a fresh runtime: the same approvals, and they answer.
    let bench = Bench::new(Arc::new(SqliteStore::open(&db).unwrap()));
    let runtime = bench.runtime("unused", "unused");
    assert_eq!(runtime.remembered_approvals().await.unwrap(), kept);
    let always = &kept[1];
    let answer = bench.answer(On::NewThread(Some("dave")), "r1", "npm run lint").await;
    assert_eq!(answer.remembered_by(), Some(always.id.clone()), "{answer:?}");
    assert!(runtime.revoke_remembered_approval(&always.id).await.unwrap());
    assert!(matches!(bench.answer(On::NewThread(Some("dave")), "r2", "npm run lint").await, Answer::Waits));
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(feature = "postgres")]
async fn postgres_store(url: &str, schema: &str) -> Arc<dyn MessageStore> {
    use hooks_runtime::store::{PostgresOptions, PostgresStore};
    let store = PostgresStore::connect_with(url, PostgresOptions::new().schema(schema).max_connections(4))
        .await
        .unwrap_or_else(|error| panic!("{error}; start PostgreSQL or set HOOKS_DATABASE_URL"));
    Arc::new(store)
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a9_postgres_remembered_scopes_answer_only_their_calls_and_never_lift_a_deny() {
    let (url, schema) = support_store::fresh_postgres_schema().await;
    let bench = Bench::new(postgres_store(&url, &schema).await);
    let kept = a9_scopes_and_patterns(&bench).await;
    // Another connection to the schema reads the same.
    let again = Bench::new(postgres_store(&url, &schema).await);
    assert_eq!(again.runtime("unused", "unused").remembered_approvals().await.unwrap(), kept);
}

/// What the child process does: `remember` or `revoke`, on the schema given.
#[cfg(feature = "postgres")]
const CHILD_ACTION: &str = "HOOKS_REMEMBERED_CHILD_ACTION";
#[cfg(feature = "postgres")]
const CHILD_URL: &str = "HOOKS_REMEMBERED_CHILD_URL";
#[cfg(feature = "postgres")]
const CHILD_SCHEMA: &str = "HOOKS_REMEMBERED_CHILD_SCHEMA";

/// The other process: with `remember`, makes a call that waits and approves it remembering
/// `Bash(npm test:*)` for every thread, printing `REMEMBERED <id>`; with `revoke <id>`, revokes
/// it, printing `REVOKED true`.
#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the child process of the two-process test, which runs it"]
async fn a9_remembered_child() {
    let (Ok(action), Ok(url), Ok(schema)) =
        (std::env::var(CHILD_ACTION), std::env::var(CHILD_URL), std::env::var(CHILD_SCHEMA))
    else {
        return;
    };
    let bench = Bench::new(postgres_store(&url, &schema).await);
    match action.split_once(' ') {
        None if action == "remember" => {
            let always = Remember::new(RememberScope::Always).with_pattern("Bash(npm test:*)");
            let (made, _) = bench.remember(On::NewThread(Some("erin")), "p1", "npm test", always).await;
            println!("REMEMBERED {}", made.id);
        }
        Some(("revoke", id)) => {
            let revoked = bench.runtime("unused", "unused").revoke_remembered_approval(id).await.unwrap();
            println!("REVOKED {revoked}");
        }
        _ => panic!("unknown action `{action}`"),
    }
}

/// Runs the child with `action` and returns the line it printed after `prefix`.
#[cfg(feature = "postgres")]
fn run_child(url: &str, schema: &str, action: &str, prefix: &str) -> String {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["remembered_approvals::a9_remembered_child", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env(CHILD_ACTION, action)
        .env(CHILD_URL, url)
        .env(CHILD_SCHEMA, schema)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "the child failed: {stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    stdout
        .lines()
        .find_map(|line| line.split_once(prefix).map(|(_, rest)| rest.trim().to_owned()))
        .unwrap_or_else(|| panic!("the child printed no `{prefix}`: {stdout}"))
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a9_postgres_an_approval_remembered_in_another_process_answers_here_until_revoked_there() {
    let (url, schema) = support_store::fresh_postgres_schema().await;
    let bench = Bench::new(postgres_store(&url, &schema).await);
    assert!(matches!(bench.answer(On::NewThread(Some("frank")), "q1", "npm test --watch").await, Answer::Waits));
    let id = run_child(&url, &schema, "remember", "REMEMBERED ");
    let answer = bench.answer(On::NewThread(Some("frank")), "q2", "npm test --watch").await;
    assert_eq!(answer.remembered_by(), Some(id.clone()), "{answer:?}");
    assert_eq!(run_child(&url, &schema, &format!("revoke {id}"), "REVOKED "), "true");
    assert!(matches!(bench.answer(On::NewThread(Some("frank")), "q3", "npm test --watch").await, Answer::Waits));
}

#[tokio::test]
async fn a10_the_decision_record_of_a_call_answered_by_a_remembered_approval_names_it() {
    let bench = Bench::new(Arc::new(InMemoryStore::new()));
    let thread_scope = Remember::new(RememberScope::Thread).with_pattern("Bash(make:*)");
    let (made, thread) = bench.remember(On::NewThread(Some("alice")), "m1", "make", thread_scope).await;
    let Answer::Ran(record) = bench.answer(On::Thread(thread.id()), "m2", "make check").await else {
        panic!("answered by the remembered approval");
    };
    // Every decider said its word first: the rule asked, and then the remembered approval.
    let deciders: Vec<(&str, &str)> =
        record.entries.iter().map(|entry| (entry.decider.as_str(), entry.decision.as_str())).collect();
    let ask = deciders.iter().position(|entry| *entry == ("permissions", "ask")).expect("the rule's ask");
    let used = deciders.iter().position(|entry| *entry == ("remembered_approvals", "allow")).expect("the use");
    assert!(ask < used, "{deciders:?}");
    assert_eq!(used, deciders.len() - 1, "the last word: {deciders:?}");
    let entry = &record.entries[used];
    assert_eq!(entry.by.as_deref(), Some(made.id.as_str()));
    assert_eq!(entry.rule.as_deref(), Some("Bash(make:*)"));
    let reason = entry.reason.as_deref().unwrap_or_default();
    assert!(reason.contains(&format!("`{}` (scope `thread`)", made.id)), "{reason}");
    let named = record.remembered.as_deref().unwrap();
    assert_eq!((named.id.as_str(), named.scope), (made.id.as_str(), RememberScope::Thread));
    assert_eq!(named.matcher, ApprovalMatcher::Pattern { rule: "Bash(make:*)".into() });
    // The stored message's `extra.admission` is where the inspector reads it.
    let messages = thread.messages().await.unwrap();
    let stored = messages.iter().find(|message| message.tool_call_id.as_deref() == Some("m2")).unwrap();
    let text = stored.extra["admission"].as_str().unwrap();
    let expected = format!(
        r#""remembered":{{"id":"{}","scope":"thread","matcher":{{"kind":"pattern","rule":"Bash(make:*)"}}}}"#,
        made.id
    );
    assert!(text.contains(&expected), "{text}");
}

#[tokio::test]
async fn a9_a_pattern_that_does_not_parse_or_cover_the_call_and_a_remembered_denial_are_refused() {
    let bench = Bench::new(Arc::new(InMemoryStore::new()));
    let (runtime, thread, status) = bench.call(On::NewThread(None), "b1", "npm install").await;
    assert_eq!(status, ThreadStatus::AwaitingApproval);
    let listed = thread.pending_approvals().await.unwrap().remove(0);
    let approve = || ApprovalChoice::Approve { arguments: None };
    let refusals = [
        (approve(), Remember::new(RememberScope::Always).with_pattern("Bash(npm test")),
        (approve(), Remember::new(RememberScope::Always).with_pattern("Bash(npm test:*)")),
        (approve(), Remember::new(RememberScope::User)),
        (ApprovalChoice::Deny { reason: "no".into() }, Remember::new(RememberScope::Thread)),
    ];
    let mut problems = Vec::new();
    for (choice, remember) in refusals {
        match thread.decide_listed_remembering(&listed, choice, remember).await {
            Err(ApprovalError::RememberRefused { problem, .. }) => problems.push(problem),
            other => panic!("{other:?}"),
        }
    }
    assert!(problems[0].contains("is not a permission rule"), "{}", problems[0]);
    assert!(problems[1].contains("does not select the call being approved"), "{}", problems[1]);
    assert!(problems[2].contains("has no user"), "{}", problems[2]);
    assert!(problems[3].contains("only an approval"), "{}", problems[3]);
    // Nothing was decided, nothing remembered.
    assert_eq!(thread.pending_approvals().await.unwrap().len(), 1);
    assert!(runtime.remembered_approvals().await.unwrap().is_empty());
}
