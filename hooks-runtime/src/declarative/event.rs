//! The five moments a declarative hook can be attached to.

use std::fmt;
use std::str::FromStr;

/// When a declarative hook runs.
///
/// YAML files name events in camelCase (`preToolUse`) or upper snake case (`PRE_TOOL_USE`);
/// [`FromStr`] accepts both spellings and nothing else.
///
/// ```
/// use hooks_runtime::declarative::HookEvent;
///
/// assert_eq!("preToolUse".parse::<HookEvent>(), Ok(HookEvent::PreToolUse));
/// assert_eq!("ON_ERROR".parse::<HookEvent>(), Ok(HookEvent::OnError));
/// assert_eq!(HookEvent::PostToolUse.to_string(), "postToolUse");
/// assert!("pretooluse".parse::<HookEvent>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum HookEvent {
    /// Before each tool call that passed the agent's authorization check.
    PreToolUse,
    /// After each tool call, whether it succeeded or failed.
    PostToolUse,
    /// After a failed tool call, right after [`HookEvent::PostToolUse`].
    OnError,
    /// Once for each [`apply_to`](super::DeclarativeHookRegistry::apply_to) call.
    OnStart,
    /// Never fired by the registry; only by the caller's own
    /// [`fire_event`](super::DeclarativeHookRegistry::fire_event).
    OnStop,
}

impl HookEvent {
    /// Every event, in declaration order.
    pub const ALL: [HookEvent; 5] =
        [HookEvent::PreToolUse, HookEvent::PostToolUse, HookEvent::OnError, HookEvent::OnStart, HookEvent::OnStop];

    /// The camelCase name, as written in YAML and put in the `event` context value.
    pub const fn camel_case(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "preToolUse",
            HookEvent::PostToolUse => "postToolUse",
            HookEvent::OnError => "onError",
            HookEvent::OnStart => "onStart",
            HookEvent::OnStop => "onStop",
        }
    }

    /// The upper snake case name (`PRE_TOOL_USE`).
    pub const fn upper_snake_case(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PRE_TOOL_USE",
            HookEvent::PostToolUse => "POST_TOOL_USE",
            HookEvent::OnError => "ON_ERROR",
            HookEvent::OnStart => "ON_START",
            HookEvent::OnStop => "ON_STOP",
        }
    }

    /// The context values the runtime gives hooks of this event, or `None` for `ON_STOP`, which
    /// only [`fire_event`](super::DeclarativeHookRegistry::fire_event) fires, with whatever
    /// context it is given. A `${name}` that is not among them is written out as it is (Y10).
    ///
    /// ```
    /// use hooks_runtime::declarative::HookEvent;
    ///
    /// assert_eq!(HookEvent::PreToolUse.context_names(), Some(&["tool", "event"][..]));
    /// assert_eq!(HookEvent::OnStop.context_names(), None);
    /// ```
    pub const fn context_names(self) -> Option<&'static [&'static str]> {
        match self {
            HookEvent::PreToolUse => Some(&["tool", "event"]),
            HookEvent::PostToolUse => Some(&["tool", "event", "success", "latencyMs"]),
            HookEvent::OnError => Some(&["tool", "event", "success", "latencyMs", "error"]),
            HookEvent::OnStart => Some(&["agent"]),
            HookEvent::OnStop => None,
        }
    }

    /// Whether a hook's matcher is consulted for this event. Only the two per-call events
    /// have a tool name worth filtering on; `ON_ERROR` deliberately runs for every failing tool.
    pub const fn uses_matcher(self) -> bool {
        matches!(self, HookEvent::PreToolUse | HookEvent::PostToolUse)
    }
}

impl fmt::Display for HookEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.camel_case())
    }
}

/// A string that names no [`HookEvent`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown event `{name}`{}", self.advice())]
pub struct UnknownHookEvent {
    name: String,
}

impl UnknownHookEvent {
    /// The rejected name, as written.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The event the name was probably meant to be: same letters, other case or underscores.
    fn suggestion(&self) -> Option<HookEvent> {
        let folded = fold(&self.name);
        HookEvent::ALL.into_iter().find(|event| fold(event.camel_case()) == folded)
    }
}

fn fold(name: &str) -> String {
    name.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect()
}

impl UnknownHookEvent {
    /// What the name was probably meant to be, or else the names there are.
    fn advice(&self) -> String {
        match self.suggestion() {
            Some(event) => format!("; did you mean `{}` or `{}`?", event.camel_case(), event.upper_snake_case()),
            None => "; expected one of `preToolUse`, `postToolUse`, `onError`, `onStart`, `onStop` \
                     (or the UPPER_SNAKE spelling)"
                .to_owned(),
        }
    }
}

impl FromStr for HookEvent {
    type Err = UnknownHookEvent;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        HookEvent::ALL
            .into_iter()
            .find(|event| name == event.camel_case() || name == event.upper_snake_case())
            .ok_or_else(|| UnknownHookEvent { name: name.to_owned() })
    }
}
