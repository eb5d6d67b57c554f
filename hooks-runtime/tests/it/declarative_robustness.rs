//! The YAML loader on hostile and broken input (Y2: `from_yaml` never fails): no panic, bounded
//! time, and nothing kept from a document that is not a valid hooks file.

#![cfg(feature = "declarative")]

use crate::declarative_support;

use declarative_support::fixture;
use hooks_runtime::declarative::{DeclarativeHookRegistry, LoadReport};

/// Runs every loader entry point on `yaml`; any panic fails the test.
fn load_everywhere(yaml: &str) -> LoadReport {
    let lenient = DeclarativeHookRegistry::from_yaml(yaml);
    let strict = DeclarativeHookRegistry::from_yaml_strict(yaml);
    let reader = DeclarativeHookRegistry::from_yaml_reader(yaml.as_bytes());
    let report = LoadReport::from_yaml(yaml);
    assert_eq!(lenient.hooks(), reader.hooks());
    assert_eq!(strict.is_ok(), report.problems.is_empty(), "{yaml:?}");
    report
}

#[test]
fn y2_every_truncation_of_a_valid_document_loads_without_panic() {
    let yaml = std::fs::read_to_string(fixture("valid.yaml")).unwrap();
    for end in (0..=yaml.len()).filter(|i| yaml.is_char_boundary(*i)) {
        let report = load_everywhere(&yaml[..end]);
        assert!(report.kept.len() <= 5);
    }
}

#[test]
fn y2_wrong_types_are_problems_not_panics() {
    let cases = [
        "hooks: {event: onStart}",
        "hooks: [[1, 2], 3, null, true, \"text\"]",
        "hooks:\n  - event: [preToolUse]\n    action: {type: log, message: m}",
        "hooks:\n  - event: {a: 1}\n    action: log",
        "hooks:\n  - event: onStart\n    action: [log, m]",
        "hooks:\n  - event: onStart\n    matcher: {glob: x}\n    action: {type: log, message: m}",
        "hooks:\n  - event: onStart\n    action: {type: [log], message: m}",
        "hooks:\n  - event: onStart\n    action: {type: log, message: [1, 2]}",
        "hooks:\n  - event: onStart\n    action: {type: command, command: {a: b}, mode: 3}",
        "hooks:\n  - event: onStart\n    action: {type: command, command: c, mode: paranoid}",
        "hooks:\n  - event: true\n    action: {type: 7, message: 1.5}",
        "hooks:\n  - 1: 2\n    ~: 3",
        "hooks:\n  - ? [complex, key]\n    : value",
        "hooks: !!binary aGVsbG8=",
        "hooks:\n  - !custom {event: onStart}",
    ];
    for yaml in cases {
        let report = load_everywhere(yaml);
        assert!(report.kept.is_empty(), "{yaml}: {:?}", report.kept);
        assert!(!report.problems.is_empty(), "{yaml}");
    }
}

#[test]
fn y2_deep_nesting_is_rejected_without_stack_overflow() {
    for depth in [100, 10_000, 200_000] {
        for (open, close) in [("[", "]"), ("{a: ", "}")] {
            let yaml = format!("hooks: {}1{}", open.repeat(depth), close.repeat(depth));
            load_everywhere(&yaml);
        }
        let yaml = format!("hooks:\n{}x", "- ".repeat(depth));
        load_everywhere(&yaml);
        let indented: String = (0..depth.min(5_000)).map(|i| format!("{}k{i}:\n", " ".repeat(i))).collect();
        load_everywhere(&indented);
    }
}

#[test]
fn y2_binary_junk_and_invalid_utf8_load_without_panic() {
    // A fixed linear congruential generator: reproducible junk without a dependency.
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    for round in 0..300 {
        let len = (round * 7) % 512;
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                (state >> 56) as u8
            })
            .collect();
        let registry = DeclarativeHookRegistry::from_yaml_reader(bytes.as_slice());
        assert!(registry.hooks().len() <= 1);
        load_everywhere(&String::from_utf8_lossy(&bytes));
        // Junk after a valid prefix.
        let mut yaml = b"hooks:\n  - event: onStart\n    action: ".to_vec();
        yaml.extend_from_slice(&bytes);
        load_everywhere(&String::from_utf8_lossy(&yaml));
    }
    for text in ["\0\0\0", "\u{feff}hooks: []", "\u{202e}hooks", "hooks: \u{7}\u{1b}[31m"] {
        load_everywhere(text);
    }
}

#[test]
fn y2_huge_numbers_load_without_panic() {
    for number in [
        "1e999",
        "-1e999",
        ".inf",
        ".nan",
        "99999999999999999999999999999999999999999",
        "-99999999999999999999999999999999999999999",
        "0x7fffffffffffffffffffffffffffffff",
        "0o777777777777777777777777777777777",
        "1_000_000_000_000_000_000_000",
    ] {
        for yaml in [
            format!("hooks:\n  - event: {number}\n    action: {{type: log, message: {number}}}"),
            format!("hooks: {number}"),
            format!("hooks:\n  - {number}"),
        ] {
            let report = load_everywhere(&yaml);
            assert!(report.kept.is_empty(), "{yaml}");
        }
    }
}

#[test]
fn y2_alias_bomb_is_rejected_quickly() {
    // "Billion laughs": nine levels of nine-fold aliases would expand to 9^9 strings.
    let mut yaml = String::from("a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
    for level in 1..10 {
        let prev = format!("*a{}", level - 1);
        let list = [prev.as_str(); 9].join(",");
        yaml.push_str(&format!("a{level}: &a{level} [{list}]\n"));
    }
    yaml.push_str("hooks:\n  - event: onStart\n    action: {type: log, message: *a9}\n");
    let report = load_everywhere(&yaml);
    assert!(report.kept.is_empty());
    assert!(report.has_document_problem(), "{:?}", report.problems);
    // Refused by the alias limit, not after expanding up to the node budget.
    assert!(report.problems[0].message.contains("alias replay limit"), "{:?}", report.problems);

    // Ordinary anchors and aliases still work.
    let report = LoadReport::from_yaml(
        "hooks:\n  - event: onStart\n    action: &log {type: log, message: m}\n  - event: onStop\n    action: *log\n",
    );
    assert_eq!(report.kept.len(), 2, "{:?}", report.problems);
}

#[test]
fn y2_oversized_reader_input_is_refused() {
    let big = vec![b'#'; (hooks_runtime::declarative::MAX_DOCUMENT_BYTES + 10) as usize];
    let report = LoadReport::from_reader(big.as_slice());
    assert!(report.has_document_problem());
    assert!(report.problems[0].message.contains("larger than"));
}
