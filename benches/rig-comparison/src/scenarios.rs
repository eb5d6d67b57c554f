//! The scenarios, in both frameworks: the agents, the fake model each calls, the tool, the hooks,
//! and one turn of each. `main.rs` times them; `bin/allocations.rs` counts what a turn allocates.

use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Messages in the thread (hooks-runtime) or the caller's history (rig) before the turn.
pub const HISTORY: usize = 10;
/// What the trimming hooks keep: the last 4 messages of the 11 (the history and the user's
/// message), so the model is sent 4.
pub const KEEP: usize = 4;
pub const TOOL: &str = "lookup";
pub const PROMPT: &str = "What did we say?";
pub const REPLY: &str = "A short reply.";
const ARGUMENTS: &str = r#"{"key":"answer"}"#;

/// How many conversation messages the fake model was last sent (system prompt not counted), for
/// the check before timing that both frameworks send the model the same messages. Both fakes
/// store it, the one thing they do besides answering.
pub static SENT: AtomicUsize = AtomicUsize::new(0);

fn history_text(i: usize) -> String {
    format!("Message {i}: a line of conversation of ordinary length, about sixty-four characters.")
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scenario {
    /// A text turn.
    Text,
    /// A text turn with 4 history hooks that keep every message.
    Hooks,
    /// A text turn with a hook that keeps the last `KEEP` messages.
    Trim,
    /// A turn with one tool call: the call, the tool, its result, the answer.
    Tool,
}

impl Scenario {
    pub const ALL: [Scenario; 4] = [Scenario::Text, Scenario::Hooks, Scenario::Trim, Scenario::Tool];

    pub fn name(self) -> &'static str {
        match self {
            Scenario::Text => "text turn",
            Scenario::Hooks => "text turn, 4 history hooks (keep all)",
            Scenario::Trim => "text turn, trimming hook (last 4)",
            Scenario::Tool => "one tool call",
        }
    }
}

// ---------------------------------------------------------------------------------------------
// hooks-runtime
// ---------------------------------------------------------------------------------------------

pub mod hr {
    use super::*;
    use hooks_runtime::model::{Model, ModelError, ModelEvent, ModelRequest, ModelStream};
    use hooks_runtime::prelude::*;
    use hooks_runtime::store::InMemoryStore;
    use hooks_runtime::tool::FnTool;
    use hooks_runtime::{RunOutcome, Runtime, Thread, ThreadOptions};

    #[hook(filter_messages, id = "keep_all_0")]
    fn keep_all_0(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
        black_box(messages);
    }

    #[hook(filter_messages, id = "keep_all_1")]
    fn keep_all_1(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
        black_box(messages);
    }

    #[hook(filter_messages, id = "keep_all_2")]
    fn keep_all_2(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
        black_box(messages);
    }

    #[hook(filter_messages, id = "keep_all_3")]
    fn keep_all_3(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
        black_box(messages);
    }

    #[hook(filter_messages, id = "keep_last")]
    fn keep_last(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
        keep_last_messages(messages, KEEP);
    }

    define_prompt! { name: p_text, model: "minimal", prompt: "Reply.", tools: [] }
    define_prompt! {
        name: p_hooks, model: "minimal", prompt: "Reply.", tools: [],
        hooks: [keep_all_0, keep_all_1, keep_all_2, keep_all_3],
    }
    define_prompt! { name: p_trim, model: "minimal", prompt: "Reply.", tools: [], hooks: [keep_last] }
    define_prompt! { name: p_tool, model: "minimal", prompt: "Reply.", tools: ["lookup"] }
    define_agent! { name: a_text, side_a: { prompt: p_text, stop_on_response: true }, side_b: { human: true } }
    define_agent! { name: a_hooks, side_a: { prompt: p_hooks, stop_on_response: true }, side_b: { human: true } }
    define_agent! { name: a_trim, side_a: { prompt: p_trim, stop_on_response: true }, side_b: { human: true } }
    define_agent! { name: a_tool, side_a: { prompt: p_tool, stop_on_response: true }, side_b: { human: true } }

    /// The least a model can be: one text delta, or, for an agent with tools answering the
    /// user's message, one call of the tool whose arguments come in one fragment. Keeps nothing.
    struct MinimalModel;

