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
mod tests;
