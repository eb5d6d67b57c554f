//! The limits a runtime runs every thread under, with their defaults: one `Copy` value that the
//! builder fills and every layer reads. It imports nothing of the crate, so the gate, the
//! model clients and the thread pipelines can all depend on it.

use std::time::Duration;

/// The default timeout of a hook without `timeout_ms`.
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(10);

/// How many hook calls back into one thread (`state.inject_message`, `state.update_message`)
/// may be nested in one another. The call past it fails with an error, and a `[Hooks] ✗` line
/// names the hook point it came from (E8): a hook that writes a message every time it sees one
/// recurses without end, and this turns what would overflow the stack into a failed write.
pub const MAX_HOOK_DEPTH: u32 = 32;

/// The default cap on one response's reply text, the runtime's and the OpenAI client's: far
/// more than any model's output limit, far less than what would strain the process.
pub(crate) const DEFAULT_MAX_REPLY_BYTES: usize = 8 * 1024 * 1024;

/// The default cap on one response's tool-call arguments, all calls together.
pub(crate) const DEFAULT_MAX_TOOL_ARGUMENT_BYTES: usize = 8 * 1024 * 1024;

/// The limits of one runtime, as its builder set them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// The timeout of hooks (and guards) without one of their own.
    pub(crate) hook_timeout: Duration,
    /// How many times in a row one tool may fail before the run stops (`RuntimeBuilder::repeated_tool_error_limit`).
    pub(crate) repeated_tool_error_limit: u32,
    /// The steps of a turn when the thread's options set none.
    pub(crate) default_max_steps: u32,
    /// The caps on every model response (`RuntimeBuilder::max_reply_bytes`, ...).
    pub(crate) max_reply_bytes: usize,
    pub(crate) max_tool_argument_bytes: usize,
    /// Whether spans carry contents, arguments and results (`RuntimeBuilder::trace_contents`).
    pub(crate) trace_contents: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            hook_timeout: DEFAULT_HOOK_TIMEOUT,
            repeated_tool_error_limit: 3,
            default_max_steps: 25,
            max_reply_bytes: DEFAULT_MAX_REPLY_BYTES,
            max_tool_argument_bytes: DEFAULT_MAX_TOOL_ARGUMENT_BYTES,
            trace_contents: false,
        }
    }
}
