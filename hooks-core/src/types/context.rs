use std::borrow::Cow;

use serde::{Deserialize, Serialize};

/// The package (a crate) a child hook was loaded from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PackageSignature {
    /// The crate's package name.
    pub name: Cow<'static, str>,
    /// The crate's version.
    pub version: Cow<'static, str>,
}

impl PackageSignature {
    /// A package signature from its name and version.
    pub fn new(name: impl Into<Cow<'static, str>>, version: impl Into<Cow<'static, str>>) -> Self {
        PackageSignature { name: name.into(), version: version.into() }
    }

    /// A package signature built in a `const` context.
    pub const fn new_static(name: &'static str, version: &'static str) -> Self {
        PackageSignature { name: Cow::Borrowed(name), version: Cow::Borrowed(version) }
    }
}

/// Why a hook is active (spec §2.4): its prompt, its agent, or a child's parent-hook requirement;
/// beyond the specification, a runtime-wide guard (`Runtime::builder().guard::<id>()`).
///
/// JSON: `{"kind":"prompt","promptName":"..."}`, `{"kind":"agent","agentName":"..."}`,
/// `{"kind":"child","relationshipName":"...","agentName":"...","package":{...}}`,
/// `{"kind":"runtime"}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
#[non_exhaustive]
pub enum HookSource {
    /// Selected by the active prompt's `hooks`.
    Prompt {
        /// The prompt's name.
        prompt_name: Cow<'static, str>,
    },
    /// Selected by the agent's `hooks` (fallback, or at rest).
    Agent {
        /// The agent's name.
        agent_name: Cow<'static, str>,
    },
    /// Required by a child agent's `parent_hooks`.
    Child {
        /// The relationship's `as`, defaulting to the child agent's name.
        relationship_name: Cow<'static, str>,
        /// The child agent that declared the requirement.
        agent_name: Cow<'static, str>,
        /// The namespace the hook was loaded from.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        package: Option<PackageSignature>,
    },
    /// A runtime-wide guard: it governs every tool call of every thread, whatever resolved.
    Runtime,
}

/// The provenance label that logs and spans show: `prompt:NAME`, `agent:NAME`,
/// `child:RELATIONSHIP` or `runtime`.
///
/// ```
/// use hooks_runtime::types::HookExecutionContext;
///
/// assert_eq!(HookExecutionContext::prompt("triage").source.to_string(), "prompt:triage");
/// assert_eq!(HookExecutionContext::runtime().source.to_string(), "runtime");
/// ```
impl std::fmt::Display for HookSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HookSource::Prompt { prompt_name } => write!(f, "prompt:{prompt_name}"),
            HookSource::Agent { agent_name } => write!(f, "agent:{agent_name}"),
            HookSource::Child { relationship_name, .. } => write!(f, "child:{relationship_name}"),
            HookSource::Runtime => f.write_str("runtime"),
        }
    }
}

/// The final argument of every thread hook: deterministic provenance metadata.
///
/// ```
/// use hooks_runtime::types::{HookExecutionContext, HookSource};
///
/// const CONTEXT: HookExecutionContext = HookExecutionContext::prompt("duplicate_finder");
/// assert_eq!(
///     serde_json::to_string(&CONTEXT).unwrap(),
///     r#"{"source":{"kind":"prompt","promptName":"duplicate_finder"}}"#
/// );
/// assert!(matches!(CONTEXT.source, HookSource::Prompt { .. }));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct HookExecutionContext {
    /// Why the hook is active.
    pub source: HookSource,
}

impl HookExecutionContext {
    /// A context with its source.
    pub const fn new(source: HookSource) -> Self {
        HookExecutionContext { source }
    }

    /// A prompt source, const-constructible.
    pub const fn prompt(prompt_name: &'static str) -> Self {
        HookExecutionContext { source: HookSource::Prompt { prompt_name: Cow::Borrowed(prompt_name) } }
    }

    /// An agent source, const-constructible.
    pub const fn agent(agent_name: &'static str) -> Self {
        HookExecutionContext { source: HookSource::Agent { agent_name: Cow::Borrowed(agent_name) } }
    }

    /// The source of a runtime-wide guard, const-constructible.
    pub const fn runtime() -> Self {
        HookExecutionContext { source: HookSource::Runtime }
    }

    /// A child source, const-constructible.
    pub const fn child(relationship_name: &'static str, agent_name: &'static str, package: PackageSignature) -> Self {
        HookExecutionContext {
            source: HookSource::Child {
                relationship_name: Cow::Borrowed(relationship_name),
                agent_name: Cow::Borrowed(agent_name),
                package: Some(package),
            },
        }
    }
}
