//! txop-core: the model, sans-I/O.
//!
//! A state machine fed with packets and time and polled for output and its next deadline
//! (in the style of quinn-proto and smoltcp). It never reads a clock or a socket: the
//! simulator drives it with virtual time, the emulator with the wall clock.

// The model's public items are its API: each says what it is and why (CONTRIBUTING.md).
#![warn(missing_docs, unreachable_pub)]

pub(crate) mod air;
pub mod aqm;
pub mod budget;
pub mod capture;
pub mod cell;
pub mod driver;
pub mod mac;
pub mod mac80211;
pub mod network;
pub mod packet;
pub mod phy;
pub mod rng;
pub mod series;
pub mod stack;
pub mod time;
pub(crate) mod txpath;
pub mod world;

pub use cell::{Cell, CellConfig, Output, StationConfig};
pub use mac80211::txq::{LinkId, Tid};
pub use packet::{DropReason, Dropped, NodeId, Packet, StationId};
pub use time::Nanos;
pub use txpath::{PathQueue, PolledAirtime, QueueOccupancy};
