//! Shared helpers of the workspace test suite, and the README's code as doctests.

/// The README's Rust examples compile and run as doctests, so the front door stays true.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
