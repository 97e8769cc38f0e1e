//! The MAC engine of a cell, over the medium it was built with: EDCA contention and
//! the access that starts an exchange (`contention.rs`), the frame exchange and what
//! both media share of it (`exchange.rs`), and the medium itself (`medium/`: one
//! collision domain, or every node's own view with space).
//!
//! The engine runs the parts of `mac/` (the frame sequence, the protection rule,
//! backoff counters, block acks) on the nodes the cell owns: its steps are `impl Cell`
//! blocks, stepped by the cell's timers (`cell/timer.rs`).

pub(crate) mod charge;
pub(crate) mod contention;
pub(crate) mod exchange;
pub(crate) mod medium;
