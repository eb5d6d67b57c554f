//! What a model step reports besides its reply: the tokens it used ([`Usage`]) and why the
//! reply ended ([`FinishReason`]).

use std::fmt;
use std::ops::{Add, AddAssign};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Tokens one response (or, summed, one run) used, as the provider counts them.
///
/// ```
/// use hooks_runtime::model::Usage;
///
/// let mut run = Usage::new(120, 30, 150);
/// run += Usage::new(200, 10, 210);
/// assert_eq!(run, Usage::new(320, 40, 360));
/// assert_eq!(serde_json::to_value(run).unwrap()["total_tokens"], 360);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Usage {
    /// Tokens of the request.
    pub prompt_tokens: u64,
    /// Tokens of the reply.
    pub completion_tokens: u64,
    /// All tokens, as the provider counts them (usually the sum of the two).
    pub total_tokens: u64,
}

impl Usage {
    /// Usage with these counts.
    pub fn new(prompt_tokens: u64, completion_tokens: u64, total_tokens: u64) -> Self {
        Usage { prompt_tokens, completion_tokens, total_tokens }
    }
}

impl Add for Usage {
    type Output = Usage;

    fn add(self, other: Usage) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens.saturating_add(other.prompt_tokens),
            completion_tokens: self.completion_tokens.saturating_add(other.completion_tokens),
            total_tokens: self.total_tokens.saturating_add(other.total_tokens),
        }
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        *self = *self + other;
    }
}

/// Why a model's reply ended, as the provider's `finish_reason` says.
///
/// Serialized as the provider's string: `"stop"`, `"length"`, `"tool_calls"`,
/// `"content_filter"`, or the other string itself.
///
/// ```
/// use hooks_runtime::model::FinishReason;
///
/// assert_eq!(FinishReason::from_provider("length"), FinishReason::Length);
/// assert_eq!(FinishReason::from_provider("function_call"), FinishReason::ToolCalls);
/// assert_eq!(FinishReason::from_provider("eos").as_str(), "eos");
/// assert!(FinishReason::Length.is_truncated());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FinishReason {
    /// The model finished its reply.
    Stop,
    /// The reply was cut at the most tokens the request or the model allows.
    Length,
    /// The model called tools.
    ToolCalls,
    /// The provider's content filter cut or withheld the reply.
    ContentFilter,
    /// A reason of no known kind, as the provider named it.
    Other(String),
}

impl FinishReason {
    /// The reason a provider's `finish_reason` string names (`function_call`, the legacy name,
    /// is [`ToolCalls`](Self::ToolCalls)).
    pub fn from_provider(reason: &str) -> Self {
        match reason {
            "stop" => FinishReason::Stop,
            "length" => FinishReason::Length,
            "tool_calls" | "function_call" => FinishReason::ToolCalls,
            "content_filter" => FinishReason::ContentFilter,
            other => FinishReason::Other(other.to_owned()),
        }
    }

    /// The provider's string for it.
    pub fn as_str(&self) -> &str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::ContentFilter => "content_filter",
            FinishReason::Other(other) => other,
        }
    }

    /// Whether the reply was cut short at the token limit ([`Length`](Self::Length)).
    pub fn is_truncated(&self) -> bool {
        *self == FinishReason::Length
    }
}

impl fmt::Display for FinishReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for FinishReason {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for FinishReason {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let reason = String::deserialize(deserializer)?;
        Ok(FinishReason::from_provider(&reason))
    }
}
