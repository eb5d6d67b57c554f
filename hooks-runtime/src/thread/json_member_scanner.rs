//! Incremental reader for one top-level string argument of a tool call that is still streaming.
//!
//! Spec clause T3 (hooks-spec.md §5.1): when a tool declares a progress argument,
//! `tool_call_started` must run as soon as *just that argument* has finished streaming, with its
//! string value — not when the whole call has. The argument a UI wants ("fixing index.html") is
//! typically followed by a large one (`content`), so waiting for a complete document is too late,
//! and re-parsing the growing buffer on every fragment is quadratic in the length of the call.
//!
//! Models cut the JSON anywhere: mid-key, mid-escape, inside `\uXXXX`, between the halves of a
//! surrogate pair. [`ProgressScanner`] is therefore a push state machine that sees every char
//! exactly once and keeps its whole position in a small `Copy` state, so a cut between any two
//! chars is invisible to it. It validates what it skips, because a value found after malformed
//! JSON is not one the model meant to send.

use std::mem;

/// Watches a tool call's streamed JSON arguments for one top-level member with a string value.
///
/// Feed the fragments in order; [`ProgressScanner::feed`] returns the decoded value once, on the
/// call whose fragment contains the value's closing quote.
#[derive(Debug)]
pub(crate) struct ProgressScanner {
    argument: String,
    state: State,
    /// Containers open inside the member value being skipped. The top-level object is not on it:
    /// its members are tracked by `state`, so an empty stack means "back at top level".
    nesting: Nesting,
    /// The watched value decoded so far; the only buffer that grows with the input.
    value: String,
}

impl ProgressScanner {
    /// A scanner for the top-level member named `argument` (compared with the decoded key).
    pub(crate) fn new(argument: &str) -> Self {
        Self {
            argument: argument.to_owned(),
            state: State::BeforeObject,
            nesting: Nesting::default(),
            value: String::new(),
        }
    }

    /// Consumes the next fragment of the arguments.
    ///
    /// Returns the decoded value on the call that completes it, and `None` on every other call,
    /// including every call after the scanner is done.
    pub(crate) fn feed(&mut self, fragment: &str) -> Option<String> {
        for c in fragment.chars() {
            match self.step(c) {
                Step::Continue => {}
                Step::Found => {
                    let value = mem::take(&mut self.value);
                    self.finish();
                    return Some(value);
                }
                Step::GiveUp => {
                    self.finish();
                    return None;
                }
                // The rest of the fragment cannot change anything once the scanner is done.
                Step::Done => return None,
            }
        }
        None
    }

    /// Whether the scanner has returned its value or given up; it will never return one again.
    pub(crate) fn is_done(&self) -> bool {
        matches!(self.state, State::Done)
    }

    fn finish(&mut self) {
        self.state = State::Done;
        // A stream can go on long after the scanner is done: release what it was holding.
        self.nesting = Nesting::default();
        self.value = String::new();
    }

    fn step(&mut self, c: char) -> Step {
        match self.state {
            State::Done => return Step::Done,
            State::BeforeObject => match c {
                '{' => self.state = State::BeforeKey { first: true },
                _ if is_ws(c) => {}
                _ => return Step::GiveUp,
            },
            State::BeforeKey { first } => match c {
                '"' => self.state = State::Key { string: Str::Plain, matched: Some(0) },
                // The object closed without the argument: it will never come.
                '}' if first => return Step::GiveUp,
                _ if is_ws(c) => {}
                _ => return Step::GiveUp,
            },
            State::Key { mut string, matched } => match string.step(c) {
                Decoded::Pending => self.state = State::Key { string, matched },
                // Compare while decoding so that no key, however long, needs buffering.
                Decoded::Char(ch) => {
                    let matched = matched.filter(|&m| self.argument[m..].starts_with(ch)).map(|m| m + ch.len_utf8());
                    self.state = State::Key { string, matched };
                }
                Decoded::End => {
                    self.state = State::BeforeColon { matched: matched == Some(self.argument.len()) };
                }
                Decoded::Invalid => return Step::GiveUp,
            },
            State::BeforeColon { matched } => match c {
                ':' => self.state = State::BeforeValue { matched },
                _ if is_ws(c) => {}
                _ => return Step::GiveUp,
            },
            State::BeforeValue { matched: true } => match c {
                '"' => self.state = State::Value(Str::Plain),
                _ if is_ws(c) => {}
                // A number, object, null...: the member exists but can never carry a progress string.
                _ => return Step::GiveUp,
            },
            State::BeforeValue { matched: false } => {
                if !is_ws(c) {
                    return self.start_value(c);
                }
            }
            State::Value(mut string) => match string.step(c) {
                Decoded::Pending => self.state = State::Value(string),
                Decoded::Char(ch) => {
                    self.value.push(ch);
                    self.state = State::Value(string);
                }
                Decoded::End => return Step::Found,
                Decoded::Invalid => return Step::GiveUp,
            },
            State::AfterMember => match c {
                ',' => self.state = State::BeforeKey { first: false },
                _ if is_ws(c) => {}
                // '}' included: the object closed without the argument.
                _ => return Step::GiveUp,
            },
            State::Skip(skip) => return self.skip(skip, c),
        }
        Step::Continue
    }

