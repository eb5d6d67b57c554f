//! Loading declarative hooks from YAML: the format (Y1) and the lenient and strict loaders (Y2).

#![cfg(feature = "declarative")]

use crate::declarative_support;

use declarative_support::{Logs, fixture};
use hooks_runtime::declarative::{
    CommandMode, DeclarativeHookRegistry, HookAction, HookConfig, HookEvent, HookMatcher, LoadProblem, LoadReport,
    MAX_DOCUMENT_NODES, ProblemPlace,
};

fn problem(entry: Option<usize>, field: Option<&str>, message: &str) -> LoadProblem {
    LoadProblem::new(entry.map_or(ProblemPlace::Document, ProblemPlace::Entry), field, message)
}

#[test]
fn y1_reads_top_level_hooks_list_with_both_event_spellings_and_any_case_action_types() {
    let yaml = std::fs::read_to_string(fixture("valid.yaml")).unwrap();
    let registry = DeclarativeHookRegistry::from_yaml(&yaml);
    assert_eq!(
        registry.hooks(),
        &[
            HookConfig::new(
                HookEvent::PreToolUse,
                Some(HookMatcher::new("file_*")),
                HookAction::log("${tool} starting"),
            ),
            HookConfig::new(
                HookEvent::PostToolUse,
                Some(HookMatcher::ALL),
                HookAction::log("${tool} took ${latencyMs} ms, success=${success}"),
            ),
            HookConfig::new(HookEvent::OnError, None, HookAction::command("echo tool failed >> hooks.log"),),
            HookConfig::new(HookEvent::OnStart, None, HookAction::log("agent ${agent} started")),
            HookConfig::new(
                HookEvent::OnStop,
                None,
                HookAction::Command {
                    command: "printf '%s\n' ${agent} >> stopped.log".to_owned(),
                    mode: CommandMode::Safe,
                },
            ),
        ]
    );
}

#[test]
fn y1_every_event_in_camel_case_and_upper_snake_case() {
    for event in HookEvent::ALL {
        for name in [event.camel_case(), event.upper_snake_case()] {
            let yaml = format!("hooks:\n  - event: {name}\n    action: {{type: log, message: m}}\n");
            let hooks = DeclarativeHookRegistry::from_yaml_strict(&yaml).unwrap();
            assert_eq!(hooks.hooks()[0].event, event, "{name}");
        }
    }
    // Other spellings are not event names.
    for name in ["pretooluse", "PreToolUse", "pre_tool_use", "PRE-TOOL-USE"] {
        let yaml = format!("hooks:\n  - event: {name}\n    action: {{type: log, message: m}}\n");
        assert!(DeclarativeHookRegistry::from_yaml(&yaml).is_empty(), "{name}");
    }
}

#[test]
fn y1_action_types_in_any_case_need_their_field() {
    for kind in ["log", "LOG", "Log", "lOg"] {
        let yaml = format!("hooks:\n  - event: onStart\n    action: {{type: {kind}, message: m}}\n");
        let hooks = DeclarativeHookRegistry::from_yaml_strict(&yaml).unwrap();
        assert_eq!(hooks.hooks()[0].action, HookAction::log("m"));
    }
    for kind in ["command", "COMMAND", "Command"] {
        let yaml = format!("hooks:\n  - event: onStart\n    action: {{type: {kind}, command: c}}\n");
        let hooks = DeclarativeHookRegistry::from_yaml_strict(&yaml).unwrap();
        assert_eq!(hooks.hooks()[0].action, HookAction::command("c"));
    }
    // `log` needs `message`, `command` needs `command`; the other one's field does not do.
    let errors = DeclarativeHookRegistry::from_yaml_strict(
        "hooks:\n  - event: onStart\n    action: {type: log, command: c}\n  - event: onStart\n    action: {type: command, message: m}\n",
    )
    .unwrap_err();
    let fields: Vec<_> = errors.problems().iter().map(|p| (p.entry(), p.field.as_deref())).collect();
    assert_eq!(
        fields,
        [
            (Some(0), Some("action.command")),
            (Some(0), Some("action.message")),
            (Some(1), Some("action.message")),
            (Some(1), Some("action.command")),
        ]
    );
}

#[test]
fn y1_reader_gives_the_same_hooks_as_the_string() {
    let path = fixture("valid.yaml");
    let from_reader = DeclarativeHookRegistry::from_yaml_reader(std::fs::File::open(&path).unwrap());
    let from_str = DeclarativeHookRegistry::from_yaml(&std::fs::read_to_string(&path).unwrap());
    assert_eq!(from_reader.hooks(), from_str.hooks());
    assert_eq!(from_reader.hooks().len(), 5);
}

