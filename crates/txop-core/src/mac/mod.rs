//! The parts of the 802.11 MAC that know no cell and no medium: EDCA's parameters and
//! backoff counters, A-MPDU subframes, block-ack sessions and reordering, the MAC's own
//! frames, the protection rule, a link's exchange durations and an exchange as a frame
//! sequence. The engine that runs them on a medium is `air/`.

pub mod ampdu;
pub(crate) mod blockack;
pub mod edca;
pub(crate) mod frame;
pub(crate) mod link_airtime;
pub mod protection;
pub(crate) mod sequence;
