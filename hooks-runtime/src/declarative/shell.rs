//! Running `sh -c <script>` for a hook: in a process group of its own, with its input written
//! and its output read while it runs, within a timeout, and the whole group killed when it is
//! done with (Y14). What the output means, and how much of it is kept, is the caller's.

use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tokio::sync::oneshot;

use crate::process_group::ProcessGroup;

/// Where one of the command's output streams goes, as it arrives.
pub(super) trait OutputSink {
    /// Bytes read from the stream.
    fn write(&mut self, bytes: &[u8]);
    /// The stream ended (or could not be read further); not called when the command's grace
    /// ran out first.
    fn end(&mut self) {}
}

/// How long a run may take.
#[derive(Debug, Clone, Copy)]
pub(super) struct Timing {
    /// The command is killed with its group after this.
    pub(super) timeout: Duration,
    /// Once the shell has exited, how long to keep reading output that a child it left behind
    /// may still hold open; the group is killed after it, so the wait is this, never the
    /// output's end.
    pub(super) output_grace: Duration,
}

/// How a run ended.
#[derive(Debug)]
pub(super) enum ShellEnd {
    /// The shell exited.
    Exited(ExitStatus),
    /// It could not be started.
    NotStarted(std::io::Error),
    /// It started but could not be awaited.
    NotAwaited(std::io::Error),
    /// It ran past [`Timing::timeout`] and was killed with its group.
    TimedOut,
}

/// `sh -c <script>`, for the caller to add its environment and working directory to.
pub(super) fn sh(script: &str) -> Command {
    let mut shell = Command::new("sh");
    shell.arg("-c").arg(script);
    shell
}

/// Runs `shell` with `stdin` written to it (`None`: no input at all), its stdout and stderr
/// passed to the sinks as they arrive, within `timing`.
///
/// The shell leads a process group of its own, killed when the shell has exited (after the
/// output grace), at the timeout, or when this future is dropped: nothing the command started
/// outlives the hook, and a background child that holds stdout open cannot make the run outlast
/// its timeout.
pub(super) async fn run(
    mut shell: Command,
    stdin: Option<&[u8]>,
    timing: Timing,
    stdout: &mut impl OutputSink,
    stderr: &mut impl OutputSink,
) -> ShellEnd {
    shell
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Also reaps the shell when the hook is dropped; `group` below kills the rest.
        .kill_on_drop(true);
    #[cfg(unix)]
    shell.process_group(0);
    let mut child = match shell.spawn() {
        Ok(child) => child,
        Err(error) => return ShellEnd::NotStarted(error),
    };
    // Taken before the shell can be reaped, while its id is still the group's id.
    let group = ProcessGroup::led_by(&child);
    let input = child.stdin.take();
    let out = child.stdout.take();
    let err = child.stderr.take();
    let (exited_tx, exited_rx) = oneshot::channel::<()>();

    let work = async {
        let wait = async {
            let status = child.wait().await;
            let _ = exited_tx.send(());
            status
        };
        let io = async {
            let write = async {
                if let (Some(mut input), Some(bytes)) = (input, stdin) {
                    // A command that does not read its input closes the pipe: not an error.
                    let _ = input.write_all(bytes).await;
                }
            };
            let streams = async { tokio::join!(write, pump(out, stdout), pump(err, stderr)) };
            let grace = async {
                let _ = exited_rx.await;
                tokio::time::sleep(timing.output_grace).await;
            };
            tokio::select! {
                _ = streams => {}
                () = grace => {}
            }
        };
        tokio::join!(wait, io).0
    };
    // Bound to a variable so that `work`, which borrows `child`, is dropped before the match.
    let result = tokio::time::timeout(timing.timeout, work).await;
    // Whether the shell exited or timed out, whatever it left running in its group goes now.
    drop(group);
    match result {
        Ok(Ok(status)) => ShellEnd::Exited(status),
        Ok(Err(error)) => ShellEnd::NotAwaited(error),
        Err(_elapsed) => {
            // The group kill above reached the shell too; reap it now rather than leaving it to
            // `kill_on_drop`, so it is gone when the hook returns.
            let _ = child.kill().await;
            ShellEnd::TimedOut
        }
    }
}

/// Reads one stream to its end into `sink`.
async fn pump(stream: Option<impl AsyncRead + Unpin>, sink: &mut impl OutputSink) {
    let Some(mut stream) = stream else { return };
    let mut buf = [0u8; 8192];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => sink.write(&buf[..n]),
        }
    }
    sink.end();
}
