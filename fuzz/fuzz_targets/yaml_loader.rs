//! Feeds arbitrary bytes to every entry point of the declarative hooks YAML loader: none may
//! panic, and the lenient and strict loaders must agree on what a document holds.

#![no_main]

use hooks_runtime::declarative::{DeclarativeHookRegistry, LoadReport};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Raw bytes exercise the UTF-8 and size checks of the reader path.
    let from_reader = DeclarativeHookRegistry::from_yaml_reader(data);
    if let Ok(text) = std::str::from_utf8(data) {
        let lenient = DeclarativeHookRegistry::from_yaml(text);
        if data.len() as u64 <= hooks_runtime::declarative::MAX_DOCUMENT_BYTES {
            assert_eq!(lenient.hooks(), from_reader.hooks());
        }
        let report = LoadReport::from_yaml(text);
        match DeclarativeHookRegistry::from_yaml_strict(text) {
            Ok(strict) => {
                assert!(report.problems.is_empty());
                assert_eq!(strict.hooks(), lenient.hooks());
            }
            Err(errors) => assert_eq!(errors.problems(), report.problems.as_slice()),
        }
        // Rendering every problem and hook must not panic either.
        for problem in &report.problems {
            let _ = problem.to_string();
        }
        for kept in &report.kept {
            let _ = kept.config.to_string();
        }
    }
});
