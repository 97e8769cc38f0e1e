//! Active queue management and queueing disciplines.

pub mod codel;
