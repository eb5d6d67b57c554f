//! Commands that run other commands (CONFORMANCE B3): what `env`, `sudo`, `timeout`, `xargs`,
//! `find -exec`, `sh -c`, `eval` and the like run, read from their words the way each program
//! reads its options. An option a program is not known to take makes what it runs unknown:
//! guessing would let an option's value pass for the program.

use super::words::{Word, shown};

/// What a simple command runs besides itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Runs {
    /// A command, as words.
    Command(Vec<Word>),
    /// A shell script to parse in turn (`sh -c STRING`, `eval`, `trap`, `watch`).
    Script(String),
    /// Something that cannot be known before it runs, and why.
    Unknown(String),
}

/// How a program reads its options: short options that take a value (`-u root`, `-uroot`),
/// short flags, short options whose value is optional and only attached (`xargs -i{}`), long
/// options that take a value (`--user root`, `--user=root`), and long flags.
struct Options {
    short_value: &'static str,
    short_flags: &'static str,
    short_attached: &'static str,
    long_value: &'static [&'static str],
    long_flags: &'static [&'static str],
    /// Whether `+x` is an option too (the shells' `set` options).
    plus: bool,
}

const ENV: Options = Options {
    plus: false,
    short_value: "uC",
    short_flags: "i0v",
    short_attached: "",
    long_value: &["unset", "chdir"],
    long_flags: &[
        "ignore-environment",
        "null",
        "debug",
        "default-signal",
        "ignore-signal",
        "block-signal",
        "list-signal-handling",
    ],
};

const SUDO: Options = Options {
    plus: false,
    short_value: "ugCDhprtTUR",
    short_flags: "AbEeHiKklnPSsVvBN",
    short_attached: "",
    long_value: &[
        "user",
        "group",
        "close-from",
        "chdir",
        "host",
        "prompt",
        "role",
        "type",
        "command-timeout",
        "other-user",
        "chroot",
    ],
    long_flags: &[
        "preserve-env",
        "login",
        "shell",
        "non-interactive",
        "stdin",
        "background",
        "edit",
        "list",
        "validate",
        "reset-timestamp",
        "remove-timestamp",
        "preserve-groups",
        "set-home",
        "askpass",
        "bell",
    ],
};

const DOAS: Options = Options {
    plus: false,
    short_value: "uC",
    short_flags: "nsL",
    short_attached: "",
    long_value: &[],
    long_flags: &[],
};

const COMMAND: Options =
    Options { plus: false, short_value: "", short_flags: "pvV", short_attached: "", long_value: &[], long_flags: &[] };

const EXEC: Options =
    Options { plus: false, short_value: "a", short_flags: "cl", short_attached: "", long_value: &[], long_flags: &[] };

const NICE: Options = Options {
    plus: false,
    short_value: "n",
    short_flags: "",
    short_attached: "",
    long_value: &["adjustment"],
    long_flags: &[],
};

const NOHUP: Options =
    Options { plus: false, short_value: "", short_flags: "", short_attached: "", long_value: &[], long_flags: &[] };

const TIMEOUT: Options = Options {
    plus: false,
    short_value: "sk",
    short_flags: "v",
    short_attached: "",
    long_value: &["signal", "kill-after"],
    long_flags: &["preserve-status", "foreground", "verbose"],
};

const TIME: Options = Options {
    plus: false,
    short_value: "fo",
    short_flags: "pvaq",
    short_attached: "",
    long_value: &["format", "output"],
    long_flags: &["portability", "verbose", "append", "quiet"],
};

const STDBUF: Options = Options {
    plus: false,
    short_value: "ioe",
    short_flags: "",
    short_attached: "",
    long_value: &["input", "output", "error"],
    long_flags: &[],
};

const SETSID: Options = Options {
    plus: false,
    short_value: "",
    short_flags: "cfw",
    short_attached: "",
    long_value: &[],
    long_flags: &["ctty", "fork", "wait"],
};

const WATCH: Options = Options {
    plus: false,
    short_value: "nq",
    short_flags: "dtbegcxpwrC",
    short_attached: "",
    long_value: &["interval", "equexit"],
    long_flags: &[
        "differences",
        "no-title",
        "beep",
        "errexit",
        "chgexit",
        "color",
        "no-color",
        "exec",
        "precise",
        "no-wrap",
        "no-rerun",
    ],
};

