//! The application's own panic hook for the panic-output suites, each alone in its binary (it
//! sets the process-wide panic hook): it records every panic message that reaches it.

use std::sync::{Mutex, PoisonError};

static SEEN_BY_APP_HOOK: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn payload_text(info: &std::panic::PanicHookInfo<'_>) -> String {
    let payload = info.payload();
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|text| (*text).to_owned()))
        .unwrap_or_default()
}

/// Sets the recording hook, as an application would before building its runtime.
pub(crate) fn set_recording_hook() {
    std::panic::set_hook(Box::new(|info| {
        SEEN_BY_APP_HOOK.lock().unwrap_or_else(PoisonError::into_inner).push(payload_text(info));
    }));
}

/// Fails if a message holding `secret` reached the hook (the `whose` panic escaped), or if an
/// application panic, raised here, does not reach it.
pub(crate) fn assert_only_the_application_panic_reached_the_hook(secret: &str, whose: &str) {
    let _ = std::panic::catch_unwind(|| panic!("an application panic"));
    let seen = SEEN_BY_APP_HOOK.lock().unwrap_or_else(PoisonError::into_inner).clone();
    assert!(seen.iter().all(|text| !text.contains(secret)), "{whose} panic message escaped: {seen:?}");
    assert!(seen.iter().any(|text| text == "an application panic"), "the application's hook was bypassed: {seen:?}");
}
