//! Runs every example program in its default, scripted mode and checks that it succeeds and
//! prints what it is meant to show, so `cargo test --workspace` keeps the examples working.
//! Two more run an example against a local fake OpenAI-compatible endpoint, to cover
//! `--base-url` and a failed run (which must exit non-zero and say why). The fake endpoint
//! refuses a request whose messages a real provider would refuse (R9), as the scripted model
//! does for the default runs.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

/// A temp directory of its own for one run: the tour's database and the declarative example's
/// log file go there (through `TMPDIR`), so parallel runs never share a file.
fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("examples-run-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create a scratch directory");
    dir
}

/// Runs an example in its own scratch directory, whatever its exit status.
fn run_raw(exe: &str, name: &str, args: &[&str]) -> Output {
    run_in_env(exe, name, args, &[])
}

/// [`run_raw`] with these environment variables set (and no other `OPENAI_` variable).
fn run_in_env(exe: &str, name: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let dir = scratch_dir(name);
    let output: Output = Command::new(exe)
        .args(args)
        .env("TMPDIR", &dir)
        .env_remove("RUST_LOG")
        .env_remove("OPENAI_MODEL")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_API_KEY")
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|error| panic!("could not start {name}: {error}"));
    let _ = std::fs::remove_dir_all(&dir);
    output
}

fn run_with(exe: &str, name: &str, args: &[&str]) -> String {
    let output = run_raw(exe, name, args);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{name} exited with {}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        output.status
    );
    assert!(!stdout.contains("[Hooks] ✗"), "{name}: a hook failed\n{stdout}");
    assert!(!stdout.contains("WARN") && !stdout.contains("ERROR"), "{name}: logged a problem\n{stdout}");
    stdout
}

fn run(exe: &str, name: &str) -> String {
    run_with(exe, name, &[])
}

/// Each expected piece appears, in this order.
fn assert_in_order(output: &str, expected: &[&str]) {
    let mut rest = output;
    for piece in expected {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => panic!("expected {piece:?} (after the pieces before it) in:\n{output}"),
        }
    }
}

#[test]
fn duplicate_finder() {
    let out = run(env!("CARGO_BIN_EXE_duplicate_finder"), "duplicate_finder");
    assert_in_order(
        &out,
        &[
            "model: scripted model (no network)",
            "agent: #42 duplicates #17",
            "get_github_issue (call_1) success:",
            "Write to [email redacted] if you need logs.",
            "Reported by [email redacted] for the support team [email redacted]",
            "The canned issues hold 4 email addresses; stored tool results still holding one: 0.",
            "#42  closed  Crash on save with an emoji in the file name, comment \"Duplicate of #17\"",
        ],
    );
    assert!(!out.contains("example.org") && !out.contains("maria.lopez"), "an address escaped:\n{out}");
}

#[test]
fn tour() {
    let out = run(env!("CARGO_BIN_EXE_tour"), "tour");
    assert_in_order(
        &out,
        &[
            "Agent hooks tour",
            "=== 1. The run",
            "you:   Is octo-org/widgets#42",
            "  hook redact_emails",
            "agent: #42 duplicates #17",
            "=== 2. The stored conversation",
            "10. assistant",
            "[email redacted]",
            "=== 3. The agent's hooks (hooks_runtime::explain)",
            "agent duplicate_finder",
            "before_store_tool_result",
            "1. redact_emails            prompt duplicate_finder",
            "=== 4. The database",
            "agent-hooks-tour-",
            "messages: 10 stored",
        ],
    );
    let hook_lines: Vec<&str> = out.lines().filter(|line| line.starts_with("  hook ")).collect();
    assert_eq!(hook_lines.len(), 4, "one line per stored tool result:\n{out}");
    for line in hook_lines {
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(fields[..4], ["hook", "redact_emails", "before_store_tool_result", "prompt:duplicate_finder"]);
        assert_eq!(fields[5], "ms", "{line}");
        assert!(fields[4].parse::<f64>().is_ok(), "a duration in ms: {line}");
    }
}

