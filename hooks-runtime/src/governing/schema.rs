//! The tools' parameter schemas (G5), each compiled once: a builder's tools when the runtime is
//! built, so that no call pays for a compilation, and a tool added later (an MCP server's) on
//! its first call.

use foldhash::HashMap;
use std::sync::Arc;

use serde_json::Value;

use crate::tool::Tool;

type Compiled = Result<jsonschema::Validator, String>;

/// One compiled schema per tool, by name. The tools added to the runtime have a slot each; a
/// tool that came later (an MCP server's, whose schema the server may change) is compiled into
/// `later` on its first check, and again when its schema changed.
#[derive(Default)]
pub(crate) struct ToolSchemas {
    tools: HashMap<String, Compiled>,
    later: std::sync::Mutex<HashMap<String, (Value, Arc<Compiled>)>>,
}

/// Why arguments do not satisfy a tool's schema: where, never what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SchemaViolation {
    /// The JSON pointer of the failing keyword in the schema, e.g. `/properties/amount/type`.
    pub(crate) schema_path: String,
    /// The JSON pointer of the failing place in the arguments, e.g. `/amount`.
    pub(crate) instance_path: String,
}

impl std::fmt::Display for SchemaViolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.instance_path.is_empty() && self.schema_path.is_empty() {
            return f.write_str("the arguments do not satisfy the tool's parameters schema");
        }
        write!(
            f,
            "the arguments do not satisfy the tool's parameters schema at `{}` (schema `{}`)",
            if self.instance_path.is_empty() { "/" } else { &self.instance_path },
            self.schema_path
        )
    }
}

impl ToolSchemas {
    /// A slot for every tool; nothing is compiled yet.
    pub(crate) fn new<'a>(tools: impl IntoIterator<Item = (&'a String, &'a Arc<dyn Tool>)>) -> Self {
        ToolSchemas {
            tools: tools.into_iter().map(|(name, tool)| (name.clone(), compile(tool.as_ref()))).collect(),
            later: Default::default(),
        }
    }

    pub(crate) fn check(&self, tool: Option<&Arc<dyn Tool>>, arguments: &Value) -> Result<(), SchemaViolation> {
        let Some(tool) = tool else { return Ok(()) };
        let later;
        let compiled = match self.tools.get(tool.name()) {
            Some(compiled) => compiled,
            None => {
                later = self.compiled_later(tool.as_ref());
                later.as_ref()
            }
        };
        match compiled {
            Ok(validator) => match validator.iter_errors(arguments).next() {
                None => Ok(()),
                Some(error) => Err(SchemaViolation {
                    schema_path: error.schema_path().to_string(),
                    instance_path: error.instance_path().to_string(),
                }),
            },
            Err(_) => Err(SchemaViolation {
                schema_path: String::from("(the tool's parameters schema does not compile)"),
                instance_path: String::new(),
            }),
        }
    }
}

impl ToolSchemas {
    /// The compiled schema of a tool that has no slot, compiled again when its schema changed.
    fn compiled_later(&self, tool: &dyn Tool) -> Arc<Compiled> {
        let schema = tool.parameters();
        let mut later = self.later.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((known, compiled)) = later.get(tool.name())
            && *known == schema
        {
            return compiled.clone();
        }
        let compiled = Arc::new(compile_schema(&schema));
        later.insert(tool.name().to_owned(), (schema, compiled.clone()));
        compiled
    }
}

/// A tool's parameters schema, compiled; a schema that does not compile fails its calls' checks.
fn compile(tool: &dyn Tool) -> Compiled {
    compile_schema(&tool.parameters())
}

fn compile_schema(schema: &Value) -> Compiled {
    jsonschema::validator_for(schema).map_err(|error| error.to_string())
}
