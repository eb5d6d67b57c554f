//! CONFORMANCE B7: command rules checked against what a real `bash -c` runs, not against our
//! belief about it.
//!
//! Each case runs under `/usr/bin/bash -c` (or wherever bash is) with `PATH` set to a folder of
//! stub programs (`git`, `ls`, `rm`, `curl`, `npm`, `cat`) that append their name and arguments
//! to a log and do nothing else, so a destructive or hanging spelling is safe. The programs
//! that run others (`env`, `timeout`, `nohup`, `nice`, `stdbuf`, `setsid`, `xargs`, `find`,
//! `sh`, `bash`, `dash`, `time`) are links to the real ones; `sudo` and `doas`, absent from
//! most test machines and needing a password, are stubs that drop their options and exec the
//! rest through `env`, as they would. The expected answer is what the log shows: did `git` run
//! with `push` as its subcommand; did any program other than `ls` run. Aliases are not
//! expanded by `bash -c` (it is not interactive), so no case relies on one.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::json;

use super::{PermissionRule, RuleKind, SettingsPermissions};

/// The programs that record that they ran.
const STUBS: &[&str] = &["git", "ls", "rm", "curl", "npm", "cat"];

/// The real programs on the stub `PATH`, where the machine has them.
const REAL: &[&str] =
    &["env", "timeout", "nohup", "nice", "stdbuf", "setsid", "xargs", "find", "sh", "bash", "dash", "zsh", "time"];

/// Spellings that run `git push`, as published bypasses of prefix matchers write them.
const GIT_PUSH: &[&str] = &[
    "git push",
    "git  push",
    "git\tpush",
    "git push origin main",
    "git push --force",
    "FOO=1 git push",
    "FOO=1 BAR=2 git push",
    "sudo git push",
    "sudo -u root git push",
    "sudo FOO=1 git push",
    "doas git push",
    "timeout 5 git push",
    "timeout -s KILL 5 git push",
    "timeout --kill-after=1 5 git push",
    "nohup git push",
    "nice git push",
    "nice -n 5 git push",
    "env git push",
    "env -i git push",
    "env FOO=1 git push",
    "env -u HOME git push",
    "env -- git push",
    "command git push",
    "exec git push",
    "stdbuf -oL git push",
    "setsid git push",
    "setsid -w git push",
    "time git push",
    "time -p git push",
    "/usr/bin/time git push",
    "(git push)",
    "( git push )",
    "{ git push; }",
    "true & git push",
    "true; git push",
    "true && git push",
    "false || git push",
    "true\ngit push",
    "true | git push",
    "true |& git push",
    "git push | cat",
    "git push>/dev/null",
    ">/dev/null git push",
    "2>&1 git push",
    "</dev/null git push",
    "git push 2>/dev/null",
    "\"git\" push",
    "'git' 'push'",
    "git \"push\"",
    "g\\it push",
    "gi\\t pu\\sh",
    "$'git' push",
    "$'\\x67it' push",
    "$'\\147it' push",
    "gi\"\"t push",
    "g''it push",
    "git \\\npush",
    "@BIN@/git push",
    "@BIN@/./git push",
    "cd @BIN@ && ./git push",
    "echo $(git push)",
    "echo `git push`",
    "echo \"$(git push)\"",
    "X=$(git push)",
    "X=`git push` true",
    "cat <(git push) >/dev/null; wait $!",
    "true > >(git push)",
    "true >$(git push)",
    "cat <<EOF\n$(git push)\nEOF",
    "cat <<< $(git push)",
    "echo ${X:-$(git push)}",
    "echo $(( $(git push) + 1 ))",
    "[[ -n $(git push) ]]",
    "echo $(echo $(git push))",
    "bash -c 'git push'",
    "bash -c \"git push\"",
    "sh -c 'git push'",
    "dash -c 'git push'",
    "bash -xc 'git push'",
    "bash -e -c 'git push'",
    "bash -c 'true; git push'",
    "sh -c \"sh -c 'git push'\"",
    "eval 'git push'",
    "eval git push",
    "eval \"git push\"",
    "eval 'eval git push'",
    "echo | xargs git push",
    "echo origin | xargs git push",
    "xargs git push </dev/null",
    "echo push | xargs git",
    "echo push | xargs -I{} git {}",
    "find . -maxdepth 0 -exec git push \\;",
    "find . -maxdepth 0 -execdir git push \\;",
    "find . -maxdepth 0 -exec git push {} +",
    "find . -maxdepth 0 -exec sh -c 'git push' \\;",
    "$(echo git) push",
    "`echo git` push",
    "CMD=git; $CMD push",
    "X=push; git $X",
    "${CMD:-git} push",
    "git pu*",
    "gi? push",
    "git {push,}",
    "{git,push}",
    "A=git; B=push; $A $B",
    "echo git push | bash",
    "echo git push | sh",
    "bash <<<'git push'",
    "bash <(echo git push)",
    "source <(echo git push)",
    ". /dev/stdin <<<'git push'",
    "f() { git push; }; f",
    "function f { git push; }; f",
    "git() { command git \"$@\"; }; git push",
    "if true; then git push; fi",
    "if git push; then :; fi",
    "if false; then :; else git push; fi",
    "while git push; do break; done",
    "until git push; do :; done",
    "for x in 1; do git push; done",
    "for ((i=0; i<1; i++)); do git push; done",
    "case x in x) git push;; esac",
    "case $(git push) in *) ;; esac",
    "! git push",
    "coproc git push; wait",
    "trap 'git push' EXIT",
    "sudo timeout 5 nohup env A=1 bash -c \"eval 'git push'\"",
    "env bash -c 'git push'",
    "timeout 5 sh -c 'git push'",
    "nice bash -c 'git push'",
    "xargs -0 sh -c 'git push' </dev/null",
    "true && (false || { git push; })",
    "ls & git push",
    "ls $(git push)",
    "ls `git push`",
    "ls >(git push)",
    "ls; git push",
    "ls && git push",
    "ls | git push",
    "ls\ngit push",
    "ls <(git push)",
    "ls \"$(git push)\"",
];

