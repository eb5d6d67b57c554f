//! The echo model of the concurrency bench and the concurrency test (`tests/tests/it/concurrency.rs`
//! includes this file): it answers from the request alone, so any number of threads can share
//! it. When the last message is the user's it calls its tool with `{"tag": <the message>}`;
//! when it is the tool's result it replies `done:<result>`.

use std::collections::VecDeque;

use hooks_runtime::model::{Model, ModelError, ModelEvent, ModelRequest, ModelStream};
use serde_json::json;

/// A model that calls `tool` once per user message, then replies with the tool's result.
pub(crate) struct EchoModel {
    tool: &'static str,
    interleaved: bool,
}

impl EchoModel {
    /// Each answer streams at once, the tool's arguments in one fragment.
    pub(crate) fn new(tool: &'static str) -> Self {
        EchoModel { tool, interleaved: false }
    }

    /// Yields to the scheduler before each event and cuts the arguments and the reply in two,
    /// so that threads sharing worker threads interleave in the middle of their streams.
    #[allow(dead_code, reason = "the bench streams at once; the test interleaves")]
    pub(crate) fn interleaved(mut self) -> Self {
        self.interleaved = true;
        self
    }
}

#[hooks_runtime::async_trait]
impl Model for EchoModel {
    async fn stream(&self, request: ModelRequest) -> Result<Box<dyn ModelStream>, ModelError> {
        let last = request.messages.last().ok_or_else(|| ModelError::Other("empty request".into()))?;
        let content = last.content.clone().unwrap_or_default();
        let events = match &*last.role {
            "user" => {
                let arguments = json!({ "tag": content }).to_string();
                let mut events =
                    vec![ModelEvent::ToolCallStart { index: 0, id: format!("call_{content}"), name: self.tool.into() }];
                if self.interleaved {
                    let (head, tail) = arguments.split_at(arguments.len() / 2);
                    events.push(ModelEvent::ToolCallArguments { index: 0, fragment: head.to_owned() });
                    events.push(ModelEvent::ToolCallArguments { index: 0, fragment: tail.to_owned() });
                } else {
                    events.push(ModelEvent::ToolCallArguments { index: 0, fragment: arguments });
                }
                events.push(ModelEvent::ToolCallEnd { index: 0 });
                events
            }
            "tool" if self.interleaved => vec![ModelEvent::TextDelta("done:".into()), ModelEvent::TextDelta(content)],
            "tool" => vec![ModelEvent::TextDelta(format!("done:{content}"))],
            other => return Err(ModelError::Other(format!("unexpected last message from {other}"))),
        };
        Ok(Box::new(EchoStream { events: events.into(), interleaved: self.interleaved }))
    }
}

struct EchoStream {
    events: VecDeque<ModelEvent>,
    interleaved: bool,
}

#[hooks_runtime::async_trait]
impl ModelStream for EchoStream {
    async fn next_event(&mut self) -> Option<Result<ModelEvent, ModelError>> {
        if self.interleaved {
            tokio::task::yield_now().await;
        }
        self.events.pop_front().map(Ok)
    }
}
