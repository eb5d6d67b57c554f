//! The suites that define user-scope hooks, in a binary of their own: a user-scope hook runs in
//! every runtime of its binary without any reference (U1), so in the main binary these hooks
//! would run, and read user values, in every other suite's runtimes.

#[path = "../support_tools/mod.rs"]
mod support_tools;

mod conformance_user;
mod hook_unit_testing;
