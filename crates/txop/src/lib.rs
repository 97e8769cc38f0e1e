//! The `txop` command: scenario files, built-in scenarios and reports.

pub mod builtin;
pub mod compare;
pub mod neighbours;
pub mod pcap;
pub mod plot;
pub mod report;
pub mod reproduce;
pub mod results_dir;
pub mod run;
pub mod runner;
pub mod scenario;
