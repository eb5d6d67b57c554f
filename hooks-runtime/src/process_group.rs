//! The process group a child process runs in, killed whole when its owner is done with it: a
//! declarative command's when its hook is done (Y14), an MCP server's when its connection ends
//! (P3). [`watched`] adds a watchdog to the group that kills it once this process is gone.
//!
//! `sh -c` is started as the leader of a new process group, and everything it starts joins that
//! group unless it leaves on purpose. Killing the group with one `SIGKILL` reaches background
//! jobs, subshells and grandchildren that killing `sh` alone would orphan. A process that calls
//! `setsid` (or `setpgid`) moves to a group of its own; it is out of reach, as a daemon should be.

use tokio::process::Child;

/// Kills its process group when dropped: when the command finished, timed out, or its owner's
/// future was dropped (the caller gave up, or the async runtime shut down).
pub(crate) struct ProcessGroup {
    #[cfg(unix)]
    leader: Option<nix::unistd::Pid>,
}

impl ProcessGroup {
    /// The group that `child` leads; the child must have been spawned with `process_group(0)`
    /// and not awaited yet (its id is gone once it has been reaped).
    pub(crate) fn led_by(child: &Child) -> Self {
        #[cfg(unix)]
        {
            let leader = child.id().and_then(|id| i32::try_from(id).ok()).map(nix::unistd::Pid::from_raw);
            ProcessGroup { leader }
        }
        #[cfg(not(unix))]
        {
            let _ = child;
            ProcessGroup {}
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        // While any member lives the kernel does not reuse the group's id, so this reaches our
        // group only. An empty group makes the kill fail with ESRCH, which is fine; its id could
        // only be taken by a new group after the kernel cycled through every free pid in between.
        #[cfg(unix)]
        if let Some(leader) = self.leader {
            let _ = nix::sys::signal::killpg(leader, nix::sys::signal::Signal::SIGKILL);
        }
    }
}

/// The wrapper a watched child runs in: a watchdog in the child's process group polls this
/// process (`$1`) each second and, once it is gone (killed with SIGKILL, say), kills the whole
/// group, so no child outlives the runtime that started it. Then the shell becomes the program
/// (`exec "$@"` once `$1` is shifted off), so the group's leader, its pid, stdio and exit status
/// are the program's. The workspace forbids `unsafe`, so a parent-death signal set in the child
/// (`prctl`) is not an option; it would reach the direct child only, not what the child started.
const WATCHED: &str = r#"( while kill -0 "$1" 2>/dev/null; do sleep 1; done; kill -KILL 0 ) </dev/null >/dev/null 2>&1 &
shift; exec "$@""#;

/// `program args...`, run under the watchdog of [`WATCHED`], as the leader of a new process
/// group (Unix). The caller adds its environment, working directory and stdio, spawns it, and
/// holds a [`ProcessGroup::led_by`] the child for as long as the child may live.
pub(crate) fn watched<I, S>(program: impl AsRef<std::ffi::OsStr>, args: I) -> tokio::process::Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    #[cfg(unix)]
    {
        let mut shell = tokio::process::Command::new("sh");
        shell.arg("-c").arg(WATCHED).arg("sh").arg(std::process::id().to_string()).arg(program).args(args);
        shell.process_group(0);
        shell
    }
    #[cfg(not(unix))]
    {
        let mut command = tokio::process::Command::new(program);
        command.args(args);
        command
    }
}
