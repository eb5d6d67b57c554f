//! A `Bash` call's command read as a shell reads it, for command rules (CONFORMANCE B1-B5):
//! parsed with `brush-parser`, every simple command anywhere in the tree collected and
//! normalized, and commands that run other commands unwrapped ([`super::wrappers`]).
//!
//! What cannot be known before the command runs is kept as such: a word whose value comes from
//! a variable, a substitution or the file system is [`Word::Unknown`], and a command that
//! cannot be read at all (rejected by the parser, nested too deep, a shell reading its
//! standard input) adds to [`CommandLine::unknown`]. Matching fails closed on both.

use brush_parser::ast;
use brush_parser::word::{self, WordPiece, WordPieceWithSource};
use brush_parser::{Parser, ParserOptions};

use super::words::{Word, shown};
use super::wrappers::{Runs, unwrap};

/// How deep `sh -c`, `eval`, wrappers and substitutions may nest before the command counts as
/// one that cannot be known.
pub(crate) const MAX_DEPTH: usize = 8;

/// A simple command: its words, the first one the program's name (path removed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SimpleCommand {
    pub(crate) words: Vec<Word>,
    /// The words joined by single spaces, when every one is known: what a glob rule matches,
    /// joined once for every rule.
    pub(crate) text: Option<String>,
}

impl SimpleCommand {
    pub(crate) fn new(words: Vec<Word>) -> Self {
        let mut text = String::new();
        for (index, word) in words.iter().enumerate() {
            let Word::Known(word) = word else {
                return SimpleCommand { words, text: None };
            };
            if index > 0 {
                text.push(' ');
            }
            text.push_str(word);
        }
        SimpleCommand { words, text: Some(text) }
    }
}

/// Every simple command of a command line, and what could not be known about it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CommandLine {
    /// Every simple command, those that wrappers and `sh -c` strings run included.
    pub(crate) commands: Vec<SimpleCommand>,
    /// Why part of the command cannot be known before it runs, if it cannot.
    pub(crate) unknown: Vec<String>,
}

/// How deep brackets and compound commands may nest in a command before it counts as one that
/// cannot be known: the parser recurses once per level, and a thread's stack is finite.
pub(crate) const MAX_NESTING: usize = 32;

/// `command` as a shell would run it.
pub(crate) fn parse(command: &str) -> CommandLine {
    let mut walker = Walker { out: CommandLine::default(), options: ParserOptions::default() };
    match too_deep(command) {
        Some(reason) => walker.out.unknown.push(reason),
        None => walker.script(command, 0),
    }
    walker.out
}

/// Why `command` nests too deep to be parsed safely, if it does: counted over brackets and the
/// words that open and close compound commands, quotes ignored (which only ever counts more).
fn too_deep(command: &str) -> Option<String> {
    let mut depth = 0usize;
    let mut deepest = 0usize;
    // Where the run of letters and digits that ends at the current character starts.
    let mut start = 0;
    for (index, c) in command.char_indices().chain([(command.len(), ' ')]) {
        if c.is_ascii_alphanumeric() {
            continue;
        }
        let word = &command[start..index];
        start = index + c.len_utf8();
        let closes = matches!(word, "fi" | "done" | "esac");
        let opens = matches!(word, "if" | "while" | "until" | "for" | "case" | "select");
        if opens || matches!(c, '(' | '{' | '[') {
            depth += 1 + usize::from(opens && matches!(c, '(' | '{' | '['));
        }
        if closes {
            depth = depth.saturating_sub(1);
        }
        if matches!(c, ')' | '}' | ']') {
            depth = depth.saturating_sub(1);
        }
        deepest = deepest.max(depth);
    }
    (deepest > MAX_NESTING).then(|| format!("the command nests more than {MAX_NESTING} levels deep"))
}

struct Walker {
    out: CommandLine,
    options: ParserOptions,
}

impl Walker {
    fn script(&mut self, text: &str, depth: usize) {
        if depth > MAX_DEPTH {
            self.out.unknown.push(format!("`{}` is nested more than {MAX_DEPTH} levels deep", shown(text)));
            return;
        }
        match Parser::new(text.as_bytes(), &self.options).parse_program() {
            Ok(program) => program.complete_commands.iter().for_each(|list| self.list(list, depth)),
            Err(error) => {
                self.out.unknown.push(format!("the shell parser rejects `{}` ({error})", shown(text)));
            }
        }
    }

