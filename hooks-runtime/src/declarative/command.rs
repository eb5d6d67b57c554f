//! Running one `command` action: spawn, capture, time out, report. Every outcome is logged here
//! and nowhere else, so a failing command can never reach the tool call or the next hook.

use std::process::ExitStatus;
use std::sync::Mutex;
use std::time::Duration;

use super::LOG_TARGET;
use super::shell::{self, OutputSink, ShellEnd, Timing};
use super::substitution::PreparedCommand;

/// Once the shell has exited, how long to keep reading output that a background child of it
/// may still be writing, before reporting without it.
const OUTPUT_GRACE: Duration = Duration::from_millis(200);

/// Longest line kept for the report, in bytes; the rest of a longer line is dropped so a
/// command that prints one endless line cannot exhaust memory.
const MAX_LINE_BYTES: usize = 4096;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CommandLimits {
    pub(super) timeout: Duration,
    pub(super) max_output_lines: usize,
    /// H3: variables of the runtime's environment a command does not get.
    pub(super) secret_env: Vec<String>,
}

/// Runs `sh -c <script>` in the process working directory and logs what went wrong, if anything.
///
/// A log line names the command by `template`, the action's command as configured: the
/// script itself can hold substituted values (`${args}`, `${result}`), which never reach a log.
///
/// The shell leads a process group of its own, and the whole group is killed when this returns
/// or is dropped, so nothing the command started outlives the hook (Y14).
pub(super) async fn run_command(template: &str, command: &PreparedCommand, limits: &CommandLimits) {
    let mut shell = shell::sh(&command.script);
    for name in &limits.secret_env {
        shell.env_remove(name);
    }
    shell.envs(command.env.iter().map(|(k, v)| (k, v)));
    let output = Output::new(limits.max_output_lines);
    let (mut stdout, mut stderr) = (LineSplitter::new(&output), LineSplitter::new(&output));
    let timing = Timing { timeout: limits.timeout, output_grace: OUTPUT_GRACE };
    match shell::run(shell, None, timing, &mut stdout, &mut stderr).await {
        ShellEnd::Exited(status) if status.success() => {}
        ShellEnd::Exited(status) => report_failure(template, status, &output),
        ShellEnd::NotStarted(error) => {
            tracing::warn!(target: LOG_TARGET, "[HOOK] command `{template}` could not start: {error}");
        }
        ShellEnd::NotAwaited(error) => {
            tracing::warn!(target: LOG_TARGET, "[HOOK] command `{template}` could not be awaited: {error}");
        }
        ShellEnd::TimedOut => {
            tracing::warn!(
                target: LOG_TARGET,
                "[HOOK] command `{template}` did not finish within {:?} and was killed",
                limits.timeout
            );
        }
    }
}

fn report_failure(template: &str, status: ExitStatus, output: &Output) {
    let status = match status.code() {
        Some(code) => format!("exit code {code}"),
        None => format!("{status}"),
    };
    let lines = output.lines.lock().unwrap_or_else(|e| e.into_inner());
    let cut = lines.total - lines.kept.len();
    let mut message = format!("[HOOK] command `{template}` failed with {status}");
    if lines.total == 0 {
        message.push_str(", no output");
    } else if cut == 0 {
        message.push_str(&format!(", output ({} lines):", lines.total));
    } else {
        message.push_str(&format!(", output (first {} of {} lines, {cut} cut):", lines.kept.len(), lines.total));
    }
    for line in &lines.kept {
        message.push('\n');
        message.push_str(line);
    }
    tracing::warn!(target: LOG_TARGET, "{message}");
}

/// The combined output of stdout and stderr, line by line in arrival order: only the first
/// lines are kept, the rest are counted.
struct Output {
    lines: Mutex<Lines>,
}

struct Lines {
    kept: Vec<String>,
    total: usize,
    cap: usize,
}

impl Output {
    fn new(cap: usize) -> Self {
        Output { lines: Mutex::new(Lines { kept: Vec::new(), total: 0, cap }) }
    }

    fn push(&self, line: &[u8]) {
        // The lock is held for a push only, never across an await.
        let mut lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        lines.total += 1;
        if lines.kept.len() < lines.cap {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            lines.kept.push(String::from_utf8_lossy(line).into_owned());
        }
    }
}

/// One stream's sink: splits it into lines with bounded memory, into the shared [`Output`].
struct LineSplitter<'a> {
    output: &'a Output,
    line: Vec<u8>,
}

impl<'a> LineSplitter<'a> {
    fn new(output: &'a Output) -> Self {
        LineSplitter { output, line: Vec::new() }
    }
}

impl OutputSink for LineSplitter<'_> {
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            if byte == b'\n' {
                self.output.push(&self.line);
                self.line.clear();
            } else if self.line.len() < MAX_LINE_BYTES {
                self.line.push(byte);
            }
        }
    }

    fn end(&mut self) {
        if !self.line.is_empty() {
            self.output.push(&self.line);
        }
    }
}
