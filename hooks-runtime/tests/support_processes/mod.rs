//! Finding a test's processes by an argument unique to it (`/proc/*/cmdline`): the process-group
//! suites (Y14, settings hooks' process death) and the MCP suite's P3 use it to see that the
//! processes they started are gone. A killed process that is a zombie has an empty command
//! line, so it does not count as alive.

/// Ids of the live processes that have `arg` as one of their arguments.
pub(crate) fn processes_with_arg(arg: &str) -> Vec<u32> {
    processes_where(|argument| argument == arg.as_bytes())
}

/// Ids of the live processes one of whose arguments contains `fragment` (a shell's `-c`
/// script naming a file unique to the test, say).
#[allow(dead_code)] // settings_process_death has no use for it
pub(crate) fn processes_mentioning(fragment: &str) -> Vec<u32> {
    let fragment = fragment.as_bytes();
    processes_where(|argument| argument.windows(fragment.len()).any(|window| window == fragment))
}

/// Ids of the live processes one of whose arguments satisfies `matches`.
fn processes_where(matches: impl Fn(&[u8]) -> bool) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            cmdline.split(|b| *b == 0).any(&matches).then_some(pid)
        })
        .collect()
}
