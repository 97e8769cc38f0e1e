//! The `txop` command: scenario files, built-in scenarios and reports.

pub mod emulated;
pub mod reproduce;

// What a run or comparison gives (summary, --json, results directory, plots) lives in
// its own crate (txop-report), which the Python package calls too; the command line
// reaches it by its old paths.
pub use txop_report::{against, compare, neighbours, pcap, plot, report, results_dir, run, runner};

// The scenario files and the built-in scenarios live in their own crate (txop-scenario);
// the command line reaches them by their old paths.
pub use txop_scenario as scenario;
pub use txop_scenario::builtin;
