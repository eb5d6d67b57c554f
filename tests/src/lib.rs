//! Shared helpers of the workspace test suite.