    #[hooks_runtime::async_trait]
    impl Model for MinimalModel {
        async fn stream(&self, request: ModelRequest) -> Result<Box<dyn ModelStream>, ModelError> {
            SENT.store(
                request.messages.iter().filter(|message| message.role != "system").count(),
                Ordering::Relaxed,
            );
            let last_is_user = request.messages.last().is_some_and(|message| message.role == "user");
            let events = if last_is_user && !request.tools.is_empty() {
                vec![
                    ModelEvent::ToolCallStart { index: 0, id: "call_1".into(), name: TOOL.into() },
                    ModelEvent::ToolCallArguments { index: 0, fragment: ARGUMENTS.into() },
                    ModelEvent::ToolCallEnd { index: 0 },
                ]
            } else {
                vec![ModelEvent::TextDelta(REPLY.into())]
            };
            Ok(Box::new(MinimalStream(events.into_iter())))
        }
    }

    struct MinimalStream(std::vec::IntoIter<ModelEvent>);

    #[hooks_runtime::async_trait]
    impl ModelStream for MinimalStream {
        async fn next_event(&mut self) -> Option<Result<ModelEvent, ModelError>> {
            self.0.next().map(Ok)
        }
    }

    pub fn agent(scenario: Scenario) -> &'static str {
        match scenario {
            Scenario::Text => "a_text",
            Scenario::Hooks => "a_hooks",
            Scenario::Trim => "a_trim",
            Scenario::Tool => "a_tool",
        }
    }

    /// A runtime on the in-memory store with the four agents.
    pub fn runtime() -> Runtime {
        let lookup = FnTool::new(TOOL, "Looks a number up.", |_arguments| async { HookToolResult::success("42") });
        Runtime::builder()
            .store(InMemoryStore::new())
            .agent::<a_text>()
            .agent::<a_hooks>()
            .agent::<a_trim>()
            .agent::<a_tool>()
            .model("minimal", MinimalModel)
            .tool(lookup)
            .build()
            .expect("the agents resolve")
    }

    /// A thread holding `HISTORY` messages (not timed).
    pub async fn thread(runtime: &Runtime, scenario: Scenario) -> Thread {
        let thread = runtime.create_thread(agent(scenario), ThreadOptions::default()).await.unwrap();
        for i in 0..HISTORY {
            let role = if i % 2 == 0 { Role::User } else { Role::Assistant };
            thread.inject_message(MessageRecord::new(role, history_text(i))).await.unwrap();
        }
        thread
    }

    /// The turn: the user's message in, the reply out, both stored in the thread.
    pub async fn turn(thread: &Thread) -> RunOutcome {
        thread.send(PROMPT).await.unwrap()
    }

    pub fn check(outcome: &RunOutcome) {
        assert_eq!(outcome.reply.as_deref(), Some(REPLY));
    }
}

// ---------------------------------------------------------------------------------------------
// rig
// ---------------------------------------------------------------------------------------------

pub mod rig {
    use super::*;
    use rig_agent::agent::{AgentHook, CompletionCallAction, CompletionCallEvent, HookContext, RequestPatch};
    use rig_agent::tool::{Tool, ToolContext};
    use rig_agent::{Agent, AgentBuilder};
    use rig_core::completion::{AssistantContent, CompletionRequest, CompletionResponse, Usage};
    use rig_core::driver::{Exchange, Model, Opened, Opening, Transport};
    use rig_core::error::ProviderError;
    use rig_core::message::{Message, Origin, ToolCall, ToolFunction, ToolName, UserContent};
    use rig_core::test_utils::{MOCK_API, MOCK_PROVIDER, MockFrame, MockScript};
    use rig_core::wire::Mode;

    /// The same fake as hooks-runtime's, as rig's transport under its scripted wire
    /// (`MockScript`, whose payload is the request as the runtime made it): a run's blocking
    /// call is answered with one response of one text part, or, for an agent with tools
    /// answering the user's message, one tool call whose arguments are parsed from one piece.
    /// Keeps nothing (rig's own `MockRuntime` records every request; this one does not).
    #[derive(Clone)]
    pub struct MinimalTransport;

