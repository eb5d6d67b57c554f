//! The runtime: agents, models, tools and a message store, verified and resolved at start-up.
//!
//! Every inherent method of [`Runtime`] is here; each delegates to the module that does the
//! work (`thread` for threads, `user` for the user scope), which works on [`RuntimeInner`] and
//! never on the handle, so the dependencies run one way.

pub(crate) mod inner;
pub(crate) mod recovery_state;
pub(crate) mod thread_links;
mod user_sync;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use hooks_core::{
    AgentDef, HookToolCall, Participant, Registry, RegistryError, ResolutionError, ResolvedAgent, ThreadState,
    ToolDecision, UserEvent,
};
use serde_json::Value;

use self::inner::{AgentEntry, RuntimeInner};
use crate::governing::guard::{HookGuard, ToolGuard};
use crate::governing::schema::ToolSchemas;
use crate::model::Model;
use crate::store::{InMemoryStore, MessageStore, UserChange, UserChangeKind, UserValue};
use crate::thread::{RuntimeError, Thread, ThreadOptions};
use crate::tool::Tool;
use crate::tool::{ToolAuthorizer, ToolCallListener, ToolCallListenerTarget};
use crate::user::UserScope;

/// The default timeout of a hook without `timeout_ms`.
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a runtime could not be built. It fails closed: no thread runs on a partial setup.
///
/// Its `Display` names what is wrong and how to fix it; its `Debug` is the same sentence, so a
/// `main` that returns it with `?` prints the sentence rather than a struct.
///
/// ```
/// use hooks_runtime::prelude::*;
/// use hooks_runtime::Runtime;
///
/// define_prompt! { name: greeter_prompt, model: "gpt", prompt: "Greet the user." }
/// define_agent! { name: greeter, side_a: { prompt: greeter_prompt } }
///
/// let error = Runtime::builder().agent::<greeter>().build().unwrap_err();
/// assert_eq!(
///     error.to_string(),
///     "prompt `greeter_prompt` uses model `gpt`, which was not added to the runtime; add it with `.model(\"gpt\", ...)`; no models were added"
/// );
/// assert_eq!(format!("{error:?}"), error.to_string());
/// ```
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Two linked hooks share an id (D3).
    #[error("hook registry: {0}")]
    Registry(#[source] RegistryError),
    /// An agent's hooks could not be resolved (S8).
    #[error("hook resolution: {0}")]
    Resolution(#[source] ResolutionError),
    /// A prompt names a model that was not added.
    #[error(
        "prompt `{prompt}` uses model `{model}`, which was not added to the runtime; add it with `.model(\"{model}\", ...)`; {}",
        registered_phrase("models", added)
    )]
    UnknownModel {
        /// The prompt.
        prompt: &'static str,
        /// The model name.
        model: &'static str,
        /// The names of the models that were added, sorted.
        added: Vec<String>,
    },
    /// Two agents with one name.
    #[error(
        "two different agents are named `{0}`; rename one (`define_agent! {{ name: .. }}`): the runtime finds agents by name"
    )]
    DuplicateAgent(&'static str),
    /// A prompt lists a tool that is neither a tool nor an agent of the runtime.
    #[error(
        "prompt `{prompt}` lists the tool `{tool}`, which is neither a tool nor an agent of the runtime; add it with `.tool(...)` or `.agent::<{tool}>()`; {}",
        registered_phrase("tools", added)
    )]
    UnknownTool {
        /// The prompt.
        prompt: &'static str,
        /// The tool name.
        tool: &'static str,
        /// The names of the tools that were added, sorted (agents are offered by name too).
        added: Vec<String>,
    },
    /// An MCP server's name is taken or cannot be part of `mcp__<server>__<tool>` (P1).
    #[error("the MCP server name `{name}` cannot be used: {problem}")]
    McpServerName {
        /// The name.
        name: String,
        /// Why not.
        problem: String,
    },
    /// A prompt lists an MCP tool (or wildcard) of a server that was not added (P1).
    #[error(
        "prompt `{prompt}` lists the tool `{tool}` of the MCP server `{server}`, which was not added to the runtime; add it with `.mcp_server(\"{server}\", ...)`; {}",
        registered_phrase("MCP servers", added)
    )]
    UnknownMcpServer {
        /// The prompt.
        prompt: &'static str,
        /// The tool entry as the prompt lists it.
        tool: &'static str,
        /// The server's part of it.
        server: String,
        /// The names of the MCP servers that were added.
        added: Vec<String>,
    },
}

