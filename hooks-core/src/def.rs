//! A hook's static definition: its id, kind, typed adapter and where it was written.

use crate::kind::{HookHandler, HookKind};
use crate::types::{OnFailure, PackageSignature};

/// Where a hook was written: its package (crate), module, file and line, as `#[hook]` records it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HookLocation {
    /// The crate that defines the hook: the spec's package namespace.
    pub package: PackageSignature,
    /// `module_path!()` at the definition.
    pub module_path: &'static str,
    /// `file!()` at the definition.
    pub file: &'static str,
    /// `line!()` at the definition.
    pub line: u32,
    /// The Rust function that implements the hook.
    pub function: &'static str,
}

impl std::fmt::Display for HookLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}::{} ({}:{})", self.module_path, self.function, self.file, self.line)
    }
}

/// A hook's static definition, produced by `#[hook]` and reached through the [`Hook`] trait of
/// its companion item. Its fields are read-only outside this crate: the adapter the runtime
/// calls is not public, so a definition is built only by `#[hook]`.
#[derive(Debug)]
pub struct HookDef {
    /// The hook's id (snake_case, unique).
    pub id: &'static str,
    /// The typed adapter; it also tells the kind and whether the hook is async.
    pub(crate) handler: HookHandler,
    /// Whether the function is `async fn`.
    pub is_async: bool,
    /// Whether the hook takes the value its chain transforms by value (`messages:
    /// Vec<HookMessage>`) rather than in place (`messages: &mut Vec<HookMessage>`). The adapter
    /// of such a hook moves the value out of the chain, so a hook that fails, times out or
    /// panics leaves nothing behind: dispatch keeps a snapshot of the value before each such
    /// hook and restores it (E7, all-or-nothing). An in-place hook needs no snapshot: it leaves
    /// the value as it left it. `false` for kinds that transform nothing.
    pub moves_value: bool,
    /// `blocking`: a sync hook that blocks its thread (file or network I/O, a lock). On a
    /// multi-threaded tokio runtime the runtime first hands the worker's other tasks to another
    /// thread (`tokio::task::block_in_place`), so the other threads keep making progress while it
    /// runs, and a run past its timeout counts as timed out. A plain sync hook runs in place and
    /// holds its worker: keep those short.
    pub blocking: bool,
    /// The per-hook timeout from `timeout_ms = N`, overriding the runtime's default.
    pub timeout_ms: Option<u64>,
    /// `on_failure = deny|allow`: what a `before_tool_call` hook that fails, times out or panics
    /// decides. Required for that kind, `None` for every other.
    pub on_failure: Option<OnFailure>,
    /// Where the hook was written.
    pub location: HookLocation,
}

impl HookDef {
    /// Whether `other` is this hook: the same id written at the same place (module and line),
    /// which a copy of the definition or a crate linked twice keeps. `const`, so that the
    /// macros' check of a list that names one hook twice runs at compile time.
    pub(crate) const fn is_same_hook(&self, other: &HookDef) -> bool {
        str_eq(self.id, other.id)
            && str_eq(self.location.module_path, other.location.module_path)
            && self.location.line == other.location.line
    }

    /// The hook's kind.
    pub const fn kind(&self) -> HookKind {
        self.handler.kind()
    }
}

/// Implemented by the companion item `#[hook]` emits beside the function, named by the hook's
/// id. `define_prompt!` and `define_agent!` reach a hook through it, by path.
///
/// ```
/// use hooks_runtime::prelude::*;
///
/// #[hook(filter_messages, id = "keep_last_two")]
/// fn keep_last_two(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
///     let skip = messages.len().saturating_sub(2);
///     messages.into_iter().skip(skip).collect()
/// }
///
/// let def = <keep_last_two as Hook>::DEF;
/// assert_eq!(def.id, "keep_last_two");
/// assert_eq!(def.kind(), HookKind::FilterMessages);
/// ```
pub trait Hook {
    /// The hook's definition.
    const DEF: &'static HookDef;
}

/// A `before_tool_call` hook, which `RuntimeBuilder::guard` takes as a runtime-wide guard.
/// `#[hook]` implements it for hooks of that kind, and only for them; it is not meant to be
/// implemented by hand.
#[diagnostic::on_unimplemented(
    message = "this cannot be a runtime-wide guard: it is not a `before_tool_call` hook",
    label = "not a `before_tool_call` hook",
    note = "`guard::<id>()` takes the id of a hook defined with `#[hook(before_tool_call, id = \"...\", on_failure = deny|allow)]`"
)]
pub trait GuardHook: Hook {}

/// The `inventory` entry of one linked hook: `#[hook]` submits one per hook, and
/// `Registry::linked` collects them.
#[derive(Debug)]
pub struct RegisteredHook(pub &'static HookDef);

inventory::collect!(RegisteredHook);

/// The first definition in `defs` that is the same hook as an earlier one, as `(earlier, later)`
/// indexes.
pub const fn first_repeat(defs: &[&HookDef]) -> Option<(usize, usize)> {
    let mut later = 1;
    while later < defs.len() {
        let mut earlier = 0;
        while earlier < later {
            if defs[earlier].is_same_hook(defs[later]) {
                return Some((earlier, later));
            }
            earlier += 1;
        }
        later += 1;
    }
    None
}

/// `a == b` where it must be `const`.
const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut index = 0;
    while index < a.len() {
        if a[index] != b[index] {
            return false;
        }
        index += 1;
    }
    true
}
