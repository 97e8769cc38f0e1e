//! txop-emu: the real-time emulator. Real programs in network namespaces send through
//! TUN devices into the modelled cell (the same sans-I/O `txop_core::Cell` the
//! simulator drives), and the cell's deliveries are written back at their modelled
//! time.
//!
//! - [`addr`]: txop's own address range, namespace and device names;
//! - [`parse`]: IP headers (etherparse) → flow hash, DSCP, ECN; CE rewriting;
//! - [`slab`]: the bounded store of packet bytes (the model's `token`);
//! - [`engine`]: forwarding through the wired link and the cell, sans-I/O;
//! - [`flows`], [`timing`]: per-flow statistics and the timing error;
//! - [`netns`], [`tun`]: namespaces, TUN devices, routes, process cleanup;
//! - [`session`], [`emulator`]: setting everything up and tearing it down on every exit path;
//! - [`runloop`]: the real-time loop (epoll, the monotonic clock);
//! - [`results`]: the cell's view of a run, in the simulator's results format.

pub mod addr;
pub mod emulator;
pub mod engine;
pub mod flows;
pub mod netns;
pub mod parse;
pub mod results;
pub mod runloop;
pub mod session;
pub mod slab;
pub mod timing;
pub mod tun;

pub use addr::Endpoint;
pub use emulator::{emulate, EmuConfig, Outcome, Program};
pub use engine::{Engine, Port};
