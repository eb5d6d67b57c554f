//! Why a runtime could not be built: [`BuildError`], whose messages name what to add or rename.

use foldhash::HashMap;
use std::fmt;

use hooks_core::{RegistryError, ResolutionError};

/// Why a runtime could not be built. It fails closed: no thread runs on a partial setup.
///
/// Its `Display` names what is wrong and how to fix it; its `Debug` is the same sentence, so a
/// `main` that returns it with `?` prints the sentence rather than a struct.
///
/// ```
/// use hooks_runtime::prelude::*;
/// use hooks_runtime::Runtime;
///
/// define_prompt! { name: greeter_prompt, model: "gpt", prompt: "Greet the user." }
/// define_agent! { name: greeter, side_a: { prompt: greeter_prompt } }
///
/// let error = Runtime::builder().agent::<greeter>().build().unwrap_err();
/// assert_eq!(
///     error.to_string(),
///     "prompt `greeter_prompt` uses model `gpt`, which was not added to the runtime; add it with `.model(\"gpt\", ...)`; no models were added"
/// );
/// assert_eq!(format!("{error:?}"), error.to_string());
/// ```
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Two linked hooks share an id (D3).
    #[error("hook registry: {0}")]
    Registry(#[source] RegistryError),
    /// An agent's hooks could not be resolved (S8).
    #[error("hook resolution: {0}")]
    Resolution(#[source] ResolutionError),
    /// A prompt names a model that was not added.
    #[error(
        "prompt `{prompt}` uses model `{model}`, which was not added to the runtime; add it with `.model(\"{model}\", ...)`; {}",
        registered_phrase("models", added)
    )]
    UnknownModel {
        /// The prompt.
        prompt: &'static str,
        /// The model name.
        model: &'static str,
        /// The names of the models that were added, sorted.
        added: Vec<String>,
    },
    /// Two agents with one name.
    #[error(
        "two different agents are named `{0}`; rename one (`define_agent! {{ name: .. }}`): the runtime finds agents by name"
    )]
    DuplicateAgent(&'static str),
    /// A prompt lists a tool that is neither a tool nor an agent of the runtime.
    #[error(
        "prompt `{prompt}` lists the tool `{tool}`, which is neither a tool nor an agent of the runtime; add it with `.tool(...)` or `.agent::<{tool}>()`; {}",
        registered_phrase("tools", added)
    )]
    UnknownTool {
        /// The prompt.
        prompt: &'static str,
        /// The tool name.
        tool: &'static str,
        /// The names of the tools that were added, sorted (agents are offered by name too).
        added: Vec<String>,
    },
    /// An MCP server's name is taken or cannot be part of `mcp__<server>__<tool>` (P1).
    #[error("the MCP server name `{name}` cannot be used: {problem}")]
    McpServerName {
        /// The name.
        name: String,
        /// Why not.
        problem: String,
    },
    /// A prompt lists an MCP tool (or wildcard) of a server that was not added (P1).
    #[error(
        "prompt `{prompt}` lists the tool `{tool}` of the MCP server `{server}`, which was not added to the runtime; add it with `.mcp_server(\"{server}\", ...)`; {}",
        registered_phrase("MCP servers", added)
    )]
    UnknownMcpServer {
        /// The prompt.
        prompt: &'static str,
        /// The tool entry as the prompt lists it.
        tool: &'static str,
        /// The server's part of it.
        server: String,
        /// The names of the MCP servers that were added.
        added: Vec<String>,
    },
}

/// "the models added are: `a`, `b`", or that there are none: what an unknown name could have been.
fn registered_phrase(what: &str, added: &[String]) -> String {
    if added.is_empty() {
        return format!("no {what} were added");
    }
    let names: Vec<String> = added.iter().map(|name| format!("`{name}`")).collect();
    format!("the {what} added are: {}", names.join(", "))
}

/// The keys of a registry, sorted, for an error that lists them.
pub(super) fn sorted_names<V>(registry: &HashMap<String, V>) -> Vec<String> {
    let mut names: Vec<String> = registry.keys().cloned().collect();
    names.sort_unstable();
    names
}

impl fmt::Debug for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
