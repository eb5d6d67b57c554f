//! [`RuntimeBuilder`]: what a runtime is built with, checked and resolved by `build`.

use foldhash::{HashMap, HashMapExt as _};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use hooks_core::{AgentDef, HookToolCall, Participant, Registry, ResolvedAgent, ThreadState, ToolDecision};

use super::build_error::{BuildError, sorted_names};
use super::handle::Runtime;
use crate::governing::governors::Governors;
use crate::governing::guard::{HookGuard, ToolGuard};
use crate::governing::schema::ToolSchemas;
use crate::limits::Limits;
use crate::model::{IntoModel, Model};
use crate::shared::agent_entry::AgentEntry;
use crate::shared::recovery_state::RecoveryState;
use crate::shared::registries::Registries;
use crate::shared::runtime_inner::RuntimeInner;
use crate::shared::tool_registry::ToolRegistry;
use crate::store::{InMemoryStore, IntoMessageStore, MessageStore};
use crate::tool::{Tool, ToolAuthorizer};
use crate::user::UserScope;

// `Runtime::builder` lives here, with what it builds, so that the handle's file needs nothing
// of the builder's.
impl Runtime {
    /// A builder with no agents, the in-memory store and the default limits.
    pub fn builder() -> RuntimeBuilder {
        RuntimeBuilder::new()
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
    authorizer: Option<Arc<ToolAuthorizer>>,
    guards: Vec<Arc<dyn ToolGuard>>,
    registry: Option<Registry>,
    limits: Limits,
    recovery_policy: crate::shared::recovery_state::RecoveryPolicy,
    #[cfg(feature = "declarative")]
    settings: Option<crate::declarative::SettingsHooks>,
    #[cfg(feature = "declarative")]
    permission_rules: Option<crate::declarative::SettingsPermissions>,
    #[cfg(feature = "mcp")]
    mcp_servers: Vec<(String, crate::mcp::McpTransport)>,
    /// F6: the pins of the servers of a project's `.mcp.json` (`mcp_servers_from`).
    #[cfg(feature = "mcp")]
    mcp_pins: Vec<(String, Arc<crate::mcp::ToolPins>)>,
}

impl RuntimeBuilder {
    /// A builder with no agents, the in-memory store and the default limits.
    pub(super) fn new() -> Self {
        RuntimeBuilder {
            agents: Vec::new(),
            models: HashMap::new(),
            tools: HashMap::new(),
            store: None,
            authorizer: None,
            guards: Vec::new(),
            registry: None,
            limits: Limits::default(),
            recovery_policy: crate::shared::recovery_state::RecoveryPolicy::Resume,
            #[cfg(feature = "declarative")]
            settings: None,
            #[cfg(feature = "declarative")]
            permission_rules: None,
            #[cfg(feature = "mcp")]
            mcp_servers: Vec::new(),
            #[cfg(feature = "mcp")]
            mcp_pins: Vec::new(),
        }
    }

    /// Adds an agent, and through its relationships every subagent it composes.
    pub fn agent<A: hooks_core::Agent>(self) -> Self {
        self.agent_def(A::DEF)
    }

    /// Adds an agent by definition.
    pub fn agent_def(mut self, def: &'static AgentDef) -> Self {
        self.agents.push(def);
        self
    }