#[test]
fn y2_bad_entries_are_skipped_with_a_warn_naming_index_and_field() {
    let (logs, _guard) = Logs::capture();
    let yaml = std::fs::read_to_string(fixture("mixed.yaml")).unwrap();
    let registry = DeclarativeHookRegistry::from_yaml(&yaml);

    assert_eq!(
        registry.hooks(),
        &[
            HookConfig::new(
                HookEvent::PreToolUse,
                Some(HookMatcher::new("file_*")),
                HookAction::log("${tool} starting"),
            ),
            HookConfig::new(HookEvent::OnStart, None, HookAction::command("true")),
        ]
    );
    let warns = logs.events("WARN");
    let expected = [
        "entry #1 (field `event`): unknown event `beforeToolUse`",
        "entry #2 (field `event`): missing",
        "entry #3 (field `action.type`): unknown action type `email`; expected `log` or `command`",
        "entry #4 (field `matcher`): expected a glob string, found the number `42`",
        "entry #4 (field `action.command`): missing",
    ];
    assert_eq!(warns.len(), expected.len(), "{warns:#?}");
    for (warn, expected) in warns.iter().zip(expected) {
        assert!(warn.contains(expected), "{warn} should contain {expected}");
    }
    assert!(logs.events("ERROR").is_empty());
}

#[test]
fn y2_unknown_fields_skip_the_entry() {
    let (logs, _guard) = Logs::capture();
    let registry = DeclarativeHookRegistry::from_yaml(
        "hooks:\n  - event: onStart\n    matchr: x\n    action: {type: log, message: m}\n  - event: onStart\n    action: {type: log, message: m, level: debug}\n  - event: onStart\n    action: {type: log, message: kept}\n",
    );
    assert_eq!(registry.hooks().len(), 1);
    assert_eq!(registry.hooks()[0].action, HookAction::log("kept"));
    let warns = logs.events("WARN");
    assert!(warns[0].contains("entry #0 (field `matchr`): unknown field"), "{warns:?}");
    assert!(warns[1].contains("entry #1 (field `action.level`): unknown field"), "{warns:?}");
}

#[test]
fn y2_unparseable_document_gives_an_empty_registry_and_an_error() {
    let (logs, _guard) = Logs::capture();
    let yaml = std::fs::read_to_string(fixture("broken.yaml")).unwrap();
    let registry = DeclarativeHookRegistry::from_yaml(&yaml);
    assert!(registry.is_empty());
    let errors = logs.events("ERROR");
    assert_eq!(errors.len(), 1, "{}", logs.text());
    assert!(errors[0].contains("not valid YAML"), "{}", errors[0]);
    assert!(logs.events("WARN").is_empty());
}

#[test]
fn y2_document_of_the_wrong_shape_gives_an_empty_registry_and_an_error() {
    for yaml in ["- a\n- b\n", "hooks: 3\n", "hook:\n  - event: onStart\n", "just text"] {
        let (logs, _guard) = Logs::capture();
        assert!(DeclarativeHookRegistry::from_yaml(yaml).is_empty(), "{yaml}");
        assert!(!logs.events("ERROR").is_empty(), "{yaml}: {}", logs.text());
    }
    // An empty list is not a mistake.
    for yaml in ["hooks:\n", "hooks: []\n"] {
        let (logs, _guard) = Logs::capture();
        assert!(DeclarativeHookRegistry::from_yaml(yaml).is_empty());
        assert_eq!(logs.text(), "", "{yaml}");
    }
}

#[test]
fn y2_an_unknown_top_level_key_is_a_warn_and_the_entries_still_load() {
    let (logs, _guard) = Logs::capture();
    let registry = DeclarativeHookRegistry::from_yaml(
        "other: 1\nhooks:\n  - event: onStart\n    action: {type: log, message: m}\n",
    );
    assert_eq!(registry.hooks().len(), 1);
    let warns = logs.events("WARN");
    assert_eq!(warns.len(), 1, "{}", logs.text());
    assert!(warns[0].contains("hooks document: document (field `other`): unknown top-level key"), "{warns:?}");
    assert!(logs.events("ERROR").is_empty(), "no ERROR saying no hooks were loaded: {}", logs.text());
}

#[test]
fn an_empty_document_loads_no_hooks_with_one_warn() {
    for yaml in ["", "# only a comment\n"] {
        let (logs, _guard) = Logs::capture();
        assert!(DeclarativeHookRegistry::from_yaml(yaml).is_empty());
        assert!(DeclarativeHookRegistry::from_yaml_strict(yaml).unwrap().is_empty());
        let warns = logs.events("WARN");
        assert_eq!(warns.len(), 2, "{yaml:?}: {}", logs.text());
        assert!(warns[0].contains("document: empty; it declares no hooks (write `hooks: []`"), "{warns:?}");
        assert!(logs.events("ERROR").is_empty());
    }
}

