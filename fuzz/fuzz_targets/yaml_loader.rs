//! Feeds arbitrary bytes to every entry point of the declarative hooks YAML loader: none may
//! panic, and the loaders must agree on what a document holds. The invariants are shared with
//! the stable fuzz loop, `hooks-runtime/tests/it/declarative_fuzz.rs`.

#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../hooks-runtime/tests/declarative_support/loader_invariants.rs"]
mod loader_invariants;

fuzz_target!(|data: &[u8]| loader_invariants::check_loader(data));
