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
    for doc in [r#"{}"#, r#"{"a":1}"#, r#"{"content":"<html>","path":"x"}"#, r#"["progress","x"]"#, r#""progress""#] {
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
