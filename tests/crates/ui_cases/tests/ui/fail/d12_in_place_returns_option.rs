use hooks_runtime::prelude::*;

#[hook(after_system_message, id = "append_date")]
async fn append_date(_state: &ThreadState, system: &mut String) -> Option<String> {
    Some(format!("{system}\nToday is Monday."))
}

fn main() {}
