//! The `txop` command: scenario files, built-in scenarios and reports.

pub mod builtin;
pub mod plot;
pub mod report;
pub mod scenario;
