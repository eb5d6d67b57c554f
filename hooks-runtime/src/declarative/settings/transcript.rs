//! A thread's history in Claude Code's transcript shape, the JSONL file a hook's
//! `transcript_path` names: a line per message, `type` (`user` or `assistant`),
//! `message.role` and `message.content` (the text of a typed user message; blocks of `text`,
//! `tool_use` and `tool_result` otherwise), with `uuid`, `parentUuid`, `sessionId`,
//! `timestamp` and `cwd` as that format writes them.
//!
//! H2: the files live in a [`TranscriptDir`], a directory made fresh in the temporary folder
//! (`hooks-transcripts-<pid>-<random>`, mode 0700, never one that already exists), written
//! without following links, removed when its owner is dropped; at a runtime's build,
//! [`remove_stale`] removes those of this user's processes that are gone (killed, say).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use hooks_core::{HookMessage, Role};
use serde_json::{Value, json};

/// The transcript of `messages`, the thread `session_id`'s history in order.
pub(crate) fn render(session_id: &str, cwd: &Path, messages: &[HookMessage]) -> String {
    let mut out = String::new();
    let mut parent: Option<&str> = None;
    for message in messages {
        let Some((kind, content)) = entry(message) else { continue };
        let line = json!({
            "type": kind,
            "uuid": message.id,
            "parentUuid": parent,
            "sessionId": session_id,
            "timestamp": timestamp(message.created_at),
            "cwd": cwd.to_string_lossy(),
            "message": {"role": kind, "content": content},
        });
        // Compact, one object a line: scripts `grep '"role":"assistant"'` it.
        out.push_str(&line.to_string());
        out.push('\n');
        parent = Some(&message.id);
    }
    out
}

/// The line's `type` and `message.content` of one message; `None` for what the format's
/// transcript has no line for (system messages).
fn entry(message: &HookMessage) -> Option<(&'static str, Value)> {
    let text = message.content.clone().unwrap_or_default();
    match message.role {
        Role::User => Some(("user", Value::String(text))),
        Role::Assistant => {
            let mut blocks = Vec::new();
            if !text.is_empty() {
                blocks.push(json!({"type": "text", "text": text}));
            }
            let calls: Vec<Value> =
                message.tool_calls.as_deref().and_then(|calls| serde_json::from_str(calls).ok()).unwrap_or_default();
            for call in calls {
                let arguments = call["function"]["arguments"].as_str().unwrap_or("{}");
                let input = serde_json::from_str::<Value>(arguments).unwrap_or_else(|_| json!({}));
                blocks.push(
                    json!({"type": "tool_use", "id": call["id"], "name": call["function"]["name"], "input": input}),
                );
            }
            Some(("assistant", Value::Array(blocks)))
        }
        Role::Tool => {
            let is_error = message.extra_str("tool_status") == Some("error");
            let block = json!({"type": "tool_result", "tool_use_id": message.tool_call_id, "content": text, "is_error": is_error});
            Some(("user", json!([block])))
        }
        _ => None,
    }
}

/// Milliseconds since the Unix epoch as `2025-01-31T12:00:00.000Z`.
fn timestamp(millis: i64) -> String {
    let (days, rest) = (millis.div_euclid(86_400_000), millis.rem_euclid(86_400_000));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (hours, minutes, seconds, ms) = (rest / 3_600_000, rest / 60_000 % 60, rest / 1000 % 60, rest % 1000);
    format!("{year:04}-{month:02}-{day:02}T{hours:02}:{minutes:02}:{seconds:02}.{ms:03}Z")
}

/// The start of every transcripts directory's name; the process id and a random part follow.
const DIR_PREFIX: &str = "hooks-transcripts-";

/// How many fresh names are tried before giving up (each one taken already by someone else).
const CREATE_ATTEMPTS: usize = 8;

/// A private directory of transcripts: made fresh, readable by this user only, removed (with
/// what is in it) when dropped.
#[derive(Debug)]
pub(crate) struct TranscriptDir {
    path: PathBuf,
}

impl TranscriptDir {
    /// A new directory in the temporary folder (`TMPDIR`).
    pub(crate) fn create() -> std::io::Result<Self> {
        Self::create_in(&std::env::temp_dir())
    }

