//! The runtime-wide deciders of tool calls: its guards and its tools' parameter schemas, which
//! the gate runs every call through. The runtime owns them; the gate borrows them.

use std::sync::Arc;

use super::admission::AdmissionPipeline;
use super::guard::ToolGuard;
use super::schema::ToolSchemas;

/// What every tool call of a runtime is governed by, besides its thread's hooks.
pub(crate) struct Governors {
    /// The runtime-wide guards, in the order they were added (G7).
    pub(crate) guards: Vec<Arc<dyn ToolGuard>>,
    /// The tools' parameter schemas, compiled at build (G5).
    pub(crate) schemas: ToolSchemas,
    /// The admission pipeline every call passes (G13), fixed at build.
    pub(crate) admission: AdmissionPipeline,
    /// How a remembered approval's rule pattern is read (A9).
    pub(crate) patterns: super::remembered::PatternCheck,
}