    impl Transport<MockScript> for MinimalTransport {
        fn send(&self, request: CompletionRequest, exchange: Exchange) -> Opening<MockFrame> {
            let conversation = request.chat_history.iter().filter(|message| !matches!(***message, Message::System { .. }));
            SENT.store(conversation.count(), Ordering::Relaxed);
            if !matches!(exchange.mode, Mode::Unary) {
                return Opening::failed(ProviderError::Provider("the fake answers blocking calls only".into()));
            }
            let answers_tool = match request.chat_history.last().map(|message| &**message) {
                Some(Message::User { content }) => {
                    content.iter().any(|part| matches!(part, UserContent::ToolResult(_)))
                }
                _ => false,
            };
            let content = if !request.tools.is_empty() && !answers_tool {
                let arguments = serde_json::from_str(ARGUMENTS).unwrap();
                let function = ToolFunction::new(ToolName::new(TOOL).unwrap(), arguments);
                AssistantContent::ToolCall(ToolCall::from_wire("call_1", function))
            } else {
                AssistantContent::text(REPLY)
            };
            let origin = Origin::new(MOCK_API, MOCK_PROVIDER, "");
            let response = CompletionResponse::new(vec![content], Usage::default(), origin, serde_json::Value::Null);
            Opening::ready(Opened::new(futures::stream::iter([Ok(MockFrame::Response(Box::new(response)))])))
        }
    }

    /// hooks-runtime's in-place `filter_messages` hook that keeps every message, in rig: a
    /// completion-call hook (before every model call, seeing the history) that looks at the
    /// history and sends the request unchanged.
    struct KeepAll;

    impl AgentHook for KeepAll {
        async fn on_completion_call(&self, _ctx: &HookContext, event: CompletionCallEvent<'_>) -> CompletionCallAction {
            black_box(event.history);
            CompletionCallAction::Continue
        }
    }

    /// Keeps the last `KEEP` messages: rig's completion-call event holds the history before the
    /// prompt, so the hook keeps the last `KEEP - 1` of it and the prompt follows (a request
    /// patch replacing this call's history; the history the run keeps is untouched, as in
    /// hooks-runtime).
    struct KeepLast;

    impl AgentHook for KeepLast {
        async fn on_completion_call(&self, _ctx: &HookContext, event: CompletionCallEvent<'_>) -> CompletionCallAction {
            let keep = KEEP - 1;
            if event.history.len() <= keep {
                return CompletionCallAction::Continue;
            }
            let history = event.history[event.history.len() - keep..].to_vec();
            CompletionCallAction::Patch(RequestPatch { history: Some(history), ..RequestPatch::default() })
        }
    }

    #[derive(Debug)]
    pub struct Never;

    impl std::fmt::Display for Never {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("never")
        }
    }

    impl std::error::Error for Never {}

    /// hooks-runtime's `FnTool` "lookup": any arguments, the text "42".
    struct Lookup;

    impl Tool for Lookup {
        const NAME: &'static str = TOOL;
        type Args = serde_json::Value;
        type Output = String;
        type Error = Never;

        fn description(&self) -> String {
            "Looks a number up.".to_string()
        }

        fn parameters(&self) -> serde_json::Value {
            serde_json::json!({ "type": "object" })
        }

        async fn call(&self, _context: &mut ToolContext, _args: Self::Args) -> Result<String, Never> {
            Ok("42".to_string())
        }
    }

    pub fn agent(scenario: Scenario) -> Agent {
        let model = Model::new(MockScript::default(), MinimalTransport);
        // The budget of model calls: two for the tool turn (the call, then the answer).
        let builder = AgentBuilder::new(model).preamble("Reply.").default_max_turns(2);
        match scenario {
            Scenario::Text => builder.build(),
            Scenario::Hooks => builder.add_hook(KeepAll).add_hook(KeepAll).add_hook(KeepAll).add_hook(KeepAll).build(),
            Scenario::Trim => builder.add_hook(KeepLast).build(),
            Scenario::Tool => builder.tool(Lookup).build(),
        }
    }

    /// The caller's history of `HISTORY` messages (not timed).
    pub fn history() -> Vec<Message> {
        (0..HISTORY)
            .map(|i| if i % 2 == 0 { Message::user(history_text(i)) } else { Message::assistant(history_text(i)) })
            .collect()
    }

    /// The turn: `Agent::chat`, rig's run against caller-owned history that appends the
    /// messages the run committed to it (the counterpart of a thread that stores them).
    pub async fn turn(agent: &Agent, history: &mut Vec<Message>) -> rig_agent::agent::PromptResponse {
        agent.chat(PROMPT, history).await.unwrap()
    }

    pub fn check(response: &rig_agent::agent::PromptResponse, history: &[Message], scenario: Scenario) {
        assert_eq!(response.output(), REPLY);
        let added = if scenario == Scenario::Tool { 4 } else { 2 };
        assert_eq!(history.len(), HISTORY + added, "{scenario:?}: the messages the turn added");
    }
}
