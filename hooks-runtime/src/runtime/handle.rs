//! [`Runtime`]: the public handle over a built runtime's shared state. Each method delegates to
//! the module that does the work (`thread` for threads, `user` for the user scope), which works
//! on [`RuntimeInner`] and never on the handle, so the dependencies run one way.

use std::fmt;
use std::sync::Arc;

use hooks_core::UserEvent;
use serde_json::Value;

use super::agent_handle::AgentHandle;
use super::user_sync;
use crate::remembered_approvals::RememberedApproval;
use crate::shared::runtime_inner::RuntimeInner;
use crate::store::{
    MessageStore, RememberedApprovalStore, StoreError, StoreErrorKind, UserChange, UserChangeKind, UserValue,
};
use crate::thread::{LiveThreads, RuntimeError, Thread, ThreadOptions, ThreadShared};

/// The runtime: owns agents, models, tools and the message store, and runs threads.
#[derive(Clone)]
pub struct Runtime {
    pub(crate) inner: Arc<RuntimeInner>,
    /// The live state of every thread a handle holds: one per thread (O1).
    pub(crate) live: Arc<LiveThreads<ThreadShared>>,
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut agents: Vec<&str> = self.inner.registries.agents.keys().copied().collect();
        agents.sort_unstable();
        f.debug_struct("Runtime").field("agents", &agents).finish_non_exhaustive()
    }
}

impl Runtime {
    /// The runtime's MCP servers, in the order they were added: each one's state, last error
    /// and tools as it last listed them (the inspector's MCP section).
    #[cfg(feature = "mcp")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
    pub fn mcp_servers(&self) -> Vec<crate::mcp::McpServerInfo> {
        self.inner.registries.tools.mcp.infos()
    }

    /// The names of the runtime's agents (those registered and the ones they compose), sorted.
    ///
    /// ```
    /// use hooks_runtime::prelude::*;
    /// use hooks_runtime::Runtime;
    /// use hooks_runtime::model::ScriptedModel;
    ///
    /// define_prompt! { name: helper_prompt, model: "m", prompt: "Help." }
    /// define_agent! { name: helper, side_a: { prompt: helper_prompt } }
    ///
    /// let runtime = Runtime::builder().agent::<helper>().model("m", ScriptedModel::new([])).build().unwrap();
    /// assert_eq!(runtime.agent_names(), ["helper"]);
    /// ```
    pub fn agent_names(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = self.inner.registries.agents.keys().copied().collect();
        names.sort_unstable();
        names
    }

    /// An agent of the runtime, to attach a tool-call listener to or to explain.
    pub fn agent(&self, name: &str) -> Option<AgentHandle> {
        self.inner.registries.agents.get(name).map(|entry| AgentHandle { entry: entry.clone() })
    }

    /// The message store.
    pub fn store(&self) -> &Arc<dyn MessageStore> {
        &self.inner.store
    }

    /// Creates a thread of agent `agent` and runs its `after_thread_created` hooks (at rest).
    /// On a store that several processes share, a thread created for a user is announced to
    /// the other runtimes' [`subscribe_user_changes`](Runtime::subscribe_user_changes) followers.
    pub async fn create_thread(&self, agent: &str, options: ThreadOptions) -> Result<Thread, RuntimeError> {
        crate::thread::recovery_on_first_use(&self.inner, &self.live).await;
        let user_id = options.user_id.clone();
        let thread = Thread::create(&self.inner, &self.live, agent, options).await?;
        if let Some(user_id) = user_id {
            let kind = UserChangeKind::ThreadCreated {
                thread_id: thread.id().to_owned(),
                agent: thread.agent_name().to_owned(),
            };
            user_sync::publish_change(&self.inner, &user_id, kind).await;
        }
        self.begin_session(&thread);
        Ok(thread)
    }