const XARGS: Options = Options {
    plus: false,
    short_value: "adEILnPs",
    short_flags: "0oprtx",
    short_attached: "eil",
    long_value: &[
        "arg-file",
        "delimiter",
        "eof",
        "replace",
        "max-lines",
        "max-args",
        "max-procs",
        "max-chars",
        "process-slot-var",
    ],
    long_flags: &["null", "open-tty", "interactive", "no-run-if-empty", "verbose", "exit"],
};

const SHELL: Options = Options {
    plus: true,
    short_value: "oO",
    short_flags: "abcefhiklmnprstuvxBCEHPT",
    short_attached: "",
    long_value: &["rcfile", "init-file"],
    long_flags: &[
        "norc",
        "noprofile",
        "login",
        "posix",
        "noediting",
        "restricted",
        "verbose",
        "debugger",
        "dump-strings",
        "protected",
    ],
};

/// What the simple command `words` (its program already reduced to its name) runs besides
/// itself.
pub(crate) fn unwrap(words: &[Word]) -> Vec<Runs> {
    let Some(Word::Known(program)) = words.first() else { return Vec::new() };
    let args = &words[1..];
    let runs = match program.as_str() {
        "env" => env(args),
        "sudo" => after_assignments(program, args, &SUDO),
        "doas" => after_options(program, args, &DOAS).map(|(rest, _)| command(rest)),
        "command" => after_options(program, args, &COMMAND)
            // `command -v` and `-V` describe the program; they do not run it.
            .map(|(rest, seen)| if seen.contains(&'v') || seen.contains(&'V') { Vec::new() } else { command(rest) }),
        "builtin" | "nohup" => after_options(program, args, &NOHUP).map(|(rest, _)| command(rest)),
        "exec" => after_options(program, args, &EXEC).map(|(rest, _)| command(rest)),
        "nice" => nice(args),
        "timeout" => after_options(program, args, &TIMEOUT).map(|(rest, _)| command(rest.get(1..).unwrap_or_default())),
        "time" => after_options(program, args, &TIME).map(|(rest, _)| command(rest)),
        "stdbuf" => after_options(program, args, &STDBUF).map(|(rest, _)| command(rest)),
        "setsid" => after_options(program, args, &SETSID).map(|(rest, _)| command(rest)),
        // A multi-call binary: `busybox APPLET ARGS` runs the applet (`busybox sh -c ...`);
        // its own options (`--list`, `--install`) run nothing.
        "busybox" => Ok(match args.first() {
            Some(Word::Known(option)) if option.starts_with('-') => Vec::new(),
            _ => command(args),
        }),
        "watch" => watch(args),
        "xargs" => xargs(args),
        "find" => find(args),
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "ash" => shell(program, args),
        "eval" => Ok(script_of(program, args).into_iter().collect()),
        "trap" => trap(args),
        "source" | "." => Ok(source(program, args).into_iter().collect()),
        "shopt" if args.iter().any(|word| matches!(word, Word::Known(w) if w == "expand_aliases")) => {
            Ok(vec![Runs::Unknown("`shopt expand_aliases` lets aliases stand for other commands".to_owned())])
        }
        _ => Ok(Vec::new()),
    };
    runs.unwrap_or_else(|reason| vec![Runs::Unknown(reason)])
}

fn command(rest: &[Word]) -> Vec<Runs> {
    if rest.is_empty() { Vec::new() } else { vec![Runs::Command(rest.to_vec())] }
}

