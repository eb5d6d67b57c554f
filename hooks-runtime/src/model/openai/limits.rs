//! The limits one request runs under: the idle timeout and the total deadline ([`Deadline`]), and
//! the size caps of a response ([`Caps`]). Each error names the limit that was hit, its value and
//! the setting that changes it, never anything the response said.

use std::time::Duration;

use tokio::time::Instant;

use super::OpenAiConfig;
use crate::model::ModelError;

/// What the request is waiting for, for the idle timeout's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Waiting {
    /// The response's status and headers.
    Answer,
    /// The next piece of the body.
    Body,
}

/// When the request must be done by, and how long any one wait may last.
#[derive(Debug, Clone, Copy)]
pub(super) struct Deadline {
    at: Instant,
    total: Duration,
    idle: Duration,
}

impl Deadline {
    /// The deadline of a request that starts now.
    pub(super) fn start(config: &OpenAiConfig) -> Self {
        let total = config.deadline();
        // A deadline too far away to represent is no deadline.
        let at = Instant::now().checked_add(total).unwrap_or_else(far_future);
        Deadline { at, total, idle: config.request_timeout() }
    }

    /// Waits for `future` until the idle timeout or the total deadline, whichever comes first.
    pub(super) async fn wait<F: Future>(&self, waiting: Waiting, future: F) -> Result<F::Output, ModelError> {
        // Checked first as well: `timeout_at` polls the future before its timer, so a future
        // that is ready at every poll (an endpoint that floods keep-alives) is never timed out.
        self.check()?;
        let idle_at = Instant::now().checked_add(self.idle).unwrap_or_else(far_future);
        match tokio::time::timeout_at(idle_at.min(self.at), future).await {
            Ok(output) => Ok(output),
            Err(_) if idle_at < self.at => Err(self.idle_error(waiting)),
            Err(_) => Err(self.total_error()),
        }
    }

    /// Whether waiting `wait` from now still leaves time before the total deadline.
    pub(super) fn leaves(&self, wait: Duration) -> bool {
        Instant::now().checked_add(wait).is_some_and(|then| then < self.at)
    }

    /// Fails once the total deadline has passed.
    fn check(&self) -> Result<(), ModelError> {
        if Instant::now() >= self.at { Err(self.total_error()) } else { Ok(()) }
    }

    fn idle_error(&self, waiting: Waiting) -> ModelError {
        let idle = self.idle;
        ModelError::Timeout(match waiting {
            Waiting::Answer => format!("the model endpoint did not answer within {idle:?}"),
            Waiting::Body => format!("the model endpoint sent nothing for {idle:?}"),
        })
    }

    fn total_error(&self) -> ModelError {
        ModelError::Timeout(format!(
            "the request passed its total deadline of {:?} (`OpenAiConfig::with_deadline`)",
            self.total
        ))
    }
}

/// About thirty years from now: later than any deadline that matters.
fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(86_400 * 365 * 30)
}

/// How much of each kind a response may hold, and how much it holds so far.
#[derive(Debug, Clone)]
pub(super) struct Caps {
    max_reply_bytes: usize,
    max_tool_argument_bytes: usize,
    reply_bytes: usize,
    tool_argument_bytes: usize,
}

impl Default for Caps {
    fn default() -> Self {
        Caps::new(&OpenAiConfig::default())
    }
}

impl Caps {
    pub(super) fn new(config: &OpenAiConfig) -> Self {
        Caps {
            max_reply_bytes: config.max_reply_bytes(),
            max_tool_argument_bytes: config.max_tool_argument_bytes(),
            reply_bytes: 0,
            tool_argument_bytes: 0,
        }
    }

    /// Counts `text` into the reply, or fails if it would pass the cap.
    pub(super) fn add_reply_text(&mut self, text: &str) -> Result<(), ModelError> {
        self.reply_bytes = add(self.reply_bytes, text.len(), self.max_reply_bytes, || {
            format!(
                "the reply text passed the cap of {} (`OpenAiConfig::with_max_reply_bytes`)",
                show_bytes(self.max_reply_bytes)
            )
        })?;
        Ok(())
    }

