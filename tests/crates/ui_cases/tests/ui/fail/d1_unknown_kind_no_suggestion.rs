use hooks_runtime::prelude::*;

#[hook(make_coffee, id = "brew")]
fn brew(_state: &ThreadState) {}

fn main() {}