    fn list(&mut self, list: &ast::CompoundList, depth: usize) {
        for ast::CompoundListItem(and_or, _) in &list.0 {
            self.pipeline(&and_or.first, depth);
            for next in &and_or.additional {
                match next {
                    ast::AndOr::And(pipeline) | ast::AndOr::Or(pipeline) => self.pipeline(pipeline, depth),
                }
            }
        }
    }

    fn pipeline(&mut self, pipeline: &ast::Pipeline, depth: usize) {
        for command in &pipeline.seq {
            self.command(command, depth);
        }
    }

    fn command(&mut self, command: &ast::Command, depth: usize) {
        match command {
            ast::Command::Simple(simple) => self.simple(simple, depth),
            ast::Command::Compound(compound, redirects) => {
                self.compound(compound, depth);
                self.redirects(redirects.as_ref(), depth);
            }
            ast::Command::Function(function) => {
                self.expand(&function.fname.value, depth);
                self.compound(&function.body.0, depth);
                self.redirects(function.body.1.as_ref(), depth);
            }
            ast::Command::ExtendedTest(test, redirects) => {
                self.test(&test.expr, depth);
                self.redirects(redirects.as_ref(), depth);
            }
        }
    }

    fn test(&mut self, test: &ast::ExtendedTestExpr, depth: usize) {
        match test {
            ast::ExtendedTestExpr::And(a, b) | ast::ExtendedTestExpr::Or(a, b) => {
                self.test(a, depth);
                self.test(b, depth);
            }
            ast::ExtendedTestExpr::Not(a) | ast::ExtendedTestExpr::Parenthesized(a) => self.test(a, depth),
            ast::ExtendedTestExpr::UnaryTest(_, word) => {
                self.expand(&word.value, depth);
            }
            ast::ExtendedTestExpr::BinaryTest(_, a, b) => {
                self.expand(&a.value, depth);
                self.expand(&b.value, depth);
            }
        }
    }

    fn compound(&mut self, compound: &ast::CompoundCommand, depth: usize) {
        match compound {
            ast::CompoundCommand::Arithmetic(arithmetic) => self.scan(&arithmetic.expr.value, depth),
            ast::CompoundCommand::ArithmeticForClause(clause) => {
                for expr in [&clause.initializer, &clause.condition, &clause.updater].into_iter().flatten() {
                    self.scan(&expr.value, depth);
                }
                self.list(&clause.body.list, depth);
            }
            ast::CompoundCommand::BraceGroup(group) => self.list(&group.list, depth),
            ast::CompoundCommand::Subshell(subshell) => self.list(&subshell.list, depth),
            ast::CompoundCommand::ForClause(clause) => {
                for value in clause.values.iter().flatten() {
                    self.expand(&value.value, depth);
                }
                self.list(&clause.body.list, depth);
            }
            ast::CompoundCommand::CaseClause(clause) => {
                self.expand(&clause.value.value, depth);
                for case in &clause.cases {
                    for pattern in &case.patterns {
                        self.expand(&pattern.value, depth);
                    }
                    if let Some(list) = &case.cmd {
                        self.list(list, depth);
                    }
                }
            }
            ast::CompoundCommand::IfClause(clause) => {
                self.list(&clause.condition, depth);
                self.list(&clause.then, depth);
                for other in clause.elses.iter().flatten() {
                    if let Some(condition) = &other.condition {
                        self.list(condition, depth);
                    }
                    self.list(&other.body, depth);
                }
            }
            ast::CompoundCommand::WhileClause(clause) | ast::CompoundCommand::UntilClause(clause) => {
                self.list(&clause.0, depth);
                self.list(&clause.1.list, depth);
            }
            ast::CompoundCommand::Coprocess(coprocess) => self.command(&coprocess.body, depth),
        }
    }

    fn redirects(&mut self, redirects: Option<&ast::RedirectList>, depth: usize) {
        for redirect in redirects.iter().flat_map(|list| list.0.iter()) {
            self.redirect(redirect, depth);
        }
    }