/// The words after `program`'s options, and the short options seen; an option it is not
/// known to take, or one whose value cannot be known, is an error naming it.
fn after_options<'w>(program: &str, args: &'w [Word], options: &Options) -> Result<(&'w [Word], Vec<char>), String> {
    let mut seen = Vec::new();
    let mut index = 0;
    while let Some(word) = args.get(index) {
        let Word::Known(word) = word else {
            return Err(format!("an option of `{program}` cannot be known: {}", unknown_reason(&args[index])));
        };
        if word == "--" {
            return Ok((&args[index + 1..], seen));
        }
        if let Some(long) = word.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((name, _)) => (name, true),
                None => (long, false),
            };
            if options.long_value.contains(&name) {
                index += if attached { 1 } else { 2 };
            } else if options.long_flags.contains(&name) {
                index += 1;
            } else {
                return Err(format!("`{program}` is not known to take the option `--{}`", shown(name)));
            }
            continue;
        }
        let cluster = match word.strip_prefix('+') {
            Some(cluster) if options.plus => Some(cluster),
            _ => word.strip_prefix('-'),
        };
        let Some(cluster) = cluster.filter(|cluster| !cluster.is_empty()) else {
            return Ok((&args[index..], seen));
        };
        index += 1;
        for (at, c) in cluster.char_indices() {
            seen.push(c);
            if options.short_value.contains(c) {
                if at + c.len_utf8() == cluster.len() {
                    index += 1;
                }
                break;
            }
            if options.short_attached.contains(c) {
                break;
            }
            if !options.short_flags.contains(c) {
                return Err(format!("`{program}` is not known to take the option `-{c}`"));
            }
        }
    }
    Ok((&args[args.len().min(index)..], seen))
}

fn unknown_reason(word: &Word) -> &str {
    match word {
        Word::Unknown(reason) => reason,
        Word::Known(word) => word,
    }
}

/// `NAME=value` words before the command (`env`, `sudo`).
fn after_assignments(program: &str, args: &[Word], options: &Options) -> Result<Vec<Runs>, String> {
    let (rest, _) = after_options(program, args, options)?;
    let start = rest.iter().position(|word| !is_assignment(word)).unwrap_or(rest.len());
    Ok(command(&rest[start..]))
}