#[test]
fn parent_hooks() {
    let out = run(env!("CARGO_BIN_EXE_parent_hooks"), "parent_hooks");
    assert_in_order(
        &out,
        &[
            "agent coordinator",
            "after_system_message",
            "1. mail_context             child mail_agent (as mail_agent, crate examples), before_parent: Shows newly synchronized mail to the coordinator.",
            "agent mail_agent",
            "requires of its parents",
            "mail_context             before_parent (after_system_message)",
            "=== Turn 1",
            "coordinator  You coordinate the user's assistants.",
            "=== Turn 2",
            "agent: Yes: ACME's invoice #881 is overdue.",
            "coordinator  You coordinate the user's assistants. Ask mail_agent about anything in the mailbox.⏎⏎Mailbox: 3 new messages",
            "mail_agent   You read and summarize the mailbox.",
        ],
    );
    let turn_1 = &out[out.find("=== Turn 1").unwrap()..out.find("=== Turn 2").unwrap()];
    assert!(!turn_1.contains("Mailbox:"), "no summary yet, no change:\n{turn_1}");
    for line in out.lines().filter(|line| line.starts_with("  mail_agent ")) {
        assert!(!line.contains("Mailbox:"), "the requirement binds the parent only: {line}");
    }
}

#[test]
fn context_limits() {
    let out = run(env!("CARGO_BIN_EXE_context_limits"), "context_limits");
    assert_in_order(
        &out,
        &[
            "28 messages are stored. The last request, before the final reply, carried the system message and 18 of them.",
            "  7       user       Can I return an item?",
            "  8 sent  assistant  Within 30 days.",
            " 21 sent  user       Where is my order 1234?",
            " 22       assistant  calls lookup_order {\"order_id\":\"1243\"}",
            " 23       tool       lookup_order (call_1) error: no order 1243",
            " 24 sent  assistant  calls lookup_order {\"order_id\":\"1234\"}",
            " 25 sent  tool       lookup_order (call_2) success:",
            "=== The last request, as the model received it",
            "  system     You help customers",
            "  assistant  Within 30 days.",
        ],
    );
    let last_request = &out[out.find("=== The last request").unwrap()..];
    assert!(!last_request.contains("1243"), "the failed call left with its result:\n{last_request}");
}

#[test]
fn tool_telemetry() {
    let out = run(env!("CARGO_BIN_EXE_tool_telemetry"), "tool_telemetry");
    assert_in_order(
        &out,
        &[
            "▸ read_file: src/parser.rs",
            "arguments streamed so far: \"{\\\"path\\\":\\\"src/parser.rs\\\"",
            "▸ run_tests",
            "arguments streamed so far: \"\"",
            "■ read_file success",
            "■ run_tests error",
            "2 of 14 tests failed",
            "=== The thread's events",
            r#"{"type":"tool_call_started","id":"call_1","name":"read_file","progress":"src/parser.rs"}"#,
            r#"{"type":"tool_call_started","id":"call_2","name":"run_tests","progress":null}"#,
            r#"{"type":"tool_call_done","id":"call_1","name":"read_file","status":"success"}"#,
            r#"{"type":"tool_call_done","id":"call_2","name":"run_tests","status":"error"}"#,
        ],
    );
}

#[test]
fn approvals() {
    let out = run(env!("CARGO_BIN_EXE_approvals"), "approvals");
    assert_in_order(
        &out,
        &[
            "First process: the run stops at the payment",
            "status: awaiting_approval",
            "stored result of call_clean: the tool call was denied by `no_destructive_commands`",
            "waiting: call_pay pay",
            "a payment of 250 is over the limit of 100",
            "this process exits; another one decides",
            "Second process: a person approves the payment",
            "status: awaiting_approval",
            "waiting: call_pay",
            "the person sees pay",
            "refused: the decision on `call_pay` is stale",
            "(the payment tool runs: 250 to ACME)",
            "agent: The cache was not cleared",
            "call_clean: the tool call was denied",
            "call_pay: paid 250 to ACME",
            "call_disk: ran `df -h`",
            "A remembered approval answers the next payment to ACME",
            "(the payment tool runs: 180 to ACME)",
            "status: idle",
            "agent: ACME's second invoice is paid.",
            "  before_tool_call: ask by large_payments_need_a_person",
            "  remembered_approvals: allow by ra_",
            "answered by remembered approval ra_",
            "(always, pay(ACME))",
            "Listed, revoked: the next payment waits for a person again",
            "remembered: ra_",
            " always pay pay(ACME)",
            ": true",
            "status: awaiting_approval",
            r#"waiting: call_pay_3 pay {"amount":120,"to":"ACME"}"#,
        ],
    );
}

