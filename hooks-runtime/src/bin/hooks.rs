//! `hooks check FILE [--strict]`: validates a declarative hooks file.
//!
//! Prints each hook it kept to stdout and a warning naming the entry and field for each problem
//! to stderr. Exits 0 in lenient mode (as `from_yaml` would load the file), 1 in strict mode when
//! anything was skipped, and 2 on bad arguments or an unreadable file.

use std::fs::File;
use std::process::ExitCode;

use hooks_runtime::declarative::LoadReport;

const USAGE: &str = "usage: hooks check FILE [--strict]

Loads a declarative hooks YAML file, prints the hooks it keeps and a warning
for each entry it skips.

  --strict   exit with status 1 when anything was skipped (for CI)";

/// Exit status for a usage or I/O error, as opposed to a file with problems.
const EXIT_USAGE: u8 = 2;
/// Exit status in strict mode when the file has problems.
const EXIT_PROBLEMS: u8 = 1;

struct Args {
    file: String,
    strict: bool,
}

fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Args, String> {
    let mut args = args.into_iter();
    match args.next().as_deref() {
        Some("check") => {}
        Some("-h" | "--help") => return Err(String::new()),
        Some(other) => return Err(format!("unknown command `{other}`")),
        None => return Err("missing command".to_owned()),
    }
    let (mut file, mut strict) = (None, false);
    for arg in args {
        match arg.as_str() {
            "--strict" if !strict => strict = true,
            "--strict" => return Err("`--strict` given twice".to_owned()),
            "-h" | "--help" => return Err(String::new()),
            flag if flag.starts_with("--") => return Err(format!("unknown option `{flag}`")),
            _ if file.is_none() => file = Some(arg),
            _ => return Err(format!("unexpected argument `{arg}`; give one FILE")),
        }
    }
    let file = file.ok_or_else(|| "missing FILE".to_owned())?;
    Ok(Args { file, strict })
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
    let file = match File::open(&args.file) {
        Ok(file) => file,
        Err(error) => {
            eprintln!("error: cannot open `{}`: {error}", args.file);
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let report = LoadReport::from_reader(file);

    for kept in &report.kept {
        println!("kept  #{} {}", kept.index, kept.config);
    }
    for problem in &report.problems {
        eprintln!("warning: {problem}");
    }
    let skipped = report.skipped_entries().len();
    println!(
        "{}: {} hook{} kept, {} entr{} skipped{}",
        args.file,
        report.kept.len(),
        if report.kept.len() == 1 { "" } else { "s" },
        skipped,
        if skipped == 1 { "y" } else { "ies" },
        if report.has_document_problem() { ", document rejected" } else { "" },
    );
    if args.strict && !report.problems.is_empty() {
        eprintln!(
            "error: {} problem{} (strict mode)",
            report.problems.len(),
            if report.problems.len() == 1 { "" } else { "s" }
        );
        return ExitCode::from(EXIT_PROBLEMS);
    }
    ExitCode::SUCCESS
}
