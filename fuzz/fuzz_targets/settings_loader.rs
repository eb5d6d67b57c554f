//! Feeds arbitrary bytes to every entry point of the Claude Code-format settings loader: none
//! may panic, and the loaders must agree. The invariants are shared with the stable fuzz loop,
//! `hooks-runtime/tests/it/declarative_fuzz.rs`.

#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../hooks-runtime/tests/declarative_support/settings_invariants.rs"]
mod settings_invariants;

fuzz_target!(|data: &[u8]| settings_invariants::check_settings_loader(data));
