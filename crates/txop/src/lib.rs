//! The `txop` command: scenario files, built-in scenarios and reports.

pub mod builtin;
pub mod compare;
pub mod report;
pub mod runner;
pub mod scenario;
