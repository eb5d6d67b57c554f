//! The keys of `#[hook(KIND, ...)]`, each spelled once (serde's `Symbol`): the parser matches
//! these constants, and the "did you mean" hint and the list of expected keys are built from
//! [`KEYS`].

pub(super) const ID: &str = "id";
pub(super) const TIMEOUT_MS: &str = "timeout_ms";
pub(super) const BLOCKING: &str = "blocking";
pub(super) const ON_FAILURE: &str = "on_failure";
pub(super) const CRATE: &str = "crate";

/// Every key, in the order the error lists them.
pub(super) const KEYS: &[&str] = &[ID, TIMEOUT_MS, BLOCKING, ON_FAILURE, CRATE];

/// The keys as the "expected one of" list shows them: `` `id`, `timeout_ms`, ... ``.
pub(super) fn expected_list() -> String {
    KEYS.iter().map(|key| format!("`{key}`")).collect::<Vec<_>>().join(", ")
}
