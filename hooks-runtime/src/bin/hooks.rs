//! `hooks`: checks declarative hooks files and project folders, and records which project
//! folders the person trusts.
//!
//! - `hooks check FILE... [--strict] [--tools a,b,c]` validates declarative hooks files, in the
//!   YAML format or the `hooks` object of a Claude Code-format settings file (JSON with a
//!   `hooks` object, told apart by its content or a `.json` name), each checked as its loader
//!   reads it. For each file, prints each hook it kept to stdout, and to stderr a warning naming
//!   the file, entry and field for each problem and for each kept hook that is probably a
//!   mistake. Exits 1 when a document is rejected whole, in both modes; otherwise 0 in lenient
//!   mode and 1 in strict mode when any file has a problem or a warning; 2 on bad arguments or
//!   a file that cannot be read (the other files are still checked).
//! - `hooks check DIR` (a project folder: one with `.claude/` or `.mcp.json`) prints each
//!   settings layer `SettingsHooks::discover` reads and the trust state of each project file.
//! - `hooks trust [DIR] [--yes]` prints every command, URL, rule and MCP server the folder's
//!   files hold and the files their commands name, asks, and records their SHA-256 in the trust
//!   file; `hooks untrust [DIR]` forgets them.

use std::fs::File;
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use hooks_runtime::declarative::{
    Discovered, Discovery, LoadReport, MAX_DOCUMENT_BYTES, SettingsReport, TrustState, TrustStore,
};

/// The synopsis, printed with `--help` and after every usage error.
const SYNOPSIS: &str = "usage: hooks check FILE... [--strict] [--tools a,b,c]
       hooks check DIR [--strict] [--plugin PLUGIN]...
       hooks trust [DIR] [--yes] [--plugin PLUGIN]...
       hooks untrust [DIR]";

const CHECK_ABOUT: &str = "Loads declarative hooks YAML files and prints, for each, the hooks it keeps,
a warning for each entry it skips and one for each kept hook that is probably
a mistake (for example a ${name} the event does not have, which is written out
as is, or a shell-mode command that splices in ${tool}).

A `.json` file, or any JSON with a `hooks` object, is read as a Claude Code-format settings file
(its `permissions` rules are read too): its hooks, and a warning for each
problem: an unknown field (ignored; the hook runs), an entry that cannot run as
written (an unsupported type, an unset variable, a bad value or matcher; kept,
and a PreToolUse one denies the calls its matcher selects), an unknown event or
one with no counterpart here such as PreCompact (its hooks are not kept).

A project folder (one with `.claude/` or `.mcp.json`) is read as SettingsHooks::discover
reads it: each settings layer found, and whether each project file is trusted
(`hooks trust`), with what changed since it was.

Everything printed from a file has its control characters escaped and long
texts cut.

Exit status: 0 when every file was read, 1 when a document is rejected whole
(nothing would load) and, in strict mode, when a file has a problem or a
warning or a project file is not trusted, 2 on bad arguments or a file that
cannot be read.";

const TRUST_ABOUT: &str = "Prints every command, URL, allow, ask and deny rule and MCP server that the
project folder's settings files (.claude/settings.json, .claude/settings.local.json),
.mcp.json and the plugin folders given with --plugin hold, and every file inside the
folder their commands name; asks;
and records the SHA-256 of each in the trust file ($AGENT_HOOKS_TRUST_FILE, else
$XDG_CONFIG_HOME/agent-hooks/trust.json, else ~/.config/agent-hooks/trust.json).
Answering anything but y or yes records nothing (exit status 1). A file that
changes afterwards no longer runs until it is trusted again.";

