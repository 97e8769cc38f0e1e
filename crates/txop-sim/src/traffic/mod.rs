//! Traffic models that feed the cell.

pub mod saturated;