/// "the models added are: `a`, `b`", or that there are none: what an unknown name could have been.
fn registered_phrase(what: &str, added: &[String]) -> String {
    if added.is_empty() {
        return format!("no {what} were added");
    }
    let names: Vec<String> = added.iter().map(|name| format!("`{name}`")).collect();
    format!("the {what} added are: {}", names.join(", "))
}

/// The keys of a registry, sorted, for an error that lists them.
fn sorted_names<V>(registry: &HashMap<String, V>) -> Vec<String> {
    let mut names: Vec<String> = registry.keys().cloned().collect();
    names.sort_unstable();
    names
}

impl fmt::Debug for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Builds a [`Runtime`].
///
/// ```
/// use hooks_runtime::prelude::*;
/// use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
/// use hooks_runtime::Runtime;
///
/// define_prompt! { name: greeter_prompt, model: "scripted", prompt: "Greet the user." }
/// define_agent! { name: greeter, side_a: { prompt: greeter_prompt, stop_on_response: true } }
///
/// let runtime = Runtime::builder()
///     .agent::<greeter>()
///     .model("scripted", ScriptedModel::new([ScriptedResponse::text("Hello!")]))
///     .build()
///     .expect("hooks verified and resolved");
/// # let _ = runtime;
/// ```
pub struct RuntimeBuilder {
    agents: Vec<&'static AgentDef>,
    models: HashMap<String, Arc<dyn Model>>,
    tools: HashMap<String, Arc<dyn Tool>>,
    store: Option<Arc<dyn MessageStore>>,
    hook_timeout: Duration,
    authorizer: Option<Arc<ToolAuthorizer>>,
    guards: Vec<Arc<dyn ToolGuard>>,
    registry: Option<Registry>,
    repeated_tool_error_limit: u32,
    default_max_steps: u32,
    max_reply_bytes: usize,
    max_tool_argument_bytes: usize,
    recovery_policy: crate::RecoveryPolicy,
    trace_contents: bool,
    #[cfg(feature = "declarative")]
    settings: Option<crate::declarative::DeclarativeHookRegistry>,
    #[cfg(feature = "mcp")]
    mcp_servers: Vec<(String, crate::mcp::McpTransport)>,
}

impl RuntimeBuilder {
    /// Adds an agent, and through its relationships every subagent it composes.
    pub fn agent<A: hooks_core::Agent>(self) -> Self {
        self.agent_def(A::DEF)
    }

    /// Adds an agent by definition.
    pub fn agent_def(mut self, def: &'static AgentDef) -> Self {
        self.agents.push(def);
        self
    }

    /// Adds a model under the name prompts use.
    pub fn model(mut self, name: impl Into<String>, model: impl Model) -> Self {
        self.models.insert(name.into(), Arc::new(model));
        self
    }

    /// Adds a shared model under the name prompts use.
    pub fn model_arc(mut self, name: impl Into<String>, model: Arc<dyn Model>) -> Self {
        self.models.insert(name.into(), model);
        self
    }

    /// Adds a tool.
    pub fn tool(mut self, tool: impl Tool) -> Self {
        self.tools.insert(tool.name().to_owned(), Arc::new(tool));
        self
    }

