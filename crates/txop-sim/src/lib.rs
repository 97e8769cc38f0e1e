//! txop-sim: the deterministic virtual-time driver of the txop core, with traffic models
//! and result summaries.

mod conn_timer;
pub mod events;
pub mod flentfile;
pub mod flowstats;
pub mod net;
pub mod results;
pub mod sim;
pub mod tcp;
pub mod traffic;

pub use results::{BusResult, Results};
pub use sim::{SimConfig, Simulation, Stuck, WiredConfig};
pub use txop_core::driver::bus::{BusConfig, Completion, DataMode};