fn is_assignment(word: &Word) -> bool {
    let Word::Known(word) = word else { return false };
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

fn env(args: &[Word]) -> Result<Vec<Runs>, String> {
    if args.iter().any(|word| {
        matches!(word, Word::Known(w) if w == "-S" || w.starts_with("--split-string") || (w.starts_with('-') && !w.starts_with("--") && w.contains('S')))
    }) {
        return Err("`env -S` splits a string into a command".to_owned());
    }
    after_assignments("env", args, &ENV)
}

/// `nice -n 5`, `nice -5`, `nice --adjustment=5`.
fn nice(args: &[Word]) -> Result<Vec<Runs>, String> {
    let start = match args.first() {
        Some(Word::Known(first))
            if first.len() > 1
                && first.starts_with('-')
                && first[1..].trim_start_matches('-').parse::<i32>().is_ok() =>
        {
            1
        }
        _ => 0,
    };
    after_options("nice", &args[start..], &NICE).map(|(rest, _)| command(rest))
}

/// `watch CMD...` runs `sh -c "CMD..."`; `watch -x CMD...` runs the command itself.
fn watch(args: &[Word]) -> Result<Vec<Runs>, String> {
    let (rest, seen) = after_options("watch", args, &WATCH)?;
    let exec = seen.contains(&'x') || args.iter().any(|word| matches!(word, Word::Known(w) if w == "--exec"));
    if exec || rest.is_empty() {
        return Ok(command(rest));
    }
    Ok(script_of("watch", rest).into_iter().collect())
}

/// `xargs CMD...` runs the command with words read from its input added (`echo` without one);
/// with `-I`/`-i` they replace a string instead.
fn xargs(args: &[Word]) -> Result<Vec<Runs>, String> {
    let (rest, _) = after_options("xargs", args, &XARGS)?;
    let mut replace = None;
    for (index, word) in args[..args.len() - rest.len()].iter().enumerate() {
        let Word::Known(word) = word else { continue };
        if word == "-I" || word == "--replace" {
            replace = args.get(index + 1).map(|next| unknown_reason(next).to_owned());
        } else if let Some(value) = word.strip_prefix("--replace=").or_else(|| word.strip_prefix("-I")) {
            replace = Some(value.to_owned());
        } else if let Some(value) = word.strip_prefix("-i") {
            replace = Some(if value.is_empty() { "{}".to_owned() } else { value.to_owned() });
        }
    }
    let input = || Word::Unknown("the words `xargs` reads from its input".to_owned());
    let mut inner: Vec<Word> = if rest.is_empty() { vec![Word::Known("echo".to_owned())] } else { rest.to_vec() };
    match replace {
        Some(replace) if !replace.is_empty() => {
            for word in &mut inner {
                if matches!(word, Word::Known(w) if w.contains(replace.as_str())) {
                    *word = input();
                }
            }
        }
        _ => inner.push(input()),
    }
    Ok(vec![Runs::Command(inner)])
}

/// `find ... -exec CMD... ;` (and `-execdir`, `-ok`, `-okdir`, ending with `;` or `+`): `{}`
/// is a file name found.
fn find(args: &[Word]) -> Result<Vec<Runs>, String> {
    let mut runs = Vec::new();
    let mut index = 0;
    while let Some(word) = args.get(index) {
        index += 1;
        match word {
            Word::Known(action) if matches!(action.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") => {
                let end = args[index..]
                    .iter()
                    .position(|word| matches!(word, Word::Known(w) if w == ";" || w == "+"))
                    .map_or(args.len(), |end| index + end);
                let inner: Vec<Word> = args[index..end]
                    .iter()
                    .map(|word| match word {
                        Word::Known(w) if w.contains("{}") => Word::Unknown("a file name `find` found".to_owned()),
                        other => other.clone(),
                    })
                    .collect();
                runs.extend(command(&inner));
                index = end + 1;
            }
            Word::Known(_) => {}
            Word::Unknown(reason) => {
                return Err(format!("an argument of `find` cannot be known and could be `-exec`: {reason}"));
            }
        }
    }
    Ok(runs)
}

/// `sh -c STRING`: the string is a script; `sh FILE` runs a file (not seen); `sh` alone, or
/// `sh -s`, runs what it reads from its input.
fn shell(program: &str, args: &[Word]) -> Result<Vec<Runs>, String> {
    let (rest, seen) = after_options(program, args, &SHELL)?;
    let has_c = seen.contains(&'c');
    match rest.first() {
        Some(Word::Known(script)) if has_c => Ok(vec![Runs::Script(script.clone())]),
        Some(Word::Unknown(reason)) if has_c => {
            Err(format!("the string `{program} -c` runs cannot be known: {reason}"))
        }
        None if has_c => Ok(Vec::new()),
        Some(Word::Known(_)) if seen.contains(&'s') => {
            Err(format!("`{program} -s` runs the commands it reads from its input"))
        }
        Some(file) => source(program, std::slice::from_ref(file)).map_or(Ok(Vec::new()), |runs| Err(reason_of(runs))),
        None => Err(format!("`{program}` runs the commands it reads from its input")),
    }
}

fn reason_of(runs: Runs) -> String {
    match runs {
        Runs::Unknown(reason) => reason,
        Runs::Command(_) | Runs::Script(_) => String::new(),
    }
}

/// `source FILE`, `. FILE`, `bash FILE`: a file's commands are not seen, but one whose
/// contents come from elsewhere (a process substitution, `/dev/stdin`) cannot be known.
fn source(program: &str, args: &[Word]) -> Option<Runs> {
    match args.first()? {
        Word::Unknown(reason) => Some(Runs::Unknown(format!("the file `{program}` runs cannot be known: {reason}"))),
        Word::Known(file) if file.starts_with("/dev/") || file.starts_with("/proc/") => {
            Some(Runs::Unknown(format!("`{program} {}` runs commands from a stream", shown(file))))
        }
        Word::Known(_) => None,
    }
}

/// The script of `eval WORDS`: the words joined by spaces.
fn script_of(program: &str, args: &[Word]) -> Option<Runs> {
    let mut script = Vec::new();
    for word in args {
        match word {
            Word::Known(word) => script.push(word.as_str()),
            Word::Unknown(reason) => {
                return Some(Runs::Unknown(format!("the string `{program}` runs cannot be known: {reason}")));
            }
        }
    }
    (!script.is_empty()).then(|| Runs::Script(script.join(" ")))
}

/// `trap 'CMD' SIGNAL...` runs `CMD` later.
fn trap(args: &[Word]) -> Result<Vec<Runs>, String> {
    let args = match args.first() {
        Some(Word::Known(first)) if first == "--" => &args[1..],
        Some(Word::Known(first)) if first.starts_with('-') => return Ok(Vec::new()),
        _ => args,
    };
    if args.len() < 2 {
        return Ok(Vec::new());
    }
    Ok(script_of("trap", &args[..1]).into_iter().collect())
}
