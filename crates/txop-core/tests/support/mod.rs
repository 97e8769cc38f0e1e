//! Test support for the cell's behaviour tests: independent 802.11 arithmetic
//! (`ppdu`), a driver that runs a `Cell` by hand (`cell_driver`) and the cases shared
//! with txop-sim's tests (`cases`).

pub(crate) mod cases;
pub(crate) mod cell_driver;
pub(crate) mod ppdu;