    /// Adds an MCP server named `name`, reached by `transport` (a child process over stdio, or
    /// streamable HTTP; feature `mcp`). Each tool it lists becomes a tool named
    /// `mcp__<name>__<tool>`, with the server's description and input schema, governed like
    /// any tool (hooks, guards, settings-file matchers, approvals). A prompt offers them by
    /// name or all at once with `"mcp__<name>__*"`; see [`crate::mcp`] for why both, and for
    /// how failures, timeouts, aborts and progress are handled.
    ///
    /// The server is started at its first need, not here: `build` stays synchronous and a
    /// server that is down fails the calls of its tools, not the runtime. A name that is not
    /// ASCII letters, digits, `-` and `_`, holds `__`, or was added before fails the build.
    ///
    /// ```
    /// use hooks_runtime::Runtime;
    /// use hooks_runtime::mcp::McpTransport;
    ///
    /// let runtime = Runtime::builder()
    ///     .mcp_server("files", McpTransport::stdio("npx").args(["-y", "@modelcontextprotocol/server-filesystem", "."]))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(runtime.mcp_servers()[0].name, "files");
    /// ```
    #[cfg(feature = "mcp")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
    pub fn mcp_server(mut self, name: impl Into<String>, transport: crate::mcp::McpTransport) -> Self {
        self.mcp_servers.push((name.into(), transport));
        self
    }

    /// Adds several tools.
    pub fn tools<T: Tool>(mut self, tools: impl IntoIterator<Item = T>) -> Self {
        for tool in tools {
            self.tools.insert(tool.name().to_owned(), Arc::new(tool));
        }
        self
    }

    /// Sets the message store (default: [`InMemoryStore`]).
    pub fn store(mut self, store: impl MessageStore) -> Self {
        self.store = Some(Arc::new(store));
        self
    }