#[test]
fn warnings_keep_the_hook_and_are_logged_at_warn() {
    let (logs, _guard) = Logs::capture();
    let yaml = "hooks:\n  - event: onError\n    matcher: x\n    action: {type: command, command: \"echo ${tool}\"}\n";
    let report = LoadReport::from_yaml(yaml);
    assert_eq!(report.kept.len(), 1);
    assert!(report.problems.is_empty());
    let fields: Vec<_> = report.warnings.iter().map(|w| (w.entry(), w.field.as_deref())).collect();
    assert_eq!(fields, [(Some(0), Some("matcher")), (Some(0), Some("action.command"))]);
    assert_eq!(DeclarativeHookRegistry::from_yaml(yaml).hooks().len(), 1);
    assert_eq!(logs.events("WARN").len(), 2, "{}", logs.text());
}

/// A document of `n` hooks, each written out in full.
fn many_hooks(n: usize) -> String {
    let mut yaml = String::from("hooks:\n");
    for i in 0..n {
        yaml.push_str(&format!(
            "  - event: preToolUse\n    matcher: \"tool_{i}\"\n    action: {{type: log, message: \"hook {i}\"}}\n"
        ));
    }
    yaml
}

#[test]
fn a_valid_file_of_30_000_hooks_is_accepted() {
    // 30k hooks of 11 YAML nodes each: past the parser's default budget of 250k nodes.
    let report = LoadReport::from_yaml(&many_hooks(30_000));
    assert_eq!(report.problems, []);
    assert_eq!(report.kept.len(), 30_000);
}

#[test]
fn a_document_past_the_node_limit_is_refused_with_the_limit_in_the_error() {
    let yaml = format!("hooks: [{}]", vec!["1"; MAX_DOCUMENT_NODES + 1].join(","));
    let errors = DeclarativeHookRegistry::from_yaml_strict(&yaml).unwrap_err();
    let message = &errors.problems()[0].message;
    assert!(
        message.contains(&format!("the document has more than {MAX_DOCUMENT_NODES} YAML values, lists and mappings")),
        "{message}"
    );
    assert!(message.contains("split it into several files"), "{message}");
}

#[test]
fn y2_strict_loader_returns_every_problem_with_entry_and_field() {
    let yaml = std::fs::read_to_string(fixture("mixed.yaml")).unwrap();
    let errors = DeclarativeHookRegistry::from_yaml_strict(&yaml).unwrap_err();
    let expected_event = "unknown event `beforeToolUse`; expected one of `preToolUse`, `postToolUse`, `onError`, `onStart`, `onStop` (or the UPPER_SNAKE spelling)";
    assert_eq!(
        errors.problems(),
        &[
            problem(Some(1), Some("event"), expected_event),
            problem(Some(2), Some("event"), "missing"),
            problem(Some(3), Some("action.type"), "unknown action type `email`; expected `log` or `command`"),
            problem(Some(4), Some("matcher"), "expected a glob string, found the number `42`; quote it"),
            problem(Some(4), Some("action.command"), "missing"),
        ]
    );
    let text = errors.to_string();
    assert!(text.starts_with("5 problems in hooks document"), "{text}");

    let broken = std::fs::read_to_string(fixture("broken.yaml")).unwrap();
    let errors = DeclarativeHookRegistry::from_yaml_strict(&broken).unwrap_err();
    assert_eq!(errors.problems().len(), 1);
    assert_eq!(errors.problems()[0].entry(), None);

    let valid = std::fs::read_to_string(fixture("valid.yaml")).unwrap();
    assert_eq!(DeclarativeHookRegistry::from_yaml_strict(&valid).unwrap().hooks().len(), 5);
}

#[test]
fn y2_event_typo_suggests_the_right_spelling() {
    let errors = DeclarativeHookRegistry::from_yaml_strict(
        "hooks:\n  - event: pre_tool_use\n    action: {type: log, message: m}\n",
    )
    .unwrap_err();
    assert_eq!(
        errors.problems()[0].message,
        "unknown event `pre_tool_use`; did you mean `preToolUse` or `PRE_TOOL_USE`?"
    );
}

#[test]
fn parser_messages_name_none_of_its_options() {
    // Found by the fuzz loop: serde-saphyr's own hints send the reader to its `Options`.
    let report = LoadReport::from_yaml("hooks:\n  - event: !!binary /w==\n    action: {type: log, message: m}\n");
    let message = &report.problems[0].message;
    assert!(message.contains("a `!!binary` value is not UTF-8 text; hook fields are text"), "{message}");
    assert!(!message.contains("Options"), "{message}");
}
