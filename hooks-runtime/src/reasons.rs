//! Why a run stopped early or failed: [`StopReason`] and [`FailReason`], the reasons of
//! [`ThreadStatus::Stopped`](crate::store::ThreadStatus::Stopped) and
//! [`ThreadStatus::Failed`](crate::store::ThreadStatus::Failed). On the wire and in a store's
//! status columns each is its snake_case name (`max_steps`, `model_error`).

use std::fmt;
use std::hash::{Hash, Hasher};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One reason enum: its variants with their wire name and the sentence that says when the
/// reason happens (the variant's rustdoc and [`description`](StopReason::description) both).
macro_rules! reasons {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $($variant:ident = $wire:literal => $description:literal,)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone)]
        #[non_exhaustive]
        pub enum $name {
            $(
                #[doc = concat!("`", $wire, "`: ", $description, ".")]
                $variant,
            )*
            /// A reason this version does not know (a store or a newer process wrote it), kept
            /// as written so that reading it back never fails. Equal to the variant of the same
            /// name when it holds a known reason.
            Other(String),
        }

        impl $name {
            /// The reason's wire name, as stored and sent (`max_steps`, `model_error`).
            pub fn as_str(&self) -> &str {
                match self {
                    $($name::$variant => $wire,)*
                    $name::Other(reason) => reason,
                }
            }

            /// When the reason happens, in a sentence; `None` for [`Other`](Self::Other).
            pub fn description(&self) -> Option<&'static str> {
                match self.known() {
                    $(Some($name::$variant) => Some($description),)*
                    _ => None,
                }
            }

            /// The reason named `reason`: its variant, or [`Other`](Self::Other) for a name this
            /// version does not know.
            pub fn parse(reason: &str) -> Self {
                match reason {
                    $($wire => $name::$variant,)*
                    other => $name::Other(other.to_owned()),
                }
            }

            /// The variant this reason stands for, `Other` resolved to a known one when it can be.
            fn known(&self) -> Option<Self> {
                match self {
                    $name::Other(reason) => match $name::parse(reason) {
                        $name::Other(_) => None,
                        known => Some(known),
                    },
                    known => Some(known.clone()),
                }
            }
        }

        impl PartialEq for $name {
            fn eq(&self, other: &Self) -> bool {
                self.as_str() == other.as_str()
            }
        }

        impl Eq for $name {}

        impl Hash for $name {
            fn hash<H: Hasher>(&self, state: &mut H) {
                self.as_str().hash(state);
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl From<&str> for $name {
            fn from(reason: &str) -> Self {
                $name::parse(reason)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let reason = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
                Ok($name::parse(&reason))
            }
        }
    };
}

reasons! {
    /// Why a run stopped early, on purpose or at a limit: the thread is `stopped`, not
    /// `failed`, and a later run goes on from what was stored.
    ///
    /// ```
    /// use hooks_runtime::store::{StopReason, ThreadStatus};
    ///
    /// let status = ThreadStatus::Stopped(StopReason::MaxSteps);
    /// assert_eq!(StopReason::MaxSteps.as_str(), "max_steps");
    /// assert_eq!(status.to_string(), "stopped (max_steps)");
    /// assert_eq!(StopReason::parse("max_steps"), StopReason::MaxSteps);
    /// assert_eq!(StopReason::parse("from_a_newer_version").as_str(), "from_a_newer_version");
    /// ```
    pub enum StopReason {
        HookBlocked = "hook_blocked" =>
            "a `prefilter_llm_history` hook failed with `block: true`: its message was stored as the assistant's and the model request did not run",
        MaxSteps = "max_steps" =>
            "the responding side took its `max_steps` model steps without a reply that calls no tools",
        MaxTurns = "max_turns" =>
            "two model sides without `stop_on_response` handed the turn to each other 16 times",
        Aborted = "aborted" =>
            "the run was aborted (`Thread::abort`, `state.abort`); what was stored before stays",
        Cancelled = "cancelled" =>
            "the run's future was dropped before it finished (its caller gave up on it, such as a timeout)",
        RepeatedToolError = "repeated_tool_error" =>
            "one tool failed `repeated_tool_error_limit` times in a row in the turn",
        HookStopped = "hook_stopped" =>
            "a settings file's PreToolUse or PostToolUse hook answered `continue: false`; its `stopReason` went to the person as a `settings_hook_stop` event",
    }
}

reasons! {
    /// Why a run failed: the thread is `failed`. [`RunOutcome`](crate::RunOutcome)'s `error`
    /// carries the failure's text where there is one (the model's error, say).
    ///
    /// ```
    /// use hooks_runtime::store::{FailReason, ThreadStatus};
    ///
    /// let status = ThreadStatus::Failed(FailReason::ModelError);
    /// assert_eq!(status.to_string(), "failed (model_error)");
    /// assert!(matches!(status, ThreadStatus::Failed(FailReason::ModelError)));
    /// assert_eq!(serde_json::to_value(&status).unwrap(), serde_json::json!({"status": "failed", "reason": "model_error"}));
    /// ```
    pub enum FailReason {
        MessageHookError = "message_hook_error" =>
            "a before_create_message hook prevented the message that would start the run",
        UnknownModel = "unknown_model" =>
            "the prompt's model is not one the runtime was built with (RuntimeBuilder::model)",
        NoExecution = "no_execution" =>
            "the run had no execution state",
        ModelError = "model_error" =>
            "the model step failed (the provider's error, a broken stream); the outcome's error says how",
        Panicked = "panicked" =>
            "the model panicked, or the run's caller panicked while the run was going on",
        StoreError = "store_error" =>
            "the store failed part way through the run; the run's call returned the store's error",
        LeaseLost = "lease_lost" =>
            "the lease on the thread was lost (another process took it over, or renewing failed); the run \
             stopped and nothing more of it was stored",
        OwnerLost = "owner_lost" =>
            "the process running the thread stopped (it was killed or crashed) before the run ended; recovery \
             (Runtime::recover, or another process taking over the expired lease) settled the thread",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_reads_back_as_written() {
        for reason in ["hook_blocked", "max_steps", "max_turns", "aborted", "cancelled", "repeated_tool_error"] {
            let parsed = StopReason::parse(reason);
            assert!(!matches!(parsed, StopReason::Other(_)), "{reason}");
            assert_eq!(parsed.as_str(), reason);
            assert!(parsed.description().is_some());
        }
        let reasons = [
            "message_hook_error",
            "unknown_model",
            "no_execution",
            "model_error",
            "panicked",
            "store_error",
            "lease_lost",
            "owner_lost",
        ];
        for reason in reasons {
            let parsed = FailReason::parse(reason);
            assert!(!matches!(parsed, FailReason::Other(_)), "{reason}");
            assert_eq!(serde_json::to_value(&parsed).unwrap(), serde_json::json!(reason));
            assert_eq!(serde_json::from_value::<FailReason>(serde_json::json!(reason)).unwrap(), parsed);
        }
    }

    #[test]
    fn an_unknown_reason_is_kept_and_a_known_one_in_other_equals_its_variant() {
        let unknown = FailReason::parse("lease_expired");
        assert_eq!(unknown, FailReason::Other("lease_expired".into()));
        assert_eq!(unknown.description(), None);
        assert_eq!(FailReason::Other("model_error".into()), FailReason::ModelError);
        assert!(FailReason::Other("model_error".into()).description().is_some());
    }
}