    /// Counts a fragment into the tool-call arguments, or fails if it would pass the cap.
    pub(super) fn add_tool_arguments(&mut self, fragment: &str) -> Result<(), ModelError> {
        self.tool_argument_bytes = add(self.tool_argument_bytes, fragment.len(), self.max_tool_argument_bytes, || {
            format!(
                "the tool-call arguments passed the cap of {} for all calls of a response \
                 (`OpenAiConfig::with_max_tool_argument_bytes`)",
                show_bytes(self.max_tool_argument_bytes)
            )
        })?;
        Ok(())
    }
}

fn add(so_far: usize, more: usize, cap: usize, detail: impl FnOnce() -> String) -> Result<usize, ModelError> {
    match so_far.checked_add(more) {
        Some(total) if total <= cap => Ok(total),
        _ => Err(ModelError::TooLarge(detail())),
    }
}

/// A byte count as people write it: `8 MiB`, `64 KiB`, or `1000 bytes`.
fn show_bytes(bytes: usize) -> String {
    const KIB: usize = 1024;
    const MIB: usize = 1024 * KIB;
    match bytes {
        0 => "0 bytes".to_owned(),
        _ if bytes.is_multiple_of(MIB) => format!("{} MiB", bytes / MIB),
        _ if bytes.is_multiple_of(KIB) => format!("{} KiB", bytes / KIB),
        1 => "1 byte".to_owned(),
        _ => format!("{bytes} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts_are_shown_in_the_largest_exact_unit() {
        assert_eq!(show_bytes(8 * 1024 * 1024), "8 MiB");
        assert_eq!(show_bytes(64 * 1024), "64 KiB");
        assert_eq!(show_bytes(1000), "1000 bytes");
        assert_eq!(show_bytes(1), "1 byte");
        assert_eq!(show_bytes(0), "0 bytes");
    }

    #[test]
    fn a_cap_allows_exactly_its_value_and_not_one_byte_more() {
        let mut caps = Caps::new(&OpenAiConfig::default().with_max_reply_bytes(4).with_max_tool_argument_bytes(2));
        assert_eq!(caps.add_reply_text("abcd"), Ok(()));
        assert_eq!(
            caps.add_reply_text("e"),
            Err(ModelError::TooLarge(
                "the reply text passed the cap of 4 bytes (`OpenAiConfig::with_max_reply_bytes`)".into()
            ))
        );
        assert_eq!(caps.add_tool_arguments("{}"), Ok(()));
        let Err(ModelError::TooLarge(detail)) = caps.add_tool_arguments(" ") else { panic!("expected TooLarge") };
        assert!(detail.contains("cap of 2 bytes") && detail.contains("with_max_tool_argument_bytes"), "{detail}");
    }

    #[tokio::test(start_paused = true)]
    async fn the_nearer_of_idle_timeout_and_deadline_ends_a_wait_and_says_which() {
        let config = OpenAiConfig::default().with_timeout(Duration::from_secs(3)).with_deadline(Duration::from_secs(5));
        let deadline = Deadline::start(&config);
        let idle = deadline.wait(Waiting::Body, std::future::pending::<()>()).await;
        assert_eq!(idle, Err(ModelError::Timeout("the model endpoint sent nothing for 3s".into())));
        let total = deadline.wait(Waiting::Body, std::future::pending::<()>()).await;
        let expected = "the request passed its total deadline of 5s (`OpenAiConfig::with_deadline`)";
        assert_eq!(total, Err(ModelError::Timeout(expected.into())));
        assert_eq!(deadline.wait(Waiting::Body, async {}).await, Err(ModelError::Timeout(expected.into())));
    }
}
