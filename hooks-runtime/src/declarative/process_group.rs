//! The process group a command runs in, killed whole when its hook is done with it (Y14).
//!
//! `sh -c` is started as the leader of a new process group, and everything it starts joins that
//! group unless it leaves on purpose. Killing the group with one `SIGKILL` reaches background
//! jobs, subshells and grandchildren that killing `sh` alone would orphan. A process that calls
//! `setsid` (or `setpgid`) moves to a group of its own; it is out of reach, as a daemon should be.

use tokio::process::Child;

/// Kills its process group when dropped: when the command finished, timed out, or its hook's
/// future was dropped (the caller gave up, or the async runtime shut down).
pub(super) struct ProcessGroup {
    #[cfg(unix)]
    leader: Option<nix::unistd::Pid>,
}

impl ProcessGroup {
    /// The group that `child` leads; the child must have been spawned with `process_group(0)`
    /// and not awaited yet (its id is gone once it has been reaped).
    pub(super) fn led_by(child: &Child) -> Self {
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
