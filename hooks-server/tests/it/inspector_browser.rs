//! The inspector page in a real browser: headless Chromium, driven over WebDriver by
//! chromedriver, opens `/inspect`, connects with a token, creates a thread and sends a message
//! through the page's own controls, and the resolved hook table (side, kind, order, provenance,
//! stage and reason), the run's live events (messages, `tool_call_started`, `tool_call_done`)
//! and its hook runs must show in the DOM, with tool calls' arguments and results. Reloaded, the
//! page shows the thread's earlier events; the thread list, a thread's arguments and the user's
//! values show their times. A router without hook-run recording shows the code that turns it
//! on. The page is then saved to `target/inspector.png`. A run whose tool calls wait for
//! approval shows them with Approve and Deny; deciding them from the page finishes the run, and
//! the denied call shows as a denial among the events (A6); the page with both calls waiting is
//! saved to `target/inspector-approvals.png`. A runtime-wide guard's run shows among the hook
//! runs with its decision (G10), and a call its process's death interrupted shows as
//! interrupted among the events and the messages (G12). A turn whose payment waits for a person
//! shows as a timeline: its two runs, model calls, tool calls, the approval's wait and the hook
//! runs under the calls that ran them, each from its start for its duration (V4); it is saved to
//! `target/inspector-timeline.png`. A turn resumed by another process on the same SQLite file,
//! opened by a deep link (`#token=...&thread=...`), shows the wait up to the stored result, that
//! process's run drawn from its stored messages, and the next message's run as a turn of its own.
//!
//! Built only with the `browser-tests` feature (`.ci/run` runs it); it fails, never skips, when
//! Chromium or chromedriver is missing. `CHROMIUM` and `CHROMEDRIVER` override their paths.

use crate::support;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use hooks_runtime::Runtime;
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::tool::FnTool;
use hooks_runtime::types::HookToolResult;
use hooks_server::ServerConfig;
use serde_json::{Value, json};
use support::{ALICE, PATIENCE, Server};

#[hook(tool_call_started, id = "announce_forecast")]
fn announce_forecast(_state: &ThreadState, _call: &HookToolCall, _progress: Option<&str>) {}

#[hook(tool_call_done, id = "record_forecast")]
fn record_forecast(_state: &ThreadState, _call: &HookToolCall, _result: &HookToolResult) {}

#[hook(tool_call_done, id = "audit_tool_calls")]
fn audit_tool_calls(_state: &ThreadState, _call: &HookToolCall, _result: &HookToolResult) {}

#[hook(filter_messages, id = "keep_everything")]
fn keep_everything(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    messages
}

#[hook(after_create_message, id = "index_messages")]
fn index_messages(_state: &ThreadState, _message: &MessageRecord) {}

define_prompt! {
    name: forecast_prompt,
    model: "scripted",
    prompt: "Answer weather questions; look the forecast up first.",
    tools: ["forecast"],
    hooks: [announce_forecast, record_forecast, index_messages, keep_everything],
}

define_prompt! {
    name: audit_prompt,
    model: "scripted",
    prompt: "Audit.",
}

// A child whose requirement shows in the parent's table with its stage and reason.
define_agent! {
    name: auditor,
    expose_as_tool: true,
    tool_description: "Audits tool calls.",
    parent_hooks: [{ hook: audit_tool_calls, reason: "Keeps an audit trail of the parent's tool calls.", stage: before_parent }],
    side_a: { prompt: audit_prompt },
    side_b: { human: true },
}