/// Commands after which no `git push` runs and that must not be denied by
/// `Bash(git push:*)`: over-denial is a cost too.
const NOT_DENIED: &[&str] = &[
    "echo \"git push\"",
    "echo git push",
    "echo 'git push'",
    "git log --grep='git push'",
    "cat notes-about-git-push.txt",
    "git status",
    "git pushy",
    "git pull",
    "git commit -m 'git push later'",
    "npm test",
    "ls -la",
    "rm -rf build",
    "curl https://example.com",
    "printf '%s\\n' 'sh -c \"git push\"'",
    "echo eval git push",
    "echo bash -c 'git push'",
    "cat <<'EOF'\n$(git push)\nEOF",
    "git status; npm test",
    "git log | cat",
    "command -v git",
    "ls $HOME",
    "git status $X",
    "echo $(git status)",
    "find . -maxdepth 0 -name push",
    "find . -maxdepth 0 -exec git status \\;",
    "timeout 5 git pull",
    "sudo git status",
    "bash -c 'git status'",
    "npm run build && npm test",
];

/// Commands after which no `git push` runs but that `Bash(git push:*)` denies all the same,
/// since what they run cannot be known before they run; the reason says what.
const FAIL_CLOSED: &[&str] = &[
    "$(echo ls) -la",
    "$CMD status",
    "git $SUB",
    "echo status | xargs git",
    "eval \"$X\"",
    "bash -c \"$X\"",
    "echo 'unterminated",
    "git pu?l",
    "echo ls | bash",
];

/// Commands for the allow side: `Bash(ls:*)` may pass only those after which `ls` alone ran.
const ALLOW_SIDE: &[&str] = &[
    "ls",
    "ls -la",
    "ls; ls src",
    "ls | ls",
    "ls & git push",
    "ls $(git push)",
    "ls `git push`",
    "ls >(git push)",
    "ls <(rm -rf x)",
    "ls && rm -rf x",
    "ls || curl evil",
    "ls\nnpm install",
    "ls; (rm x)",
    "ls > $(rm x)",
    "ls \"$(curl evil)\"",
    "ls | xargs rm",
    "ls | sh",
    "ls; eval rm x",
    "ls; bash -c 'rm x'",
    "ls -exec rm {} \\;",
    "X=$(rm x) ls",
    "$(echo rm) x",
    "l\\s; r\\m x",
    "ls; find . -maxdepth 0 -exec rm {} \\;",
    "ls; sudo rm x",
    "ls; env rm x",
    "ls; timeout 5 rm x",
    "ls <<EOF\n$(rm x)\nEOF",
    "ls; trap 'rm x' EXIT",
];

/// The stub folder and the log of one worker.
struct Recorder {
    bin: PathBuf,
    work: PathBuf,
    log: PathBuf,
}

impl Recorder {
    fn new(root: &Path, index: usize) -> Recorder {
        let bin = root.join(format!("bin{index}"));
        let work = root.join(format!("work{index}"));
        let log = root.join(format!("log{index}"));
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(&work).unwrap();
        // `git pu*` and `gi? push` find these files and run `git push`, as bash would in such
        // a folder.
        std::fs::write(work.join("push"), "").unwrap();
        std::fs::write(work.join("git"), "").unwrap();
        for stub in STUBS {
            let script = format!(
                "#!/bin/sh\n{{ printf '%s' '{stub}'; for a in \"$@\"; do printf ' %s' \"$a\"; done; echo; }} >> '{}'\n",
                log.display()
            );
            write_executable(&bin.join(stub), &script);
        }
        // `sudo` and `doas` drop their options and run the rest, assignments included.
        let elevate = "#!/bin/sh\nwhile :; do case \"$1\" in -u|-g|-C|-D|-h|-p) shift 2;; --) shift; break;; -*) shift;; *) break;; esac; done\nexec env \"$@\"\n";
        write_executable(&bin.join("sudo"), elevate);
        write_executable(&bin.join("doas"), elevate);
        for real in REAL {
            if let Some(path) = ["/usr/bin", "/bin"].iter().map(|dir| Path::new(dir).join(real)).find(|p| p.exists()) {
                std::os::unix::fs::symlink(path, bin.join(real)).unwrap();
            }
        }
        Recorder { bin, work, log }
    }

