//! One agent of a runtime as its threads use it: the definition, its resolved table (with the
//! plain chains, typed) and the listener its tool calls report to.

use std::sync::{Arc, PoisonError, RwLock};

use hooks_core::{AgentDef, ResolvedAgent};

use crate::dispatch::PlainTable;
use crate::tool::ToolCallListener;

/// One agent of the runtime.
pub(crate) struct AgentEntry {
    pub(crate) def: &'static AgentDef,
    pub(crate) resolved: ResolvedAgent,
    pub(crate) plain: PlainTable,
    pub(crate) listener: RwLock<Option<Arc<dyn ToolCallListener>>>,
}

impl AgentEntry {
    pub(crate) fn listener(&self) -> Option<Arc<dyn ToolCallListener>> {
        self.listener.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    pub(crate) fn set_listener(&self, listener: Option<Arc<dyn ToolCallListener>>) {
        *self.listener.write().unwrap_or_else(PoisonError::into_inner) = listener;
    }
}
