use std::sync::Mutex;

use hooks_runtime::prelude::*;

static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

async fn flush() {}

#[hook(after_create_message, id = "remember_ids")]
async fn remember(_state: &ThreadState, message: &MessageRecord) {
    let mut seen = SEEN.lock().unwrap();
    seen.push(message.id.clone());
    flush().await;
    seen.clear();
}

fn main() {}
