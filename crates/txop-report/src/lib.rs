//! What a txop run or comparison gives: the summary, the `--json` text, the results
//! directory with its plots and flent files. One implementation that the command line
//! (`crates/txop`) and the Python package (`crates/txop-py`) both call, so that the two
//! give the same bytes; it links no command-line crate (clap, indicatif).

pub mod against;
pub mod compare;
pub mod flent_read;
pub mod metric_vs;
pub mod neighbours;
pub mod pcap;
pub mod plot;
pub mod report;
pub mod results_dir;
pub mod run;
pub mod runner;

// The scenario files and the built-in scenarios (txop-scenario), by the paths these
// modules had in the command-line crate.
use txop_scenario as scenario;
use txop_scenario::builtin;
