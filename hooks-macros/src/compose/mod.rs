//! `define_prompt!` and `define_agent!`: fields parsed into a model, validated, expanded into a
//! const-built definition behind a companion item named by the `name`.

mod agent;
mod expand;
mod prompt;

pub(crate) use agent::define_agent;
pub(crate) use prompt::define_prompt;
