//! Errors of the runtime's own API name what is wrong and how to put it right.

use hooks_runtime::model::ScriptedModel;
use hooks_runtime::prelude::*;
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