#[test]
fn error_alerting() {
    let out = run(env!("CARGO_BIN_EXE_error_alerting"), "error_alerting");
    assert_in_order(
        &out,
        &[
            "🚨 ALERT [critical] Payment tool failed: card declined (code 51: insufficient funds) (thread thread_",
            "agent: I could not pay INV-7",
            "lookup_invoice (call_1) error: no invoice INV-9",
            "payment_process (call_3) error: card declined (code 51: insufficient funds)",
            "Failed tool calls: lookup_invoice, payment_process",
            "Alerts sent: 1",
        ],
    );
    assert_eq!(out.matches("ALERT [").count(), 1, "{out}");
}

#[test]
fn message_metadata() {
    let out = run(env!("CARGO_BIN_EXE_message_metadata"), "message_metadata");
    assert_in_order(
        &out,
        &[
            "agent: It is 18 °C and sunny in Lisbon.",
            "step  side  flow_id",
            "0     a     flow_",
            "user       What's the weather in Lisbon?",
            "1     a     flow_",
            "assistant  calls get_weather",
            "1     a     flow_",
            "tool       get_weather (call_1) success",
            "2     a     flow_",
            "assistant  It is 18 °C",
            "-     -     -                               user       (a note added at rest)",
            r#"The first message's stored field: "metadata": "{\"flow_id\":\"flow_"#,
        ],
    );
}

#[test]
fn declarative_hooks() {
    let out = run(env!("CARGO_BIN_EXE_declarative_hooks"), "declarative_hooks");
    assert_in_order(
        &out,
        &[
            "onStart matcher=- log \"hooks attached to agent ${agent}\"",
            "preToolUse matcher=file_* log \"${tool} starting\"",
            "[HOOK] hooks attached to agent notes_agent",
            "[HOOK] list_dir took",
            "[HOOK] file_read starting",
            "[HOOK] file_read took",
            "success=false",
            "[HOOK] file_write starting",
            "agent: Done:",
            "[HOOK] agent notes_agent stopped",
            "file_read failed: no such file: notes/done.md",
            "file_write finished in",
            "file_write finished in",
            "notes/done.md: \"- [x] buy milk\\n\"",
        ],
    );
    assert!(!out.contains("list_dir starting"), "the matcher `file_*` leaves list_dir out:\n{out}");
}

#[test]
fn settings_hooks() {
    let out = run(env!("CARGO_BIN_EXE_settings_hooks"), "settings_hooks");
    assert_in_order(
        &out,
        &[
            "hooks.PreToolUse[0].hooks[0] PreToolUse matcher=Bash command \"\\\"$CLAUDE_PROJECT_DIR\\\"/settings/guard.sh\" timeout=10s fails closed",
            "waits: Bash {\"command\":\"git push --force origin main\"} (settings:hooks.PreToolUse[0].hooks[0]: a force push rewrites shared history: a person decides)",
            "you:   approve call_3",
            "tool success (would run) ls target",
            "tool error   the tool call was denied by `settings:hooks.PreToolUse[0].hooks[0]`: rm -rf is not allowed here; delete files one by one",
            "tool success (would run) git push --force origin main",
            "tool success (would run) git status",
            "agent: I listed target/, force-pushed once you approved",
        ],
    );
}

