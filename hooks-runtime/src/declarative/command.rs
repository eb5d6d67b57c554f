//! Running one `command` action: spawn, capture, time out, report. Every outcome is logged here
//! and nowhere else, so a failing command can never reach the tool call or the next hook.

use std::process::{ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio::sync::oneshot;

use super::LOG_TARGET;
use super::process_group::ProcessGroup;
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
}

/// Runs `sh -c <script>` in the process working directory and logs what went wrong, if anything.
///
/// A log line names the command by `template`, the action's command as configured: the
/// script itself can hold substituted values (`${args}`, `${result}`), which never reach a log.
///
/// The shell leads a process group of its own, and the whole group is killed when this returns
/// or is dropped, so nothing the command started outlives the hook (Y14).
pub(super) async fn run_command(template: &str, command: &PreparedCommand, limits: &CommandLimits) {
    let mut shell = Command::new("sh");
    shell
        .arg("-c")
        .arg(&command.script)
        .envs(command.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Also reaps the shell when the hook is dropped; `group` below kills the rest.
        .kill_on_drop(true);
    #[cfg(unix)]
    shell.process_group(0);
    let mut child = match shell.spawn() {
        Ok(child) => child,
        Err(error) => {
            tracing::warn!(target: LOG_TARGET, "[HOOK] command `{template}` could not start: {error}");
            return;
        }
    };
    // Taken before the shell can be reaped, while its id is still the group's id.
    let group = ProcessGroup::led_by(&child);

    let output = Output::new(limits.max_output_lines);
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let (exited_tx, exited_rx) = oneshot::channel::<()>();

    let run = async {
        let wait = async {
            let status = child.wait().await;
            let _ = exited_tx.send(());
            status
        };
        let read = async {
            let pumps = async { tokio::join!(pump(stdout, &output), pump(stderr, &output)) };
            let grace = async {
                let _ = exited_rx.await;
                tokio::time::sleep(OUTPUT_GRACE).await;
            };
            tokio::select! {
                _ = pumps => {}
                () = grace => {}
            }
        };
        tokio::join!(wait, read).0
    };

    // Bound to a variable so that `run`, which borrows `child`, is dropped before the match.
    let result = tokio::time::timeout(limits.timeout, run).await;
    // Whether the shell exited or timed out, whatever it left running in its group goes now.
    drop(group);
    match result {
        Ok(Ok(status)) if status.success() => {}
        Ok(Ok(status)) => report_failure(template, status, &output),
        Ok(Err(error)) => {
            tracing::warn!(target: LOG_TARGET, "[HOOK] command `{template}` could not be awaited: {error}");
        }
        Err(_elapsed) => {
            // The group kill above reached the shell too; reap it now rather than leaving it to
            // `kill_on_drop`, so it is gone when the hook returns.
            let _ = child.kill().await;
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

/// Reads one stream to its end, splitting it into lines with bounded memory.
async fn pump(stream: Option<impl AsyncRead + Unpin>, output: &Output) {
    let Some(mut stream) = stream else { return };
    let mut buf = [0u8; 8192];
    let mut line = Vec::new();
    loop {
        let n = match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for &byte in &buf[..n] {
            if byte == b'\n' {
                output.push(&line);
                line.clear();
            } else if line.len() < MAX_LINE_BYTES {
                line.push(byte);
            }
        }
    }
    if !line.is_empty() {
        output.push(&line);
    }
}
