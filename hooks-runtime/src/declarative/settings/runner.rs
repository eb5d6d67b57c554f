//! Running one settings hook's command: the event on stdin, stdout and stderr captured up to a
//! cap, killed with its process group at its timeout. Nothing here interprets the output.

use std::path::Path;
use std::time::Duration;

use crate::declarative::LOG_TARGET;
use crate::declarative::shell::{self, OutputSink, ShellEnd, Timing};

/// Most bytes of stdout, and of stderr, kept from one hook run; the rest is read and dropped,
/// so a hook that prints without end neither fills memory nor blocks on a full pipe.
pub const MAX_SETTINGS_HOOK_OUTPUT_BYTES: usize = 1 << 20;

/// Once the shell has exited, how long to keep reading output that a child it left behind may
/// still hold open. The group is killed after it, so the wait is this, never stdout's end.
const OUTPUT_GRACE: Duration = Duration::from_millis(100);

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RunEnd {
    /// The shell exited with this code.
    Exited(i32),
    /// It ended otherwise (a signal), as the platform describes it.
    Killed(String),
    /// It ran past its timeout and was killed with its group.
    TimedOut(Duration),
    /// It could not be started or awaited.
    NotRun(String),
}

/// A finished run: how it ended and what it printed (each stream cut at the cap).
#[derive(Debug, Clone)]
pub(crate) struct HookRun {
    pub(crate) end: RunEnd,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// Runs `sh -c <command>` in `cwd` (also its `CLAUDE_PROJECT_DIR`; `CLAUDE_PLUGIN_ROOT` is
/// `plugin_root` when the hook is a plugin's) with `stdin` written to it, within `timeout`, in
/// the runtime's environment without the variables `secret_env` names (H3).
///
/// The shell leads a process group of its own, killed when the shell has exited (after a short
/// grace for output), at the timeout, or when this future is dropped: a background child that
/// holds stdout open cannot make the call outlast its timeout. `location` names the hook in
/// the WARN of cut output.
pub(crate) async fn run(
    command: &str,
    stdin: &[u8],
    cwd: &Path,
    plugin_root: Option<&Path>,
    timeout: Duration,
    location: &str,
    secret_env: &[String],
) -> HookRun {
    // Under the watchdog that kills the command's group once this process is gone (killed with
    // SIGKILL, say), so no hook outlives the runtime that ran it; the command itself runs as
    // `sh -c <command>` would.
    let mut shell = crate::process_group::watched("sh", ["-c", command]);
    // Project hooks name their scripts from the project root, which is the working directory
    // here; a plugin's name theirs from the plugin's folder.
    shell.current_dir(cwd).env("CLAUDE_PROJECT_DIR", cwd);
    for name in secret_env {
        shell.env_remove(name);
    }
    if let Some(root) = plugin_root {
        shell.env("CLAUDE_PLUGIN_ROOT", root);
    }
    let (mut stdout, mut stderr) = (Capture::default(), Capture::default());
    let timing = Timing { timeout, output_grace: OUTPUT_GRACE };
    let end = match shell::run(shell, Some(stdin), timing, &mut stdout, &mut stderr).await {
        ShellEnd::Exited(status) => match status.code() {
            Some(code) => RunEnd::Exited(code),
            None => RunEnd::Killed(status.to_string()),
        },
        ShellEnd::NotStarted(error) => {
            return HookRun {
                end: RunEnd::NotRun(format!("could not start: {error}")),
                stdout: String::new(),
                stderr: String::new(),
            };
        }
        ShellEnd::NotAwaited(error) => RunEnd::NotRun(format!("could not be awaited: {error}")),
        ShellEnd::TimedOut => RunEnd::TimedOut(timeout),
    };
    for (name, capture) in [("stdout", &stdout), ("stderr", &stderr)] {
        if capture.dropped > 0 {
            tracing::warn!(
                target: LOG_TARGET,
                "[HOOK] settings hook {location}: {name} was cut at {MAX_SETTINGS_HOOK_OUTPUT_BYTES} bytes, {} more dropped",
                capture.dropped
            );
        }
    }
    HookRun { end, stdout: stdout.into_text(), stderr: stderr.into_text() }
}

/// One stream's bytes up to the cap, and a count of the rest.
#[derive(Default)]
struct Capture {
    kept: Vec<u8>,
    dropped: u64,
}

impl OutputSink for Capture {
    fn write(&mut self, bytes: &[u8]) {
        let room = MAX_SETTINGS_HOOK_OUTPUT_BYTES.saturating_sub(self.kept.len());
        let (keep, drop) = bytes.split_at(room.min(bytes.len()));
        self.kept.extend_from_slice(keep);
        self.dropped += drop.len() as u64;
    }
}

impl Capture {
    fn into_text(self) -> String {
        String::from_utf8_lossy(&self.kept).into_owned()
    }
}