    /// [`create_thread`](Self::create_thread) for the agent `A`, the type `define_agent!`
    /// emits: the agent is named by its type, so a typo is a compile error rather than an
    /// [`UnknownAgent`](RuntimeError::UnknownAgent) at run time (which this still answers when
    /// `A` was not added to the runtime).
    ///
    /// ```
    /// use hooks_runtime::prelude::*;
    /// use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
    /// use hooks_runtime::{Runtime, ThreadOptions};
    ///
    /// define_prompt! { name: typed_prompt, model: "m", prompt: "Help." }
    /// define_agent! { name: typed_agent, side_a: { prompt: typed_prompt, stop_on_response: true } }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let model = ScriptedModel::new([ScriptedResponse::text("hi")]);
    /// let runtime = Runtime::builder().agent::<typed_agent>().model("m", model).build().unwrap();
    /// let thread = runtime.create_thread_for::<typed_agent>(ThreadOptions::default()).await.unwrap();
    /// assert_eq!(thread.agent_name(), "typed_agent");
    /// # });
    /// ```
    pub async fn create_thread_for<A: hooks_core::Agent>(
        &self,
        options: ThreadOptions,
    ) -> Result<Thread, RuntimeError> {
        self.create_thread(A::DEF.name, options).await
    }

    /// Reopens a stored thread: its history is the store's, its agent must be in the runtime.
    pub async fn open_thread(&self, thread_id: &str) -> Result<Thread, RuntimeError> {
        crate::thread::recovery_on_first_use(&self.inner, &self.live).await;
        let thread = Thread::open(&self.inner, &self.live, thread_id).await?;
        self.begin_session(&thread);
        Ok(thread)
    }

    /// K11: a top-level thread created or opened here begins a session, which `SessionEnd`
    /// hooks of a settings file learn the end of ([`end_sessions`](Self::end_sessions)).
    fn begin_session(&self, thread: &Thread) {
        #[cfg(feature = "declarative")]
        {
            if let Some(registry) = &self.inner.registries.settings
                && !thread.shared.is_subagent()
            {
                crate::declarative::begin_session(registry.hooks(), registry.state(), thread.id());
            }
        }
        #[cfg(not(feature = "declarative"))]
        let _ = thread;
    }

    /// Ends the session of every top-level thread this runtime created or opened since its
    /// session last ended, and runs the settings file's `SessionEnd` hooks for each
    /// ([`RuntimeBuilder::settings_hooks`](crate::RuntimeBuilder::settings_hooks)), all at once, each within its timeout; returns how
    /// many sessions ended (sessions are kept only while the file has `SessionEnd` hooks, so
    /// without any it returns 0). Call it before the application exits (with
    /// [`SessionEndReason::Other`](crate::declarative::SessionEndReason::Other) for a shutdown):
    /// a runtime dropped with sessions open logs a WARN naming them, since their hooks never ran.
    ///
    /// The hooks get Claude Code's `SessionEnd` input (`session_id` the thread id,
    /// `transcript_path`, `cwd`, `hook_event_name`, `reason`) and observe only: their answers
    /// decide nothing. Threads keep working; one opened again begins a new session. A server
    /// evicting an idle thread ends nothing.
    ///
    /// ```
    /// use hooks_runtime::Runtime;
    /// use hooks_runtime::declarative::{SessionEndReason, SettingsHooks};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let hooks = SettingsHooks::from_json(
    ///     r#"{"hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": "cat > /dev/null"}]}]}}"#,
    /// );
    /// let runtime = Runtime::builder().settings_hooks(hooks).build().unwrap();
    /// assert_eq!(runtime.end_sessions(SessionEndReason::Other).await, 0); // no thread was used
    /// # });
    /// ```
    #[cfg(feature = "declarative")]
    #[cfg_attr(docsrs, doc(cfg(feature = "declarative")))]
    pub async fn end_sessions(&self, reason: crate::declarative::SessionEndReason) -> usize {
        let Some(registry) = &self.inner.registries.settings else { return 0 };
        let (hooks, state) = (registry.hooks(), registry.state());
        let threads = state.end_sessions();
        let ended = threads.len();
        crate::declarative::end_sessions(hooks, state, self.inner.store.as_ref(), threads, reason).await;
        ended
    }

