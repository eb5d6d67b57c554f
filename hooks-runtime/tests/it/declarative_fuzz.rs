//! The YAML and settings-format loaders fuzzed on stable Rust: a seeded random loop of
//! generated hooks documents, mutations of the fixtures and raw bytes, checked against the
//! invariants the cargo-fuzz targets check (`declarative_support/loader_invariants.rs`,
//! `declarative_support/settings_invariants.rs`).
//!
//! It runs for `HOOKS_FUZZ_SECS` seconds (3 by default, so that `cargo test` stays quick; CI
//! sets 25) from the seed `HOOKS_FUZZ_SEED` (random by default). A failing input is printed
//! with its seed and case number, so that `HOOKS_FUZZ_SEED=<seed>` replays it.

#![cfg(feature = "declarative")]

use crate::declarative_support;

#[path = "../declarative_support/loader_invariants.rs"]
mod loader_invariants;

#[path = "../declarative_support/settings_invariants.rs"]
mod settings_invariants;

use std::panic::AssertUnwindSafe;
use std::time::{Duration, Instant};

use declarative_support::fixture;
use loader_invariants::check_loader;
use settings_invariants::check_settings_loader;

/// xorshift64*: small, fast and good enough to pick mutations; no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const EVENTS: &[&str] = &[
    "preToolUse",
    "postToolUse",
    "onError",
    "onStart",
    "onStop",
    "PRE_TOOL_USE",
    "ON_ERROR",
    "pretooluse",
    "beforeToolUse",
    "\"onStart\"",
    "'onStop'",
    "42",
    "true",
    "~",
    "[preToolUse]",
    "{a: 1}",
    "!!str onStart",
    "!custom onStart",
];
const MATCHERS: &[&str] =
    &["\"file_*\"", "'*'", "\"\"", "~", "", "x", "\"a*b*c\"", "42", "[x]", "{glob: x}", "\"\\u0000\"", "\"é*\""];
const TYPES: &[&str] = &["log", "command", "LOG", "Command", "email", "[log]", "7", "~", "\"log\""];
const TEXTS: &[&str] = &[
    "m",
    "\"${tool} starting\"",
    "'${tool} ${error}'",
    "\"echo ${tool} >> /dev/null\"",
    "\"printf '%s' ${args} ${result}\"",
    "\"${\"",
    "\"${}\"",
    "\"${a ${tool}}\"",
    "|\n        multi\n        line",
    ">-\n        folded\n        text",
    "\"tab\\there\\0nul\"",
    "[1, 2]",
    "{a: b}",
    "1e999",
    "!!binary aGVsbG8=",
];
const MODES: &[&str] = &["safe", "shell", "SAFE", "paranoid", "3", "~"];
const TOKENS: &[&str] = &[
    ":",
    ": ",
    "- ",
    "-",
    "[",
    "]",
    "{",
    "}",
    ",",
    "&a ",
    "*a",
    "&b ",
    "*b",
    "!!binary ",
    "!!map ",
    "!tag ",
    "\t",
    "\n",
    "\n  ",
    "'",
    "\"",
    "#",
    "? ",
    "<<: ",
    "${",
    "}",
    "\0",
    "\u{feff}",
    "\r\n",
    "---\n",
    "...\n",
    "%YAML 1.2\n",
    "|",
    ">",
    "é",
    "\u{202e}",
    "hooks",
    "event",
    "action",
    "type",
    "matcher",
    "mode",
    "~",
    "null",
    "0x7f",
    "-.inf",
];