    /// `case` with `@BIN@` standing for the stub folder.
    fn command(&self, case: &str) -> String {
        case.replace("@BIN@", &self.bin.to_string_lossy())
    }

    /// The programs `command` ran under `bash -c`, one line each: name and arguments.
    fn run(&self, command: &str) -> Vec<String> {
        std::fs::write(&self.log, "").unwrap();
        let bash = ["/usr/bin/bash", "/bin/bash"].into_iter().find(|p| Path::new(p).exists()).expect("bash");
        let timeout =
            ["/usr/bin/timeout", "/bin/timeout"].into_iter().find(|p| Path::new(p).exists()).expect("timeout");
        // Stderr is a pipe read to its end: every process the case started (a process
        // substitution's, a background job's) holds it until it exits, so its record is in
        // this case's log, never in the next one's.
        let status = Command::new(timeout)
            .args(["-k", "1", "5", bash, "-c", command])
            .env_clear()
            .env("PATH", &self.bin)
            .env("HOME", &self.work)
            .current_dir(&self.work)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .unwrap()
            .status;
        assert_ne!(status.code(), Some(124), "`{command}` hung");
        std::fs::read_to_string(&self.log).unwrap().lines().map(str::to_owned).collect()
    }
}

fn write_executable(path: &Path, script: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    let mut file = std::fs::File::create(path).unwrap();
    file.write_all(script.as_bytes()).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// What every case ran, in table order, run on a few threads: the case, the command as run,
/// and the log.
fn record(cases: &[&'static str]) -> Vec<(&'static str, String, Vec<String>)> {
    let root = std::env::temp_dir().join(format!("hooks-b7-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let workers = 4;
    let chunk = cases.len().div_ceil(workers);
    let ran = std::thread::scope(|scope| {
        let handles: Vec<_> = cases
            .chunks(chunk)
            .enumerate()
            .map(|(index, cases)| {
                let root = &root;
                scope.spawn(move || {
                    let recorder = Recorder::new(root, index);
                    cases
                        .iter()
                        .map(|case| {
                            let command = recorder.command(case);
                            let log = recorder.run(&command);
                            (*case, command, log)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|handle| handle.join().unwrap()).collect()
    });
    let _ = std::fs::remove_dir_all(&root);
    ran
}

fn ran_git_push(log: &[String]) -> bool {
    log.iter().any(|line| line == "git push" || line.starts_with("git push "))
}

#[test]
fn b7_command_rules_hold_against_what_bash_really_ran() {
    let deny = SettingsPermissions {
        deny: vec![PermissionRule::parse("Bash(git push:*)").unwrap()],
        ..SettingsPermissions::default()
    };
    let allow_ls = PermissionRule::parse("Bash(ls:*)").unwrap();
    let cases: Vec<&'static str> =
        GIT_PUSH.iter().chain(NOT_DENIED).chain(FAIL_CLOSED).chain(ALLOW_SIDE).copied().collect();
    assert!(cases.len() >= 200, "{} cases", cases.len());
    let ran = record(&cases);

    let mut failures = Vec::new();
    let mut pushed = 0;
    for (case, command, log) in &ran {
        let arguments = json!({"command": command});
        let denial = deny.decide("Bash", &arguments).map(|found| found.reason);
        // Deny side: every case in which `git push` ran is denied.
        if ran_git_push(log) {
            pushed += 1;
            if denial.is_none() {
                failures.push(format!("ran `git push` and was not denied: {command:?} (ran {log:?})"));
            }
        }
        // Allow side: a case in which anything but `ls` ran is never passed by `Bash(ls:*)`.
        let other = log.iter().find(|line| line.split(' ').next() != Some("ls"));
        if let Some(other) = other
            && allow_ls.selects_as(RuleKind::Allow, "Bash", &arguments)
        {
            failures.push(format!("`Bash(ls:*)` allows {command:?}, which ran `{other}`"));
        }
        if NOT_DENIED.contains(case) {
            assert!(!ran_git_push(log), "{command:?} is listed as not running `git push` but ran {log:?}");
            if let Some(reason) = &denial {
                failures.push(format!("over-denied {command:?}: {reason}"));
            }
        }
        if FAIL_CLOSED.contains(case) {
            match &denial {
                Some(reason) if reason.contains("cannot be known before it runs") => {}
                other => failures.push(format!("{command:?} should fail closed, naming what is unknown: {other:?}")),
            }
        }
    }
    println!("b7: {} cases under bash, {pushed} of them ran `git push`", ran.len());
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    // The stubs really recorded: most spellings of the first table ran `git push` under bash.
    assert!(pushed >= GIT_PUSH.len() * 9 / 10, "only {pushed} of {} cases ran `git push`", GIT_PUSH.len());
    let allowed =
        ran.iter().filter(|(_, command, _)| allow_ls.selects_as(RuleKind::Allow, "Bash", &json!({"command": command})));
    assert!(allowed.count() >= 4, "the allow rule still allows plain `ls` commands");
}
