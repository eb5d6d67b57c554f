use hooks_runtime::prelude::*;

#[hook(before_create_message, id = "tag_messages")]
fn tag(_state: &ThreadState, mut message: MessageRecord) {
    message.extra.insert("metadata".into(), serde_json::json!({}));
}

fn main() {}