    /// Starts skipping a value whose first char is `c` (not whitespace).
    fn start_value(&mut self, c: char) -> Step {
        let skip = match c {
            '{' => {
                self.nesting.push(Container::Object);
                Skip::ObjectStart
            }
            '[' => {
                self.nesting.push(Container::Array);
                Skip::ArrayStart
            }
            '"' => Skip::String(Str::Plain),
            't' => Skip::Literal("rue"),
            'f' => Skip::Literal("alse"),
            'n' => Skip::Literal("ull"),
            '-' => Skip::Number(Num::Minus),
            '0' => Skip::Number(Num::Zero),
            '1'..='9' => Skip::Number(Num::Int),
            _ => return Step::GiveUp,
        };
        self.state = State::Skip(skip);
        Step::Continue
    }

    fn value_skipped(&mut self) {
        self.state = if self.nesting.is_empty() { State::AfterMember } else { State::Skip(Skip::AfterValue) };
    }

    fn skip(&mut self, skip: Skip, c: char) -> Step {
        match skip {
            Skip::Value | Skip::ArrayStart if is_ws(c) => {}
            Skip::ArrayStart if c == ']' => {
                self.nesting.pop();
                self.value_skipped();
            }
            Skip::Value | Skip::ArrayStart => return self.start_value(c),
            Skip::ObjectStart | Skip::ObjectKey => match c {
                '"' => self.state = State::Skip(Skip::Key(Str::Plain)),
                '}' if skip == Skip::ObjectStart => {
                    self.nesting.pop();
                    self.value_skipped();
                }
                _ if is_ws(c) => {}
                _ => return Step::GiveUp,
            },
            Skip::Key(mut string) => match string.step(c) {
                Decoded::Pending | Decoded::Char(_) => self.state = State::Skip(Skip::Key(string)),
                Decoded::End => self.state = State::Skip(Skip::Colon),
                Decoded::Invalid => return Step::GiveUp,
            },
            Skip::Colon => match c {
                ':' => self.state = State::Skip(Skip::Value),
                _ if is_ws(c) => {}
                _ => return Step::GiveUp,
            },
            Skip::String(mut string) => match string.step(c) {
                Decoded::Pending | Decoded::Char(_) => self.state = State::Skip(Skip::String(string)),
                Decoded::End => self.value_skipped(),
                Decoded::Invalid => return Step::GiveUp,
            },
            Skip::Literal(rest) => match rest.strip_prefix(c) {
                Some("") => self.value_skipped(),
                Some(rest) => self.state = State::Skip(Skip::Literal(rest)),
                None => return Step::GiveUp,
            },
            Skip::Number(num) => match num.next(c) {
                Some(num) => self.state = State::Skip(Skip::Number(num)),
                // Numbers have no closing delimiter: the char that ends one belongs to what follows.
                None if num.is_complete() => {
                    self.value_skipped();
                    return self.step(c);
                }
                None => return Step::GiveUp,
            },
            Skip::AfterValue => match (c, self.nesting.top()) {
                (',', Some(Container::Array)) => self.state = State::Skip(Skip::Value),
                (',', Some(Container::Object)) => self.state = State::Skip(Skip::ObjectKey),
                (']', Some(Container::Array)) | ('}', Some(Container::Object)) => {
                    self.nesting.pop();
                    self.value_skipped();
                }
                _ if is_ws(c) => {}
                _ => return Step::GiveUp,
            },
        }
        Step::Continue
    }
}

