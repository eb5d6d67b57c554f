//! Errors of the runtime's own API name what is wrong and how to put it right.

use hooks_runtime::model::ScriptedModel;
use hooks_runtime::prelude::*;
use hooks_runtime::tool::FnTool;
use hooks_runtime::types::HookToolResult;
use hooks_runtime::{Runtime, RuntimeError, ThreadOptions};

define_prompt! { name: helper_prompt, model: "scripted", prompt: "Help." }
define_agent! { name: helper_child, expose_as_tool: true, side_a: { prompt: helper_prompt } }
define_agent! {
    name: helper_parent,
    side_a: { prompt: helper_prompt, subagents: [{ agent: helper_child, as: calendar, optional: true }] },
}

#[tokio::test]
async fn unknown_relationship_lists_the_ones_the_agent_has() {
    let runtime =
        Runtime::builder().agent::<helper_parent>().model("scripted", ScriptedModel::default()).build().unwrap();
    let thread = runtime.create_thread("helper_parent", ThreadOptions::default()).await.unwrap();
    let error = thread.set_relationship_enabled("calender", true).unwrap_err();
    assert!(
        matches!(&error, RuntimeError::UnknownRelationship { known, optional: true, .. } if known == &["calendar"])
    );
    assert_eq!(
        error.to_string(),
        "agent `helper_parent` has no optional subagent relationship named `calender`; its optional subagent \
         relationships are: `calendar` (a relationship is named by its `as`, or else by its agent's name)"
    );
    thread.set_relationship_enabled("calendar", true).unwrap();
    let error = thread.spawn_subagent("helper_child").await.unwrap_err();
    assert!(error.to_string().contains("its subagent relationships are: `calendar`"), "{error}");
}

define_prompt! { name: unmodelled_prompt, model: "gpt-unadded", prompt: "Help." }
define_agent! { name: unmodelled_agent, side_a: { prompt: unmodelled_prompt } }
define_prompt! { name: untooled_prompt, model: "scripted", prompt: "Help.", tools: ["lookup_order"] }
define_agent! { name: untooled_agent, side_a: { prompt: untooled_prompt } }

/// What `fn main() -> Result<(), Box<dyn Error>>` prints for an error: its `Debug`.
fn printed_by_main(error: impl std::error::Error + 'static) -> String {
    let boxed: Box<dyn std::error::Error> = Box::new(error);
    format!("{boxed:?}")
}

#[test]
fn build_errors_print_a_sentence_naming_the_thing_and_the_fix_even_through_main() {
    let error = Runtime::builder().agent::<unmodelled_agent>().build().unwrap_err();
    assert_eq!(
        printed_by_main(error),
        "prompt `unmodelled_prompt` uses model `gpt-unadded`, which was not added to the runtime; add it with \
         `.model(\"gpt-unadded\", ...)`; no models were added"
    );
    // With models added, the error lists them: the name meant is likely among them.
    let error = Runtime::builder()
        .agent::<unmodelled_agent>()
        .model("scripted", ScriptedModel::default())
        .model("gpt-added", ScriptedModel::default())
        .build()
        .unwrap_err();
    assert!(printed_by_main(error).ends_with("; the models added are: `gpt-added`, `scripted`"));
    let error =
        Runtime::builder().agent::<untooled_agent>().model("scripted", ScriptedModel::default()).build().unwrap_err();
    assert_eq!(
        printed_by_main(error),
        "prompt `untooled_prompt` lists the tool `lookup_order`, which is neither a tool nor an agent of the runtime; \
         add it with `.tool(...)` or `.agent::<lookup_order>()`; no tools were added"
    );
    let lookup = |name: &str| FnTool::new(name, "Looks up.", |_args| async { HookToolResult::success("found") });
    let error = Runtime::builder()
        .agent::<untooled_agent>()
        .model("scripted", ScriptedModel::default())
        .tool(lookup("lookup_orders"))
        .tool(lookup("cancel_order"))
        .build()
        .unwrap_err();
    assert!(printed_by_main(error).ends_with("; the tools added are: `cancel_order`, `lookup_orders`"));
}

#[tokio::test]
async fn runtime_and_store_errors_print_a_sentence_through_main() {
    let runtime =
        Runtime::builder().agent::<helper_parent>().model("scripted", ScriptedModel::default()).build().unwrap();
    let error = runtime.create_thread("helper_prent", ThreadOptions::new()).await.unwrap_err();
    assert_eq!(
        printed_by_main(error),
        "no agent named `helper_prent` was added to the runtime; add it with `.agent::<helper_prent>()` on the runtime builder"
    );
    let error = runtime.open_thread("thread_gone").await.unwrap_err();
    assert!(printed_by_main(error).starts_with("no thread `thread_gone` in the store; check the id"));
    let store =
        hooks_runtime::store::StoreError::new(hooks_runtime::store::StoreErrorKind::Busy, "sqlite: database is locked");
    assert_eq!(printed_by_main(store), "message store: sqlite: database is locked");
}

#[test]
fn declarative_load_errors_print_every_problem_through_main() {
    let error = hooks_runtime::declarative::DeclarativeHookRegistry::from_yaml_strict(
        "hooks:\n  - event: never\n    action: {type: email}\n",
    )
    .unwrap_err();
    let printed = printed_by_main(error);
    assert!(
        printed.starts_with("2 problems in hooks document\n  entry #0 (field `event`): unknown event `never`"),
        "{printed}"
    );
    assert!(
        printed.contains("entry #0 (field `action.type`): unknown action type `email`; expected `log` or `command`")
    );
}