#[test]
fn settings_json_loads_without_a_problem() {
    let hooks = hooks_runtime::declarative::SettingsHooks::from_json_strict(include_str!("../settings/settings.json"))
        .expect("examples/settings/settings.json loads strictly");
    assert_eq!(hooks.hooks().len(), 1);
}

/// Needs the pinned MCP servers (`.ci/mcp/install`), so it runs with the test feature
/// `mcp-tests` (`cargo test -p examples --features mcp-tests --test examples_run -- mcp_tools`);
/// without the servers the example says so and this fails.
#[cfg(feature = "mcp-tests")]
#[test]
fn mcp_tools() {
    let out = run(env!("CARGO_BIN_EXE_mcp_tools"), "mcp_tools");
    assert_in_order(
        &out,
        &[
            "progress call_4: 1 of 3",
            "progress call_4: 2 of 3",
            "tool success mcp__everything__echo Echo: hello from the runtime",
            "tool success mcp__everything__get-sum The sum of 2 and 40 is 42.",
            "tool error   mcp__everything__get-env the tool call was denied by `no_env_to_the_model`",
            "tool success mcp__everything__trigger-long-running-operation Long running operation completed.",
            "tool error   mcp__everything__echo the tool call was denied by `settings:hooks.PreToolUse[0].hooks[0]`: no secrets are sent to MCP servers",
            "tool success mcp__everything__get-tiny-image Here's the image you requested: | [image: mcp__everything__get-tiny-image-1.png]",
            "everything (stdio): Ready, started 1 time(s)",
        ],
    );
}

#[test]
fn hooks_yaml_loads_without_a_problem() {
    let hooks = hooks_runtime::declarative::DeclarativeHookRegistry::from_yaml_strict(include_str!("../hooks.yaml"))
        .unwrap_or_else(|errors| panic!("examples/hooks.yaml: {errors}"));
    assert_eq!(hooks.hooks().len(), 6);
}

#[test]
fn bad_option_exits_with_usage() {
    let output = Command::new(env!("CARGO_BIN_EXE_tour")).arg("--nope").output().expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("unknown option `--nope`"));
}

/// What the fake endpoint answers a valid request with.
enum Reply {
    /// An event stream of these `data:` chunks, then `[DONE]`.
    Stream(Vec<&'static str>),
    /// An HTTP error status with this JSON body.
    Error(u16, &'static str),
}

/// A one-thread HTTP server that answers each `POST /v1/chat/completions` with the next
/// scripted reply, and keeps each request (head and body). Like a provider, it answers a request
/// whose messages are not a valid sequence (R9) with HTTP 400 instead.
fn fake_endpoint(responses: Vec<Reply>) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a local port");
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let recorded = seen.clone();
    std::thread::spawn(move || {
        for (stream, chunks) in listener.incoming().zip(responses) {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut head = String::new();
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = value.trim().parse().unwrap_or(0);
                }
                head.push_str(&line);
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            recorded.lock().unwrap().push(format!("{head}\n{}", String::from_utf8_lossy(&body)));
            let reply = match (provider_check(&body), chunks) {
                (Err(reason), _) => http_error(400, &serde_json::json!({"error": {"message": reason}}).to_string()),
                (Ok(()), Reply::Error(status, body)) => http_error(status, body),
                (Ok(()), Reply::Stream(chunks)) => {
                    let mut reply =
                        String::from("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n");
                    for chunk in chunks {
                        reply.push_str(&format!("data: {chunk}\n\n"));
                    }
                    reply.push_str("data: [DONE]\n\n");
                    reply
                }
            };
            let _ = stream.write_all(reply.as_bytes());
        }
    });
    (url, seen)
}

/// The request body's messages checked as a provider checks them.
fn provider_check(body: &[u8]) -> Result<(), String> {
    let request: serde_json::Value = serde_json::from_slice(body).map_err(|e| format!("the body is not JSON: {e}"))?;
    let messages: Vec<hooks_runtime::types::LlmMessage> = serde_json::from_value(request["messages"].clone())
        .map_err(|e| format!("`messages` is not a list of messages: {e}"))?;
    hooks_runtime::model::ScriptedModel::check_messages(&messages)
}