enum Step {
    Continue,
    Found,
    GiveUp,
    Done,
}

/// Where the scanner is in the top-level object. `Copy`, so that every transition is explicit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    BeforeObject,
    /// After `{` (`first`: a `}` may close an empty object) or after `,`.
    BeforeKey {
        first: bool,
    },
    /// `matched`: the byte length of `argument` that the decoded key has matched so far, or
    /// `None` once it has diverged.
    Key {
        string: Str,
        matched: Option<usize>,
    },
    BeforeColon {
        matched: bool,
    },
    BeforeValue {
        matched: bool,
    },
    /// Inside the watched member's string value.
    Value(Str),
    AfterMember,
    /// Inside the value of another top-level member.
    Skip(Skip),
    Done,
}

/// Where the scanner is inside a value it skips; the open containers are on `Nesting`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Skip {
    /// A value is required (after `:` or an array's `,`).
    Value,
    /// After `[`: a value or `]`.
    ArrayStart,
    /// After `{`: a key or `}`.
    ObjectStart,
    /// After an object's `,`: a key.
    ObjectKey,
    /// Nested keys are only validated: the same name below top level must not match.
    Key(Str),
    Colon,
    String(Str),
    /// The rest of `true`, `false` or `null`.
    Literal(&'static str),
    Number(Num),
    /// After a value inside a container: `,` or the container's closing bracket.
    AfterValue,
}

/// JSON number grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Num {
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
    Exp,
    ExpSign,
    ExpDigits,
}

impl Num {
    fn next(self, c: char) -> Option<Self> {
        use Num::*;
        Some(match (self, c) {
            (Minus, '0') => Zero,
            (Minus, '1'..='9') | (Int, '0'..='9') => Int,
            (Zero | Int, '.') => Dot,
            (Dot | Frac, '0'..='9') => Frac,
            (Zero | Int | Frac, 'e' | 'E') => Exp,
            (Exp, '+' | '-') => ExpSign,
            (Exp | ExpSign | ExpDigits, '0'..='9') => ExpDigits,
            _ => return None,
        })
    }

    fn is_complete(self) -> bool {
        matches!(self, Num::Zero | Num::Int | Num::Frac | Num::ExpDigits)
    }
}

/// Position inside a JSON string, after its opening quote. Escapes can be cut by a fragment
/// boundary anywhere, so every partial escape is a state of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Str {
    Plain,
    /// After `\`.
    Escape,
    /// Inside `\uXXXX`: `code` holds the `digits` hex digits read so far; `high` is the leading
    /// surrogate this escape must complete, if any.
    Hex {
        high: Option<u16>,
        code: u16,
        digits: u8,
    },
    /// After a leading surrogate: a `\` must follow...
    LowBackslash(u16),
    /// ...then a `u`.
    LowU(u16),
}

enum Decoded {
    Pending,
    Char(char),
    End,
    Invalid,
}

impl Str {
    fn step(&mut self, c: char) -> Decoded {
        match *self {
            Str::Plain => match c {
                '"' => return Decoded::End,
                '\\' => *self = Str::Escape,
                // JSON forbids raw control characters inside strings.
                '\0'..='\x1f' => return Decoded::Invalid,
                _ => return Decoded::Char(c),
            },
            Str::Escape => {
                let ch = match c {
                    '"' => '"',
                    '\\' => '\\',
                    '/' => '/',
                    'b' => '\u{8}',
                    'f' => '\u{c}',
                    'n' => '\n',
                    'r' => '\r',
                    't' => '\t',
                    'u' => {
                        *self = Str::Hex { high: None, code: 0, digits: 0 };
                        return Decoded::Pending;
                    }
                    _ => return Decoded::Invalid,
                };
                *self = Str::Plain;
                return Decoded::Char(ch);
            }
            Str::Hex { high, code, digits } => {
                let Some(digit) = c.to_digit(16) else { return Decoded::Invalid };
                // Four hex digits fill the u16 exactly, so the shift never drops a digit.
                let code = (code << 4) | digit as u16;
                if digits < 3 {
                    *self = Str::Hex { high, code, digits: digits + 1 };
                    return Decoded::Pending;
                }
                return match (high, code) {
                    (None, 0xD800..=0xDBFF) => {
                        *self = Str::LowBackslash(code);
                        Decoded::Pending
                    }
                    (Some(high), 0xDC00..=0xDFFF) => {
                        *self = Str::Plain;
                        let scalar = 0x10000 + ((u32::from(high) - 0xD800) << 10) + (u32::from(code) - 0xDC00);
                        char::from_u32(scalar).map_or(Decoded::Invalid, Decoded::Char)
                    }
                    // A lone surrogate, leading or trailing, is not a char.
                    (Some(_), _) | (None, 0xDC00..=0xDFFF) => Decoded::Invalid,
                    (None, _) => {
                        *self = Str::Plain;
                        char::from_u32(u32::from(code)).map_or(Decoded::Invalid, Decoded::Char)
                    }
                };
            }
            Str::LowBackslash(high) => match c {
                '\\' => *self = Str::LowU(high),
                _ => return Decoded::Invalid,
            },
            Str::LowU(high) => match c {
                'u' => *self = Str::Hex { high: Some(high), code: 0, digits: 0 },
                _ => return Decoded::Invalid,
            },
        }
        Decoded::Pending
    }
}

