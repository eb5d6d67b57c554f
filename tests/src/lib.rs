//! Shared helpers of the workspace test suite, and the READMEs' code as doctests.

/// The README's Rust examples compile and run as doctests, so the front door stays true.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The example of `hooks-runtime`'s own README, which the registry shows, compiles and runs too.
#[doc = include_str!("../../hooks-runtime/README.md")]
#[cfg(doctest)]
pub struct RuntimeReadmeDoctests;