    /// A new directory in `parent`, named `hooks-transcripts-<pid>-<random>`, made with mode
    /// 0700 by one `mkdir`, which fails when the name exists (a directory, file or link someone
    /// made first is never used): then another random name is tried.
    pub(crate) fn create_in(parent: &Path) -> std::io::Result<Self> {
        for _ in 0..CREATE_ATTEMPTS {
            let path = parent.join(format!("{DIR_PREFIX}{}-{}", std::process::id(), random_suffix()));
            match make_private(&path) {
                Ok(()) => return Ok(TranscriptDir { path }),
                Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(error) => {
                    return Err(std::io::Error::new(
                        error.kind(),
                        format!("the transcripts directory `{}` could not be made: {error}", path.display()),
                    ));
                }
            }
        }
        Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!(
                "no transcripts directory could be made in `{}`: {CREATE_ATTEMPTS} fresh names were all taken",
                parent.display()
            ),
        ))
    }

    /// The directory.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TranscriptDir {
    fn drop(&mut self) {
        // `remove_dir_all` does not follow links inside the directory.
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Makes the directory `path` with mode 0700, by one `mkdir` that fails with `AlreadyExists`
/// when anything (a directory, a file, a link) has that name.
fn make_private(path: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(path)
}

/// 128 bits no other user can guess: two SipHash values under fresh keys, which the standard
/// library draws from the system's random source.
fn random_suffix() -> String {
    use std::hash::{BuildHasher, Hasher};
    let half = || {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos(),
        );
        hasher.finish()
    };
    format!("{:016x}{:016x}", half(), half())
}

/// Writes `text` to the transcript file `path`, created with mode 0600 or truncated, opened
/// without following a link: a symbolic link put in its place is an error, never a write
/// through it.
pub(crate) fn write(path: &Path, text: &str) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600).custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits());
    }
    let mut file = options
        .open(path)
        .map_err(|error| std::io::Error::new(error.kind(), format!("`{}`: {error}", path.display())))?;
    file.write_all(text.as_bytes())
}

/// Removes the transcripts directories that processes of this user left in the temporary
/// folder and that are gone (a process killed with `SIGKILL` drops nothing): those whose name's
/// process id is no running process. Another user's, a link, and a running process's are left.
pub(crate) fn remove_stale() {
    remove_stale_in(&std::env::temp_dir());
}

/// [`remove_stale`] in `parent`; returns the directories removed.
pub(crate) fn remove_stale_in(parent: &Path) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let Ok(entries) = std::fs::read_dir(parent) else { return removed };
        let me = nix::unistd::getuid().as_raw();
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(pid) = name
                .to_str()
                .and_then(|name| name.strip_prefix(DIR_PREFIX))
                .and_then(|rest| rest.split_once('-').and_then(|(pid, _)| pid.parse::<i32>().ok()))
            else {
                continue;
            };
            // 0 and negative ids name process groups to `kill`; none of ours has one.
            if pid <= 0 || pid.unsigned_abs() == std::process::id() {
                continue;
            }
            let path = entry.path();
            let Ok(metadata) = std::fs::symlink_metadata(&path) else { continue };
            if !metadata.is_dir() || metadata.uid() != me || process_alive(pid) {
                continue;
            }
            match std::fs::remove_dir_all(&path) {
                Ok(()) => removed.push(path),
                Err(error) => tracing::warn!(
                    target: crate::declarative::LOG_TARGET,
                    "[HOOK] the stale transcripts directory `{}` could not be removed: {error}",
                    path.display()
                ),
            }
        }
    }
    #[cfg(not(unix))]
    let _ = parent;
    removed
}