    /// Sets a shared message store.
    pub fn store_arc(mut self, store: Arc<dyn MessageStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// The timeout of hooks without their own `timeout_ms` (default [`DEFAULT_HOOK_TIMEOUT`]).
    pub fn hook_timeout(mut self, timeout: Duration) -> Self {
        self.hook_timeout = timeout;
        self
    }

    /// The tool authorization check, asked first about every tool call whose arguments satisfy
    /// the tool's schema (G9, G11): `Deny` answers the call with a denial carrying the reason
    /// (no guard, hook, tool-call listener or tool runs for it), `Ask` makes it wait for a
    /// person unless the gate denies it, `Allow` leaves it to the gate.
    ///
    /// ```
    /// use hooks_runtime::Runtime;
    /// use hooks_runtime::types::ToolDecision;
    ///
    /// let builder = Runtime::builder().authorize_tools(|state, call| {
    ///     if call.name() == "shell" && state.thread_id.starts_with("guest_") {
    ///         ToolDecision::deny("guests have no shell")
    ///     } else {
    ///         ToolDecision::allow()
    ///     }
    /// });
    /// # let _ = builder;
    /// ```
    pub fn authorize_tools(
        mut self,
        check: impl Fn(&ThreadState, &HookToolCall) -> ToolDecision + Send + Sync + 'static,
    ) -> Self {
        self.authorizer = Some(Arc::new(check));
        self
    }

    /// Adds a runtime-wide guard: the `before_tool_call` hook `H` (its id) governs every tool
    /// call of every thread of every agent, subagent threads included, before the hooks the
    /// thread's resolution selects (G7). Guards run in the order they were added.
    ///
    /// ```
    /// use hooks_runtime::prelude::*;
    /// use hooks_runtime::Runtime;
    ///
    /// #[hook(before_tool_call, id = "no_rm_rf", on_failure = deny)]
    /// fn no_rm_rf(_state: &ThreadState, call: &HookToolCall, arguments: &mut serde_json::Value) -> ToolDecision {
    ///     match arguments["command"].as_str() {
    ///         Some(command) if call.name() == "shell" && command.contains("rm -rf") => {
    ///             ToolDecision::deny("destructive commands are not allowed")
    ///         }
    ///         _ => ToolDecision::allow(),
    ///     }
    /// }
    ///
    /// let builder = Runtime::builder().guard::<no_rm_rf>();
    /// # let _ = builder;
    /// ```
    pub fn guard<H: hooks_core::GuardHook>(self) -> Self {
        self.guard_object(Arc::new(HookGuard(H::DEF)))
    }

    /// Adds a runtime-wide guard object: what guards loaded at run time (not `#[hook]`
    /// functions) plug in through.
    #[allow(dead_code)]
    pub(crate) fn guard_object(mut self, guard: Arc<dyn ToolGuard>) -> Self {
        self.guards.push(guard);
        self
    }

    /// Uses this registry in place of every linked hook (tests of the start-up check).
    pub fn registry(mut self, registry: Registry) -> Self {
        self.registry = Some(registry);
        self
    }

    /// How many failures in a row of one tool in one turn stop the turn (default 3).
    pub fn repeated_tool_error_limit(mut self, limit: u32) -> Self {
        self.repeated_tool_error_limit = limit.max(1);
        self
    }

    /// The step limit of a side without `max_steps` (default 25).
    pub fn default_max_steps(mut self, steps: u32) -> Self {
        self.default_max_steps = steps.max(1);
        self
    }

    /// The most reply text one model response may stream, in bytes, for every model of the
    /// runtime (default 8 MiB). A response that passes it fails its step with
    /// [`ModelError::TooLarge`](crate::model::ModelError::TooLarge) naming this cap, and the run
    /// fails `model_error`; what it streamed is not stored.
    ///
    /// ```
    /// let builder = hooks_runtime::Runtime::builder().max_reply_bytes(1024 * 1024);
    /// # let _ = builder;
    /// ```
    pub fn max_reply_bytes(mut self, bytes: usize) -> Self {
        self.max_reply_bytes = bytes;
        self
    }

    /// The most tool-call argument text one model response may stream, all its calls together,
    /// in bytes (default 8 MiB); passing it fails the step like
    /// [`max_reply_bytes`](Self::max_reply_bytes).
    ///
    /// ```
    /// let builder = hooks_runtime::Runtime::builder().max_tool_argument_bytes(256 * 1024);
    /// # let _ = builder;
    /// ```
    pub fn max_tool_argument_bytes(mut self, bytes: usize) -> Self {
        self.max_tool_argument_bytes = bytes;
        self
    }

    /// What recovery does with a turn that its process's death interrupted (O8):
    /// [`RecoveryPolicy::Resume`](crate::RecoveryPolicy::Resume) (the default) asks the model again and ends the turn with a
    /// reply, [`RecoveryPolicy::Settle`](crate::RecoveryPolicy::Settle) stops it `failed (owner_lost)`. Either way, a tool call
    /// that was running keeps its "interrupted" result and never runs again.
    ///
    /// ```
    /// use hooks_runtime::{RecoveryPolicy, Runtime};
    ///
    /// let builder = Runtime::builder().recovery_policy(RecoveryPolicy::Settle);
    /// # let _ = builder;
    /// ```
    pub fn recovery_policy(mut self, policy: crate::RecoveryPolicy) -> Self {
        self.recovery_policy = policy;
        self
    }

    /// Records message contents, tool arguments and tool results on the runtime's spans, as the
    /// OpenTelemetry GenAI conventions' opt-in attributes `gen_ai.input.messages`,
    /// `gen_ai.output.messages` (on `chat` spans), `gen_ai.tool.call.arguments` and
    /// `gen_ai.tool.call.result` (on `execute_tool` spans). Off by default: spans then carry
    /// names, ids, models, token counts and outcomes, never what was said or passed (V2).
    /// Whatever receives the spans (a log, a tracing backend) then holds the conversation.
    ///
    /// ```
    /// let builder = hooks_runtime::Runtime::builder().trace_contents(true);
    /// # let _ = builder;
    /// ```
    pub fn trace_contents(mut self, record: bool) -> Self {
        self.trace_contents = record;
        self
    }

    /// Applies the hooks of a Claude Code-format settings file
    /// ([`DeclarativeHookRegistry::from_settings_json`](crate::declarative::DeclarativeHookRegistry::from_settings_json))
    /// to every thread of every agent, subagent threads included: that format has no per-agent
    /// scoping. `PreToolUse` decides whether a tool call runs (after `authorize_tools`, before
    /// the gate's guards and `before_tool_call` hooks) and may rewrite its arguments; `PostToolUse` / `PostToolUseFailure` add to the result the model
    /// reads; `UserPromptSubmit` may block a sent user message before it is stored (the run
    /// fails `message_hook_error`, as when `before_create_message` prevents it) or add context;
    /// `SessionStart` adds context to a new thread; `Stop` / `SubagentStop` may continue a turn
    /// with a reason, within `max_steps`; `SubagentStart`, `PermissionRequest` and
    /// `Notification` act at their points; `SessionEnd` runs when the application ends a
    /// thread's session ([`Runtime::end_sessions`]); and the file's `permissions` rules govern
    /// every tool call through the gate. A second call replaces the first registry (combine registries
    /// with `DeclarativeHookRegistry::with_settings_of`). `build` logs a WARN for a tool-event
    /// matcher that names none of the runtime's tools.
    ///
    /// A `PreToolUse` `deny` is a denial by the hook's id (`settings:hooks.PreToolUse[0].hooks[0]`,
    /// [`SettingsHook::id`](crate::declarative::SettingsHook::id)), before the gate; an `ask`
    /// parks the call as an approval, as a `before_tool_call` hook's `ToolDecision::ask` does
    /// (`Thread::pending_approvals`, `approve`, `deny`), combined with the gate's decision
    /// deny > ask > allow; its `additionalContext` reaches the result once the call is approved
    /// and runs. An `updatedInput` must satisfy the tool's `parameters()` schema: one that does
    /// not is that hook's failure (the arguments stay as they were, with a WARN naming the
    /// schema path, or the call is denied when the hook is marked `"onFailure": "block"`).
    ///
    /// ```
    /// use hooks_runtime::Runtime;
    /// use hooks_runtime::declarative::DeclarativeHookRegistry;
    ///
    /// let guards = DeclarativeHookRegistry::from_settings_json(
    ///     r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}]}}"#,
    /// );
    /// let runtime = Runtime::builder().settings_hooks(guards).build().unwrap();
    /// # let _ = runtime;
    /// ```
    #[cfg(feature = "declarative")]
    #[cfg_attr(docsrs, doc(cfg(feature = "declarative")))]
    pub fn settings_hooks(mut self, registry: crate::declarative::DeclarativeHookRegistry) -> Self {
        self.settings = Some(registry);
        self
    }

    /// Verifies the registry (D3) and resolves every agent (S8); fails closed.
    ///
    /// The first build also wraps the process's panic hook so that a hook's caught panic prints
    /// nothing (its message may carry contents) and is logged by location; every other panic
    /// still reaches the application's panic hook. See the README's "Decisions and limits".
    pub fn build(self) -> Result<Runtime, BuildError> {
        let registry = self.registry.unwrap_or_else(Registry::linked);
        registry.verify().map_err(BuildError::Registry)?;
        crate::dispatch::panics::install();
        let mut agents: HashMap<&'static str, Arc<AgentEntry>> = HashMap::new();
        let mut pending = self.agents;
        while let Some(def) = pending.pop() {
            if let Some(existing) = agents.get(def.name) {
                if std::ptr::eq(existing.def, def) || existing.def.package == def.package {
                    continue;
                }
                return Err(BuildError::DuplicateAgent(def.name));
            }
            for side in [&def.side_a, &def.side_b] {
                if let Participant::Prompt(prompt) = side.participant
                    && !self.models.contains_key(prompt.model)
                {
                    return Err(BuildError::UnknownModel {
                        prompt: prompt.name,
                        model: prompt.model,
                        added: sorted_names(&self.models),
                    });
                }
                pending.extend(side.subagents.iter().map(|relationship| relationship.agent));
            }
            let resolved = ResolvedAgent::resolve(def, &registry).map_err(BuildError::Resolution)?;
            let plain = crate::dispatch::PlainTable::of(&resolved);
            agents.insert(def.name, Arc::new(AgentEntry { def, resolved, plain, listener: RwLock::new(None) }));
        }
        #[cfg(feature = "mcp")]
        let mcp = {
            let mut seen = std::collections::HashSet::new();
            for (name, _) in &self.mcp_servers {
                let problem = match crate::mcp::check_server_name(name) {
                    Err(problem) => Some(problem.to_owned()),
                    Ok(()) if !seen.insert(name.as_str()) => Some("a server of this name was added before".to_owned()),
                    Ok(()) => None,
                };
                if let Some(problem) = problem {
                    return Err(BuildError::McpServerName { name: name.clone(), problem });
                }
            }
            crate::mcp::McpServers::new(self.mcp_servers)
        };
        for entry in agents.values() {
            for side in [&entry.def.side_a, &entry.def.side_b] {
                let Some(prompt) = side.prompt() else { continue };
                // P1: an MCP tool or wildcard names a server that was added; the tool names
                // are the server's to know, once it runs.
                #[cfg(feature = "mcp")]
                for tool in prompt.tools {
                    if let Some((server, _)) = crate::mcp::split_tool_name(tool)
                        && !self.tools.contains_key(*tool)
                        && !mcp.has_server(server)
                    {
                        let mut added: Vec<String> = mcp.infos().into_iter().map(|info| info.name).collect();
                        added.sort_unstable();
                        return Err(BuildError::UnknownMcpServer {
                            prompt: prompt.name,
                            tool,
                            server: server.to_owned(),
                            added,
                        });
                    }
                }
                let from_mcp = |tool: &str| {
                    #[cfg(feature = "mcp")]
                    return crate::mcp::split_tool_name(tool).is_some();
                    #[cfg(not(feature = "mcp"))]
                    return {
                        let _ = tool;
                        false
                    };
                };
                if let Some(tool) = prompt
                    .tools
                    .iter()
                    .find(|tool| !self.tools.contains_key(**tool) && !agents.contains_key(**tool) && !from_mcp(tool))
                {
                    return Err(BuildError::UnknownTool {
                        prompt: prompt.name,
                        tool,
                        added: sorted_names(&self.tools),
                    });
                }
            }
        }
        // A settings hook whose matcher names none of the tools never runs: say so once, here.
        #[cfg(feature = "declarative")]
        if let Some(settings) = &self.settings {
            let mut tools: Vec<&str> = self.tools.keys().map(|name| name.as_ref()).collect();
            tools.extend(agents.keys().copied());
            // A server's tools are known once it runs; its wildcard stands for them here.
            #[cfg(feature = "mcp")]
            let wildcards = mcp.wildcards();
            #[cfg(feature = "mcp")]
            tools.extend(wildcards.iter().map(String::as_str));
            tools.sort_unstable();
            for warning in settings.settings_tool_warnings(&tools) {
                tracing::warn!("settings hooks: {warning}");
            }
        }
        let users = UserScope::new(&registry);
        Ok(Runtime {
            inner: Arc::new(RuntimeInner {
                agents,
                models: self.models,
                schemas: ToolSchemas::new(self.tools.keys()),
                tools: crate::tool::registry::ToolRegistry::new(
                    self.tools,
                    #[cfg(feature = "mcp")]
                    mcp,
                ),
                store: self.store.unwrap_or_else(|| Arc::new(InMemoryStore::new())),
                hook_timeout: self.hook_timeout,
                authorizer: self.authorizer,
                guards: self.guards,
                users,
                repeated_tool_error_limit: self.repeated_tool_error_limit,
                default_max_steps: self.default_max_steps,
                max_reply_bytes: self.max_reply_bytes,
                max_tool_argument_bytes: self.max_tool_argument_bytes,
                recovery: recovery_state::RecoveryState::new(self.recovery_policy),
                trace_contents: self.trace_contents,
                live_threads: Default::default(),
                #[cfg(feature = "declarative")]
                settings: self.settings,
            }),
        })
    }
}

/// The runtime: owns agents, models, tools and the message store, and runs threads.
#[derive(Clone)]
pub struct Runtime {
    pub(crate) inner: Arc<RuntimeInner>,
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut agents: Vec<&str> = self.inner.agents.keys().copied().collect();
        agents.sort_unstable();
        f.debug_struct("Runtime").field("agents", &agents).finish_non_exhaustive()
    }
}