fn http_error(status: u16, body: &str) -> String {
    format!(
        "HTTP/1.1 {status} Error\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

#[test]
fn the_fake_endpoint_refuses_what_a_provider_refuses() {
    let valid = br#"{"messages":[{"role":"user","content":"hi"}]}"#;
    assert_eq!(provider_check(valid), Ok(()));
    let orphan =
        br#"{"messages":[{"role":"user","content":"hi"},{"role":"tool","content":"42","tool_call_id":"call_1"}]}"#;
    assert!(provider_check(orphan).unwrap_err().contains("`call_1`"));
}

#[test]
fn a_failed_run_exits_non_zero_and_says_why() {
    // The first attempt and the client's two retries.
    let overloaded = || Reply::Error(500, r#"{"error":{"message":"the server is overloaded"}}"#);
    let (url, requests) = fake_endpoint(vec![overloaded(), overloaded(), overloaded()]);
    let args = ["--base-url", url.as_str(), "--model", "fake-model", "--api-key", "sk-test"];
    let output = run_raw(env!("CARGO_BIN_EXE_message_metadata"), "message_metadata_failing", &args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "stderr:\n{stderr}");
    assert!(
        stderr.contains(
            "the run failed (model_error) after 1 model step: model endpoint returned HTTP 500 (server error)"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("overloaded"), "the provider's text is logged, not in the error: {stderr}");
    assert_eq!(requests.lock().unwrap().len(), 3);
    assert!(!String::from_utf8_lossy(&output.stdout).contains("agent:"), "no empty reply is printed");
}

/// A one-reply conversation for the environment tests.
fn one_text_reply() -> Vec<Reply> {
    vec![Reply::Stream(vec![r#"{"choices":[{"index":0,"delta":{"content":"Sunny."},"finish_reason":"stop"}]}"#])]
}

#[test]
fn openai_model_never_overrides_an_explicit_model() {
    let (url, requests) = fake_endpoint(one_text_reply());
    let args = ["--base-url", url.as_str(), "--model", "mock-text"];
    let output = run_in_env(
        env!("CARGO_BIN_EXE_message_metadata"),
        "message_metadata_env_model",
        &args,
        &[("OPENAI_MODEL", "mock-500")],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains(&format!("model: mock-text at {url}")), "{stdout}");
    let requests = requests.lock().unwrap();
    assert!(requests[0].contains(r#""model":"mock-text""#), "{}", requests[0]);
}

#[test]
fn openai_base_url_alone_selects_the_endpoint() {
    let (url, requests) = fake_endpoint(one_text_reply());
    let env = [("OPENAI_BASE_URL", url.as_str()), ("OPENAI_MODEL", "env-model")];
    let output = run_in_env(env!("CARGO_BIN_EXE_message_metadata"), "message_metadata_env_url", &[], &env);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains(&format!("model: env-model at {url}")), "{stdout}");
    assert!(stdout.contains("agent: Sunny."), "{stdout}");
    let requests = requests.lock().unwrap();
    assert!(requests[0].contains(r#""model":"env-model""#), "{}", requests[0]);
}

#[test]
fn base_url_runs_on_an_openai_compatible_endpoint() {
    let (url, requests) = fake_endpoint(vec![
        Reply::Stream(vec![
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_x","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":\"Porto\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        ]),
        Reply::Stream(vec![
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"Porto: 18 °C, "}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"sunny."},"finish_reason":"stop"}]}"#,
        ]),
    ]);
    let args = ["--base-url", url.as_str(), "--model", "fake-model", "--api-key", "sk-test"];
    let out = run_with(env!("CARGO_BIN_EXE_message_metadata"), "message_metadata_endpoint", &args);
    assert_in_order(
        &out,
        &[
            &format!("model: fake-model at {url}"),
            "agent: Porto: 18 °C, sunny.",
            "tool       get_weather (call_x) success: {\"celsius\":18,\"city\":\"Porto\"",
        ],
    );
    let requests = requests.lock().unwrap();
    assert_eq!(requests.len(), 2);
    for request in requests.iter() {
        assert!(request.starts_with("POST /v1/chat/completions"), "{request}");
        assert!(request.to_ascii_lowercase().contains("authorization: bearer sk-test"), "{request}");
        assert!(request.contains(r#""model":"fake-model""#), "the --model name, not the prompt's: {request}");
    }
}

#[test]
fn approvals_runs_on_an_endpoint_that_makes_up_its_own_call_ids() {
    let call = |index: u32, id: &str, name: &str, arguments: &str| {
        format!(
            r#"{{"index":{index},"id":"{id}","type":"function","function":{{"name":"{name}","arguments":{}}}}}"#,
            serde_json::to_string(arguments).unwrap()
        )
    };
    let calls = [
        call(0, "call_Xq1", "shell", r#"{"command":"rm -rf /var/cache"}"#),
        call(1, "call_Xq2", "pay", r#"{"amount":250,"to":"ACME"}"#),
        call(2, "call_Xq3", "shell", r#"{"command":"df -h"}"#),
    ];
    let first = format!(
        r#"{{"choices":[{{"index":0,"delta":{{"role":"assistant","tool_calls":[{}]}},"finish_reason":"tool_calls"}}]}}"#,
        calls.join(",")
    );
    let pay = |id: &str, amount: u32| {
        let call = call(0, id, "pay", &format!(r#"{{"amount":{amount},"to":"ACME"}}"#));
        let chunk = format!(
            r#"{{"choices":[{{"index":0,"delta":{{"role":"assistant","tool_calls":[{call}]}},"finish_reason":"tool_calls"}}]}}"#
        );
        Reply::Stream(vec![Box::leak(chunk.into_boxed_str())])
    };
    // The tool calls for the first process; for the second, the answer, then a payment that a
    // remembered approval answers and its answer, then one that waits again.
    let (url, requests) = fake_endpoint(vec![
        Reply::Stream(vec![Box::leak(first.into_boxed_str())]),
        Reply::Stream(vec![r#"{"choices":[{"index":0,"delta":{"content":"ACME is paid."},"finish_reason":"stop"}]}"#]),
        pay("call_Xq4", 180),
        Reply::Stream(vec![r#"{"choices":[{"index":0,"delta":{"content":"Paid again."},"finish_reason":"stop"}]}"#]),
        pay("call_Xq5", 120),
    ]);
    let args = ["--base-url", url.as_str(), "--model", "fake-model", "--api-key", "sk-test"];
    let out = run_with(env!("CARGO_BIN_EXE_approvals"), "approvals_endpoint", &args);
    assert_in_order(
        &out,
        &[
            "waiting: call_Xq2 pay",
            "Second process",
            "(the payment tool runs: 250 to ACME)",
            "agent: ACME is paid.",
            "call_Xq2: paid 250 to ACME",
            "(the payment tool runs: 180 to ACME)",
            "agent: Paid again.",
            "waiting: call_Xq5 pay",
        ],
    );
    assert_eq!(requests.lock().unwrap().len(), 5);
}

/// Needs `--features postgres` and the server `HOOKS_DATABASE_URL` names (default the local one).
#[cfg(feature = "postgres")]
#[test]
fn scale_out_leaves_no_schema_and_logs_no_notice() {
    // Twice: the second run meets no schema of the first, and each run's second store finds
    // the schema its first created, which once logged PostgreSQL's NOTICE at INFO.
    for round in ["scale_out_1", "scale_out_2"] {
        let output = run_in_env(env!("CARGO_BIN_EXE_scale_out"), round, &[], &[("RUST_LOG", "info")]);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
        assert!(stdout.contains("B takes the lease after A's run released it"), "{stdout}");
        assert!(stdout.contains("dropped the schema `hooks_scale_out_example`"), "{stdout}");
        assert!(!stdout.contains("NOTICE"), "{stdout}");
    }
}