    /// Ends the runtime's work before the application exits, and returns how many sessions
    /// ended. With settings hooks, it ends every open session as
    /// [`end_sessions`](Self::end_sessions) does (with
    /// [`SessionEndReason::Other`](crate::declarative::SessionEndReason::Other)), waiting for
    /// their `SessionEnd` hooks, then removes the folder of the threads' transcripts
    /// (`transcript_path`) with its files, which is otherwise removed only when the last clone
    /// of the runtime is dropped. With MCP servers, it then closes each server's client and
    /// waits until it has ended (an HTTP session closed, a stdio server's pipes shut): a runtime
    /// only dropped leaves that to tasks that the end of the tokio runtime may cut short. The
    /// runtime stays usable: a hook that reads a transcript afterwards gets a new folder, and
    /// the next MCP call starts its server again.
    ///
    /// ```
    /// use hooks_runtime::Runtime;
    /// use hooks_runtime::declarative::SettingsHooks;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let runtime = Runtime::builder().settings_hooks(SettingsHooks::from_json(r#"{"hooks": {}}"#)).build().unwrap();
    /// assert_eq!(runtime.shutdown().await, 0); // no thread was used
    /// # });
    /// ```
    #[cfg(any(feature = "declarative", feature = "mcp"))]
    #[cfg_attr(docsrs, doc(cfg(any(feature = "declarative", feature = "mcp"))))]
    pub async fn shutdown(&self) -> usize {
        #[cfg(feature = "declarative")]
        let ended = {
            let ended = self.end_sessions(crate::declarative::SessionEndReason::Other).await;
            if let Some(registry) = &self.inner.registries.settings {
                registry.state().remove_transcripts();
            }
            ended
        };
        #[cfg(not(feature = "declarative"))]
        let ended = 0;
        #[cfg(feature = "mcp")]
        self.inner.registries.tools.mcp.close().await;
        ended
    }

    /// Ends the session of one thread, as [`end_sessions`](Self::end_sessions) ends all:
    /// `false` when it had none open (never created or opened here, a subagent's child thread,
    /// or already ended), and then no hook runs.
    ///
    /// ```
    /// use hooks_runtime::Runtime;
    /// use hooks_runtime::declarative::{SessionEndReason, SettingsHooks};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let runtime = Runtime::builder().settings_hooks(SettingsHooks::from_json(r#"{"hooks": {}}"#)).build().unwrap();
    /// assert!(!runtime.end_session("thread-1", SessionEndReason::Clear).await);
    /// # });
    /// ```
    #[cfg(feature = "declarative")]
    #[cfg_attr(docsrs, doc(cfg(feature = "declarative")))]
    pub async fn end_session(&self, thread_id: &str, reason: crate::declarative::SessionEndReason) -> bool {
        let Some(registry) = &self.inner.registries.settings else { return false };
        let (hooks, state) = (registry.hooks(), registry.state());
        if !state.end_session(thread_id) {
            return false;
        }
        crate::declarative::end_sessions(hooks, state, self.inner.store.as_ref(), vec![thread_id.to_owned()], reason)
            .await;
        true
    }

    /// Settles the runs that a stopped process left unsettled, and runs the inputs it had
    /// accepted ([`Thread::queue_message`]), now. The runtime does this by itself once, at its
    /// first [`create_thread`](Self::create_thread) or [`open_thread`](Self::open_thread); on a
    /// store that several processes share (PostgreSQL) also every
    /// [`recovery_sweep_interval`](crate::store::RunOwnership::recovery_sweep_interval). Call it
    /// at start-up to recover before the first request (a `hooks_server` router calls it at its
    /// own first request); on a shared store it also starts this runtime's sweeper.
    ///
    /// A thread left `running` becomes `failed (owner_lost)` ([`FailReason::OwnerLost`](crate::store::FailReason::OwnerLost)),
    /// stored and sent as a status event; every stored tool call without a result gets an error
    /// result, so the history stays one a provider accepts; a reply that was streaming was never
    /// stored. Then each input still in the thread's inbox runs, one run each, in the background
    /// ([`Recovery::wait_for_inboxes`](crate::Recovery::wait_for_inboxes) waits for them).
    ///
    /// On SQLite, which has no owner per thread, recovery assumes that this process is the only
    /// one running the file's threads: call it (or let the first use call it) before another
    /// process starts running them.
    ///
    /// ```
    /// use hooks_runtime::prelude::*;
    /// use hooks_runtime::model::ScriptedModel;
    /// use hooks_runtime::Runtime;
    ///
    /// define_prompt! { name: recover_prompt, model: "m", prompt: "Help." }
    /// define_agent! { name: recover_agent, side_a: { prompt: recover_prompt } }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let runtime = Runtime::builder().agent::<recover_agent>().model("m", ScriptedModel::new([])).build().unwrap();
    /// let recovery = runtime.recover().await.unwrap();
    /// assert!(recovery.settled.is_empty() && recovery.resumed.is_empty());
    /// # });
    /// ```
    pub async fn recover(&self) -> Result<crate::thread::Recovery, RuntimeError> {
        let recovery = crate::thread::recover(&self.inner, &self.live).await;
        crate::thread::start_sweeping(&self.inner, &self.live);
        recovery
    }