fn is_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Container {
    Object,
    Array,
}

/// A stack of open containers, one bit each: skipped values must be validated (a `]` closing a
/// `{` is malformed), and deeply nested arguments should not cost a word per level.
#[derive(Debug, Default)]
struct Nesting {
    bits: Vec<u64>,
    len: usize,
}

impl Nesting {
    fn push(&mut self, container: Container) {
        let (word, bit) = (self.len / 64, self.len % 64);
        if word == self.bits.len() {
            self.bits.push(0);
        }
        match container {
            Container::Array => self.bits[word] |= 1 << bit,
            Container::Object => self.bits[word] &= !(1 << bit),
        }
        self.len += 1;
    }

    fn pop(&mut self) {
        self.len = self.len.saturating_sub(1);
    }

    fn top(&self) -> Option<Container> {
        let last = self.len.checked_sub(1)?;
        let is_array = self.bits[last / 64] & (1 << (last % 64)) != 0;
        Some(if is_array { Container::Array } else { Container::Object })
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Marks the byte right after the watched value's closing quote in a test document, so that
    /// the "earliest point" is written down independently of the scanner.
    const MARK: char = '¦';

    /// Removes `MARK` and returns the document and the byte index of the closing quote before it.
    fn marked(src: &str) -> (String, Option<usize>) {
        match src.find(MARK) {
            Some(at) => {
                assert_eq!(&src[at - 1..at], "\"", "the mark must follow the closing quote: {src}");
                (src.replacen(MARK, "", 1), Some(at - 1))
            }
            None => (src.to_owned(), None),
        }
    }

    fn serde_progress(doc: &str) -> Option<String> {
        let value: serde_json::Value = serde_json::from_str(doc).expect("test documents are valid JSON");
        value["progress"].as_str().map(str::to_owned)
    }

    fn boundaries(doc: &str) -> impl Iterator<Item = usize> + '_ {
        doc.char_indices().map(|(i, _)| i).chain([doc.len()])
    }

    /// Feeds `fragments` in order and checks that `expected` is returned exactly on the fragment
    /// that holds the closing quote at byte `quote`, and nothing else is ever returned.
    fn check_fragments(doc: &str, fragments: &[&str], expected: Option<(&str, usize)>) {
        let mut scanner = ProgressScanner::new("progress");
        let mut start = 0;
        for fragment in fragments {
            let end = start + fragment.len();
            let got = scanner.feed(fragment);
            let want = expected.filter(|&(_, quote)| (start..end).contains(&quote)).map(|(value, _)| value);
            assert_eq!(got.as_deref(), want, "doc {doc:?} split as {fragments:?}, fragment at {start}..{end}");
            if want.is_some() {
                assert!(scanner.is_done());
            }
            start = end;
        }
        if expected.is_some() {
            assert!(scanner.is_done(), "doc {doc:?} split as {fragments:?}");
        }
        // A stream cut short may legitimately complete later; one that is done never does.
        if scanner.is_done() {
            assert_eq!(scanner.feed("\"progress\": \"again\"}"), None);
        }
    }

    /// Every split into two fragments, then char by char.
    fn check_all_splits(doc: &str, expected: Option<(&str, usize)>) {
        for i in boundaries(doc) {
            check_fragments(doc, &[&doc[..i], &doc[i..]], expected);
        }
        let chars: Vec<&str> = doc.char_indices().map(|(i, c)| &doc[i..i + c.len_utf8()]).collect();
        check_fragments(doc, &chars, expected);
    }

