//! What guards a model step, whatever the `Model`: the abort signal (checked while the step
//! waits on the model, not only between steps), the runtime's one panic path for a model that
//! panics, and the size caps of a response.

use std::future::Future;
use std::pin::Pin;

use hooks_core::AbortSignal;

use crate::dispatch::panics::{self, PanicLocation};
use crate::model::ModelError;

/// Why a model step ended without a complete response.
#[derive(Debug)]
pub(crate) enum StepError {
    /// The model answered with an error, or passed a cap.
    Model(ModelError),
    /// The abort signal fired while the step waited on the model.
    Aborted,
    /// The model's code panicked; the location is where, when it could be told.
    Panicked(PanicLocation),
}

impl From<ModelError> for StepError {
    fn from(error: ModelError) -> Self {
        StepError::Model(error)
    }
}

/// Returns once `signal` has fired: woken by the abort itself, no timer armed.
pub(crate) async fn aborted(signal: &AbortSignal) {
    signal.aborted().await;
}

/// Waits for `future` (a model's boxed future) with its panics caught as the runtime's own,
/// unprinted (see `dispatch::panics`), and stops waiting once `signal` fires.
pub(crate) async fn guarded<T>(
    signal: &AbortSignal,
    future: Pin<Box<dyn Future<Output = T> + Send + '_>>,
) -> Result<T, StepError> {
    if signal.is_aborted() {
        return Err(StepError::Aborted);
    }
    tokio::select! {
        biased;
        output = panics::catch_future(future) => output.map_err(StepError::Panicked),
        () = aborted(signal) => Err(StepError::Aborted),
    }
}

/// The size caps of one response ([`RuntimeBuilder::max_reply_bytes`](crate::RuntimeBuilder::max_reply_bytes),
/// [`RuntimeBuilder::max_tool_argument_bytes`](crate::RuntimeBuilder::max_tool_argument_bytes)),
/// and what the response holds so far.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Caps {
    max_reply_bytes: usize,
    max_tool_argument_bytes: usize,
    reply_bytes: usize,
    tool_argument_bytes: usize,
}

impl Caps {
    pub(crate) fn new(max_reply_bytes: usize, max_tool_argument_bytes: usize) -> Self {
        Caps { max_reply_bytes, max_tool_argument_bytes, reply_bytes: 0, tool_argument_bytes: 0 }
    }

    /// Counts a text delta into the reply, or fails naming the cap.
    pub(crate) fn add_reply_text(&mut self, text: &str) -> Result<(), ModelError> {
        self.reply_bytes = add(self.reply_bytes, text.len(), self.max_reply_bytes).ok_or_else(|| {
            ModelError::TooLarge(format!(
                "the reply text passed the runtime's cap of {} bytes (`RuntimeBuilder::max_reply_bytes`)",
                self.max_reply_bytes
            ))
        })?;
        Ok(())
    }

    /// Counts an arguments fragment into the response's tool calls, or fails naming the cap.
    pub(crate) fn add_tool_arguments(&mut self, fragment: &str) -> Result<(), ModelError> {
        self.tool_argument_bytes = add(self.tool_argument_bytes, fragment.len(), self.max_tool_argument_bytes)
            .ok_or_else(|| {
                ModelError::TooLarge(format!(
                    "the tool-call arguments passed the runtime's cap of {} bytes for all calls of a response \
                     (`RuntimeBuilder::max_tool_argument_bytes`)",
                    self.max_tool_argument_bytes
                ))
            })?;
        Ok(())
    }
}

fn add(so_far: usize, more: usize, cap: usize) -> Option<usize> {
    so_far.checked_add(more).filter(|total| *total <= cap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_refuse_the_byte_past_the_cap_and_name_the_setting() {
        let mut caps = Caps::new(4, 3);
        caps.add_reply_text("ab").unwrap();
        caps.add_reply_text("cd").unwrap();
        let error = caps.add_reply_text("e").unwrap_err().to_string();
        assert!(error.contains("cap of 4 bytes") && error.contains("RuntimeBuilder::max_reply_bytes"), "{error}");
        caps.add_tool_arguments("{}").unwrap();
        let error = caps.add_tool_arguments("xy").unwrap_err().to_string();
        assert!(error.contains("RuntimeBuilder::max_tool_argument_bytes"), "{error}");
    }
}