    /// A client connected to the user's event stream: runs every `user_client_attached` hook.
    pub async fn attach_client(&self, user_id: &str, client_id: &str) {
        // Scale-out: from the first client on, this runtime follows other processes' changes.
        user_sync::listen(&self.inner).await;
        let users = &self.inner.users;
        let values = self.hook_values(user_id, &UserEvent::ClientAttached { client_id: client_id.to_owned() }).await;
        users.attach_client(user_id, client_id, values, self.inner.limits.hook_timeout).await;
    }

    /// A client disconnected: runs every `user_client_detached` hook.
    pub async fn detach_client(&self, user_id: &str, client_id: &str) {
        let users = &self.inner.users;
        let values = self.hook_values(user_id, &UserEvent::ClientDetached { client_id: client_id.to_owned() }).await;
        users.detach_client(user_id, client_id, values, self.inner.limits.hook_timeout).await;
    }

    /// Sets (or, with `None`, removes) a user value and returns the value it replaced; then
    /// runs every `user_value_changed` hook, once.
    ///
    /// The value is kept in the store ([`MessageStore::set_user_value`]), which reads the old
    /// value and writes the new one in one atomic step: it survives a restart, and every
    /// process on a shared store reads it. On a store that carries events between processes
    /// (`PostgresStore`) the change also reaches every other runtime, which runs the hooks once
    /// if a client of the user is attached to it, and hands it to its
    /// [`subscribe_user_changes`](Runtime::subscribe_user_changes) followers.
    ///
    /// ```
    /// use hooks_runtime::Runtime;
    /// use serde_json::json;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let runtime = Runtime::builder().build().unwrap();
    /// assert_eq!(runtime.set_user_value("alice", "theme", Some(json!("dark"))).await?, None);
    /// assert_eq!(runtime.set_user_value("alice", "theme", Some(json!("light"))).await?, Some(json!("dark")));
    /// assert_eq!(runtime.user_value("alice", "theme").await?, Some(json!("light")));
    /// # Ok::<(), hooks_runtime::RuntimeError>(())
    /// # }).unwrap();
    /// ```
    pub async fn set_user_value(
        &self,
        user_id: &str,
        key: &str,
        value: Option<Value>,
    ) -> Result<Option<Value>, RuntimeError> {
        let old = self.inner.store.set_user_value(user_id, key, value.as_ref()).await.map_err(RuntimeError::Store)?;
        let event = UserEvent::ValueChanged { key: key.to_owned(), old: old.clone(), new: value };
        user_sync::publish(&self.inner, user_id, &event).await;
        let values = self.hook_values(user_id, &event).await;
        self.inner.users.change_value(user_id, event, values, self.inner.limits.hook_timeout).await;
        Ok(old)
    }

    /// A user value, as the store has it.
    pub async fn user_value(&self, user_id: &str, key: &str) -> Result<Option<Value>, RuntimeError> {
        let values = self.user_values(user_id).await?;
        Ok(values.into_iter().find(|value| value.key == key).map(|value| value.value))
    }

    /// Every value of the user, ordered by key, with the time each was set.
    pub async fn user_values(&self, user_id: &str) -> Result<Vec<UserValue>, RuntimeError> {
        self.inner.store.user_values(user_id).await.map_err(RuntimeError::Store)
    }

    /// Every remembered approval in the store (A9), oldest first: those made through this
    /// runtime and through any other on the same store, also before a restart.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let runtime = hooks_runtime::Runtime::builder().build().unwrap();
    /// assert!(runtime.remembered_approvals().await.unwrap().is_empty());
    /// # });
    /// ```
    pub async fn remembered_approvals(&self) -> Result<Vec<RememberedApproval>, RuntimeError> {
        let store = remembered_store(&self.inner, "remembered_approvals")?;
        Ok(store.list_remembered_approvals(None).await?)
    }