/// Whether a process `pid` runs: signal 0 reaches it, or it is another user's (`EPERM`).
#[cfg(unix)]
fn process_alive(pid: i32) -> bool {
    !matches!(nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None), Err(nix::errno::Errno::ESRCH))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k7_timestamps_are_iso_8601() {
        assert_eq!(timestamp(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(timestamp(1_738_324_800_123), "2025-01-31T12:00:00.123Z");
        assert_eq!(timestamp(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }
}

#[cfg(all(test, unix))]
mod h2_tests {
    use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};

    use super::*;

    /// A scratch folder of this test's own, removed at the end.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(test: &str) -> Scratch {
            let path = std::env::temp_dir().join(format!("h2-{test}-{}-{}", std::process::id(), random_suffix()));
            std::fs::create_dir(&path).unwrap();
            Scratch(path)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn h2_the_directory_is_fresh_private_and_removed_with_its_owner() {
        let scratch = Scratch::new("fresh");
        let dir = TranscriptDir::create_in(&scratch.0).unwrap();
        let metadata = std::fs::symlink_metadata(dir.path()).unwrap();
        assert!(metadata.is_dir());
        assert_eq!(metadata.permissions().mode() & 0o777, 0o700);
        assert_eq!(metadata.uid(), nix::unistd::getuid().as_raw());
        let name = dir.path().file_name().unwrap().to_str().unwrap().to_owned();
        let random = name.strip_prefix(&format!("{DIR_PREFIX}{}-", std::process::id())).expect(&name);
        assert_eq!(random.len(), 32, "{name}");
        let other = TranscriptDir::create_in(&scratch.0).unwrap();
        assert_ne!(other.path(), dir.path(), "a new random name each time");
        let path = dir.path().to_owned();
        write(&path.join("t.jsonl"), "line\n").unwrap();
        assert_eq!(std::fs::metadata(path.join("t.jsonl")).unwrap().permissions().mode() & 0o777, 0o600);
        drop(dir);
        assert!(!path.exists(), "removed with its owner");
    }

    #[test]
    fn h2_a_name_someone_made_first_is_refused_whatever_it_is() {
        let scratch = Scratch::new("taken");
        // Another user's world-writable directory, and a link to a directory of the victim's.
        let planted = scratch.0.join("planted");
        std::fs::create_dir(&planted).unwrap();
        std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o777)).unwrap();
        let error = make_private(&planted).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::metadata(&planted).unwrap().permissions().mode() & 0o777, 0o777, "left as it was");
        let target = scratch.0.join("victims");
        std::fs::create_dir(&target).unwrap();
        let link = scratch.0.join("link");
        symlink(&target, &link).unwrap();
        assert_eq!(make_private(&link).unwrap_err().kind(), std::io::ErrorKind::AlreadyExists);
    }

    #[test]
    fn h2_a_link_in_place_of_a_transcript_is_not_written_through() {
        let scratch = Scratch::new("link");
        let victim = scratch.0.join("private.key");
        std::fs::write(&victim, "precious").unwrap();
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
        let dir = TranscriptDir::create_in(&scratch.0).unwrap();
        let transcript = dir.path().join("thread.jsonl");
        symlink(&victim, &transcript).unwrap();
        let error = write(&transcript, "the thread's text").unwrap_err();
        assert!(error.to_string().contains("thread.jsonl"), "{error}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    }

    #[test]
    fn h2_stale_directories_of_gone_processes_are_removed_and_no_other() {
        let scratch = Scratch::new("stale");
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        let gone_pid = gone.id();
        gone.wait().unwrap();
        let stale = scratch.0.join(format!("{DIR_PREFIX}{gone_pid}-0123abcd"));
        std::fs::create_dir(&stale).unwrap();
        std::fs::write(stale.join("thread.jsonl"), "the thread's text").unwrap();
        // A running process's (pid 1 always runs), this process's, a link and a file are kept.
        let running = scratch.0.join(format!("{DIR_PREFIX}1-0123abcd"));
        std::fs::create_dir(&running).unwrap();
        let own = TranscriptDir::create_in(&scratch.0).unwrap();
        let elsewhere = scratch.0.join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let link = scratch.0.join(format!("{DIR_PREFIX}{gone_pid}-link"));
        symlink(&elsewhere, &link).unwrap();
        let file = scratch.0.join(format!("{DIR_PREFIX}{gone_pid}-file"));
        std::fs::write(&file, "").unwrap();

        assert_eq!(remove_stale_in(&scratch.0), vec![stale.clone()]);
        assert!(!stale.exists());
        for kept in [&running, own.path(), &elsewhere, &file] {
            assert!(kept.exists(), "{} was removed", kept.display());
        }
        assert!(std::fs::symlink_metadata(&link).is_ok());
    }
}
