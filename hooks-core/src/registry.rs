//! The registry of every hook linked into the binary, and its start-up verification.

use crate::def::HookDef;
use crate::kind::HookKind;

/// Every hook linked into the binary: id, kind and location. `#[hook]` submits each to `inventory`; it serves
/// discovery, user-scope dispatch and the start-up check, never a thread hook call.
///
/// ```
/// use hooks_runtime::prelude::*;
///
/// #[hook(after_create_message, id = "count_messages")]
/// fn count(_state: &ThreadState, _message: &MessageRecord) {}
///
/// let registry = Registry::linked();
/// let def = registry.get("count_messages").unwrap();
/// assert_eq!(def.kind(), HookKind::AfterCreateMessage);
/// registry.verify().unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct Registry {
    hooks: Vec<&'static HookDef>,
}

impl Registry {
    /// The hooks of every crate linked into this binary, sorted by id then location.
    pub fn linked() -> Self {
        Self::from_defs(inventory::iter::<crate::def::RegisteredHook>.into_iter().map(|registered| registered.0))
    }

    /// A registry of the given definitions (tests, tools).
    pub fn from_defs(defs: impl IntoIterator<Item = &'static HookDef>) -> Self {
        let mut hooks: Vec<&'static HookDef> = defs.into_iter().collect();
        hooks.sort_by(|a, b| {
            (a.id, &a.location.package.name, a.location.module_path, a.location.line).cmp(&(
                b.id,
                &b.location.package.name,
                b.location.module_path,
                b.location.line,
            ))
        });
        Registry { hooks }
    }

    /// Every hook.
    pub fn hooks(&self) -> &[&'static HookDef] {
        &self.hooks
    }

    /// The first hook with this id (ids are unique once [`Registry::verify`] passed).
    pub fn get(&self, id: &str) -> Option<&'static HookDef> {
        self.hooks.iter().copied().find(|def| def.id == id)
    }

    /// The hooks of one kind.
    pub fn of_kind(&self, kind: HookKind) -> impl Iterator<Item = &'static HookDef> + '_ {
        self.hooks.iter().copied().filter(move |def| def.kind() == kind)
    }

    /// Fails closed when two linked hooks share an id, naming both locations. Within one crate
    /// the compiler already rejects this; across crates only this check can.
    pub fn verify(&self) -> Result<(), RegistryError> {
        let duplicates: Vec<DuplicateHookId> = self
            .hooks
            .windows(2)
            .filter(|pair| pair[0].id == pair[1].id)
            .map(|pair| DuplicateHookId { first: pair[0], second: pair[1] })
            .collect();
        if duplicates.is_empty() { Ok(()) } else { Err(RegistryError { duplicates }) }
    }
}

/// Two linked hooks with one id.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DuplicateHookId {
    /// One definition.
    pub first: &'static HookDef,
    /// The other.
    pub second: &'static HookDef,
}

/// Why [`Registry::verify`] failed: every duplicated id with both of its locations.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{}", render_duplicates(duplicates))]
#[non_exhaustive]
pub struct RegistryError {
    /// The duplicated ids.
    pub duplicates: Vec<DuplicateHookId>,
}

/// Every duplicate in a sentence of its own, one per line.
fn render_duplicates(duplicates: &[DuplicateHookId]) -> String {
    duplicates
        .iter()
        .map(|DuplicateHookId { first: a, second: b }| {
            format!(
                "hook id `{}` is defined twice: in crate `{}` at {} and in crate `{}` at {}; \
                 hook ids must be unique across every crate linked into the binary, rename one",
                a.id, a.location.package.name, a.location, b.location.package.name, b.location
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}
