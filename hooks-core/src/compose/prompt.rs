use crate::def::HookDef;

/// A prompt's static definition, produced by `define_prompt!`.
#[derive(Debug)]
pub struct PromptDef {
    /// The prompt's name.
    pub name: &'static str,
    /// How the prompt describes itself when offered as a tool.
    pub tool_description: Option<&'static str>,
    /// The model's name, as the runtime's model registry knows it.
    pub model: &'static str,
    /// The system prompt text.
    pub prompt: &'static str,
    /// Tool names the model may call; a name that is an agent is a handoff target (S10).
    pub tools: &'static [&'static str],
    /// The prompt's hooks, in order. Empty: the agent's hooks apply (S3).
    pub hooks: &'static [&'static HookDef],
    /// Whether the conversation's chat history is included in requests.
    pub include_chat: bool,
    /// Whether earlier tool calls and results are included in requests.
    pub include_past_tools: bool,
}

/// Implemented by the item `define_prompt!` emits, named by the prompt's name.
pub trait Prompt {
    /// The prompt's definition.
    const DEF: &'static PromptDef;
}
