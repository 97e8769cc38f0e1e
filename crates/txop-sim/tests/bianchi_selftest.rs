//! Runs the unit tests of the independent Bianchi reference model.
#[path = "support/bianchi.rs"]
mod bianchi;
