//! The `txop` command: scenario files, built-in scenarios and reports.

pub mod compare;
pub mod neighbours;
pub mod pcap;
pub mod plot;
pub mod report;
pub mod reproduce;
pub mod results_dir;
pub mod run;
pub mod runner;

// The scenario files and the built-in scenarios live in their own crate (txop-scenario);
// the command line reaches them by their old paths.
pub use txop_scenario as scenario;
pub use txop_scenario::builtin;