/// A hooks document put together from plausible and implausible pieces, in block or flow style.
fn generated(rng: &mut Rng) -> String {
    let mut yaml = String::new();
    if rng.chance(5) {
        yaml.push_str("---\n");
    }
    if rng.chance(10) {
        yaml.push_str("other: 1\n");
    }
    if rng.chance(3) {
        return yaml;
    }
    yaml.push_str("hooks:");
    let entries = rng.below(6);
    let flow = rng.chance(20);
    if entries == 0 {
        yaml.push_str(if rng.chance(50) { " []\n" } else { "\n" });
        return yaml;
    }
    yaml.push_str(if flow { " [" } else { "\n" });
    for i in 0..entries {
        let mut fields: Vec<String> = Vec::new();
        if !rng.chance(10) {
            fields.push(format!("event: {}", rng.pick(EVENTS)));
        }
        if rng.chance(40) {
            fields.push(format!("matcher: {}", rng.pick(MATCHERS)));
        }
        if rng.chance(5) {
            fields.push("matchr: x".to_owned());
        }
        if !rng.chance(10) {
            let mut action = vec![format!("type: {}", rng.pick(TYPES))];
            for key in ["message", "command"] {
                if rng.chance(60) {
                    action.push(format!("{key}: {}", rng.pick(TEXTS)));
                }
            }
            if rng.chance(30) {
                action.push(format!("mode: {}", rng.pick(MODES)));
            }
            if rng.chance(5) {
                action.push("level: debug".to_owned());
            }
            let anchor = if rng.chance(10) { "&act " } else { "" };
            if rng.chance(5) {
                fields.push("action: *act".to_owned());
            } else if flow || rng.chance(50) {
                // Flow mappings cannot hold block scalars; keep the first line only.
                let items: Vec<String> = action.iter().map(|a| a.lines().next().unwrap_or("").to_owned()).collect();
                fields.push(format!("action: {anchor}{{{}}}", items.join(", ")));
            } else {
                let body: String = action.iter().map(|a| format!("\n      {a}")).collect();
                fields.push(format!("action: {anchor}{body}"));
            }
        }
        if flow {
            let items: Vec<String> = fields.iter().map(|f| f.lines().next().unwrap_or("").to_owned()).collect();
            yaml.push_str(&format!("{}{{{}}}", if i == 0 { "" } else { ", " }, items.join(", ")));
        } else {
            yaml.push_str("  -");
            if fields.is_empty() {
                yaml.push_str(" ~\n");
            }
            for (j, field) in fields.iter().enumerate() {
                yaml.push_str(if j == 0 { " " } else { "    " });
                yaml.push_str(field);
                yaml.push('\n');
            }
        }
    }
    if flow {
        yaml.push_str("]\n");
    }
    yaml
}

/// `base` with a few random edits: deletions, duplications, inserted tokens and flipped bytes.
fn mutated(rng: &mut Rng, base: &[u8]) -> Vec<u8> {
    let mut bytes = base.to_vec();
    for _ in 0..1 + rng.below(8) {
        let at = rng.below(bytes.len() + 1);
        match rng.below(4) {
            0 if !bytes.is_empty() => {
                let end = (at + 1 + rng.below(16)).min(bytes.len());
                bytes.drain(at.min(end)..end);
            }
            1 if !bytes.is_empty() => {
                let start = rng.below(bytes.len());
                let end = (start + 1 + rng.below(32)).min(bytes.len());
                let copy = bytes[start..end].to_vec();
                bytes.splice(at..at, copy);
            }
            2 => {
                let token = rng.pick(TOKENS).as_bytes().to_vec();
                bytes.splice(at..at, token);
            }
            _ if !bytes.is_empty() => {
                let i = at.min(bytes.len() - 1);
                bytes[i] ^= 1 << rng.below(8);
            }
            _ => {}
        }
    }
    bytes
}

fn random_bytes(rng: &mut Rng) -> Vec<u8> {
    (0..rng.below(256)).map(|_| rng.next() as u8).collect()
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(value) => value.parse().unwrap_or_else(|_| panic!("{name}={value:?} is not a number")),
        Err(_) => default,
    }
}

#[test]
fn y2_yaml_loader_fuzz_loop_finds_no_panic_or_disagreement() {
    let seconds: u64 = env_or("HOOKS_FUZZ_SECS", 3);
    let default_seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    let seed: u64 = env_or("HOOKS_FUZZ_SEED", default_seed) | 1;
    let fixtures: Vec<Vec<u8>> =
        ["valid.yaml", "mixed.yaml", "broken.yaml"].iter().map(|name| std::fs::read(fixture(name)).unwrap()).collect();

    let mut rng = Rng(seed);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut cases = 0u64;
    while Instant::now() < deadline {
        // Check the clock every 64 cases only.
        for _ in 0..64 {
            let input = match rng.below(10) {
                0..=3 => generated(&mut rng).into_bytes(),
                4..=5 => {
                    let doc = generated(&mut rng).into_bytes();
                    mutated(&mut rng, &doc)
                }
                6..=8 => {
                    let base = &fixtures[rng.below(fixtures.len())];
                    mutated(&mut rng, base)
                }
                _ => random_bytes(&mut rng),
            };
            cases += 1;
            if let Err(panic) = std::panic::catch_unwind(AssertUnwindSafe(|| check_loader(&input))) {
                eprintln!(
                    "HOOKS_FUZZ_SEED={seed}, case {cases}: the loader failed on {:?}",
                    String::from_utf8_lossy(&input)
                );
                std::panic::resume_unwind(panic);
            }
        }
    }
    eprintln!("yaml loader fuzz loop: {cases} inputs in {seconds} s from HOOKS_FUZZ_SEED={seed}");
    assert!(cases >= 64);
}

