//! What must hold for any input to the declarative hooks YAML loader. Shared by the stable
//! fuzz loop (`tests/declarative_fuzz.rs`) and the cargo-fuzz target (`fuzz/`), so that both
//! check the same things.

use hooks_runtime::declarative::{DeclarativeHookRegistry, LoadReport, MAX_DOCUMENT_BYTES};

/// Runs every loader entry point on `data`; panics (with a message) when they disagree.
///
/// - None panics; the lenient loader and the reader agree on what a document holds.
/// - The strict loader succeeds exactly when there is no problem, and then keeps the same
///   hooks; otherwise it returns exactly the report's problems.
/// - A skipped entry has no warning and is not kept; kept entries are in document order.
/// - Problems, warnings and hooks render without panicking; problems name no parser internals
///   (`<input>`, `DuplicateKeyPolicy`).
pub(crate) fn check_loader(data: &[u8]) {
    // Raw bytes exercise the UTF-8 and size checks of the reader path.
    let from_reader = DeclarativeHookRegistry::from_yaml_reader(data);
    let Ok(text) = std::str::from_utf8(data) else { return };
    let lenient = DeclarativeHookRegistry::from_yaml(text);
    if data.len() as u64 <= MAX_DOCUMENT_BYTES {
        assert_eq!(lenient.hooks(), from_reader.hooks(), "reader and string loaders disagree");
    }
    let report = LoadReport::from_yaml(text);
    match DeclarativeHookRegistry::from_yaml_strict(text) {
        Ok(strict) => {
            assert!(report.problems.is_empty(), "strict loader accepted a document with problems");
            assert_eq!(strict.hooks(), lenient.hooks(), "strict and lenient loaders keep different hooks");
        }
        Err(errors) => assert_eq!(errors.problems(), report.problems.as_slice(), "strict errors are not the problems"),
    }
    let skipped = report.skipped_entries();
    let kept: Vec<usize> = report.kept.iter().map(|k| k.index).collect();
    assert!(kept.windows(2).all(|w| w[0] < w[1]), "kept entries out of order: {kept:?}");
    for index in &kept {
        assert!(!skipped.contains(index), "entry #{index} is both kept and skipped");
    }
    for warning in &report.warnings {
        if let Some(index) = warning.entry() {
            assert!(kept.contains(&index), "a warning for entry #{index}, which was not kept");
        }
        let _ = warning.to_string();
    }
    if report.has_document_problem() {
        assert!(report.kept.is_empty(), "a rejected document kept hooks");
    }
    for problem in &report.problems {
        let text_of_problem = problem.to_string();
        // Messages name no parser internals: callers put the file name in, and the hints are ours.
        for internal in ["<input>", "DuplicateKeyPolicy", "Options"] {
            assert!(
                text.contains(internal) || !text_of_problem.contains(internal),
                "a message shows the parser's {internal:?}: {text_of_problem}"
            );
        }
    }
    for kept in &report.kept {
        let _ = kept.config.to_string();
    }
}
