//! What a declarative hook runs with: the values its placeholders name, and where it logs.

use std::collections::BTreeMap;

/// The values a hook's `${name}` placeholders can refer to. Ordered, so that logs and the
/// environment of commands are deterministic.
pub type HookContext = BTreeMap<String, String>;

/// The `tracing` target of `[HOOK]` log lines and of command warnings. Its value names the
/// executor module, where it lived before, so existing log filters keep working.
pub const LOG_TARGET: &str = "hooks_runtime::declarative::executor";
