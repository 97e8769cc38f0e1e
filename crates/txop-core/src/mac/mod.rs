//! The 802.11 MAC: channel access (EDCA), aggregation and block acks.

pub mod ampdu;
pub mod blockack;
pub mod edca;
pub mod protection;
