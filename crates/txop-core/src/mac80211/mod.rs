//! mac80211's transmit path: flow queueing with CoDel per TXQ, DSCP classification,
//! airtime scheduling, airtime queue limits (AQL) and the byte-based DQL alternative;
//! background software scanning and power save; the numbering of a node's TXQs
//! ([`txq`]).

pub mod airtime_code;
pub mod amsdu;
pub mod aql;
pub mod classify;
pub mod dql;
pub mod fq;
pub mod minstrel_ht;
pub mod powersave;
pub mod rate_chain;
pub mod rate_control;
pub mod scan;
pub mod scheduler;
pub mod txq;
