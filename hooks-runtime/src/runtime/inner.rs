//! What a built runtime shares with its threads: agents, models, tools, the store and the
//! settings. Threads hold it; [`Runtime`](super::Runtime) is the public handle over it, so the
//! thread modules depend on this and never on the handle.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use hooks_core::{AgentDef, ResolvedAgent};

use crate::dispatch::PlainTable;
use crate::model::Model;
use crate::store::MessageStore;
use crate::tool::{ToolAuthorizer, ToolCallListener};
use crate::user::UserScope;

/// One agent of the runtime: its definition, resolved table (with its plain chains, typed) and
/// tool-call listener.
pub(crate) struct AgentEntry {
    pub(crate) def: &'static AgentDef,
    pub(crate) resolved: ResolvedAgent,
    pub(crate) plain: PlainTable,
    pub(crate) listener: RwLock<Option<Arc<dyn ToolCallListener>>>,
}

impl AgentEntry {
    pub(crate) fn listener(&self) -> Option<Arc<dyn ToolCallListener>> {
        self.listener.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    pub(crate) fn set_listener(&self, listener: Option<Arc<dyn ToolCallListener>>) {
        *self.listener.write().unwrap_or_else(std::sync::PoisonError::into_inner) = listener;
    }
}

pub(crate) struct RuntimeInner {
    pub(crate) agents: HashMap<&'static str, Arc<AgentEntry>>,
    pub(crate) models: HashMap<String, Arc<dyn Model>>,
    pub(crate) tools: crate::tool::registry::ToolRegistry,
    pub(crate) store: Arc<dyn MessageStore>,
    pub(crate) hook_timeout: Duration,
    pub(crate) authorizer: Option<Arc<ToolAuthorizer>>,
    /// The runtime-wide guards, in the order they were added (G7).
    pub(crate) guards: Vec<Arc<dyn crate::governing::guard::ToolGuard>>,
    /// The tools' parameter schemas, compiled on first use (G5).
    pub(crate) schemas: crate::governing::schema::ToolSchemas,
    pub(crate) users: UserScope,
    pub(crate) repeated_tool_error_limit: u32,
    pub(crate) default_max_steps: u32,
    /// The size caps of every model response (`RuntimeBuilder::max_reply_bytes`, ...).
    pub(crate) max_reply_bytes: usize,
    pub(crate) max_tool_argument_bytes: usize,
    /// Whether spans carry contents, arguments and results (`RuntimeBuilder::trace_contents`).
    pub(crate) trace_contents: bool,
    /// Recovery of runs left unsettled by a process that stopped (`crate::thread::recovery`).
    pub(crate) recovery: super::recovery_state::RecoveryState,
    /// The live state of every thread a handle holds: one per thread (O1).
    pub(crate) live_threads: super::thread_links::LiveThreads,
    /// Hooks of a Claude Code-format settings file, for every thread (`thread::settings_hooks`).
    #[cfg(feature = "declarative")]
    pub(crate) settings: Option<crate::declarative::DeclarativeHookRegistry>,
}

impl RuntimeInner {
    /// The user's values as the user-scope hooks see them: read from the store, where every
    /// process keeps them. A failed read is logged, and the hooks see no values rather than
    /// not running.
    pub(crate) async fn user_values_for_hooks(&self, user_id: &str) -> hooks_core::ExtraFields {
        match self.store.user_values(user_id).await {
            Ok(values) => values.into_iter().map(|value| (value.key, value.value)).collect(),
            Err(error) => {
                tracing::error!(target: "hooks_runtime::user", user = %user_id, "user-scope hooks run without the user's values: {error}");
                hooks_core::ExtraFields::new()
            }
        }
    }
}
