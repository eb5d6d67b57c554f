//! What must hold for any input to the settings-format loader. Shared by the stable fuzz loop
//! (`tests/declarative_fuzz.rs`) and the cargo-fuzz target (`fuzz/`).

use hooks_runtime::declarative::{MAX_DOCUMENT_BYTES, SettingsHooks, SettingsReport};

/// Runs every settings loader entry point on `data`; panics (with a message) when they disagree.
///
/// - None panics; the reader and the string loaders agree.
/// - The strict loader succeeds exactly when there is no problem, and then keeps the same hooks;
///   otherwise it returns exactly the report's problems.
/// - A rejected document keeps nothing; kept hooks have distinct locations and a positive
///   timeout, and one that can run has a command; one that cannot run comes with a problem;
///   everything renders.
pub(crate) fn check_settings_loader(data: &[u8]) {
    let from_reader = SettingsReport::from_reader(data);
    let Ok(text) = std::str::from_utf8(data) else {
        assert!(from_reader.has_document_problem(), "bytes that are not UTF-8 were accepted");
        return;
    };
    let report = SettingsReport::from_json(text);
    if data.len() as u64 <= MAX_DOCUMENT_BYTES {
        assert_eq!(report, from_reader, "reader and string loaders disagree");
    }
    let lenient = SettingsHooks::from_json(text);
    assert_eq!(lenient.hooks(), report.kept.as_slice(), "lenient loader and report disagree");
    match SettingsHooks::from_json_strict(text) {
        Ok(strict) => {
            assert!(report.problems.is_empty(), "strict loader accepted a document with problems");
            assert_eq!(strict.hooks(), lenient.hooks(), "strict and lenient loaders disagree");
        }
        Err(errors) => {
            assert_eq!(errors.problems(), report.problems.as_slice(), "strict errors are not the problems");
            let _ = errors.to_string();
        }
    }
    if report.has_document_problem() {
        assert!(report.kept.is_empty(), "a rejected document kept hooks");
    }
    let mut locations: Vec<&str> = report.kept.iter().map(|hook| hook.location()).collect();
    locations.sort_unstable();
    assert!(locations.windows(2).all(|w| w[0] != w[1]), "two kept hooks at one location: {locations:?}");
    for hook in &report.kept {
        if hook.cannot_run().is_none() {
            assert!(!hook.command().trim().is_empty(), "a hook without a command can run");
        } else {
            assert!(!report.problems.is_empty(), "a hook that cannot run, and no problem said");
        }
        assert!(!hook.timeout().is_zero(), "a hook with no time to run was kept");
        let _ = hook.to_string();
        let _ = hook.matcher().matches("Bash");
    }
    for problem in &report.problems {
        let _ = problem.to_string();
    }
    let _ = SettingsReport::is_settings_document(text);
}