#[derive(Parser)]
#[command(name = "hooks", before_help = SYNOPSIS, disable_version_flag = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Validates hooks files, or shows the trust state of a project folder's files.
    #[command(long_about = CHECK_ABOUT)]
    Check {
        /// Hooks files (YAML or settings JSON), or one project folder.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<String>,
        /// Exit with status 1 when anything was skipped, warned about or not trusted (for CI).
        #[arg(long)]
        strict: bool,
        /// The runtime's tool names: warn on a settings-file matcher of a tool event that names
        /// none of them (matchers are case-sensitive).
        #[arg(long, value_name = "a,b,c")]
        tools: Option<String>,
        /// A plugin folder of the project to show too (as `Discovery::plugin_dir`).
        #[arg(long = "plugin", value_name = "DIR")]
        plugins: Vec<PathBuf>,
    },
    /// Trusts what a project folder ships, after printing it all.
    #[command(long_about = TRUST_ABOUT)]
    Trust {
        /// The project folder (default: the working directory).
        #[arg(default_value = ".")]
        dir: PathBuf,
        /// Trust without asking.
        #[arg(long)]
        yes: bool,
        /// A plugin folder inside the project to trust too (as `Discovery::plugin_dir`).
        #[arg(long = "plugin", value_name = "PLUGIN")]
        plugins: Vec<PathBuf>,
    },
    /// Forgets the trust of a project folder.
    Untrust {
        /// The project folder (default: the working directory).
        #[arg(default_value = ".")]
        dir: PathBuf,
    },
}

/// Exit status for a usage or I/O error, as opposed to a file with problems.
const EXIT_USAGE: u8 = 2;
/// Exit status for a document rejected whole, in strict mode for any problem or warning, and
/// for a `hooks trust` answered no.
const EXIT_PROBLEMS: u8 = 1;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) if !error.use_stderr() => {
            // `--help`: to stdout, status 0.
            print!("{}", error.render());
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            eprintln!("{}\n{SYNOPSIS}", error.render());
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let status = match cli.command {
        Command::Check { files, strict, tools, plugins } => {
            let tools = tools.map(|list| {
                list.split(',').map(str::trim).filter(|name| !name.is_empty()).map(str::to_owned).collect::<Vec<_>>()
            });
            check_files(&files, strict, tools.as_deref(), &plugins)
        }
        Command::Trust { dir, yes, plugins } => trust(&dir, yes, &plugins),
        Command::Untrust { dir } => untrust(&dir),
    };
    ExitCode::from(status)
}

fn check_files(files: &[String], strict: bool, tools: Option<&[String]>, plugins: &[PathBuf]) -> u8 {
    let mut status = 0;
    for file in files {
        let file_status = if is_project_dir(Path::new(file)) {
            check_project(Path::new(file), strict, plugins)
        } else {
            match read(file) {
                Ok(Report::Yaml(report)) => check(file, &report, strict),
                Ok(Report::Settings(mut report)) => {
                    if let Some(tools) = tools {
                        report.check_tools(&tools.iter().map(String::as_str).collect::<Vec<_>>());
                    }
                    check_settings(file, &report, strict)
                }
                Err(problem) => {
                    eprintln!("error: {}", printable(&problem));
                    EXIT_USAGE
                }
            }
        };
        status = status.max(file_status);
    }
    status
}

/// A folder with `.claude/` or `.mcp.json`: what `hooks check` reads as a project.
fn is_project_dir(path: &Path) -> bool {
    path.is_dir() && (path.join(".claude").is_dir() || path.join(".mcp.json").exists())
}

/// The discovery of `dir` with the default locations (the environment's).
fn discover(dir: &Path, plugins: &[PathBuf]) -> Result<(Discovered, TrustStore), String> {
    let store = TrustStore::from_env()?;
    let mut discovery = Discovery::new(dir).trust_store(store.clone());
    for plugin in plugins {
        discovery = discovery.plugin_dir(plugin);
    }
    let discovered = discovery.scan();
    if discovered.files.is_empty() && !discovered.problems.is_empty() {
        return Err(discovered.problems.join("; "));
    }
    Ok((discovered, store))
}

/// Prints each layer's file and the trust state of each project file; its exit status.
fn check_project(dir: &Path, strict: bool, plugins: &[PathBuf]) -> u8 {
    let (discovered, store) = match discover(dir, plugins) {
        Ok(found) => found,
        Err(problem) => {
            eprintln!("error: {}", printable(&problem));
            return EXIT_USAGE;
        }
    };
    println!(
        "{}: trust file {}",
        printable(&dir.display().to_string()),
        printable(&store.path().display().to_string())
    );
    let mut untrusted = 0;
    for file in &discovered.files {
        println!(
            "{} ({}): {} hook{}, {} allow, {} ask, {} deny rule{}, {} MCP server{}: {}",
            printable(&file.path.display().to_string()),
            file.layer,
            file.report.kept.len(),
            plural(file.report.kept.len()),
            file.report.permissions.allow.len(),
            file.report.permissions.ask.len(),
            file.report.permissions.deny.len(),
            plural(file.report.permissions.deny.len()),
            file.mcp_servers.len(),
            plural(file.mcp_servers.len()),
            printable(&file.trust.to_string()),
        );
        for (path, hash) in &file.named_files {
            println!("  names {} (sha256 {hash})", printable(path));
        }
        if matches!(file.trust, TrustState::Untrusted(_) | TrustState::Changed(_)) {
            untrusted += 1;
        }
    }
    let problems = discovered.problems();
    for problem in &problems {
        eprintln!("warning: {}", printable(problem));
    }
    if untrusted > 0 {
        eprintln!(
            "{untrusted} project file{} not trusted: read {}, then run `hooks trust {}`",
            plural(untrusted),
            if untrusted == 1 { "it" } else { "them" },
            printable(&discovered.project_dir.display().to_string())
        );
    }
    if strict && !problems.is_empty() {
        eprintln!("error: {} problem{} (strict mode)", problems.len(), plural(problems.len()));
        return EXIT_PROBLEMS;
    }
    0
}

