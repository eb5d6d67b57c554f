//! Shared helpers of the workspace test suite, and the code of the READMEs and guides as doctests.

/// The README's Rust examples compile and run as doctests, so the front door stays true.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The examples of the macros' docs (hooks-macros/docs/), which show them through the facade.
#[doc = include_str!("../../hooks-macros/docs/hook.md")]
#[cfg(doctest)]
pub struct HookMacroDoctests;

#[doc = include_str!("../../hooks-macros/docs/define_prompt.md")]
#[cfg(doctest)]
pub struct DefinePromptMacroDoctests;

#[doc = include_str!("../../hooks-macros/docs/define_agent.md")]
#[cfg(doctest)]
pub struct DefineAgentMacroDoctests;

/// The guides' Rust examples (`docs/*.md`) compile and run as doctests too, one item per guide.
#[doc = include_str!("../../docs/hooks.md")]
#[cfg(doctest)]
pub struct HooksGuideDoctests;

#[doc = include_str!("../../docs/runtime.md")]
#[cfg(doctest)]
pub struct RuntimeGuideDoctests;

#[doc = include_str!("../../docs/governing.md")]
#[cfg(doctest)]
pub struct GoverningGuideDoctests;

#[doc = include_str!("../../docs/declarative-hooks.md")]
#[cfg(doctest)]
pub struct DeclarativeHooksGuideDoctests;

#[doc = include_str!("../../docs/settings-hooks.md")]
#[cfg(doctest)]
pub struct SettingsHooksGuideDoctests;

#[doc = include_str!("../../docs/mcp.md")]
#[cfg(doctest)]
pub struct McpGuideDoctests;

#[doc = include_str!("../../docs/serving.md")]
#[cfg(doctest)]
pub struct ServingGuideDoctests;

#[doc = include_str!("../../docs/scaling-out.md")]
#[cfg(doctest)]
pub struct ScalingOutGuideDoctests;

#[doc = include_str!("../../docs/observability.md")]
#[cfg(doctest)]
pub struct ObservabilityGuideDoctests;

#[doc = include_str!("../../docs/decisions.md")]
#[cfg(doctest)]
pub struct DecisionsGuideDoctests;

#[doc = include_str!("../../docs/reliability.md")]
#[cfg(doctest)]
pub struct ReliabilityGuideDoctests;

#[doc = include_str!("../../docs/performance.md")]
#[cfg(doctest)]
pub struct PerformanceGuideDoctests;

#[doc = include_str!("../../docs/layout.md")]
#[cfg(doctest)]
pub struct LayoutGuideDoctests;

/// The example of `hooks-runtime`'s own README, which the registry shows, compiles and runs too.
#[doc = include_str!("../../hooks-runtime/README.md")]
#[cfg(doctest)]
pub struct RuntimeReadmeDoctests;