define_agent! {
    name: weather_agent,
    side_a: { prompt: forecast_prompt, subagents: [{ agent: auditor }], stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

/// A runtime-wide guard of the weather runtime: its run shows among the hook runs, with its
/// decision (G10).
#[hook(before_tool_call, id = "inspect_guard", on_failure = deny)]
fn inspect_guard(_state: &ThreadState, _call: &HookToolCall, _arguments: &mut Value) -> ToolDecision {
    ToolDecision::allow()
}

define_prompt! {
    name: payment_prompt,
    model: "scripted",
    prompt: "Pay what {{payer}} asks.",
    tools: ["pay"],
}

define_agent! {
    name: payment_agent,
    side_a: { prompt: payment_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

/// The timeline's policy: `wipe` is denied, `pay` waits for a person.
#[hook(before_tool_call, id = "timeline_policy", on_failure = deny)]
fn timeline_policy(_state: &ThreadState, call: &HookToolCall, _arguments: &mut Value) -> ToolDecision {
    match call.name() {
        "wipe" => ToolDecision::deny("nothing is wiped"),
        "pay" => ToolDecision::ask("payments need a person"),
        _ => ToolDecision::allow(),
    }
}

define_prompt! {
    name: timeline_prompt,
    model: "scripted",
    prompt: "Look up, clean up and pay.",
    tools: ["lookup", "wipe", "pay"],
    hooks: [timeline_policy, index_messages],
}

define_agent! {
    name: timeline_agent,
    side_a: { prompt: timeline_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

/// chromedriver on a free port of 127.0.0.1, killed when dropped.
struct ChromeDriver {
    child: Child,
    url: String,
}

impl ChromeDriver {
    fn start() -> ChromeDriver {
        let program = std::env::var("CHROMEDRIVER").unwrap_or_else(|_| "/usr/bin/chromedriver".to_owned());
        // A port that was free a moment ago; chromedriver binds it right after.
        let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
        let child = Command::new(&program)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|error| {
                panic!(
                    "cannot start chromedriver `{program}`: {error}. Install Debian's `chromium` and \
                     `chromium-driver` (.ci/run does), or set CHROMEDRIVER"
                )
            });
        ChromeDriver { child, url: format!("http://127.0.0.1:{port}") }
    }

    /// Waits until chromedriver answers `/status` with `ready`.
    async fn ready(&mut self) {
        let client = reqwest::Client::new();
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().expect("chromedriver status") {
                panic!("chromedriver exited at start: {status}");
            }
            if let Ok(response) = client.get(format!("{}/status", self.url)).send().await
                && let Ok(text) = response.text().await
                && let Ok(body) = serde_json::from_str::<Value>(&text)
                && body["value"]["ready"] == json!(true)
            {
                return;
            }
            assert!(Instant::now() < deadline, "chromedriver did not become ready at {}", self.url);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for ChromeDriver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A fresh profile directory for one browser, removed when dropped.
struct Profile(PathBuf);

impl Profile {
    fn new() -> Profile {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
        let path = std::env::temp_dir().join(format!("hooks-inspector-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&path).expect("profile directory");
        Profile(path)
    }
}

impl Drop for Profile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `check` against a fresh Chromium, apart from the test's task so that the browser is
/// closed whatever it finds, then fails the test as `check` failed.
async fn in_chromium<F, Fut>(check: F)
where
    F: FnOnce(Client) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let mut driver = ChromeDriver::start();
    driver.ready().await;
    let profile = Profile::new();
    let client = browser(&driver, &profile).await;
    let checked = tokio::spawn(check(client.clone())).await;
    let _ = client.close().await;
    if let Err(error) = checked {
        std::panic::resume_unwind(error.into_panic());
    }
}

async fn browser(driver: &ChromeDriver, profile: &Profile) -> Client {
    let binary = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".to_owned());
    assert!(
        std::path::Path::new(&binary).exists(),
        "no Chromium at `{binary}`: install Debian's `chromium` (.ci/run does), or set CHROMIUM"
    );
    let args = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        "--window-size=1500,1000",
        &format!("--user-data-dir={}", profile.0.display()),
    ];
    let mut capabilities = serde_json::Map::new();
    capabilities.insert("goog:chromeOptions".to_owned(), json!({ "binary": binary, "args": args }));
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(capabilities)
        .connect(&driver.url)
        .await
        .expect("a WebDriver session in Chromium")
}

fn runtime() -> Runtime {
    let script = [
        ScriptedResponse::tool_call("call_1", "forecast", r#"{"query":"Looking up the forecast","place":"Paris"}"#),
        ScriptedResponse::text("Sunny in Paris all day."),
    ];
    Runtime::builder()
        .agent::<weather_agent>()
        .model("scripted", ScriptedModel::new(script))
        .tool(
            FnTool::new("forecast", "Looks the forecast up.", |_args| async {
                // Long enough that the started and done rows arrive apart, as in a real run.
                tokio::time::sleep(Duration::from_millis(300)).await;
                HookToolResult::success("Sunny, 24°C.")
            })
            .with_progress_argument("query"),
        )
        .guard::<inspect_guard>()
        // No prompt offers its tools, so it is never started: the MCP section shows it as such.
        .mcp_server("docs", hooks_runtime::mcp::McpTransport::stdio("/nonexistent/docs-server"))
        .build()
        .expect("runtime")
}

/// A runtime whose model pays twice in one step and then answers; every payment waits for a
/// person (`with_approval`).
fn payment_runtime() -> Runtime {
    let script = [
        ScriptedResponse::tool_call("call_1", "pay", r#"{"amount":5,"to":"bob"}"#).then_tool_call(
            "call_2",
            "pay",
            r#"{"amount":900,"to":"<b>mallory</b>"}"#,
        ),
        ScriptedResponse::text("One payment made."),
    ];
    paying_runtime(script)
}

/// A runtime whose model pays bob 5, answers, pays bob 7 at the next message and answers
/// again; every payment waits for a person unless a remembered approval answers it.
fn remembering_runtime() -> Runtime {
    let script = [
        ScriptedResponse::tool_call("call_1", "pay", r#"{"amount":5,"to":"bob"}"#),
        ScriptedResponse::text("Paid."),
        ScriptedResponse::tool_call("call_2", "pay", r#"{"amount":7,"to":"bob"}"#),
        ScriptedResponse::text("Paid again."),
    ];
    paying_runtime(script)
}

/// A runtime of `payment_agent` whose model follows `script` and whose `pay` tool waits for a
/// person on every call (unless a remembered approval answers it).
fn paying_runtime<const N: usize>(script: [ScriptedResponse; N]) -> Runtime {
    Runtime::builder()
        .agent::<payment_agent>()
        .model("scripted", ScriptedModel::new(script))
        .tool(
            FnTool::new("pay", "Pays someone.", |arguments: Value| async move {
                HookToolResult::success(format!("paid {}", arguments["amount"]))
            })
            .with_approval(|_| ToolDecision::ask("payments need a person")),
        )
        .build()
        .expect("runtime")
}

/// A runtime whose model looks something up, tries to wipe, and pays (which waits for a
/// person); once the payment is decided, it answers. The lookup takes 150 ms, the payment 50 ms.
fn timeline_runtime() -> Runtime {
    let script = [
        ScriptedResponse::tool_call("call_look", "lookup", r#"{"q":"invoice"}"#)
            .then_tool_call("call_wipe", "wipe", r#"{"path":"/"}"#)
            .then_tool_call("call_pay", "pay", r#"{"amount":40}"#),
        ScriptedResponse::text("Looked up and paid; nothing wiped."),
    ];
    let sleeping = |name: &'static str, millis: u64| {
        FnTool::new(name, "A tool.", move |_args| async move {
            tokio::time::sleep(Duration::from_millis(millis)).await;
            HookToolResult::success("done")
        })
    };
    Runtime::builder()
        .agent::<timeline_agent>()
        .model("scripted", ScriptedModel::new(script))
        .tool(sleeping("lookup", 150))
        .tool(sleeping("wipe", 0))
        .tool(sleeping("pay", 50))
        .build()
        .expect("runtime")
}

/// The timeline's agent on the SQLite file `db`, its model answering `script`: the runtime of
/// one of two processes that share the file.
fn sqlite_timeline_runtime(db: &std::path::Path, script: Vec<ScriptedResponse>) -> Runtime {
    let tool = |name: &'static str| FnTool::new(name, "A tool.", |_args| async { HookToolResult::success("done") });
    Runtime::builder()
        .agent::<timeline_agent>()
        .model("scripted", ScriptedModel::new(script))
        .tool(tool("lookup"))
        .tool(tool("wipe"))
        .tool(tool("pay"))
        .store(hooks_runtime::store::SqliteStore::open(db).expect("open the SQLite file"))
        .build()
        .expect("runtime")
}

/// The text of each row's cells under `selector`, as the page shows them; a row that names its
/// side (`data-side`) has the side as its first cell.
async fn rows(client: &Client, selector: &str) -> Vec<Vec<String>> {
    let script = "return [...document.querySelectorAll(arguments[0])].map(row => \
        (row.dataset.side ? [row.dataset.side] : []).concat([...row.children].map(c => c.textContent.trim())))";
    let value = client.execute(script, vec![json!(selector)]).await.expect("read the table");
    serde_json::from_value(value).expect("rows of cells")
}

/// Polls `selector`'s rows until `done` holds for them; fails after the patience.
async fn wait_rows(
    client: &Client,
    selector: &str,
    what: &str,
    done: impl Fn(&[Vec<String>]) -> bool,
) -> Vec<Vec<String>> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let found = rows(client, selector).await;
        if done(&found) {
            return found;
        }
        assert!(Instant::now() < deadline, "{what} never showed; `{selector}` rows: {found:#?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until `script` returns `expected`: the page fills its parts as their requests answer,
/// in no fixed order. Fails after the patience, naming `what` and the last value read.
async fn wait_value(client: &Client, script: &str, expected: &Value, what: &str) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let found = client.execute(script, vec![]).await.expect("run the script");
        if found == *expected {
            return;
        }
        assert!(Instant::now() < deadline, "{what} never showed; the page has {found}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Clicks the element `selector` finds, finding it again while the page re-renders it under
/// the click (a stale element); fails after the patience, naming `what`.
async fn click(client: &Client, selector: &str, what: &str) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let clicked = match client.find(Locator::Css(selector)).await {
            Ok(element) => element.click().await.map(drop),
            Err(error) => Err(error),
        };
        match clicked {
            Ok(()) => return,
            Err(error) => assert!(Instant::now() < deadline, "{what} (`{selector}`) could not be clicked: {error}"),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Cell `i` of a row, or "" for a row without it (a table's placeholder row while it fills).
fn cell(row: &[String], i: usize) -> &str {
    row.get(i).map_or("", String::as_str)
}

fn has_row(rows: &[Vec<String>], cells: &[&str]) -> bool {
    rows.iter().any(|row| row.iter().map(String::as_str).eq(cells.iter().copied()))
}

/// Whether `text` holds a clock time as the page prints one (`10:42:07`, with AM/PM or not).
fn looks_like_a_time(text: &str) -> bool {
    text.split(|c: char| !c.is_ascii_digit() && c != ':').any(|part| part.len() >= 7 && part.split(':').count() == 3)
}

/// Where the screenshot goes: `target/` of this build (what `CARGO_TARGET_DIR` names, if set),
/// found from the test binary's own path, `<target>/debug/deps/<binary>`.
fn screenshot_path() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let target = exe.ancestors().nth(3).expect("the test binary lies in <target>/<profile>/deps");
    target.join("inspector.png")
}

async fn check_page(client: Client, base: String) {
    client.goto(&format!("{base}/inspect")).await.expect("open /inspect");
    assert_eq!(client.title().await.expect("title"), "Hooks inspector");
    client.find(Locator::Id("token")).await.expect("token field").send_keys(ALICE).await.expect("type the token");
    client.find(Locator::Id("connect")).await.expect("connect button").click().await.expect("connect");

    // The resolved table: per side (and its prompt), each hook's kind, order, provenance, and a
    // child's stage and reason.
    let table = "#agents table[data-agent='weather_agent'] tr";
    let hooks =
        wait_rows(&client, &format!("{table}[data-side]"), "the resolved hook table", |rows| rows.len() > 3).await;
    let sides = rows(&client, &format!("{table}.group")).await;
    assert_eq!(sides, [["sideA · prompt forecast_prompt"], ["sideB"]], "{hooks:#?}");
    for expected in [
        ["sideA", "tool_call_started", "1", "announce_forecast", "prompt forecast_prompt", ""],
        [
            "sideA",
            "tool_call_done",
            "1",
            "audit_tool_calls",
            "child auditor",
            "before_parent · Keeps an audit trail of the parent's tool calls.",
        ],
        ["sideA", "tool_call_done", "2", "record_forecast", "prompt forecast_prompt", ""],
        ["sideA", "after_create_message", "1", "index_messages", "prompt forecast_prompt", ""],
        [
            "sideB",
            "tool_call_done",
            "1",
            "audit_tool_calls",
            "child auditor",
            "before_parent · Keeps an audit trail of the parent's tool calls.",
        ],
    ] {
        assert!(has_row(&hooks, &expected), "no hook row {expected:?} in {hooks:#?}");
    }

    // A live run, started from the page: new thread of the agent, then a message.
    let option = client.find(Locator::Css("#agent-choice option[value='weather_agent']")).await;
    option.expect("the agent in the thread form").click().await.expect("choose the agent");
    client.find(Locator::Id("create")).await.expect("new thread button").click().await.expect("create");
    wait_rows(&client, "#threads li", "the new thread", |rows| rows.len() == 1).await;
    let message = client.find(Locator::Id("message")).await.expect("message field");
    message.send_keys("Weather in Paris?").await.expect("type a message");
    client.find(Locator::Id("send")).await.expect("send button").click().await.expect("send");

    let events = wait_rows(&client, "#event-rows tr", "the run's end", |rows| {
        rows.iter().any(|row| row.get(1).is_some_and(|kind| kind == "run_finished"))
    })
    .await;
    let kinds: Vec<&str> = events.iter().map(|row| row[1].as_str()).collect();
    let at = |kind: &str, detail: &str| {
        events
            .iter()
            .position(|row| row[1] == kind && row[2].contains(detail))
            .unwrap_or_else(|| panic!("no `{kind}` event with `{detail}` in {events:#?}"))
    };
    let started = at("tool_call_started", "forecast (call_1): Looking up the forecast");
    let done = at("tool_call_done", "forecast (call_1): success");
    let tool_message = at("message_created", "tool ");
    assert!(started < done && done < tool_message, "{kinds:?}");
    // Hook runs arrive as their spans close, so their place among the thread's own events is
    // not fixed; each shows once with its kind and provenance.
    for hook in [
        "announce_forecast (tool_call_started, prompt:forecast_prompt)",
        "record_forecast (tool_call_done, prompt:forecast_prompt)",
        "audit_tool_calls (tool_call_done, child:auditor)",
        "index_messages (after_create_message, prompt:forecast_prompt)",
    ] {
        at("hook_run", hook);
    }
    // A governing hook run, with its decision (G10).
    let guard = at("hook_run", "inspect_guard (before_tool_call, runtime)");
    assert!(events[guard][2].ends_with(", decided allow"), "{:?}", events[guard]);
    // What the filter chain did to each request's history: the first request has the user's
    // message, the second also the tool call and its result.
    at("messages_filtered", "filter_messages kept 1 of 1 messages");
    at("messages_filtered", "filter_messages kept 3 of 3 messages");
    assert_eq!(kinds.first(), Some(&"run_started"), "{kinds:?}");
    assert!(kinds.contains(&"status"), "{kinds:?}");
    // Every live event row has its stream id, each once.
    let ids: Vec<&str> = events.iter().map(|row| row[0].as_str()).collect();
    let mut unique = ids.clone();
    unique.dedup();
    assert_eq!(ids, unique, "an event showed twice");

    // The messages, from the events' own message bodies.
    let messages = wait_rows(&client, "#message-rows tr", "the answer", |rows| rows.len() == 4).await;
    let roles_and_contents: Vec<(&str, &str)> =
        messages.iter().map(|row| (row[0].as_str(), without_admission(&row[1]))).collect();
    let call = r#"calls forecast({"query":"Looking up the forecast","place":"Paris"}) call_1"#;
    assert_eq!(
        roles_and_contents,
        [
            ("user", "Weather in Paris?"),
            ("assistant", call),
            ("tool", "result of call_1: Sunny, 24°C."),
            ("assistant", "Sunny in Paris all day."),
        ],
        "tool calls with their arguments, results with the call they answer"
    );
    // G15: the tool result shows its call's decision record: the schema's and the guard's allow.
    let record = messages[2][1].split_once("admission: ").map(|(_, record)| record).unwrap_or_default();
    assert!(record.starts_with("2 answers"), "{:?}", messages[2]);
    assert!(record.contains("allow schema") && record.contains("allow guards inspect_guard"), "{:?}", messages[2]);
    assert!(messages.iter().all(|row| looks_like_a_time(&row[2])), "{messages:#?}");

    // Opened again (a reload), the thread shows its earlier events, not only what comes next.
    client.goto(&format!("{base}/inspect")).await.expect("reload /inspect");
    let thread = wait_rows(&client, "#threads li", "the thread list after a reload", |rows| rows.len() == 1).await;
    assert!(thread[0][1].contains("created ") && looks_like_a_time(&thread[0][1]), "{thread:?}");
    client.find(Locator::Css("#threads li")).await.expect("the thread").click().await.expect("open it");
    let replayed = wait_rows(&client, "#event-rows tr", "the earlier events", |rows| {
        rows.iter().any(|row| row.get(1).is_some_and(|kind| kind == "run_finished"))
    })
    .await;
    assert_eq!(replayed, events, "the same events, ids and all, from the server's log");
    let again = rows(&client, "#message-rows tr").await;
    assert_eq!(again, messages, "each message once, though both the history and the events carry it");

    // The user's values, with the time each was set, and a thread's arguments.
    let user_values = wait_rows(&client, "#user-value-rows tr", "the user values", |rows| !rows.is_empty()).await;
    assert_eq!(user_values.len(), 1, "{user_values:#?}");
    assert_eq!(user_values[0][..2], ["units".to_owned(), "metric".to_owned()], "{user_values:#?}");
    assert!(looks_like_a_time(&user_values[0][2]), "{user_values:#?}");
    // The MCP servers, each with its state and tools.
    let mcp = wait_rows(&client, "#mcp-server-rows tr", "the MCP servers", |rows| !rows.is_empty()).await;
    assert_eq!(mcp, [["docs stdio", "not started", "listed once it runs"].map(str::to_owned)], "{mcp:#?}");
    let (status, body) = Server { base: base.clone(), client: reqwest::Client::new() }
        .post("/threads", ALICE, r#"{"agent":"weather_agent","arguments":{"city":"Paris","days":3}}"#)
        .await;
    assert_eq!(status, 201, "{body}");
    let with_arguments = body["id"].as_str().unwrap().to_owned();
    client.find(Locator::Id("connect")).await.expect("connect button").click().await.expect("reconnect");
    let selector = format!("#threads li[data-thread='{with_arguments}']");
    wait_rows(&client, &selector, "the thread with arguments", |rows| rows.len() == 1).await;
    client.find(Locator::Css(&selector)).await.expect("the thread").click().await.expect("open it");
    let arguments = wait_rows(&client, "#argument-rows tr", "the arguments", |rows| rows.len() == 2).await;
    assert_eq!(arguments, [["city", "Paris"], ["days", "3"]]);
    let created = client.find(Locator::Id("thread-created")).await.expect("creation time").text().await.unwrap();
    assert!(created.starts_with("created ") && looks_like_a_time(&created), "{created}");
    let hint = client.find(Locator::Id("hook-runs-hint")).await.expect("the hint box");
    assert!(!hint.is_displayed().await.unwrap(), "hook runs are recorded: no hint");

    // Reopen the first thread for the screenshot: the run with its events and messages.
    client.find(Locator::Css("#threads li")).await.expect("the first thread").click().await.expect("open it");
    wait_rows(&client, "#message-rows tr", "the first thread's messages", |rows| rows.len() == 4).await;
    let png = client.screenshot().await.expect("screenshot");
    assert!(png.starts_with(b"\x89PNG"), "the screenshot is not a PNG");
    let path = screenshot_path();
    std::fs::write(&path, png).unwrap_or_else(|error| panic!("write {}: {error}", path.display()));
    println!("screenshot: {}", path.display());
}

/// A6 from the page: the waiting calls of a run listed with their arguments; one approved, one
/// denied with a reason typed in its row; the run finishes and the denial shows as one.
async fn check_approvals(client: Client, base: String) {
    client.goto(&format!("{base}/inspect")).await.expect("open /inspect");
    client.find(Locator::Id("token")).await.expect("token field").send_keys(ALICE).await.expect("type the token");
    client.find(Locator::Id("connect")).await.expect("connect button").click().await.expect("connect");
    wait_rows(&client, "#agents table[data-agent='payment_agent'] tr", "the catalog", |rows| !rows.is_empty()).await;
    let option = client.find(Locator::Css("#agent-choice option[value='payment_agent']")).await;
    option.expect("the agent in the thread form").click().await.expect("choose the agent");
    // The prompt's `{{payer}}` gets a field of its own; without it the thread is refused.
    let payer = client.find(Locator::Css("#argument-fields input[data-argument='payer']")).await;
    payer.expect("a field for the prompt's argument").send_keys("Alice").await.expect("type the argument");
    client.find(Locator::Id("create")).await.expect("new thread button").click().await.expect("create");
    wait_rows(&client, "#approval-rows tr", "the empty approval list", |rows| rows.len() == 1 && rows[0][0] == "none")
        .await;
    let arguments = wait_rows(&client, "#argument-rows tr", "the arguments", |rows| rows.len() == 1).await;
    assert_eq!(arguments, [["payer", "Alice"]]);
    let message = client.find(Locator::Id("message")).await.expect("message field");
    message.send_keys("Pay bob and mallory.").await.expect("type a message");
    client.find(Locator::Id("send")).await.expect("send button").click().await.expect("send");

    let waiting = wait_rows(&client, "#approval-rows tr[data-call]", "the waiting calls", |rows| rows.len() == 2).await;
    assert_eq!(waiting[0][..3], ["call_1", r#"pay {"amount":5,"to":"bob"}"#, "payments need a person [the tool]"]);
    // Arguments are text, never markup.
    assert_eq!(waiting[1][1], r#"pay {"amount":900,"to":"<b>mallory</b>"}"#, "{waiting:#?}");
    let bold = client.execute("return document.querySelectorAll('#approval-rows b').length", vec![]).await;
    assert_eq!(bold.expect("count"), json!(0));
    assert!(looks_like_a_time(&waiting[0][3]), "{waiting:#?}");
    let png = client.screenshot().await.expect("screenshot");
    let path = screenshot_path().with_file_name("inspector-approvals.png");
    std::fs::write(&path, png).unwrap_or_else(|error| panic!("write {}: {error}", path.display()));

    click(&client, "#approval-rows tr[data-call='call_1'] button.approve", "Approve of call_1").await;
    wait_rows(&client, "#approval-rows tr[data-call]", "call_2 alone waiting", |rows| {
        rows.len() == 1 && rows[0][0] == "call_2"
    })
    .await;
    let deny = client.find(Locator::Css("#approval-rows tr[data-call='call_2'] button.deny")).await;
    deny.expect("Deny of call_2").click().await.expect("deny");
    let reason = client.find(Locator::Css("#approval-rows tr[data-call='call_2'] input.deny-reason")).await;
    reason.expect("the reason field").send_keys("too much").await.expect("type a reason");
    let confirm = client.find(Locator::Css("#approval-rows tr[data-call='call_2'] button.confirm-deny")).await;
    confirm.expect("the confirming Deny").click().await.expect("confirm the denial");

    let events = wait_rows(&client, "#event-rows tr", "the resumed run's end", |rows| {
        rows.iter().any(|row| cell(row, 1) == "run_finished" && cell(row, 2).contains(": idle"))
    })
    .await;
    let details: Vec<(&str, &str)> = events.iter().map(|row| (row[1].as_str(), row[2].as_str())).collect();
    for expected in [
        ("approval_requested", "pay (call_1) waits: payments need a person [the tool]"),
        ("approval_resolved", "call_1: approved"),
        ("approval_resolved", "call_2: denied"),
        ("tool_call_done", "pay (call_1): success"),
        ("tool_call_done", "pay (call_2): denied"),
    ] {
        assert!(details.contains(&expected), "no {expected:?} in {details:#?}");
    }
    // A one-step run is "1 step".
    assert!(
        details.iter().any(|(kind, detail)| *kind == "run_finished" && detail.ends_with(", 1 step")),
        "{details:#?}"
    );
    assert!(!details.iter().any(|(_, detail)| detail.contains(" 1 steps")), "{details:#?}");
    let denied = rows(&client, "#event-rows tr.denied").await;
    assert_eq!(denied.len(), 1, "the denial, and only it, shows as one: {denied:#?}");
    assert_eq!(denied[0][2], "pay (call_2): denied");
    let pill = client.find(Locator::Css("#event-rows tr.denied .pill")).await.expect("the denial's pill");
    assert_eq!(pill.attr("class").await.expect("class").as_deref(), Some("pill denied"));
    wait_rows(&client, "#approval-rows tr", "nothing left waiting", |rows| rows.len() == 1 && rows[0][0] == "none")
        .await;
    let messages = wait_rows(&client, "#message-rows tr", "the answer", |rows| rows.len() == 5).await;
    let contents: Vec<&str> = messages.iter().map(|row| without_admission(&row[1])).collect();
    assert!(contents.contains(&"result of call_1: paid 5"), "{contents:#?}");
    // The stored denial is marked as one.
    assert!(contents.contains(&"result of call_2: denied the tool call was denied: too much"), "{contents:#?}");
    assert_eq!(contents.last(), Some(&"One payment made."));
}

/// A9 from the page: a payment approved with the scope `thread` and the pattern `pay(bob)`
/// shows among the remembered approvals; the thread's next payment to bob runs without
/// waiting; Revoke removes it.
async fn check_remembered(client: Client, base: String) {
    client.goto(&format!("{base}/inspect")).await.expect("open /inspect");
    client.find(Locator::Id("token")).await.expect("token field").send_keys(ALICE).await.expect("type the token");
    client.find(Locator::Id("connect")).await.expect("connect button").click().await.expect("connect");
    let empty = "return document.getElementById('remembered').textContent";
    wait_rows(&client, "#agents table[data-agent='payment_agent'] tr", "the catalog", |rows| !rows.is_empty()).await;
    wait_value(&client, empty, &json!("No remembered approvals."), "the empty list of remembered approvals").await;
    let option = client.find(Locator::Css("#agent-choice option[value='payment_agent']")).await;
    option.expect("the agent in the thread form").click().await.expect("choose the agent");
    let payer = client.find(Locator::Css("#argument-fields input[data-argument='payer']")).await;
    payer.expect("a field for the prompt's argument").send_keys("Alice").await.expect("type the argument");
    client.find(Locator::Id("create")).await.expect("new thread button").click().await.expect("create");
    wait_rows(&client, "#approval-rows tr", "the empty approval list", |rows| rows.len() == 1 && rows[0][0] == "none")
        .await;
    let message = client.find(Locator::Id("message")).await.expect("message field");
    message.send_keys("Pay bob.").await.expect("type a message");
    client.find(Locator::Id("send")).await.expect("send button").click().await.expect("send");
    wait_rows(&client, "#approval-rows tr[data-call]", "call_1 waiting", |rows| rows.len() == 1).await;

    let row = "#approval-rows tr[data-call='call_1']";
    let choose = "document.querySelector(arguments[0]).value = 'thread'";
    client.execute(choose, vec![json!(format!("{row} select.remember-scope"))]).await.expect("choose the scope");
    let pattern = client.find(Locator::Css(&format!("{row} input.remember-pattern"))).await;
    pattern.expect("the pattern field").send_keys("pay(bob)").await.expect("type the pattern");
    let approve = client.find(Locator::Css(&format!("{row} button.approve"))).await;
    approve.expect("Approve of call_1").click().await.expect("approve");
    let kept =
        wait_rows(&client, "#remembered-rows tr[data-remembered]", "the remembered approval", |rows| rows.len() == 1)
            .await;
    assert_eq!(kept[0][..2], ["pay(bob)", "thread"], "{kept:#?}");
    assert!(looks_like_a_time(&kept[0][2]), "{kept:#?}");
    let thread = client.execute("return document.getElementById('thread-id').textContent", vec![]).await;
    let scope = "return document.querySelector('#remembered-rows tr[data-remembered] span').title";
    let scope = client.execute(scope, vec![]).await.expect("the scope's title");
    assert_eq!(scope.as_str(), Some(format!("thread {}", thread.expect("the thread").as_str().unwrap()).as_str()));

    // The next payment to bob is answered by it: it runs, nothing waits.
    wait_rows(&client, "#event-rows tr", "the first run's end", |rows| {
        rows.iter().any(|row| cell(row, 1) == "run_finished" && cell(row, 2).contains(": idle"))
    })
    .await;
    let message = client.find(Locator::Id("message")).await.expect("message field");
    message.send_keys("Pay bob again.").await.expect("type a message");
    client.find(Locator::Id("send")).await.expect("send button").click().await.expect("send");
    let events = wait_rows(&client, "#event-rows tr", "the second run's end", |rows| {
        rows.iter().filter(|row| cell(row, 1) == "run_finished" && cell(row, 2).contains(": idle")).count() == 2
    })
    .await;
    let details: Vec<(&str, &str)> = events.iter().map(|row| (row[1].as_str(), row[2].as_str())).collect();
    assert!(details.contains(&("tool_call_done", "pay (call_2): success")), "{details:#?}");
    assert!(
        !details.iter().any(|(kind, detail)| *kind == "approval_requested" && detail.contains("call_2")),
        "{details:#?}"
    );

    let revoke = client.find(Locator::Css("#remembered-rows tr[data-remembered] button.revoke")).await;
    revoke.expect("Revoke").click().await.expect("revoke");
    wait_value(&client, empty, &json!("No remembered approvals."), "the list without the revoked approval").await;
}

/// G12 from the page: a call left `running` by a process that died is finished as interrupted
/// when the step resumes; its `tool_call_done` row and its stored result show it as
/// interrupted, apart from denials and failures.
async fn check_interrupted(client: Client, base: String, thread: String) {
    client.goto(&format!("{base}/inspect")).await.expect("open /inspect");
    client.find(Locator::Id("token")).await.expect("token field").send_keys(ALICE).await.expect("type the token");
    client.find(Locator::Id("connect")).await.expect("connect button").click().await.expect("connect");
    let selector = format!("#threads li[data-thread='{thread}']");
    wait_rows(&client, &selector, "the parked thread", |rows| rows.len() == 1).await;
    client.find(Locator::Css(&selector)).await.expect("the thread").click().await.expect("open it");
    wait_rows(&client, "#approval-rows tr[data-call]", "call_2 waiting", |rows| rows.len() == 1).await;
    click(&client, "#approval-rows tr[data-call='call_2'] button.approve", "Approve of call_2").await;
    let events = wait_rows(&client, "#event-rows tr", "the resumed run's end", |rows| {
        rows.iter().filter(|row| cell(row, 1) == "run_finished").count() == 2
    })
    .await;
    let interrupted = rows(&client, "#event-rows tr.interrupted").await;
    assert_eq!(interrupted.len(), 1, "the interrupted call, and only it, shows as one: {events:#?}");
    assert!(interrupted[0][2].starts_with("pay (call_1): interrupted"), "{interrupted:?}");
    let pill = client.find(Locator::Css("#event-rows tr.interrupted .pill")).await.expect("its pill");
    assert_eq!(pill.attr("class").await.expect("class").as_deref(), Some("pill interrupted"));
    let messages = wait_rows(&client, "#message-rows tr", "the results", |rows| {
        rows.iter().any(|row| cell(row, 1).starts_with("result of call_1"))
    })
    .await;
    let result = messages.iter().find(|row| row[1].starts_with("result of call_1")).unwrap();
    assert!(result[1].contains("interrupted"), "{result:?}");
    let marks = client.execute("return document.querySelectorAll('#message-rows .pill.interrupted').length", vec![]);
    assert_eq!(marks.await.expect("count"), json!(1), "{messages:#?}");
}

/// One timeline row as the page draws it.
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct TimelineRow {
    kind: String,
    label: String,
    class: String,
    start_us: u64,
    duration_us: u64,
    within: Option<Value>,
    call: Option<String>,
    /// The bar's left edge and width, in percent of the turn.
    left: f64,
    width: f64,
}

impl TimelineRow {
    fn end_us(&self) -> u64 {
        self.start_us + self.duration_us
    }
}

async fn timeline_rows(client: &Client) -> Vec<TimelineRow> {
    let script = "return [...document.querySelectorAll('#timeline .tl-row[data-kind]')].map(row => ({ \
        kind: row.dataset.kind, label: row.querySelector('.tl-label').textContent, class: row.className, \
        startUs: Number(row.dataset.startUs), durationUs: Number(row.dataset.durationUs), \
        within: row.dataset.within ? JSON.parse(row.dataset.within) : null, call: row.dataset.call || null, \
        left: parseFloat(row.querySelector('.tl-bar').style.left), width: parseFloat(row.querySelector('.tl-bar').style.width) }))";
    let value = client.execute(script, vec![]).await.expect("read the timeline");
    serde_json::from_value(value).expect("timeline rows")
}

/// V4 from the page: a turn whose payment waits for a person, approved from the page, drawn as
/// one waterfall of its two runs.
async fn check_timeline(client: Client, base: String) {
    client.goto(&format!("{base}/inspect")).await.expect("open /inspect");
    client.find(Locator::Id("token")).await.expect("token field").send_keys(ALICE).await.expect("type the token");
    client.find(Locator::Id("connect")).await.expect("connect button").click().await.expect("connect");
    wait_rows(&client, "#agents table[data-agent='timeline_agent'] tr", "the catalog", |rows| !rows.is_empty()).await;
    let option = client.find(Locator::Css("#agent-choice option[value='timeline_agent']")).await;
    option.expect("the agent in the thread form").click().await.expect("choose the agent");
    client.find(Locator::Id("create")).await.expect("new thread button").click().await.expect("create");
    wait_rows(&client, "#approval-rows tr", "the empty approval list", |rows| rows.len() == 1 && rows[0][0] == "none")
        .await;
    let message = client.find(Locator::Id("message")).await.expect("message field");
    message.send_keys("Look up the invoice, clean up, pay it.").await.expect("type a message");
    client.find(Locator::Id("send")).await.expect("send button").click().await.expect("send");
    wait_rows(&client, "#approval-rows tr[data-call]", "the waiting payment", |rows| rows.len() == 1).await;
    click(&client, "#approval-rows tr[data-call='call_pay'] button.approve", "Approve of call_pay").await;
    wait_rows(&client, "#event-rows tr", "the resumed run's end", |rows| {
        rows.iter().filter(|row| cell(row, 1) == "run_finished").count() == 2
    })
    .await;

    let deadline = Instant::now() + PATIENCE;
    let rows = loop {
        let rows = timeline_rows(&client).await;
        if rows.iter().filter(|row| row.kind == "run" && row.label.contains("· idle")).count() == 1
            && rows.iter().any(|row| row.kind == "model" && row.label.ends_with("· stop"))
        {
            break rows;
        }
        assert!(Instant::now() < deadline, "the timeline of both runs never showed: {rows:#?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let turns = client.execute("return document.querySelectorAll('#timeline .tl-turn').length", vec![]).await;
    assert_eq!(turns.expect("count"), json!(1), "one turn, its two runs together: {rows:#?}");
    let find = |kind: &str, label: &str| {
        rows.iter()
            .position(|row| row.kind == kind && row.label.contains(label))
            .unwrap_or_else(|| panic!("no {kind} row with `{label}` in {rows:#?}"))
    };
    // The waterfall, in order: the first run, its model call, its tool calls each with the hook
    // that governed it, the payment's wait; the resumed run, the payment, the answer.
    let order = [
        find("run", "awaiting_approval"),
        find("model", "scripted · step 1 · tool_calls"),
        find("tool", "lookup (call_look) · success"),
        find("hook", "timeline_policy → allow · before_tool_call · prompt:timeline_prompt"),
        find("tool", "wipe (call_wipe) · denied"),
        find("hook", "timeline_policy → deny · before_tool_call · prompt:timeline_prompt"),
        find("tool", "pay (call_pay) · waits for a person"),
        find("hook", "timeline_policy → ask · before_tool_call · prompt:timeline_prompt"),
        find("approval", "pay (call_pay) · waited "),
        find("run", "· idle"),
        find("tool", "pay (call_pay) · success"),
        // Steps count per run: the resumed run's model call is its step 1.
        find("model", "scripted · step 1 · stop"),
    ];
    assert!(order.windows(2).all(|pair| pair[0] < pair[1]), "out of order {order:?}: {rows:#?}");
    // Which hook denied what: the denial and the denied call stand out.
    assert!(rows[order[4]].class.contains("tl-denied") && rows[order[5]].class.contains("tl-denied"), "{rows:#?}");
    assert!(rows[order[8]].label.ends_with("· approved"), "{:?}", rows[order[8]]);
    // A hook run sits under the call that ran it, within its time.
    for (tool, hook) in [(2, 3), (4, 5), (6, 7)] {
        let (tool, hook) = (&rows[order[tool]], &rows[order[hook]]);
        assert_eq!(hook.within, Some(json!({ "toolCallId": tool.call.clone().unwrap() })), "{hook:?}");
        assert!(hook.start_us >= tool.start_us && hook.end_us() <= tool.end_us() + 1_000, "{tool:?} {hook:?}");
    }
    // Each run holds what it ran; the wait lies between the call that asked and the one that ran.
    let (first, second) = (&rows[order[0]], &rows[order[9]]);
    for &item in &order[1..9] {
        let item = &rows[item];
        if item.kind != "approval" {
            assert!(item.start_us >= first.start_us && item.end_us() <= first.end_us(), "{first:?} {item:?}");
        }
    }
    for &item in &order[10..] {
        assert!(rows[item].start_us >= second.start_us && rows[item].end_us() <= second.end_us(), "{:?}", rows[item]);
    }
    let wait = &rows[order[8]];
    assert_eq!(wait.start_us, rows[order[6]].end_us(), "the wait starts when the call asks");
    assert_eq!(wait.end_us(), rows[order[10]].start_us, "and ends when the approved call starts");
    // Durations: the lookup slept 150 ms; bars are placed by start and sized by duration.
    let lookup = &rows[order[2]];
    assert!(lookup.duration_us >= 150_000, "{lookup:?}");
    assert!(lookup.width > rows[order[4]].width, "the longer call has the longer bar: {rows:#?}");
    let mut by_start: Vec<&TimelineRow> = rows.iter().collect();
    by_start.sort_by_key(|row| row.start_us);
    assert!(by_start.windows(2).all(|pair| pair[0].left <= pair[1].left), "bars out of place: {rows:#?}");
    assert!(rows.iter().all(|row| row.left >= 0.0 && row.left + row.width <= 100.0 + 1e-6), "{rows:#?}");
    assert!(
        rows.iter().any(|row| row.kind == "hook" && row.label.contains("index_messages · after_create_message")),
        "{rows:#?}"
    );

    let section = client.find(Locator::Id("timeline-section")).await.expect("the timeline");
    let png = section.screenshot().await.expect("screenshot of the timeline");
    assert!(png.starts_with(b"\x89PNG"), "the screenshot is not a PNG");
    let path = screenshot_path().with_file_name("inspector-timeline.png");
    std::fs::write(&path, png).unwrap_or_else(|error| panic!("write {}: {error}", path.display()));
    println!("screenshot: {}", path.display());
}

/// A router without hook-run recording: the page shows the code that turns it on.
async fn check_hint(client: Client, base: String) {
    client.goto(&format!("{base}/inspect")).await.expect("open /inspect");
    client.find(Locator::Id("token")).await.expect("token field").send_keys(ALICE).await.expect("type the token");
    client.find(Locator::Id("connect")).await.expect("connect button").click().await.expect("connect");
    let hint = client.find(Locator::Id("hook-runs-hint")).await.expect("the hint box");
    let deadline = Instant::now() + PATIENCE;
    while !hint.is_displayed().await.unwrap() {
        assert!(Instant::now() < deadline, "no hint that hook runs are not recorded");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let text = hint.text().await.unwrap();
    assert!(text.contains("no ServerConfig::hook_runs"), "{text}");
    for code in
        ["HookRuns::new()", ".with(runs.layer())", "hook_runs: Some(runs)", "router_with(runtime, auth, config)"]
    {
        assert!(text.contains(code), "the hint lacks `{code}`: {text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspector_shows_hook_table_live_events_and_hook_runs_in_chromium() {
    let config = ServerConfig::default().hook_runs(Some(support::hook_runs()));
    let server = Server::start(runtime(), config).await;
    let (status, body) = server.call(reqwest::Method::PUT, "/user/values/units", ALICE, Some(r#""metric""#)).await;
    assert_eq!(status, 204, "{body}");
    // Mounted as docs/serving.md shows it, with no hook-run recording: the page says what to add.
    let plain = Server::start(runtime(), ServerConfig::default()).await;

    let mut driver = ChromeDriver::start();
    driver.ready().await;
    let profile = Profile::new();
    let client = browser(&driver, &profile).await;
    // The checks run apart so that the browser is closed whatever they find.
    let checked = tokio::spawn(check_page(client.clone(), server.base.clone())).await;
    let checked = match checked {
        Ok(()) => tokio::spawn(check_hint(client.clone(), plain.base.clone())).await,
        failed => failed,
    };
    let _ = client.close().await;
    if let Err(error) = checked {
        std::panic::resume_unwind(error.into_panic());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a6_approvals_are_decided_from_the_page_in_chromium() {
    let server = Server::start(payment_runtime(), ServerConfig::default()).await;
    in_chromium(|client| check_approvals(client, server.base.clone())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a9_a_remembered_approval_is_made_listed_and_revoked_from_the_page_in_chromium() {
    let server = Server::start(remembering_runtime(), ServerConfig::default()).await;
    in_chromium(|client| check_remembered(client, server.base.clone())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn g12_an_interrupted_call_shows_as_interrupted_in_chromium() {
    use hooks_runtime::approvals::{ApprovalState, ToolCallChange};
    let runtime = payment_runtime();
    let store = runtime.store().clone();
    let server = Server::start(runtime, ServerConfig::default()).await;
    // The prompt's `{{payer}}` needs its argument.
    let body = r#"{"agent":"payment_agent","arguments":{"payer":"Alice"}}"#;
    let (status, created) = server.post("/threads", ALICE, body).await;
    assert_eq!(status, 201, "{created}");
    let thread = created["id"].as_str().expect("thread id").to_owned();
    let mut stream = server.stream(&format!("/threads/{thread}/events"), ALICE, None).await;
    let (status, body) = server.post(&format!("/threads/{thread}/messages"), ALICE, r#"{"content":"Pay."}"#).await;
    assert_eq!(status, 202, "{body}");
    stream.until("run_finished").await;
    // What a process that died while running the approved call_1 leaves in the store.
    let approvals = store.approvals().expect("the in-memory store keeps approvals");
    let approved = ToolCallChange::new("call_1", ApprovalState::Pending, ApprovalState::Approved);
    assert!(approvals.advance_tool_call(&thread, &approved).await.unwrap());
    let running = ToolCallChange::new("call_1", ApprovalState::Approved, ApprovalState::Running);
    assert!(approvals.advance_tool_call(&thread, &running).await.unwrap());

    in_chromium(|client| check_interrupted(client, server.base.clone(), thread)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v4_a_turn_shows_as_a_timeline_of_runs_model_calls_tool_calls_approvals_and_hook_runs_in_chromium() {
    let config = ServerConfig::default().hook_runs(Some(support::hook_runs()));
    let server = Server::start(timeline_runtime(), config).await;
    in_chromium(|client| check_timeline(client, server.base.clone())).await;
}

/// How long the payment waits for the other process's decision.
const WAIT: Duration = Duration::from_millis(400);

/// V4 across processes on one SQLite file (two runtimes in this test, each with its own store
/// connection, as two processes have): the server runs a turn whose payment waits; the other
/// runtime approves and resumes the turn, so the server sees only what the store shares; then
/// the server runs the next message. Opened by a deep link (token and thread in the fragment),
/// the page draws the wait up to the stored result (not 0 µs), the other process's run marked
/// as not timed here, and the next message's run as a turn of its own.
async fn check_timeline_across_processes(client: Client, base: String, thread: String) {
    client.goto(&format!("{base}/inspect#token={ALICE}&thread={thread}")).await.expect("open the deep link");
    let deadline = Instant::now() + PATIENCE;
    let rows = loop {
        let rows = timeline_rows(&client).await;
        if rows.iter().filter(|row| row.kind == "run").count() == 3
            && rows.iter().any(|row| row.kind == "model" && row.label.ends_with("· stop"))
        {
            break rows;
        }
        assert!(Instant::now() < deadline, "the timeline of the three runs never showed: {rows:#?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let shown = client.execute("return document.getElementById('thread-id').textContent", vec![]).await;
    assert_eq!(shown.expect("the open thread"), json!(thread), "the fragment's thread is open");
    let headings = client
        .execute("return [...document.querySelectorAll('#timeline .tl-turn h3')].map(h => h.textContent)", vec![])
        .await
        .expect("the turns' headings");
    let headings: Vec<String> = serde_json::from_value(headings).expect("strings");
    assert_eq!(headings.len(), 2, "the next message's run is a turn of its own: {headings:?} {rows:#?}");
    assert!(headings[0].ends_with("· 2 runs") && headings[1].ends_with("· 1 run"), "{headings:?}");
    let find = |kind: &str, label: &str| {
        rows.iter()
            .position(|row| row.kind == kind && row.label.contains(label))
            .unwrap_or_else(|| panic!("no {kind} row with `{label}` in {rows:#?}"))
    };
    let order = [
        find("run", "awaiting_approval"),
        find("tool", "pay (call_pay) · waits for a person"),
        find("approval", "pay (call_pay) · approved in another process · result stored after "),
        find("run", "a run of another process · not timed here: drawn from its 2 stored messages"),
        find("run", "· idle"),
        find("model", "scripted · step 1 · stop"),
    ];
    assert!(order.windows(2).all(|pair| pair[0] < pair[1]), "out of order {order:?}: {rows:#?}");
    let (asked, wait, elsewhere) = (&rows[order[1]], &rows[order[2]], &rows[order[3]]);
    assert_eq!(wait.start_us, asked.end_us(), "the wait starts when the call asks");
    assert!(
        wait.duration_us >= WAIT.as_micros() as u64,
        "the wait lasts at least as long as the decision took: {wait:?}"
    );
    assert_eq!(wait.end_us(), elsewhere.start_us, "and ends when the other process stored the call's result");
    assert!(elsewhere.class.contains("tl-elsewhere"), "{elsewhere:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v4_a_turn_resumed_by_another_process_shows_its_wait_and_the_next_message_starts_a_turn_in_chromium() {
    let dir = std::env::temp_dir().join(format!("hooks-inspector-processes-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("threads.db");
    let asks = ScriptedResponse::tool_call("call_pay", "pay", r#"{"amount":40}"#);
    let script = vec![asks, ScriptedResponse::text("Noted.")];
    let config = ServerConfig::default().hook_runs(Some(support::hook_runs()));
    let server = Server::start(sqlite_timeline_runtime(&db, script), config).await;
    let thread = server.create_thread(ALICE, "timeline_agent").await;
    let mut stream = server.stream(&format!("/threads/{thread}/events"), ALICE, None).await;
    let (status, body) = server.post(&format!("/threads/{thread}/messages"), ALICE, r#"{"content":"Pay it."}"#).await;
    assert_eq!(status, 202, "{body}");
    let events = stream.until("run_finished").await;
    assert_eq!(events.last().unwrap().data["status"], "awaiting_approval", "{events:#?}");

    // The other process decides after a while, and resumes the turn there.
    tokio::time::sleep(WAIT).await;
    let other = sqlite_timeline_runtime(&db, vec![ScriptedResponse::text("Paid.")]);
    let outcome = other.open_thread(&thread).await.unwrap().approve("call_pay").await.unwrap();
    assert_eq!(outcome.reply.as_deref(), Some("Paid."), "{outcome}");
    while !stream.until("status").await.iter().any(|event| event.data["status"] == "idle") {}

    // The next message runs on the server.
    let (status, body) = server.post(&format!("/threads/{thread}/messages"), ALICE, r#"{"content":"Thanks."}"#).await;
    assert_eq!(status, 202, "{body}");
    let events = stream.until("run_finished").await;
    assert_eq!(events.last().unwrap().data["status"], "idle", "{events:#?}");

    let mut driver = ChromeDriver::start();
    driver.ready().await;
    let profile = Profile::new();
    let client = browser(&driver, &profile).await;
    let checked = tokio::spawn(check_timeline_across_processes(client.clone(), server.base.clone(), thread)).await;
    let _ = client.close().await;
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(error) = checked {
        std::panic::resume_unwind(error.into_panic());
    }
}

/// A message row's text without the decision record the inspector shows under a tool result
/// (`admission: N answers` and its entries).
fn without_admission(text: &str) -> &str {
    text.split_once("admission: ").map_or(text, |(content, _)| content)
}