/// `hooks trust DIR`: prints what the folder ships, asks (unless `yes`), records it.
fn trust(dir: &Path, yes: bool, plugins: &[PathBuf]) -> u8 {
    let (discovered, store) = match discover(dir, plugins) {
        Ok(found) => found,
        Err(problem) => {
            eprintln!("error: {}", printable(&problem));
            return EXIT_USAGE;
        }
    };
    let project = printable(&discovered.project_dir.display().to_string());
    let files: Vec<_> = discovered.files.iter().filter(|file| file.in_project).collect();
    if files.is_empty() {
        println!("{project}: nothing to trust (no .claude/settings.json, .claude/settings.local.json or .mcp.json)");
        return 0;
    }
    println!("{project}: trusting these files lets them run commands and loosen rules:");
    for file in &files {
        println!("{} (sha256 {}), {}", printable(&file.path.display().to_string()), file.sha256, file.trust);
        for hook in &file.report.kept {
            let what = if hook.command().starts_with("http://") || hook.command().starts_with("https://") {
                "URL"
            } else {
                "command"
            };
            println!("  {} hook {what}: {}", hook.event(), printable(hook.command()));
        }
        for (kind, rules) in [
            ("allow", &file.report.permissions.allow),
            ("ask", &file.report.permissions.ask),
            ("deny", &file.report.permissions.deny),
        ] {
            for rule in rules {
                println!("  {kind} rule: {}", printable(rule.text()));
            }
        }
        for server in &file.mcp_servers {
            println!("  MCP server {}: {}", printable(&server.name), printable(&server.to_string()));
        }
        for (path, hash) in &file.named_files {
            println!("  runs the file {} (sha256 {hash})", printable(path));
        }
        for problem in &file.report.problems {
            println!("  problem: {}", printable(&problem.to_string()));
        }
    }
    for tool in &discovered.withheld_mcp_tools {
        println!("MCP tool withheld since it changed (or is new), pinned as it is now: {}", printable(tool));
    }
    if !yes {
        let these = if files.len() == 1 { "this file".to_owned() } else { format!("these {} files", files.len()) };
        print!("Trust {these} of {project}? [y/N] ");
        let _ = std::io::stdout().flush();
        let mut answer = String::new();
        let read = std::io::stdin().lock().read_line(&mut answer);
        let answer = answer.trim().to_ascii_lowercase();
        if read.is_err() || !(answer == "y" || answer == "yes") {
            println!("\nnothing recorded");
            return EXIT_PROBLEMS;
        }
    }
    match store.trust(&discovered) {
        Ok(count) => {
            println!(
                "trusted {count} file{} of {project} in {}",
                plural(count),
                printable(&store.path().display().to_string())
            );
            0
        }
        Err(problem) => {
            eprintln!("error: {}", printable(&problem));
            EXIT_USAGE
        }
    }
}

/// `hooks untrust DIR`.
fn untrust(dir: &Path) -> u8 {
    let result = TrustStore::from_env().and_then(|store| store.untrust(dir));
    let shown = printable(&dir.display().to_string());
    match result {
        Ok(true) => {
            println!("{shown}: no longer trusted");
            0
        }
        Ok(false) => {
            println!("{shown}: was not trusted");
            0
        }
        Err(problem) => {
            eprintln!("error: {}", printable(&problem));
            EXIT_USAGE
        }
    }
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
    Read::by_ref(&mut file)
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
