//! What [`router_with`](crate::router_with) refuses in a [`ServerConfig`](crate::ServerConfig):
//! [`ConfigError`].

/// A [`ServerConfig`](crate::ServerConfig) that does not fit its runtime, found when the router
/// is built, so that a typo fails at startup instead of serving an empty catalog.
///
/// ```
/// use hooks_runtime::Runtime;
/// use hooks_server::{ConfigError, ServerConfig, StaticTokens};
///
/// let runtime = Runtime::builder().build().unwrap();
/// let config = ServerConfig::default().catalog(vec!["suport_agent".into()]);
/// let Err(error) = hooks_server::router_with(runtime, StaticTokens::default(), config) else { panic!() };
/// assert!(matches!(&error, ConfigError::UnknownCatalogAgent { name, .. } if name == "suport_agent"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// [`ServerConfig::catalog`](crate::ServerConfig::catalog) names an agent the runtime does
    /// not have.
    UnknownCatalogAgent {
        /// The name as the catalog has it.
        name: String,
        /// The runtime's agents, sorted.
        known: Vec<String>,
    },
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigError::UnknownCatalogAgent { name, known } => write!(
                f,
                "`ServerConfig::catalog` names `{name}`, which is no agent of the runtime; its agents are: {}",
                list(known)
            ),
        }
    }
}

impl std::error::Error for ConfigError {}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        return "none (register one with `Runtime::builder().agent::<...>()`)".to_owned();
    }
    names.iter().map(|name| format!("`{name}`")).collect::<Vec<_>>().join(", ")
}
