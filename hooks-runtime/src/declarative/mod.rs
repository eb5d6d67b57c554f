//! Declarative tool-call hooks: a log line or a shell command run when an agent calls a tool,
//! when a tool call fails, or when an agent starts or stops, configured in YAML or in code.
//!
//! ```yaml
//! hooks:
//!   - event: preToolUse          # or PRE_TOOL_USE
//!     matcher: "file_*"          # optional, case-insensitive glob; PRE/POST only
//!     action:
//!       type: log
//!       message: "${tool} starting"
//!   - event: onError
//!     action:
//!       type: command
//!       command: "printf '%s\n' ${tool} ${error} >> failures.log"
//!       mode: safe               # optional: values reach sh as "${HOOK_TOOL}", never as text
//! ```
//!
//! Build a [`DeclarativeHookRegistry`] with [`from_yaml`](DeclarativeHookRegistry::from_yaml)
//! (lenient: bad entries are skipped with a WARN), [`from_yaml_strict`](DeclarativeHookRegistry::from_yaml_strict)
//! (every problem is an error) or [`of`](DeclarativeHookRegistry::of), then attach it to an
//! agent with [`apply_to`](DeclarativeHookRegistry::apply_to). An agent has one tool-call
//! listener, so `apply_to` replaces the one it had. Calls that the agent's authorization check
//! denies never reach the listener and fire no hooks.
//!
//! | Event | Fired by | Context |
//! |-------|----------|---------|
//! | `PRE_TOOL_USE` | before each tool call | `tool`, `event` = `preToolUse` |
//! | `POST_TOOL_USE` | after each tool call | `tool`, `event` = `postToolUse`, `success`, `latencyMs` |
//! | `ON_ERROR` | after a failed tool call | as `POST_TOOL_USE`, plus `error` |
//! | `ON_START` | `apply_to`, once per call | `agent` |
//! | `ON_STOP` | only your own `fire_event` | what you pass |
//!
//! # Where log actions go
//!
//! A `type: log` action logs its message at **INFO**, as `[HOOK] <message>`, under the target
//! [`LOG_TARGET`]; a subscriber that shows only warnings and errors prints none of them (so does
//! `tracing_subscriber::fmt::init()` without `RUST_LOG` once its `env-filter` feature is on).
//! Enable them with `RUST_LOG=hooks_runtime::declarative=info` (or `RUST_LOG=info`), or in code:
//!
//! ```
//! use tracing_subscriber::EnvFilter;
//!
//! let subscriber = tracing_subscriber::fmt()
//!     .with_env_filter(EnvFilter::new("warn,hooks_runtime::declarative=info"))
//!     .finish();
//! # let _ = subscriber;
//! // tracing::subscriber::set_global_default(subscriber)?;
//! ```
//!
//! The `hooks check FILE... [--strict]` command-line tool of this crate validates files: it
//! lists what each keeps, every problem and every warning, naming file, entry and field.
//!
//! # Context values in commands
//!
//! `${tool}` comes from the model (hooks fire for tool names it made up, so that audit hooks
//! see them) and `${error}` from error texts, which may quote that name or a parser's message
//! with backticks and quotes. In the default shell mode a value is spliced into shell text, so
//! it can run commands; `hooks check` warns for every shell-mode command that substitutes
//! `${tool}`, `${error}`, `${args}` or `${result}`. Write `mode: safe`, where no value changes
//! which commands run (Y15): the value reaches `sh` as an environment variable, shown as it is.
//!
//! In both modes no value keeps a command from starting: a NUL, which no argument or environment
//! string can hold, becomes [`NUL_REPLACEMENT`] (U+FFFD), and a value longer than
//! [`MAX_COMMAND_VALUE_BYTES`] is cut, as Linux refuses longer environment strings.
//!
//! # What a command may leave behind
//!
//! Nothing (Y14). `sh -c` starts as the leader of a new process group, and the whole group gets
//! `SIGKILL` when the command's hook is done: after the shell exits (background jobs it left
//! behind go too), at the timeout, when the hook's future is dropped, and when the async
//! runtime shuts down (which drops it). A child that daemonizes on purpose with `setsid` (or
//! `setpgid`) leaves the group and is not killed, provided it has left by the time the group is
//! killed: `setsid cmd > /dev/null 2>&1 & sleep 1` makes `cmd` outlive its hook, and it is then
//! yours to stop (without the `sleep`, the shell may exit, and the group be killed, before
//! `setsid` has run). Only an exit of this process that drops nothing (`std::process::exit`, a
//! fatal signal) skips the kill. On non-Unix platforms only the shell itself is killed.

mod action;
mod command;
mod config;
mod context;
mod event;
mod executor;
mod loader;
mod matcher;
mod problems;
mod registry;
mod settings;
mod shell;
mod substitution;

pub use action::{CommandMode, HookAction};
pub use config::HookConfig;
pub use context::{HookContext, LOG_TARGET};
pub use event::{HookEvent, UnknownHookEvent};
pub use executor::{
    DEFAULT_COMMAND_TIMEOUT, DefaultHookExecutor, FnExecutor, HookExecutor, MAX_OUTPUT_LINES, executor_fn,
};

pub use loader::{KeptHook, LoadReport, MAX_ALIAS_REPLAYED_EVENTS, MAX_DOCUMENT_BYTES, MAX_DOCUMENT_NODES};
pub use matcher::HookMatcher;
pub use problems::{LoadErrors, LoadProblem, ProblemPlace};
pub use registry::DeclarativeHookRegistry;
pub use settings::{
    DEFAULT_MANAGED_SETTINGS, DEFAULT_SETTINGS_HOOK_TIMEOUT, Discovered, DiscoveredFile, Discovery,
    MANAGED_SETTINGS_ENV, MAX_SETTINGS_HOOK_OUTPUT_BYTES, McpServerSpec, PermissionRule, SETTINGS_MESSAGE_EVENT,
    SETTINGS_STOP_EVENT, SessionEndReason, SettingsEvent, SettingsHook, SettingsHooks, SettingsLayer, SettingsMatcher,
    SettingsPermissions, SettingsReport, TRUST_FILE_ENV, TrustState, TrustStore,
};
pub(crate) use settings::{
    PermissionRequestHooks, PermissionRules, PreToolUseHooks, begin_session, end_sessions, remembered_pattern,
    remove_stale_transcripts,
};
pub use substitution::{MAX_COMMAND_VALUE_BYTES, NUL_REPLACEMENT};