impl Runtime {
    /// A builder with no agents, the in-memory store and the default hook timeout.
    pub fn builder() -> RuntimeBuilder {
        RuntimeBuilder {
            agents: Vec::new(),
            models: HashMap::new(),
            tools: HashMap::new(),
            store: None,
            hook_timeout: DEFAULT_HOOK_TIMEOUT,
            authorizer: None,
            guards: Vec::new(),
            registry: None,
            repeated_tool_error_limit: 3,
            default_max_steps: 25,
            max_reply_bytes: crate::thread::DEFAULT_MAX_REPLY_BYTES,
            max_tool_argument_bytes: crate::thread::DEFAULT_MAX_TOOL_ARGUMENT_BYTES,
            recovery_policy: crate::RecoveryPolicy::Resume,
            trace_contents: false,
            #[cfg(feature = "declarative")]
            settings: None,
            #[cfg(feature = "mcp")]
            mcp_servers: Vec::new(),
        }
    }

    /// The runtime's MCP servers, in the order they were added: each one's state, last error
    /// and tools as it last listed them (the inspector's MCP section).
    #[cfg(feature = "mcp")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
    pub fn mcp_servers(&self) -> Vec<crate::mcp::McpServerInfo> {
        self.inner.tools.mcp.infos()
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
        let mut names: Vec<&'static str> = self.inner.agents.keys().copied().collect();
        names.sort_unstable();
        names
    }