    /// Adds a model under the name prompts use: a [`Model`], or one already shared as an `Arc`
    /// ([`IntoModel`]).
    pub fn model(mut self, name: impl Into<String>, model: impl IntoModel) -> Self {
        self.models.insert(name.into(), model.into_model());
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

    /// Adds the MCP servers of a project's `.mcp.json` that `settings` holds: those of a
    /// discovered, trusted project ([`SettingsHooks::discover`](crate::declarative::SettingsHooks::discover)).
    /// An untrusted or changed `.mcp.json` gives no server, so nothing of it starts. A stdio
    /// server runs in the project folder. Each is then added as
    /// [`mcp_server`](Self::mcp_server) adds one, with its tools pinned (F6): the first
    /// listing after the project was trusted is recorded in the trust file (a hash of each
    /// tool's name, description and input schema); a tool that lists differently afterwards, or
    /// a new one, is not offered to the model until the project is trusted again (`hooks
    /// trust` shows it), with a WARN and a [`MCP_TOOL_WITHHELD_EVENT`](crate::mcp::MCP_TOOL_WITHHELD_EVENT)
    /// thread event naming it.
    ///
    /// ```
    /// use hooks_runtime::Runtime;
    /// use hooks_runtime::declarative::{Discovery, TrustStore};
    ///
    /// let root = std::env::temp_dir().join(format!("doc-mcp-from-{}", std::process::id()));
    /// std::fs::create_dir_all(&root).unwrap();
    /// std::fs::write(root.join(".mcp.json"), r#"{"mcpServers": {"files": {"command": "npx"}}}"#).unwrap();
    /// let discovery = Discovery::new(&root)
    ///     .home_dir(root.join("home"))
    ///     .managed_settings(root.join("managed.json"))
    ///     .trust_store(TrustStore::at(root.join("trust.json")));
    /// let settings = discovery.load();
    /// let runtime = Runtime::builder().mcp_servers_from(&settings).build().unwrap();
    /// assert!(runtime.mcp_servers().is_empty()); // not trusted: not added
    /// # std::fs::remove_dir_all(&root).unwrap();
    /// ```
    #[cfg(all(feature = "mcp", feature = "declarative"))]
    #[cfg_attr(docsrs, doc(cfg(all(feature = "mcp", feature = "declarative"))))]
    pub fn mcp_servers_from(mut self, settings: &crate::declarative::SettingsHooks) -> Self {
        for server in settings.mcp_servers() {
            let transport = match (&server.command, &server.url) {
                (Some(command), _) => {
                    let mut transport =
                        crate::mcp::McpTransport::stdio(command).args(&server.args).current_dir(&server.cwd);
                    for (key, value) in &server.env {
                        transport = transport.env(key, value);
                    }
                    transport
                }
                (None, url) => {
                    let mut transport = crate::mcp::McpTransport::http(url.clone().unwrap_or_default());
                    for (name, value) in &server.headers {
                        transport = transport.header(name, value);
                    }
                    transport
                }
            };
            if let Some(pins) = server.tool_pins() {
                self.mcp_pins.push((server.name.clone(), Arc::new(pins)));
            }
            self = self.mcp_server(server.name.clone(), transport);
        }
        self
    }

    /// Adds several tools.
    pub fn tools<T: Tool>(mut self, tools: impl IntoIterator<Item = T>) -> Self {
        for tool in tools {
            self.tools.insert(tool.name().to_owned(), Arc::new(tool));
        }
        self
    }

    /// Sets the message store (default: [`InMemoryStore`]): a [`MessageStore`], or one already
    /// shared as an `Arc` ([`IntoMessageStore`]).
    pub fn store(mut self, store: impl IntoMessageStore) -> Self {
        self.store = Some(store.into_message_store());
        self
    }

    /// The timeout of hooks without their own `timeout_ms` (default [`DEFAULT_HOOK_TIMEOUT`](crate::definition::DEFAULT_HOOK_TIMEOUT)).
    pub fn hook_timeout(mut self, timeout: Duration) -> Self {
        self.limits.hook_timeout = timeout;
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
        self.limits.repeated_tool_error_limit = limit.max(1);
        self
    }

    /// The step limit of a side without `max_steps` (default 25).
    pub fn default_max_steps(mut self, steps: u32) -> Self {
        self.limits.default_max_steps = steps.max(1);
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
        self.limits.max_reply_bytes = bytes;
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
        self.limits.max_tool_argument_bytes = bytes;
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
    pub fn recovery_policy(mut self, policy: crate::shared::recovery_state::RecoveryPolicy) -> Self {
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
        self.limits.trace_contents = record;
        self
    }

    /// Applies the hooks of a Claude Code-format settings file
    /// ([`SettingsHooks::from_json`](crate::declarative::SettingsHooks::from_json))
    /// to every thread of every agent, subagent threads included: that format has no per-agent
    /// scoping. `PreToolUse` decides whether a tool call runs (after `authorize_tools`, before
    /// the gate's guards and `before_tool_call` hooks) and may rewrite its arguments; `PostToolUse` / `PostToolUseFailure` add to the result the model
    /// reads; `UserPromptSubmit` may block a sent user message before it is stored (the run
    /// fails `message_hook_error`, as when `before_create_message` prevents it) or add context;
    /// `SessionStart` adds context to a new thread; `Stop` / `SubagentStop` may continue a turn
    /// with a reason, within `max_steps`; `SubagentStart`, `PermissionRequest` and
    /// `Notification` act at their points; `SessionEnd` runs when the application ends a
    /// thread's session ([`Runtime::end_sessions`]); and the file's `permissions` rules govern
    /// every tool call through the gate. A second call replaces the first hooks (combine files with
    /// [`SettingsHooks::with_hooks_of`](crate::declarative::SettingsHooks::with_hooks_of)). `build` logs a WARN for a tool-event
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
    /// use hooks_runtime::declarative::SettingsHooks;
    ///
    /// let guards = SettingsHooks::from_json(
    ///     r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}]}}"#,
    /// );
    /// let runtime = Runtime::builder().settings_hooks(guards).build().unwrap();
    /// # let _ = runtime;
    /// ```
    #[cfg(feature = "declarative")]
    #[cfg_attr(docsrs, doc(cfg(feature = "declarative")))]
    pub fn settings_hooks(mut self, hooks: crate::declarative::SettingsHooks) -> Self {
        self.settings = Some(hooks);
        self
    }

    /// Permission rules given in code, in the settings format's rule syntax: they govern every
    /// tool call as a settings file's `permissions` do (deny > ask > allow; an allow stands in
    /// for the tool's own approval only), right after the file's rules, and are checked again
    /// on arguments any decider rewrites. Their decisions are recorded as
    /// `code:permissions.deny[0]` and so on. A second call replaces the first rules.
    ///
    /// ```
    /// use hooks_runtime::Runtime;
    /// use hooks_runtime::declarative::{PermissionRule, SettingsPermissions};
    ///
    /// let mut rules = SettingsPermissions::default();
    /// rules.deny.push(PermissionRule::parse("Bash(git push:*)").unwrap());
    /// let runtime = Runtime::builder().permission_rules(rules).build().unwrap();
    /// # let _ = runtime;
    /// ```
    #[cfg(feature = "declarative")]
    #[cfg_attr(docsrs, doc(cfg(feature = "declarative")))]
    pub fn permission_rules(mut self, rules: crate::declarative::SettingsPermissions) -> Self {
        self.permission_rules = Some(rules);
        self
    }

    /// Verifies the registry (D3) and resolves every agent (S8); fails closed.
    ///
    /// The first build also wraps the process's panic hook so that a hook's caught panic prints
    /// nothing (its message may carry contents) and is logged by location; every other panic
    /// still reaches the application's panic hook. See docs/decisions.md in the repository.
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
            let servers = crate::mcp::McpServers::new(self.mcp_servers);
            for (name, pins) in self.mcp_pins {
                servers.pin(&name, pins);
            }
            servers
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
            // H2: the transcripts that processes of this user killed before their end left.
            crate::declarative::remove_stale_transcripts();
            let mut tools: Vec<&str> = self.tools.keys().map(|name| name.as_ref()).collect();
            // An agent is a tool only where the model is offered it: named in a prompt's
            // `tools`, or a subagent relationship that is not hidden (by its name).
            for entry in agents.values() {
                for side in [&entry.def.side_a, &entry.def.side_b] {
                    if let Some(prompt) = side.prompt() {
                        tools.extend(prompt.tools.iter().copied().filter(|tool| agents.contains_key(tool)));
                    }
                }
                tools.extend(entry.def.relationships().filter(|relationship| !relationship.hidden).map(|r| r.name));
            }
            // A server's tools are known once it runs; its wildcard stands for them here.
            #[cfg(feature = "mcp")]
            let wildcards = mcp.wildcards();
            #[cfg(feature = "mcp")]
            tools.extend(wildcards.iter().map(String::as_str));
            tools.sort_unstable();
            tools.dedup();
            for warning in settings.tool_warnings(&tools) {
                tracing::warn!("settings hooks: {warning}");
            }
        }
        let users = UserScope::new(&registry);
        let schemas = ToolSchemas::new(&self.tools);
        let store = self.store.unwrap_or_else(|| Arc::new(InMemoryStore::new()));
        let admission = admission_pipeline(
            Arc::clone(&store),
            self.authorizer,
            #[cfg(feature = "declarative")]
            self.settings.as_ref(),
            #[cfg(feature = "declarative")]
            self.permission_rules,
        );
        let tools = ToolRegistry::new(
            self.tools,
            #[cfg(feature = "mcp")]
            mcp,
        );
        Ok(Runtime {
            inner: Arc::new(RuntimeInner {
                registries: Registries {
                    agents,
                    models: self.models,
                    tools,
                    #[cfg(feature = "declarative")]
                    settings: self.settings,
                },
                governors: Governors { guards: self.guards, schemas, admission, patterns: PATTERNS },
                limits: self.limits,
                store,
                users,
                recovery: RecoveryState::new(self.recovery_policy),
                history_buffers: Default::default(),
            }),
            live: Default::default(),
        })
    }
}

/// How remembered approvals' rule patterns are read (A9): the permission-rule syntax.
#[cfg(feature = "declarative")]
const PATTERNS: crate::governing::remembered::PatternCheck = crate::declarative::remembered_pattern;
#[cfg(not(feature = "declarative"))]
const PATTERNS: crate::governing::remembered::PatternCheck = crate::governing::remembered::without_rule_syntax;

/// The admission pipeline of a runtime (G13), in its documented order: the schema check, the
/// permission rules (a settings file's, then those given in code), the authorizer, the settings
/// file's `PreToolUse` hooks, the runtime-wide guards, the thread's `before_tool_call` hooks,
/// the tool's own approval rule; for an ask, the remembered approvals in `store` (A9), then the
/// settings file's `PermissionRequest` hooks.
fn admission_pipeline(
    store: Arc<dyn MessageStore>,
    authorizer: Option<Arc<ToolAuthorizer>>,
    #[cfg(feature = "declarative")] settings: Option<&crate::declarative::SettingsHooks>,
    #[cfg(feature = "declarative")] rules: Option<crate::declarative::SettingsPermissions>,
) -> crate::governing::admission::AdmissionPipeline {
    use crate::governing::admission::{Authorizer, Decider, SchemaCheck, ToolApproval};
    use crate::governing::gate::{BeforeToolCallHooks, Guards};
    let mut deciders: Vec<Box<dyn Decider>> = vec![Box::new(SchemaCheck)];
    #[cfg(feature = "declarative")]
    {
        use crate::declarative::PermissionRules;
        if let Some(settings) = settings {
            deciders.push(Box::new(PermissionRules::of_file(settings.clone())));
        }
        if let Some(rules) = rules {
            deciders.push(Box::new(PermissionRules::of_code(rules)));
        }
    }
    if let Some(authorizer) = authorizer {
        deciders.push(Box::new(Authorizer(authorizer)));
    }
    #[cfg(feature = "declarative")]
    if let Some(settings) = settings {
        deciders.push(Box::new(crate::declarative::PreToolUseHooks(settings.clone())));
    }
    deciders.push(Box::new(Guards));
    deciders.push(Box::new(BeforeToolCallHooks));
    deciders.push(Box::new(ToolApproval));
    #[cfg(feature = "declarative")]
    if let Some(settings) = settings {
        deciders.push(Box::new(crate::declarative::PermissionRequestHooks(settings.clone())));
    }
    let remembered = crate::governing::remembered::RememberedApprovals { store, patterns: PATTERNS };
    crate::governing::admission::AdmissionPipeline::new(deciders).with_remembered(remembered)
}
