//! `hooks check FILE... [--strict]`: validates declarative hooks files, in the YAML format or
//! the `hooks` object of a Claude Code-format settings file (JSON with a `hooks` object, told
//! apart by its content or a `.json` name), each checked as its loader reads it.
//!
//! For each file, prints each hook it kept to stdout, and to stderr a warning naming the file,
//! entry and field for each problem (an entry that is skipped) and for each kept hook that is
//! probably a mistake (a `${name}` that the event's context does not have, a shell-mode command
//! that splices in `${tool}`, ...). Exits 1 when a document is rejected whole (it does not parse,
//! or has no `hooks` list: `from_yaml` would load nothing), in both modes; otherwise 0 in lenient
//! mode (as `from_yaml` would load the files) and 1 in strict mode when any file has a problem
//! or a warning; 2 on bad arguments or a file that cannot be read (the other files are still
//! checked).

use std::fs::File;
use std::io::Read;
use std::process::ExitCode;

use hooks_runtime::declarative::{LoadReport, MAX_DOCUMENT_BYTES, SettingsReport};

const USAGE: &str = "usage: hooks check FILE... [--strict] [--tools a,b,c]

Loads declarative hooks YAML files and prints, for each, the hooks it keeps,
a warning for each entry it skips and one for each kept hook that is probably
a mistake (for example a ${name} the event does not have, which is written out
as is, or a shell-mode command that splices in ${tool}).

A `.json` file, or any JSON with a `hooks` object, is read as a Claude Code-format settings file
(its `permissions` rules are read too): its hooks, and a warning for each
problem: an unknown field (ignored; the hook runs), an entry that cannot run as
written (an unsupported type, an unset variable, a bad value or matcher; kept,
and a PreToolUse one denies the calls its matcher selects), an unknown event or
one with no counterpart here such as PreCompact (its hooks are not kept).

  --strict       exit with status 1 when anything was skipped or warned about (for CI)
  --tools a,b,c  the runtime's tool names: warn on a settings-file matcher of a tool event
                 that names none of them (matchers are case-sensitive)

Everything printed from a file has its control characters escaped and long
texts cut.

Exit status: 0 when every file was read, 1 when a document is rejected whole
(nothing would load) and, in strict mode, when a file has a problem or a
warning, 2 on bad arguments or a file that cannot be read.";

/// Exit status for a usage or I/O error, as opposed to a file with problems.
const EXIT_USAGE: u8 = 2;
/// Exit status for a document rejected whole, and in strict mode for any problem or warning.
const EXIT_PROBLEMS: u8 = 1;

struct Args {
    files: Vec<String>,
    strict: bool,
    tools: Option<Vec<String>>,
}

fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Args, String> {
    let mut args = args.into_iter();
    match args.next().as_deref() {
        Some("check") => {}
        Some("-h" | "--help") => return Err(String::new()),
        Some(other) => return Err(format!("unknown command `{other}`")),
        None => return Err("missing command".to_owned()),
    }
    let (mut files, mut strict, mut tools) = (Vec::new(), false, None);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--strict" if !strict => strict = true,
            "--strict" => return Err("`--strict` given twice".to_owned()),
            "--tools" if tools.is_none() => {
                let list = args.next().ok_or("`--tools` needs a list of tool names, such as `--tools Bash,Read`")?;
                tools =
                    Some(list.split(',').map(str::trim).filter(|name| !name.is_empty()).map(str::to_owned).collect());
            }
            "--tools" => return Err("`--tools` given twice".to_owned()),
            "-h" | "--help" => return Err(String::new()),
            flag if flag.starts_with("--") => return Err(format!("unknown option `{flag}`")),
            _ => files.push(arg),
        }
    }
    if files.is_empty() {
        return Err("missing FILE".to_owned());
    }
    Ok(Args { files, strict, tools })
}

fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(problem) if problem.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(problem) => {
            eprintln!("error: {problem}\n\n{USAGE}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let mut status = 0;
    for file in &args.files {
        let file_status = match read(file) {
            Ok(Report::Yaml(report)) => check(file, &report, args.strict),
            Ok(Report::Settings(mut report)) => {
                if let Some(tools) = &args.tools {
                    report.check_tools(&tools.iter().map(String::as_str).collect::<Vec<_>>());
                }
                check_settings(file, &report, args.strict)
            }
            Err(problem) => {
                eprintln!("error: {}", printable(&problem));
                EXIT_USAGE
            }
        };
        status = status.max(file_status);
    }
    ExitCode::from(status)
}

/// A file's report, in the format its content is in.
enum Report {
    Yaml(LoadReport),
    Settings(SettingsReport),
}

/// The report of the file at `path`, or why it cannot be read: a directory, a missing or
/// unreadable file is an error of the invocation, not a document problem.
fn read(path: &str) -> Result<Report, String> {
    // Looked at before opening: opening a FIFO for reading waits for a writer, forever.
    let metadata = std::fs::metadata(path).map_err(|error| format!("cannot open `{path}`: {error}"))?;
    refuse_unless_regular(path, &metadata)?;
    let mut file = File::open(path).map_err(|error| format!("cannot open `{path}`: {error}"))?;
    // Again on what was opened, in case the path changed in between.
    let metadata = file.metadata().map_err(|error| format!("cannot read `{path}`: {error}"))?;
    refuse_unless_regular(path, &metadata)?;
    let mut bytes = Vec::new();
    file.by_ref()
        .take(MAX_DOCUMENT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| format!("cannot read `{path}`: {error}"))?;
    // Size and UTF-8 are the document's problems, which the loader reports.
    // A `.json` file is a settings file even when it does not parse, so its error is JSON's.
    if path.ends_with(".json") || std::str::from_utf8(&bytes).is_ok_and(SettingsReport::is_settings_document) {
        return Ok(Report::Settings(SettingsReport::from_reader(bytes.as_slice())));
    }
    Ok(Report::Yaml(LoadReport::from_reader(bytes.as_slice())))
}

/// A directory, a FIFO, a socket or a device is not a document: reading one would fail, wait
/// for a writer or never end.
fn refuse_unless_regular(path: &str, metadata: &std::fs::Metadata) -> Result<(), String> {
    if metadata.is_dir() {
        return Err(format!("`{path}` is a directory; give a hooks YAML file"));
    }
    if !metadata.is_file() {
        return Err(format!("`{path}` is not a regular file (a FIFO, socket or device); give a hooks YAML file"));
    }
    Ok(())
}

/// Prints the report of `path`; its exit status.
fn check(path: &str, report: &LoadReport, strict: bool) -> u8 {
    let path = &printable(path);
    for kept in &report.kept {
        println!("{path}: kept #{} {}", kept.index, printable(&kept.config.to_string()));
    }
    for problem in &report.problems {
        eprintln!("warning: {path}: {}", printable(&problem.to_string()));
    }
    for warning in &report.warnings {
        eprintln!("warning: {path}: {}", printable(&warning.to_string()));
    }
    let skipped = report.skipped_entries().len();
    let warnings = report.warnings.len();
    println!(
        "{path}: {} hook{} kept, {} entr{} skipped{}{}",
        report.kept.len(),
        plural(report.kept.len()),
        skipped,
        if skipped == 1 { "y" } else { "ies" },
        if warnings == 0 { String::new() } else { format!(", {warnings} warning{}", plural(warnings)) },
        if report.has_document_problem() { ", document rejected" } else { "" },
    );
    if report.has_document_problem() {
        eprintln!("error: {path}: document rejected, no hooks would be loaded; fix the problem above");
        return EXIT_PROBLEMS;
    }
    let problems = report.problems.len();
    if strict && problems + warnings > 0 {
        let mut counts = Vec::new();
        if problems > 0 {
            counts.push(format!("{problems} problem{}", plural(problems)));
        }
        if warnings > 0 {
            counts.push(format!("{warnings} warning{}", plural(warnings)));
        }
        eprintln!("error: {path}: {} (strict mode)", counts.join(" and "));
        return EXIT_PROBLEMS;
    }
    0
}

/// Prints the report of the settings file `path`; its exit status, as [`check`]'s.
fn check_settings(path: &str, report: &SettingsReport, strict: bool) -> u8 {
    let path = &printable(path);
    for hook in &report.kept {
        println!("{path}: kept {} {}", printable(hook.location()), printable(&hook.to_string()));
    }
    for rule in report.permission_lines() {
        println!("{path}: rule {}", printable(&rule));
    }
    for problem in &report.problems {
        eprintln!("warning: {path}: {}", printable(&problem.to_string()));
    }
    let problems = report.problems.len();
    println!(
        "{path}: settings hooks, {} hook{} kept, {problems} problem{}{}",
        report.kept.len(),
        plural(report.kept.len()),
        plural(problems),
        if report.has_document_problem() { ", document rejected" } else { "" },
    );
    if report.has_document_problem() {
        eprintln!("error: {path}: document rejected, no hooks would be loaded; fix the problem above");
        return EXIT_PROBLEMS;
    }
    if strict && problems > 0 {
        eprintln!("error: {path}: {problems} problem{} (strict mode)", plural(problems));
        return EXIT_PROBLEMS;
    }
    0
}

/// Longest text printed from a file, in characters: a 1 MB name is cut, not printed twice.
const MAX_PRINTED_CHARS: usize = 400;

/// `text` safe for a terminal: control characters escaped (an ESC sequence in a file cannot
/// clear the screen or set the title), line breaks kept, cut at [`MAX_PRINTED_CHARS`].
fn printable(text: &str) -> String {
    let mut out = String::new();
    for (count, c) in text.chars().enumerate() {
        if count == MAX_PRINTED_CHARS {
            out.push_str(&format!("... ({} more characters)", text.chars().count() - count));
            break;
        }
        if c.is_control() && c != '\n' {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