    /// A valid document whose top-level `progress` is a string, its closing quote marked.
    fn check_found(src: &str) {
        let (doc, quote) = marked(src);
        let quote = quote.expect("document has a mark");
        let expected = serde_progress(&doc).expect("document has a top-level progress string");
        check_all_splits(&doc, Some((&expected, quote)));
    }

    /// A document for which the scanner must never return a value.
    fn check_never(doc: &str) {
        check_all_splits(doc, None);
        let mut scanner = ProgressScanner::new("progress");
        assert_eq!(scanner.feed(doc), None);
    }

    #[test]
    fn t3_position_of_the_member() {
        check_found(r#"{"progress":"first"¦,"content":"<html>"}"#);
        check_found(r#"{"path":"index.html","content":"<html>","progress":"last"¦}"#);
        check_found(r#"{"path":"index.html","progress":"middle"¦,"content":"<html>"}"#);
        check_found(r#"{"progress":"only"¦}"#);
    }

    #[test]
    fn t3_nested_members_with_the_same_key_do_not_match() {
        check_found(r#"{"a":{"progress":"nested"},"progress":"top"¦}"#);
        check_found(r#"{"a":[{"progress":"in array"}],"progress":"top"¦}"#);
        check_found(r#"{"a":[["progress","x"],{"b":{"progress":{"progress":"deep"}}}],"progress":"top"¦}"#);
        check_found(r#"{"a":{"progress":1,"c":[true,false,null,-0.5e+3]},"progress":"top"¦}"#);
        check_never(r#"{"a":{"progress":"nested"},"b":["progress"]}"#);
    }

    #[test]
    fn t3_the_key_as_a_value_does_not_match() {
        check_found(r#"{"a":"progress","progress":"real"¦}"#);
        check_found(r#"{"progress ":"progress","progress":"real"¦}"#);
        check_found(r#"{"a":["progress",":","\"progress\":\"fake\""],"progress":"real"¦}"#);
        check_never(r#"{"x":"progress","y":"z"}"#);
        check_never(r#"{"x":"\"progress\":\"fake\""}"#);
    }

    #[test]
    fn t3_escapes_in_the_value() {
        check_found(r#"{"progress":"say \"hi\""¦}"#);
        check_found(r#"{"progress":"C:\\dir\\"¦}"#);
        check_found(r#"{"progress":"line\nbreak\r\t\b\f\/"¦}"#);
        check_found(r#"{"progress":"caf\u00e9 \u00E9"¦}"#);
        check_found(r#"{"progress":"smile \ud83d\ude00!"¦}"#);
        check_found(r#"{"progress":"\uD83D\uDE00\ud83d\ude00"¦}"#);
        check_found(r#"{"progress":"raw é 😀 ✓"¦}"#);
        check_found(r#"{"progress":"\u0000\u001f\u0022\u005c"¦}"#);
    }

    #[test]
    fn t3_escapes_in_keys() {
        check_found(r#"{"pro\u0067ress":"escaped key"¦}"#);
        check_found(r#"{"\u0070\u0072ogres\u0073":"escaped key"¦}"#);
        check_found(r#"{"prog\"ress":"no","progress":"yes"¦}"#);
        check_never(r#"{"pro\u0067ress\u0000":"longer"}"#);
        check_never(r#"{"progres":"shorter","progresss":"longer","Progress":"case"}"#);
    }

    #[test]
    fn t3_escapes_in_skipped_strings() {
        check_found(r#"{"a":"\"}\\","b":["\u005d\ud83d\ude00\"]"],"progress":"ok"¦}"#);
        check_found(r#"{"a\"":{"\\\"k":"v"},"progress":"ok"¦}"#);
    }

    #[test]
    fn t3_whitespace_everywhere() {
        check_found(
            " \n\t\r{ \n\"a\" \t: \r[ 1 , { \"progress\" : \"x\" } ] ,\n \"progress\"\r\n:\t \"spaced out\"¦ \n}\n ",
        );
        check_found("{\"progress\"\n:\n\"\"¦\n,\n\"b\"\n:\nnull\n}");
    }

    #[test]
    fn t3_empty_value() {
        check_found(r#"{"progress":""¦}"#);
        check_found(r#"{"a":"","progress":""¦,"b":""}"#);
    }

    #[test]
    fn t3_other_argument_names() {
        for (argument, doc, want) in [
            ("path", r#"{"progress":"p","path":"index.html"}"#, Some("index.html")),
            ("", r#"{"a":1,"":"empty key"}"#, Some("empty key")),
            ("é😀", r#"{"\u00e9\ud83d\ude00":"unicode key"}"#, Some("unicode key")),
            ("path", r#"{"progress":"p"}"#, None),
        ] {
            let mut scanner = ProgressScanner::new(argument);
            let got = doc.chars().find_map(|c| scanner.feed(c.encode_utf8(&mut [0; 4])));
            assert_eq!(got.as_deref(), want, "{argument:?} in {doc}");
        }
    }

    #[test]
    fn t3_gives_up_on_a_non_string_value() {
        for doc in [
            r#"{"progress":1,"a":"progress"}"#,
            r#"{"progress":-2.5e3}"#,
            r#"{"progress":null}"#,
            r#"{"progress":true}"#,
            r#"{"progress":{"progress":"inner"}}"#,
            r#"{"progress":["outer"]}"#,
            // The first member wins, as it must: the hook has already run by the time a second arrives.
            r#"{"progress":1,"progress":"second"}"#,
        ] {
            check_never(doc);
            let mut scanner = ProgressScanner::new("progress");
            scanner.feed(&doc[..13]);
            assert!(scanner.is_done(), "gives up as soon as the value starts: {doc}");
        }
    }

    #[test]
    fn t3_gives_up_on_a_missing_key() {
        for doc in [r#"{}"#, r#"{"a":1}"#, r#"{"content":"<html>","path":"x"}"#, r#"["progress","x"]"#, r#""progress""#]
        {
            check_never(doc);
            let mut scanner = ProgressScanner::new("progress");
            scanner.feed(doc);
            assert!(scanner.is_done(), "the closing brace ends the search: {doc}");
        }
    }

    #[test]
    fn t3_gives_up_on_malformed_documents() {
        for doc in [
            "",
            "   ",
            r#"x{"progress":"x"}"#,
            r#"{"a" 1,"progress":"x"}"#,
            r#"{"a":1 "progress":"x"}"#,
            r#"{,"progress":"x"}"#,
            r#"{"a":1,,"progress":"x"}"#,
            r#"{"a":1,}"#,
            r#"{"a",1,"progress":"x"}"#,
            r#"{"a":[1},"progress":"x"}"#,
            r#"{"a":{"b":1],"progress":"x"}"#,
            r#"{"a":[1,],"progress":"x"}"#,
            r#"{"a":{"b"},"progress":"x"}"#,
            r#"{"a":{1:2},"progress":"x"}"#,
            r#"{"a":tru,"progress":"x"}"#,
            r#"{"a":nul1,"progress":"x"}"#,
            r#"{"a":01,"progress":"x"}"#,
            r#"{"a":1.,"progress":"x"}"#,
            r#"{"a":-,"progress":"x"}"#,
            r#"{"a":1e,"progress":"x"}"#,
            r#"{"a":.5,"progress":"x"}"#,
            r#"{"a":+1,"progress":"x"}"#,
            r#"{"a":'x',"progress":"x"}"#,
            r#"{"a":"\x","progress":"x"}"#,
            r#"{"a":"\u12g4","progress":"x"}"#,
            r#"{"a":"\ud83d","progress":"x"}"#,
            r#"{progress:"x"}"#,
            r#"{"progress":'x'}"#,
            r#"{"progress" "x"}"#,
            "{\"a\":\"tab\there\",\"progress\":\"x\"}",
            // Truncated before the value closes.
            r#"{"progress":"abc"#,
            r#"{"progress":"abc\"#,
            r#"{"progress":"abc\u00"#,
            r#"{"progress":"abc\ud83d"#,
            r#"{"progress":"abc\ud83d\"#,
            r#"{"a":[{"b":"#,
            r#"{"progr"#,
        ] {
            assert!(serde_json::from_str::<serde_json::Value>(doc).is_err(), "really malformed: {doc}");
            check_all_splits(doc, None);
        }
    }

    #[test]
    fn t3_gives_up_on_an_invalid_value() {
        for doc in [
            r#"{"progress":"bad \q escape"}"#,
            r#"{"progress":"bad \u00zz hex"}"#,
            r#"{"progress":"bad \U00e9 hex"}"#,
            r#"{"progress":"lone high \ud83d"}"#,
            r#"{"progress":"lone high \ud83d then text"}"#,
            r#"{"progress":"high then non-low \ud83d\u0041"}"#,
            r#"{"progress":"two highs \ud83d\ud83d"}"#,
            r#"{"progress":"lone low \ude00"}"#,
            r#"{"progress":"high then other escape \ud83d\n"}"#,
            "{\"progress\":\"raw newline\n\"}",
            "{\"progress\":\"raw nul\0\"}",
        ] {
            assert!(serde_json::from_str::<serde_json::Value>(doc).is_err(), "really invalid: {doc}");
            check_all_splits(doc, None);
        }
    }

    #[test]
    fn t3_done_after_the_value() {
        let mut scanner = ProgressScanner::new("progress");
        assert!(!scanner.is_done());
        assert_eq!(scanner.feed(r#"{"progress":"a"#), None);
        assert!(!scanner.is_done());
        assert_eq!(scanner.feed(r#"b", "progress":"c"}"#).as_deref(), Some("ab"));
        assert!(scanner.is_done());
        assert_eq!(scanner.feed(r#"{"progress":"d"}"#), None);
        assert_eq!(scanner.feed("junk"), None);
        assert!(scanner.is_done());
    }

    #[test]
    fn t3_deep_nesting_is_validated() {
        // serde_json stops at 128 levels.
        let depth = 120;
        let mut open = String::new();
        for i in 0..depth {
            open.push_str(if i % 3 == 0 { "[" } else { "{\"progress\":" });
        }
        let close: String = (0..depth).rev().map(|i| if i % 3 == 0 { ']' } else { '}' }).collect();
        let doc = format!("{{\"a\":{open}1{close},\"progress\":\"deep\"¦}}");
        check_found(&doc);
        // Swap one pair of closers deep inside: the document becomes malformed.
        let bad_close: String = close.replacen("]}", "}]", 1);
        let bad = format!("{{\"a\":{open}1{bad_close},\"progress\":\"deep\"}}");
        assert!(serde_json::from_str::<serde_json::Value>(&bad).is_err());
        check_never(&bad);
    }

    /// xorshift64*: a deterministic source of randomness without a dependency.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.below(items.len())]
        }
    }

    /// Generates argument objects as JSON text, noting where the top-level `progress` string
    /// value closes, so that serde_json checks the value and the generator checks the timing.
    struct Generator {
        rng: Rng,
        out: String,
        closing_quote: Option<usize>,
    }

    /// Keys that decode to `progress`, then keys that must not match it.
    const PROGRESS_KEYS: &[&str] = &[r#""progress""#, r#""pro\u0067ress""#, r#""\u0070rogres\u0073""#];
    const OTHER_KEYS: &[&str] =
        &[r#""path""#, r#""content""#, r#""prog""#, r#""progresss""#, r#""Progress""#, r#""progress\n""#, r#""""#];

    impl Generator {
        fn ws(&mut self) {
            for _ in 0..self.rng.below(4).saturating_sub(1) {
                let ws = self.rng.pick(&[" ", "\t", "\n", "\r", "  "]);
                self.out.push_str(ws);
            }
        }

        fn string(&mut self) {
            self.out.push('"');
            for _ in 0..self.rng.below(6) {
                let piece = self.rng.pick(&[
                    "fixing ",
                    "index.html",
                    "é",
                    "😀",
                    "\\\"",
                    "\\\\",
                    "\\/",
                    "\\n",
                    "\\t",
                    "\\u00e9",
                    "\\u0041",
                    "\\ud83d\\ude00",
                    "\\uDBFF\\uDFFF",
                    "progress",
                    "\\\"progress\\\":\\\"",
                    "{[,:]}",
                    " ",
                ]);
                self.out.push_str(piece);
            }
            self.out.push('"');
        }

        fn value(&mut self, depth: usize, string_ok: bool) {
            let kinds = if depth < 3 { 7 } else { 5 };
            let kind = loop {
                let kind = self.rng.below(kinds);
                if string_ok || !(2..=4).contains(&kind) {
                    break kind;
                }
            };
            match kind {
                0 => {
                    let number = self.rng.pick(&["0", "-0", "7", "12", "-3.25", "1e5", "2E-3", "0.5e+10", "-12.0"]);
                    self.out.push_str(number);
                }
                1 => {
                    let literal = self.rng.pick(&["true", "false", "null"]);
                    self.out.push_str(literal);
                }
                2..=4 => self.string(),
                5 => {
                    self.out.push('[');
                    self.ws();
                    for i in 0..self.rng.below(4) {
                        if i > 0 {
                            self.out.push(',');
                            self.ws();
                        }
                        self.value(depth + 1, true);
                        self.ws();
                    }
                    self.out.push(']');
                }
                _ => self.object(depth + 1),
            }
        }

        fn object(&mut self, depth: usize) {
            let top = depth == 0;
            let members = self.rng.below(5);
            // At most one top-level progress member: with duplicates, serde_json keeps the last
            // one while the scanner must act on the first.
            let progress_at = if top && self.rng.below(5) > 0 { Some(self.rng.below(members + 1)) } else { None };
            self.out.push('{');
            self.ws();
            for i in 0..=members {
                let is_progress = progress_at == Some(i);
                if i == members && !is_progress {
                    break;
                }
                if i > 0 {
                    self.out.push(',');
                    self.ws();
                }
                let key = if is_progress || (!top && self.rng.below(3) == 0) {
                    self.rng.pick(PROGRESS_KEYS)
                } else {
                    self.rng.pick(OTHER_KEYS)
                };
                self.out.push_str(key);
                self.ws();
                self.out.push(':');
                self.ws();
                if is_progress && self.rng.below(6) > 0 {
                    self.string();
                    self.closing_quote = Some(self.out.len() - 1);
                } else {
                    self.value(depth, !is_progress);
                }
                self.ws();
            }
            self.out.push('}');
        }
    }

    fn random_splits<'a>(rng: &mut Rng, doc: &'a str) -> Vec<&'a str> {
        let bounds: Vec<usize> = boundaries(doc).collect();
        let mut cuts: Vec<usize> = (0..rng.below(6)).map(|_| bounds[rng.below(bounds.len())]).collect();
        cuts.sort_unstable();
        let mut fragments = Vec::new();
        let mut start = 0;
        for cut in cuts.into_iter().chain([doc.len()]) {
            fragments.push(&doc[start..cut]);
            start = cut;
        }
        fragments
    }

    #[test]
    fn t3_generated_documents_agree_with_serde_json() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let (mut found, mut not_found) = (0, 0);
        for _ in 0..400 {
            let mut generator = Generator { rng: Rng(rng.next() | 1), out: String::new(), closing_quote: None };
            generator.ws();
            generator.object(0);
            generator.ws();
            let Generator { out: doc, closing_quote, .. } = generator;

            let expected = serde_progress(&doc);
            assert_eq!(expected.is_some(), closing_quote.is_some(), "generator and serde_json disagree: {doc}");
            let expected = expected.as_deref().zip(closing_quote);
            if expected.is_some() {
                found += 1
            } else {
                not_found += 1
            }

            for _ in 0..20 {
                check_fragments(&doc, &random_splits(&mut rng, &doc), expected);
            }
            let chars: Vec<&str> = doc.char_indices().map(|(i, c)| &doc[i..i + c.len_utf8()]).collect();
            check_fragments(&doc, &chars, expected);

            // A stream cut short returns the value only if the cut comes after its closing quote.
            let cut = boundaries(&doc).nth(rng.below(doc.chars().count() + 1)).unwrap_or(doc.len());
            let truncated = &doc[..cut];
            check_fragments(truncated, &random_splits(&mut rng, truncated), expected.filter(|&(_, q)| q < cut));

            // Corrupting one char must never panic, wherever the fragments are cut.
            let at = boundaries(&doc).nth(rng.below(doc.chars().count())).unwrap_or(0);
            let junk = rng.pick(&["}", "]", "\"", "\\", ",", ":", "x", "\n", "\u{1}", "é", "{", "["]);
            let mut corrupted = doc.clone();
            corrupted.replace_range(at..at + doc[at..].chars().next().map_or(0, char::len_utf8), junk);
            let mut scanner = ProgressScanner::new("progress");
            for fragment in random_splits(&mut rng, &corrupted) {
                scanner.feed(fragment);
            }
        }
        assert!(found > 100 && not_found > 30, "the generator covers both outcomes: {found} found, {not_found} not");
    }
}
