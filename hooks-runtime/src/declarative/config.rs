//! One declarative hook: event, optional matcher, action.

use std::fmt;

use super::{HookAction, HookEvent, HookMatcher};

/// One hook: run `action` when `event` happens, for tools that `matcher` accepts.
///
/// The matcher only applies to [`HookEvent::PreToolUse`] and [`HookEvent::PostToolUse`];
/// on the other events it is ignored. `None` matches every tool.
///
/// ```
/// use hooks_runtime::declarative::{HookAction, HookConfig, HookEvent, HookMatcher};
///
/// let hook = HookConfig::new(
///     HookEvent::PreToolUse,
///     Some(HookMatcher::new("file_*")),
///     HookAction::log("${tool} starting"),
/// );
/// assert!(hook.selects(HookEvent::PreToolUse, Some("file_read")));
/// assert!(!hook.selects(HookEvent::PreToolUse, Some("search")));
/// assert_eq!(hook.to_string(), r#"preToolUse matcher=file_* log "${tool} starting""#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct HookConfig {
    /// When the hook runs.
    pub event: HookEvent,
    /// Which tools it runs for; `None` means every tool.
    pub matcher: Option<HookMatcher>,
    /// What it does.
    pub action: HookAction,
}

impl HookConfig {
    /// A hook.
    pub fn new(event: HookEvent, matcher: Option<HookMatcher>, action: HookAction) -> Self {
        HookConfig { event, matcher, action }
    }

    /// Whether this hook runs for `event` on the tool named `tool`.
    ///
    /// `tool` is `None` when the event is fired without a tool
    /// ([`fire_event`](super::DeclarativeHookRegistry::fire_event)); then only the event counts.
    pub fn selects(&self, event: HookEvent, tool: Option<&str>) -> bool {
        if self.event != event {
            return false;
        }
        match (&self.matcher, tool) {
            (Some(matcher), Some(tool)) if event.uses_matcher() => matcher.matches(tool),
            _ => true,
        }
    }
}

impl fmt::Display for HookConfig {
    /// `preToolUse matcher=file_* log "${tool} starting"`; `matcher=-` when there is none.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} matcher=", self.event)?;
        match &self.matcher {
            Some(matcher) => write!(f, "{matcher}")?,
            None => f.write_str("-")?,
        }
        write!(f, " {}", self.action)
    }
}