    /// The remembered approvals user `user_id` owns (made on that user's threads), oldest first.
    ///
    /// ```
    /// use hooks_runtime::approvals::{ApprovalMatcher, RememberScope, RememberedApproval};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let runtime = hooks_runtime::Runtime::builder().build().unwrap();
    /// let exact = ApprovalMatcher::Arguments { sha256: "0".repeat(64) };
    /// let approval = RememberedApproval::new("ra_1", RememberScope::User, "pay", exact).for_thread("t1", Some("alice"));
    /// let kept = runtime.store().remembered_approvals().expect("the in-memory store keeps them");
    /// kept.remember_approval(&approval).await.unwrap();
    /// assert_eq!(runtime.remembered_approvals_of_user("alice").await.unwrap(), [approval]);
    /// assert!(runtime.remembered_approvals_of_user("bob").await.unwrap().is_empty());
    /// // Bob cannot revoke Alice's; Alice can.
    /// assert!(!runtime.revoke_remembered_approval_of_user("bob", "ra_1").await.unwrap());
    /// assert!(runtime.revoke_remembered_approval_of_user("alice", "ra_1").await.unwrap());
    /// # });
    /// ```
    pub async fn remembered_approvals_of_user(&self, user_id: &str) -> Result<Vec<RememberedApproval>, RuntimeError> {
        let all = self.remembered_approvals().await?;
        Ok(all.into_iter().filter(|approval| approval.user_id.as_deref() == Some(user_id)).collect())
    }

    /// Revokes remembered approval `id`: later asks it would have answered wait for a person
    /// again, in every runtime on the store. `false` when there is none of that id.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let runtime = hooks_runtime::Runtime::builder().build().unwrap();
    /// assert!(!runtime.revoke_remembered_approval("ra_unknown").await.unwrap());
    /// # });
    /// ```
    pub async fn revoke_remembered_approval(&self, id: &str) -> Result<bool, RuntimeError> {
        let store = remembered_store(&self.inner, "revoke_remembered_approval")?;
        Ok(store.revoke_remembered_approval(id).await?)
    }

    /// Revokes remembered approval `id` if user `user_id` owns it: `false` when there is none of
    /// that id or another user owns it (the two are not told apart, so ids do not leak).
    pub async fn revoke_remembered_approval_of_user(&self, user_id: &str, id: &str) -> Result<bool, RuntimeError> {
        let owned = self.remembered_approvals_of_user(user_id).await?.iter().any(|approval| approval.id == id);
        if !owned {
            return Ok(false);
        }
        self.revoke_remembered_approval(id).await
    }

    /// Follows what other runtimes on a shared store do for users: their user value changes
    /// and the threads they create for a user, from when this runtime listens (its first
    /// [`attach_client`](Runtime::attach_client)) on. This runtime's own changes are not in it;
    /// on a store of one process nothing ever is. A follower that falls more than 1,024 changes
    /// behind is told by [`RecvError::Lagged`](tokio::sync::broadcast::error::RecvError::Lagged).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let runtime = hooks_runtime::Runtime::builder().build().unwrap();
    /// let mut changes = runtime.subscribe_user_changes();
    /// assert!(changes.try_recv().is_err(), "one process: nothing from others");
    /// # });
    /// ```
    pub fn subscribe_user_changes(&self) -> tokio::sync::broadcast::Receiver<UserChange> {
        self.inner.users.sync.remote.subscribe()
    }

    /// The user's values for the hooks of `event`; none are read when no such hook is linked.
    async fn hook_values(&self, user_id: &str, event: &UserEvent) -> hooks_core::ExtraFields {
        if self.inner.users.has_hooks(event) {
            self.inner.user_values_for_hooks(user_id).await
        } else {
            hooks_core::ExtraFields::new()
        }
    }
}

/// The store's remembered approvals, or the error `op` gives on a store that keeps none.
fn remembered_store<'a>(inner: &'a RuntimeInner, op: &str) -> Result<&'a dyn RememberedApprovalStore, RuntimeError> {
    inner.store.remembered_approvals().ok_or_else(|| {
        RuntimeError::Store(StoreError::new(
            StoreErrorKind::Unsupported,
            format!(
                "{op}: this store keeps no remembered approvals; implement RememberedApprovalStore and return it from \
                 MessageStore::remembered_approvals"
            ),
        ))
    })
}
