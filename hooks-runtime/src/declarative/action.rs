//! What a declarative hook does: write a log line or run a command.

use std::fmt;

/// How context values reach a `command` action.
///
/// In both modes the command is text run with `sh -c`, and every context value is also set in
/// the child's environment as `HOOK_<NAME>`: `HOOK_` and the key in upper snake case (`tool` is
/// `HOOK_TOOL`, `latencyMs` is `HOOK_LATENCY_MS`, `my-key.1` is `HOOK_MY_KEY_1`: a character
/// other than an ASCII letter or digit becomes `_`). When two keys of one context come to the
/// same name, the later key (in key order) gets a `_2`, `_3`, ... suffix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum CommandMode {
    /// The reference behaviour: `${name}` is replaced by the raw value, so a value is spliced
    /// into shell text. A tool name such as `x; rm -rf ~` becomes shell syntax. Use only with
    /// placeholders whose values you control: `hooks check` warns for a shell-mode command that
    /// uses `${tool}`, `${error}`, `${args}` or `${result}`.
    #[default]
    Shell,
    /// `${name}` is replaced by a quoted reference to the environment variable that holds the
    /// value (`"${HOOK_TOOL}"`), never by the value itself, so the shell sees the value only
    /// as the result of a parameter expansion, which it does not parse again. No context value
    /// can become shell syntax, and none keeps the command from running (Y15; see
    /// [the module docs](super#context-values-in-commands)). The reference is quoted for where it
    /// stands: `"${HOOK_TOOL}"` outside quotes, `${HOOK_TOOL}` inside double quotes,
    /// `'"${HOOK_TOOL}"'` inside single quotes. What the command itself does with a value
    /// is its own affair: passed to `eval` or `sh -c`, or used where bash evaluates arithmetic
    /// (`$(( ${latencyMs} ))`, `[[ .. -eq .. ]]`, `let`; bash is `sh` on some systems), a value
    /// such as `a[$(cmd)]` runs `cmd`.
    Safe,
}

impl CommandMode {
    /// The name used in YAML (`mode: safe`).
    pub const fn name(self) -> &'static str {
        match self {
            CommandMode::Shell => "shell",
            CommandMode::Safe => "safe",
        }
    }
}

/// The single action of a declarative hook.
///
/// Both actions replace `${name}` with the context value of that name; an unknown name stays as
/// written. A placeholder is `${`, one or more characters other than `{`, `}` and `$`, then `}`;
/// a value is inserted as it is, without quoting, and never scanned again, so a value that holds
/// `${other}` stays literal.
///
/// ```
/// use hooks_runtime::declarative::{CommandMode, HookAction};
///
/// let log = HookAction::log("${tool} starting");
/// assert_eq!(log.type_name(), "log");
///
/// // `${tool}` reaches the shell as "${HOOK_TOOL}", never as text.
/// let safe = HookAction::command_safe("printf '%s\\n' ${tool} >> tools.log");
/// assert_eq!(
///     safe,
///     HookAction::Command {
///         command: "printf '%s\\n' ${tool} >> tools.log".into(),
///         mode: CommandMode::Safe,
///     }
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HookAction {
    /// Writes `[HOOK] <message>` at INFO.
    Log {
        /// The message template.
        message: String,
    },
    /// Runs `sh -c <command>` in the process working directory.
    Command {
        /// The command template.
        command: String,
        /// How `${name}` placeholders reach the shell.
        mode: CommandMode,
    },
}

impl HookAction {
    /// A `log` action.
    pub fn log(message: impl Into<String>) -> Self {
        HookAction::Log { message: message.into() }
    }

    /// A `command` action in [`CommandMode::Shell`], the reference behaviour: placeholder values
    /// are spliced into the shell text unquoted.
    pub fn command(command: impl Into<String>) -> Self {
        HookAction::Command { command: command.into(), mode: CommandMode::Shell }
    }

    /// A `command` action in [`CommandMode::Safe`]: placeholders become quoted references to
    /// `HOOK_*` environment variables.
    pub fn command_safe(command: impl Into<String>) -> Self {
        HookAction::Command { command: command.into(), mode: CommandMode::Safe }
    }

    /// `"log"` or `"command"`, as in YAML's `type`.
    pub const fn type_name(&self) -> &'static str {
        match self {
            HookAction::Log { .. } => "log",
            HookAction::Command { .. } => "command",
        }
    }

    /// The message or command template, before substitution.
    pub fn template(&self) -> &str {
        match self {
            HookAction::Log { message } => message,
            HookAction::Command { command, .. } => command,
        }
    }
}

impl fmt::Display for HookAction {
    /// `log "message"`, `command "cmd"` or `command(safe) "cmd"`, with Rust string escapes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HookAction::Log { message } => write!(f, "log {message:?}"),
            HookAction::Command { command, mode: CommandMode::Shell } => write!(f, "command {command:?}"),
            HookAction::Command { command, mode: CommandMode::Safe } => write!(f, "command(safe) {command:?}"),
        }
    }
}