    /// An agent of the runtime, to attach a tool-call listener to or to explain.
    pub fn agent(&self, name: &str) -> Option<AgentHandle> {
        self.inner.agents.get(name).map(|entry| AgentHandle { entry: entry.clone() })
    }

    /// The message store.
    pub fn store(&self) -> &Arc<dyn MessageStore> {
        &self.inner.store
    }

    /// Creates a thread of agent `agent` and runs its `after_thread_created` hooks (at rest).
    /// On a store that several processes share, a thread created for a user is announced to
    /// the other runtimes' [`subscribe_user_changes`](Runtime::subscribe_user_changes) followers.
    pub async fn create_thread(&self, agent: &str, options: ThreadOptions) -> Result<Thread, RuntimeError> {
        crate::thread::recovery_on_first_use(&self.inner).await;
        let user_id = options.user_id.clone();
        let thread = Thread::create(&self.inner, agent, options).await?;
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

    /// Reopens a stored thread: its history is the store's, its agent must be in the runtime.
    pub async fn open_thread(&self, thread_id: &str) -> Result<Thread, RuntimeError> {
        crate::thread::recovery_on_first_use(&self.inner).await;
        let thread = Thread::open(&self.inner, thread_id).await?;
        self.begin_session(&thread);
        Ok(thread)
    }

    /// K11: a top-level thread created or opened here begins a session, which `SessionEnd`
    /// hooks of a settings file learn the end of ([`end_sessions`](Self::end_sessions)).
    fn begin_session(&self, thread: &Thread) {
        #[cfg(feature = "declarative")]
        {
            if let Some(registry) = &self.inner.settings
                && !thread.shared.is_subagent()
            {
                crate::declarative::begin_session(registry.settings_hooks(), registry.settings_state(), thread.id());
            }
        }
        #[cfg(not(feature = "declarative"))]
        let _ = thread;
    }

    /// Ends the session of every top-level thread this runtime created or opened since its
    /// session last ended, and runs the settings file's `SessionEnd` hooks for each
    /// ([`RuntimeBuilder::settings_hooks`]), all at once, each within its timeout; returns how
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
    /// use hooks_runtime::declarative::{DeclarativeHookRegistry, SessionEndReason};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let hooks = DeclarativeHookRegistry::from_settings_json(
    ///     r#"{"hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": "cat > /dev/null"}]}]}}"#,
    /// );
    /// let runtime = Runtime::builder().settings_hooks(hooks).build().unwrap();
    /// assert_eq!(runtime.end_sessions(SessionEndReason::Other).await, 0); // no thread was used
    /// # });
    /// ```
    #[cfg(feature = "declarative")]
    #[cfg_attr(docsrs, doc(cfg(feature = "declarative")))]
    pub async fn end_sessions(&self, reason: crate::declarative::SessionEndReason) -> usize {
        let Some(registry) = &self.inner.settings else { return 0 };
        let (hooks, state) = (registry.settings_hooks(), registry.settings_state());
        let threads = state.end_sessions();
        let ended = threads.len();
        crate::declarative::end_sessions(hooks, state, self.inner.store.as_ref(), threads, reason).await;
        ended
    }

    /// Ends the session of one thread, as [`end_sessions`](Self::end_sessions) ends all:
    /// `false` when it had none open (never created or opened here, a subagent's child thread,
    /// or already ended), and then no hook runs.
    ///
    /// ```
    /// use hooks_runtime::Runtime;
    /// use hooks_runtime::declarative::{DeclarativeHookRegistry, SessionEndReason};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let runtime = Runtime::builder().settings_hooks(DeclarativeHookRegistry::from_settings_json(r#"{"hooks": {}}"#)).build().unwrap();
    /// assert!(!runtime.end_session("thread-1", SessionEndReason::Clear).await);
    /// # });
    /// ```
    #[cfg(feature = "declarative")]
    #[cfg_attr(docsrs, doc(cfg(feature = "declarative")))]
    pub async fn end_session(&self, thread_id: &str, reason: crate::declarative::SessionEndReason) -> bool {
        let Some(registry) = &self.inner.settings else { return false };
        let (hooks, state) = (registry.settings_hooks(), registry.settings_state());
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
    /// at start-up to recover before the first request (`hooks_server::router` does); on a
    /// shared store it also starts this runtime's sweeper.
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
    pub async fn recover(&self) -> Result<crate::Recovery, RuntimeError> {
        let recovery = crate::thread::recover(&self.inner).await;
        crate::thread::start_sweeping(&self.inner);
        recovery
    }

    /// A client connected to the user's event stream: runs every `user_client_attached` hook.
    pub async fn attach_client(&self, user_id: &str, client_id: &str) {
        // Scale-out: from the first client on, this runtime follows other processes' changes.
        user_sync::listen(&self.inner).await;
        let users = &self.inner.users;
        let values = self.hook_values(user_id, &UserEvent::ClientAttached { client_id: client_id.to_owned() }).await;
        users.attach_client(user_id, client_id, values, self.inner.hook_timeout).await;
    }

    /// A client disconnected: runs every `user_client_detached` hook.
    pub async fn detach_client(&self, user_id: &str, client_id: &str) {
        let users = &self.inner.users;
        let values = self.hook_values(user_id, &UserEvent::ClientDetached { client_id: client_id.to_owned() }).await;
        users.detach_client(user_id, client_id, values, self.inner.hook_timeout).await;
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
        self.inner.users.change_value(user_id, event, values, self.inner.hook_timeout).await;
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

/// An agent of a [`Runtime`].
#[derive(Clone)]
pub struct AgentHandle {
    pub(crate) entry: Arc<AgentEntry>,
}

impl fmt::Debug for AgentHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentHandle").field("name", &self.entry.def.name).finish()
    }
}

impl AgentHandle {
    /// The resolved hook table.
    pub fn resolved(&self) -> &ResolvedAgent {
        &self.entry.resolved
    }

    /// The agent's definition.
    pub fn def(&self) -> &'static AgentDef {
        self.entry.def
    }
}

impl ToolCallListenerTarget for AgentHandle {
    fn agent_id(&self) -> &str {
        self.entry.def.name
    }

    fn set_tool_call_listener(&self, listener: Option<Arc<dyn ToolCallListener>>) {
        self.entry.set_listener(listener);
    }
}