    fn redirect(&mut self, redirect: &ast::IoRedirect, depth: usize) {
        match redirect {
            ast::IoRedirect::File(_, _, target) => match target {
                ast::IoFileRedirectTarget::Filename(word) | ast::IoFileRedirectTarget::Duplicate(word) => {
                    self.expand(&word.value, depth);
                }
                ast::IoFileRedirectTarget::Fd(_) => {}
                ast::IoFileRedirectTarget::ProcessSubstitution(_, subshell) => self.nested(&subshell.list, depth),
            },
            ast::IoRedirect::HereDocument(_, document) => {
                if document.requires_expansion {
                    match word::parse_heredoc(&document.doc.value, &self.options) {
                        Ok(pieces) => {
                            let mut value = Value::default();
                            self.pieces(&pieces, &document.doc.value, true, depth, &mut value);
                        }
                        Err(error) => self.out.unknown.push(format!("a here-document cannot be read ({error})")),
                    }
                }
            }
            ast::IoRedirect::HereString(_, word) | ast::IoRedirect::OutputAndError(word, _) => {
                self.expand(&word.value, depth);
            }
        }
    }

    /// A process substitution's commands, one level deeper.
    fn nested(&mut self, list: &ast::CompoundList, depth: usize) {
        if depth >= MAX_DEPTH {
            self.out.unknown.push(format!("a process substitution is nested more than {MAX_DEPTH} levels deep"));
        } else {
            self.list(list, depth + 1);
        }
    }

    fn simple(&mut self, command: &ast::SimpleCommand, depth: usize) {
        let mut words = Vec::new();
        for item in command.prefix.iter().flat_map(|prefix| prefix.0.iter()) {
            match item {
                ast::CommandPrefixOrSuffixItem::IoRedirect(redirect) => self.redirect(redirect, depth),
                // An assignment before the program sets a variable; only its substitutions run.
                ast::CommandPrefixOrSuffixItem::AssignmentWord(_, word) => {
                    self.expand(&word.value, depth);
                }
                ast::CommandPrefixOrSuffixItem::Word(word) => words.push(self.expand(&word.value, depth)),
                ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, subshell) => {
                    self.nested(&subshell.list, depth);
                    words.push(process_substitution());
                }
            }
        }
        if let Some(word) = &command.word_or_name {
            words.push(self.expand(&word.value, depth));
        }
        for item in command.suffix.iter().flat_map(|suffix| suffix.0.iter()) {
            match item {
                ast::CommandPrefixOrSuffixItem::IoRedirect(redirect) => self.redirect(redirect, depth),
                ast::CommandPrefixOrSuffixItem::AssignmentWord(_, word)
                | ast::CommandPrefixOrSuffixItem::Word(word) => {
                    words.push(self.expand(&word.value, depth));
                }
                ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, subshell) => {
                    self.nested(&subshell.list, depth);
                    words.push(process_substitution());
                }
            }
        }
        if !words.is_empty() {
            self.run(words, depth);
        }
    }

    /// Records the simple command `words` and what it runs in turn.
    fn run(&mut self, mut words: Vec<Word>, depth: usize) {
        if let Some(Word::Known(program)) = words.first_mut() {
            // The program's path reduced to its name: `/usr/bin/git` is `git`.
            if let Some((_, name)) = program.rsplit_once('/') {
                *program = name.to_owned();
            }
        }
        let runs = unwrap(&words);
        self.out.commands.push(SimpleCommand::new(words));
        for runs in runs {
            match runs {
                Runs::Command(inner) if depth < MAX_DEPTH => self.run(inner, depth + 1),
                Runs::Command(_) => {
                    self.out.unknown.push(format!("commands run by commands nest more than {MAX_DEPTH} levels deep"));
                }
                Runs::Script(text) => self.script(&text, depth + 1),
                Runs::Unknown(reason) => self.out.unknown.push(reason),
            }
        }
    }

    /// The word `text` after expansion and quote removal, recording the commands its
    /// substitutions run.
    fn expand(&mut self, text: &str, depth: usize) -> Word {
        if plain(text) {
            // What the word parser would answer: one piece of unquoted text, no pattern.
            return Word::Known(text.to_owned());
        }
        self.expand_parsed(text, depth)
    }

    /// [`expand`](Self::expand) through the word parser.
    fn expand_parsed(&mut self, text: &str, depth: usize) -> Word {
        let pieces = match word::parse(text, &self.options) {
            Ok(pieces) => pieces,
            Err(error) => {
                let reason = format!("the word `{}` cannot be read ({error})", shown(text));
                self.out.unknown.push(reason.clone());
                return Word::Unknown(reason);
            }
        };
        let mut value = Value::default();
        self.pieces(&pieces, text, false, depth, &mut value);
        if value.unknown.is_none() {
            if let Some(c) = glob_character(&value.shape) {
                value.unknown =
                    Some(format!("`{}` is a pattern (`{c}`) the shell matches against file names", shown(text)));
            } else if brace_expansion(&value.shape) {
                value.unknown = Some(format!("`{}` is a brace expansion", shown(text)));
            }
        }
        match value.unknown {
            Some(reason) => Word::Unknown(reason),
            None => Word::Known(value.text),
        }
    }

    /// Finds and walks the substitutions in `text`, an arithmetic expression or the inside of
    /// a parameter expansion.
    fn scan(&mut self, text: &str, depth: usize) {
        if ["$(", "`", "<(", ">("].iter().any(|open| text.contains(open)) {
            self.expand(text, depth);
        }
    }

    fn pieces(&mut self, pieces: &[WordPieceWithSource], source: &str, quoted: bool, depth: usize, value: &mut Value) {
        for piece in pieces {
            let raw = source.get(piece.start_index..piece.end_index).unwrap_or_default();
            match &piece.piece {
                WordPiece::Text(text) => value.push(text, quoted),
                WordPiece::SingleQuotedText(text) => value.push(text, true),
                WordPiece::AnsiCQuotedText(text) => match ansi_c(text) {
                    Some(text) => value.push(&text, true),
                    None => value.unknown(format!("the ANSI-C quoted text `$'{}'`", shown(text))),
                },
                WordPiece::DoubleQuotedSequence(inner) | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    value.push("", true);
                    self.pieces(inner, source, true, depth, value);
                }
                WordPiece::TildeExpansion(_) => value.push(raw, true),
                WordPiece::ParameterExpansion(_) => {
                    if let Some(inside) = raw.strip_prefix("${").and_then(|rest| rest.strip_suffix('}')) {
                        self.scan(inside, depth);
                    }
                    value.unknown(format!("the value of `{}`", shown(raw)));
                }
                WordPiece::CommandSubstitution(script) => {
                    self.script(script, depth + 1);
                    value.unknown(format!("the output of `$({})`", shown(script)));
                }
                WordPiece::BackquotedCommandSubstitution(script) => {
                    let script = script.replace("\\\\", "\\").replace("\\`", "`").replace("\\$", "$");
                    self.script(&script, depth + 1);
                    value.unknown(format!("the output of `` `{}` ``", shown(&script)));
                }
                WordPiece::EscapeSequence(escape) => {
                    let escaped = escape.strip_prefix('\\').unwrap_or(escape);
                    if escaped == "\n" {
                        // A line continuation: removed.
                    } else if !quoted || matches!(escaped, "$" | "`" | "\"" | "\\") {
                        value.push(escaped, true);
                    } else {
                        value.push(escape, true);
                    }
                }
                WordPiece::ArithmeticExpression(expr) => {
                    self.scan(&expr.value, depth);
                    value.unknown(format!("the value of `$(({}))`", shown(&expr.value)));
                }
            }
        }
    }
}

