use crate::def::HookDef;

/// A prompt's static definition, produced by `define_prompt!`; [`new`](Self::new) and the
/// `with_*` methods build one by hand.
#[derive(Debug)]
#[non_exhaustive]
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

impl PromptDef {
    /// Prompt `name`, run by model `model` with system prompt `prompt`: no tools, no hooks of
    /// its own, the chat history included and earlier tool calls left out.
    ///
    /// ```
    /// use hooks_runtime::definition::PromptDef;
    ///
    /// static TRIAGE: PromptDef = PromptDef::new("triage", "gpt-4o", "Sort the ticket.")
    ///     .with_tools(&["lookup_order"])
    ///     .with_include_past_tools(true);
    /// assert_eq!(TRIAGE.tools, ["lookup_order"]);
    /// assert!(TRIAGE.include_chat && TRIAGE.include_past_tools);
    /// ```
    pub const fn new(name: &'static str, model: &'static str, prompt: &'static str) -> Self {
        PromptDef {
            name,
            tool_description: None,
            model,
            prompt,
            tools: &[],
            hooks: &[],
            include_chat: true,
            include_past_tools: false,
        }
    }

    /// How the prompt describes itself when offered as a tool.
    #[must_use]
    pub const fn with_tool_description(mut self, tool_description: &'static str) -> Self {
        self.tool_description = Some(tool_description);
        self
    }

    /// The tool names the model may call.
    #[must_use]
    pub const fn with_tools(mut self, tools: &'static [&'static str]) -> Self {
        self.tools = tools;
        self
    }

    /// The prompt's hooks, in order.
    #[must_use]
    pub const fn with_hooks(mut self, hooks: &'static [&'static HookDef]) -> Self {
        self.hooks = hooks;
        self
    }

    /// Whether the conversation's chat history is included in requests.
    #[must_use]
    pub const fn with_include_chat(mut self, include_chat: bool) -> Self {
        self.include_chat = include_chat;
        self
    }

    /// Whether earlier tool calls and results are included in requests.
    #[must_use]
    pub const fn with_include_past_tools(mut self, include_past_tools: bool) -> Self {
        self.include_past_tools = include_past_tools;
        self
    }

    /// The names of the prompt's `{{name}}` placeholders (spaces inside the braces trimmed), in
    /// order of first appearance, each once: the arguments a thread needs for this prompt.
    ///
    /// ```
    /// use hooks_runtime::prelude::*;
    ///
    /// define_prompt! { name: support_prompt, model: "m", prompt: "Help {{customer}} with {{ order }}, {{customer}}." }
    ///
    /// assert_eq!(<support_prompt as Prompt>::DEF.argument_names(), ["customer", "order"]);
    /// ```
    pub fn argument_names(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = Vec::new();
        let mut rest = self.prompt;
        while let Some(start) = rest.find("{{") {
            let after = &rest[start + 2..];
            let Some(end) = after.find("}}") else { break };
            let name = after[..end].trim();
            if !name.is_empty() && !names.contains(&name) {
                names.push(name);
            }
            rest = &after[end + 2..];
        }
        names
    }
}

/// Implemented by the item `define_prompt!` emits, named by the prompt's name.
pub trait Prompt {
    /// The prompt's definition.
    const DEF: &'static PromptDef;
}
