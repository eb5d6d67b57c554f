//! Not public API. What the code `#[hook]` generates and the runtime use: hook adapters, the
//! linked-hook entries, resolved chains. It may change in any release.

pub use inventory;

pub use crate::compose::{ActiveContext, EnabledRelationships, ResolvedHook};
pub use crate::def::{RegisteredHook, first_repeat};
pub use crate::future::BoxedHookFuture;
pub use crate::kind::{Adapter, HookHandler, sync_adapter};
pub use crate::state::Sealed;

use crate::compose::ResolvedAgent;
use crate::def::{HookDef, HookLocation};
use crate::kind::HookKind;
use crate::types::{OnFailure, PackageSignature};

/// `HookDef::moves_value` in [`hook_def`]'s flags.
pub const MOVES_VALUE: u8 = 2;
/// `HookDef::blocking` in [`hook_def`]'s flags.
pub const BLOCKING: u8 = 4;
/// `on_failure = deny` in [`hook_def`]'s flags.
pub const ON_FAILURE_DENY: u8 = 8;
/// `on_failure = allow` in [`hook_def`]'s flags.
pub const ON_FAILURE_ALLOW: u8 = 16;

/// A hook's definition from what `#[hook]` knows. A function rather than a struct literal so
/// that each hook's expansion stays short: every path and field the macro emits costs compile
/// time in the user's crate. `timeout_ms` 0 is no timeout of its own (`#[hook]` rejects
/// `timeout_ms = 0`). Whether the hook is async is its adapter's form.
#[allow(clippy::too_many_arguments)]
pub const fn hook_def(
    id: &'static str,
    handler: HookHandler,
    flags: u8,
    timeout_ms: u64,
    package: (&'static str, &'static str),
    module_path: &'static str,
    file: &'static str,
    line: u32,
    function: &'static str,
) -> HookDef {
    HookDef {
        id,
        handler,
        is_async: handler.is_async(),
        moves_value: flags & MOVES_VALUE != 0,
        blocking: flags & BLOCKING != 0,
        timeout_ms: if timeout_ms == 0 { None } else { Some(timeout_ms) },
        on_failure: if flags & ON_FAILURE_DENY != 0 {
            Some(OnFailure::Deny)
        } else if flags & ON_FAILURE_ALLOW != 0 {
            Some(OnFailure::Allow)
        } else {
            None
        },
        location: HookLocation {
            package: PackageSignature::new_static(package.0, package.1),
            module_path,
            file,
            line,
            function,
        },
    }
}

/// Whether `kind`'s chain transforms one value in place and answers nothing else (every
/// transform kind but `before_tool_call`): the kinds the runtime's typed chains of plain sync
/// hooks and `#[hook]`'s in-place form cover, checked against this by their tests.
pub const fn transforms_in_place(kind: HookKind) -> bool {
    kind.transforms_in_place()
}

/// `kind`'s adapter signature as the kind table writes it (`fn(&'a UserState) -> ()`), what
/// the macros' table is checked against.
pub const fn adapter_signature(kind: HookKind) -> &'static str {
    kind.adapter_signature()
}

/// The adapter of `def`.
#[inline(always)]
pub const fn handler(def: &HookDef) -> HookHandler {
    def.handler
}

/// The chain of `kind` in `active`, every optional hook included (filter with
/// [`ResolvedHook::is_active`]).
#[inline]
pub fn chain(resolved: &ResolvedAgent, active: ActiveContext, kind: HookKind) -> &[ResolvedHook] {
    resolved.chain(active, kind)
}
