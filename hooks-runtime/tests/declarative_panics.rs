//! A panicking declarative executor goes the runtime's one panic path (E4, E5): the panic is
//! caught, logged at ERROR by its location only, and never reaches the application's panic hook
//! (its message may carry the tool's arguments). A test binary of its own: it sets the
//! process's panic hook, which no other test may race.

#![cfg(feature = "declarative")]

mod declarative_support;

use std::sync::{Arc, Mutex};

use declarative_support::{Logs, TestAgent, journal};
use hooks_runtime::declarative::{DeclarativeHookRegistry, HookAction, HookConfig, HookEvent, LOG_TARGET, executor_fn};

#[tokio::test]
async fn e5_an_executor_panic_is_logged_by_location_and_its_message_reaches_neither_log_nor_panic_hook() {
    // The application's panic hook, set before the registry runs as an application would.
    let printed: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = Arc::clone(&printed);
    std::panic::set_hook(Box::new(move |info| sink.lock().unwrap().push(info.to_string())));

    let (logs, _guard) = Logs::capture();
    let registry = DeclarativeHookRegistry::of([
        HookConfig::new(HookEvent::PreToolUse, None, HookAction::log("explode")),
        HookConfig::new(HookEvent::PreToolUse, None, HookAction::log("fine")),
    ])
    .with_executor(executor_fn(|action, context| {
        if action.template() == "explode" {
            panic!("executor bug with {}", context.get("args").map_or("", String::as_str));
        }
    }));
    let agent = TestAgent::new("a1", &["read"], journal());
    registry.apply_to(&agent).await;
    assert!(agent.call_tool("read", || Ok(String::new())).await.is_ok(), "the tool call goes on");

    let errors = logs.events("ERROR");
    assert_eq!(errors.len(), 1, "{}", logs.text());
    assert!(errors[0].contains(&format!("{LOG_TARGET}: [HOOK] log action panicked at ")), "{}", errors[0]);
    assert!(errors[0].contains("declarative_panics.rs:"), "the location: {}", errors[0]);
    assert!(!logs.text().contains("executor bug"), "the payload is not logged: {}", logs.text());
    let printed = printed.lock().unwrap().clone();
    let _ = std::panic::take_hook();
    assert!(printed.is_empty(), "the application's panic hook saw the executor's panic: {printed:?}");
}
