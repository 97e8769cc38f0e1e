//! The 802.11 MAC: channel access (EDCA), the frame exchange, aggregation and block acks.

pub mod ampdu;
pub(crate) mod blockack;
pub(crate) mod contention;
pub mod edca;
pub(crate) mod exchange;
pub(crate) mod frame;
pub(crate) mod medium;
pub mod protection;
pub(crate) mod sequence;
