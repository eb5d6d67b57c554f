//! Not public API. Entry points for the benchmarks in `hooks-runtime/benches`; they may change or
//! disappear in any release. Compiled only with the `__bench` feature, which the package's
//! self dev-dependency turns on for its benches.
//!
//! The functions at the top level run a chain through the runtime's real dispatch functions
//! (the ones the thread pipelines call), with no optional relationship enabled and the runtime's
//! default timeout. The context assembly uses the pipeline's own helpers
//! (`thread::context::{interpolate, to_provider_messages}`).

#![allow(missing_docs)]

use std::future::Future;
use std::task::{Context, Waker};
use std::time::Duration;

use hooks_core::__private::{ActiveContext, EnabledRelationships, ResolvedHook};
use hooks_core::{HookError, HookKind, HookMessage, LlmMessage, PromptDef, ResolvedAgent, ThreadState};

use crate::dispatch::{self, Dispatch, PlainChain, PointRun};
use crate::thread::context::{interpolate, to_provider_messages};

/// The timeout the benchmarks dispatch with: the runtime's default.
pub const TIMEOUT: Duration = crate::limits::DEFAULT_HOOK_TIMEOUT;

/// A chain of one kind as the runtime keeps it: its entries, and their typed form when every hook
/// of it is a plain sync hook.
pub struct Chain {
    entries: Vec<ResolvedHook>,
    plain: Option<PlainChain>,
}

impl Chain {
    /// The chain of `kind` made of `entries`.
    pub fn new(kind: HookKind, entries: Vec<ResolvedHook>) -> Self {
        let plain = PlainChain::of(kind, &entries);
        Chain { entries, plain }
    }

    /// The chain of `kind` that `resolved` runs in `active`.
    pub fn resolved(resolved: &ResolvedAgent, active: ActiveContext, kind: HookKind) -> Self {
        Chain::new(kind, hooks_core::__private::chain(resolved, active, kind).to_vec())
    }

    /// Whether it has no hook.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// How many hooks it has.
    pub fn len(&self) -> usize {
        self.entries.len()
    }
}

impl std::fmt::Debug for Chain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chain").field("entries", &self.entries).field("plain", &self.plain.is_some()).finish()
    }
}

fn dispatch(chain: &Chain) -> Dispatch<'_> {
    Dispatch {
        chain: &chain.entries,
        plain: chain.plain.as_ref(),
        enabled: EnabledRelationships::NONE,
        default_timeout: TIMEOUT,
    }
}

/// `filter_messages` as the runtime's pipelines run it (R3-R4, E1, E7): the chain runs on the
/// `&mut` value; an in-place hook gets it as it is, and before each by-value hook a snapshot is
/// taken into one buffer per chain (a `clone()` for the first, `clone_from` after), restored if
/// that hook fails. The sync hooks run when this future is first polled, as they do when a
/// pipeline awaits the point.
pub async fn filter_messages(chain: &Chain, state: &ThreadState, messages: &mut Vec<HookMessage>) {
    dispatch::await_point!(dispatch::filter_messages(&dispatch(chain), state, messages));
}

/// [`filter_messages`] for a chain of sync hooks, called as a pipeline calls the point from
/// inside its own running future: no future is built for it, and its outcome is matched where it
/// is called. Should the chain reach an async hook, the rest is polled once with a no-op waker
/// and must be ready.
#[inline]
pub fn filter_messages_sync(chain: &Chain, state: &ThreadState, messages: &mut Vec<HookMessage>) {
    match dispatch::filter_messages(&dispatch(chain), state, messages) {
        PointRun::Finished(()) => {}
        PointRun::Suspended(rest) => finish_at_once(rest),
    }
}

/// Polls the rest of a chain once; out of line, so that a chain of sync hooks, which never gets
/// here, carries none of its state.
#[cold]
#[inline(never)]
fn finish_at_once(rest: impl Future<Output = ()>) {
    let mut rest = std::pin::pin!(rest);
    let ready = rest.as_mut().poll(&mut Context::from_waker(Waker::noop()));
    assert!(ready.is_ready(), "filter_messages_sync: the chain did not finish at once");
}

/// The three chains of a context assembly.
#[derive(Debug, Clone, Copy)]
pub struct AssemblyChains<'c> {
    pub after_system_message: &'c Chain,
    pub filter_messages: &'c Chain,
    pub prefilter_llm_history: &'c Chain,
}

/// A context assembly as `thread::context::assemble` does it, on a snapshot the caller passes in
/// (the store read is left out): interpolation, `after_system_message`, `filter_messages`,
/// provider transformation, `prefilter_llm_history`, each through the real dispatch function.
pub async fn assemble(
    chains: AssemblyChains<'_>,
    state: &ThreadState,
    prompt: &PromptDef,
    snapshot: Vec<HookMessage>,
) -> Result<Vec<LlmMessage>, HookError> {
    let mut system = interpolate(prompt.prompt, state);
    dispatch::await_point!(dispatch::after_system_message(&dispatch(chains.after_system_message), state, &mut system));
    let mut history = snapshot;
    dispatch::await_point!(dispatch::filter_messages(&dispatch(chains.filter_messages), state, &mut history));
    let mut provider = to_provider_messages(system, &history, prompt);
    let prefilter = dispatch(chains.prefilter_llm_history);
    dispatch::await_point!(dispatch::prefilter_llm_history(&prefilter, state, &mut provider))?;
    Ok(provider)
}

/// The same assembly with no hook machinery at all: the baseline of [`assemble`].
pub fn assemble_plain(state: &ThreadState, prompt: &PromptDef, snapshot: Vec<HookMessage>) -> Vec<LlmMessage> {
    let system = interpolate(prompt.prompt, state);
    to_provider_messages(system, &snapshot, prompt)
}

/// The check of a tool's arguments against its parameters schema (G9), as the gate runs it on
/// every call: the schema compiled once (on the first check), each check a validation.
pub struct SchemaCheck {
    schemas: crate::governing::schema::ToolSchemas,
    tool: std::sync::Arc<dyn crate::tool::Tool>,
}

impl SchemaCheck {
    /// The check of a tool named `bench` whose parameters are `parameters`.
    pub fn new(parameters: serde_json::Value) -> Self {
        let tool = crate::tool::FnTool::new("bench", "A bench tool.", |_args| async {
            hooks_core::HookToolResult::success("")
        })
        .with_parameters(parameters);
        let tool: std::sync::Arc<dyn crate::tool::Tool> = std::sync::Arc::new(tool);
        let schemas = crate::governing::schema::ToolSchemas::new([(&"bench".to_owned(), &tool)]);
        SchemaCheck { schemas, tool }
    }

    /// Whether `arguments` satisfy the schema.
    pub fn check(&self, arguments: &serde_json::Value) -> bool {
        self.schemas.check(Some(&self.tool), arguments).is_ok()
    }
}

/// The tool named `name` of `runtime`, as a thread calls it: an added tool, or one of an MCP
/// server (`mcp__<server>__<tool>`).
pub fn tool(runtime: &crate::runtime::Runtime, name: &str) -> Option<std::sync::Arc<dyn crate::tool::Tool>> {
    runtime.inner.registries.tools.get(name)
}

/// A settings file's permission decision for one call, as the gate takes it
/// (`SettingsPermissions::decide`): the list of the rule that decided it, if one did.
#[cfg(feature = "declarative")]
pub fn settings_permission(
    permissions: &crate::declarative::SettingsPermissions,
    tool: &str,
    arguments: &serde_json::Value,
) -> Option<&'static str> {
    permissions.decide(tool, arguments).map(|found| found.kind.name())
}
