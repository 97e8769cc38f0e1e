//! txop-sim: the deterministic virtual-time driver of the txop core, with traffic
//! models. What a run reports is `txop-results`' (shared with the emulator).

pub mod capture;
mod conn_timer;
pub mod neighbourhood;
pub mod sim;
pub mod tcp;
pub mod traffic;
pub mod transit;

pub use neighbourhood::{bss_seed, BssConfig, Neighbourhood};
pub use sim::{HostWindow, SimConfig, Simulation, Stuck, TcpHosts};
pub use transit::RemoteEnd;
pub use txop_core::driver::bus::{BusConfig, Completion, DataMode};
pub use txop_core::network::WiredConfig;
