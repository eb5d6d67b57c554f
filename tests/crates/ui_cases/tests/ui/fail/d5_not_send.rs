use std::rc::Rc;

use hooks_runtime::prelude::*;

async fn remote_check() {}

#[hook(after_create_message, id = "send_analytics")]
async fn analytics(_state: &ThreadState, _message: &MessageRecord) {
    let counter = Rc::new(1);
    remote_check().await;
    let _ = counter;
}

fn main() {}
