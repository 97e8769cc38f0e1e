//! Active queue management and queueing disciplines (the qdisc layer and CoDel).

pub mod codel;
pub mod fifo;
pub mod fq_codel;
pub mod pfifo_fast;
