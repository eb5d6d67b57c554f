//! Compile-time clauses (D1-D11): each case in `tests/ui/` is named after its clause, and its
//! `.stderr` was read and judged helpful before it was committed.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
}