/// A word being expanded: its text, the same with every quoted character replaced by `q`
/// (where globbing and brace expansion apply), and why it cannot be known.
#[derive(Default)]
struct Value {
    text: String,
    shape: String,
    unknown: Option<String>,
}

impl Value {
    fn push(&mut self, text: &str, quoted: bool) {
        self.text.push_str(text);
        if quoted {
            self.shape.extend(text.chars().map(|_| 'q'));
        } else {
            self.shape.push_str(text);
        }
    }

    fn unknown(&mut self, reason: String) {
        self.unknown.get_or_insert(reason);
        self.shape.push('q');
    }
}

/// Whether `text` is a word the shell leaves as it is: not empty, and only letters, digits and
/// `-_./:,=+@%^` (no quote, escape, expansion, pattern, brace, tilde or operator). Most words
/// of a command are; they skip the word parser.
fn plain(text: &str) -> bool {
    !text.is_empty()
        && text.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(b, b'-' | b'_' | b'.' | b'/' | b':' | b',' | b'=' | b'+' | b'@' | b'%' | b'^')
        })
}

fn process_substitution() -> Word {
    Word::Unknown("the path of a process substitution (`<(...)`, `>(...)`)".to_owned())
}

/// The character that makes the unquoted characters `shape` a pattern the shell matches against
/// file names: `*`, `?`, or a `[` closed by a later `]` (a `[` alone, as in `[ -f x ]`, is
/// literal).
fn glob_character(shape: &str) -> Option<char> {
    if let Some(c) = shape.chars().find(|c| matches!(c, '*' | '?')) {
        return Some(c);
    }
    shape.find('[').filter(|open| shape[open + 1..].contains(']')).map(|_| '[')
}

