//! The hooks linked into the binary. Each `#[hook]` places a pointer to [`register_linked`] in
//! the binary's constructor section (`.init_array` on ELF, `__mod_init_func` on Mach-O,
//! `.CRT$XCU` on Windows), so every definition is registered before `main` runs: the technique
//! `inventory` uses, with one static per hook and no function or node of its own (the
//! registering function is generic and shared), which keeps each hook's expansion small.
//!
//! On a target without such a section (WebAssembly among them) nothing registers and
//! [`crate::Registry::linked`] is empty; dispatch never depends on it.

use std::sync::{Mutex, PoisonError};

use crate::def::{Hook, HookDef};

/// Every registered definition, in registration order. A lock rather than a lock-free list:
/// constructors run before `main`, one at a time, except in a library loaded at run time.
static LINKED: Mutex<Vec<&'static HookDef>> = Mutex::new(Vec::new());

/// Registers `T`'s definition. Not public API: `#[hook]` stores this function, instantiated for
/// its companion item, in the constructor section.
/// Each instantiation is one call, so the code compiled per hook stays that small.
#[doc(hidden)]
pub extern "C" fn register_linked<T: Hook>() {
    register(T::DEF);
}

#[inline(never)]
fn register(def: &'static HookDef) {
    // A poisoned lock only means another registration panicked (out of memory); the list
    // itself is still whole.
    LINKED.lock().unwrap_or_else(PoisonError::into_inner).push(def);
}

/// The definitions registered so far.
pub(crate) fn linked() -> Vec<&'static HookDef> {
    LINKED.lock().unwrap_or_else(PoisonError::into_inner).clone()
}