const SETTINGS_EVENTS: &[&str] = &[
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "SessionStart",
    "Stop",
    "SubagentStop",
    "Notification",
    "PreCompact",
    "SessionEnd",
    "preToolUse",
    "",
    "PreToolUse\\u0000",
];
const SETTINGS_MATCHERS: &[&str] = &[
    "\"Bash\"",
    "\"Edit|Write\"",
    "\"mcp__.*\"",
    "\"\"",
    "\"*\"",
    "\"(\"",
    "\"[z-a]\"",
    "\"a{99999}\"",
    "null",
    "7",
    "[\"Bash\"]",
    "\"^Read$\"",
];
const SETTINGS_TYPES: &[&str] = &["\"command\"", "\"prompt\"", "\"http\"", "\"Command\"", "7", "null", "[]"];
const SETTINGS_VALUES: &[&str] = &[
    "\"./guard.sh\"",
    "\"\"",
    "\"  \"",
    "\"echo '{}'\"",
    "30",
    "0",
    "-1",
    "1e999",
    "0.001",
    "1e300",
    "true",
    "null",
    "\"block\"",
    "\"continue\"",
    "{}",
];
const SETTINGS_FIELDS: &[&str] = &["command", "timeout", "onFailure", "statusMessage", "tiemout", "async"];

/// A settings document put together from plausible and implausible pieces.
fn generated_settings(rng: &mut Rng) -> String {
    let mut events = Vec::new();
    for _ in 0..rng.below(4) {
        let mut groups = Vec::new();
        for _ in 0..rng.below(3) {
            let mut hooks = Vec::new();
            for _ in 0..rng.below(3) {
                let mut fields = Vec::new();
                if !rng.chance(10) {
                    fields.push(format!("\"type\": {}", rng.pick(SETTINGS_TYPES)));
                }
                for _ in 0..rng.below(4) {
                    fields.push(format!("\"{}\": {}", rng.pick(SETTINGS_FIELDS), rng.pick(SETTINGS_VALUES)));
                }
                hooks.push(format!("{{{}}}", fields.join(", ")));
            }
            let mut group = vec![format!("\"hooks\": [{}]", hooks.join(", "))];
            if rng.chance(60) {
                group.push(format!("\"matcher\": {}", rng.pick(SETTINGS_MATCHERS)));
            }
            if rng.chance(5) {
                group.push("\"comment\": 1".to_owned());
            }
            groups.push(format!("{{{}}}", group.join(", ")));
        }
        let body = if rng.chance(5) { "{}".to_owned() } else { format!("[{}]", groups.join(", ")) };
        events.push(format!("\"{}\": {body}", rng.pick(SETTINGS_EVENTS)));
    }
    let hooks = format!("{{{}}}", events.join(", "));
    match rng.below(10) {
        0 => format!("{{\"permissions\": {{}}, \"hooks\": {hooks}, \"env\": {{\"A\": \"b\"}}}}"),
        1 => format!("{{\"hooks\": {hooks}, \"hooks\": {{}}}}"),
        2 => hooks,
        _ => format!("{{\"hooks\": {hooks}}}"),
    }
}

#[test]
fn k1_settings_loader_fuzz_loop_finds_no_panic_or_disagreement() {
    let seconds: u64 = env_or("HOOKS_FUZZ_SECS", 3);
    let default_seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    let seed: u64 = env_or("HOOKS_FUZZ_SEED", default_seed) | 1;
    let mut rng = Rng(seed);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut cases = 0u64;
    while Instant::now() < deadline {
        for _ in 0..64 {
            let input = match rng.below(10) {
                0..=4 => generated_settings(&mut rng).into_bytes(),
                5..=8 => {
                    let doc = generated_settings(&mut rng).into_bytes();
                    mutated(&mut rng, &doc)
                }
                _ => random_bytes(&mut rng),
            };
            cases += 1;
            if let Err(panic) = std::panic::catch_unwind(AssertUnwindSafe(|| check_settings_loader(&input))) {
                eprintln!(
                    "HOOKS_FUZZ_SEED={seed}, case {cases}: the settings loader failed on {:?}",
                    String::from_utf8_lossy(&input)
                );
                std::panic::resume_unwind(panic);
            }
        }
    }
    eprintln!("settings loader fuzz loop: {cases} inputs in {seconds} s from HOOKS_FUZZ_SEED={seed}");
    assert!(cases >= 64);
}