/// Whether the unquoted characters `shape` hold a brace expansion: `{a,b}` or `{1..3}`.
fn brace_expansion(shape: &str) -> bool {
    let mut open = Vec::new();
    for (index, c) in shape.char_indices() {
        match c {
            '{' => open.push(index),
            '}' => {
                if let Some(start) = open.pop() {
                    let inside = &shape[start + 1..index];
                    if inside.contains(',') || inside.contains("..") {
                        return true;
                    }
                }
            }
            _ => {}
        }
    }
    false
}

/// The value of the ANSI-C quoted text `$'text'`, or `None` for an escape this does not decode.
fn ansi_c(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let escape = chars.next()?;
        let simple = match escape {
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'e' | 'E' => Some('\u{1b}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\u{b}'),
            '\\' | '\'' | '"' | '?' => Some(escape),
            _ => None,
        };
        if let Some(simple) = simple {
            out.push(simple);
            continue;
        }
        let (radix, max) = match escape {
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            '0'..='7' => (8, 2),
            _ => return None,
        };
        let mut digits = String::new();
        if radix == 8 {
            digits.push(escape);
        }
        while digits.len() < max + usize::from(radix == 8) {
            match chars.peek() {
                Some(d) if d.is_digit(radix) => {
                    digits.push(*d);
                    chars.next();
                }
                _ => break,
            }
        }
        let code = u32::from_str_radix(&digits, radix).ok()?;
        out.push(char::from_u32(code)?);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every simple command of `command`, words joined by one space, an unknown word as `?`.
    fn commands(command: &str) -> Vec<String> {
        let line = parse(command);
        assert!(line.unknown.is_empty(), "{command}: {:?}", line.unknown);
        line.commands
            .iter()
            .map(|command| {
                let words: Vec<&str> = command
                    .words
                    .iter()
                    .map(|word| match word {
                        Word::Known(word) => word.as_str(),
                        Word::Unknown(_) => "?",
                    })
                    .collect();
                words.join(" ")
            })
            .collect()
    }

    fn runs(command: &str, simple: &str) -> bool {
        commands(command).iter().any(|found| found == simple)
    }

    #[test]
    fn b1_every_simple_command_anywhere_in_the_tree_is_found() {
        for command in [
            "ls; git push",
            "ls && git push",
            "false || git push",
            "true & git push",
            "ls\ngit push",
            "ls | git push",
            "ls |& git push",
            "(git push)",
            "{ git push; }",
            "if true; then git push; fi",
            "if false; then :; elif git push; then :; else :; fi",
            "while git push; do break; done",
            "until git push; do :; done",
            "for x in 1; do git push; done",
            "for ((i=0; i<1; i++)); do git push; done",
            "case x in x) git push;; esac",
            "f() { git push; }; f",
            "function f { git push; }",
            "echo $(git push)",
            "echo `git push`",
            "echo \"$(git push)\"",
            "X=$(git push) ls",
            "cat <(git push)",
            "ls > >(git push)",
            "ls >$(git push)",
            "cat <<EOF\n$(git push)\nEOF",
            "cat <<< $(git push)",
            "echo ${X:-$(git push)}",
            "echo $(( $(git push) + 1 ))",
            "[[ -n $(git push) ]]",
            "! git push",
            "time git push",
            "coproc git push",
            "echo $(echo $(git push))",
        ] {
            assert!(runs(command, "git push"), "{command}: {:?}", commands(command));
        }
        assert!(!runs("cat <<'EOF'\n$(git push)\nEOF", "git push"), "a quoted here-document expands nothing");
    }

    #[test]
    fn b2_words_are_normalized_as_the_shell_removes_quotes() {
        for command in [
            "git  push",
            "git\tpush",
            "\"git\" push",
            "'git' 'push'",
            "g\\it push",
            "$'git' push",
            "$'\\x67it' push",
            "$'\\147it' push",
            "gi\"\"t pu''sh",
            "/usr/bin/git push",
            "./git push",
            "~/bin/git push",
            "FOO=1 BAR=2 git push",
            ">/dev/null git push",
            "2>&1 <x git push",
            "git \\\n push",
        ] {
            assert!(runs(command, "git push"), "{command}: {:?}", commands(command));
        }
        assert_eq!(commands("echo \"a \\\"b\\\" \\x\""), ["echo a \"b\" \\x"]);
        assert_eq!(commands("git push origin $BRANCH"), ["git push origin ?"]);
        assert_eq!(commands("ls *.rs {a,b} a[12]"), ["ls ? ? ?"]);
        assert_eq!(commands("[ -f x ] && [[ -n y ]]"), ["[ -f x ]"], "`[` alone is the test command");
    }

    #[test]
    fn b2_a_word_that_skips_the_word_parser_is_what_the_parser_would_answer() {
        let mut walker = Walker { out: CommandLine::default(), options: ParserOptions::default() };
        let mut skipped = 0;
        // Every ASCII character at the start, inside and at the end of a word.
        for c in (0u8..128).map(char::from) {
            for word in [format!("{c}a"), format!("a{c}b"), format!("a{c}"), format!("{c}")] {
                if plain(&word) {
                    skipped += 1;
                    assert_eq!(walker.expand_parsed(&word, 0), Word::Known(word.clone()), "{word:?}");
                }
            }
        }
        assert!(walker.out.unknown.is_empty(), "{:?}", walker.out.unknown);
        assert!(skipped > 4 * 62, "letters, digits and a few signs skip the parser");
        for word in ["", "~", "a*", "a?", "a[1]", "{a,b}", "$x", "'a'", "\\a", "a b", "!(a)", "a#"] {
            assert!(!plain(word), "{word:?} goes through the parser");
        }
        assert_eq!(
            commands("cargo test -p hooks-runtime --lib x=1 a,b 50% +x @y ^z"),
            ["cargo test -p hooks-runtime --lib x=1 a,b 50% +x @y ^z"]
        );
    }

    #[test]
    fn b3_commands_that_run_other_commands_are_unwrapped() {
        for command in [
            "env git push",
            "env -i FOO=1 git push",
            "env -u HOME -- git push",
            "sudo git push",
            "sudo -u root -E git push",
            "sudo FOO=1 git push",
            "doas -u root git push",
            "command git push",
            "builtin eval 'git push'",
            "exec git push",
            "nice git push",
            "nice -n 5 git push",
            "nice -5 git push",
            "nohup git push",
            "timeout 5 git push",
            "timeout -s KILL --kill-after=1 5 git push",
            "/usr/bin/time -p git push",
            "stdbuf -oL git push",
            "setsid -f git push",
            "watch -n 1 git push",
            "watch -x git push",
            "xargs git push",
            "xargs -0 -n 1 git push",
            "find . -exec git push \\;",
            "find . -execdir git push {} +",
            "find . -ok git push \\;",
            "sh -c 'git push'",
            "bash -c \"git push\"",
            "bash -xc 'git push'",
            "bash +x -c 'git push'",
            "zsh -c 'git push'",
            "dash -c 'ls; git push'",
            "eval 'git push'",
            "eval git push",
            "trap 'git push' EXIT",
            "sudo timeout 5 nohup env A=1 bash -c \"eval 'git push'\"",
            "busybox git push",
            "busybox sh -c 'git push'",
        ] {
            assert!(runs(command, "git push") || runs(command, "git push ?"), "{command}: {:?}", commands(command));
        }
        assert!(!runs("command -v git push", "git push"), "`command -v` runs nothing");
        assert!(!runs("busybox --list git push", "git push"), "`busybox --list` runs nothing");
        let unknown = parse("timeout --frobnicate 5 git push").unknown;
        assert!(unknown[0].contains("--frobnicate"), "{unknown:?}");
    }

    #[test]
    fn b5_a_command_nested_past_what_the_parser_can_take_is_unknown_not_a_crash() {
        for command in [
            format!("{}git status{}", "(".repeat(5000), ")".repeat(5000)),
            format!("{}git status{}", "$(".repeat(5000), ")".repeat(5000)),
            format!("{}git status{}", "if true; then ".repeat(5000), "; fi".repeat(5000)),
            format!("{}git status{}", "{ ".repeat(5000), "; }".repeat(5000)),
        ] {
            let line = parse(&command);
            assert!(line.unknown.iter().any(|reason| reason.contains("nests more than")), "{:?}", line.unknown);
        }
        let nested = format!("{}git push{}", "(".repeat(MAX_NESTING), ")".repeat(MAX_NESTING));
        assert!(parse(&nested).unknown.is_empty(), "{MAX_NESTING} levels are read");
    }
}
